//! CLI scenarios as literate files (`tests/cmd/*.md`, run with trycmd): each documented
//! example, each exit code and each refusal to overwrite, with the exact output users see.
//! Each file runs top to bottom in a fresh copy of its `NAME.in/` directory.

#[test]
fn scenarios() {
    let state = tempfile::tempdir().expect("a temporary state directory");
    trycmd::TestCases::new()
        .register_bin(
            "hourglass",
            std::path::Path::new(env!("CARGO_BIN_EXE_hourglass")),
        )
        // Checkpoint keys go to a throwaway state directory, not the user's.
        .env("HOURGLASS_STATE_DIR", state.path().display().to_string())
        .case("tests/cmd/*.md");
}

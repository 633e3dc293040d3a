//! No two files of this crate import each other, directly or through others (ARCHITECTURE.md:
//! a piece both need lives one level down, in its own file).

#[test]
fn no_files_import_each_other() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let cycles = hourglass_testkit::import_cycles(&src).expect("the sources are readable");
    assert!(
        cycles.is_empty(),
        "files that import each other (move what they share into a module of its own): {cycles:?}"
    );
}

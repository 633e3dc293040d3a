//! README's command blocks run as written: every ```` ```sh ```` block of README.md, top to
//! bottom, in one fresh directory, with this build's `hourglass` first on `PATH`. A block that
//! fails names its first line in README and shows its output. (Blocks marked `bash` run from the
//! clone itself: setup, installing, building GMP; `scripts/test.sh` and `scripts/demo.sh` run
//! those steps.)

use std::path::Path;
use std::process::Command;

/// The `sh` blocks of a Markdown text: (line of the opening fence, body).
fn sh_blocks(markdown: &str) -> Vec<(usize, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, String)> = None;
    for (i, line) in markdown.lines().enumerate() {
        match &mut current {
            None if line.trim_end() == "```sh" => current = Some((i + 1, String::new())),
            Some(_) if line.starts_with("```") => blocks.extend(current.take()),
            Some((_, body)) => {
                body.push_str(line);
                body.push('\n');
            }
            None => {}
        }
    }
    assert!(current.is_none(), "README.md has an unclosed ```sh block");
    blocks
}

#[test]
fn the_extractor_finds_blocks_and_only_sh_ones() {
    let md = "text\n```sh\na\nb\n```\n```bash\nc\n```\n```\nd\n```\n```sh\ne\n```\n";
    assert_eq!(
        sh_blocks(md),
        vec![(2, "a\nb\n".to_string()), (12, "e\n".to_string())]
    );
}

#[test]
fn readme_command_blocks_run_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let readme = std::fs::read_to_string(root.join("README.md")).expect("README.md");
    let blocks = sh_blocks(&readme);
    // The tour, VDFs, DKG, submission, trustless submission and the benchmarks' quick look.
    assert!(
        blocks.len() >= 6,
        "only {} sh blocks in README.md",
        blocks.len()
    );
    let work = tempfile::tempdir().expect("a fresh directory");
    let state = tempfile::tempdir().expect("a state directory");
    let bin = Path::new(env!("CARGO_BIN_EXE_hourglass"))
        .parent()
        .expect("the binary's directory")
        .to_path_buf();
    let path = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .expect("PATH");
    for (line, body) in &blocks {
        let out = Command::new("bash")
            .args(["-euo", "pipefail", "-c", body])
            .current_dir(work.path())
            .env("PATH", &path)
            .env("HOURGLASS_STATE_DIR", state.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("bash runs");
        assert!(
            out.status.success(),
            "README.md block at line {line} failed ({:?}):\n{body}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

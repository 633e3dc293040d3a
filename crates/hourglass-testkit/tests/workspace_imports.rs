//! No two files of any crate import each other, directly, through others or through their crate
//! root's re-exports (docs/ARCHITECTURE.md: a piece both need lives one level down, in its own
//! file). A crate's inline `#[cfg(test)]` modules may use any file.

use std::path::{Path, PathBuf};

fn crates() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut all: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("crates/ is readable")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.join("src").is_dir())
        .collect();
    all.sort();
    all
}

#[test]
fn no_files_import_each_other() {
    let mut circular = Vec::new();
    for krate in crates() {
        let name = krate.file_name().unwrap().to_string_lossy().into_owned();
        let cycles =
            hourglass_testkit::import_cycles(&krate.join("src")).expect("readable sources");
        if !cycles.is_empty() {
            circular.push(format!("{name}: {cycles:?}"));
        }
    }
    assert!(
        circular.is_empty(),
        "files that import each other (move what they share into a module of its own):\n{}",
        circular.join("\n")
    );
    assert!(
        crates().len() >= 15,
        "the test found the workspace's crates"
    );
}

//! The published small instances of Rivest's LCS35 and CSAIL2019 puzzles
//! (`tests/vectors/rsw-puzzles.txt`, a copy of `shared/vectors/rsw-puzzles.txt`), solved by the
//! squaring engine and decoded: each hidden message starts with the puzzle's name and "example".

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hourglass_arith::squaring::square_k_times;
use hourglass_arith::Integer;
use hourglass_timelock::rsw::{parse_integer, printable_text, solve_rsw, xor_message, RswPuzzle};
use hourglass_timelock::{SolveOptions, SolveOutcome};

/// One `[name]` section: `w = 2^(2^t) mod n`, message = `w XOR z`.
#[derive(Debug)]
struct Vector {
    name: String,
    t: u64,
    n: Integer,
    z: Integer,
}

fn vector_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/rsw-puzzles.txt")
}

fn load_vectors() -> Vec<Vector> {
    let path = vector_path();
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "the RSW puzzle vectors {} cannot be read ({e}). The file is a committed copy of \
             shared/vectors/rsw-puzzles.txt; restore it (this test fails rather than skips)",
            path.display()
        )
    });
    let mut vectors = Vec::new();
    let mut current: Option<(String, Vec<(String, String)>)> = None;
    let finish = |section: Option<(String, Vec<(String, String)>)>, out: &mut Vec<Vector>| {
        let Some((name, fields)) = section else {
            return;
        };
        let get = |key: &str| -> &str {
            fields
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
                .unwrap_or_else(|| panic!("vector [{name}] has no {key}="))
        };
        let int = |key: &str| {
            parse_integer(get(key))
                .unwrap_or_else(|| panic!("vector [{name}]: {key} is not an integer"))
        };
        out.push(Vector {
            t: get("t")
                .parse()
                .unwrap_or_else(|_| panic!("vector [{name}]: bad t")),
            n: int("n"),
            z: int("z"),
            name,
        });
    };
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            finish(current.take(), &mut vectors);
            current = Some((name.to_string(), Vec::new()));
        } else if let Some((key, value)) = line.split_once('=') {
            let (_, fields) = current
                .as_mut()
                .unwrap_or_else(|| panic!("line {}: a field before any [section]", i + 1));
            assert!(
                matches!(key.trim(), "t" | "n" | "z"),
                "line {}: unknown field {key:?}",
                i + 1
            );
            fields.push((key.trim().to_string(), value.trim().to_string()));
        } else {
            panic!("line {}: cannot parse {line:?}", i + 1);
        }
    }
    finish(current, &mut vectors);
    vectors
}

#[test]
fn published_rsw_puzzles_decode_to_their_example_messages() {
    let vectors = load_vectors();
    let names: Vec<&str> = vectors.iter().map(|v| v.name.as_str()).collect();
    assert_eq!(
        names,
        ["LCS35-easy", "CSAIL2019-easy"],
        "vector set changed"
    );
    let dir = std::env::temp_dir().join(format!("hg-rsw-vectors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for v in &vectors {
        let puzzle = RswPuzzle::new(v.n.clone(), Integer::from(2), v.t).unwrap();
        // Solve with a checkpoint file, then again: the second run resumes from the finished
        // state the first one saved.
        let ckpt = dir.join(format!("{}.ckpt", v.name));
        let options = SolveOptions {
            checkpoint: Some(hourglass_arith::checkpoint::CheckpointFile::new(
                &ckpt,
                hourglass_arith::checkpoint::CheckpointKey::from_bytes([1u8; 32]),
            )),
            checkpoint_every: Duration::ZERO,
            ..SolveOptions::default()
        };
        let solve = || solve_rsw(&puzzle, &options, &AtomicBool::new(false), &mut |_| {}).unwrap();
        let SolveOutcome::Solved(w) = solve() else {
            panic!("{}: not solved", v.name)
        };
        assert!(ckpt.exists(), "{}: no checkpoint saved", v.name);
        assert_eq!(solve(), SolveOutcome::Solved(w.clone()), "{}", v.name);
        // An independent route to the same number: one GMP exponentiation by 2^t.
        assert_eq!(
            w,
            square_k_times(&Integer::from(2), v.t, &v.n),
            "{}",
            v.name
        );
        let message = xor_message(&w, &v.z);
        let text = printable_text(&message).unwrap_or_else(|| {
            panic!("{}: message is not text: {}", v.name, hex::encode(&message))
        });
        let puzzle_name = v.name.split('-').next().unwrap();
        assert!(
            text.starts_with(&format!("{puzzle_name} example")),
            "{}: message {text:?}",
            v.name
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

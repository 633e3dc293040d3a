//! Scenario tests for `hourglass timelock`: seal and open end to end, the library's
//! known-answer file, Ctrl-C and `kill -9` then resume, bad files and arguments (each a clear
//! error, a non-zero exit and no output file), Rivest's LCS35 example through `open-rsw`, and
//! an independent Python implementation of the file format (`tests/python/tlock_oracle.py`)
//! opening what hourglass seals and sealing what hourglass opens.

mod common;

use std::io::{BufRead, BufReader};

use sha2::Digest;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{file, hg, hg_fail, hg_run, read, require_python, s, tempdir};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn content(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 253) as u8).collect()
}

/// Seals `data` (written to `dir/name`) into `dir/name.tlock` with `t` squarings.
fn seal(dir: &Path, name: &str, data: &[u8], t: u64) -> PathBuf {
    let input = file(dir, name, data);
    let out = dir.join(format!("{name}.tlock"));
    hg(&[
        "timelock",
        "seal",
        "--squarings",
        &t.to_string(),
        "--bits",
        "1024",
        "--seed",
        &format!("timelock cli {name}"),
        "-i",
        s(&input),
        "-o",
        s(&out),
    ]);
    out
}

/// Temporary files left in `dir` (there must be none after a failure or success).
fn leftovers(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

#[cfg(unix)]
fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

#[test]
fn seal_then_open_round_trips_across_chunks() {
    let dir = tempdir();
    let d = dir.path();
    let data = content(150_000);
    let sealed = seal(d, "data.bin", &data, 5000);
    let out = d.join("data.out");
    let run = hg(&[
        "timelock",
        "open",
        "-i",
        s(&sealed),
        "-o",
        s(&out),
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(report["content_len"], 150_000);
    assert_eq!(report["t"], 5000);
    assert_eq!(read(&out), data);
    assert!(!d.join("data.out.ckpt").exists(), "checkpoint removed");
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
    #[cfg(unix)]
    {
        assert_eq!(mode(&sealed), 0o644);
        assert_eq!(mode(&out), 0o600, "decrypted content is private");
    }
    // Standard input and output, with an explicit checkpoint.
    let piped = common::hourglass()
        .args([
            "timelock",
            "open",
            "-i",
            "-",
            "-o",
            "-",
            "--quiet",
            "--checkpoint",
            s(&d.join("pipe.ckpt")),
        ])
        .write_stdin(read(&sealed))
        .output()
        .unwrap();
    assert!(piped.status.success(), "{}", stderr(&piped));
    assert_eq!(piped.stdout, data);
}

#[test]
fn seal_reports_t_and_where_the_rate_came_from() {
    let dir = tempdir();
    let d = dir.path();
    let input = file(d, "m.txt", b"meet at noon");
    let out = d.join("m.tlock");
    let given = hg(&[
        "timelock",
        "seal",
        "--duration",
        "2s",
        "--rate",
        "1500",
        "--bits",
        "1024",
        "-i",
        s(&input),
        "-o",
        s(&out),
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&given.stdout).unwrap();
    assert_eq!(report["t"], 3000);
    assert_eq!(report["rate_measured"], false);
    assert_eq!(report["content_len"], 12);
    // The sealed file is not overwritten without --force, and the refusal comes at once
    // (before the rate measurement).
    let err = hg_fail(
        2,
        &[
            "timelock",
            "seal",
            "--duration",
            "10ms",
            "--bits",
            "1024",
            "-i",
            s(&input),
            "-o",
            s(&out),
        ],
    );
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    // Without --rate the rate is measured here (2 s), and the output says so.
    let measured = hg(&[
        "timelock",
        "seal",
        "--duration",
        "10ms",
        "--bits",
        "1024",
        "-i",
        s(&input),
        "-o",
        s(&out),
        "--force",
    ]);
    let err = stderr(&measured);
    assert!(err.contains("measured on this machine"), "{err}");
    assert!(err.contains("t = "), "{err}");
}

#[test]
fn opens_the_known_answer_vector_of_the_library() {
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("../hourglass-timelock/tests/vectors");
    let dir = tempdir();
    let out = dir.path().join("kat.txt");
    hg(&[
        "timelock",
        "open",
        "-i",
        s(&vectors.join("tlock-kat.tlock")),
        "-o",
        s(&out),
        "--quiet",
    ]);
    assert_eq!(read(&out), read(&vectors.join("tlock-kat.txt")));
}

#[test]
fn bad_files_fail_clearly_and_write_nothing() {
    let dir = tempdir();
    let d = dir.path();
    let data = content(70_000);
    let good = read(&seal(d, "good", &data, 2000));
    let header_len = 79 + 3 * 128;
    let edited = |pos: usize| {
        let mut b = good.clone();
        b[pos] ^= 0x10;
        b
    };
    let mut version = good.clone();
    version[8..10].copy_from_slice(&[0, 9]);
    let mut extended = good.clone();
    extended.extend_from_slice(b"junk");
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "text",
            b"just some text\n".to_vec(),
            "not an hourglass time-lock file",
        ),
        ("empty", Vec::new(), "truncated"),
        ("magic", edited(2), "not an hourglass time-lock file"),
        ("version", version, "unsupported time-lock file version 9"),
        ("short-header", good[..200].to_vec(), "truncated"),
        ("short-body", good[..good.len() - 10].to_vec(), "truncated"),
        ("extended", extended, "longer than it should be"),
        ("edited-header", edited(100), "checksum mismatch"),
        ("edited-body", edited(header_len + 5000), "is damaged"),
        ("edited-tag", edited(good.len() - 40), "is damaged"),
        ("edited-trailer", edited(good.len() - 1), "is damaged"),
    ];
    for (name, bytes, expect) in cases {
        let input = file(d, &format!("{name}.tlock"), &bytes);
        let out = d.join(format!("{name}.out"));
        let err = hg_fail(
            2,
            &[
                "timelock",
                "open",
                "-i",
                s(&input),
                "-o",
                s(&out),
                "--quiet",
            ],
        );
        assert!(err.contains(expect), "{name}: {err}");
        assert!(err.contains("hourglass: hint:"), "{name}: {err}");
        assert!(!out.exists(), "{name}: an output file was left behind");
    }
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
    // From a pipe the length cannot be checked first: the cut shows after the squarings.
    let out = d.join("piped.out");
    let piped = common::hourglass()
        .args(["timelock", "open", "-i", "-", "-o", s(&out), "--quiet"])
        .write_stdin(good[..good.len() - 100].to_vec())
        .output()
        .unwrap();
    assert_eq!(piped.status.code(), Some(2));
    assert!(
        stderr(&piped).contains("does not authenticate"),
        "{}",
        stderr(&piped)
    );
    assert!(!out.exists());
}

#[test]
fn bad_arguments_are_usage_errors() {
    let dir = tempdir();
    let d = dir.path();
    let input = file(d, "x.txt", b"x");
    let out = d.join("x.tlock");
    let seal_with = |extra: &[&str]| {
        let mut args = vec![
            "timelock",
            "seal",
            "--bits",
            "1024",
            "-i",
            s(&input),
            "-o",
            s(&out),
        ];
        args.extend_from_slice(extra);
        args.iter().map(|a| a.to_string()).collect::<Vec<_>>()
    };
    for (extra, expect) in [
        (&["--squarings", "0"][..], "--squarings must be within"),
        (
            &["--squarings", "2305843009213693952"][..],
            "--squarings must be within",
        ),
        (
            &["--duration", "100000000years", "--rate", "1e9"][..],
            "absurd",
        ),
        (
            &["--duration", "1ns", "--rate", "10"][..],
            "less than one squaring",
        ),
        (&["--duration", "1h", "--rate", "0"][..], "--rate must be"),
    ] {
        let err = hg_fail(2, &seal_with(extra));
        assert!(err.contains(expect), "{extra:?}: {err}");
    }
    let err = hg_fail(
        2,
        &[
            "timelock",
            "seal",
            "--squarings",
            "10",
            "--bits",
            "512",
            "-i",
            s(&input),
            "-o",
            s(&out),
        ],
    );
    assert!(err.contains("--bits"), "{err}");
    assert!(!out.exists());
    for (args, expect) in [
        (
            &["--n", "1000001", "--base", "2", "--squarings", "0"][..],
            "at least 1",
        ),
        (
            &["--n", "1000000", "--base", "2", "--squarings", "5"][..],
            "odd",
        ),
        (
            &["--n", "12ab", "--base", "2", "--squarings", "5"][..],
            "--n: expected",
        ),
        (
            &["--n", "1000001", "--base", "1", "--squarings", "5"][..],
            "base",
        ),
        (
            &[
                "--n",
                "1000001",
                "--base",
                "2",
                "--squarings",
                "5",
                "--z",
                "0xzz",
            ][..],
            "--z",
        ),
    ] {
        let mut full = vec!["timelock", "open-rsw"];
        full.extend_from_slice(args);
        let err = hg_fail(2, &full);
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn a_checkpoint_from_another_file_is_refused() {
    let dir = tempdir();
    let d = dir.path();
    let a = read(&seal(d, "a", b"file a", 3000));
    let b = seal(d, "b", b"file b", 3000);
    // File A with an edited body whose trailer was recomputed (so the check before the
    // squarings passes): the squarings finish, authentication fails, and the finished
    // checkpoint is kept (an intact copy would open at once).
    let mut damaged = a.clone();
    let trailer_at = damaged.len() - 32;
    damaged[trailer_at - 1] ^= 1;
    let trailer = sha2::Sha256::digest(&damaged[..trailer_at]);
    damaged[trailer_at..].copy_from_slice(&trailer);
    let damaged = file(d, "a-damaged.tlock", &damaged);
    let ckpt = d.join("shared.ckpt");
    let err = hg_fail(
        2,
        &[
            "timelock",
            "open",
            "-i",
            s(&damaged),
            "-o",
            s(&d.join("a2.out")),
            "--checkpoint",
            s(&ckpt),
            "--quiet",
        ],
    );
    assert!(err.contains("opens at once"), "{err}");
    assert!(ckpt.exists());
    // The intact file A opens from that checkpoint...
    let intact = file(d, "a-intact.tlock", &a);
    let out = hg(&[
        "timelock",
        "open",
        "-i",
        s(&intact),
        "-o",
        s(&d.join("a.out")),
        "--checkpoint",
        s(&ckpt),
    ]);
    assert!(stderr(&out).contains("resuming from"), "{}", stderr(&out));
    assert_eq!(read(&d.join("a.out")), b"file a");
    assert!(!ckpt.exists(), "removed once the content is out");
    // File B refuses a checkpoint of file A (made again by the damaged copy).
    hg_fail(
        2,
        &[
            "timelock",
            "open",
            "-i",
            s(&damaged),
            "-o",
            s(&d.join("a3.out")),
            "--checkpoint",
            s(&ckpt),
            "--quiet",
        ],
    );
    assert!(ckpt.exists());
    let err = hg_fail(
        2,
        &[
            "timelock",
            "open",
            "-i",
            s(&b),
            "-o",
            s(&d.join("b.out")),
            "--checkpoint",
            s(&ckpt),
            "--quiet",
        ],
    );
    assert!(err.contains("another"), "{err}");
    assert!(err.contains("delete the old one"), "{err}");
    assert!(!d.join("b.out").exists());
}

#[cfg(unix)]
#[test]
fn ctrl_c_and_kill_dash_nine_then_the_same_command_resumes() {
    let dir = tempdir();
    let d = dir.path();
    let data = content(5000);
    // Several seconds of squaring at 1024 bits even with the host-tuned GMP (about 4 M/s), so
    // the runs below are still going when they are interrupted.
    let sealed = seal(d, "long", &data, 24_000_000);
    let out = d.join("long.out");
    let ckpt = d.join("long.out.ckpt");
    let args = [
        "timelock",
        "open",
        "-i",
        s(&sealed),
        "-o",
        s(&out),
        "--checkpoint-every",
        "1",
    ];
    // Ctrl-C (SIGINT) once progress shows: a clean stop that saves the verified state.
    let mut child = Command::new(env!("CARGO_BIN_EXE_hourglass"))
        .env("HOURGLASS_STATE_DIR", common::state_dir())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut seen = String::new();
    for line in lines.by_ref() {
        let line = line.unwrap();
        seen.push_str(&line);
        seen.push('\n');
        if line.starts_with("opening:") {
            break;
        }
    }
    let signal = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(signal.success());
    for line in lines {
        seen.push_str(&line.unwrap());
        seen.push('\n');
    }
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(2), "{seen}");
    assert!(seen.contains("stopped after"), "{seen}");
    assert!(ckpt.exists(), "{seen}");
    assert!(!out.exists());
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));

    // kill -9 during a resumed run: no output appears; the checkpoint survives.
    let mut child = Command::new(env!("CARGO_BIN_EXE_hourglass"))
        .env("HOURGLASS_STATE_DIR", common::state_dir())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1200));
    child.kill().unwrap();
    assert!(!child.wait().unwrap().success());
    assert!(!out.exists(), "no output from a killed run");
    assert!(leftovers(d).is_empty(), "{:?}", leftovers(d));
    assert!(ckpt.exists());

    // The same command again: resumes and finishes.
    let start = Instant::now();
    let run = hg(&args);
    assert!(stderr(&run).contains("resuming from"), "{}", stderr(&run));
    assert_eq!(read(&out), data);
    assert!(!ckpt.exists());
    assert!(start.elapsed() < Duration::from_secs(120));
}

/// The LCS35 example of the shared vectors: (n, t, z).
fn lcs35_example() -> (String, String, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../hourglass-timelock/tests/vectors/rsw-puzzles.txt");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("missing RSW vectors {}: {e}", path.display()));
    let section = text
        .split("[LCS35-easy]")
        .nth(1)
        .expect("an [LCS35-easy] section")
        .split("\n[")
        .next()
        .unwrap();
    let field = |key: &str| {
        section
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{key}=")))
            .unwrap_or_else(|| panic!("no {key}="))
            .trim()
            .to_string()
    };
    (field("n"), field("t"), field("z"))
}

#[test]
fn open_rsw_solves_the_lcs35_example() {
    let (n, t, z) = lcs35_example();
    let out = hg(&[
        "timelock",
        "open-rsw",
        "--n",
        &n,
        "--base",
        "2",
        "--squarings",
        &t,
        "--z",
        &z,
    ]);
    let text = stdout(&out);
    assert!(text.contains("w (decimal): "), "{text}");
    assert!(text.contains("message (text): LCS35 example"), "{text}");

    // The same in hexadecimal, as JSON.
    let n_hex = format!("0x{:x}", n.parse::<rug::Integer>().unwrap());
    let z_hex = format!("0x{:X}", z.parse::<rug::Integer>().unwrap());
    let out = hg(&[
        "timelock",
        "open-rsw",
        "--n",
        &n_hex,
        "--base",
        "0x2",
        "--squarings",
        &t,
        "--z",
        &z_hex,
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(report["message_text"]
        .as_str()
        .unwrap()
        .starts_with("LCS35 example"));
    let w: rug::Integer = report["w"].as_str().unwrap().parse().unwrap();
    assert_eq!(report["w_hex"], format!("0x{w:x}"));

    // --hex, and a mask that leaves binary bytes: shown in hex.
    let out = hg(&[
        "timelock",
        "open-rsw",
        "--n",
        &n,
        "--base",
        "2",
        "--squarings",
        &t,
        "--z",
        "0",
        "--hex",
        "--quiet",
    ]);
    let text = stdout(&out);
    assert!(text.contains(&format!("w (hex): 0x{w:x}")), "{text}");
    assert!(
        text.contains(&format!(
            "message (hex): {}",
            hex::encode(w.to_digits::<u8>(rug::integer::Order::Msf))
        )),
        "{text}"
    );

    // A kept checkpoint makes the second run instant, and it is refused by another puzzle.
    let dir = tempdir();
    let ckpt = dir.path().join("lcs35.ckpt");
    hg(&[
        "timelock",
        "open-rsw",
        "--n",
        &n,
        "--base",
        "2",
        "--squarings",
        &t,
        "--checkpoint",
        s(&ckpt),
        "--quiet",
    ]);
    assert!(ckpt.exists(), "the checkpoint is kept after success");
    let again = hg_run(&[
        "timelock",
        "open-rsw",
        "--n",
        &n,
        "--base",
        "3",
        "--squarings",
        &t,
        "--checkpoint",
        s(&ckpt),
        "--quiet",
    ]);
    assert_eq!(again.status.code(), Some(2));
    assert!(stderr(&again).contains("another"), "{}", stderr(&again));
}

/// Runs `tlock_oracle.py ARGS`, requiring success.
fn oracle(args: &[&str]) {
    require_python(&["Crypto.Cipher.ChaCha20_Poly1305"]);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/tlock_oracle.py");
    let out = Command::new("python3")
        .arg(&script)
        .args(args)
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "tlock_oracle.py {args:?} failed:\n{}",
        stderr(&out)
    );
}

#[test]
fn an_independent_python_implementation_agrees_both_ways() {
    let dir = tempdir();
    let d = dir.path();
    // hourglass seals (three chunks, the last one short); Python opens.
    let data = content(2 * 65536 + 1234);
    let sealed = seal(d, "py.bin", &data, 3000);
    let by_python = d.join("py.out");
    oracle(&["open", "--in", s(&sealed), "--out", s(&by_python)]);
    assert_eq!(read(&by_python), data);
    // Python seals (exactly two full chunks, and an empty file); hourglass opens.
    for (name, len) in [("exact", 2 * 65536), ("empty", 0)] {
        let plain = file(d, &format!("{name}.plain"), &content(len));
        let tlock = d.join(format!("{name}.tlock"));
        oracle(&[
            "seal",
            "--like",
            s(&sealed),
            "--squarings",
            "2500",
            "--in",
            s(&plain),
            "--out",
            s(&tlock),
        ]);
        let out = d.join(format!("{name}.out"));
        hg(&[
            "timelock",
            "open",
            "-i",
            s(&tlock),
            "-o",
            s(&out),
            "--quiet",
        ]);
        assert_eq!(read(&out), content(len), "{name}");
    }
}

/// A damaged body is found before the squarings, not after them: this file needs 10^12
/// squarings (days), so without the check before them the command would not return.
#[test]
fn a_damaged_file_is_refused_before_the_squarings() {
    let dir = tempdir();
    let d = dir.path();
    let sealed = seal(d, "far.txt", b"open in a few days", 1_000_000_000_000);
    let mut bytes = read(&sealed);
    let pos = bytes.len() - 40;
    bytes[pos] ^= 0x01;
    let damaged = file(d, "far-damaged.tlock", &bytes);
    let ckpt = d.join("far.ckpt");
    let err = hg_fail(
        2,
        &[
            "timelock",
            "open",
            "-i",
            s(&damaged),
            "-o",
            s(&d.join("far.out")),
            "--checkpoint",
            s(&ckpt),
        ],
    );
    assert!(
        err.contains("is damaged") && err.contains("nothing was computed"),
        "{err}"
    );
    assert!(!err.contains("opening"), "the squarings started:\n{err}");
    assert!(!ckpt.exists() && !d.join("far.out").exists());
}

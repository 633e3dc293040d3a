//! `hourglass vdf` end to end: evaluate and verify both proofs, pinned moduli from a setup that
//! OpenSSL reads, batches, bad input, and crash recovery by `kill -9` then resume.

mod common;

use std::time::Duration;

use common::*;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn eval(dir: &std::path::Path, name: &str, extra: &[&str]) -> std::path::PathBuf {
    let out = dir.join(name);
    let mut args = vec!["vdf", "eval", "--quiet", "-o", s(&out)];
    args.extend_from_slice(extra);
    hg(&args);
    out
}

/// Replaces the first occurrence of `field`'s string value's last hex digit.
fn tamper(text: &str, field: &str) -> String {
    let key = format!("\"{field}\": \"");
    let start = text.find(&key).unwrap_or_else(|| panic!("no {field}")) + key.len();
    let end = start + text[start..].find('"').unwrap();
    let mut bytes = text.as_bytes().to_vec();
    bytes[end - 1] = if bytes[end - 1] == b'0' { b'1' } else { b'0' };
    String::from_utf8(bytes).unwrap()
}

#[test]
fn eval_then_verify_both_proofs_and_reject_tampering() {
    let dir = tempdir();
    let d = dir.path();
    for (i, (scheme, extra)) in [
        ("wesolowski", vec![]),
        ("pietrzak", vec!["--proof", "pietrzak"]),
        ("wesolowski", vec!["--security", "256"]),
    ]
    .into_iter()
    .enumerate()
    {
        let mut args = vec!["--input", "block 1234", "--iterations", "3001"];
        args.extend(extra.iter().copied());
        let proof = eval(d, &format!("{scheme}-{i}.json"), &args);
        let out = hg(&["vdf", "verify", s(&proof)]);
        assert!(
            stdout(&out).starts_with(&format!("valid: {scheme} proof")),
            "{}",
            stdout(&out)
        );
        hg(&["vdf", "verify", s(&proof), "--input", "block 1234"]);
        let err = hg_fail(1, &["vdf", "verify", s(&proof), "--input", "block 1235"]);
        assert!(err.contains("another input"), "{err}");
        let json = hg(&["vdf", "verify", s(&proof), "--json"]);
        let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
        assert_eq!(v["valid"], true);
        assert_eq!(v["iterations"], 3001);
        let text = std::fs::read_to_string(&proof).unwrap();
        let fields: &[&str] = if scheme == "wesolowski" {
            &["output", "pi", "l"]
        } else {
            &["output"]
        };
        for field in fields {
            let bad = file(d, "bad.json", tamper(&text, field).as_bytes());
            let err = hg_fail(1, &["vdf", "verify", s(&bad)]);
            assert!(err.contains("invalid proof"), "{field}: {err}");
        }
        let bad = file(
            d,
            "bad.json",
            text.replace("\"iterations\": 3001", "\"iterations\": 3002")
                .as_bytes(),
        );
        hg_fail(1, &["vdf", "verify", s(&bad)]);
    }
}

/// The proof text with the output's hex digits in upper case.
fn upper_case_output(text: &str) -> String {
    let key = "\"output\": \"";
    let start = text.find(key).unwrap() + key.len();
    let end = start + text[start..].find('"').unwrap();
    format!(
        "{}{}{}",
        &text[..start],
        text[start..end].to_uppercase(),
        &text[end..]
    )
}

#[test]
fn malformed_proof_files_fail_cleanly() {
    let dir = tempdir();
    let d = dir.path();
    let good = eval(d, "p.json", &["--input", "x", "-t", "100"]);
    let text = std::fs::read_to_string(&good).unwrap();
    let cases: Vec<(&str, String)> = vec![
        ("empty", String::new()),
        ("garbage", "\u{0}\u{1}not json".into()),
        ("version", text.replace("\"version\": 1", "\"version\": 2")),
        ("scheme", text.replace("\"wesolowski\"", "\"pietrzak\"")),
        ("upper-case hex", upper_case_output(&text)),
        ("unknown field", text.replacen('{', "{\"extra\": 1,", 1)),
        ("tiny modulus", text.replace("\"rsa-2048\"", "\"c5\"")),
        (
            "huge T",
            text.replace(
                "\"iterations\": 100",
                "\"iterations\": 99999999999999999999",
            ),
        ),
    ];
    for (what, body) in cases {
        let f = file(d, "m.json", body.as_bytes());
        // Malformed input is an error (2), not a verdict on a proof.
        let out = hg_run(&["vdf", "verify", s(&f)]);
        assert_eq!(out.status.code(), Some(2), "{what}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("hourglass: error:"),
            "{what}: {}",
            stderr(&out)
        );
        assert!(!stderr(&out).contains("panicked"), "{what}");
    }
}

#[test]
fn a_proof_over_another_modulus_needs_that_modulus_pinned() {
    require_openssl();
    let dir = tempdir();
    let d = dir.path();
    let modulus = d.join("m.pem");
    let out = hg(&[
        "vdf",
        "setup",
        "--bits",
        "1024",
        "--seed",
        "vdf cli setup",
        "-o",
        s(&modulus),
    ]);
    assert!(stderr(&out).contains("wiped"), "{}", stderr(&out));
    // OpenSSL reads the modulus as an RSA public key.
    let text = openssl(&["pkey", "-pubin", "-in", s(&modulus), "-noout", "-text"]);
    assert!(stdout(&text).contains("1024 bit"), "{}", stdout(&text));
    let proof = eval(
        d,
        "p.json",
        &[
            "--modulus",
            s(&modulus),
            "--input",
            "committee",
            "-t",
            "2000",
        ],
    );
    let err = hg_fail(1, &["vdf", "verify", s(&proof)]);
    assert!(
        err.contains("not the trusted modulus") && err.contains("--modulus"),
        "{err}"
    );
    hg(&["vdf", "verify", s(&proof), "--modulus", s(&modulus)]);
    // A different pinned modulus is refused too.
    let other = d.join("o.pem");
    hg(&[
        "vdf",
        "setup",
        "--bits",
        "1024",
        "--seed",
        "other",
        "-o",
        s(&other),
    ]);
    hg_fail(1, &["vdf", "verify", s(&proof), "--modulus", s(&other)]);
    // Too small without the explicit flag.
    let err = hg_fail(
        2,
        &[
            "vdf",
            "setup",
            "--bits",
            "512",
            "-o",
            s(&d.join("small.pem")),
        ],
    );
    assert!(err.contains("--allow-insecure"), "{err}");
    assert!(!d.join("small.pem").exists());
}

#[test]
fn batches_report_each_bad_line() {
    let dir = tempdir();
    let d = dir.path();
    let mut lines = String::new();
    for i in 0..3 {
        let p = eval(
            d,
            &format!("b{i}.json"),
            &["--input", &format!("seed {i}"), "-t", "500", "--compact"],
        );
        lines.push_str(&std::fs::read_to_string(p).unwrap());
    }
    let all_good = file(d, "good.jsonl", lines.as_bytes());
    let out = hg(&["vdf", "verify", "--batch", s(&all_good)]);
    assert!(
        stdout(&out).contains("3 proofs: 3 valid, 0 invalid"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("proofs/s"));
    let first = lines.lines().next().unwrap().to_string();
    let tampered = tamper(&first.replace("\":\"", "\": \""), "output").replace("\": \"", "\":\"");
    lines.push_str(&tampered);
    lines.push('\n');
    lines.push_str("{not json}\n\n");
    let mixed = file(d, "mixed.jsonl", lines.as_bytes());
    let out = hg_run(&["vdf", "verify", "--batch", s(&mixed), "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], 3);
    assert_eq!(v["invalid"], 2);
    let bad_lines: Vec<u64> = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["line"].as_u64().unwrap())
        .collect();
    assert_eq!(bad_lines, vec![4, 5]);
}

#[test]
fn bad_arguments_are_usage_errors_and_leave_no_file() {
    let dir = tempdir();
    let d = dir.path();
    let out = d.join("never.json");
    for args in [
        vec!["--input", "x", "-t", "0"],
        vec!["--input", "x", "-t", "2^51"],
        vec!["--input", "x", "-t", "lots"],
        vec!["--input", "x", "-t", "10", "--security", "192"],
        vec!["--input", "x", "-t", "10", "--modulus", "no-such-modulus"],
    ] {
        let mut all = vec!["vdf", "eval", "-o", s(&out)];
        all.extend(args.iter().copied());
        let o = hg_run(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(!out.exists());
    }
    let big = file(d, "big.bin", &vec![7u8; 70_000]);
    let err = hg_fail(
        2,
        &["vdf", "eval", "-i", s(&big), "-t", "10", "-o", s(&out)],
    );
    assert!(err.contains("sha256sum"), "{err}");
    assert!(!out.exists());
}

#[test]
fn kill_dash_nine_then_the_same_command_resumes() {
    let dir = tempdir();
    let d = dir.path();
    let proof = d.join("long.json");
    // Several seconds of squaring at 2048 bits (6 s here), over 4 s even at 2 M squarings per
    // second, where the kill lands about 1.5 s after the start.
    let args = [
        "vdf",
        "eval",
        "--input",
        "resume me",
        "--iterations",
        "2^23",
        "-o",
        s(&proof),
        "--checkpoint-every",
        "1",
        "--quiet",
    ];
    let ckpt = d.join("long.json.ckpt");
    let powers = d.join("long.json.ckpt.powers");
    kill_after_checkpoint(&args, &ckpt, Duration::from_millis(500));
    assert!(
        ckpt.exists() && powers.exists(),
        "checkpoint and powers written before the kill"
    );
    assert!(!proof.exists(), "no proof from the killed run");
    let saved_powers = std::fs::read(&powers).unwrap();
    let saved_ckpt = std::fs::read(&ckpt).unwrap();
    let mut resume: Vec<&str> = args.to_vec();
    resume.retain(|a| *a != "--quiet");
    // A damaged powers file never feeds a proof: the checkpoint vouching for other powers is set
    // aside with a warning naming both, and the evaluation starts over to a proof that verifies.
    std::fs::write(&powers, &saved_powers[..40]).unwrap();
    let out = hg(&resume);
    let err = stderr(&out);
    assert!(
        err.contains("ignoring checkpoint") && err.contains("fewer powers"),
        "{err}"
    );
    assert_eq!(read(&d.join("long.json.ckpt.untrusted")), saved_ckpt);
    hg(&["vdf", "verify", s(&proof), "--input", "resume me"]);
    // The intact pair resumes where the killed run stopped.
    std::fs::remove_file(&proof).unwrap();
    std::fs::write(&powers, &saved_powers).unwrap();
    std::fs::write(&ckpt, &saved_ckpt).unwrap();
    let out = hg(&resume);
    assert!(stderr(&out).contains("resuming from"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("ignoring"), "{}", stderr(&out));
    hg(&["vdf", "verify", s(&proof), "--input", "resume me"]);
    assert!(
        !ckpt.exists() && !powers.exists(),
        "checkpoint files removed after success"
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_without_a_checkpoint_says_nothing_was_saved() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    // To standard output there is no checkpoint: a stop loses the squarings, and says so.
    let mut child = Command::new(env!("CARGO_BIN_EXE_hourglass"))
        .env("HOURGLASS_STATE_DIR", state_dir())
        .args([
            "vdf",
            "eval",
            "--input",
            "stop me",
            "--iterations",
            "2^26",
            "-o",
            "-",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    // The announcement comes just before the squaring (and the Ctrl-C handler) starts.
    let mut seen = lines.next().unwrap().unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    let signal = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(signal.success());
    for line in lines {
        seen.push('\n');
        seen.push_str(&line.unwrap());
    }
    assert_eq!(child.wait().unwrap().code(), Some(2), "{seen}");
    assert!(
        seen.contains("hourglass: error: stopped after ")
            && seen.contains("squarings; progress was not saved"),
        "{seen}"
    );
    assert!(
        seen.contains("hourglass: hint: pass --checkpoint FILE to be able to resume"),
        "{seen}"
    );
}

//! No input makes the command line panic: every file a verdict command reads is damaged in many
//! ways (bit flips, truncations, insertions, edited hex digits, garbage, emptiness), and each run
//! must end with a clear error or verdict (exit 0, 1 or 2), never exit 101 or a panic message,
//! and must write no output file when it fails.

mod common;

use std::path::{Path, PathBuf};

use common::{file, hg, hg_run, read, s, tempdir};
use hourglass_testkit::{damage, Mutation};

/// Deterministic damage of every kind at spread-out positions.
fn damaged_versions(data: &[u8]) -> Vec<Vec<u8>> {
    let len = data.len().max(1);
    let mut out = vec![
        Vec::new(),
        b"\x00\xff garbage \x80".to_vec(),
        b"{}".to_vec(),
    ];
    for k in 1..=6usize {
        let at = k * len / 7;
        out.push(damage(data.to_vec(), &[Mutation::Flip(at, (k % 8) as u8)]));
        out.push(damage(data.to_vec(), &[Mutation::Truncate(at)]));
        out.push(damage(data.to_vec(), &[Mutation::Insert(at, b'"')]));
        out.push(damage(data.to_vec(), &[Mutation::Delete(at)]));
        out.push(damage(data.to_vec(), &[Mutation::Digit(at, k as u8 * 5)]));
    }
    out
}

/// Runs `args` with `target` replaced by each damaged version of it; checks no run panics and
/// that `out` (if any) is never left behind by a failing run.
fn never_panics(d: &Path, target: &Path, args: &[String], out: Option<&Path>) {
    check_runs(d, target, args, out, true);
}

/// Like [`never_panics`]; `refusals` says whether damaged versions must be refused (a damaged
/// checkpoint is set aside and the run succeeds instead).
fn check_runs(d: &Path, target: &Path, args: &[String], out: Option<&Path>, refusals: bool) {
    let original = read(target);
    let mut refused = 0;
    for (i, bytes) in damaged_versions(&original).into_iter().enumerate() {
        std::fs::write(target, &bytes).unwrap();
        if let Some(o) = out {
            let _ = std::fs::remove_file(o);
        }
        let result = hg_run(args);
        let err = String::from_utf8_lossy(&result.stderr);
        let code = result.status.code();
        assert!(
            matches!(code, Some(0..=2)) && !err.contains("panicked"),
            "{} with damage #{i} of {}: exit {code:?}\n{err}",
            args.join(" "),
            target.display()
        );
        if code != Some(0) {
            refused += 1;
            if let Some(o) = out {
                assert!(!o.exists(), "a failed run left {}", o.display());
            }
        }
    }
    std::fs::write(target, &original).unwrap();
    // Not vacuous: the damage reached the parser (empty and garbage files are always refused).
    if refusals {
        assert!(
            refused >= 3,
            "{}: only {refused} damaged versions refused",
            target.display()
        );
    } else {
        assert_eq!(
            refused, 0,
            "a damaged checkpoint must be set aside, not fail the run"
        );
    }
    let _ = d;
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|a| a.to_string()).collect()
}

#[test]
fn damaged_inputs_never_panic_any_verdict_command() {
    let dir = tempdir();
    let d = dir.path();
    let doc = file(d, "doc.txt", b"the document\n");
    let p = |n: &str| -> PathBuf { d.join(n) };

    // Puzzle key, solution, delayed signature.
    hg(&[
        "puzzle",
        "keygen",
        "--bits",
        "1024",
        "--squarings",
        "3000",
        "--seed",
        "no panic",
        "-o",
        s(&p("k")),
    ]);
    hg(&[
        "puzzle",
        "solve",
        "-p",
        s(&p("k.pub")),
        "-i",
        s(&doc),
        "-o",
        s(&p("doc.sol")),
        "--quiet",
    ]);
    hg(&[
        "puzzle",
        "sign",
        "-k",
        s(&p("k.key")),
        "-i",
        s(&doc),
        "-o",
        s(&p("doc.sig")),
    ]);
    let verify = strings(&[
        "puzzle",
        "verify",
        "-k",
        s(&p("k.key")),
        "-i",
        s(&doc),
        "-s",
        s(&p("doc.sol")),
    ]);
    never_panics(d, &p("doc.sol"), &verify, None);
    never_panics(d, &p("k.key"), &verify, None);
    let solve = strings(&[
        "puzzle",
        "solve",
        "-p",
        s(&p("k.pub")),
        "-i",
        s(&doc),
        "-o",
        s(&p("again.sol")),
        "--quiet",
    ]);
    never_panics(d, &p("k.pub"), &solve, Some(&p("again.sol")));
    let vsig = strings(&[
        "puzzle",
        "verify-signature",
        "-p",
        s(&p("k.pub")),
        "-i",
        s(&doc),
        "-s",
        s(&p("doc.sig")),
        "--quiet",
    ]);
    never_panics(d, &p("doc.sig"), &vsig, None);
    // A damaged checkpoint beside the signature: set aside or refused, never a panic.
    std::fs::write(p("doc.sig.ckpt"), b"HGCKPT02 truncated").unwrap();
    check_runs(d, &p("doc.sig.ckpt"), &vsig, None, false);

    // Puzzle set and bundle.
    hg(&[
        "submit",
        "new-set",
        "--durations",
        "2s,1s",
        "--rate",
        "3000",
        "--bits",
        "1024",
        "--seed",
        "no panic set",
        "-o",
        s(&p("set")),
    ]);
    hg(&[
        "submit",
        "seal",
        "--set",
        s(&p("set/set.json")),
        "-i",
        s(&doc),
        "--expect",
        "3s",
        "--until",
        "3s",
        "-o",
        s(&p("doc.bundle")),
        "--quiet",
    ]);
    let sverify = strings(&[
        "submit",
        "verify",
        "--keys",
        s(&p("set")),
        "-i",
        s(&doc),
        s(&p("doc.bundle")),
    ]);
    never_panics(d, &p("doc.bundle"), &sverify, None);
    never_panics(d, &p("set/puzzle-1s.key"), &sverify, None);
    let seal = strings(&[
        "submit",
        "seal",
        "--set",
        s(&p("set/set.json")),
        "-i",
        s(&doc),
        "--until",
        "1s",
        "-o",
        s(&p("new.bundle")),
        "--quiet",
    ]);
    never_panics(d, &p("set/set.json"), &seal, Some(&p("new.bundle")));

    // Public set and proof-carrying bundle.
    hg(&[
        "submit",
        "new-set",
        "--public",
        "--modulus",
        "rsa-2048",
        "--durations",
        "2s,1s",
        "--rate",
        "2000",
        "-o",
        s(&p("pub")),
    ]);
    hg(&[
        "submit",
        "seal",
        "--set",
        s(&p("pub/set.json")),
        "-i",
        s(&doc),
        "--expect",
        "3s",
        "--until",
        "3s",
        "-o",
        s(&p("doc.pbundle")),
        "--quiet",
    ]);
    let pverify = strings(&[
        "submit",
        "verify",
        "--public",
        s(&p("doc.pbundle")),
        "--document",
        s(&doc),
        "--set",
        s(&p("pub/set.json")),
    ]);
    never_panics(d, &p("doc.pbundle"), &pverify, None);
    never_panics(d, &p("pub/set.json"), &pverify, None);

    // Time-lock file.
    hg(&[
        "timelock",
        "seal",
        "-i",
        s(&doc),
        "-o",
        s(&p("doc.tlock")),
        "--squarings",
        "3000",
        "--bits",
        "1024",
    ]);
    let open = strings(&[
        "timelock",
        "open",
        "-i",
        s(&p("doc.tlock")),
        "-o",
        s(&p("doc.out")),
        "--quiet",
    ]);
    never_panics(d, &p("doc.tlock"), &open, Some(&p("doc.out")));

    // VDF proof.
    hg(&[
        "vdf",
        "eval",
        "--input",
        "x",
        "--iterations",
        "3000",
        "-o",
        s(&p("x.proof")),
        "--quiet",
    ]);
    never_panics(
        d,
        &p("x.proof"),
        &strings(&["vdf", "verify", s(&p("x.proof"))]),
        None,
    );

    // RSA keys and signatures.
    common::keygen(d, "r", "crt", 1024, &[]);
    hg(&[
        "rsa",
        "sign",
        "-k",
        s(&p("r.pem")),
        "-i",
        s(&doc),
        "-s",
        s(&p("doc.rsig")),
    ]);
    let rverify = strings(&[
        "rsa",
        "verify",
        "-k",
        s(&p("r.pub.pem")),
        "-i",
        s(&doc),
        "-s",
        s(&p("doc.rsig")),
    ]);
    never_panics(d, &p("doc.rsig"), &rverify, None);
    never_panics(d, &p("r.pub.pem"), &rverify, None);
    let inspect = strings(&["rsa", "inspect", "-i", s(&p("r.pem"))]);
    never_panics(d, &p("r.pem"), &inspect, None);
}

/// Damaged timestamps, TSA roots and version 2 receipts: `submit verify --timestamp` and
/// `submit check-receipt` end with a verdict or an error, never a panic, and write nothing.
#[test]
fn damaged_timestamps_never_panic() {
    use common::{openssl_in, openssl_tsa};
    let dir = tempdir();
    let d = dir.path();
    let p = |n: &str| -> PathBuf { d.join(n) };
    let doc = file(d, "doc.txt", b"the document\n");
    hg(&[
        "submit",
        "new-set",
        "--public",
        "--modulus",
        "rsa-2048",
        "--durations",
        "1s",
        "--rate",
        "20000",
        "-o",
        s(&p("pub")),
    ]);
    hg(&[
        "submit",
        "seal",
        "--set",
        s(&p("pub/set.json")),
        "-i",
        s(&doc),
        "--expect",
        "1s",
        "-o",
        s(&p("doc.bundle")),
        "--quiet",
    ]);
    std::fs::create_dir(p("tsa")).unwrap();
    openssl_tsa(&p("tsa"), "No Panic TSA");
    hg(&[
        "submit",
        "stamp",
        s(&p("doc.bundle")),
        "--query",
        "-o",
        s(&p("tsa/q.tsq")),
    ]);
    openssl_in(
        &[
            "ts",
            "-reply",
            "-queryfile",
            "q.tsq",
            "-config",
            "tsa.cnf",
            "-out",
            "doc.tsr",
        ],
        &p("tsa"),
    );
    let verify = strings(&[
        "submit",
        "verify",
        "--public",
        s(&p("doc.bundle")),
        "--document",
        s(&doc),
        "--set",
        s(&p("pub/set.json")),
        "--timestamp",
        s(&p("tsa/doc.tsr")),
        "--tsa-ca",
        s(&p("tsa/ca.pem")),
    ]);
    hg(&verify);
    never_panics(d, &p("tsa/doc.tsr"), &verify, None);
    never_panics(d, &p("tsa/ca.pem"), &verify, None);
    // Any bytes are a file to stamp: a query or an error, never a panic.
    for bytes in [&b""[..], b"\x00\xff", b"{}"] {
        std::fs::write(p("junk.bundle"), bytes).unwrap();
        let out = hg_run(&[
            "submit",
            "stamp",
            s(&p("junk.bundle")),
            "--query",
            "-o",
            s(&p("junk.tsq")),
            "--force",
        ]);
        assert!(matches!(out.status.code(), Some(0..=2)));
    }
}

/// Damaged transparency-log inputs: a version 3 receipt and the log's key for `submit
/// check-receipt`, and the log key, a witness key and a state file for `log verify` (the log
/// itself unreachable): a verdict or an error, never a panic.
#[test]
fn damaged_log_inputs_never_panic() {
    let dir = tempdir();
    let d = dir.path();
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("../hourglass-receipt/tests/vectors");
    let receipt = file(d, "receipt.json", &read(&vectors.join("receipt-v3.json")));
    let log_pub = file(d, "log.pub", &read(&vectors.join("log.pub")));
    let institution = d.join("inst.pem");
    hg(&["rsa", "keygen", "--bits", "2048", "-o", s(&institution)]);
    let check = strings(&[
        "submit",
        "check-receipt",
        s(&receipt),
        "--institution",
        s(&institution),
        "--log-key",
        s(&log_pub),
    ]);
    never_panics(d, &receipt, &check, None);
    never_panics(d, &log_pub, &check, None);
    hg(&[
        "log",
        "keygen",
        "--name",
        "w.example",
        "-o",
        s(&d.join("w.key")),
    ]);
    let state = file(
        d,
        "state.json",
        format!(
            "{{\"type\": \"hourglass-log-state\", \"version\": 1, \"checkpoint\": {}}}",
            serde_json::to_string(
                &serde_json::from_str::<serde_json::Value>(
                    &String::from_utf8(read(&receipt)).unwrap()
                )
                .unwrap()["log"]["checkpoint"]
            )
            .unwrap()
        )
        .as_bytes(),
    );
    let verify = strings(&[
        "log",
        "verify",
        "--log",
        "http://127.0.0.1:1/log",
        "--log-key",
        s(&log_pub),
        "--witness-key",
        s(&d.join("w.pub")),
        "--state",
        s(&state),
    ]);
    never_panics(d, &state, &verify, None);
    never_panics(d, &log_pub, &verify, None);
    never_panics(d, &d.join("w.pub"), &verify, None);
}

//! Scenario tests for `hourglass puzzle` and `hourglass submit`: the author's and the
//! institution's commands end to end, crash recovery by `kill -9`, tampering, bad input.

mod common;

use std::time::Duration;

use common::{hg, hg_run, kill_after_checkpoint, s};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn keygen_solve_verify_and_tamper() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = d.join("p");
    hg(&[
        "puzzle",
        "keygen",
        "--bits",
        "1024",
        "--squarings",
        "40000",
        "--seed",
        "pz",
        "-o",
        name.to_str().unwrap(),
    ]);
    let key = d.join("p.key");
    let public = d.join("p.pub");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&key).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let doc = d.join("doc.txt");
    std::fs::write(&doc, b"camera-ready version").unwrap();
    let sol = d.join("doc.sol");
    hg(&[
        "puzzle",
        "solve",
        "-p",
        public.to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "-o",
        sol.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(
        !d.join("doc.sol.ckpt").exists(),
        "the checkpoint is removed after success"
    );
    let ok = hg(&[
        "puzzle",
        "verify",
        "-k",
        key.to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "-s",
        sol.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&ok.stdout).contains("valid"));

    // Tampered document, tampered solution, wrong key: exit 1 with a reason.
    let other = d.join("other.txt");
    std::fs::write(&other, b"camera-ready version!").unwrap();
    let out = hg_run(&[
        "puzzle",
        "verify",
        "-k",
        key.to_str().unwrap(),
        "-i",
        other.to_str().unwrap(),
        "-s",
        sol.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("document differs"),
        "{}",
        stderr(&out)
    );
    let text = std::fs::read_to_string(&sol).unwrap();
    let pos = text.find("\"c\": \"").unwrap() + 6;
    let mut bad = text.clone();
    let ch = bad.as_bytes()[pos];
    bad.replace_range(pos..pos + 1, if ch == b'1' { "2" } else { "1" });
    let bad_sol = d.join("bad.sol");
    std::fs::write(&bad_sol, bad).unwrap();
    let out = hg_run(&[
        "puzzle",
        "verify",
        "-k",
        key.to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "-s",
        bad_sol.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("does not verify"), "{}", stderr(&out));
    let name2 = d.join("q");
    hg(&[
        "puzzle",
        "keygen",
        "--bits",
        "1024",
        "--squarings",
        "100",
        "--seed",
        "other",
        "-o",
        name2.to_str().unwrap(),
    ]);
    let out = hg_run(&[
        "puzzle",
        "verify",
        "-k",
        d.join("q.key").to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "-s",
        sol.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("another puzzle key"),
        "{}",
        stderr(&out)
    );

    // Garbage inputs.
    let garbage = d.join("garbage.pub");
    std::fs::write(&garbage, b"{\"type\": \"nope\"}").unwrap();
    let out = hg_run(&[
        "puzzle",
        "solve",
        "-p",
        garbage.to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "-o",
        d.join("x.sol").to_str().unwrap(),
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert!(stderr(&out).contains("hourglass: error:"));
    assert!(!d.join("x.sol").exists());
    let out = hg_run(&[
        "puzzle",
        "keygen",
        "--bits",
        "1024",
        "--squarings",
        "0",
        "-o",
        d.join("z").to_str().unwrap(),
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert!(!d.join("z.key").exists());
}

#[test]
fn kill_dash_nine_then_the_same_command_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let name = d.join("p");
    // Several seconds of squaring at 1024 bits even with the host-tuned GMP (about 4 M/s).
    hg(&[
        "puzzle",
        "keygen",
        "--bits",
        "1024",
        "--squarings",
        "24000000",
        "--seed",
        "kill",
        "-o",
        name.to_str().unwrap(),
    ]);
    let doc = d.join("doc.txt");
    std::fs::write(&doc, b"draft").unwrap();
    let sol = d.join("doc.sol");
    let public = d.join("p.pub");
    let args = [
        "puzzle",
        "solve",
        "-p",
        public.to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "-o",
        sol.to_str().unwrap(),
        "--checkpoint-every",
        "1",
        "--quiet",
    ];
    let ckpt = d.join("doc.sol.ckpt");
    kill_after_checkpoint(&args, &ckpt, Duration::from_millis(300));
    assert!(ckpt.exists(), "a checkpoint was written before the kill");
    assert!(!sol.exists(), "no solution file from the killed run");
    let out = hg(&[
        "puzzle",
        "solve",
        "-p",
        d.join("p.pub").to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "-o",
        sol.to_str().unwrap(),
        "--checkpoint-every",
        "1",
    ]);
    assert!(stderr(&out).contains("resuming from"), "{}", stderr(&out));
    hg(&[
        "puzzle",
        "verify",
        "-k",
        d.join("p.key").to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "-s",
        sol.to_str().unwrap(),
    ]);
}

#[test]
fn a_checkpoint_for_another_document_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    hg(&[
        "puzzle",
        "keygen",
        "--bits",
        "1024",
        "--squarings",
        "30000000",
        "--seed",
        "ck",
        "-o",
        d.join("long").to_str().unwrap(),
    ]);
    let (a, b) = (d.join("a.txt"), d.join("b.txt"));
    std::fs::write(&a, b"A").unwrap();
    std::fs::write(&b, b"B").unwrap();
    let ckpt = d.join("shared.ckpt");
    let public = d.join("long.pub");
    // A run for document A leaves a checkpoint behind when killed.
    kill_after_checkpoint(
        &[
            "puzzle",
            "solve",
            "-p",
            s(&public),
            "-i",
            s(&a),
            "-o",
            s(&d.join("a.sol")),
            "--checkpoint",
            s(&ckpt),
            "--checkpoint-every",
            "1",
            "--quiet",
        ],
        &ckpt,
        Duration::ZERO,
    );
    assert!(ckpt.exists());
    // Solving document B with A's checkpoint is refused, and no solution appears.
    let out = hg_run(&[
        "puzzle",
        "solve",
        "-p",
        public.to_str().unwrap(),
        "-i",
        b.to_str().unwrap(),
        "-o",
        d.join("b.sol").to_str().unwrap(),
        "--checkpoint",
        ckpt.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("another puzzle or input"),
        "{}",
        stderr(&out)
    );
    assert!(!d.join("b.sol").exists());
    // A corrupted checkpoint is never resumed: it is set aside (kept, named in a warning) and
    // the solve starts over, ending with a solution that verifies.
    let mut bytes = std::fs::read(&ckpt).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x10;
    std::fs::write(&ckpt, bytes).unwrap();
    let out = hg_run(&[
        "puzzle",
        "solve",
        "-p",
        public.to_str().unwrap(),
        "-i",
        a.to_str().unwrap(),
        "-o",
        d.join("a.sol").to_str().unwrap(),
        "--checkpoint",
        ckpt.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("ignoring checkpoint") && stderr(&out).contains("shared.ckpt"),
        "{}",
        stderr(&out)
    );
    assert!(d.join("shared.ckpt.untrusted").exists());
    hg(&[
        "puzzle",
        "verify",
        "-k",
        s(&d.join("long.key")),
        "-i",
        s(&a),
        "-s",
        s(&d.join("a.sol")),
    ]);
}

#[test]
fn submit_new_set_seal_verify_with_deadline() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let keys = d.join("keys");
    hg(&[
        "submit",
        "new-set",
        "--durations",
        "2s,1s",
        "--rate",
        "20000",
        "--bits",
        "1024",
        "--seed",
        "set",
        "-o",
        keys.to_str().unwrap(),
    ]);
    let doc = d.join("paper.txt");
    std::fs::write(&doc, b"paper").unwrap();
    let bundle = d.join("paper.bundle");
    hg(&[
        "submit",
        "seal",
        "--set",
        keys.join("set.json").to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "--expect",
        "3s",
        "--until",
        "3s",
        "-o",
        bundle.to_str().unwrap(),
        "--quiet",
    ]);
    let out = hg(&[
        "submit",
        "verify",
        "--keys",
        keys.to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        bundle.to_str().unwrap(),
        "--json",
        "--received",
        "2030-01-01T00:00:03Z",
        "--deadline",
        "2030-01-01T00:00:00Z",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], true);
    assert_eq!(v["before_deadline"], true);
    assert!((v["credited_secs"].as_f64().unwrap() - 3.0).abs() < 1e-6);
    // Received 4 s after the deadline with 3 s credited: not provably before it.
    let out = hg_run(&[
        "submit",
        "verify",
        "--keys",
        keys.to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        bundle.to_str().unwrap(),
        "--received",
        "2030-01-01T00:00:04Z",
        "--deadline",
        "2030-01-01T00:00:00Z",
    ]);
    assert_eq!(out.status.code(), Some(1));
    // Another document.
    let other = d.join("other.txt");
    std::fs::write(&other, b"paper v2").unwrap();
    let out = hg_run(&[
        "submit",
        "verify",
        "--keys",
        keys.to_str().unwrap(),
        "-i",
        other.to_str().unwrap(),
        bundle.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(1));
    // Open-ended mode.
    let open = d.join("open.bundle");
    hg(&[
        "submit",
        "seal",
        "--set",
        keys.join("set.json").to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "--open-ended",
        "--until",
        "1s",
        "-o",
        open.to_str().unwrap(),
        "--quiet",
    ]);
    hg(&[
        "submit",
        "verify",
        "--keys",
        keys.to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        open.to_str().unwrap(),
    ]);
}

#[test]
fn delayed_signature_sign_and_slow_verify() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    hg(&[
        "puzzle",
        "keygen",
        "--bits",
        "1024",
        "--squarings",
        "60000",
        "--seed",
        "sig",
        "-o",
        d.join("deputy").to_str().unwrap(),
    ]);
    let doc = d.join("contract.txt");
    std::fs::write(&doc, b"we agree").unwrap();
    let sig = d.join("contract.sig");
    hg(&[
        "puzzle",
        "sign",
        "-k",
        d.join("deputy.key").to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "-o",
        sig.to_str().unwrap(),
    ]);
    let public = d.join("deputy.pub");
    let out = hg(&[
        "puzzle",
        "verify-signature",
        "-p",
        public.to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "-s",
        sig.to_str().unwrap(),
        "--quiet",
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("valid delayed signature"));
    std::fs::write(&doc, b"we agree, mostly").unwrap();
    let out = hg_run(&[
        "puzzle",
        "verify-signature",
        "-p",
        public.to_str().unwrap(),
        "-i",
        doc.to_str().unwrap(),
        "-s",
        sig.to_str().unwrap(),
        "--quiet",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("invalid signature"));
}

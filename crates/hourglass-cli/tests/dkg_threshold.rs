//! `hourglass dkg reshare / refresh / sign --signers`: threshold signatures from the
//! distributed key, as separate processes over loopback TLS. OpenSSL verifies a signature of
//! every `t + 1` subset of a 5-party, t = 2 cluster at 2048 bits (PKCS#1 v1.5 and PSS); the
//! attacks (a lying signer, too few, repeated or unknown signers, mixed epochs, an old share
//! relabelled, a share of another cluster) fail as documented, and nothing is written.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::{hg, hg_fail, hg_run, require_openssl, s, tempdir};

fn cluster(dir: &Path, name: &str, bits: &str, seed: &str) -> PathBuf {
    let c = dir.join(name);
    hg(&[
        "dkg",
        "local",
        "--parties",
        "5",
        "--bits",
        bits,
        "--seed",
        seed,
        "--quiet",
        "-o",
        s(&c),
    ]);
    c
}

fn sign(c: &Path, signers: &str, msg: &Path, sig: &Path, pss: bool) -> std::process::Output {
    let mut args = vec![
        "dkg",
        "sign",
        "--cluster",
        s(c),
        "--signers",
        signers,
        "-i",
        s(msg),
        "-o",
        s(sig),
    ];
    if pss {
        args.push("--pss");
    }
    hg_run(&args)
}

/// `dkg sign` that must fail with exit status `code` (1: a negative verdict, a party caught
/// deviating; 2: an error): its standard error.
fn sign_fails(code: i32, c: &Path, signers: &str, msg: &Path, sig: &Path) -> String {
    let out = sign(c, signers, msg, sig, false);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(code), "{stderr}");
    assert_eq!(stderr.contains("hourglass: error:"), code == 2, "{stderr}");
    stderr
}

fn openssl_verifies(public: &Path, msg: &Path, sig: &Path, pss: bool) -> bool {
    let mut args = vec![
        "dgst",
        "-sha256",
        "-verify",
        s(public),
        "-signature",
        s(sig),
    ];
    if pss {
        args.extend([
            "-sigopt",
            "rsa_padding_mode:pss",
            "-sigopt",
            "rsa_pss_saltlen:-1",
        ]);
    }
    args.push(s(msg));
    common::openssl_run(&args).status.success()
}

#[test]
fn openssl_verifies_every_three_of_five_at_2048_bits_pkcs1_and_pss() {
    require_openssl();
    let tmp = tempdir();
    let c = cluster(tmp.path(), "c", "2048", "threshold-2048");
    let out = hg(&[
        "dkg",
        "reshare",
        "--cluster",
        s(&c),
        "--threshold",
        "2",
        "--json",
    ]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["threshold"], 2);
    assert_eq!(report["epoch"], 1);
    for id in 1..=5 {
        let path = c.join(format!("party-{id}.share.json"));
        let file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(file["format"], "hourglass-dkg-share-v2");
        assert_eq!(file["threshold"], 2);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "rewritten share files stay private");
    }
    let public = c.join("public.pem");
    let msg = tmp.path().join("m.txt");
    std::fs::write(&msg, b"any three of the five").unwrap();
    let other = tmp.path().join("other.txt");
    std::fs::write(&other, b"something else").unwrap();
    let mut subsets = 0;
    for a in 1..=5 {
        for b in a + 1..=5 {
            for d in b + 1..=5 {
                subsets += 1;
                let signers = format!("{a},{b},{d}");
                for pss in [false, true] {
                    let sig = tmp.path().join(format!("{a}{b}{d}-{pss}.sig"));
                    let out = sign(&c, &signers, &msg, &sig, pss);
                    assert!(
                        out.status.success(),
                        "{signers}: {}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                    assert_eq!(std::fs::read(&sig).unwrap().len(), 256);
                    assert!(
                        openssl_verifies(&public, &msg, &sig, pss),
                        "{signers} pss={pss}"
                    );
                    assert!(!openssl_verifies(&public, &other, &sig, pss));
                }
            }
        }
    }
    assert_eq!(subsets, 10);
}

#[test]
fn liars_too_few_signers_mixed_epochs_and_foreign_shares_fail_without_output() {
    let tmp = tempdir();
    let c = cluster(tmp.path(), "c", "1024", "threshold-attacks");
    let msg = tmp.path().join("m.txt");
    std::fs::write(&msg, b"m").unwrap();
    let sig = tmp.path().join("m.sig");
    // Before a reshare, --signers is refused (n-of-n shares sign with every member).
    let err = sign_fails(2, &c, "1,2,3", &msg, &sig);
    assert!(err.contains("--signers needs threshold shares"), "{err}");
    // A threshold outside 1..=(k-1)/2 is refused before anything runs.
    let err = hg_fail(
        2,
        &["dkg", "reshare", "--cluster", s(&c), "--threshold", "3"],
    );
    assert!(err.contains("threshold 3 for 5 parties"), "{err}");
    hg(&[
        "dkg",
        "reshare",
        "--cluster",
        s(&c),
        "--threshold",
        "2",
        "--quiet",
    ]);
    // A second reshare is refused: the shares are threshold ones now.
    let err = hg_fail(
        2,
        &["dkg", "reshare", "--cluster", s(&c), "--threshold", "2"],
    );
    assert!(err.contains("refresh it"), "{err}");
    let public = c.join("public.pem");
    let verifies = |sig: &Path| {
        hg_run(&[
            "rsa",
            "verify",
            "-k",
            s(&public),
            "-i",
            s(&msg),
            "--sig",
            s(sig),
            "--pkcs1v15",
        ])
        .status
        .success()
    };
    // Usage errors: nothing is written.
    for (signers, says) in [
        ("1,2", "needs at least 3 signers, 2 given"),
        ("1,2,2", "party 2 is named twice"),
        ("1,2,7", "party 7 is not a member"),
    ] {
        let err = sign_fails(2, &c, signers, &msg, &sig);
        assert!(err.contains(says), "{signers}: {err}");
        assert!(!sig.exists());
    }
    // A liar among four: named, left out, and the signature still comes out (exit 0).
    let out = hg_run(&[
        "dkg",
        "sign",
        "--cluster",
        s(&c),
        "--signers",
        "1,2,3,5",
        "--adversary",
        "3:wrong-partial",
        "-i",
        s(&msg),
        "-o",
        s(&sig),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: party 3's partial signature was wrong"),
        "{stderr}"
    );
    assert!(verifies(&sig));
    // A liar the first t + 1 would not use (party 5 among 1, 2, 3, 5) is named all the same.
    std::fs::remove_file(&sig).unwrap();
    let out = hg_run(&[
        "dkg",
        "sign",
        "--cluster",
        s(&c),
        "--signers",
        "1,2,3,5",
        "--adversary",
        "5:wrong-partial",
        "-i",
        s(&msg),
        "-o",
        s(&sig),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: party 5's partial signature was wrong"),
        "{stderr}"
    );
    assert!(verifies(&sig));
    // Two liars among five (t = 2): both named, the three others sign, and OpenSSL agrees.
    std::fs::remove_file(&sig).unwrap();
    let out = hg_run(&[
        "dkg",
        "sign",
        "--cluster",
        s(&c),
        "--signers",
        "1,2,3,4,5",
        "--adversary",
        "2:wrong-partial",
        "--adversary",
        "4:wrong-partial",
        "-i",
        s(&msg),
        "-o",
        s(&sig),
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    for liar in [2, 4] {
        assert!(
            stderr.contains(&format!(
                "warning: party {liar}'s partial signature was wrong"
            )),
            "{stderr}"
        );
    }
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["excluded"], serde_json::json!([2, 4]), "{report}");
    assert_eq!(report["used"], serde_json::json!([1, 3, 5]), "{report}");
    assert!(verifies(&sig));
    assert!(openssl_verifies(&public, &msg, &sig, false));
    // The same party named twice as an adversary is a usage error.
    let err = hg_fail(
        2,
        &[
            "dkg",
            "sign",
            "--cluster",
            s(&c),
            "--adversary",
            "2:wrong-partial",
            "--adversary",
            "2:silent",
            "-i",
            s(&msg),
            "-o",
            s(&tmp.path().join("never.sig")),
        ],
    );
    assert!(err.contains("party 2 is named twice"), "{err}");
    assert!(!tmp.path().join("never.sig").exists());
    // A liar among exactly t + 1: a negative verdict naming it (exit status 1, from every
    // honest signer and so from the run), and no signature.
    let sig2 = tmp.path().join("m2.sig");
    let err = hg_fail(
        1,
        &[
            "dkg",
            "sign",
            "--cluster",
            s(&c),
            "--signers",
            "2,4,5",
            "--adversary",
            "4:wrong-partial",
            "-i",
            s(&msg),
            "-o",
            s(&sig2),
        ],
    );
    assert!(
        err.contains("partial signatures of parties [4] are wrong"),
        "{err}"
    );
    assert!(!sig2.exists());
    // Refresh: a new epoch, and the old copy of party 3's share is refused by epoch.
    let old = std::fs::read(c.join("party-3.share.json")).unwrap();
    hg(&["dkg", "refresh", "--cluster", s(&c), "--quiet"]);
    let current = std::fs::read(c.join("party-3.share.json")).unwrap();
    let sig3 = tmp.path().join("m3.sig");
    assert!(sign(&c, "1,3,5", &msg, &sig3, false).status.success());
    assert!(verifies(&sig3));
    std::fs::write(c.join("party-3.share.json"), &old).unwrap();
    let sig4 = tmp.path().join("m4.sig");
    let err = sign_fails(2, &c, "1,3,5", &msg, &sig4);
    assert!(
        err.contains("party 3 holds a share of epoch 1") && err.contains("missed a refresh"),
        "{err}"
    );
    // Forced: the old share relabelled with the current epoch's public data signs nothing,
    // and party 3 is named: a negative verdict, its partial's proof does not verify.
    let mut forced: serde_json::Value = serde_json::from_slice(&old).unwrap();
    let now: serde_json::Value = serde_json::from_slice(&current).unwrap();
    for field in [
        "epoch",
        "epoch_session",
        "verification_base",
        "verification_keys",
    ] {
        forced[field] = now[field].clone();
    }
    std::fs::write(c.join("party-3.share.json"), forced.to_string()).unwrap();
    let err = sign_fails(1, &c, "1,3,5", &msg, &sig4);
    assert!(err.contains("parties [3] are wrong"), "{err}");
    assert!(!sig4.exists());
    // A share of another cluster in its place: refused, saying so.
    let other = cluster(tmp.path(), "other", "1024", "threshold-other");
    hg(&[
        "dkg",
        "reshare",
        "--cluster",
        s(&other),
        "--threshold",
        "2",
        "--quiet",
    ]);
    std::fs::copy(
        other.join("party-3.share.json"),
        c.join("party-3.share.json"),
    )
    .unwrap();
    let err = sign_fails(2, &c, "1,3,5", &msg, &sig4);
    assert!(err.contains("another cluster"), "{err}");
    let err = hg_fail(2, &["dkg", "refresh", "--cluster", s(&c)]);
    assert!(err.contains("another cluster"), "{err}");
    assert!(!sig4.exists());
    std::fs::write(c.join("party-3.share.json"), &current).unwrap();
    assert!(sign(&c, "3,4,5", &msg, &sig4, false).status.success());
    assert!(verifies(&sig4));
}

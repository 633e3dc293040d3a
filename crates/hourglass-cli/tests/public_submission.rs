//! Trustless offline submission through the command line: a public set on a committee's
//! modulus (three `dkg` party processes over loopback TLS) or on RSA-2048, sealing with proofs,
//! and verification by a third party that holds only public files, in a directory and state of
//! its own. Tampered bundles are refused with a reason naming the link.

mod common;

use std::path::Path;

use common::{file, hg, hg_run, read, s, tempdir};
use hourglass_timelock::public::PublicSet;

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Copies `names` from `from` into a fresh directory: all a third party receives.
fn handed_over(from: &Path, names: &[&str]) -> tempfile::TempDir {
    let dir = tempdir();
    for n in names {
        std::fs::copy(from.join(n), dir.path().join(n)).unwrap();
    }
    dir
}

#[test]
fn a_bundle_on_a_committee_modulus_verifies_with_public_files_only() {
    let dir = tempdir();
    let d = dir.path();
    // The committee: three party processes generate a 2048-bit modulus; nobody has its factors.
    hg(&[
        "dkg",
        "local",
        "--parties",
        "3",
        "--bits",
        "2048",
        "-o",
        s(&d.join("committee")),
    ]);
    // The institution publishes a public set on it, naming the committee's transcript.
    hg(&[
        "submit",
        "new-set",
        "--public",
        "--modulus",
        s(&d.join("committee/transcript.json")),
        "--durations",
        "2s,1s",
        "--rate",
        "20000",
        "--name",
        "Conf",
        "-o",
        s(&d.join("pub")),
    ]);
    assert!(!d.join("pub").read_dir().unwrap().any(|e| {
        let name = e.unwrap().file_name();
        name.to_string_lossy().ends_with(".key")
    }));
    // The author seals with proofs.
    let doc = file(d, "paper.txt", b"a paper sealed on a committee's modulus\n");
    hg(&[
        "submit",
        "seal",
        "--set",
        s(&d.join("pub/set.json")),
        "-i",
        s(&doc),
        "--expect",
        "3s",
        "--until",
        "3s",
        "-o",
        s(&d.join("paper.bundle")),
        "--quiet",
    ]);
    std::fs::copy(d.join("pub/set.json"), d.join("set.json")).unwrap();
    std::fs::copy(
        d.join("committee/transcript.json"),
        d.join("transcript.json"),
    )
    .unwrap();
    // A third party with the public files only (its own state directory too): the set, the
    // bundle, the paper, the committee's published transcript, and the members' certificates
    // it trusts.
    let third = handed_over(
        d,
        &["set.json", "paper.bundle", "paper.txt", "transcript.json"],
    );
    let t = third.path();
    std::fs::create_dir(t.join("certs")).unwrap();
    for i in 1..=3 {
        let name = format!("party-{i}.crt.pem");
        std::fs::copy(
            d.join("committee/certs").join(&name),
            t.join("certs").join(&name),
        )
        .unwrap();
    }
    let verify_third = |extra: &[&str]| {
        common::hourglass()
            .env("HOURGLASS_STATE_DIR", t.join("state"))
            .args([
                "submit",
                "verify",
                "--public",
                s(&t.join("paper.bundle")),
                "--document",
                s(&t.join("paper.txt")),
                "--set",
                s(&t.join("set.json")),
            ])
            .args(extra)
            .output()
            .unwrap()
    };
    let out = verify_third(&[
        "--transcript",
        s(&t.join("transcript.json")),
        "--committee-cert",
        s(&t.join("certs")),
    ]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("bundle: public set"), "{text}");
    assert!(
        text.contains("trust: nobody knows the factors")
            && text.contains("unless at least 2 of its members 1, 2, 3 colluded"),
        "{text}"
    );
    assert!(
        text.contains("2 of 2 links valid") && text.contains("bundle valid"),
        "{text}"
    );
    // Without the committee pinned there is no verdict: the set's word is not enough.
    let out = verify_third(&[]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--committee-cert"),
        "{}",
        stderr(&out)
    );
    // Pinning only two of the three members is not enough either.
    let out = verify_third(&[
        "--transcript",
        s(&t.join("transcript.json")),
        "--committee-cert",
        s(&t.join("certs/party-1.crt.pem")),
        "--committee-cert",
        s(&t.join("certs/party-2.crt.pem")),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains('3'), "{}", stderr(&out));
    // A set on another modulus does not pass the committee check.
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
        s(&d.join("other")),
    ]);
    let out = hg_run(&[
        "submit",
        "verify",
        "--public",
        s(&d.join("paper.bundle")),
        "--document",
        s(&doc),
        "--set",
        s(&d.join("other/set.json")),
        "--transcript",
        s(&d.join("transcript.json")),
        "--committee-cert",
        s(&d.join("committee/certs")),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("a committee was pinned"),
        "{}",
        stderr(&out)
    );
    // The institution relabels a set on a modulus it can factor as the committee's (naming the
    // committee's real transcript): the pinned transcript's modulus refutes it (exit 1).
    let institution_key = d.join("inst.key");
    hg(&["rsa", "keygen", "--bits", "2048", "-o", s(&institution_key)]);
    hg(&[
        "submit",
        "new-set",
        "--public",
        "--modulus",
        s(&institution_key),
        "--durations",
        "1s",
        "--rate",
        "20000",
        "-o",
        s(&d.join("inst")),
    ]);
    let load = |p: &Path| PublicSet::from_json(&String::from_utf8(read(p)).unwrap()).unwrap();
    let (real, inst) = (
        load(&d.join("pub/set.json")),
        load(&d.join("inst/set.json")),
    );
    let forged = PublicSet::new(
        &real.name,
        inst.n().clone(),
        real.origin.clone(),
        real.squarings.clone(),
        real.rate,
        real.rate_measured,
        real.hash,
        real.proof,
        &real.created,
    )
    .unwrap();
    let forged_set = file(d, "forged.json", forged.to_json().as_bytes());
    let out = hg_run(&[
        "submit",
        "verify",
        "--public",
        s(&d.join("paper.bundle")),
        "--document",
        s(&doc),
        "--set",
        s(&forged_set),
        "--transcript",
        s(&d.join("transcript.json")),
        "--committee-cert",
        s(&d.join("committee/certs")),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("origin does not verify"),
        "{}",
        stderr(&out)
    );
    // The institution's private verifier refuses it by name (it is not a private bundle).
    hg(&[
        "submit",
        "new-set",
        "--durations",
        "1s",
        "--rate",
        "20000",
        "--bits",
        "1024",
        "-o",
        s(&d.join("keys")),
        "--seed",
        "keys",
    ]);
    let out = hg_run(&[
        "submit",
        "verify",
        "--keys",
        s(&d.join("keys")),
        "-i",
        s(&doc),
        s(&d.join("paper.bundle")),
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).contains("public set"), "{}", stdout(&out));
}

#[test]
fn tampered_public_bundles_are_refused_naming_the_link() {
    let dir = tempdir();
    let d = dir.path();
    hg(&[
        "submit",
        "new-set",
        "--public",
        "--modulus",
        "rsa-2048",
        "--durations",
        "2s,1s",
        "--rate",
        "5000",
        "-o",
        s(&d.join("pub")),
    ]);
    let doc = file(d, "paper.txt", b"the paper\n");
    let bundle = d.join("paper.bundle");
    hg(&[
        "submit",
        "seal",
        "--set",
        s(&d.join("pub")),
        "-i",
        s(&doc),
        "--expect",
        "3s",
        "--until",
        "3s",
        "-o",
        s(&bundle),
        "--quiet",
    ]);
    let verify = |b: &Path, document: &Path| {
        hg_run(&[
            "submit",
            "verify",
            "--public",
            s(b),
            "--document",
            s(document),
            "--set",
            s(&d.join("pub/set.json")),
            "--json",
        ])
    };
    let out = verify(&bundle, &doc);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["set"], "public");
    assert_eq!(v["credited_secs"], 3.0);

    // Another document.
    let other = file(d, "other.txt", b"another paper\n");
    let out = verify(&bundle, &other);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["document_matches"], false);

    // An edited proof, and swapped links: the JSON verdict names the refused links.
    let text = String::from_utf8(read(&bundle)).unwrap();
    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let pi = json["links"][1]["proof"]["pi"]
        .as_str()
        .unwrap()
        .to_string();
    let flipped = format!(
        "{}{}",
        if pi.starts_with('1') { "2" } else { "1" },
        &pi[1..]
    );
    json["links"][1]["proof"]["pi"] = serde_json::Value::String(flipped);
    let edited = file(
        d,
        "edited.bundle",
        serde_json::to_string_pretty(&json).unwrap().as_bytes(),
    );
    let out = verify(&edited, &doc);
    assert_eq!(out.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["links"][0]["valid"], true);
    assert_eq!(v["links"][1]["valid"], false);
    assert!(v["links"][1]["reason"]
        .as_str()
        .unwrap()
        .contains("proof does not verify"));

    let mut json: serde_json::Value = serde_json::from_str(&text).unwrap();
    let links = json["links"].as_array_mut().unwrap();
    links.swap(0, 1);
    let swapped = file(
        d,
        "swapped.bundle",
        serde_json::to_string_pretty(&json).unwrap().as_bytes(),
    );
    let out = verify(&swapped, &doc);
    assert_eq!(out.status.code(), Some(1));

    // Files past their format's limit are refused by their size, before they are read whole
    // (sparse files of 2 GiB and 2 MiB).
    let huge = d.join("huge.bundle");
    std::fs::File::create(&huge)
        .unwrap()
        .set_len(2 << 30)
        .unwrap();
    let out = verify(&huge, &doc);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("larger than any bundle"),
        "{}",
        stderr(&out)
    );
    let big_set = d.join("huge-set.json");
    std::fs::File::create(&big_set)
        .unwrap()
        .set_len(2 << 20)
        .unwrap();
    let out = hg_run(&[
        "submit",
        "verify",
        "--public",
        s(&bundle),
        "--document",
        s(&doc),
        "--set",
        s(&big_set),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("larger than any puzzle set"),
        "{}",
        stderr(&out)
    );

    // --public with a private set is a usage error; a public set given to --keys is refused.
    hg(&[
        "submit",
        "new-set",
        "--durations",
        "1s",
        "--rate",
        "5000",
        "--bits",
        "1024",
        "-o",
        s(&d.join("keys")),
        "--seed",
        "k",
    ]);
    let out = hg_run(&[
        "submit",
        "verify",
        "--public",
        s(&bundle),
        "--document",
        s(&doc),
        "--set",
        s(&d.join("keys/set.json")),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("private set"), "{}", stderr(&out));
}

/// `hourglass demo --public` plays the whole trustless flow (committee, public set, sealing with
/// proofs, verification with public files, forgeries caught), here at a tenth of its durations.
#[test]
fn the_public_demo_runs_end_to_end() {
    let dir = tempdir();
    let out = hg(&[
        "demo",
        "--public",
        "--scale",
        "0.1",
        "--keep",
        s(&dir.path().join("demo")),
    ]);
    let text = stdout(&out);
    for expected in [
        "three party processes agreed on N",
        "trust: nobody knows the factors",
        ": valid,",
        "the bundle with another paper: rejected",
        "a link claiming 4x its squarings: rejected",
    ] {
        assert!(text.contains(expected), "missing {expected:?} in:\n{text}");
    }
    // The kept files are the public ones a third party needs, and no key.
    let kept = dir.path().join("demo");
    for f in ["pub/set.json", "paper.bundle", "committee/transcript.json"] {
        assert!(kept.join(f).exists(), "{f}");
    }
}

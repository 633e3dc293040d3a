//! `hourglass timestamp verify | inspect | stamp` on the tokens people hold: six real
//! authorities (sigstore's ECDSA P-384 in production and staging, FreeTSA, DigiCert, GlobalSign,
//! Microsoft; crates/hourglass-timestamp/tests/data/tsa), each verified as token and as reply
//! (exit 0, with the latest time it proves), refused with other data, one byte of its signature
//! changed, or another authority's anchor (exit 1), and errors that are no verdict (exit 2); and
//! the service as an ECDSA P-256 authority (its default) and an ECDSA P-384 one (`serve
//! --tsa-key ecdsa-p384`), whose tokens `openssl ts -verify` and `hourglass timestamp verify`
//! both accept.

mod common;
mod service;

use std::path::{Path, PathBuf};

use common::{file, hg, hg_run, openssl_in as openssl, s, tempdir};
use serde_json::Value;
use service::{client, seal, short_set, upload, verdict, Server};

fn real(dir: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../hourglass-timestamp/tests/data/tsa")
        .join(dir)
}

const REAL: [&str; 6] = [
    "sigstore-prod-2026-ecdsa-p384-nocert",
    "sigstage-2025-ecdsa-p384-sha384-embedded",
    "freetsa-2025-rsa4096-embedded",
    "digicert-2025-rsa4096-sha512",
    "globalsign-advanced-g4-2021-4certs-crosscert",
    "microsoft-2024-rsa4096-fractional-gentime",
];

/// `timestamp verify TOKEN` over the real authority's data (or digest), anchors and chain,
/// with `anchor_of` the authority whose root is pinned, and `extra` arguments.
fn verify_real(name: &str, token: &Path, anchor_of: &str, extra: &[&str]) -> std::process::Output {
    let d = real(name);
    let mut args: Vec<String> = vec!["timestamp".into(), "verify".into(), s(token).into()];
    if d.join("data.bin").exists() {
        args.extend(["--data".into(), s(&d.join("data.bin")).into()]);
    } else {
        let imprint = std::fs::read_to_string(d.join("imprint.txt")).unwrap();
        args.extend([
            "--digest".into(),
            imprint.split_whitespace().nth(1).unwrap().to_string(),
        ]);
    }
    args.extend(["--tsa-ca".into(), s(&real(anchor_of).join("ca.pem")).into()]);
    if d.join("chain.pem").exists() {
        args.extend(["--untrusted".into(), s(&d.join("chain.pem")).into()]);
    }
    args.extend(extra.iter().map(|a| a.to_string()));
    hg_run(&args)
}

/// The policy `openssl ts -reply -text` printed (it names 1.2.3.4.1 by its configuration's
/// symbolic name, `tsa_policy1`).
fn openssl_policy(text: &str) -> String {
    let p = text
        .lines()
        .find_map(|l| l.strip_prefix("Policy OID: "))
        .unwrap();
    if p == "tsa_policy1" {
        "1.2.3.4.1".into()
    } else {
        p.to_string()
    }
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn every_real_token_verifies_as_token_and_as_reply() {
    for name in REAL {
        let d = real(name);
        for form in ["token.der", "reply.tsr"] {
            let token = d.join(form);
            if !token.exists() {
                continue;
            }
            let out = verify_real(name, &token, name, &["--json"]);
            assert_eq!(
                out.status.code(),
                Some(0),
                "{name} {form}: {}",
                stderr(&out)
            );
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            assert_eq!(v["valid"], true);
            for key in [
                "gen_time",
                "latest",
                "tsa",
                "serial",
                "policy",
                "hash",
                "signature",
                "path",
            ] {
                assert!(!v[key].is_null(), "{name}: {key} in {v}");
            }
            assert!(v.get("accuracy").is_some(), "{v}");
            // What OpenSSL reads in the token is what we state.
            let text = std::fs::read_to_string(d.join("tstinfo.txt")).unwrap();
            let serial = v["serial"].as_str().unwrap().to_ascii_uppercase();
            assert!(
                text.to_ascii_uppercase()
                    .contains(serial.trim_start_matches('0')),
                "{name}: serial {serial}"
            );
            assert_eq!(
                openssl_policy(&text),
                v["policy"].as_str().unwrap(),
                "{name}"
            );
            // The text output says the same, with the latest time proved.
            let out = verify_real(name, &token, name, &[]);
            let text = stdout(&out);
            assert!(text.contains("timestamp: valid"), "{text}");
            assert!(
                text.contains(&format!("latest:    {}", v["latest"].as_str().unwrap())),
                "{text}"
            );
        }
    }
}

#[test]
fn every_real_token_is_refused_for_other_data_a_changed_signature_or_another_anchor() {
    let dir = tempdir();
    for (i, name) in REAL.into_iter().enumerate() {
        let d = real(name);
        let token = d.join("token.der");
        // Other data.
        let out = if d.join("data.bin").exists() {
            let other = file(dir.path(), "other.bin", b"other bytes");
            hg_run(&[
                "timestamp",
                "verify",
                s(&token),
                "--data",
                s(&other),
                "--tsa-ca",
                s(&d.join("ca.pem")),
                "--untrusted",
                s(&if d.join("chain.pem").exists() {
                    d.join("chain.pem")
                } else {
                    d.join("ca.pem")
                }),
            ])
        } else {
            hg_run(&[
                "timestamp",
                "verify",
                s(&token),
                "--digest",
                &"00".repeat(32),
                "--tsa-ca",
                s(&d.join("ca.pem")),
            ])
        };
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("covers other data"),
            "{}",
            stderr(&out)
        );
        // One byte of its signature changed: the last byte of the token is in it for every one
        // of these (the SignerInfo comes last, its signature last within it).
        let mut bad = std::fs::read(&token).unwrap();
        let last = bad.len() - 1;
        bad[last] ^= 1;
        let bad = file(dir.path(), &format!("bad-{i}.der"), &bad);
        let out = verify_real(name, &bad, name, &["--json"]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["valid"], false, "{v}");
        assert!(v["reason"].as_str().unwrap().contains("signature"), "{v}");
        // Another authority's anchor.
        let other = REAL[(i + 1) % REAL.len()];
        let out = verify_real(name, &token, other, &[]);
        assert_eq!(out.status.code(), Some(1), "{name}: {}", stderr(&out));
        assert!(stderr(&out).contains("does not chain"), "{}", stderr(&out));
    }
}

#[test]
fn errors_that_are_no_verdict_exit_2() {
    let dir = tempdir();
    let d = real(REAL[0]);
    // sigstore's production token carries no certificate: without --untrusted nothing checks
    // its signature.
    let out = hg_run(&[
        "timestamp",
        "verify",
        s(&d.join("token.der")),
        "--data",
        s(&d.join("data.bin")),
        "--tsa-ca",
        s(&d.join("ca.pem")),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("--untrusted"), "{}", stderr(&out));
    // Not a token; not a certificate; no anchor; a digest that is not hex.
    let junk = file(dir.path(), "junk", b"not a token");
    for args in [
        vec![
            "timestamp",
            "verify",
            s(&junk),
            "--data",
            s(&junk),
            "--tsa-ca",
            s(&d.join("ca.pem")),
        ],
        vec![
            "timestamp",
            "verify",
            s(&d.join("token.der")),
            "--data",
            s(&junk),
            "--tsa-ca",
            s(&junk),
        ],
        vec![
            "timestamp",
            "verify",
            s(&d.join("token.der")),
            "--data",
            s(&junk),
        ],
        vec![
            "timestamp",
            "verify",
            s(&d.join("token.der")),
            "--digest",
            "xyz",
            "--tsa-ca",
            s(&d.join("ca.pem")),
        ],
        vec!["timestamp", "inspect", s(&junk)],
    ] {
        let out = hg_run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with("hourglass: error:"),
            "{}",
            stderr(&out)
        );
    }
    // An EC root is an anchor like any other: no "malformed certificate".
    let out = hg_run(&[
        "timestamp",
        "verify",
        s(&d.join("token.der")),
        "--data",
        s(&d.join("data.bin")),
        "--tsa-ca",
        s(&d.join("ca.pem")),
        "--untrusted",
        s(&d.join("chain.pem")),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

#[test]
fn inspect_prints_what_openssl_reads() {
    for name in REAL {
        let d = real(name);
        let out = hg(&["timestamp", "inspect", s(&d.join("token.der"))]);
        let text = stdout(&out);
        let openssl_text = std::fs::read_to_string(d.join("tstinfo.txt")).unwrap();
        let policy = openssl_policy(&openssl_text);
        assert!(
            text.contains(&format!("Policy OID: {policy}")),
            "{name}: {text}"
        );
        assert!(text.contains("Latest time proved: "), "{text}");
        let json: Value = serde_json::from_slice(
            &hg(&["timestamp", "inspect", s(&d.join("token.der")), "--json"]).stdout,
        )
        .unwrap();
        assert_eq!(json["policy"], policy, "{name}");
        assert_eq!(json["form"], "token");
    }
    // Microsoft's fraction and accuracy.
    let json: Value = serde_json::from_slice(
        &hg(&[
            "timestamp",
            "inspect",
            s(&real(REAL[5]).join("token.der")),
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(json["gen_time"], "2024-06-21T07:12:05.884Z");
    assert_eq!(json["accuracy"], 0.5);
    assert_eq!(json["latest"], "2024-06-21T07:12:07Z");
}

/// The service's own TSA with the key `kind` (none: the default), `signer` as verdicts name its
/// key and `key_text` in OpenSSL's text of its certificate, stamping with `hash`: OpenSSL and
/// `timestamp verify` accept its tokens, and its receipts carry them.
struct OwnTsa {
    kind: Option<&'static str>,
    signer: &'static str,
    key_text: &'static str,
    hash: &'static str,
    hash_name: &'static str,
    algorithm: &'static str,
}

#[test]
fn the_service_signs_with_ecdsa_p256_by_default_and_openssl_and_hourglass_verify_it() {
    own_tsa_round_trip(OwnTsa {
        kind: None,
        signer: "ECDSA P-256",
        key_text: "NIST CURVE: P-256",
        hash: "sha256",
        hash_name: "SHA-256",
        algorithm: "ecdsa-with-SHA256 (ECDSA P-256)",
    });
}

#[test]
fn the_service_signs_with_ecdsa_p384_and_openssl_and_hourglass_verify_it() {
    own_tsa_round_trip(OwnTsa {
        kind: Some("ecdsa-p384"),
        signer: "ECDSA P-384",
        key_text: "NIST CURVE: P-384",
        hash: "sha384",
        hash_name: "SHA-384",
        algorithm: "ecdsa-with-SHA384 (ECDSA P-384)",
    });
}

#[test]
fn the_service_signs_with_rsa_3072_and_openssl_and_hourglass_verify_it() {
    own_tsa_round_trip(OwnTsa {
        kind: Some("rsa-3072"),
        signer: "RSA-3072",
        key_text: "Public-Key: (3072 bit)",
        hash: "sha256",
        hash_name: "SHA-256",
        algorithm: "WithRSAEncryption (RSA-3072)",
    });
}

fn own_tsa_round_trip(t: OwnTsa) {
    let dir = tempdir();
    let d = dir.path();
    let mut flags = vec!["--rate-limit", "0"];
    if let Some(kind) = t.kind {
        flags.extend(["--tsa-key", kind]);
    }
    let server = Server::start(&d.join("srv"), &flags);
    let key = std::fs::read_to_string(d.join("srv/tsa.key")).unwrap();
    assert!(key.starts_with("-----BEGIN PRIVATE KEY-----"), "{key}");
    let get = |path: &str, name: &str| {
        file(
            d,
            name,
            &client()
                .get(server.url(path))
                .send()
                .unwrap()
                .bytes()
                .unwrap(),
        )
    };
    let ca = get("/tsa-ca.pem", "tsa-ca.pem");
    get("/tsa.pem", "tsa.pem");
    let text = openssl(&["x509", "-in", "tsa.pem", "-noout", "-text"], d);
    assert!(text.contains(t.key_text), "{text}");
    // Any file, stamped with `timestamp stamp`, checked before it is written.
    let data = file(d, "paper.pdf", b"%PDF-1.7 a paper");
    let out = hg(&[
        "timestamp",
        "stamp",
        s(&data),
        "--tsa",
        &server.url("/tsa"),
        "-o",
        s(&d.join("paper.tsr")),
        "--tsa-ca",
        s(&ca),
        "--hash",
        t.hash,
    ]);
    let said = stdout(&out);
    assert!(said.contains(t.algorithm), "{said}");
    // OpenSSL accepts it.
    let ok = openssl(
        &[
            "ts",
            "-verify",
            "-in",
            "paper.tsr",
            "-data",
            "paper.pdf",
            "-CAfile",
            "tsa-ca.pem",
            "-untrusted",
            "tsa.pem",
        ],
        d,
    );
    assert!(ok.contains("Verification: OK"), "{ok}");
    // So does `timestamp verify`: genTime plus the service's 1 s accuracy.
    let v: Value = serde_json::from_slice(
        &hg(&[
            "timestamp",
            "verify",
            s(&d.join("paper.tsr")),
            "--data",
            s(&data),
            "--tsa-ca",
            s(&ca),
            "--json",
        ])
        .stdout,
    )
    .unwrap();
    assert_eq!(v["accuracy"], 1.0);
    assert_eq!(v["hash"], t.hash_name);
    let gen = humantime::parse_rfc3339(v["gen_time"].as_str().unwrap()).unwrap();
    let latest = humantime::parse_rfc3339(v["latest"].as_str().unwrap()).unwrap();
    assert_eq!(latest.duration_since(gen).unwrap().as_secs(), 1);
    // A receipt of this service: its token is signed by the same key, and its received time is the
    // latest time the token proves.
    let set = short_set(&server, "conf", &["1s"], d);
    let doc = file(d, "doc.txt", b"doc\n");
    let bundle = seal(&set, &doc, "1s");
    let (status, body) = upload(&server, &std::fs::read(&bundle).unwrap(), b"doc\n");
    assert_eq!(status, 202, "{body}");
    let row = verdict(&server, body["id"].as_str().unwrap());
    assert_eq!(row["status"], "valid", "{row}");
    let receipt = file(
        d,
        "receipt.json",
        serde_json::to_string(&row["receipt"]).unwrap().as_bytes(),
    );
    let institution = get("/institution.pub", "institution.pub");
    let log_pub = service::log_key(&server, d);
    let out = hg(&[
        "submit",
        "check-receipt",
        s(&receipt),
        "--institution",
        s(&institution),
        "--log-key",
        s(&log_pub),
        "--json",
    ]);
    let checked: Value = serde_json::from_slice(&out.stdout).unwrap();
    let token = &checked["timestamp"];
    assert!(
        token["signature"].as_str().unwrap().contains(t.signer),
        "{checked}"
    );
    assert_eq!(checked["received"], token["latest"], "{checked}");
    assert_eq!(row["received"], token["latest"], "{row}");
    // --tsa-ca names another anchor: the institution's key no longer vouches (exit 1).
    let other = tempdir();
    common::openssl_tsa(other.path(), "Another TSA");
    let out = hg_run(&[
        "submit",
        "check-receipt",
        s(&receipt),
        "--institution",
        s(&institution),
        "--log-key",
        s(&log_pub),
        "--tsa-ca",
        s(&other.path().join("ca.pem")),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not chain"), "{}", stderr(&out));
    // Naming the service's own TSA CA instead: accepted.
    hg(&[
        "submit",
        "check-receipt",
        s(&receipt),
        "--institution",
        s(&institution),
        "--log-key",
        s(&log_pub),
        "--tsa-ca",
        s(&ca),
    ]);
}

#[test]
fn the_data_directory_keeps_the_kind_of_its_tsa_key() {
    let dir = tempdir();
    let d = dir.path();
    drop(Server::start(&d.join("srv"), &["--rate-limit", "0"]));
    let key = std::fs::read(d.join("srv/tsa.key")).unwrap();
    // A data directory made with the default kind (ECDSA P-256) refuses to become ECDSA P-384
    // by a flag.
    let out = hg_run(&[
        "serve",
        "--data",
        s(&d.join("srv")),
        "--listen",
        "127.0.0.1:0",
        "--tsa-key",
        "ecdsa-p384",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("not ecdsa-p384"), "{}", stderr(&out));
    assert_eq!(std::fs::read(d.join("srv/tsa.key")).unwrap(), key);
    // A kind that is not one, without --tsa-cert: a usage error.
    let out = hg_run(&[
        "serve",
        "--data",
        s(&d.join("srv")),
        "--listen",
        "127.0.0.1:0",
        "--tsa-key",
        "dsa-1024",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("rsa-3072, ecdsa-p256 or ecdsa-p384"),
        "{}",
        stderr(&out)
    );
}

//! Scenario tests for time-lock certificates: `hourglass ca new`, `hourglass puzzle certify`
//! and `hourglass puzzle solve -p NAME.crt --ca CA.crt`, with the `openssl` command line as an
//! independent oracle (`x509 -text` shows the exponent and marker, `verify` accepts). Requires
//! `openssl`; without it the tests fail with a hint to run `bash scripts/setup-debian.sh`.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use hourglass_arith::Integer;

/// The OID of the time-lock parameters extension.
const PARAMETERS_OID: &str = "2.25.306263111566275780816363928834165067171.1";

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// An institution: a 2048-bit CA `DIR/NAME.{key,crt}` made with `hourglass ca new`.
fn ca_new(dir: &Path, name: &str, cn: &str) -> (PathBuf, PathBuf) {
    let out = dir.join(name);
    hg(&[
        "ca",
        "new",
        "-o",
        s(&out),
        "--name",
        cn,
        "--bits",
        "2048",
        "--seed",
        &format!("puzzle certificates: {name} {cn}"),
    ]);
    (
        dir.join(format!("{name}.key")),
        dir.join(format!("{name}.crt")),
    )
}

/// A 1024-bit puzzle key of 20000 squarings: `DIR/NAME.{key,pub}`.
fn puzzle_keygen(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let out = dir.join(name);
    hg(&[
        "puzzle",
        "keygen",
        "--bits",
        "1024",
        "--squarings",
        "20000",
        "--issuer",
        "Conf 2027",
        "--seed",
        &format!("puzzle certificates: {name}"),
        "-o",
        s(&out),
    ]);
    (
        dir.join(format!("{name}.key")),
        dir.join(format!("{name}.pub")),
    )
}

fn certify(key: &Path, ca: &(PathBuf, PathBuf), out: &Path, extra: &[&str]) {
    let mut args = argv(
        "puzzle certify -k {} --ca-key {} --ca-cert {} -o {}",
        &[key, &ca.0, &ca.1, out],
    );
    args.extend(extra.iter().map(|a| a.to_string()));
    hg(&args);
}

fn solve_args(puzzle: &Path, doc: &Path, sol: &Path, ca: Option<&Path>) -> Vec<String> {
    let mut args = argv(
        "puzzle solve -p {} -i {} -o {} --quiet",
        &[puzzle, doc, sol],
    );
    if let Some(ca) = ca {
        args.extend(["--ca".to_string(), s(ca).to_string()]);
    }
    args
}

/// `E = z * 2^65 + t * 2 + 1` from a NAME.pub file, as OpenSSL prints it (hex, no colons).
fn expected_exponent_hex(public: &Path) -> String {
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(public).unwrap()).unwrap();
    let z = Integer::from_str_radix(j["z"].as_str().unwrap(), 16).unwrap();
    let t = Integer::from(j["t"].as_u64().unwrap());
    let e: Integer = (z << 65u32) + (t << 1u32) + 1u32;
    format!("{e:x}")
}

/// The hex digits of the `Exponent:` block of `openssl x509 -text` (leading zeros dropped).
fn printed_exponent_hex(text: &str) -> String {
    let start = text.find("Exponent:").expect("no Exponent: line") + "Exponent:".len();
    let digits: String = text[start..]
        .lines()
        .skip(1)
        .take_while(|l| {
            let l = l.trim();
            !l.is_empty() && l.chars().all(|c| c.is_ascii_hexdigit() || c == ':')
        })
        .flat_map(|l| l.chars().filter(|c| c.is_ascii_hexdigit()))
        .collect();
    digits.trim_start_matches('0').to_string()
}

fn fingerprint(public: &Path) -> String {
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(public).unwrap()).unwrap();
    j["fingerprint"].as_str().unwrap().to_string()
}

#[test]
fn ca_certify_solve_verify_and_openssl_agrees() {
    require_openssl();
    let dir = tempdir();
    let d = dir.path();
    let ca = ca_new(d, "ca", "Example University");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&ca.0).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "CA.key must be private");
    }
    assert!(std::fs::read_to_string(&ca.0)
        .unwrap()
        .starts_with("-----BEGIN PRIVATE KEY-----"));
    openssl(&["pkey", "-in", s(&ca.0), "-check", "-noout"]);
    let ca_text = stdout(&openssl(&["x509", "-text", "-noout", "-in", s(&ca.1)]));
    for want in [
        "Version: 3 (0x2)",
        "Issuer: CN = Example University",
        "Subject: CN = Example University",
        "X509v3 Basic Constraints: critical",
        "CA:TRUE",
        "X509v3 Key Usage: critical",
        "Certificate Sign, CRL Sign",
        "X509v3 Subject Key Identifier",
        "sha256WithRSAEncryption",
    ] {
        assert!(
            ca_text.contains(want),
            "CA certificate lacks {want:?}:\n{ca_text}"
        );
    }

    let (key, public) = puzzle_keygen(d, "p");
    let crt = d.join("p.crt");
    certify(&key, &ca, &crt, &["--seed", "certify serial"]);

    // OpenSSL prints it: the exponent E, the time-lock URI and the private extension.
    let text = stdout(&openssl(&[
        "x509",
        "-text",
        "-noout",
        "-certopt",
        "ext_parse",
        "-in",
        s(&crt),
    ]));
    let fp = fingerprint(&public);
    for want in [
        "Version: 3 (0x2)",
        "Issuer: CN = Example University",
        "Subject: CN = Conf 2027",
        "Public Key Algorithm: rsaEncryption",
        "Public-Key: (1024 bit)",
        &format!("URI:urn:hourglass:timelock:v1:{fp}"),
        PARAMETERS_OID,
        "X509v3 Authority Key Identifier",
        "sha256WithRSAEncryption",
        ":sha256",
    ] {
        assert!(text.contains(want), "certificate lacks {want:?}:\n{text}");
    }
    assert_eq!(
        printed_exponent_hex(&text),
        expected_exponent_hex(&public),
        "OpenSSL's Exponent is not z * 2^65 + t * 2 + 1:\n{text}"
    );
    // OpenSSL accepts the chain.
    let verified = openssl(&["verify", "-CAfile", s(&ca.1), s(&crt)]);
    assert!(stdout(&verified).contains(": OK"), "{}", stdout(&verified));

    // The author solves from the certificate; the institution verifies with the private key.
    let doc = d.join("paper.txt");
    std::fs::write(&doc, b"camera-ready version").unwrap();
    let sol = d.join("paper.sol");
    hg(&solve_args(&crt, &doc, &sol, Some(&ca.1)));
    hg(&argv(
        "puzzle verify -k {} -i {} -s {}",
        &[&key, &doc, &sol],
    ));
    // The same solution as from the .pub file: the certificate carries the same puzzle.
    let sol_pub = d.join("paper-pub.sol");
    hg(&solve_args(&public, &doc, &sol_pub, None));
    assert_eq!(
        std::fs::read(&sol).unwrap(),
        std::fs::read(&sol_pub).unwrap()
    );
    // DER certificates (both of them) work as well.
    let (crt_der, ca_der) = (d.join("p.der"), d.join("ca.der"));
    for (pem, der) in [(&crt, &crt_der), (&ca.1, &ca_der)] {
        openssl(&["x509", "-in", s(pem), "-outform", "DER", "-out", s(der)]);
    }
    let sol_der = d.join("paper-der.sol");
    hg(&solve_args(&crt_der, &doc, &sol_der, Some(&ca_der)));
    assert_eq!(
        std::fs::read(&sol).unwrap(),
        std::fs::read(&sol_der).unwrap()
    );

    // A certificate without --ca is refused, with a hint.
    let err = hg_fail(2, &solve_args(&crt, &doc, &d.join("x.sol"), None));
    assert!(err.contains("is a certificate"), "{err}");
    assert!(
        err.contains("hourglass: hint:") && err.contains("--ca"),
        "{err}"
    );
    // --ca with an unsigned .pub is refused too.
    let err = hg_fail(2, &solve_args(&public, &doc, &d.join("x.sol"), Some(&ca.1)));
    assert!(err.contains("not one"), "{err}");
    assert!(!d.join("x.sol").exists());
}

#[test]
fn foreign_tampered_expired_and_ordinary_certificates_are_refused() {
    require_openssl();
    let dir = tempdir();
    let d = dir.path();
    let ca = ca_new(d, "ca", "Example University");
    let (key, _) = puzzle_keygen(d, "p");
    let crt = d.join("p.crt");
    certify(&key, &ca, &crt, &["--name", "Deadline puzzle"]);
    let doc = d.join("doc.txt");
    std::fs::write(&doc, b"doc").unwrap();
    let sol = d.join("doc.sol");
    // A certificate that fails its checks is a negative verdict (1); one that is not a
    // time-lock certificate at all is an error (2).
    let refuse = |puzzle: &Path, ca_cert: &Path, want: &str, hint: &str| {
        let verdict = ["does not verify", "not by the CA", "expired"]
            .iter()
            .any(|w| want.contains(w));
        let err = hg_fail(
            if verdict { 1 } else { 2 },
            &solve_args(puzzle, &doc, &sol, Some(ca_cert)),
        );
        assert!(err.contains(want), "expected {want:?} in:\n{err}");
        assert!(
            err.contains("hourglass: hint:") && err.contains(hint),
            "{err}"
        );
        assert!(!sol.exists(), "no solution may be written");
    };

    // Another CA with the same name but its own key, and a CA with another name.
    let impostor = ca_new(d, "impostor", "Example University");
    refuse(&crt, &impostor.1, "does not verify", "altered");
    let other = ca_new(d, "other", "Other Institute");
    refuse(
        &crt,
        &other.1,
        "not by the CA 'CN=Other Institute'",
        "another CA",
    );
    assert!(!openssl_run(&["verify", "-CAfile", s(&other.1), s(&crt)])
        .status
        .success());

    // A flipped byte inside the signed part (the serial number) and inside the signature.
    let der = d.join("p.der");
    openssl(&["x509", "-in", s(&crt), "-outform", "DER", "-out", s(&der)]);
    let bytes = std::fs::read(&der).unwrap();
    for (name, pos) in [("serial", 15), ("signature", bytes.len() - 10)] {
        let mut bad = bytes.clone();
        bad[pos] ^= 0x01;
        let path = d.join(format!("tampered-{name}.der"));
        std::fs::write(&path, &bad).unwrap();
        refuse(&path, &ca.1, "does not verify", "altered");
        let o = openssl_run(&["verify", "-CAfile", s(&ca.1), s(&path)]);
        assert!(!o.status.success(), "openssl accepted the {name} flip");
    }

    // Expired: --days 0 ends with the current second.
    let short = d.join("short.crt");
    certify(&key, &ca, &short, &["--days", "0"]);
    std::thread::sleep(std::time::Duration::from_millis(1100));
    refuse(&short, &ca.1, "expired", "renewed certificate");
    let o = openssl_run(&["verify", "-CAfile", s(&ca.1), s(&short)]);
    assert!(
        !o.status.success() && (stdout(&o) + &stderr(&o)).contains("expired"),
        "openssl: {}{}",
        stdout(&o),
        stderr(&o)
    );

    // Ordinary certificates from the same CA, made by OpenSSL (version 1 and version 3).
    let (plain_key, csr) = (d.join("plain.key"), d.join("plain.csr"));
    openssl(&[
        "req",
        "-new",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        s(&plain_key),
        "-subj",
        "/CN=plain",
        "-out",
        s(&csr),
    ]);
    let ext = d.join("ext.cnf");
    std::fs::write(
        &ext,
        "basicConstraints=CA:FALSE\nsubjectAltName=DNS:plain.example\n",
    )
    .unwrap();
    for (name, extra) in [("v1", vec![]), ("v3", vec!["-extfile", s(&ext)])] {
        let plain = d.join(format!("plain-{name}.crt"));
        let mut args = vec![
            "x509",
            "-req",
            "-in",
            s(&csr),
            "-CA",
            s(&ca.1),
            "-CAkey",
            s(&ca.0),
            "-set_serial",
            "7",
            "-days",
            "2",
            "-out",
            s(&plain),
        ];
        args.extend(extra);
        openssl(&args);
        openssl(&["verify", "-CAfile", s(&ca.1), s(&plain)]);
        refuse(&plain, &ca.1, "not a time-lock certificate", "ordinary");
    }

    // A puzzle certificate is not a CA; a non-certificate is not either.
    refuse(&crt, &crt, "not a CA certificate", "hourglass ca new");
    refuse(&crt, &key, "malformed certificate", "hourglass ca new");
}

#[test]
fn bad_certify_and_ca_requests_are_refused_without_output() {
    let dir = tempdir();
    let d = dir.path();
    let ca = ca_new(d, "ca", "Example University");
    let other = ca_new(d, "other", "Other Institute");
    let (key, _) = puzzle_keygen(d, "p");
    let out = d.join("p.crt");
    // A CA key that is not the CA certificate's.
    let err = hg_fail(
        2,
        &argv(
            "puzzle certify -k {} --ca-key {} --ca-cert {} -o {}",
            &[&key, &other.0, &ca.1, &out],
        ),
    );
    assert!(err.contains("does not belong"), "{err}");
    assert!(err.contains("hourglass: hint:"), "{err}");
    // A name longer than a common name may be.
    let long = "x".repeat(65);
    let mut args = argv(
        "puzzle certify -k {} --ca-key {} --ca-cert {} -o {}",
        &[&key, &ca.0, &ca.1, &out],
    );
    args.extend(["--name".to_string(), long]);
    let err = hg_fail(2, &args);
    assert!(err.contains("common name"), "{err}");
    assert!(!out.exists());
    // An existing CA key is never overwritten.
    let before = std::fs::read(&ca.0).unwrap();
    let err = hg_fail(2, &["ca", "new", "-o", s(&d.join("ca")), "--bits", "2048"]);
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(std::fs::read(&ca.0).unwrap(), before);
    // Usage errors.
    hg_fail(
        2,
        &["ca", "new", "-o", s(&d.join("small")), "--bits", "1024"],
    );
    hg_fail(2, &["ca", "new", "-o", s(&d.join("zero")), "--days", "0"]);
    assert!(!d.join("small.key").exists() && !d.join("zero.key").exists());
}

#[test]
fn help_shows_examples() {
    for args in [
        &["ca", "new", "--help"][..],
        &["puzzle", "certify", "--help"],
        &["puzzle", "solve", "--help"],
    ] {
        let text = stdout(&hg(args));
        assert!(text.contains("Examples:"), "{args:?}:\n{text}");
    }
    let solve = stdout(&hg(&["puzzle", "solve", "--help"]));
    assert!(solve.contains("--ca <FILE>"), "{solve}");
    assert!(solve.contains("--ca example-ca.crt"), "{solve}");
}

//! The committed vectors of docs/FORMATS.md section 18: a TSA, its token for a fixed query at a
//! fixed time, and version 2 and 3 receipts with that token, compared byte for byte with what
//! this build makes; and OpenSSL's verdict on the committed token.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, UNIX_EPOCH};

use hourglass_arith::entropy::SeededEntropy;
use hourglass_rsa::{HashAlg, KeyGenOptions, PrivateKey, Variant};
use hourglass_timestamp::{PolicyId, Query, Tsa, TsaCertificate, TsaKey};
use hourglass_x509::{CaCertificate, CertificateOptions, ValidityPeriod};

fn rsa_key(seed: &str, bits: u32) -> PrivateKey {
    KeyGenOptions::new(bits, Variant::Crt)
        .generate(&mut SeededEntropy::new(seed.as_bytes()))
        .unwrap()
}

fn openssl(args: &[&str], dir: &Path) -> (bool, String) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs (scripts/setup-debian.sh installs it)");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The committed vectors of docs/FORMATS.md section 18: a TSA (2048-bit keys from fixed seeds,
/// fixed validity), its token for a fixed query at a fixed time, and a version 2 receipt with
/// that token. Everything is deterministic (PKCS#1 v1.5 signatures, a seeded PSS salt), so the
/// files are compared byte for byte; `HOURGLASS_WRITE_VECTORS=1` writes them anew.
#[test]
fn the_committed_timestamp_and_receipt_vectors_are_what_this_build_makes() {
    use hourglass_receipt::{check_receipt, sign_receipt, ReceiptVerdict, Statement};
    let t = |secs: u64| UNIX_EPOCH + Duration::from_secs(secs);
    let institution = rsa_key("vector: institution", 2048);
    let tsa_key = TsaKey::Rsa(rsa_key("vector: TSA", 2048));
    let mut rng = SeededEntropy::new(b"vector: serials and salt");
    let validity = ValidityPeriod {
        not_before: t(1_767_225_600), // 2026-01-01
        not_after: t(2_082_758_400),  // 2036-01-01
    };
    let ca = CaCertificate::self_signed(
        &institution,
        &CertificateOptions {
            common_name: "Vector TSA CA".into(),
            validity,
        },
        &mut rng,
    )
    .unwrap();
    let cert = TsaCertificate::issue(
        tsa_key.spki().unwrap(),
        &ca,
        &institution,
        &CertificateOptions {
            common_name: "Vector TSA".into(),
            validity,
        },
        &mut rng,
    )
    .unwrap();
    let tsa = Tsa::new(
        tsa_key,
        cert.clone(),
        vec![ca.certificate().clone()],
        PolicyId::hourglass(),
    )
    .unwrap();
    let bundle = b"{\"type\": \"hourglass-submission-bundle\"}\n";
    let query = Query::for_digest(
        HashAlg::Sha256,
        &HashAlg::Sha256.digest(bundle),
        Some(vec![0x01, 0x02, 0x03, 0x04]),
        None,
    )
    .unwrap();
    let gen_time = t(1_800_000_000); // 2027-01-15T08:00:00Z
    let token = tsa.stamp(&query, &[0x2a], gen_time, &mut rng).unwrap();
    let statement = Statement {
        institution: String::new(),
        submission: "0123456789abcdef0123456789abcdef".into(),
        set: "Vector set".into(),
        set_sha256: "11".repeat(32),
        document_sha256: "22".repeat(32),
        bundle_sha256: hex::encode(HashAlg::Sha256.digest(bundle)),
        received_unix: 0,
        timestamp_sha256: None,
        log: None,
        verdict: ReceiptVerdict::Valid,
        credited_ms: 3_600_000,
        reason: String::new(),
    };
    let receipt = sign_receipt(&statement, &token, &institution, &mut rng)
        .unwrap()
        .unlogged()
        .unwrap();
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let files: [(&str, Vec<u8>); 6] = [
        ("tsa-ca.pem", ca.to_pem().into_bytes()),
        ("tsa.pem", cert.to_pem().into_bytes()),
        ("tsa-bundle.json", bundle.to_vec()),
        ("tsa-query.tsq", query.to_der().to_vec()),
        ("tsa-token.der", token.clone()),
        ("receipt-v2.json", receipt.clone().into_bytes()),
    ];
    for (name, bytes) in &files {
        let path = vectors.join(name);
        if std::env::var_os("HOURGLASS_WRITE_VECTORS").is_some() {
            std::fs::write(&path, bytes).unwrap();
        }
        assert_eq!(
            &std::fs::read(&path).unwrap(),
            bytes,
            "{name} differs from this build's"
        );
    }
    // The committed receipt checks under the institution key alone; it was received at the
    // latest time the token proves: genTime 08:00:00 plus the 1 s accuracy.
    let checked = check_receipt(receipt.as_bytes(), institution.public(), &[], None).unwrap();
    assert_eq!(checked.statement.received_unix, 1_800_000_001);
    assert!(
        receipt.contains("received: 2027-01-15T08:00:01Z"),
        "{receipt}"
    );
    assert!(
        receipt.contains("predated-to: 2027-01-15T07:00:01Z"),
        "{receipt}"
    );
    // Version 3: the same statement naming a log, entry 0 of a one-entry log whose key (and
    // checkpoint, Ed25519 being deterministic) come from a seed.
    {
        use hourglass_log::checkpoint::{LogPins, SignedCheckpoint};
        use hourglass_log::keys::{KeyRole, SigningKey};
        use hourglass_log::tree::{append, leaf_hash, prove_inclusion, root, HashMemo};
        let log = SigningKey::generate(
            "receipts.example.org/log",
            KeyRole::Log,
            &mut SeededEntropy::new(b"receipt vector log"),
        )
        .unwrap();
        let mut logged = statement.clone();
        logged.log = Some(log.name().to_string());
        let signed = sign_receipt(&logged, &token, &institution, &mut rng).unwrap();
        let mut memo = HashMemo::new();
        append(&mut memo, 0, &[leaf_hash(signed.entry())]).unwrap();
        let cp = SignedCheckpoint::sign(log.name(), 1, root(&memo, 1).unwrap(), &log).unwrap();
        let v3 = signed
            .logged(0, &prove_inclusion(&memo, 1, 0).unwrap(), &cp)
            .unwrap();
        for (name, bytes) in [
            ("receipt-v3.json", v3.clone().into_bytes()),
            (
                "log.pub",
                format!("{}\n", log.verifier().encode()).into_bytes(),
            ),
        ] {
            let path = vectors.join(name);
            if std::env::var_os("HOURGLASS_WRITE_VECTORS").is_some() {
                std::fs::write(&path, &bytes).unwrap();
            }
            assert_eq!(
                std::fs::read(&path).unwrap(),
                bytes,
                "{name} differs from this build's"
            );
        }
        let pins = LogPins::log_only(log.verifier()).unwrap();
        let checked = check_receipt(v3.as_bytes(), institution.public(), &[], Some(&pins)).unwrap();
        assert_eq!(checked.log.unwrap().index, 0);
    }
    // OpenSSL verifies the committed token against the committed CA, for the committed bundle.
    let dir = tempfile::tempdir().unwrap();
    let ok = {
        let (ok, out) = openssl(
            &[
                "ts",
                "-verify",
                "-token_in",
                "-in",
                vectors.join("tsa-token.der").to_str().unwrap(),
                "-data",
                vectors.join("tsa-bundle.json").to_str().unwrap(),
                "-CAfile",
                vectors.join("tsa-ca.pem").to_str().unwrap(),
            ],
            dir.path(),
        );
        ok && out.contains("Verification: OK")
    };
    assert!(ok);
}

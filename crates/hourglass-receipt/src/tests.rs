//! The receipts' unit tests: signing, checking, tampering, tokens, log evidence.

use std::time::SystemTime;

use hourglass_rsa::{HashAlg, PrivateKey, PublicKey};
use hourglass_timelock::verdict::{rfc3339, unix_secs};
use sha2::{Digest, Sha256};

use crate::check::*;
use crate::json::*;
use crate::sign::*;
use crate::statement::*;
use crate::*;
use hourglass_arith::entropy::SeededEntropy;
use hourglass_log::checkpoint::{LogPins, SignedCheckpoint};
use hourglass_log::keys::{KeyRole, SigningKey as LogSigningKey};
use hourglass_log::tree::{append, leaf_hash, prove_inclusion, root, HashMemo};
use hourglass_rsa::padding::Pss;
use hourglass_rsa::{KeyGenOptions, Variant};
use hourglass_timestamp::{PolicyId, Query, Tsa, TsaCertificate, TsaKey};
use hourglass_x509::{CaCertificate, CertificateOptions};

/// A token of a TSA whose CA is made with `institution`, over `bundle_sha256` at `at`.
fn token(institution: &PrivateKey, bundle_sha256: &str, at: u64) -> Vec<u8> {
    let mut rng = SeededEntropy::new(&[7; 32]);
    let ca = CaCertificate::self_signed(
        institution,
        &CertificateOptions::days("Receipt test TSA CA", 3650),
        &mut rng,
    )
    .unwrap();
    let tsa_key = TsaKey::Rsa(
        KeyGenOptions::new(2048, Variant::Crt)
            .generate(&mut rng)
            .unwrap(),
    );
    let cert = TsaCertificate::issue(
        tsa_key.spki().unwrap(),
        &ca,
        institution,
        &CertificateOptions::days("Receipt test TSA", 3650),
        &mut rng,
    )
    .unwrap();
    let tsa = Tsa::new(
        tsa_key,
        cert,
        vec![ca.certificate().clone()],
        PolicyId::hourglass(),
    )
    .unwrap();
    let query = Query::for_digest(
        HashAlg::Sha256,
        &hex::decode(bundle_sha256).unwrap(),
        None,
        None,
    )
    .unwrap();
    let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(at);
    tsa.stamp(&query, &[1], at, &mut rng).unwrap()
}

fn signed(s: &Statement, k: &PrivateKey) -> SignedReceipt {
    let mut rng = SeededEntropy::new(&[9; 32]);
    sign_receipt(s, &token(k, &s.bundle_sha256, s.received_unix), k, &mut rng).unwrap()
}

fn sign(s: &Statement, k: &PrivateKey) -> String {
    signed(s, k).unlogged().unwrap()
}

fn check(r: &str, k: &PublicKey) -> Result<Statement, ReceiptError> {
    check_receipt(r.as_bytes(), k, &[], None).map(|c| c.statement)
}

fn key(seed: u8) -> PrivateKey {
    let mut rng = SeededEntropy::new(&[seed; 32]);
    KeyGenOptions::new(2048, Variant::Crt)
        .generate(&mut rng)
        .unwrap()
}

fn statement() -> Statement {
    Statement {
        institution: String::new(),
        submission: "0123abcd".into(),
        set: "Conf 2027".into(),
        set_sha256: "11".repeat(32),
        document_sha256: "22".repeat(32),
        bundle_sha256: "33".repeat(32),
        received_unix: 1_800_000_000,
        timestamp_sha256: None,
        log: None,
        verdict: ReceiptVerdict::Valid,
        credited_ms: 14_400_000,
        reason: String::new(),
    }
}

#[test]
fn a_signed_receipt_checks_and_states_what_was_signed() {
    let k = key(1);
    let r = sign(&statement(), &k);
    let s = check(&r, k.public()).unwrap();
    assert_eq!(s.submission, "0123abcd");
    assert_eq!(s.verdict, ReceiptVerdict::Valid);
    assert_eq!(s.credited_ms, 14_400_000);
    // Received 08:00:01 (the token's genTime 08:00:00 plus its 1 s accuracy), 4 h credited.
    assert_eq!(rfc3339(s.predated_to()), "2027-01-15T04:00:01Z");
}

#[test]
fn another_institution_key_or_any_edit_is_refused() {
    let k = key(1);
    let r = sign(&statement(), &k);
    assert!(matches!(
        check(&r, key(2).public()),
        Err(ReceiptError::BadSignature)
    ));
    let edited = r.replace("verdict: valid", "verdict: invalid");
    assert_ne!(edited, r);
    assert!(matches!(
        check(&edited, k.public()),
        Err(ReceiptError::BadSignature)
    ));
    let edited = r.replace("credited-ms: 14400000", "credited-ms: 94400000");
    assert!(check(&edited, k.public()).is_err());
}

#[test]
fn a_signed_but_non_canonical_statement_is_refused() {
    // Even a statement the institution's key signed is refused unless canonical, so one
    // verdict has one text.
    let k = key(1);
    let mut rng = SeededEntropy::new(&[9; 32]);
    let mut s = statement();
    s.institution = institution_fingerprint(k.public()).unwrap();
    let text = s
        .canonical()
        .replace("credited-ms: 14400000", "credited-ms: 014400000");
    assert!(text.starts_with("hourglass-receipt v1\n"));
    let sig = Pss::new(HashAlg::Sha256)
        .sign(&k, text.as_bytes(), &mut rng)
        .unwrap();
    let json = serde_json::json!({
        "type": RECEIPT_TYPE, "version": 1, "statement": text, "signature": base64_encode(&sig),
    })
    .to_string();
    assert!(matches!(
        check(&json, k.public()),
        Err(ReceiptError::Malformed { .. })
    ));
}

#[test]
fn reasons_stay_on_one_line() {
    let k = key(1);
    let mut s = statement();
    s.verdict = ReceiptVerdict::Invalid;
    s.credited_ms = 0;
    s.reason = "link 2\nverdict: valid".into();
    let r = sign(&s, &k);
    let back = check(&r, k.public()).unwrap();
    assert_eq!(back.verdict, ReceiptVerdict::Invalid);
    assert_eq!(back.reason, "link 2 verdict: valid");
}

#[test]
fn garbage_is_an_error_not_a_panic() {
    let k = key(1);
    for input in [
        &b""[..],
        b"{}",
        b"[1]",
        &[0xff; 10],
        b"{\"type\":\"hourglass-receipt\",\"version\":2,\"statement\":\"\",\"signature\":\"\"}",
        b"{\"type\":\"hourglass-receipt\",\"version\":3,\"statement\":\"\",\"signature\":\"\"}",
    ] {
        assert!(check_receipt(input, k.public(), &[], None).is_err());
    }
}

#[test]
fn a_version_2_receipt_carries_the_token_that_proves_its_received_time() {
    let k = key(1);
    let r = sign(&statement(), &k);
    let checked = check_receipt(r.as_bytes(), k.public(), &[], None).unwrap();
    let (token, verified) = checked.timestamp.clone().unwrap();
    assert_eq!(unix_secs(verified.info().gen_time()), 1_800_000_000);
    // The statement says received 1 s later: the token's accuracy (genTime + 1 s, the
    // latest time it proves), and the verdict is dated by it.
    assert_eq!(checked.statement.received_unix, 1_800_000_001);
    assert_eq!(checked.dating(None).received_unix, 1_800_000_001);
    assert_eq!(
        checked.statement.timestamp_sha256.unwrap(),
        hex::encode(Sha256::digest(&token))
    );
    assert!(r.contains("hourglass-receipt v2"));
}

#[test]
fn a_token_that_disagrees_with_the_statement_is_refused_when_signing() {
    let k = key(1);
    let mut rng = SeededEntropy::new(&[9; 32]);
    let s = statement();
    // A token over another bundle.
    let other = token(&k, &"44".repeat(32), s.received_unix);
    assert!(matches!(
        sign_receipt(&s, &other, &k, &mut rng),
        Err(ReceiptError::TimestampMismatch { .. })
    ));
}

#[test]
fn a_swapped_or_foreign_token_makes_the_receipt_invalid() {
    let k = key(1);
    let r = sign(&statement(), &k);
    let json: serde_json::Value = serde_json::from_str(&r).unwrap();
    // Another token of the same TSA, for the same bundle an hour earlier: not the one the
    // signed statement names.
    let earlier = token(&k, &statement().bundle_sha256, 1_800_000_000 - 3600);
    let mut swapped = json.clone();
    swapped["timestamp"] = base64_encode(&earlier).into();
    let err = check_receipt(swapped.to_string().as_bytes(), k.public(), &[], None).unwrap_err();
    assert!(
        matches!(err, ReceiptError::TimestampMismatch { .. }),
        "{err}"
    );
    assert!(err.is_verdict());
    // A receipt whose token's TSA CA was made with another key than the institution's:
    // signed by the institution, but its clock is not anchored to it.
    let other = key(2);
    let foreign = token(&other, &statement().bundle_sha256, 1_800_000_000);
    let mut s = statement();
    s.institution = institution_fingerprint(k.public()).unwrap();
    s.timestamp_sha256 = Some(hex::encode(Sha256::digest(&foreign)));
    let text = s.canonical();
    let mut rng = SeededEntropy::new(&[9; 32]);
    let sig = Pss::new(HashAlg::Sha256)
        .sign(&k, text.as_bytes(), &mut rng)
        .unwrap();
    let forged = serde_json::json!({
        "type": RECEIPT_TYPE, "version": 2, "statement": text,
        "signature": base64_encode(&sig), "timestamp": base64_encode(&foreign),
    })
    .to_string();
    let err = check_receipt(forged.as_bytes(), k.public(), &[], None).unwrap_err();
    assert!(matches!(err, ReceiptError::Timestamp(_)), "{err}");
    assert!(err.is_verdict());
}

/// A log of `entries`, its checkpoint signed by `log` and the receipt files of each entry.
fn log_of(entries: &[SignedReceipt], log: &LogSigningKey) -> Vec<String> {
    let mut memo = HashMemo::new();
    let leaves: Vec<_> = entries.iter().map(|e| leaf_hash(e.entry())).collect();
    append(&mut memo, 0, &leaves).unwrap();
    let n = entries.len() as u64;
    let cp = SignedCheckpoint::sign(log.name(), n, root(&memo, n).unwrap(), log).unwrap();
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let proof = prove_inclusion(&memo, n, i as u64).unwrap();
            e.logged(i as u64, &proof, &cp).unwrap()
        })
        .collect()
}

fn log_key(name: &str) -> LogSigningKey {
    LogSigningKey::generate(name, KeyRole::Log, &mut SeededEntropy::new(name.as_bytes())).unwrap()
}

fn logged_statement(n: u8) -> Statement {
    let mut s = statement();
    s.submission = format!("sub{n}");
    s.log = Some("log.example/receipts".into());
    s
}

#[test]
fn a_version_3_receipt_is_checked_in_its_log() {
    let k = key(1);
    let log = log_key("log.example/receipts");
    let entries: Vec<_> = (0..3).map(|n| signed(&logged_statement(n), &k)).collect();
    assert_eq!(entries[0].version(), 3);
    let files = log_of(&entries, &log);
    let pins = LogPins::log_only(log.verifier()).unwrap();
    let checked = check_receipt(files[1].as_bytes(), k.public(), &[], Some(&pins)).unwrap();
    assert_eq!(checked.statement.submission, "sub1");
    assert_eq!(
        checked.statement.log.as_deref(),
        Some("log.example/receipts")
    );
    let logged = checked.log.unwrap();
    assert_eq!((logged.index, logged.checkpoint.size), (1, 3));
    // Without the log's key, the receipt is not believed.
    let err = check_receipt(files[1].as_bytes(), k.public(), &[], None).unwrap_err();
    assert!(matches!(err, ReceiptError::LogNotPinned { .. }), "{err}");
    assert!(!err.is_verdict());
    // Another log's key: a negative verdict.
    let other = LogPins::log_only(log_key("other.example/log").verifier()).unwrap();
    let err = check_receipt(files[1].as_bytes(), k.public(), &[], Some(&other)).unwrap_err();
    assert!(err.is_verdict(), "{err}");
    // The entry read back from the log.
    let read = ReceiptEntry::read(entries[2].entry(), Some(k.public())).unwrap();
    assert_eq!(read.signed, Some(true));
    assert_eq!(
        ReceiptEntry::read(entries[2].entry(), Some(key(2).public()))
            .unwrap()
            .signed,
        Some(false)
    );
    assert!(EntryFilter::Set("Conf 2027".into()).matches(&read.statement));
    assert!(
        EntryFilter::document(&b"x"[..]).unwrap()
            != EntryFilter::Document(read.statement.document_sha256.clone())
    );
}

#[test]
fn log_evidence_that_does_not_verify_is_a_negative_verdict() {
    let k = key(1);
    let log = log_key("log.example/receipts");
    let pins = LogPins::log_only(log.verifier()).unwrap();
    let entries: Vec<_> = (0..4).map(|n| signed(&logged_statement(n), &k)).collect();
    let files = log_of(&entries, &log);
    let json: serde_json::Value = serde_json::from_str(&files[2]).unwrap();
    // Another entry's index or proof, or a shorter proof.
    for edit in [
        |j: &mut serde_json::Value| j["log"]["index"] = 3.into(),
        |j: &mut serde_json::Value| {
            j["log"]["proof"][0] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=".into()
        },
        |j: &mut serde_json::Value| {
            j["log"]["proof"].as_array_mut().unwrap().pop();
        },
    ] {
        let mut j = json.clone();
        edit(&mut j);
        let err =
            check_receipt(j.to_string().as_bytes(), k.public(), &[], Some(&pins)).unwrap_err();
        assert!(err.is_verdict(), "{err}");
    }
    // A receipt signed for one log, shown with another log's (valid) evidence.
    let other = log_key("other.example/log");
    let mut s = logged_statement(9);
    s.log = Some("log.example/receipts".into());
    let theirs = log_of(&[signed(&s, &k)], &other);
    let pins_other = LogPins::log_only(other.verifier()).unwrap();
    let err = check_receipt(theirs[0].as_bytes(), k.public(), &[], Some(&pins_other)).unwrap_err();
    assert!(matches!(err, ReceiptError::LogMismatch { .. }), "{err}");
    // The log evidence stripped from a version 3 receipt.
    let mut stripped = json.clone();
    stripped.as_object_mut().unwrap().remove("log");
    assert!(check_receipt(
        stripped.to_string().as_bytes(),
        k.public(),
        &[],
        Some(&pins)
    )
    .is_err());
    // A version 2 receipt (no log at all) when a log is pinned.
    let v2 = sign(&statement(), &k);
    let err = check_receipt(v2.as_bytes(), k.public(), &[], Some(&pins)).unwrap_err();
    assert!(matches!(err, ReceiptError::NotLogged), "{err}");
    assert!(err.is_verdict());
    // A version 3 receipt cannot be handed out without its evidence.
    assert!(entries[0].unlogged().is_err());
}

#[test]
fn the_verdict_is_valid_only_for_an_authentic_valid_receipt_of_the_document() {
    let k = key(1);
    let judge = |r: &str, key: &PublicKey, matches: Option<bool>| {
        ReceiptReport::judge(check_receipt(r.as_bytes(), key, &[], None), |_| matches).unwrap()
    };
    let r = sign(&statement(), &k);
    let ok = judge(&r, k.public(), Some(true));
    assert!(ok.is_valid() && ok.is_authentic() && ok.reason().is_none());
    let json = serde_json::to_value(&ok).unwrap();
    assert_eq!(json["valid"], true);
    assert_eq!(json["document_matches"], true);
    assert_eq!(json["statement"]["submission"], "0123abcd");
    assert_eq!(json["received"], "2027-01-15T08:00:01Z");
    assert!(json.get("reason").is_none(), "{json}");
    // No document given: valid, and the JSON says none was compared.
    let none = serde_json::to_value(judge(&r, k.public(), None)).unwrap();
    assert_eq!(none["valid"], true);
    assert!(none["document_matches"].is_null());

    let other = judge(&r, k.public(), Some(false));
    assert!(!other.is_valid() && other.is_authentic());
    assert!(other.reason().unwrap().contains("another document"));
    assert!(other.into_checked().is_ok());

    let mut s = statement();
    s.verdict = ReceiptVerdict::Invalid;
    s.credited_ms = 0;
    s.reason = "link 2 does not open".into();
    let invalid = judge(&sign(&s, &k), k.public(), Some(true));
    assert!(!invalid.is_valid() && invalid.is_authentic());
    assert!(invalid
        .reason()
        .unwrap()
        .ends_with(": link 2 does not open"));

    // Another institution's key: not authentic, a verdict, with the library's error kept.
    let forged = judge(&r, key(2).public(), Some(true));
    assert!(!forged.is_valid() && !forged.is_authentic());
    let json = serde_json::to_value(&forged).unwrap();
    assert_eq!(json.as_object().unwrap().len(), 3, "{json}");
    assert_eq!(json["authentic"], false);
    assert!(matches!(
        forged.into_checked(),
        Err(ReceiptError::BadSignature)
    ));

    // Input that is no receipt is an error, not a verdict.
    assert!(ReceiptReport::judge(check_receipt(b"{}", k.public(), &[], None), |_| None).is_err());
}

#[test]
fn the_json_states_the_verdict_as_the_statement_does() {
    for v in [ReceiptVerdict::Valid, ReceiptVerdict::Invalid] {
        assert_eq!(serde_json::to_value(v).unwrap(), v.as_str());
    }
}

//! Receipts on arbitrary input: the JSON envelope as given, and the statement parser reached by
//! signing the input as a statement with a fixed key (so the canonical-form checks behind the
//! signature are exercised, not only the refusal of bad signatures). Nothing may panic; a
//! version 1 statement that checks re-encodes to the signed text. The same signed text in a
//! version 2 envelope (with a token that is not the one it names) reaches the version 2
//! statement parser and must be refused without panicking.
#![no_main]

use std::sync::OnceLock;

use hourglass_arith::entropy::SeededEntropy;
use hourglass_rsa::padding::Pss;
use hourglass_rsa::{HashAlg, KeyGenOptions, PrivateKey, Variant};
use hourglass_receipt::check_receipt;
use libfuzzer_sys::fuzz_target;

fn key() -> &'static PrivateKey {
    static KEY: OnceLock<PrivateKey> = OnceLock::new();
    KEY.get_or_init(|| {
        KeyGenOptions::new(2048, Variant::Crt)
            .generate(&mut SeededEntropy::new(b"fuzz receipt key"))
            .unwrap()
    })
}

fuzz_target!(|data: &[u8]| {
    let key = key();
    let _ = check_receipt(data, key.public(), &[], None);
    if let Ok(text) = std::str::from_utf8(data) {
        let mut rng = SeededEntropy::new(data);
        let sig = Pss::new(HashAlg::Sha256)
            .sign(key, text.as_bytes(), &mut rng)
            .unwrap();
        let sig = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &sig);
        let receipt = serde_json::json!({
            "type": "hourglass-receipt",
            "version": 1,
            "statement": text,
            "signature": sig,
        })
        .to_string();
        if let Ok(checked) = check_receipt(receipt.as_bytes(), key.public(), &[], None) {
            assert_eq!(checked.statement.canonical(), text);
            assert!(
                checked.timestamp.is_none(),
                "a version 1 receipt with a token"
            );
        }
        let receipt = serde_json::json!({
            "type": "hourglass-receipt",
            "version": 2,
            "statement": text,
            "signature": sig,
            "timestamp": "MAA=",
        })
        .to_string();
        assert!(
            check_receipt(receipt.as_bytes(), key.public(), &[], None).is_err(),
            "a version 2 receipt checked with a token that is not the one it names"
        );
        // The signed text as a version 3 receipt with log evidence: never believed without
        // the log's key, and never with the fixed log's key unless its proof checks.
        let receipt = serde_json::json!({
            "type": "hourglass-receipt",
            "version": 3,
            "statement": text,
            "signature": sig,
            "timestamp": "MAA=",
            "log": {"index": 0, "proof": [], "checkpoint": text},
        })
        .to_string();
        assert!(check_receipt(receipt.as_bytes(), key.public(), &[], None).is_err());
        let (pins, _) = hourglass_fuzz::log_pins();
        assert!(check_receipt(receipt.as_bytes(), key.public(), &[], Some(pins)).is_err());
    }
});

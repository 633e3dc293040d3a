//! Shared oracles for the hourglass key-file fuzz targets.
//!
//! Every target feeds arbitrary bytes to a decoder. Decoding must never panic; whenever it
//! succeeds, the key must survive re-encoding in every [`KeyFormat`] and decoding again
//! unchanged, and a private key must actually work (`private_op(public_op(m)) == m`).

use hourglass_arith::entropy::SeededEntropy;
use hourglass_rsa::encoding::{
    decode_key, decode_private_key, decode_public_key, encode_private_key, encode_public_key,
    KeyFormat,
};
use hourglass_rsa::{Integer, PrivateKey, PublicKey};

/// Every output form.
pub const FORMATS: [KeyFormat; 5] = [
    KeyFormat::Pem,
    KeyFormat::Pkcs1,
    KeyFormat::Der,
    KeyFormat::Hex,
    KeyFormat::Json,
];

/// Same modulus, exponents, primes, CRT exponents and coefficient.
pub fn same_private(a: &PrivateKey, b: &PrivateKey) -> bool {
    a.public() == b.public() && a.secret_components() == b.secret_components()
}

/// Re-encodes a decoded private key in every form and checks that it decodes to the same key
/// (with the variant, in the forms that record it), that its public half round-trips too, and
/// that the private operation inverts the public one.
pub fn check_private(key: &PrivateKey) {
    for format in FORMATS {
        let bytes = encode_private_key(key, format)
            .unwrap_or_else(|e| panic!("{format:?}: cannot encode a decoded private key: {e}"));
        let back = decode_private_key(&bytes)
            .unwrap_or_else(|e| panic!("{format:?}: cannot decode a re-encoded private key: {e}"));
        assert!(
            same_private(key, &back),
            "{format:?}: private key changed on round trip"
        );
        if matches!(format, KeyFormat::Hex | KeyFormat::Json) {
            assert_eq!(key.variant(), back.variant(), "{format:?}: variant changed");
        }
        let public = decode_public_key(&bytes)
            .unwrap_or_else(|e| panic!("{format:?}: no public half from a private key file: {e}"));
        assert_eq!(&public, key.public(), "{format:?}: public half differs");
        // Re-encoding the re-decoded key gives the same bytes (the encoding is canonical).
        let again = encode_private_key(&back, format).expect("encode again");
        assert_eq!(*bytes, *again, "{format:?}: encoding is not canonical");
    }
    check_public(key.public());
    let n = key.public().n();
    let mut rng = SeededEntropy::new(b"hourglass fuzz private_op");
    for m in [Integer::from(2), Integer::from(n - 2u32)] {
        let c = key.public().public_op(&m).expect("public_op");
        let back = key
            .private_op(&c, &mut rng)
            .expect("private_op on a decoded key");
        assert_eq!(back, m, "private_op(public_op(m)) != m");
    }
}

/// Re-encodes a decoded public key in every form and checks that it decodes to itself, and that
/// `decode_private_key` refuses it.
pub fn check_public(key: &PublicKey) {
    for format in FORMATS {
        let bytes = encode_public_key(key, format)
            .unwrap_or_else(|e| panic!("{format:?}: cannot encode a decoded public key: {e}"));
        let back = decode_public_key(&bytes)
            .unwrap_or_else(|e| panic!("{format:?}: cannot decode a re-encoded public key: {e}"));
        assert_eq!(&back, key, "{format:?}: public key changed on round trip");
        assert!(
            decode_private_key(&bytes).is_err(),
            "{format:?}: public key decoded as private"
        );
        match decode_key(&bytes) {
            Ok(Err(p)) => assert_eq!(&p, key),
            other => panic!("{format:?}: decode_key gave {other:?} for a public key"),
        }
    }
}

/// Forces the error message to be built (a `Display` impl must not panic either).
pub fn touch_error(e: &hourglass_rsa::Error) {
    let s = e.to_string();
    assert!(!s.is_empty());
}

/// The raw key of the checkpoint target.
pub const CHECKPOINT_KEY: [u8; 32] = [0x5a; 32];

/// `body` followed by its HMAC-SHA-256 under [`CHECKPOINT_KEY`] (docs/FORMATS.md section
/// 12.7), computed here independently of `hourglass-arith`: lets the checkpoint target explore
/// the field parser behind the authentication check.
pub fn authenticate_checkpoint(body: &[u8]) -> Vec<u8> {
    use hmac::Mac;
    let mut mac = <hmac::Hmac<sha2::Sha256> as Mac>::new_from_slice(&CHECKPOINT_KEY)
        .expect("HMAC takes any key length");
    mac.update(body);
    let mut out = body.to_vec();
    out.extend_from_slice(&mac.finalize().into_bytes());
    out
}

//! Time-lock certificates: issue and load round trips, tampering, foreign CAs, validity
//! periods, ordinary certificates and malformed input.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime};

use hourglass_arith::entropy::SeededEntropy;
use hourglass_rsa::{KeyGenOptions, PrivateKey, Variant};
use hourglass_timelock::certificate::{
    decode_exponent, verify_puzzle_certificate, CaCertificate, CertRole, CertificateError,
    CertificateOptions, PuzzleCertificate, PuzzleCertificateError, ValidityPeriod,
};
use hourglass_timelock::{PuzzleHash, PuzzleKey, PuzzleKeyGen};

const DAY: Duration = Duration::from_secs(86_400);

fn rsa_key(seed: &str, bits: u32) -> PrivateKey {
    KeyGenOptions::new(bits, Variant::Crt)
        .generate(&mut SeededEntropy::new(seed.as_bytes()))
        .unwrap()
}

/// The institution's CA: a 2048-bit key and a ten-year certificate.
fn ca() -> &'static (PrivateKey, CaCertificate) {
    static CA: OnceLock<(PrivateKey, CaCertificate)> = OnceLock::new();
    CA.get_or_init(|| {
        let key = rsa_key("certificate tests: CA", 2048);
        let cert = CaCertificate::self_signed(
            &key,
            &CertificateOptions::days("Example University", 3650),
            &mut SeededEntropy::new(b"ca serial"),
        )
        .unwrap();
        (key, cert)
    })
}

/// A 1024-bit puzzle key with metadata that exercises the extension's encoding.
fn puzzle() -> &'static PuzzleKey {
    static KEY: OnceLock<PuzzleKey> = OnceLock::new();
    KEY.get_or_init(|| {
        PuzzleKeyGen::new(1024, 20_000)
            .rate(1_234_567.891, true)
            .hash(PuzzleHash::Sha3_256)
            .issuer("Universität Zürich, Conf \"2027\"")
            .generate(&mut SeededEntropy::new(b"certificate tests: puzzle"))
            .unwrap()
    })
}

fn issue_with(options: &CertificateOptions) -> PuzzleCertificate {
    let (ca_key, ca) = ca();
    PuzzleCertificate::issue(
        puzzle().public(),
        ca,
        ca_key,
        options,
        &mut SeededEntropy::new(b"issue"),
    )
    .unwrap()
}

fn issue() -> &'static PuzzleCertificate {
    static CERT: OnceLock<PuzzleCertificate> = OnceLock::new();
    CERT.get_or_init(|| issue_with(&CertificateOptions::days("Example University puzzles", 365)))
}

#[test]
fn issue_then_load_gives_the_same_key_from_pem_and_der() {
    let (_, ca) = ca();
    let cert = issue();
    let now = SystemTime::now();
    for bytes in [cert.to_pem().into_bytes(), cert.to_der().to_vec()] {
        let key = verify_puzzle_certificate(&bytes, ca, now).unwrap();
        assert_eq!(&key, puzzle().public());
        assert_eq!(key.fingerprint(), puzzle().public().fingerprint());
        assert_eq!(key.meta(), puzzle().public().meta());
    }
    // Text before the PEM block (as `openssl x509 -text` writes it) is skipped.
    let with_text = format!("Certificate:\n    Data: ...\n{}", cert.to_pem());
    assert!(verify_puzzle_certificate(with_text.as_bytes(), ca, now).is_ok());
    assert_eq!(
        cert.common_name().as_deref(),
        Some("Example University puzzles")
    );
    assert!(cert
        .subject()
        .contains(&puzzle().public().fingerprint_hex()));
    assert_eq!(cert.issuer(), ca.subject());
    assert_eq!(cert.serial_hex().len(), 32);
    // The CA certificate survives its own encodings too.
    let again = CaCertificate::from_bytes(ca.to_pem().as_bytes()).unwrap();
    assert_eq!(again.to_der(), ca.to_der());
    assert_eq!(again.common_name().as_deref(), Some("Example University"));
}

#[test]
fn the_exponent_in_the_key_is_z_times_2_65_plus_2t_plus_1() {
    let cert = issue();
    let spk = pkcs1_exponent(cert.subject_public_key());
    let (t, z) = decode_exponent(&spk).unwrap();
    assert_eq!(t, 20_000);
    assert_eq!(&z, puzzle().public().z());
}

/// The public exponent from DER `RSAPublicKey ::= SEQUENCE { n INTEGER, e INTEGER }`.
fn pkcs1_exponent(der: &[u8]) -> hourglass_arith::Integer {
    fn tlv(b: &[u8]) -> (usize, usize) {
        // (header length, content length)
        if b[1] < 0x80 {
            (2, b[1] as usize)
        } else {
            let k = (b[1] & 0x7f) as usize;
            let len = b[2..2 + k]
                .iter()
                .fold(0usize, |a, &x| (a << 8) | x as usize);
            (2 + k, len)
        }
    }
    let (h, _) = tlv(der);
    let rest = &der[h..];
    let (hn, ln) = tlv(rest);
    let rest = &rest[hn + ln..];
    let (he, le) = tlv(rest);
    hourglass_rsa::padding::os2ip(&rest[he..he + le])
}

#[test]
fn every_flipped_byte_is_refused() {
    let (_, ca) = ca();
    let der = issue().to_der().to_vec();
    let now = SystemTime::now();
    assert!(verify_puzzle_certificate(&der, ca, now).is_ok());
    let mut refused = 0;
    // Every position, two different flips each: a bit and a whole byte.
    for i in 0..der.len() {
        for mask in [0x01u8, 0xff] {
            let mut bad = der.clone();
            bad[i] ^= mask;
            match verify_puzzle_certificate(&bad, ca, now) {
                Err(_) => refused += 1,
                Ok(_) => panic!("flipping byte {i} with {mask:#04x} was accepted"),
            }
        }
    }
    assert_eq!(refused, 2 * der.len());
    // Truncated and extended files are refused too.
    assert!(verify_puzzle_certificate(&der[..der.len() - 1], ca, now).is_err());
    let mut longer = der.clone();
    longer.push(0);
    assert!(verify_puzzle_certificate(&longer, ca, now).is_err());
}

#[test]
fn certificates_from_another_ca_are_refused() {
    let now = SystemTime::now();
    let pem = issue().to_pem();
    let mut rng = SeededEntropy::new(b"other CAs");
    // Same name, another key: the signature does not verify.
    let impostor_key = rsa_key("certificate tests: impostor", 1024);
    let impostor = CaCertificate::self_signed(
        &impostor_key,
        &CertificateOptions::days("Example University", 30),
        &mut rng,
    )
    .unwrap();
    assert!(matches!(
        verify_puzzle_certificate(pem.as_bytes(), &impostor, now),
        Err(PuzzleCertificateError::Certificate(
            CertificateError::BadSignature { .. }
        ))
    ));
    // Another name: the issuer does not match.
    let other = CaCertificate::self_signed(
        &impostor_key,
        &CertificateOptions::days("Other Institute", 30),
        &mut rng,
    )
    .unwrap();
    let err = verify_puzzle_certificate(pem.as_bytes(), &other, now).unwrap_err();
    assert!(
        matches!(
            err,
            PuzzleCertificateError::Certificate(CertificateError::WrongIssuer { .. })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("Other Institute"), "{err}");
    // Issuing with a CA key that is not the certificate's is refused.
    assert!(matches!(
        PuzzleCertificate::issue(
            puzzle().public(),
            &ca().1,
            &impostor_key,
            &CertificateOptions::days("x", 1),
            &mut rng
        ),
        Err(PuzzleCertificateError::Certificate(
            CertificateError::KeyMismatch
        ))
    ));
}

#[test]
fn validity_periods_are_enforced() {
    let (_, ca) = ca();
    let now = SystemTime::now();
    let past = CertificateOptions {
        common_name: "old".into(),
        validity: ValidityPeriod {
            not_before: now - 10 * DAY,
            not_after: now - DAY,
        },
    };
    let expired = issue_with(&past);
    let err = verify_puzzle_certificate(expired.to_der(), ca, now).unwrap_err();
    assert!(
        matches!(
            err,
            PuzzleCertificateError::Certificate(CertificateError::Expired {
                what: CertRole::Certificate,
                ..
            })
        ),
        "{err}"
    );
    assert!(err.to_string().contains("expired"), "{err}");
    let future = CertificateOptions {
        common_name: "future".into(),
        validity: ValidityPeriod {
            not_before: now + DAY,
            not_after: now + 10 * DAY,
        },
    };
    let early = issue_with(&future);
    assert!(matches!(
        verify_puzzle_certificate(early.to_der(), ca, now),
        Err(PuzzleCertificateError::Certificate(
            CertificateError::NotYetValid { .. }
        ))
    ));
    // The same certificate is fine inside its window, and expired after it.
    assert!(early.verify(ca, now + 2 * DAY).is_ok());
    assert!(matches!(
        issue().verify(ca, now + 400 * DAY),
        Err(PuzzleCertificateError::Certificate(
            CertificateError::Expired { .. }
        ))
    ));
    // `days = 0` expires at once (after the current second).
    let zero = issue_with(&CertificateOptions::days("zero", 0));
    assert!(matches!(
        zero.verify(ca, now + Duration::from_secs(2)),
        Err(PuzzleCertificateError::Certificate(
            CertificateError::Expired { .. }
        ))
    ));
    // An expired CA neither issues nor vouches.
    let key = rsa_key("certificate tests: expired CA", 1024);
    let mut rng = SeededEntropy::new(b"expired CA");
    let old_ca = CaCertificate::self_signed(&key, &past, &mut rng).unwrap();
    assert!(matches!(
        PuzzleCertificate::issue(
            puzzle().public(),
            &old_ca,
            &key,
            &CertificateOptions::days("x", 1),
            &mut rng
        ),
        Err(PuzzleCertificateError::Certificate(
            CertificateError::Expired {
                what: CertRole::CaCertificate,
                ..
            }
        ))
    ));
}

#[test]
fn ordinary_and_malformed_certificates_are_refused() {
    let (_, ca) = ca();
    let now = SystemTime::now();
    // The CA's own certificate is signed by the CA, but it is no puzzle key.
    assert!(matches!(
        verify_puzzle_certificate(ca.to_der(), ca, now),
        Err(PuzzleCertificateError::NotTimeLock(_))
    ));
    // A puzzle certificate is not a CA.
    assert!(matches!(
        CaCertificate::from_bytes(issue().to_der()),
        Err(CertificateError::NotCa(_))
    ));
    for bad in [
        &b""[..],
        b"   \n",
        b"garbage",
        b"{\"type\": \"hourglass-puzzle-public-key\"}",
        b"-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n",
        b"-----BEGIN PUBLIC KEY-----\nMA==\n-----END PUBLIC KEY-----\n",
        b"\x30\x03\x02\x01\x01",
    ] {
        assert!(matches!(
            verify_puzzle_certificate(bad, ca, now),
            Err(PuzzleCertificateError::Certificate(
                CertificateError::Malformed(_)
            ))
        ));
        assert!(CaCertificate::from_bytes(bad).is_err());
    }
}

#[test]
fn bad_options_are_refused() {
    let (ca_key, ca) = ca();
    let mut rng = SeededEntropy::new(b"options");
    for cn in ["", &"x".repeat(65), "tab\there"] {
        assert!(matches!(
            PuzzleCertificate::issue(
                puzzle().public(),
                ca,
                ca_key,
                &CertificateOptions::days(cn, 1),
                &mut rng
            ),
            Err(PuzzleCertificateError::Certificate(
                CertificateError::InvalidOptions(_)
            ))
        ));
    }
    let now = SystemTime::now();
    let backwards = CertificateOptions {
        common_name: "x".into(),
        validity: ValidityPeriod {
            not_before: now,
            not_after: now - DAY,
        },
    };
    assert!(matches!(
        PuzzleCertificate::issue(puzzle().public(), ca, ca_key, &backwards, &mut rng),
        Err(PuzzleCertificateError::Certificate(
            CertificateError::InvalidOptions(_)
        ))
    ));
}

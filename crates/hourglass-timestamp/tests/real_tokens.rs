//! Real tokens from six public authorities (tests/data/tsa: sigstore production and staging on
//! ECDSA P-384, FreeTSA, DigiCert, GlobalSign and Microsoft on RSA; each directory's
//! `source.txt` says where it comes from and how OpenSSL verifies it). Every one verifies, as a
//! bare token and as a TimeStampResp, and states what OpenSSL reads in it; every one is refused,
//! as a negative verdict, with other data, with one byte of its signature changed, and under
//! another authority's anchor.

use std::path::{Path, PathBuf};

use cms::content_info::ContentInfo;
use cms::signed_data::SignedData;
use der::Decode;
use hourglass_timestamp::{
    anchors_from_pem, token_of, verify_token, verify_token_for, Covered, TimestampError, TsaAnchor,
    VerifiedToken,
};
use hourglass_x509::pem_certificates;

/// One authority's token and what it must verify to.
struct Case {
    dir: &'static str,
    /// `genTime` in RFC 3339, with the token's fraction.
    gen_time: &'static str,
    /// The accuracy in seconds, if stated.
    accuracy: Option<f64>,
    /// The latest time the token proves.
    latest: &'static str,
    /// The imprint's hash.
    hash: &'static str,
    /// The start of the signature's description.
    signature: &'static str,
    /// The path's length, signer to anchor.
    path: usize,
}

const CASES: [Case; 6] = [
    Case {
        dir: "sigstore-prod-2026-ecdsa-p384-nocert",
        gen_time: "2026-01-15T22:49:26Z",
        accuracy: Some(1.0),
        latest: "2026-01-15T22:49:27Z",
        hash: "SHA-256",
        signature: "ecdsa-with-SHA256 (ECDSA P-384)",
        path: 2,
    },
    Case {
        dir: "sigstage-2025-ecdsa-p384-sha384-embedded",
        gen_time: "2025-05-09T11:58:55Z",
        accuracy: Some(1.0),
        latest: "2025-05-09T11:58:56Z",
        hash: "SHA-384",
        signature: "ecdsa-with-SHA256 (ECDSA P-384)",
        path: 2,
    },
    Case {
        dir: "freetsa-2025-rsa4096-embedded",
        gen_time: "2025-08-06T19:38:49Z",
        accuracy: None,
        latest: "2025-08-06T19:38:50Z",
        hash: "SHA-256",
        signature: "sha512WithRSAEncryption (RSA-4096)",
        path: 2,
    },
    Case {
        dir: "digicert-2025-rsa4096-sha512",
        gen_time: "2025-03-24T11:17:47Z",
        accuracy: None,
        latest: "2025-03-24T11:17:48Z",
        hash: "SHA-512",
        signature: "sha512WithRSAEncryption (RSA-4096)",
        path: 3,
    },
    Case {
        dir: "globalsign-advanced-g4-2021-4certs-crosscert",
        gen_time: "2021-09-17T14:09:10Z",
        accuracy: Some(1.0),
        latest: "2021-09-17T14:09:11Z",
        hash: "SHA-256",
        signature: "sha256WithRSAEncryption (RSA-",
        path: 4,
    },
    Case {
        dir: "microsoft-2024-rsa4096-fractional-gentime",
        gen_time: "2024-06-21T07:12:05.884Z",
        accuracy: Some(0.5),
        latest: "2024-06-21T07:12:07Z",
        hash: "SHA-256",
        signature: "sha256WithRSAEncryption (RSA-4096)",
        path: 2,
    },
];

fn dir(case: &Case) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tsa")
        .join(case.dir)
}

fn read(case: &Case, file: &str) -> Option<Vec<u8>> {
    std::fs::read(dir(case).join(file)).ok()
}

fn anchors(case: &Case) -> Vec<TsaAnchor> {
    anchors_from_pem(&read(case, "ca.pem").unwrap()).unwrap()
}

fn untrusted(case: &Case) -> Vec<Vec<u8>> {
    read(case, "chain.pem").map_or_else(Vec::new, |p| pem_certificates(&p).unwrap())
}

/// The imprint's hash name and digest (imprint.txt: `sha256 <hex>`).
fn imprint(case: &Case) -> Vec<u8> {
    let text = String::from_utf8(read(case, "imprint.txt").unwrap()).unwrap();
    hex::decode(text.split_whitespace().nth(1).unwrap()).unwrap()
}

/// What the token must cover: its data where known, else its imprint.
fn check(
    case: &Case,
    token: &[u8],
    anchors: &[TsaAnchor],
) -> Result<VerifiedToken, TimestampError> {
    match read(case, "data.bin") {
        Some(data) => verify_token_for(token, Covered::Data(&data), &untrusted(case), anchors),
        None => verify_token_for(
            token,
            Covered::Digest(&imprint(case)),
            &untrusted(case),
            anchors,
        ),
    }
}

/// The token with one byte of its signature changed (the last of the signature value, so the
/// signature still parses).
fn tampered(token: &[u8]) -> Vec<u8> {
    let ci = ContentInfo::from_der(token).unwrap();
    let sd: SignedData = ci.content.decode_as().unwrap();
    let sig = sd.signer_infos.0.as_slice()[0]
        .signature
        .as_bytes()
        .to_vec();
    let at = token
        .windows(sig.len())
        .position(|w| w == sig.as_slice())
        .expect("the signature's bytes are in the token");
    let mut out = token.to_vec();
    out[at + sig.len() - 1] ^= 0x01;
    out
}

#[test]
fn every_real_token_verifies_as_token_and_as_reply() {
    for case in &CASES {
        let token = read(case, "token.der").unwrap();
        let mut forms = vec![("token", token.clone())];
        if let Some(reply) = read(case, "reply.tsr") {
            // The reply's token is the bare token, byte for byte.
            assert_eq!(token_of(&reply).unwrap(), token, "{}", case.dir);
            forms.push(("reply", reply));
        }
        for (form, bytes) in forms {
            let v = check(case, &bytes, &anchors(case))
                .unwrap_or_else(|e| panic!("{} ({form}): {e}", case.dir));
            let json = serde_json::to_value(&v).unwrap();
            assert_eq!(json["gen_time"], case.gen_time, "{}", case.dir);
            assert_eq!(json["latest"], case.latest, "{}", case.dir);
            assert_eq!(json["accuracy"].as_f64(), case.accuracy, "{}", case.dir);
            assert_eq!(json["hash"], case.hash, "{}", case.dir);
            assert!(
                v.signature().starts_with(case.signature),
                "{}: {}",
                case.dir,
                v.signature()
            );
            assert_eq!(v.path().len(), case.path, "{}: {:?}", case.dir, v.path());
            assert_eq!(v.path()[0], v.tsa());
            assert_eq!(v.path().last().map(String::as_str), Some(v.anchor()));
            for key in ["tsa", "serial", "policy", "signature", "path", "imprint"] {
                assert!(!json[key].is_null(), "{}: {key}", case.dir);
            }
        }
    }
}

#[test]
fn every_real_token_is_refused_for_other_data() {
    for case in &CASES {
        let token = read(case, "token.der").unwrap();
        let other = match read(case, "data.bin") {
            Some(mut data) => {
                data.push(b'!');
                verify_token_for(
                    &token,
                    Covered::Data(&data),
                    &untrusted(case),
                    &anchors(case),
                )
            }
            None => {
                let mut digest = imprint(case);
                digest[0] ^= 1;
                verify_token_for(
                    &token,
                    Covered::Digest(&digest),
                    &untrusted(case),
                    &anchors(case),
                )
            }
        };
        match other {
            Err(e @ TimestampError::ImprintMismatch { .. }) => assert!(e.is_verdict()),
            other => panic!("{}: {other:?}", case.dir),
        }
    }
}

#[test]
fn every_real_token_is_refused_with_one_byte_of_its_signature_changed() {
    for case in &CASES {
        let token = tampered(&read(case, "token.der").unwrap());
        match check(case, &token, &anchors(case)) {
            Err(e @ TimestampError::BadSignature { .. }) => assert!(e.is_verdict(), "{e}"),
            other => panic!("{}: {other:?}", case.dir),
        }
    }
}

#[test]
fn every_real_token_is_refused_under_another_authoritys_anchor() {
    for (i, case) in CASES.iter().enumerate() {
        let token = read(case, "token.der").unwrap();
        let other = &CASES[(i + 1) % CASES.len()];
        match check(case, &token, &anchors(other)) {
            Err(e @ TimestampError::Path { .. }) => assert!(e.is_verdict(), "{e}"),
            other => panic!("{}: {other:?}", case.dir),
        }
    }
}

#[test]
fn a_token_without_its_signer_certificate_asks_for_it() {
    // sigstore's production token carries no certificate: without chain.pem there is nothing to
    // check the signature with, which is an error (exit 2), not a verdict on the token.
    let case = &CASES[0];
    let token = read(case, "token.der").unwrap();
    let e = verify_token(&token, &[], &anchors(case)).unwrap_err();
    assert!(matches!(e, TimestampError::NoSignerCertificate), "{e}");
    assert!(!e.is_verdict());
    assert!(e.to_string().contains("--untrusted"), "{e}");
}

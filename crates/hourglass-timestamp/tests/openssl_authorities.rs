//! Authorities made by OpenSSL (hourglass-testkit's `openssl_pki`), judged by us and by
//! `openssl ts -verify` side by side: every key type under every kind of root, paths of three,
//! accuracy, and the paths OpenSSL refuses (a `pathlen:0` root above CAs, an issuer that is not
//! a CA, a certificate not valid at genTime), each refused by us exactly where OpenSSL refuses
//! it; an intermediate pinned as the anchor (`-partial_chain`); RSA-PSS tokens (`openssl cms
//! -sign`, which `openssl cms -verify` accepts); and Ed25519 tokens (RFC 8419), signed by
//! `openssl pkeyutl` over signed attributes built here, since OpenSSL 3.0 makes none itself.

use cms::cert::{CertificateChoices, IssuerAndSerialNumber};
use cms::content_info::{CmsVersion, ContentInfo};
use cms::signed_data::{
    CertificateSet, EncapsulatedContentInfo, SignedData, SignerIdentifier, SignerInfo, SignerInfos,
};
use der::asn1::{Any, ObjectIdentifier, OctetString, SetOfVec};
use der::{Decode, Encode};
use hourglass_testkit::openssl_pki::{
    ts_query, BasicConstraints, CertSpec, CmsOptions, Digest, HierarchySpec, Imprint, KeyKind, Pki,
    TsVerify, Tsa as OpenSslTsa, TsaOptions,
};
use hourglass_timestamp::path::PathProblem;
use hourglass_timestamp::{
    anchors_from_pem, verify_token_for, AnchorError, Covered, TimestampError, TsaAnchor,
    VerifiedToken,
};
use hourglass_x509::pem_certificates;
use sha2::Digest as _;
use spki::AlgorithmIdentifierOwned;
use x509_cert::attr::Attribute;

const DATA: &[u8] = b"a file timestamped at an OpenSSL authority";

fn anchors(pki: &Pki) -> Vec<TsaAnchor> {
    anchors_from_pem(&std::fs::read(pki.ca_pem()).unwrap()).unwrap()
}

fn untrusted(pki: &Pki) -> Vec<Vec<u8>> {
    std::fs::read(pki.chain_pem())
        .ok()
        .filter(|b| !b.is_empty())
        .map_or_else(Vec::new, |b| pem_certificates(&b).unwrap())
}

/// OpenSSL's TSA of `pki` with `options`: its reply for [`DATA`] (SHA-256 imprint, certReq).
fn openssl_reply(pki: &Pki, options: &TsaOptions) -> Vec<u8> {
    let tsa = OpenSslTsa::new(pki, options).unwrap();
    tsa.reply(&ts_query(DATA, Digest::Sha256, true).unwrap())
        .unwrap()
}

fn ours(pki: &Pki, token: &[u8]) -> Result<VerifiedToken, TimestampError> {
    verify_token_for(token, Covered::Data(DATA), &untrusted(pki), &anchors(pki))
}

fn theirs(pki: &Pki, reply: &[u8]) -> (bool, String) {
    pki.ts_verify().reply(reply, Imprint::Data(DATA))
}

/// Both accept the reply of OpenSSL's TSA of `spec`; returns ours.
fn both_accept(spec: &HierarchySpec, options: &TsaOptions) -> VerifiedToken {
    let pki = Pki::build(spec).unwrap();
    let reply = openssl_reply(&pki, options);
    let (ok, out) = theirs(&pki, &reply);
    assert!(ok, "OpenSSL refuses what we test: {out}");
    ours(&pki, &reply).unwrap_or_else(|e| panic!("OpenSSL accepts, we refuse: {e}"))
}

/// Both refuse; returns our error (a negative verdict) and OpenSSL's output.
fn both_refuse(spec: &HierarchySpec, options: &TsaOptions) -> (TimestampError, String) {
    let pki = Pki::build(spec).unwrap();
    let reply = openssl_reply(&pki, options);
    let (ok, out) = theirs(&pki, &reply);
    assert!(!ok, "OpenSSL accepts: {out}");
    let e = ours(&pki, &reply).expect_err("OpenSSL refuses, we accept");
    assert!(e.is_verdict(), "{e}");
    (e, out)
}

fn spec(root: KeyKind, tsa: KeyKind) -> HierarchySpec {
    HierarchySpec::new(CertSpec::root(root), CertSpec::tsa(tsa))
}

#[test]
fn ecdsa_and_rsa_signers_under_rsa_and_ec_roots() {
    use KeyKind::*;
    for (root, tsa, digest, signature) in [
        (
            Rsa(2048),
            P256,
            Digest::Sha256,
            "ecdsa-with-SHA256 (ECDSA P-256)",
        ),
        (
            Rsa(2048),
            P384,
            Digest::Sha384,
            "ecdsa-with-SHA384 (ECDSA P-384)",
        ),
        (
            P384,
            P256,
            Digest::Sha256,
            "ecdsa-with-SHA256 (ECDSA P-256)",
        ),
        (
            P256,
            P384,
            Digest::Sha256,
            "ecdsa-with-SHA256 (ECDSA P-384)",
        ),
        (
            P384,
            Rsa(3072),
            Digest::Sha384,
            "sha384WithRSAEncryption (RSA-3072)",
        ),
        // Every hash beside every curve: P-256 with SHA-512, P-521 with SHA-256 and SHA-512.
        (
            P256,
            P256,
            Digest::Sha512,
            "ecdsa-with-SHA512 (ECDSA P-256)",
        ),
        (
            P521,
            P521,
            Digest::Sha256,
            "ecdsa-with-SHA256 (ECDSA P-521)",
        ),
        (
            Rsa(2048),
            P521,
            Digest::Sha512,
            "ecdsa-with-SHA512 (ECDSA P-521)",
        ),
        // An Ed25519 root above an ECDSA authority.
        (
            Ed25519,
            P384,
            Digest::Sha384,
            "ecdsa-with-SHA384 (ECDSA P-384)",
        ),
    ] {
        let options = TsaOptions {
            signer_digest: digest,
            ..TsaOptions::default()
        };
        let v = both_accept(&spec(root, tsa), &options);
        assert_eq!(v.signature(), signature, "{root:?} above {tsa:?}");
        assert_eq!(v.path(), ["CN=OpenSSL Test TSA", "CN=OpenSSL Test Root CA"]);
    }
}

#[test]
fn a_path_of_three_through_an_intermediate() {
    let s = spec(KeyKind::P384, KeyKind::P384)
        .with_intermediate(CertSpec::intermediate(KeyKind::Rsa(3072)));
    let v = both_accept(&s, &TsaOptions::default());
    assert_eq!(v.path().len(), 3, "{:?}", v.path());
    // Without the intermediate (neither in the token nor given), no path: both refuse.
    let pki = Pki::build(&s).unwrap();
    let options = TsaOptions {
        include_chain: false,
        ..TsaOptions::default()
    };
    let reply = openssl_reply(&pki, &options);
    let (ok, out) = TsVerify::new(pki.ca_pem()).reply(&reply, Imprint::Data(DATA));
    assert!(
        !ok && out.contains("unable to get local issuer certificate"),
        "{out}"
    );
    match verify_token_for(&reply, Covered::Data(DATA), &[], &anchors(&pki)) {
        Err(TimestampError::Path {
            problem: PathProblem::NoPath { .. },
            ..
        }) => {}
        other => panic!("{other:?}"),
    }
    // Given as untrusted, both accept.
    assert!(theirs(&pki, &reply).0);
    ours(&pki, &reply).unwrap();
}

#[test]
fn an_accuracy_of_600_seconds_proves_gen_time_plus_600() {
    let options = TsaOptions {
        accuracy: Some("secs:600".into()),
        ..TsaOptions::default()
    };
    let v = both_accept(&spec(KeyKind::Rsa(2048), KeyKind::P384), &options);
    let i = v.info();
    assert_eq!(i.accuracy_micros(), Some(600_000_000));
    let gen = i
        .gen_time()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert_eq!(i.latest_unix(), gen + 600);
    let json = serde_json::to_value(&v).unwrap();
    assert_eq!(json["accuracy"], 600.0);
    // Without an accuracy: the end of the genTime second.
    let options = TsaOptions {
        accuracy: None,
        ..TsaOptions::default()
    };
    let v = both_accept(&spec(KeyKind::Rsa(2048), KeyKind::P256), &options);
    assert_eq!(v.info().accuracy_micros(), None);
    let gen = v
        .info()
        .gen_time()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert_eq!(v.info().latest_unix(), gen + 1);
    assert!(serde_json::to_value(&v).unwrap()["accuracy"].is_null());
}

#[test]
fn path_lengths_are_refused_where_openssl_refuses_them() {
    let root0 =
        || CertSpec::root(KeyKind::Rsa(2048)).basic_constraints(BasicConstraints::Ca(Some(0)));
    let root1 =
        || CertSpec::root(KeyKind::Rsa(2048)).basic_constraints(BasicConstraints::Ca(Some(1)));
    let ca = || CertSpec::intermediate(KeyKind::P256);
    let tsa = || CertSpec::tsa(KeyKind::P256);
    // Refused: a pathlen:0 root above two CAs, or one; a pathlen:1 root above two.
    for s in [
        HierarchySpec::new(root0(), tsa())
            .with_intermediate(ca())
            .with_intermediate(ca()),
        HierarchySpec::new(root0(), tsa()).with_intermediate(ca()),
        HierarchySpec::new(root1(), tsa())
            .with_intermediate(ca())
            .with_intermediate(ca()),
    ] {
        let (e, out) = both_refuse(&s, &TsaOptions::default());
        assert!(out.contains("path length constraint exceeded"), "{out}");
        assert!(
            matches!(
                e,
                TimestampError::Path {
                    problem: PathProblem::PathLength { .. },
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            e.to_string().contains("path length constraint exceeded"),
            "{e}"
        );
    }
    // Accepted: a pathlen:0 root right above the authority, a pathlen:1 root above one CA.
    both_accept(&HierarchySpec::new(root0(), tsa()), &TsaOptions::default());
    both_accept(
        &HierarchySpec::new(root1(), tsa()).with_intermediate(ca()),
        &TsaOptions::default(),
    );
    // A pathlen:0 intermediate above another CA (webpki's own check).
    let ca0 = ca().basic_constraints(BasicConstraints::Ca(Some(0)));
    let (e, out) = both_refuse(
        &HierarchySpec::new(CertSpec::root(KeyKind::Rsa(2048)), tsa())
            .with_intermediate(ca0)
            .with_intermediate(ca()),
        &TsaOptions::default(),
    );
    assert!(out.contains("path length constraint exceeded"), "{out}");
    assert!(matches!(e, TimestampError::Path { .. }), "{e}");
}

#[test]
fn an_issuer_that_is_not_a_ca_is_refused_where_openssl_refuses_it() {
    for bc in [BasicConstraints::NotCa, BasicConstraints::Absent] {
        let issuer = CertSpec::intermediate(KeyKind::Rsa(2048)).basic_constraints(bc);
        let (e, out) = both_refuse(
            &spec(KeyKind::Rsa(2048), KeyKind::P256).with_intermediate(issuer),
            &TsaOptions::default(),
        );
        assert!(out.contains("invalid CA certificate"), "{bc:?}: {out}");
        assert!(
            matches!(
                e,
                TimestampError::Path {
                    problem: PathProblem::IssuerNotCa,
                    ..
                }
            ),
            "{bc:?}: {e}"
        );
    }
    // A root that is not a CA cannot be an anchor at all: an error before any token is read.
    let pki = Pki::build(&HierarchySpec::new(
        CertSpec::root(KeyKind::Rsa(2048)).basic_constraints(BasicConstraints::NotCa),
        CertSpec::tsa(KeyKind::P256),
    ))
    .unwrap();
    let reply = openssl_reply(&pki, &TsaOptions::default());
    let (ok, out) = theirs(&pki, &reply);
    assert!(!ok && out.contains("invalid CA certificate"), "{out}");
    assert!(matches!(
        anchors_from_pem(&std::fs::read(pki.ca_pem()).unwrap()),
        Err(AnchorError::NotCa { .. })
    ));
}

#[test]
fn a_certificate_not_valid_at_gen_time_is_refused() {
    let now = hourglass_testkit::openssl_pki::unix_now();
    for (nb, na, expired) in [
        (now - 10 * 86_400, now - 86_400, true),
        (now + 86_400, now + 10 * 86_400, false),
    ] {
        let tsa = CertSpec::tsa(KeyKind::P384).validity(nb, na);
        let (e, out) = both_refuse(
            &HierarchySpec::new(CertSpec::root(KeyKind::Rsa(2048)), tsa),
            &TsaOptions::default(),
        );
        let words = if expired {
            "certificate has expired"
        } else {
            "certificate is not yet valid"
        };
        assert!(out.contains(words), "{out}");
        match e {
            TimestampError::Path {
                problem: PathProblem::NotValidAt { expired: x, .. },
                ..
            } => assert_eq!(x, expired),
            other => panic!("{other}"),
        }
    }
    // Valid at genTime, expired since: we accept (RFC 3161 dates the token, not the reader's
    // clock); OpenSSL agrees at genTime (-attime) and refuses at a later time.
    let tsa = CertSpec::tsa(KeyKind::P384).validity(now - 86_400, now + 3600);
    let pki = Pki::build(&HierarchySpec::new(CertSpec::root(KeyKind::Rsa(2048)), tsa)).unwrap();
    let reply = openssl_reply(&pki, &TsaOptions::default());
    ours(&pki, &reply).unwrap();
    assert!(pki.ts_verify().at(now).reply(&reply, Imprint::Data(DATA)).0);
    let (ok, out) = pki
        .ts_verify()
        .at(now + 7200)
        .reply(&reply, Imprint::Data(DATA));
    assert!(!ok && out.contains("certificate has expired"), "{out}");
}

#[test]
fn an_intermediate_pinned_as_the_anchor_ends_the_path() {
    let s = spec(KeyKind::Rsa(2048), KeyKind::P256)
        .with_intermediate(CertSpec::intermediate(KeyKind::P384));
    let pki = Pki::build(&s).unwrap();
    let reply = openssl_reply(&pki, &TsaOptions::default());
    let ca = pki.intermediate_pem(0);
    let (ok, out) = TsVerify::new(&ca).reply(&reply, Imprint::Data(DATA));
    assert!(!ok, "{out}");
    let mut partial = TsVerify::new(&ca);
    partial.partial_chain = true;
    assert!(partial.reply(&reply, Imprint::Data(DATA)).0);
    let anchors = anchors_from_pem(&std::fs::read(&ca).unwrap()).unwrap();
    let v = verify_token_for(&reply, Covered::Data(DATA), &[], &anchors).unwrap();
    assert_eq!(v.path().len(), 2);
}

/// The TSTInfo of an OpenSSL token of `pki` (its own TSA's).
fn openssl_tst_info(pki: &Pki) -> Vec<u8> {
    let tsa = OpenSslTsa::new(pki, &TsaOptions::default()).unwrap();
    let token = tsa
        .token(&ts_query(DATA, Digest::Sha256, true).unwrap())
        .unwrap();
    hourglass_testkit::openssl_pki::tst_info(&token, &pki.tsa_pem()).unwrap()
}

#[test]
fn rsa_pss_tokens_verify_as_openssl_cms_verifies_them() {
    for (md, salt) in [
        (Digest::Sha256, "32"),
        (Digest::Sha384, "digest"),
        (Digest::Sha512, "max"),
    ] {
        let pki = Pki::build(&HierarchySpec::rsa()).unwrap();
        let tst = openssl_tst_info(&pki);
        let options = CmsOptions {
            pss_saltlen: Some(salt.into()),
            ..CmsOptions::pss(md)
        };
        let token = pki.cms_token(&tst, &options).unwrap();
        let (ok, out) = pki.cms_verify().verify(&token);
        assert!(ok, "{md:?}: {out}");
        let v = ours(&pki, &token).unwrap_or_else(|e| panic!("{md:?}: {e}"));
        assert!(v.signature().starts_with("RSASSA-PSS"), "{}", v.signature());
        // One byte of the signature changed: both refuse.
        let bad = flip_signature(&token);
        assert!(!pki.cms_verify().verify(&bad).0);
        assert!(matches!(
            ours(&pki, &bad),
            Err(TimestampError::BadSignature { .. })
        ));
    }
}

/// The token with the last byte of its SignerInfo's signature changed.
fn flip_signature(token: &[u8]) -> Vec<u8> {
    let ci = ContentInfo::from_der(token).unwrap();
    let sd: SignedData = ci.content.decode_as().unwrap();
    let sig = sd.signer_infos.0.as_slice()[0]
        .signature
        .as_bytes()
        .to_vec();
    let at = token
        .windows(sig.len())
        .position(|w| w == sig.as_slice())
        .unwrap();
    let mut out = token.to_vec();
    out[at + sig.len() - 1] ^= 1;
    out
}

const ID_SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");
const ID_ED25519: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.101.112");

/// An Ed25519 token (RFC 8419) over `tst`: signed attributes built here (content type,
/// SHA-512 message digest, ESSCertIDv2 of the authority's certificate), signed by `openssl
/// pkeyutl -sign -rawin` with the authority's key.
fn ed25519_token(pki: &Pki, tst: &[u8]) -> Vec<u8> {
    let cert_der = pki.der(&pki.tsa_pem()).unwrap();
    let cert = x509_cert::Certificate::from_der(&cert_der).unwrap();
    let attribute = |oid: &str, value: Any| Attribute {
        oid: ObjectIdentifier::new_unwrap(oid),
        values: SetOfVec::try_from(vec![value]).unwrap(),
    };
    // SigningCertificateV2 { certs: [ESSCertIDv2 { certHash }] } (SHA-256, the DEFAULT).
    let hash = sha2::Sha256::digest(&cert_der);
    let mut ess = vec![0x30, 0x26, 0x30, 0x24, 0x30, 0x22, 0x04, 0x20];
    ess.extend_from_slice(&hash);
    let attrs = SetOfVec::try_from(vec![
        attribute(
            "1.2.840.113549.1.9.3",
            Any::encode_from(&ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.1.4")).unwrap(),
        ),
        attribute(
            "1.2.840.113549.1.9.4",
            Any::encode_from(&OctetString::new(sha2::Sha512::digest(tst).to_vec()).unwrap())
                .unwrap(),
        ),
        attribute("1.2.840.113549.1.9.16.2.47", Any::from_der(&ess).unwrap()),
    ])
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("attrs.der"), attrs.to_der().unwrap()).unwrap();
    let out = std::process::Command::new("openssl")
        .args(["pkeyutl", "-sign", "-rawin", "-inkey"])
        .arg(pki.tsa_key())
        .args(["-in", "attrs.der", "-out", "sig.bin"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let signature = std::fs::read(dir.path().join("sig.bin")).unwrap();
    assert_eq!(signature.len(), 64);
    let alg = |oid| AlgorithmIdentifierOwned {
        oid,
        parameters: None,
    };
    let signer = SignerInfo {
        version: CmsVersion::V1,
        sid: SignerIdentifier::IssuerAndSerialNumber(IssuerAndSerialNumber {
            issuer: cert.tbs_certificate.issuer.clone(),
            serial_number: cert.tbs_certificate.serial_number.clone(),
        }),
        digest_alg: alg(ID_SHA512),
        signed_attrs: Some(attrs),
        signature_algorithm: alg(ID_ED25519),
        signature: OctetString::new(signature).unwrap(),
        unsigned_attrs: None,
    };
    let sd = SignedData {
        version: CmsVersion::V3,
        digest_algorithms: SetOfVec::try_from(vec![alg(ID_SHA512)]).unwrap(),
        encap_content_info: EncapsulatedContentInfo {
            econtent_type: ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.1.4"),
            econtent: Some(Any::encode_from(&OctetString::new(tst.to_vec()).unwrap()).unwrap()),
        },
        certificates: Some(CertificateSet(
            SetOfVec::try_from(vec![CertificateChoices::Certificate(cert)]).unwrap(),
        )),
        crls: None,
        signer_infos: SignerInfos(SetOfVec::try_from(vec![signer]).unwrap()),
    };
    ContentInfo {
        content_type: ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2"),
        content: Any::encode_from(&sd).unwrap(),
    }
    .to_der()
    .unwrap()
}

#[test]
fn ed25519_tokens_verify_and_refuse_tampering() {
    // The TSTInfo comes from an OpenSSL RSA authority's token; the Ed25519 authority (certified
    // by an RSA root, the same name) signs it.
    let rsa = Pki::build(&HierarchySpec::rsa()).unwrap();
    let tst = openssl_tst_info(&rsa);
    let pki = Pki::build(&spec(KeyKind::Rsa(2048), KeyKind::Ed25519)).unwrap();
    let token = ed25519_token(&pki, &tst);
    let v = ours(&pki, &token).unwrap();
    assert_eq!(v.signature(), "Ed25519 (Ed25519)");
    assert!(matches!(
        ours(&pki, &flip_signature(&token)),
        Err(TimestampError::BadSignature { .. })
    ));
    // The same token under another Ed25519 authority's root: no path.
    let other = Pki::build(&spec(KeyKind::P256, KeyKind::Ed25519)).unwrap();
    assert!(matches!(
        verify_token_for(&token, Covered::Data(DATA), &[], &anchors(&other)),
        Err(TimestampError::Path { .. })
    ));
}

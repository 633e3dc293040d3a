//! Attacks on the token verifier ([`verify_token`], [`verify_token_for`]), each a test.
//!
//! Every token here is forged byte by byte (a small DER writer below), so that each attack can
//! put exactly what it wants where it wants: signed attributes out of order, twice, with two
//! values, a second signer, certificates with the same issuer and serial, algorithm
//! identifiers that name another key, PSS parameters, non-canonical ECDSA signatures, paths
//! through CAs restricted to other purposes, pathLen, name constraints, validity at `genTime`,
//! accuracy and fractional `genTime`, and inputs as large as a token may be.
//!
//! An attack the verifier refuses is a regression test asserting the refusal and whether it is
//! a negative verdict (`is_verdict()`, exit 1) or an error (exit 2). An attack that succeeds
//! (a token accepted that must not be, a date earlier than proven, a panic, seconds of work for
//! one token) is a test that fails today, marked `#[ignore = "ATTACK SUCCEEDS: ..."]`; run
//! them with `cargo test -p hourglass-timestamp --test attacks -- --ignored` (about 45 s).
//! Each asserts only that the attack stops working (any refusal, or the time bound), so that
//! any fix makes it pass. Those succeeding when written:
//! - PEM smuggling: `hourglass_x509::Certificate::from_bytes` finds `-----BEGIN ` inside a DER
//!   certificate and reads the embedded PEM instead, so the TSA profile and the key the
//!   signature is checked with come from a certificate nobody issued, while webpki validates
//!   the real one (a forged token accepted); on the path, the anchor's pathLen and keyCertSign
//!   are judged on the embedded certificate.
//! - An anchor whose EKU excludes timeStamping vouches for TSAs (intermediates may not).
//! - `latest()` saturates at 9999-12-31T23:59:59Z, before a genTime in that last second.
//! - Work: `der`'s insertion sort of SET OF (digestAlgorithms, an RDN: 15-36 s for 256 KiB),
//!   webpki's path search over many certificates (8 s), an RSA key with a 32,768-bit
//!   exponent checked before the path (3.7 s for 13 KiB), the quadratic
//!   `without_duplicate_certificates` (2 s).

use std::str::FromStr;
use std::sync::OnceLock;
use std::time::{Duration, UNIX_EPOCH};

use der::asn1::ObjectIdentifier;
use der::{Decode, Encode};
use ecdsa::signature::hazmat::PrehashSigner;
use hourglass_arith::entropy::SeededEntropy;
use hourglass_rsa::padding::{Pkcs1v15Sign, Pss};
use hourglass_rsa::{HashAlg, KeyGenOptions, PrivateKey, Variant};
use hourglass_timestamp::path::PathProblem;
use hourglass_timestamp::signature::SignatureProblem;
use hourglass_timestamp::{
    verify_token, verify_token_for, AnchorCertificate, AnchorError, Covered, NotTsaReason,
    TimestampError, TokenInfo, TsaAnchor, VerifiedToken,
};
use sha1::Sha1;
use sha2::{Digest as _, Sha256};

// ------------------------------------------------------------------------------------------
// A DER writer: every byte of a forged token is chosen here.
// ------------------------------------------------------------------------------------------

fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let n = body.len();
    if n < 0x80 {
        out.push(n as u8);
    } else {
        let bytes = n.to_be_bytes();
        let skip = bytes.iter().take_while(|b| **b == 0).count();
        out.push(0x80 | (bytes.len() - skip) as u8);
        out.extend_from_slice(&bytes[skip..]);
    }
    out.extend_from_slice(body);
    out
}

fn seq(parts: &[&[u8]]) -> Vec<u8> {
    tlv(0x30, &parts.concat())
}

fn set(parts: &[&[u8]]) -> Vec<u8> {
    tlv(0x31, &parts.concat())
}

fn oid(dotted: &str) -> Vec<u8> {
    ObjectIdentifier::new_unwrap(dotted).to_der().unwrap()
}

/// A non-negative INTEGER from big-endian bytes, minimal.
fn uint(bytes: &[u8]) -> Vec<u8> {
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    let mut v = Vec::new();
    if bytes.get(start).is_none_or(|&b| b & 0x80 != 0) {
        v.push(0);
    }
    v.extend_from_slice(&bytes[start..]);
    tlv(0x02, &v)
}

fn int(v: u64) -> Vec<u8> {
    uint(&v.to_be_bytes())
}

fn octets(b: &[u8]) -> Vec<u8> {
    tlv(0x04, b)
}

fn bits(b: &[u8]) -> Vec<u8> {
    tlv(0x03, &[&[0u8][..], b].concat())
}

fn null() -> Vec<u8> {
    vec![0x05, 0x00]
}

fn name(rfc4514: &str) -> Vec<u8> {
    x509_cert::name::Name::from_str(rfc4514)
        .unwrap()
        .to_der()
        .unwrap()
}

/// UTCTime before 2050, GeneralizedTime from then on (RFC 5280 section 4.1.2.5).
fn time(unix: u64) -> Vec<u8> {
    let d = Duration::from_secs(unix);
    if unix < 2_524_608_000 {
        der::asn1::UtcTime::from_unix_duration(d)
            .unwrap()
            .to_der()
            .unwrap()
    } else {
        der::asn1::GeneralizedTime::from_unix_duration(d)
            .unwrap()
            .to_der()
            .unwrap()
    }
}

// Object identifiers.
const SHA256: &str = "2.16.840.1.101.3.4.2.1";
const SHA384: &str = "2.16.840.1.101.3.4.2.2";
const SHA512: &str = "2.16.840.1.101.3.4.2.3";
const ECDSA_SHA256: &str = "1.2.840.10045.4.3.2";
const ECDSA_SHA384: &str = "1.2.840.10045.4.3.3";
const ECDSA_SHA512: &str = "1.2.840.10045.4.3.4";
const EC_PUBLIC_KEY: &str = "1.2.840.10045.2.1";
const P256_OID: &str = "1.2.840.10045.3.1.7";
const P384_OID: &str = "1.3.132.0.34";
const RSA_ENCRYPTION: &str = "1.2.840.113549.1.1.1";
const SHA256_RSA: &str = "1.2.840.113549.1.1.11";
const RSASSA_PSS: &str = "1.2.840.113549.1.1.10";
const MGF1: &str = "1.2.840.113549.1.1.8";
const SHA1: &str = "1.3.14.3.2.26";
const ED25519: &str = "1.3.101.112";
const SIGNED_DATA: &str = "1.2.840.113549.1.7.2";
const ID_DATA: &str = "1.2.840.113549.1.7.1";
const TST_INFO: &str = "1.2.840.113549.1.9.16.1.4";
const CONTENT_TYPE: &str = "1.2.840.113549.1.9.3";
const MESSAGE_DIGEST: &str = "1.2.840.113549.1.9.4";
const SIGNING_CERT: &str = "1.2.840.113549.1.9.16.2.12";
const SIGNING_CERT_V2: &str = "1.2.840.113549.1.9.16.2.47";
const BASIC_CONSTRAINTS: &str = "2.5.29.19";
const KEY_USAGE: &str = "2.5.29.15";
const EXT_KEY_USAGE: &str = "2.5.29.37";
const NAME_CONSTRAINTS: &str = "2.5.29.30";
const SUBJECT_ALT_NAME: &str = "2.5.29.17";
const SUBJECT_KEY_ID: &str = "2.5.29.14";
const TIME_STAMPING: &str = "1.3.6.1.5.5.7.3.8";
const SERVER_AUTH: &str = "1.3.6.1.5.5.7.3.1";
const PRIVATE_EXTENSION: &str = "1.3.6.1.4.1.55555.1";

fn alg(oid_text: &str) -> Vec<u8> {
    seq(&[&oid(oid_text)])
}

fn alg_null(oid_text: &str) -> Vec<u8> {
    seq(&[&oid(oid_text), &null()])
}

// ------------------------------------------------------------------------------------------
// Keys.
// ------------------------------------------------------------------------------------------

#[derive(Clone)]
enum Key {
    P256(p256::ecdsa::SigningKey),
    P384(p384::ecdsa::SigningKey),
    Rsa(&'static PrivateKey),
    Ed25519(ed25519_dalek::SigningKey),
}

fn rsa_key() -> &'static PrivateKey {
    static KEY: OnceLock<PrivateKey> = OnceLock::new();
    KEY.get_or_init(|| {
        KeyGenOptions::new(2048, Variant::Crt)
            .generate(&mut SeededEntropy::new(
                b"attacks: RSA-2048 TSA key, insecure",
            ))
            .unwrap()
    })
}

impl Key {
    fn p256(seed: u8) -> Key {
        Key::P256(p256::ecdsa::SigningKey::from_slice(&[seed; 32]).unwrap())
    }

    fn p384(seed: u8) -> Key {
        Key::P384(p384::ecdsa::SigningKey::from_slice(&[seed; 48]).unwrap())
    }

    fn ed25519(seed: u8) -> Key {
        Key::Ed25519(ed25519_dalek::SigningKey::from_bytes(&[seed; 32]))
    }

    fn spki(&self) -> Vec<u8> {
        match self {
            Key::P256(k) => seq(&[
                &seq(&[&oid(EC_PUBLIC_KEY), &oid(P256_OID)]),
                &bits(k.verifying_key().to_encoded_point(false).as_bytes()),
            ]),
            Key::P384(k) => seq(&[
                &seq(&[&oid(EC_PUBLIC_KEY), &oid(P384_OID)]),
                &bits(k.verifying_key().to_encoded_point(false).as_bytes()),
            ]),
            Key::Rsa(k) => hourglass_x509::key::rsa_spki(k.public().n(), k.public().e())
                .unwrap()
                .to_der()
                .unwrap(),
            Key::Ed25519(k) => seq(&[&alg(ED25519), &bits(&k.verifying_key().to_bytes())]),
        }
    }

    /// The signature algorithm and digest this key signs tokens and certificates with.
    fn default_alg(&self) -> (Vec<u8>, &'static str) {
        match self {
            Key::P256(_) => (alg(ECDSA_SHA256), SHA256),
            Key::P384(_) => (alg(ECDSA_SHA384), SHA384),
            Key::Rsa(_) => (alg_null(SHA256_RSA), SHA256),
            Key::Ed25519(_) => (alg(ED25519), SHA512),
        }
    }

    fn sign(&self, msg: &[u8]) -> Vec<u8> {
        match self {
            Key::P256(k) => {
                let s: p256::ecdsa::Signature = k.sign_prehash(&Sha256::digest(msg)).unwrap();
                s.to_der().as_bytes().to_vec()
            }
            Key::P384(k) => {
                let s: p384::ecdsa::Signature = k.sign_prehash(&sha2::Sha384::digest(msg)).unwrap();
                s.to_der().as_bytes().to_vec()
            }
            Key::Rsa(k) => Pkcs1v15Sign::new(HashAlg::Sha256)
                .sign(k, msg, &mut SeededEntropy::new(b"attacks: RSA signing"))
                .unwrap(),
            Key::Ed25519(k) => {
                use ed25519_dalek::Signer;
                k.sign(msg).to_bytes().to_vec()
            }
        }
    }
}

// ------------------------------------------------------------------------------------------
// Certificates.
// ------------------------------------------------------------------------------------------

const Y2020: u64 = 1_577_836_800;
const Y2024: u64 = 1_704_067_200;
const Y2030: u64 = 1_893_456_000;
const Y2040: u64 = 2_208_988_800;
/// 2025-06-01T12:00:00Z, the genTime of most tokens here.
const GEN_TIME: &str = "20250601120000Z";
const GEN_UNIX: u64 = 1_748_779_200;

fn ext(oid_text: &str, critical: bool, value: &[u8]) -> Vec<u8> {
    if critical {
        seq(&[&oid(oid_text), &[0x01, 0x01, 0xff], &octets(value)])
    } else {
        seq(&[&oid(oid_text), &octets(value)])
    }
}

fn basic_constraints(ca: bool, path_len: Option<u64>) -> Vec<u8> {
    let mut parts: Vec<Vec<u8>> = Vec::new();
    if ca {
        parts.push(vec![0x01, 0x01, 0xff]);
    }
    if let Some(n) = path_len {
        parts.push(int(n));
    }
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    ext(BASIC_CONSTRAINTS, true, &seq(&refs))
}

/// keyUsage with these bits (0 digitalSignature, 1 nonRepudiation, 5 keyCertSign, 6 cRLSign).
fn key_usage(set_bits: &[u8]) -> Vec<u8> {
    let mut v = [0u8; 2];
    for &b in set_bits {
        v[(b / 8) as usize] |= 0x80 >> (b % 8);
    }
    let len = if v[1] == 0 { 1 } else { 2 };
    let last = v[len - 1];
    let unused = last.trailing_zeros().min(7) as u8;
    ext(
        KEY_USAGE,
        true,
        &tlv(0x03, &[&[unused][..], &v[..len]].concat()),
    )
}

fn ext_key_usage(critical: bool, purposes: &[&str]) -> Vec<u8> {
    let oids: Vec<Vec<u8>> = purposes.iter().map(|p| oid(p)).collect();
    let refs: Vec<&[u8]> = oids.iter().map(Vec::as_slice).collect();
    ext(EXT_KEY_USAGE, critical, &seq(&refs))
}

fn ca_extensions(path_len: Option<u64>) -> Vec<Vec<u8>> {
    vec![basic_constraints(true, path_len), key_usage(&[5, 6])]
}

fn tsa_extensions() -> Vec<Vec<u8>> {
    vec![key_usage(&[0, 1]), ext_key_usage(true, &[TIME_STAMPING])]
}

/// A certificate's fields, signed by [`CertSpec::issue`].
#[derive(Clone)]
struct CertSpec {
    serial: Vec<u8>,
    issuer: Vec<u8>,
    subject: Vec<u8>,
    not_before: u64,
    not_after: u64,
    spki: Vec<u8>,
    extensions: Vec<Vec<u8>>,
}

impl CertSpec {
    fn new(subject: &str, issuer: &str, spki: Vec<u8>, extensions: Vec<Vec<u8>>) -> CertSpec {
        CertSpec {
            serial: Sha256::digest(subject.as_bytes())[..8].to_vec(),
            issuer: name(issuer),
            subject: name(subject),
            not_before: Y2024,
            not_after: Y2030,
            spki,
            extensions,
        }
    }

    fn tbs(&self, sig_alg: &[u8]) -> Vec<u8> {
        let exts: Vec<&[u8]> = self.extensions.iter().map(Vec::as_slice).collect();
        let mut parts: Vec<Vec<u8>> = vec![
            tlv(0xa0, &int(2)),
            uint(&self.serial),
            sig_alg.to_vec(),
            self.issuer.clone(),
            seq(&[&time(self.not_before), &time(self.not_after)]),
            self.subject.clone(),
            self.spki.clone(),
        ];
        if !exts.is_empty() {
            parts.push(tlv(0xa3, &seq(&exts)));
        }
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        seq(&refs)
    }

    fn issue(&self, issuer_key: &Key) -> Vec<u8> {
        let (sig_alg, _) = issuer_key.default_alg();
        let tbs = self.tbs(&sig_alg);
        let sig = issuer_key.sign(&tbs);
        seq(&[&tbs, &sig_alg, &bits(&sig)])
    }
}

/// A CA: its key, name and certificate.
#[derive(Clone)]
struct Ca {
    key: Key,
    name: String,
    cert: Vec<u8>,
}

impl Ca {
    fn root(seed: u8, subject: &str, path_len: Option<u64>) -> Ca {
        let key = Key::p256(seed);
        let mut spec = CertSpec::new(subject, subject, key.spki(), ca_extensions(path_len));
        spec.not_before = Y2020;
        spec.not_after = Y2040;
        Ca {
            cert: spec.issue(&key),
            key,
            name: subject.into(),
        }
    }

    fn spec(&self, subject: &str, spki: Vec<u8>, extensions: Vec<Vec<u8>>) -> CertSpec {
        CertSpec::new(subject, &self.name, spki, extensions)
    }

    fn sub_ca(&self, seed: u8, subject: &str, extensions: Vec<Vec<u8>>) -> Ca {
        let key = Key::p256(seed);
        let cert = self.spec(subject, key.spki(), extensions).issue(&self.key);
        Ca {
            key,
            name: subject.into(),
            cert,
        }
    }

    fn anchor(&self) -> TsaAnchor {
        TsaAnchor::from(AnchorCertificate::from_bytes(&self.cert).unwrap())
    }
}

/// A TSA: its key and certificate, and the certificates it sends.
#[derive(Clone)]
struct Tsa {
    key: Key,
    cert: Vec<u8>,
    chain: Vec<Vec<u8>>,
}

impl Tsa {
    fn under(ca: &Ca, key: Key, subject: &str) -> Tsa {
        let cert = ca
            .spec(subject, key.spki(), tsa_extensions())
            .issue(&ca.key);
        Tsa {
            key,
            cert,
            chain: vec![],
        }
    }
}

// ------------------------------------------------------------------------------------------
// Tokens.
// ------------------------------------------------------------------------------------------

const DATA: &[u8] = b"the paper whose date the attacker wants to move";

fn imprint() -> Vec<u8> {
    seq(&[&alg_null(SHA256), &octets(&Sha256::digest(DATA))])
}

/// A TSTInfo with this genTime text and accuracy (a whole `Accuracy` TLV).
fn tst_info(gen_time: &str, accuracy: Option<&[u8]>) -> Vec<u8> {
    let mut parts: Vec<Vec<u8>> = vec![
        int(1),
        oid("1.2.3.4.5"),
        imprint(),
        int(0x1234),
        tlv(0x18, gen_time.as_bytes()),
    ];
    if let Some(a) = accuracy {
        parts.push(a.to_vec());
    }
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    seq(&refs)
}

fn attribute(oid_text: &str, values: &[&[u8]]) -> Vec<u8> {
    seq(&[&oid(oid_text), &set(values)])
}

fn content_type_attr(ct: &str) -> Vec<u8> {
    attribute(CONTENT_TYPE, &[&oid(ct)])
}

fn message_digest_attr(digest: &[u8]) -> Vec<u8> {
    attribute(MESSAGE_DIGEST, &[&octets(digest)])
}

fn ess_v2_attr(cert_hashes: &[&[u8]]) -> Vec<u8> {
    let ids: Vec<Vec<u8>> = cert_hashes.iter().map(|h| seq(&[&octets(h)])).collect();
    let refs: Vec<&[u8]> = ids.iter().map(Vec::as_slice).collect();
    attribute(SIGNING_CERT_V2, &[&seq(&[&seq(&refs)])])
}

fn ess_v1_attr(cert: &[u8]) -> Vec<u8> {
    attribute(
        SIGNING_CERT,
        &[&seq(&[&seq(&[&seq(&[&octets(&Sha1::digest(cert))])])])],
    )
}

fn digest_of(digest_oid: &str, data: &[u8]) -> Vec<u8> {
    match digest_oid {
        SHA256 => Sha256::digest(data).to_vec(),
        SHA384 => sha2::Sha384::digest(data).to_vec(),
        SHA512 => sha2::Sha512::digest(data).to_vec(),
        other => panic!("no digest {other}"),
    }
}

/// IssuerAndSerialNumber of a certificate.
fn issuer_and_serial(cert: &[u8]) -> Vec<u8> {
    let c = x509_cert::Certificate::from_der(cert).unwrap();
    seq(&[
        &c.tbs_certificate.issuer.to_der().unwrap(),
        &c.tbs_certificate.serial_number.to_der().unwrap(),
    ])
}

/// Every field of a token, each one an attack can change before [`Token::build`].
#[derive(Clone)]
struct Token {
    tst: Vec<u8>,
    econtent_type: String,
    sd_version: u64,
    digest_algs: Vec<Vec<u8>>,
    signer_version: u64,
    sid: Vec<u8>,
    digest_alg: Vec<u8>,
    attrs: Option<Vec<Vec<u8>>>,
    sig_alg: Vec<u8>,
    unsigned: Option<Vec<u8>>,
    certs: Vec<Vec<u8>>,
    /// Whole SignerInfo TLVs after ours.
    more_signers: Vec<Vec<u8>>,
}

impl Token {
    /// What an honest TSA would sign: its certificate and chain, contentType, messageDigest
    /// and signingCertificateV2 naming its certificate.
    fn honest(tsa: &Tsa, tst: Vec<u8>) -> Token {
        let (sig_alg, digest) = tsa.key.default_alg();
        let attrs = vec![
            content_type_attr(TST_INFO),
            message_digest_attr(&digest_of(digest, &tst)),
            ess_v2_attr(&[&Sha256::digest(&tsa.cert)]),
        ];
        let mut certs = vec![tsa.cert.clone()];
        certs.extend(tsa.chain.iter().cloned());
        Token {
            tst,
            econtent_type: TST_INFO.into(),
            sd_version: 3,
            digest_algs: vec![alg(digest)],
            signer_version: 1,
            sid: issuer_and_serial(&tsa.cert),
            digest_alg: alg(digest),
            attrs: Some(attrs),
            sig_alg,
            unsigned: None,
            certs,
            more_signers: vec![],
        }
    }

    /// The signed attributes as the signature covers them (under the SET tag).
    fn signed(&self) -> Vec<u8> {
        set(&self
            .attrs
            .as_ref()
            .map(|a| a.iter().map(Vec::as_slice).collect::<Vec<_>>())
            .unwrap_or_default())
    }

    fn signer_info(&self, signature: &[u8]) -> Vec<u8> {
        let mut parts: Vec<Vec<u8>> = vec![
            int(self.signer_version),
            self.sid.clone(),
            self.digest_alg.clone(),
        ];
        if let Some(attrs) = &self.attrs {
            parts.push(tlv(0xa0, &attrs.concat()));
        }
        parts.push(self.sig_alg.clone());
        parts.push(octets(signature));
        if let Some(u) = &self.unsigned {
            parts.push(tlv(0xa1, u));
        }
        let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
        seq(&refs)
    }

    /// The token with this signature over [`Self::signed`].
    fn with_signature(&self, signature: &[u8]) -> Vec<u8> {
        let algs: Vec<&[u8]> = self.digest_algs.iter().map(Vec::as_slice).collect();
        let mut infos = vec![self.signer_info(signature)];
        infos.extend(self.more_signers.iter().cloned());
        let infos: Vec<&[u8]> = infos.iter().map(Vec::as_slice).collect();
        let mut sd: Vec<Vec<u8>> = vec![
            int(self.sd_version),
            set(&algs),
            seq(&[&oid(&self.econtent_type), &tlv(0xa0, &octets(&self.tst))]),
        ];
        if !self.certs.is_empty() {
            sd.push(tlv(0xa0, &self.certs.concat()));
        }
        sd.push(set(&infos));
        let sd: Vec<&[u8]> = sd.iter().map(Vec::as_slice).collect();
        seq(&[&oid(SIGNED_DATA), &tlv(0xa0, &seq(&sd))])
    }

    /// The token signed by `key` with its default algorithm.
    fn build(&self, key: &Key) -> Vec<u8> {
        self.with_signature(&key.sign(&self.signed()))
    }
}

// ------------------------------------------------------------------------------------------
// The honest world the attacks start from.
// ------------------------------------------------------------------------------------------

struct World {
    root: Ca,
    tsa: Tsa,
}

fn world() -> World {
    let root = Ca::root(1, "CN=Attack Test Root,O=Verifier's Pin", None);
    let tsa = Tsa::under(&root, Key::p256(2), "CN=Honest TSA");
    World { root, tsa }
}

fn check(
    token: &[u8],
    untrusted: &[Vec<u8>],
    anchors: &[TsaAnchor],
) -> Result<VerifiedToken, TimestampError> {
    verify_token_for(token, Covered::Data(DATA), untrusted, anchors)
}

/// The error of a refused token, asserting that it is a negative verdict (exit 1).
#[track_caller]
fn verdict(r: Result<VerifiedToken, TimestampError>) -> TimestampError {
    match r {
        Ok(v) => panic!("ACCEPTED: tsa {} at {}", v.tsa(), v.info().gen_time_text()),
        Err(e) => {
            assert!(e.is_verdict(), "an error, not a verdict: {e:?}");
            e
        }
    }
}

/// The error of a refused token, asserting that it is an error (exit 2), not a verdict.
#[track_caller]
fn error(r: Result<VerifiedToken, TimestampError>) -> TimestampError {
    match r {
        Ok(v) => panic!("ACCEPTED: tsa {} at {}", v.tsa(), v.info().gen_time_text()),
        Err(e) => {
            assert!(!e.is_verdict(), "a verdict, not an error: {e:?}");
            e
        }
    }
}

/// Refused, verdict or error: what an attack that succeeds today must become, whichever way
/// it is fixed.
#[track_caller]
fn refused(r: Result<VerifiedToken, TimestampError>) {
    if let Ok(v) = r {
        panic!("ACCEPTED: tsa {} at {}", v.tsa(), v.info().gen_time_text());
    }
}

#[track_caller]
fn accepted(r: Result<VerifiedToken, TimestampError>) -> VerifiedToken {
    r.unwrap_or_else(|e| panic!("refused: {e}"))
}

fn unix(t: std::time::SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap().as_secs()
}

// ------------------------------------------------------------------------------------------
// Controls: the forge makes tokens the verifier accepts, so that each refusal below is the
// attack's doing.
// ------------------------------------------------------------------------------------------

#[test]
fn control_honest_tokens_of_every_key_type_are_accepted() {
    let w = world();
    let anchors = [w.root.anchor()];
    for (key, what) in [
        (Key::p256(2), "ECDSA P-256"),
        (Key::p384(3), "ECDSA P-384"),
        (Key::Rsa(rsa_key()), "RSA-2048"),
        (Key::ed25519(4), "Ed25519"),
    ] {
        let tsa = Tsa::under(&w.root, key, "CN=Honest TSA");
        let token = Token::honest(&tsa, tst_info(GEN_TIME, None)).build(&tsa.key);
        let v = accepted(check(&token, &[], &anchors));
        assert!(v.signature().contains(what), "{}", v.signature());
        assert_eq!(v.tsa(), "CN=Honest TSA");
        assert_eq!(unix(v.info().latest()), GEN_UNIX + 1);
    }
}

// ------------------------------------------------------------------------------------------
// The TSTInfo and the signed attributes.
// ------------------------------------------------------------------------------------------

/// The attacker moves genTime back in an honest token: the message digest no longer matches.
/// Moving the message digest too breaks the signature.
#[test]
fn an_altered_gen_time_is_refused() {
    let w = world();
    let anchors = [w.root.anchor()];
    let honest = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    let signature = w.tsa.key.sign(&honest.signed());
    assert!(check(&honest.with_signature(&signature), &[], &anchors).is_ok());

    let mut t = honest.clone();
    t.tst = tst_info("20240101000000Z", None);
    let e = verdict(check(&t.with_signature(&signature), &[], &anchors));
    assert!(e.to_string().contains("message digest"), "{e}");

    let attrs = t.attrs.as_mut().unwrap();
    attrs[1] = message_digest_attr(&Sha256::digest(&t.tst));
    let e = verdict(check(&t.with_signature(&signature), &[], &anchors));
    assert!(matches!(e, TimestampError::BadSignature { .. }), "{e}");
}

/// The signed attributes reordered in an honest token (the decoded SET sorts them again):
/// the signature covers the bytes as encoded, so it fails. A signer that wrote them out of
/// DER order itself is accepted, as the attributes are the same.
#[test]
fn reordered_signed_attributes_are_checked_as_encoded() {
    let w = world();
    let anchors = [w.root.anchor()];
    let honest = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    let signature = w.tsa.key.sign(&honest.signed());
    let mut t = honest.clone();
    t.attrs.as_mut().unwrap().reverse();
    let e = verdict(check(&t.with_signature(&signature), &[], &anchors));
    assert!(matches!(e, TimestampError::BadSignature { .. }), "{e}");
    // Signed in that order by the TSA: the same attributes, accepted.
    accepted(check(&t.build(&w.tsa.key), &[], &anchors));
}

/// An attribute repeated byte for byte (DER forbids it; the decoder refuses the SET).
#[test]
fn a_signed_attribute_repeated_exactly_is_an_error() {
    let w = world();
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    let ct = t.attrs.as_ref().unwrap()[0].clone();
    t.attrs.as_mut().unwrap().push(ct);
    let e = error(check(&t.build(&w.tsa.key), &[], &[w.root.anchor()]));
    assert!(matches!(e, TimestampError::NotDer { .. }), "{e}");
}

/// Two message digests (or two signing certificates), one of them the attacker's: whichever
/// the verifier read, a signer could mean the other. Refused.
#[test]
fn a_signed_attribute_twice_with_different_values_is_refused() {
    let w = world();
    let anchors = [w.root.anchor()];
    let other_tst = tst_info("20200101000000Z", None);
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.attrs
        .as_mut()
        .unwrap()
        .push(message_digest_attr(&Sha256::digest(&other_tst)));
    let e = verdict(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(e.to_string().contains("appears twice"), "{e}");

    let attacker = Tsa::under(&w.root, Key::p256(9), "CN=Other");
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.attrs
        .as_mut()
        .unwrap()
        .push(ess_v2_attr(&[&Sha256::digest(&attacker.cert)]));
    let e = verdict(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(e.to_string().contains("appears twice"), "{e}");
}

/// One attribute with two values (the right digest and another).
#[test]
fn a_signed_attribute_with_two_values_is_refused() {
    let w = world();
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    let right = octets(&Sha256::digest(&t.tst));
    let other = octets(&[0u8; 32]);
    t.attrs.as_mut().unwrap()[1] = attribute(MESSAGE_DIGEST, &[&other, &right]);
    let e = verdict(check(&t.build(&w.tsa.key), &[], &[w.root.anchor()]));
    assert!(e.to_string().contains("exactly one value"), "{e}");
}

/// BER in the signed attributes: an indefinite length, a length in long form that DER would
/// write short. The decoder refuses both (an error), so no decoded view can differ from the
/// bytes signed.
#[test]
fn ber_encodings_of_the_signed_attributes_are_errors() {
    let w = world();
    let anchors = [w.root.anchor()];
    let honest = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    let token = honest.build(&w.tsa.key);
    // The content-type attribute `30 18 ...` rewritten `30 81 18 ...`, every enclosing length
    // grown by one.
    let ct = &honest.attrs.as_ref().unwrap()[0];
    let mut long_ct = vec![0x30, 0x81];
    long_ct.extend_from_slice(&ct[1..]);
    let mut t = honest.clone();
    t.attrs.as_mut().unwrap()[0] = long_ct;
    let e = error(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(matches!(e, TimestampError::NotDer { .. }), "{e}");

    // The [0] of the signed attributes with an indefinite length: `a0 80 ... 00 00`.
    let a0 = tlv(0xa0, &honest.attrs.as_ref().unwrap().concat());
    let pos = token.windows(a0.len()).position(|w| w == a0).unwrap();
    let mut indefinite = vec![0xa0, 0x80];
    indefinite.extend_from_slice(&honest.attrs.as_ref().unwrap().concat());
    indefinite.extend_from_slice(&[0, 0]);
    let mut bad = token[..pos].to_vec();
    bad.extend_from_slice(&indefinite);
    bad.extend_from_slice(&token[pos + a0.len()..]);
    // Lengths around it are now wrong by the growth; whatever the reader makes of it, it is
    // an error, never a verdict on other bytes.
    let e = error(check(&bad, &[], &anchors));
    assert!(matches!(e, TimestampError::NotDer { .. }), "{e}");
}

/// A second SignerInfo, whether placed before or after the honest one.
#[test]
fn a_second_signer_is_an_error() {
    let w = world();
    let anchors = [w.root.anchor()];
    let honest = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    let signature = w.tsa.key.sign(&honest.signed());
    let attacker = Tsa::under(&w.root, Key::p256(9), "CN=Attacker");
    let mut other = Token::honest(&attacker, tst_info("20200101000000Z", None));
    other.attrs.as_mut().unwrap()[1] = message_digest_attr(&Sha256::digest(&honest.tst));
    let other_info = other.signer_info(&attacker.key.sign(&other.signed()));

    let mut t = honest.clone();
    t.more_signers.push(other_info.clone());
    let e = error(check(&t.with_signature(&signature), &[], &anchors));
    assert!(e.to_string().contains("exactly one signer"), "{e}");

    let mut t = other.clone();
    t.more_signers.push(honest.signer_info(&signature));
    t.certs.push(w.tsa.cert.clone());
    let e = error(check(
        &t.with_signature(&attacker.key.sign(&other.signed())),
        &[],
        &anchors,
    ));
    assert!(e.to_string().contains("exactly one signer"), "{e}");
}

/// The SignedData's and TSTInfo's versions, a SHA-1 imprint, and a reply whose status grants
/// nothing wrapped around an honest token.
#[test]
fn versions_weak_imprints_and_refused_replies_are_not_accepted() {
    let w = world();
    let anchors = [w.root.anchor()];
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.sd_version = 1;
    let e = error(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(e.to_string().contains("version"), "{e}");

    let mut tst = tst_info(GEN_TIME, None);
    tst[4] = 2; // version INTEGER 1 -> 2
    let t = Token::honest(&w.tsa, tst);
    let e = error(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(e.to_string().contains("version"), "{e}");

    let sha1_tst = seq(&[
        &int(1),
        &oid("1.2.3.4.5"),
        &seq(&[&alg_null(SHA1), &octets(&Sha1::digest(DATA))]),
        &int(1),
        &tlv(0x18, GEN_TIME.as_bytes()),
    ]);
    let t = Token::honest(&w.tsa, sha1_tst);
    let e = verdict(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(matches!(e, TimestampError::WeakImprint { .. }), "{e}");

    let token = Token::honest(&w.tsa, tst_info(GEN_TIME, None)).build(&w.tsa.key);
    for status in [0u8, 1, 2, 3, 4, 5] {
        let reply = seq(&[&seq(&[&int(u64::from(status))]), &token]);
        let r = check(&reply, &[], &anchors);
        if status <= 1 {
            accepted(r);
        } else {
            let e = error(r);
            assert!(matches!(e, TimestampError::Refused { .. }), "{e}");
        }
    }
}

/// Unsigned attributes carrying another message digest, another signing certificate, another
/// content type: ignored, the token reads as what was signed.
#[test]
fn unsigned_attributes_change_nothing() {
    let w = world();
    let attacker = Tsa::under(&w.root, Key::p256(9), "CN=Attacker");
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.unsigned = Some(
        [
            message_digest_attr(&[0; 32]),
            ess_v2_attr(&[&Sha256::digest(&attacker.cert)]),
            content_type_attr(ID_DATA),
        ]
        .concat(),
    );
    let v = accepted(check(&t.build(&w.tsa.key), &[], &[w.root.anchor()]));
    assert_eq!(v.tsa(), "CN=Honest TSA");
    assert_eq!(v.info().gen_time_text(), GEN_TIME);
}

/// No signed attributes at all (the signature straight over the TSTInfo, as CMS allows):
/// RFC 3161 requires the signing certificate among them.
#[test]
fn a_signature_without_signed_attributes_is_refused() {
    let w = world();
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.attrs = None;
    let token = t.with_signature(&w.tsa.key.sign(&t.tst));
    let e = verdict(check(&token, &[], &[w.root.anchor()]));
    assert!(matches!(e, TimestampError::SignedAttributes { .. }), "{e}");
}

/// A content-type attribute of id-data, and an eContentType of id-data (a signature the TSA
/// made over some other content).
#[test]
fn another_content_type_is_refused() {
    let w = world();
    let anchors = [w.root.anchor()];
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.attrs.as_mut().unwrap()[0] = content_type_attr(ID_DATA);
    let e = verdict(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(e.to_string().contains("id-ct-TSTInfo"), "{e}");

    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.econtent_type = ID_DATA.into();
    let e = error(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(e.to_string().contains("not a TSTInfo"), "{e}");
}

/// The signing certificate attribute: absent; naming another certificate; a v2 that names
/// another certificate beside a v1 that names the signer's; the signer's hash second in the
/// list, behind another.
#[test]
fn signing_certificate_attributes_that_do_not_bind_the_signer_are_refused() {
    let w = world();
    let anchors = [w.root.anchor()];
    let other = Tsa::under(&w.root, Key::p256(9), "CN=Other");
    let own = Sha256::digest(&w.tsa.cert).to_vec();
    let theirs = Sha256::digest(&other.cert).to_vec();
    let cases: Vec<(&str, Vec<Vec<u8>>)> = vec![
        ("absent", vec![]),
        ("another's", vec![ess_v2_attr(&[&theirs])]),
        (
            "v2 another's, v1 own",
            vec![ess_v2_attr(&[&theirs]), ess_v1_attr(&w.tsa.cert)],
        ),
        ("own second", vec![ess_v2_attr(&[&theirs, &own])]),
        ("v1 another's", vec![ess_v1_attr(&other.cert)]),
    ];
    for (what, ess) in cases {
        let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
        let attrs = t.attrs.as_mut().unwrap();
        attrs.truncate(2);
        attrs.extend(ess);
        let e = verdict(check(&t.build(&w.tsa.key), &[], &anchors));
        assert!(
            matches!(e, TimestampError::SignedAttributes { .. }),
            "{what}: {e}"
        );
    }
    // v1 alone (SHA-1, as OpenSSL writes) naming the signer: accepted.
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.attrs.as_mut().unwrap()[2] = ess_v1_attr(&w.tsa.cert);
    accepted(check(&t.build(&w.tsa.key), &[], &anchors));
}

// ------------------------------------------------------------------------------------------
// Which certificate signed: the signer identifier, the ESS hash and the key.
// ------------------------------------------------------------------------------------------

/// The attacker's own certificate made to look like the honest TSA's: same issuer name and
/// serial number, the attacker's key, "signed" by a key of the root's name. Placed in the
/// token (before or after the honest one) or among the verifier's untrusted certificates, the
/// signer identifier finds it, the ESS attribute names it, the signature verifies under it,
/// and the path refuses it.
#[test]
fn a_lookalike_certificate_with_the_honest_issuer_and_serial_is_refused() {
    let w = world();
    let anchors = [w.root.anchor()];
    let attacker_key = Key::p256(9);
    let fake_root_key = Key::p256(10);
    let honest = x509_cert::Certificate::from_der(&w.tsa.cert).unwrap();
    let mut spec = w
        .root
        .spec("CN=Honest TSA", attacker_key.spki(), tsa_extensions());
    spec.serial = honest.tbs_certificate.serial_number.as_bytes().to_vec();
    let lookalike = spec.issue(&fake_root_key);
    assert_eq!(
        issuer_and_serial(&lookalike),
        issuer_and_serial(&w.tsa.cert)
    );

    let attacker = Tsa {
        key: attacker_key,
        cert: lookalike.clone(),
        chain: vec![],
    };
    for certs in [
        vec![lookalike.clone()],
        vec![lookalike.clone(), w.tsa.cert.clone()],
        vec![w.tsa.cert.clone(), lookalike.clone()],
    ] {
        let mut t = Token::honest(&attacker, tst_info("20240101000000Z", None));
        t.certs = certs;
        let e = verdict(check(&t.build(&attacker.key), &[], &anchors));
        assert!(
            matches!(
                e,
                TimestampError::Path { .. } | TimestampError::SignedAttributes { .. }
            ),
            "{e}"
        );
    }
    let mut t = Token::honest(&attacker, tst_info("20240101000000Z", None));
    t.certs = vec![];
    let e = verdict(check(
        &t.build(&attacker.key),
        std::slice::from_ref(&lookalike),
        &anchors,
    ));
    assert!(matches!(e, TimestampError::Path { .. }), "{e}");
}

/// The same lookalike added to an honest token (the certificate set is not signed): if the
/// verifier finds it first, the honest token is refused (the ESS attribute names the honest
/// certificate), never accepted under the lookalike. OpenSSL finds the signer the same way
/// (the first by issuer and serial). Nothing is gained but a refusal of a token one could
/// equally delete.
#[test]
fn a_lookalike_added_to_an_honest_token_cannot_sign_for_it() {
    let w = world();
    let anchors = [w.root.anchor()];
    let honest = x509_cert::Certificate::from_der(&w.tsa.cert).unwrap();
    let mut spec = w
        .root
        .spec("CN=Honest TSA", Key::p256(9).spki(), tsa_extensions());
    spec.serial = honest.tbs_certificate.serial_number.as_bytes().to_vec();
    let lookalike = spec.issue(&Key::p256(10));
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.certs = vec![lookalike.clone(), w.tsa.cert.clone()];
    let r = check(&t.build(&w.tsa.key), &[], &anchors);
    if let Err(e) = r {
        assert!(e.is_verdict(), "{e:?}");
        assert!(matches!(e, TimestampError::SignedAttributes { .. }), "{e}");
    }
}

/// A signer identified by subjectKeyIdentifier: the attacker's certificate carries the honest
/// TSA's key identifier. Found, named by the ESS attribute, and refused by the path.
#[test]
fn a_lookalike_subject_key_identifier_is_refused() {
    let w = world();
    let anchors = [w.root.anchor()];
    let ski = [0x42u8; 20];
    let ski_ext = ext(SUBJECT_KEY_ID, false, &octets(&ski));
    let mut exts = tsa_extensions();
    exts.push(ski_ext.clone());
    let honest_cert = w
        .root
        .spec("CN=Honest TSA", w.tsa.key.spki(), exts.clone())
        .issue(&w.root.key);
    let honest = Tsa {
        key: w.tsa.key.clone(),
        cert: honest_cert,
        chain: vec![],
    };
    let mut t = Token::honest(&honest, tst_info(GEN_TIME, None));
    t.signer_version = 3;
    t.sid = tlv(0x80, &ski);
    accepted(check(&t.build(&honest.key), &[], &anchors));

    let attacker_key = Key::p256(9);
    let lookalike = w
        .root
        .spec("CN=Honest TSA", attacker_key.spki(), exts)
        .issue(&Key::p256(10));
    let attacker = Tsa {
        key: attacker_key,
        cert: lookalike,
        chain: vec![],
    };
    let mut t = Token::honest(&attacker, tst_info("20240101000000Z", None));
    t.signer_version = 3;
    t.sid = tlv(0x80, &ski);
    t.certs.push(honest.cert.clone());
    let e = verdict(check(&t.build(&attacker.key), &[], &anchors));
    assert!(
        matches!(
            e,
            TimestampError::Path { .. } | TimestampError::SignedAttributes { .. }
        ),
        "{e}"
    );
    // The signer identifier version must match its kind.
    let mut t = Token::honest(&honest, tst_info(GEN_TIME, None));
    t.sid = tlv(0x80, &ski);
    let e = error(check(&t.build(&honest.key), &[], &anchors));
    assert!(e.to_string().contains("version"), "{e}");
}

/// Signer identifier naming the honest TSA, ESS naming the honest TSA's certificate, but the
/// signature made by the attacker: it must verify under the honest key, and does not.
#[test]
fn a_signature_by_another_key_under_the_honest_identity_is_refused() {
    let w = world();
    let t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    let e = verdict(check(&t.build(&Key::p256(9)), &[], &[w.root.anchor()]));
    assert!(matches!(e, TimestampError::BadSignature { .. }), "{e}");
}

/// OpenSSL's TSA repeats the signer's certificate; `without_duplicate_certificates` drops the
/// repeats before parsing. Repeats of the signer and of another certificate, 22 of them, and
/// the signer only among the verifier's untrusted certificates.
#[test]
fn repeated_certificates_are_read_once_and_change_nothing() {
    let w = world();
    let anchors = [w.root.anchor()];
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.certs = vec![w.tsa.cert.clone(); 20];
    t.certs.push(w.root.cert.clone());
    t.certs.push(w.root.cert.clone());
    accepted(check(&t.build(&w.tsa.key), &[], &anchors));
    t.certs = vec![];
    let token = t.build(&w.tsa.key);
    let e = error(check(&token, &[], &anchors));
    assert!(matches!(e, TimestampError::NoSignerCertificate), "{e}");
    accepted(check(&token, std::slice::from_ref(&w.tsa.cert), &anchors));
}

// ------------------------------------------------------------------------------------------
// Algorithms.
// ------------------------------------------------------------------------------------------

/// An RSA TSA's certificate with a signature algorithm of another key type, and the reverse.
#[test]
fn algorithms_of_another_key_type_are_refused() {
    let w = world();
    let anchors = [w.root.anchor()];
    let rsa = Tsa::under(&w.root, Key::Rsa(rsa_key()), "CN=RSA TSA");
    let ec = &w.tsa;
    for (tsa, sig_alg) in [
        (&rsa, alg(ECDSA_SHA256)),
        (&rsa, alg_null(EC_PUBLIC_KEY)),
        (&rsa, alg(ED25519)),
        (ec, alg_null(SHA256_RSA)),
        (ec, alg_null(RSA_ENCRYPTION)),
        (ec, alg(ED25519)),
    ] {
        let mut t = Token::honest(tsa, tst_info(GEN_TIME, None));
        t.sig_alg = sig_alg;
        let e = verdict(check(&t.build(&tsa.key), &[], &anchors));
        assert!(
            matches!(
                e,
                TimestampError::BadSignature {
                    problem: SignatureProblem::WrongKey { .. },
                    ..
                }
            ),
            "{e}"
        );
    }
}

/// `id-ecPublicKey` as the signature algorithm (some signers write it): the digest algorithm
/// gives the hash; a signature made with another hash is refused.
#[test]
fn id_ec_public_key_takes_the_digest_algorithms_hash_only() {
    let w = world();
    let anchors = [w.root.anchor()];
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.sig_alg = alg(EC_PUBLIC_KEY);
    accepted(check(&t.build(&w.tsa.key), &[], &anchors));
    // Digest SHA-384, signature still over SHA-256.
    t.digest_alg = alg(SHA384);
    t.digest_algs = vec![alg(SHA384)];
    t.attrs.as_mut().unwrap()[1] = message_digest_attr(&sha2::Sha384::digest(&t.tst));
    let e = verdict(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(matches!(e, TimestampError::BadSignature { .. }), "{e}");
}

/// A signature algorithm whose hash is not the digest algorithm's, a digest algorithm missing
/// from the SignedData's list, SHA-1, parameters where none belong.
#[test]
fn hash_mismatches_and_unsupported_digests_are_errors() {
    let w = world();
    let anchors = [w.root.anchor()];
    let base = Token::honest(&w.tsa, tst_info(GEN_TIME, None));

    let mut t = base.clone();
    t.sig_alg = alg(ECDSA_SHA384);
    let e = error(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(matches!(e, TimestampError::SignatureAlgorithm(_)), "{e}");

    let mut t = base.clone();
    t.digest_algs = vec![alg(SHA512)];
    let e = error(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(e.to_string().contains("digest algorithms"), "{e}");

    let mut t = base.clone();
    t.digest_alg = alg(SHA1);
    t.digest_algs = vec![alg(SHA1)];
    let e = error(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(
        matches!(e, TimestampError::UnsupportedAlgorithm { .. }),
        "{e}"
    );

    let mut t = base.clone();
    t.sig_alg = alg_null(ECDSA_SHA256);
    let e = error(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(matches!(e, TimestampError::SignatureAlgorithm(_)), "{e}");

    let mut t = base.clone();
    t.digest_alg = seq(&[&oid(SHA256), &int(0)]);
    let e = error(check(&t.build(&w.tsa.key), &[], &anchors));
    assert!(
        matches!(e, TimestampError::UnsupportedAlgorithm { .. }),
        "{e}"
    );
}

fn pss_params(hash: &str, mgf_hash: &str, salt: Option<u64>, trailer: Option<u64>) -> Vec<u8> {
    let mut parts = vec![
        tlv(0xa0, &alg_null(hash)),
        tlv(0xa1, &seq(&[&oid(MGF1), &alg_null(mgf_hash)])),
    ];
    if let Some(s) = salt {
        parts.push(tlv(0xa2, &int(s)));
    }
    if let Some(t) = trailer {
        parts.push(tlv(0xa3, &int(t)));
    }
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    seq(&[&oid(RSASSA_PSS), &seq(&refs)])
}

/// RSASSA-PSS: the right parameters verify; a salt length other than the one used, a huge
/// one, another MGF1 hash, a trailer other than 1, absent parameters (SHA-1 defaults), a hash
/// other than the digest's, are each refused, and none panics.
#[test]
fn pss_parameters_are_held_to_the_signature() {
    let w = world();
    let anchors = [w.root.anchor()];
    let rsa = Tsa::under(&w.root, Key::Rsa(rsa_key()), "CN=RSA TSA");
    let base = Token::honest(&rsa, tst_info(GEN_TIME, None));
    let sign_pss = |t: &Token, salt: usize| {
        let sig = Pss::new(HashAlg::Sha256)
            .salt_len(salt)
            .sign(rsa_key(), &t.signed(), &mut SeededEntropy::new(b"pss"))
            .unwrap();
        t.with_signature(&sig)
    };
    let mut t = base.clone();
    t.sig_alg = pss_params(SHA256, SHA256, Some(32), None);
    let v = accepted(check(&sign_pss(&t, 32), &[], &anchors));
    assert!(v.signature().contains("PSS"), "{}", v.signature());

    // Stated salt 20 (or the default 20), signed with 32.
    for params in [
        pss_params(SHA256, SHA256, Some(20), None),
        pss_params(SHA256, SHA256, None, None),
        pss_params(SHA256, SHA256, Some(0), Some(1)),
        pss_params(SHA256, SHA256, Some(u32::MAX as u64), None),
    ] {
        let mut t = base.clone();
        t.sig_alg = params;
        let e = verdict(check(&sign_pss(&t, 32), &[], &anchors));
        assert!(matches!(e, TimestampError::BadSignature { .. }), "{e}");
    }
    // Salt 0: deterministic PSS, accepted when stated.
    let mut t = base.clone();
    t.sig_alg = pss_params(SHA256, SHA256, Some(0), None);
    accepted(check(&sign_pss(&t, 0), &[], &anchors));

    for params in [
        pss_params(SHA256, SHA1, Some(32), None),
        pss_params(SHA256, SHA384, Some(32), None),
        pss_params(SHA256, SHA256, Some(32), Some(2)),
        pss_params(SHA384, SHA384, Some(48), None),
        pss_params(SHA1, SHA1, Some(20), None),
        alg(RSASSA_PSS),
        alg_null(RSASSA_PSS),
        pss_params(SHA256, SHA256, Some(u32::MAX as u64 + 1), None),
    ] {
        let mut t = base.clone();
        t.sig_alg = params;
        let e = error(check(&sign_pss(&t, 32), &[], &anchors));
        assert!(matches!(e, TimestampError::SignatureAlgorithm(_)), "{e}");
    }
    // A PKCS#1 v1.5 signature presented as PSS, and the reverse.
    let mut t = base.clone();
    t.sig_alg = pss_params(SHA256, SHA256, Some(32), None);
    let e = verdict(check(&t.build(&rsa.key), &[], &anchors));
    assert!(matches!(e, TimestampError::BadSignature { .. }), "{e}");
    let e = verdict(check(&sign_pss(&base, 32), &[], &anchors));
    assert!(matches!(e, TimestampError::BadSignature { .. }), "{e}");
}

/// (r, s) as DER: `30 len 02 len r 02 len s`.
fn ecdsa_der(r: &[u8], s: &[u8]) -> Vec<u8> {
    seq(&[&uint(r), &uint(s)])
}

/// Non-canonical ECDSA signatures of an honest token: a leading zero too many in r, the
/// SEQUENCE length in long form, trailing bytes, r = 0, s = 0, a raw (r || s) signature.
/// Refused, by ring (P-256 with SHA-256) and RustCrypto (P-256 with SHA-512) alike.
#[test]
fn non_canonical_ecdsa_signatures_are_refused() {
    let w = world();
    let anchors = [w.root.anchor()];
    for (sig_oid, digest) in [(ECDSA_SHA256, SHA256), (ECDSA_SHA512, SHA512)] {
        let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
        t.sig_alg = alg(sig_oid);
        t.digest_alg = alg(digest);
        t.digest_algs = vec![alg(digest)];
        t.attrs.as_mut().unwrap()[1] = message_digest_attr(&digest_of(digest, &t.tst));
        let Key::P256(k) = &w.tsa.key else {
            unreachable!()
        };
        let sig: p256::ecdsa::Signature = k.sign_prehash(&digest_of(digest, &t.signed())).unwrap();
        let (r, s) = (sig.r().to_bytes(), sig.s().to_bytes());
        accepted(check(&t.with_signature(&ecdsa_der(&r, &s)), &[], &anchors));

        let mut padded_r = vec![0x02, (r.len() + 2) as u8, 0, 0];
        padded_r.extend_from_slice(&r);
        let mut long_form = vec![0x30, 0x81];
        long_form.extend_from_slice(&ecdsa_der(&r, &s)[1..]);
        let mut trailing = ecdsa_der(&r, &s);
        trailing.extend_from_slice(&[0, 0]);
        for bad in [
            seq(&[&padded_r, &uint(&s)]),
            long_form,
            trailing,
            ecdsa_der(&[0], &s),
            ecdsa_der(&r, &[0]),
            [r.as_slice(), s.as_slice()].concat(),
            vec![],
        ] {
            let e = verdict(check(&t.with_signature(&bad), &[], &anchors));
            assert!(matches!(e, TimestampError::BadSignature { .. }), "{e}");
        }
    }
}

/// High S: (r, n - s) is as valid an ECDSA signature as (r, s) (ECDSA, unlike Bitcoin's rule,
/// has no low-S form; OpenSSL, ring and RustCrypto all accept it). The verdict is the same: it
/// gives the attacker another encoding of the same token, no other date and no other signer.
#[test]
fn high_s_ecdsa_is_the_same_signature_and_the_same_verdict() {
    let w = world();
    let anchors = [w.root.anchor()];
    let t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    let Key::P256(k) = &w.tsa.key else {
        unreachable!()
    };
    let sig: p256::ecdsa::Signature = k.sign_prehash(&Sha256::digest(t.signed())).unwrap();
    let (r, s) = sig.split_scalars();
    let flipped = p256::ecdsa::Signature::from_scalars(r, -s).unwrap();
    let a = accepted(check(
        &t.with_signature(sig.to_der().as_bytes()),
        &[],
        &anchors,
    ));
    let b = accepted(check(
        &t.with_signature(flipped.to_der().as_bytes()),
        &[],
        &anchors,
    ));
    assert_eq!(a.info(), b.info());
    assert_eq!(a.tsa(), b.tsa());
}

/// Ed25519: S + L (a non-canonical S that cofactored verification would take) and a
/// signature of the wrong length are refused (`verify_strict`).
#[test]
fn non_canonical_ed25519_signatures_are_refused() {
    let w = world();
    let anchors = [w.root.anchor()];
    let tsa = Tsa::under(&w.root, Key::ed25519(4), "CN=Ed TSA");
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let sig = tsa.key.sign(&t.signed());
    accepted(check(&t.with_signature(&sig), &[], &anchors));
    // L, little-endian.
    let l: [u8; 32] = [
        0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7, 0xa2, 0xde, 0xf9, 0xde,
        0x14, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10,
    ];
    let mut bad = sig.clone();
    let mut carry = 0u16;
    for i in 0..32 {
        let v = u16::from(bad[32 + i]) + u16::from(l[i]) + carry;
        bad[32 + i] = v as u8;
        carry = v >> 8;
    }
    for bad in [bad, sig[..63].to_vec(), [sig.clone(), vec![0]].concat()] {
        let e = verdict(check(&t.with_signature(&bad), &[], &anchors));
        assert!(matches!(e, TimestampError::BadSignature { .. }), "{e}");
    }
}

/// A P-384 key signing with SHA-256 (sigstore does) is fine; a P-384 signature presented with
/// a P-256 key's certificate is refused.
#[test]
fn curve_and_hash_pairings_are_bound_to_the_certificate() {
    let w = world();
    let anchors = [w.root.anchor()];
    let p384 = Tsa::under(&w.root, Key::p384(3), "CN=P-384 TSA");
    let mut t = Token::honest(&p384, tst_info(GEN_TIME, None));
    t.sig_alg = alg(ECDSA_SHA256);
    t.digest_alg = alg(SHA256);
    t.digest_algs = vec![alg(SHA256)];
    t.attrs.as_mut().unwrap()[1] = message_digest_attr(&Sha256::digest(&t.tst));
    let Key::P384(k) = &p384.key else {
        unreachable!()
    };
    let sig: p384::ecdsa::Signature = k.sign_prehash(&Sha256::digest(t.signed())).unwrap();
    accepted(check(
        &t.with_signature(sig.to_der().as_bytes()),
        &[],
        &anchors,
    ));
    // The same signature under the P-256 TSA's identity.
    let mut t2 = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    let sig: p384::ecdsa::Signature = k.sign_prehash(&Sha256::digest(t2.signed())).unwrap();
    t2.sig_alg = alg(ECDSA_SHA256);
    let e = verdict(check(
        &t2.with_signature(sig.to_der().as_bytes()),
        &[],
        &anchors,
    ));
    assert!(matches!(e, TimestampError::BadSignature { .. }), "{e}");
}

// ------------------------------------------------------------------------------------------
// The TSA certificate's profile.
// ------------------------------------------------------------------------------------------

/// Certificates issued by the pinned root that are not TSA certificates: a server
/// certificate, no EKU, a non-critical timeStamping EKU, timeStamping beside another purpose,
/// anyExtendedKeyUsage, a CA, keyUsage keyCertSign only, a version 1 certificate, RSA-1024.
#[test]
fn certificates_without_the_tsa_profile_are_refused() {
    let w = world();
    let anchors = [w.root.anchor()];
    let key = Key::p256(9);
    let cases: Vec<(Vec<Vec<u8>>, NotTsaReason)> = vec![
        (
            vec![ext_key_usage(true, &[SERVER_AUTH])],
            NotTsaReason::NotOnlyTimeStamping,
        ),
        (vec![key_usage(&[0])], NotTsaReason::NoExtendedKeyUsage),
        (
            vec![ext_key_usage(false, &[TIME_STAMPING])],
            NotTsaReason::NotCritical,
        ),
        (
            vec![ext_key_usage(true, &[TIME_STAMPING, SERVER_AUTH])],
            NotTsaReason::NotOnlyTimeStamping,
        ),
        (
            vec![ext_key_usage(true, &["2.5.29.37.0"])],
            NotTsaReason::NotOnlyTimeStamping,
        ),
        (
            vec![
                basic_constraints(true, None),
                ext_key_usage(true, &[TIME_STAMPING]),
            ],
            NotTsaReason::IsCa,
        ),
        (
            vec![key_usage(&[5]), ext_key_usage(true, &[TIME_STAMPING])],
            NotTsaReason::KeyUsage,
        ),
    ];
    for (exts, why) in cases {
        let cert = w
            .root
            .spec("CN=Not a TSA", key.spki(), exts)
            .issue(&w.root.key);
        let tsa = Tsa {
            key: key.clone(),
            cert,
            chain: vec![],
        };
        let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
        match verdict(check(&t.build(&key), &[], &anchors)) {
            TimestampError::NotTsa { reason, .. } => assert_eq!(reason, why),
            e => panic!("{why:?}: {e}"),
        }
    }
}

/// A TSA certificate with an RSA key under 2048 bits: a negative verdict.
#[test]
fn a_weak_rsa_tsa_key_is_refused() {
    let w = world();
    let weak = KeyGenOptions::new(1024, Variant::Crt)
        .allow_insecure(true)
        .generate(&mut SeededEntropy::new(b"attacks: weak RSA"))
        .unwrap();
    let weak: &'static PrivateKey = Box::leak(Box::new(weak));
    let tsa = Tsa::under(&w.root, Key::Rsa(weak), "CN=Weak TSA");
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let e = verdict(check(&t.build(&tsa.key), &[], &[w.root.anchor()]));
    assert!(matches!(e, TimestampError::SignerKey { .. }), "{e}");
}

/// PEM smuggling. `TsaCertificate::from_bytes` (the profile and the key the token's
/// signature is checked with) and `path.rs` read certificates through
/// `hourglass_x509::Certificate::from_bytes`, which takes PEM *or* DER and looks for
/// `-----BEGIN ` anywhere in its input first. A DER certificate that carries, in any field
/// (here a private non-critical extension, as `copy_extensions` CAs, enterprise templates or
/// any free-text field let applicants choose), the PEM of another certificate is read as that
/// other certificate. So the verifier:
/// - finds the signer `C1` by issuer and serial (x509-cert, DER), hashes `C1` for the ESS
///   check, and validates `C1`'s path with webpki (which only asks of an end entity's EKU
///   that it be absent or allow timeStamping);
/// - but checks the TSA profile on, and the token's signature under the key of, `C2`: a
///   certificate nobody issued, holding the attacker's key.
///
/// The attacker needs any end-entity certificate under a pinned anchor, without the
/// timestamping purpose and of which they need not even hold the key, that embeds attacker
/// bytes. The verdict names `C2`'s subject as the TSA.
#[test]
fn pem_smuggled_into_a_certificate_replaces_its_key() {
    let w = world();
    let anchors = [w.root.anchor()];
    // C2: the attacker's, "issued" by nobody (its signature is never checked).
    let attacker_key = Key::p256(9);
    let c2 = CertSpec::new(
        "CN=DigiCert Timestamp 2025",
        "CN=Nobody",
        attacker_key.spki(),
        tsa_extensions(),
    )
    .issue(&attacker_key);
    let pem = hourglass_x509::to_pem(&c2);
    // C1: issued by the pinned root to someone else (the attacker holds neither its key nor
    // a timestamping purpose), with the PEM in a private extension.
    let someone = Key::p256(11);
    let c1 = w
        .root
        .spec(
            "CN=someone@example.org",
            someone.spki(),
            vec![
                key_usage(&[0]),
                ext(PRIVATE_EXTENSION, false, &tlv(0x0c, pem.as_bytes())),
            ],
        )
        .issue(&w.root.key);
    let victim = Tsa {
        key: attacker_key.clone(),
        cert: c1,
        chain: vec![],
    };
    let t = Token::honest(&victim, tst_info("20250101000000Z", None));
    let r = check(&t.build(&attacker_key), &[], &anchors);
    if let Ok(v) = &r {
        eprintln!(
            "ACCEPTED: tsa {:?}, path {:?}, signature {}",
            v.tsa(),
            v.path(),
            v.signature()
        );
    }
    refused(r);
}

/// PEM smuggling on the path: `path.rs` checks what webpki leaves to it (keyUsage keyCertSign
/// of each CA, the anchor's pathLenConstraint, counting CAs that are not self-issued) on
/// `Certificate::from_bytes` of each intermediate, so an intermediate that embeds the PEM of
/// a self-issued certificate with keyCertSign is judged as that certificate. A CA issued by a
/// `pathlen:0` root, whose own keyUsage is cRLSign only, then vouches for a TSA: both the
/// root's path length and the CA's keyUsage are bypassed.
#[test]
fn pem_smuggled_into_an_intermediate_hides_its_constraints() {
    let root = Ca::root(1, "CN=Pathlen Root", Some(0));
    let anchors = [root.anchor()];
    let decoy_key = Key::p256(21);
    let decoy = CertSpec::new(
        "CN=Pathlen Root",
        "CN=Pathlen Root",
        decoy_key.spki(),
        ca_extensions(None),
    )
    .issue(&decoy_key);
    let pem = hourglass_x509::to_pem(&decoy);
    let ca = root.sub_ca(
        12,
        "CN=Sub CA",
        vec![
            basic_constraints(true, None),
            key_usage(&[6]),
            ext(PRIVATE_EXTENSION, false, &tlv(0x0c, pem.as_bytes())),
        ],
    );
    let tsa = Tsa {
        chain: vec![ca.cert.clone()],
        ..Tsa::under(&ca, Key::p256(9), "CN=Rogue TSA")
    };
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let r = check(&t.build(&tsa.key), &[], &anchors);
    if let Ok(v) = &r {
        eprintln!("ACCEPTED: path {:?}", v.path());
    }
    refused(r);
}

// ------------------------------------------------------------------------------------------
// The path.
// ------------------------------------------------------------------------------------------

#[test]
fn a_self_signed_tsa_is_not_trusted() {
    let w = world();
    let key = Key::p256(9);
    let cert = CertSpec::new(
        "CN=Honest TSA",
        "CN=Honest TSA",
        key.spki(),
        tsa_extensions(),
    )
    .issue(&key);
    let tsa = Tsa {
        key: key.clone(),
        cert,
        chain: vec![],
    };
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let e = verdict(check(&t.build(&key), &[], &[w.root.anchor()]));
    assert!(
        matches!(
            e,
            TimestampError::Path {
                problem: PathProblem::NoPath { .. },
                ..
            }
        ),
        "{e}"
    );
}

/// A TSA certificate issued by the key of an end-entity certificate the root issued (a
/// server's, no basicConstraints or CA:FALSE): that issuer is not a CA.
#[test]
fn an_end_entity_cannot_issue_a_tsa_certificate() {
    let w = world();
    let anchors = [w.root.anchor()];
    for exts in [
        vec![ext_key_usage(false, &[SERVER_AUTH])],
        vec![
            basic_constraints(false, None),
            key_usage(&[0, 5]),
            ext_key_usage(false, &[SERVER_AUTH]),
        ],
    ] {
        let server = w.root.sub_ca(12, "CN=www.example.org", exts);
        let tsa = Tsa {
            chain: vec![server.cert.clone()],
            ..Tsa::under(&server, Key::p256(9), "CN=Rogue TSA")
        };
        let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
        let e = verdict(check(&t.build(&tsa.key), &[], &anchors));
        assert!(
            matches!(
                e,
                TimestampError::Path {
                    problem: PathProblem::IssuerNotCa,
                    ..
                }
            ),
            "{e}"
        );
    }
}

/// An intermediate CA restricted to serverAuth (EKU) issuing a TSA certificate; one without
/// keyCertSign.
#[test]
fn intermediates_restricted_to_other_uses_are_refused() {
    let w = world();
    let anchors = [w.root.anchor()];
    let mut tls_exts = ca_extensions(None);
    tls_exts.push(ext_key_usage(false, &[SERVER_AUTH]));
    let tls_ca = w.root.sub_ca(12, "CN=TLS CA", tls_exts);
    let tsa = Tsa {
        chain: vec![tls_ca.cert.clone()],
        ..Tsa::under(&tls_ca, Key::p256(9), "CN=Rogue TSA")
    };
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let e = verdict(check(&t.build(&tsa.key), &[], &anchors));
    assert!(
        matches!(
            e,
            TimestampError::Path {
                problem: PathProblem::Purpose,
                ..
            }
        ),
        "{e}"
    );

    let crl_ca = w.root.sub_ca(
        13,
        "CN=CRL signer",
        vec![basic_constraints(true, None), key_usage(&[6])],
    );
    let tsa = Tsa {
        chain: vec![crl_ca.cert.clone()],
        ..Tsa::under(&crl_ca, Key::p256(9), "CN=Rogue TSA")
    };
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let e = verdict(check(&t.build(&tsa.key), &[], &anchors));
    assert!(
        matches!(
            e,
            TimestampError::Path {
                problem: PathProblem::KeyUsage { .. },
                ..
            }
        ),
        "{e}"
    );
}

/// The same TLS-only CA pinned as the anchor itself (an intermediate pinned, as
/// `-partial_chain` allows). FORMATS.md section 18 says an extendedKeyUsage on a CA, when
/// stated, must allow timeStamping, and `path.rs` holds intermediates to it; the anchor's own
/// EKU is checked nowhere (webpki knows anchors by name and key; `AnchorCertificate` checks
/// CA and keyUsage only), so a TSA certificate under a CA restricted to serverAuth is
/// accepted once that CA is the pin.
#[test]
fn an_anchor_restricted_to_other_purposes_vouches_for_no_tsa() {
    let w = world();
    let mut tls_exts = ca_extensions(None);
    tls_exts.push(ext_key_usage(false, &[SERVER_AUTH]));
    let tls_ca = w.root.sub_ca(12, "CN=TLS CA", tls_exts);
    let tsa = Tsa::under(&tls_ca, Key::p256(9), "CN=Rogue TSA");
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let anchor = match AnchorCertificate::from_bytes(&tls_ca.cert) {
        Ok(a) => TsaAnchor::from(a),
        Err(_) => return,
    };
    refused(check(&t.build(&tsa.key), &[], &[anchor]));
}

/// pathLen: a `pathlen:0` root above a CA; a `pathlen:0` intermediate above another CA; and
/// what RFC 5280 allows (a self-issued CA below a `pathlen:0` root is not counted).
#[test]
fn path_length_constraints_hold() {
    let root = Ca::root(1, "CN=Pathlen Root", Some(0));
    let anchors = [root.anchor()];
    let ca = root.sub_ca(12, "CN=Sub CA", ca_extensions(None));
    let tsa = Tsa {
        chain: vec![ca.cert.clone()],
        ..Tsa::under(&ca, Key::p256(9), "CN=TSA")
    };
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let e = verdict(check(&t.build(&tsa.key), &[], &anchors));
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
    // Directly under the root: fine.
    let direct = Tsa::under(&root, Key::p256(9), "CN=TSA");
    accepted(check(
        &Token::honest(&direct, tst_info(GEN_TIME, None)).build(&direct.key),
        &[],
        &anchors,
    ));

    // An intermediate with pathlen:0 above another CA (webpki's own check).
    let root2 = Ca::root(2, "CN=Open Root", None);
    let ca0 = root2.sub_ca(12, "CN=CA pathlen 0", ca_extensions(Some(0)));
    let ca1 = ca0.sub_ca(13, "CN=CA below", ca_extensions(None));
    let tsa = Tsa {
        chain: vec![ca0.cert.clone(), ca1.cert.clone()],
        ..Tsa::under(&ca1, Key::p256(9), "CN=TSA")
    };
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let e = verdict(check(&t.build(&tsa.key), &[], &[root2.anchor()]));
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

    // A self-issued CA (the root's name, another key: a rollover) under the pathlen:0 root.
    let rollover = root.sub_ca(14, "CN=Pathlen Root", ca_extensions(None));
    let tsa = Tsa {
        chain: vec![rollover.cert.clone()],
        ..Tsa::under(&rollover, Key::p256(9), "CN=TSA")
    };
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    accepted(check(&t.build(&tsa.key), &[], &anchors));
}

/// Name constraints on an intermediate: a TSA certificate whose dNSName lies outside the
/// permitted subtree; any directoryName constraint (webpki does not implement them and fails
/// closed).
#[test]
fn name_constraints_hold() {
    let w = world();
    let anchors = [w.root.anchor()];
    let permitted =
        |base: Vec<u8>| ext(NAME_CONSTRAINTS, true, &seq(&[&tlv(0xa0, &seq(&[&base]))]));
    let mut dns = ca_extensions(None);
    dns.push(permitted(tlv(0x82, b"example.com")));
    let mut dir = ca_extensions(None);
    dir.push(permitted(tlv(0xa4, &name("O=Allowed"))));
    for (exts, san) in [(dns, Some(tlv(0x82, b"tsa.evil.org"))), (dir, None)] {
        let ca = w.root.sub_ca(12, "CN=Constrained CA", exts);
        let key = Key::p256(9);
        let mut tsa_exts = tsa_extensions();
        if let Some(san) = &san {
            tsa_exts.push(ext(SUBJECT_ALT_NAME, false, &seq(&[san])));
        }
        let cert = ca
            .spec("CN=TSA,O=Elsewhere", key.spki(), tsa_exts)
            .issue(&ca.key);
        let tsa = Tsa {
            key,
            cert,
            chain: vec![ca.cert.clone()],
        };
        let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
        let e = verdict(check(&t.build(&tsa.key), &[], &anchors));
        assert!(matches!(e, TimestampError::Path { .. }), "{e}");
    }
}

/// Validity at genTime: the TSA certificate not yet valid, expired; the anchor expired
/// before genTime while the TSA certificate is valid; an unknown critical extension.
#[test]
fn validity_at_gen_time_and_critical_extensions_hold() {
    let w = world();
    let anchors = [w.root.anchor()];
    let key = Key::p256(9);
    for (nb, na) in [(GEN_UNIX + 1, Y2030), (Y2024, GEN_UNIX - 1)] {
        let mut spec = w.root.spec("CN=TSA", key.spki(), tsa_extensions());
        spec.not_before = nb;
        spec.not_after = na;
        let tsa = Tsa {
            key: key.clone(),
            cert: spec.issue(&w.root.key),
            chain: vec![],
        };
        let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
        let e = verdict(check(&t.build(&key), &[], &anchors));
        assert!(
            matches!(
                e,
                TimestampError::Path {
                    problem: PathProblem::NotValidAt { .. },
                    ..
                }
            ),
            "{e}"
        );
    }

    // The anchor expired in 2025-01-01, the TSA certificate (issued before) valid to 2030.
    let rkey = Key::p256(20);
    let mut rspec = CertSpec::new(
        "CN=Old Root",
        "CN=Old Root",
        rkey.spki(),
        ca_extensions(None),
    );
    rspec.not_before = Y2020;
    rspec.not_after = 1_735_689_600;
    let old = Ca {
        cert: rspec.issue(&rkey),
        key: rkey,
        name: "CN=Old Root".into(),
    };
    let tsa = Tsa::under(&old, key.clone(), "CN=TSA");
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let e = verdict(check(&t.build(&key), &[], &[old.anchor()]));
    assert!(
        matches!(
            e,
            TimestampError::Path {
                problem: PathProblem::AnchorNotValidAt { .. },
                ..
            }
        ),
        "{e}"
    );
    // Before the anchor expired: accepted.
    let t = Token::honest(&tsa, tst_info("20241231235959Z", None));
    accepted(check(&t.build(&key), &[], &[old.anchor()]));

    let mut exts = tsa_extensions();
    exts.push(ext(PRIVATE_EXTENSION, true, &null()));
    let cert = w.root.spec("CN=TSA", key.spki(), exts).issue(&w.root.key);
    let tsa = Tsa {
        key: key.clone(),
        cert,
        chain: vec![],
    };
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let e = verdict(check(&t.build(&key), &[], &anchors));
    assert!(matches!(e, TimestampError::Path { .. }), "{e}");
}

/// A fractional genTime is checked at its whole second: a certificate whose notAfter is that
/// second is valid (RFC 5280: inclusive, to the second); one whose notBefore is the next
/// second is not.
#[test]
fn fractional_gen_time_is_checked_at_its_whole_second() {
    let w = world();
    let anchors = [w.root.anchor()];
    let key = Key::p256(9);
    let frac = "20250601120000.999999999Z";
    let mut spec = w.root.spec("CN=TSA", key.spki(), tsa_extensions());
    spec.not_after = GEN_UNIX;
    let tsa = Tsa {
        key: key.clone(),
        cert: spec.issue(&w.root.key),
        chain: vec![],
    };
    let v = accepted(check(
        &Token::honest(&tsa, tst_info(frac, None)).build(&key),
        &[],
        &anchors,
    ));
    assert_eq!(unix(v.info().latest()), GEN_UNIX + 1);
    let mut spec = w.root.spec("CN=TSA", key.spki(), tsa_extensions());
    spec.not_before = GEN_UNIX + 1;
    let tsa = Tsa {
        key: key.clone(),
        cert: spec.issue(&w.root.key),
        chain: vec![],
    };
    verdict(check(
        &Token::honest(&tsa, tst_info(frac, None)).build(&key),
        &[],
        &anchors,
    ));
}

/// Anchors that cannot vouch: not a CA, a CA whose keyUsage lacks keyCertSign.
#[test]
fn anchors_that_are_not_cas_are_refused() {
    let w = world();
    let key = Key::p256(20);
    let leaf = CertSpec::new("CN=Leaf", "CN=Leaf", key.spki(), vec![key_usage(&[0])]).issue(&key);
    assert!(matches!(
        AnchorCertificate::from_bytes(&leaf),
        Err(AnchorError::NotCa { .. })
    ));
    let no_sign = CertSpec::new(
        "CN=No sign",
        "CN=No sign",
        key.spki(),
        vec![basic_constraints(true, None), key_usage(&[6])],
    )
    .issue(&key);
    assert!(matches!(
        AnchorCertificate::from_bytes(&no_sign),
        Err(AnchorError::NoKeyCertSign { .. })
    ));
    // The honest TSA's own certificate pinned: not a CA.
    assert!(matches!(
        AnchorCertificate::from_bytes(&w.tsa.cert),
        Err(AnchorError::NotCa { .. })
    ));
}

/// An anchor of the root's name with another key; the root's name spelled by a TSA
/// certificate whose signature is by another key.
#[test]
fn a_name_without_the_key_vouches_for_nothing() {
    let w = world();
    let impostor = Ca::root(30, &w.root.name, None);
    let t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    let e = verdict(check(&t.build(&w.tsa.key), &[], &[impostor.anchor()]));
    assert!(matches!(e, TimestampError::Path { .. }), "{e}");
}

/// A bare RSA key anchor (an institution's): it vouches for certificates it signed, under any
/// issuer name; not for certificates another key signed under its name, nor through a CA it
/// did not sign.
#[test]
fn a_bare_key_anchor_vouches_only_for_what_it_signed() {
    let key = rsa_key();
    let anchor = TsaAnchor::Key {
        key: key.public().clone(),
        name: "institution.pub".into(),
    };
    let institution = Ca {
        key: Key::Rsa(key),
        name: "CN=Any Name At All".into(),
        cert: vec![],
    };
    let tsa = Tsa::under(&institution, Key::p256(9), "CN=Institution TSA");
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let v = accepted(check(
        &t.build(&tsa.key),
        &[],
        std::slice::from_ref(&anchor),
    ));
    assert_eq!(v.anchor(), "institution.pub");

    let other = Ca::root(31, "CN=Any Name At All", None);
    let rogue = Tsa::under(&other, Key::p256(9), "CN=Rogue TSA");
    let t = Token::honest(&rogue, tst_info(GEN_TIME, None));
    let e = verdict(check(
        &t.build(&rogue.key),
        &[],
        std::slice::from_ref(&anchor),
    ));
    assert!(matches!(e, TimestampError::Path { .. }), "{e}");
    // Through a CA certificate (with the rogue CA's own self-signed cert in the token).
    let rogue = Tsa {
        chain: vec![other.cert.clone()],
        ..rogue
    };
    let t = Token::honest(&rogue, tst_info(GEN_TIME, None));
    let e = verdict(check(&t.build(&rogue.key), &[], &[anchor]));
    assert!(matches!(e, TimestampError::Path { .. }), "{e}");
}

/// A path of seven CAs (webpki stops at six): refused, quickly.
#[test]
fn a_path_deeper_than_webpki_searches_is_refused() {
    let w = world();
    let mut cas = vec![w.root.clone()];
    for i in 0..7u8 {
        let next = cas
            .last()
            .unwrap()
            .sub_ca(40 + i, &format!("CN=CA {i}"), ca_extensions(None));
        cas.push(next);
    }
    let tsa = Tsa {
        chain: cas[1..].iter().map(|c| c.cert.clone()).collect(),
        ..Tsa::under(cas.last().unwrap(), Key::p256(9), "CN=Deep TSA")
    };
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    let r = check(&t.build(&tsa.key), &[], &[w.root.anchor()]);
    let e = verdict(r);
    assert!(matches!(e, TimestampError::Path { .. }), "{e}");
}

// ------------------------------------------------------------------------------------------
// genTime and accuracy: the date consumers rely on.
// ------------------------------------------------------------------------------------------

fn accuracy(seconds: Option<&[u8]>, millis: Option<&[u8]>, micros: Option<&[u8]>) -> Vec<u8> {
    let mut parts: Vec<Vec<u8>> = Vec::new();
    if let Some(s) = seconds {
        parts.push(tlv(0x02, s));
    }
    if let Some(m) = millis {
        parts.push(tlv(0x80, m));
    }
    if let Some(m) = micros {
        parts.push(tlv(0x81, m));
    }
    let refs: Vec<&[u8]> = parts.iter().map(Vec::as_slice).collect();
    seq(&refs)
}

/// Accuracies that would move `latest` back or overflow it: negative millis, negative micros,
/// 1000 millis, negative seconds, seconds in a non-minimal encoding. All errors. A huge
/// accuracy saturates (later, never earlier) without a panic.
#[test]
fn accuracies_that_could_move_the_date_back_are_refused() {
    let w = world();
    let anchors = [w.root.anchor()];
    let sign =
        |acc: Vec<u8>| Token::honest(&w.tsa, tst_info(GEN_TIME, Some(&acc))).build(&w.tsa.key);
    for acc in [
        accuracy(None, Some(&[0xff]), None),
        accuracy(None, None, Some(&[0xfc, 0x18])),
        accuracy(None, Some(&[0x03, 0xe8]), None),
        accuracy(Some(&[0xff]), None, None),
        accuracy(Some(&[0x00, 0x01]), None, None),
        accuracy(Some(&[0x80, 0, 0, 0, 0, 0, 0, 0]), None, None),
    ] {
        let e = error(check(&sign(acc.clone()), &[], &anchors));
        assert!(
            matches!(
                e,
                TimestampError::Malformed { .. } | TimestampError::NotDer { .. }
            ),
            "{}: {e}",
            hex::encode(&acc)
        );
    }
    // u64::MAX seconds: past the year 9999, which no date a verdict writes reaches: an error,
    // never a date clamped earlier.
    let e = error(check(
        &sign(accuracy(
            Some(&[0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]),
            None,
            None,
        )),
        &[],
        &anchors,
    ));
    assert!(e.to_string().contains("9999"), "{e}");
    // 0 millis, 0 micros (outside the RFC's 1..999): read as absent, never negative.
    let v = accepted(check(
        &sign(accuracy(Some(&[1]), Some(&[0]), Some(&[0]))),
        &[],
        &anchors,
    ));
    assert_eq!(unix(v.info().latest()), GEN_UNIX + 1);
    // 999 ms 999 us.
    let v = accepted(check(
        &sign(accuracy(None, Some(&[0x03, 0xe7]), Some(&[0x03, 0xe7]))),
        &[],
        &anchors,
    ));
    assert_eq!(unix(v.info().latest()), GEN_UNIX + 1);
    // An empty Accuracy: zero, so latest is genTime itself (a whole second).
    let v = accepted(check(&sign(accuracy(None, None, None)), &[], &anchors));
    assert_eq!(unix(v.info().latest()), GEN_UNIX);
}

/// Fractional genTimes: nine digits, one digit, and the forms DER forbids (a trailing zero,
/// ten digits, a comma, no Z, a time zone). `latest` is never before genTime.
#[test]
fn fractional_gen_times_never_date_earlier_than_they_say() {
    let w = world();
    let anchors = [w.root.anchor()];
    let sign = |g: &str, acc: Option<Vec<u8>>| {
        Token::honest(&w.tsa, tst_info(g, acc.as_deref())).build(&w.tsa.key)
    };
    for (g, acc, want) in [
        ("20250601120000.000000001Z", None, GEN_UNIX + 1),
        ("20250601120000.999999999Z", None, GEN_UNIX + 1),
        (
            "20250601120000.5Z",
            Some(accuracy(None, Some(&[0x01, 0xf4]), None)),
            GEN_UNIX + 1,
        ),
        (
            "20250601120000.5Z",
            Some(accuracy(None, Some(&[0x01, 0xf5]), None)),
            GEN_UNIX + 2,
        ),
        (
            "20250601120000.000000001Z",
            Some(accuracy(None, None, None)),
            GEN_UNIX + 1,
        ),
    ] {
        let v = accepted(check(&sign(g, acc), &[], &anchors));
        assert!(v.info().latest() >= v.info().gen_time(), "{g}");
        assert_eq!(unix(v.info().latest()), want, "{g}");
    }
    for g in [
        "20250601120000.50Z",
        "20250601120000.1234567891Z",
        "20250601120000,5Z",
        "20250601120000.5",
        "20250601120000.5+0100",
        "20250601120000+0100",
        "202506011200Z",
        "20250601120060Z",
        "20250601120000.Z",
        "20250601120000.-5Z",
        "20250601120000. 5Z",
    ] {
        let e = error(check(&sign(g, None), &[], &anchors));
        assert!(matches!(e, TimestampError::NotDer { .. }), "{g}: {e}");
    }
}

/// `latest` saturates at 9999-12-31T23:59:59Z (the last RFC 3339 second), which is *before*
/// a genTime of 9999-12-31T23:59:59.5Z, and before genTime + accuracy for any genTime within
/// accuracy of the end of 9999: the token then makes the data look older than it proves. A
/// certificate valid then is common (notAfter 99991231235959Z is RFC 5280's "no expiration").
/// It takes a TSA that signs such a genTime (a broken or compromised clock), so the severity
/// is low, but `latest() >= gen_time()` is the invariant consumers rely on.
#[test]
fn latest_is_never_before_gen_time_even_at_the_end_of_time() {
    let root = Ca::root(1, "CN=Forever Root", None);
    let key = Key::p256(9);
    let mut spec = root.spec("CN=Forever TSA", key.spki(), tsa_extensions());
    spec.not_after = 253_402_300_799;
    let tsa = Tsa {
        key: key.clone(),
        cert: spec.issue(&root.key),
        chain: vec![],
    };
    let mut root_spec = CertSpec::new(
        "CN=Forever Root",
        "CN=Forever Root",
        root.key.spki(),
        ca_extensions(None),
    );
    root_spec.not_before = Y2020;
    root_spec.not_after = 253_402_300_799;
    let root = Ca {
        cert: root_spec.issue(&root.key),
        ..root
    };
    let t = Token::honest(&tsa, tst_info("99991231235959.5Z", None));
    let token = t.build(&key);
    // Refusing such a token is a fix too.
    let Ok(v) = check(&token, &[], &[root.anchor()]) else {
        return;
    };
    let info = v.info();
    assert!(
        info.latest() >= info.gen_time(),
        "latest {} is before genTime {}",
        unix(info.latest()),
        info.gen_time_rfc3339()
    );
}

/// TokenInfo read unverified never panics on the same inputs.
#[test]
fn token_info_of_forged_tokens_does_not_panic() {
    let w = world();
    for g in [
        "99991231235959.999999999Z",
        "19700101000000Z",
        "20250601120000.1Z",
    ] {
        let token = Token::honest(
            &w.tsa,
            tst_info(g, Some(&accuracy(Some(&[0x7f; 8]), None, None))),
        )
        .build(&w.tsa.key);
        // Either read (and its dates are ordered) or refused: never a panic.
        match TokenInfo::of_token(&token) {
            Ok(info) => {
                assert!(info.latest() >= info.gen_time(), "{g}");
                let _ = (info.latest_unix(), info.gen_time_rfc3339());
            }
            Err(e) => assert!(e.to_string().contains("9999"), "{g}: {e}"),
        }
    }
}

// ------------------------------------------------------------------------------------------
// Size and work: what one token (at most 256 KiB) can make the verifier do before any
// signature by a trusted key is checked.
// ------------------------------------------------------------------------------------------

/// Over 256 KiB: an error before anything is parsed.
#[test]
fn an_oversized_token_is_an_error() {
    let w = world();
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.certs = vec![w.tsa.cert.clone(); 1];
    t.certs.push(octets(&vec![0u8; 300 * 1024]));
    let e = error(check(&t.build(&w.tsa.key), &[], &[w.root.anchor()]));
    assert!(matches!(e, TimestampError::TooLarge { .. }), "{e}");
}

/// How long the verifier takes on a token whose SignedData holds `n` digest algorithms, all
/// distinct, in descending order.
fn many_digest_algorithms(n: usize) -> (Vec<u8>, TsaAnchor) {
    let w = world();
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    let mut algs: Vec<Vec<u8>> = (0..n)
        .map(|i| {
            let i = i as u32;
            // Three content bytes, each under 128: always a valid OID, all distinct.
            let body = [
                (i >> 14 & 0x7f) as u8,
                (i >> 7 & 0x7f) as u8,
                (i & 0x7f) as u8,
            ];
            seq(&[&tlv(0x06, &body)])
        })
        .collect();
    algs.sort();
    algs.reverse();
    algs.push(alg(SHA256));
    t.digest_algs = algs;
    (t.build(&w.tsa.key), w.root.anchor())
}

/// DoS: `der`'s `SetOfVec` decodes a SET OF by insertion sort (`der_sort`), quadratic in the
/// number of elements when they come in descending order. A 256 KiB token can hold ~36,000
/// AlgorithmIdentifiers in its digestAlgorithms, which `SignedData::from_der` sorts before
/// anything is checked: seconds of CPU per token, from anyone (the token need not be signed
/// by anything trusted). The same holds for the certificate set, the signer infos, the
/// signed attributes and every RDN of every certificate's names.
#[test]
fn many_digest_algorithms_cost_no_more_than_a_token_should() {
    let (token, anchor) = many_digest_algorithms(36_000);
    assert!(token.len() < 256 * 1024, "{}", token.len());
    let r = check(&token, &[], &[anchor]);
    // Counted before the set is decoded (and sorted): an error naming the excess.
    let e = error(r);
    assert!(e.to_string().contains("digest algorithms"), "{e}");
}

/// The same sort inside a certificate of the token: a subject of one RDN holding ~19,000
/// attribute values in descending order. `SignedData::from_der` decodes every certificate of
/// the set, so a cap on the number of digest algorithms alone does not stop it (a cap on each
/// certificate's size does).
#[test]
fn a_huge_rdn_costs_no_more_than_a_token_should() {
    let w = world();
    let mut avas: Vec<Vec<u8>> = (0..19_000u32)
        .map(|i| seq(&[&oid("2.5.4.3"), &tlv(0x0c, &i.to_be_bytes()[1..])]))
        .collect();
    avas.sort();
    avas.reverse();
    let refs: Vec<&[u8]> = avas.iter().map(Vec::as_slice).collect();
    let mut spec = w.root.spec("CN=x", Key::p256(9).spki(), tsa_extensions());
    spec.subject = seq(&[&set(&refs)]);
    let huge = spec.issue(&w.root.key);
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.certs.push(huge);
    let token = t.build(&w.tsa.key);
    assert!(token.len() < 256 * 1024, "{}", token.len());
    // Each certificate of a token is measured before the set is decoded: an error.
    let e = error(check(&token, &[], &[w.root.anchor()]));
    assert!(e.to_string().contains("larger than any authority's"), "{e}");
}

/// Up to the limit of digest algorithms a token is read; one more is an error.
#[test]
fn a_few_digest_algorithms_are_read() {
    let (token, anchor) = many_digest_algorithms(7);
    accepted(check(&token, &[], &[anchor]));
    let (token, anchor) = many_digest_algorithms(8);
    let e = error(check(&token, &[], &[anchor]));
    assert!(e.to_string().contains("digest algorithms"), "{e}");
}

/// DoS: `without_duplicate_certificates` looks for repeats with `Vec::contains`, quadratic in
/// the number of elements of the certificate set; it runs on every token before the
/// SignedData is decoded. 50,000 distinct 5-byte TLVs in the set.
#[test]
fn many_tiny_certificates_cost_no_more_than_a_token_should() {
    let w = world();
    let mut t = Token::honest(&w.tsa, tst_info(GEN_TIME, None));
    t.certs = (0..50_000u32)
        .map(|i| tlv(0x04, &i.to_be_bytes()[1..]))
        .collect();
    let token = t.build(&w.tsa.key);
    assert!(token.len() < 256 * 1024, "{}", token.len());
    // Counted before anything else is done with them: an error.
    let e = error(check(&token, &[], &[w.root.anchor()]));
    assert!(e.to_string().contains("more certificates"), "{e}");
}

/// A token signed by the attacker's own key whose TSA certificate names `CN=Loop` as its
/// issuer, carrying `looping` CA certificates all named `CN=Loop` and issued by `CN=Loop`,
/// each with its own key, and `bystanders` CA certificates of other names, each with
/// `extensions` small extensions. No signature on any of them is valid (webpki checks
/// signatures only once a path reaches an anchor; none does).
fn loop_token(looping: usize, bystanders: usize, extensions: usize) -> (Vec<u8>, TsaAnchor) {
    let w = world();
    let junk = Key::p256(60);
    let spki = |i: usize| {
        // Distinct keys (webpki skips a certificate whose key and name are already on the
        // path); a point off the curve is never parsed.
        let mut spki = junk.spki();
        let last = spki.len() - 1;
        spki[last - 1] = (i >> 8) as u8;
        spki[last] = i as u8;
        spki
    };
    let mut certs = Vec::new();
    for i in 0..looping {
        let mut spec = CertSpec::new("CN=Loop", "CN=Loop", spki(i), ca_extensions(None));
        spec.serial = (i as u32 + 1).to_be_bytes().to_vec();
        certs.push(spec.issue(&junk));
    }
    for i in 0..bystanders {
        let mut exts = ca_extensions(None);
        for j in 0..extensions {
            let id = format!("1.3.6.1.4.1.55555.2.{j}");
            exts.push(ext(&id, false, &null()));
        }
        let subject = format!("CN=Bystander {i}");
        let spec = CertSpec::new(&subject, "CN=Elsewhere", spki(i), exts);
        certs.push(spec.issue(&junk));
    }
    let key = Key::p256(9);
    let tsa_cert =
        CertSpec::new("CN=Loop TSA", "CN=Loop", key.spki(), tsa_extensions()).issue(&junk);
    let tsa = Tsa {
        key: key.clone(),
        cert: tsa_cert,
        chain: certs,
    };
    let t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    (t.build(&key), w.root.anchor())
}

/// DoS: rustls-webpki's path search. webpki charges its budget (200,000 build calls) only for
/// candidates whose name matches, but parses every intermediate at every step of the search.
/// A token signed by the attacker's own key carries 12 same-named CAs (so that the search
/// spends its whole budget on paths of up to six of them) and a few hundred bystander
/// certificates of other names (each parsed 200,000 times, free of charge). Nothing is trusted
/// and no signature is checked, yet one token cost seconds to minutes. Now a token carries at
/// most 32 certificates (an error beyond), and of those only the ones that can stand on a path
/// from the signer (by name, at most 4 of a name, 16 in all) reach webpki.
#[test]
fn many_certificates_cost_no_more_than_a_token_should() {
    let (token, anchor) = loop_token(12, 200, 4);
    assert!(token.len() < 256 * 1024, "{}", token.len());
    let e = error(check(&token, &[], &[anchor]));
    assert!(e.to_string().contains("more certificates"), "{e}");
    // Within the limit: 12 same-named CAs and 18 bystanders reach webpki as 4 candidates.
    let (token, anchor) = loop_token(12, 18, 4);
    let e = verdict(check(&token, &[], &[anchor]));
    assert!(matches!(e, TimestampError::Path { .. }), "{e}");
}

/// A handful of same-named CAs and bystanders: cheap, refused.
#[test]
fn a_few_same_named_cas_are_cheap() {
    let (token, anchor) = loop_token(4, 4, 1);
    let r = check(&token, &[], &[anchor]);
    let e = verdict(r);
    assert!(matches!(e, TimestampError::Path { .. }), "{e}");
}

/// An RSA "TSA certificate" of the attacker's own making (nobody issued it: its signature is
/// junk) with a 32,768-bit modulus (the largest `hourglass_x509` reads) and a public exponent
/// just as long (nothing bounds it but `e < n`). The token's signature is checked before the
/// path, so one modular exponentiation with a 32,768-bit exponent is done for a token nobody
/// trusted.
fn huge_rsa_token(bits: usize) -> (Vec<u8>, TsaAnchor) {
    let w = world();
    let bytes = bits / 8;
    let mut n = vec![0xffu8; bytes];
    n[bytes - 1] = 0xfb; // odd
    let mut e = vec![0xabu8; bytes];
    e[0] = 0x7f;
    e[bytes - 1] = 0x01; // odd, < n
    let rsa_public = seq(&[&uint(&n), &uint(&e)]);
    let spki = seq(&[&alg_null(RSA_ENCRYPTION), &bits_of(&rsa_public)]);
    let junk = Key::p256(60);
    let cert = CertSpec::new("CN=Huge TSA", "CN=Nobody", spki, tsa_extensions()).issue(&junk);
    let tsa = Tsa {
        key: junk,
        cert,
        chain: vec![],
    };
    let mut t = Token::honest(&tsa, tst_info(GEN_TIME, None));
    t.sig_alg = alg_null(SHA256_RSA);
    let mut sig = vec![0x5au8; bytes];
    sig[0] = 0x12;
    (t.with_signature(&sig), w.root.anchor())
}

fn bits_of(b: &[u8]) -> Vec<u8> {
    bits(b)
}

/// Now an RSA key over 8,192 bits, or with an exponent over 64 bits, is no key this verifier
/// reads (an error, before any exponentiation), and the path is checked before the token's
/// signature, so an unissued key is never used.
#[test]
fn a_huge_rsa_key_costs_no_more_than_a_token_should() {
    let (token, anchor) = huge_rsa_token(32_768);
    let e = error(check(&token, &[], &[anchor]));
    assert!(matches!(e, TimestampError::SignerKey { .. }), "{e}");
}

/// The same shape at 4,096 bits: the exponent alone is refused.
#[test]
fn a_large_rsa_exponent_at_4096_bits_is_refused() {
    let (token, anchor) = huge_rsa_token(4096);
    let e = error(check(&token, &[], &[anchor]));
    assert!(
        matches!(e, TimestampError::SignerKey { .. }) && e.to_string().contains("exponent"),
        "{e}"
    );
}

/// A bare `verify_token` with no anchors is an error before anything else; garbage is an
/// error; a reply that is not granted is an error.
#[test]
fn garbage_and_empty_anchor_lists_are_errors() {
    let w = world();
    let token = Token::honest(&w.tsa, tst_info(GEN_TIME, None)).build(&w.tsa.key);
    assert!(matches!(
        verify_token(&token, &[], &[]),
        Err(TimestampError::NoAnchor)
    ));
    for junk in [vec![], vec![0x30], vec![0x30, 0x80, 0, 0], vec![0xff; 100]] {
        let e = error(check(&junk, &[], &[w.root.anchor()]));
        assert!(!e.is_verdict());
    }
    // Truncated anywhere: never a panic, never accepted.
    for cut in (0..token.len()).step_by(7) {
        assert!(check(&token[..cut], &[], &[w.root.anchor()]).is_err());
    }
    // One bit flipped anywhere: never accepted, never a panic.
    for i in (0..token.len()).step_by(3) {
        let mut bad = token.clone();
        bad[i] ^= 0x01;
        if let Ok(v) = check(&bad, &[], &[w.root.anchor()]) {
            // A flip in the unsigned part that still decodes to the same token is fine only
            // if what it states is unchanged.
            assert_eq!(v.info().gen_time_text(), GEN_TIME, "bit {i}");
            assert_eq!(v.tsa(), "CN=Honest TSA", "bit {i}");
        }
    }
}

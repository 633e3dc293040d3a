//! Time-lock certificates (paper section V-A): X.509 v3 certificates that carry a puzzle public
//! key `(n, t, z)`, signed by an institution's certificate authority.
//!
//! The public exponent `e~ = 2^t + z` has about `t` bits, far too many to store, so the
//! certificate's ordinary `rsaEncryption` key holds the odd integer
//! `E = z * 2^65 + t * 2 + 1` instead ([`encode_exponent`], [`decode_exponent`]). A
//! subjectAltName URI `urn:hourglass:timelock:v1:<fingerprint>` marks the certificate as a
//! time-lock certificate, and a non-critical private extension
//! ([`TIMELOCK_PARAMETERS_OID`]) carries the puzzle's metadata (duration, rate, hash, ...).
//! Standard tools read such a certificate like any other: `openssl x509 -text` prints it and
//! `openssl verify` accepts it. The exact profile is in `docs/FORMATS.md`.
//!
//! The institution's CA is `hourglass-x509`'s [`CaCertificate`], re-exported here.
//!
//! - [`PuzzleCertificate::issue`] certifies a puzzle key; [`verify_puzzle_certificate`] checks a
//!   certificate against a CA and rebuilds the [`PuzzlePublicKey`].
//!
//! ```
//! use hourglass_arith::entropy::SeededEntropy;
//! use hourglass_rsa::{KeyGenOptions, Variant};
//! use hourglass_timelock::certificate::{
//!     verify_puzzle_certificate, CaCertificate, CertificateOptions, PuzzleCertificate,
//! };
//! use hourglass_timelock::PuzzleKeyGen;
//!
//! let mut rng = SeededEntropy::new(b"certificate doc example, insecure");
//! let ca_key = KeyGenOptions::new(1024, Variant::Crt).generate(&mut rng).unwrap();
//! let ca = CaCertificate::self_signed(&ca_key, &CertificateOptions::days("Example U", 3650), &mut rng)
//!     .unwrap();
//! let puzzle = PuzzleKeyGen::new(1024, 1000).generate(&mut rng).unwrap();
//! let cert = PuzzleCertificate::issue(
//!     puzzle.public(), &ca, &ca_key, &CertificateOptions::days("Example U", 365), &mut rng,
//! )
//! .unwrap();
//! let pem = cert.to_pem();
//! let back = verify_puzzle_certificate(pem.as_bytes(), &ca, std::time::SystemTime::now()).unwrap();
//! assert_eq!(&back, puzzle.public());
//! ```

use std::time::SystemTime;

use der::asn1::{Ia5String, OctetString};
use der::{Decode, Encode, Sequence, Tag};
use hourglass_arith::entropy::EntropySource;
use hourglass_arith::Integer;
use hourglass_rsa::PrivateKey;
use hourglass_x509::key::{key_identifier, rsa_components, rsa_spki};
use hourglass_x509::name::{check_common_name, make_name};
use hourglass_x509::oid::{
    AT_COMMON_NAME, AT_SERIAL_NUMBER, CE_AUTHORITY_KEY_IDENTIFIER, CE_BASIC_CONSTRAINTS,
    CE_KEY_USAGE, CE_SUBJECT_ALT_NAME, CE_SUBJECT_KEY_IDENTIFIER,
};
use hourglass_x509::{Certificate, EncodedItem, Extension, OptionProblem, RawExtension};
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, KeyUsage, KeyUsages, SubjectAltName,
    SubjectKeyIdentifier,
};
use x509_cert::Version;

pub use hourglass_x509::oid::HOURGLASS_OID_ARC;
pub use hourglass_x509::{
    looks_like_certificate, CaCertificate, CertRole, CertificateError, CertificateOptions,
    ValidityPeriod,
};

use crate::key::{PuzzleHash, PuzzleMeta, PuzzlePublicKey};

/// OID of the time-lock parameters extension: [`HOURGLASS_OID_ARC`]`.1`.
///
/// Its arc does not fit the 32-bit arcs of the `const-oid` crate, so it is given as text here
/// and handled as raw DER bytes inside this module.
pub const TIMELOCK_PARAMETERS_OID: &str = "2.25.306263111566275780816363928834165067171.1";

/// The DER content octets (without tag and length) of [`TIMELOCK_PARAMETERS_OID`].
pub const TIMELOCK_PARAMETERS_OID_DER: [u8; 21] = [
    0x69, 0x83, 0xcc, 0xe8, 0x90, 0xcd, 0xda, 0x8c, 0xe2, 0x85, 0xc7, 0x85, 0xd7, 0x8f, 0xb8, 0xd3,
    0xa9, 0xb9, 0x9b, 0x23, 0x01,
];

/// The subjectAltName URI that marks a time-lock certificate is this prefix followed by the
/// puzzle key's fingerprint ([`PuzzlePublicKey::fingerprint_hex`], 64 lowercase hex digits).
pub const TIMELOCK_URN_PREFIX: &str = "urn:hourglass:timelock:v1:";

/// Version of the time-lock parameters extension.
/// Version 2: the certified key uses the full-domain inputs of puzzle format version 2.
const PARAMETERS_VERSION: u8 = 2;

/// Why a well-formed certificate is not a time-lock certificate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotTimeLockReason {
    /// A version 1 or 2 certificate (no extensions).
    #[error("an X.509 version 1 or 2 certificate has no extensions, so no time-lock marker")]
    OldX509,
    /// A CA certificate.
    #[error("this is a CA certificate, not a puzzle key")]
    IsCa,
    /// No time-lock URI in the subjectAltName.
    #[error("its subjectAltName has no {TIMELOCK_URN_PREFIX}... URI (an ordinary certificate?)")]
    NoUri,
}

/// Why an exponent is not a time-lock exponent `E = z * 2^65 + t * 2 + 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ExponentProblem {
    /// Zero or negative.
    #[error("E must be positive")]
    NotPositive,
    /// Even.
    #[error("E is even; a time-lock exponent is z * 2^65 + t * 2 + 1")]
    Even,
    /// Below 2^65: no room for `z`.
    #[error(
        "E is below 2^65, so it holds no z; an ordinary RSA exponent is not a time-lock exponent"
    )]
    NoZ,
    /// `t` is 0.
    #[error("t is 0; a puzzle needs at least one squaring")]
    ZeroT,
}

/// Why the time-lock parameters extension or marker is not valid.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParameterProblem {
    /// The parameters extension is missing.
    #[error("the time-lock parameters extension {TIMELOCK_PARAMETERS_OID} is missing")]
    Missing,
    /// The extension does not decode.
    #[error("extension: {0}")]
    Der(#[source] der::Error),
    /// Version 1 parameters (refused: its inputs can be forged).
    #[error("version 1 certifies a key whose puzzle inputs can be forged from parallel precomputation; ask the institution for a version-2 certificate")]
    Version1,
    /// A version this one does not read.
    #[error("unsupported version {found}")]
    UnsupportedVersion {
        /// The version in the extension.
        found: u8,
    },
    /// A `t` in the extension that is not the one of the exponent.
    #[error("the extension says t = {extension} but the exponent E holds t = {exponent}")]
    TMismatch {
        /// `t` in the extension.
        extension: u64,
        /// `t` in the exponent.
        exponent: u64,
    },
    /// A decimal field that is not a finite decimal number.
    #[error("{field} '{text}' is not a decimal number")]
    NotNumber {
        /// The field (`durationSeconds`, `rate`).
        field: &'static str,
        /// Its text.
        text: String,
    },
    /// A document hash that is unknown or too weak.
    #[error(transparent)]
    Hash(#[from] crate::key::HashNameError),
    /// A time-lock URI without a fingerprint.
    #[error("the time-lock URI '{uri}' does not end in a 64-digit hex fingerprint")]
    BadUri {
        /// The URI.
        uri: String,
    },
    /// A marked fingerprint that is not the certified key's.
    #[error("the subjectAltName names puzzle {marked}, but the certified key is {certified}")]
    FingerprintMismatch {
        /// The fingerprint in the URI.
        marked: String,
        /// The certified key's fingerprint.
        certified: String,
    },
}

/// Why a time-lock certificate could not be issued, read or trusted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PuzzleCertificateError {
    /// The certificate itself: malformed, not issued or signed by the CA, not valid now, or the
    /// CA key and certificate disagree.
    #[error(transparent)]
    Certificate(#[from] CertificateError),
    /// A well-formed certificate without the time-lock marker (an ordinary certificate).
    #[error("not a time-lock certificate: {0}")]
    NotTimeLock(#[source] NotTimeLockReason),
    /// The public exponent is not a valid `E = z * 2^65 + t * 2 + 1`.
    #[error("invalid time-lock exponent E: {0}")]
    BadExponent(#[source] ExponentProblem),
    /// The time-lock parameters extension or marker is malformed or disagrees with the key.
    #[error("invalid time-lock parameters: {0}")]
    BadParameters(#[source] ParameterProblem),
    /// The certified values do not form a valid puzzle key.
    #[error(transparent)]
    Key(#[from] crate::Error),
}

impl PuzzleCertificateError {
    /// Whether this is a negative verdict on a readable certificate (another issuer, a bad
    /// signature, not valid at the time checked, not a time-lock certificate or a forged
    /// marker), rather than input that could not be read or a failure to issue.
    pub fn is_verdict(&self) -> bool {
        match self {
            PuzzleCertificateError::Certificate(e) => e.is_verdict(),
            PuzzleCertificateError::NotTimeLock(_)
            | PuzzleCertificateError::BadExponent(_)
            | PuzzleCertificateError::BadParameters(_)
            | PuzzleCertificateError::Key(_) => false,
        }
    }
}

/// Result alias for time-lock certificates.
pub type Result<T> = std::result::Result<T, PuzzleCertificateError>;

fn encoding(what: EncodedItem) -> impl Fn(der::Error) -> PuzzleCertificateError {
    move |source| CertificateError::InvalidOptions(OptionProblem::Encode { what, source }).into()
}

/// `E = z * 2^65 + t * 2 + 1`: the puzzle exponent `2^t + z` in the odd integer stored in a
/// time-lock certificate (bits 1..=64 hold `t`, bits 65 and up hold `z`).
pub fn encode_exponent(t: u64, z: &Integer) -> Integer {
    (Integer::from(z << 65u32) | (Integer::from(t) << 1u32)) + 1u32
}

/// Splits a certificate exponent `E` into `(t, z)`. Refuses an even `E` (not a time-lock
/// exponent), `E < 2^65` (no room for `z >= 1`), and `t = 0`.
pub fn decode_exponent(e: &Integer) -> Result<(u64, Integer)> {
    let bad = PuzzleCertificateError::BadExponent;
    if *e <= 0 {
        return Err(bad(ExponentProblem::NotPositive));
    }
    if e.is_even() {
        return Err(bad(ExponentProblem::Even));
    }
    if e.significant_bits() <= 65 {
        return Err(bad(ExponentProblem::NoZ));
    }
    // The 64 bits above bit 0: always fits a u64.
    let t = Integer::from(e >> 1u32).keep_bits(64).to_u64_wrapping();
    if t == 0 {
        return Err(bad(ExponentProblem::ZeroT));
    }
    let z = Integer::from(e >> 65u32);
    Ok((t, z))
}

/// The private extension: the puzzle's metadata (see docs/FORMATS.md).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct TimeLockParameters {
    version: u8,
    squarings: u64,
    duration_seconds: String,
    rate: String,
    rate_measured: bool,
    hash: String,
    issuer: String,
    created: String,
}

/// A time-lock certificate: an X.509 v3 certificate for a puzzle public key.
#[derive(Debug, Clone)]
pub struct PuzzleCertificate {
    cert: Certificate,
}

impl PuzzleCertificate {
    /// Certifies `key` with the CA: subject `CN=<common name>, serialNumber=<fingerprint>`,
    /// the exponent `E = z * 2^65 + t * 2 + 1` in an `rsaEncryption` key, the time-lock URI in
    /// the subjectAltName, the metadata in the parameters extension, keyUsage digitalSignature
    /// and dataEncipherment, key identifiers, a random serial number; signed with
    /// sha256WithRSAEncryption. Refuses a CA key that is not the CA certificate's, and a CA
    /// certificate that is not valid now.
    pub fn issue(
        key: &PuzzlePublicKey,
        ca: &CaCertificate,
        ca_key: &PrivateKey,
        options: &CertificateOptions,
        rng: &mut dyn EntropySource,
    ) -> Result<Self> {
        check_common_name(&options.common_name)?;
        let fingerprint = key.fingerprint_hex();
        let subject = make_name(&[
            (AT_COMMON_NAME, Tag::Utf8String, &options.common_name),
            (AT_SERIAL_NUMBER, Tag::PrintableString, &fingerprint),
        ])?;
        let spki = rsa_spki(key.n(), &encode_exponent(key.t(), key.z()))?;
        let meta = key.meta();
        let parameters = TimeLockParameters {
            version: PARAMETERS_VERSION,
            squarings: key.t(),
            duration_seconds: meta.duration_secs.to_string(),
            rate: meta.rate.to_string(),
            rate_measured: meta.rate_measured,
            hash: meta.hash.name().to_string(),
            issuer: meta.issuer.clone(),
            created: meta.created.clone(),
        };
        let uri = Ia5String::new(&format!("{TIMELOCK_URN_PREFIX}{fingerprint}"))
            .map_err(encoding(EncodedItem::SubjectAltName))?;
        let extensions = vec![
            RawExtension::standard(
                CE_BASIC_CONSTRAINTS,
                false,
                &BasicConstraints {
                    ca: false,
                    path_len_constraint: None,
                },
            )?,
            RawExtension::standard(
                CE_KEY_USAGE,
                true,
                &KeyUsage(KeyUsages::DigitalSignature | KeyUsages::DataEncipherment),
            )?,
            RawExtension::standard(
                CE_SUBJECT_KEY_IDENTIFIER,
                false,
                &SubjectKeyIdentifier(
                    OctetString::new(key_identifier(&spki))
                        .map_err(encoding(EncodedItem::KeyId))?,
                ),
            )?,
            RawExtension::standard(
                CE_AUTHORITY_KEY_IDENTIFIER,
                false,
                &AuthorityKeyIdentifier {
                    key_identifier: Some(
                        OctetString::new(ca.key_id()?).map_err(encoding(EncodedItem::KeyId))?,
                    ),
                    authority_cert_issuer: None,
                    authority_cert_serial_number: None,
                },
            )?,
            RawExtension::standard(
                CE_SUBJECT_ALT_NAME,
                false,
                &SubjectAltName(vec![GeneralName::UniformResourceIdentifier(uri)]),
            )?,
            RawExtension::new(
                &TIMELOCK_PARAMETERS_OID_DER,
                false,
                parameters
                    .to_der()
                    .map_err(encoding(EncodedItem::Extension))?,
            )?,
        ];
        Ok(Self {
            cert: ca.issue(ca_key, subject, spki, extensions, options, rng)?,
        })
    }

    /// Parses a certificate (PEM or DER) without checking anything but its form; see
    /// [`Self::verify`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Ok(Self {
            cert: Certificate::from_bytes(bytes)?,
        })
    }

    /// Checks the certificate and rebuilds the puzzle key, in this order: the issuer is the
    /// CA's subject, the signature verifies with the CA's key, both certificates are valid at
    /// `now`, the certificate is version 3, no unknown extension is critical, it is not a CA,
    /// the time-lock URI is present, `E` decodes to `(t, z)`, the parameters extension is well
    /// formed and names the same `t`, and the key's fingerprint is the one in the URI.
    pub fn verify(&self, ca: &CaCertificate, now: SystemTime) -> Result<PuzzlePublicKey> {
        let p = &self.cert;
        let tbs = p.tbs();
        if tbs.issuer != ca.certificate().tbs().subject {
            return Err(CertificateError::WrongIssuer {
                issuer: tbs.issuer.to_string(),
                ca: ca.subject(),
            }
            .into());
        }
        p.check_signature(ca.public_key(), CertRole::Certificate)?;
        ca.certificate()
            .check_validity(now, CertRole::CaCertificate)?;
        p.check_validity(now, CertRole::Certificate)?;
        if tbs.version != Version::V3 {
            return Err(PuzzleCertificateError::NotTimeLock(
                NotTimeLockReason::OldX509,
            ));
        }
        p.check_critical(&[])?;
        if let Some((_, bc)) = p.decode_extension::<BasicConstraints>(
            CE_BASIC_CONSTRAINTS,
            Extension::BasicConstraints,
        )? {
            if bc.ca {
                return Err(PuzzleCertificateError::NotTimeLock(NotTimeLockReason::IsCa));
            }
        }
        let marked = self.marked_fingerprint()?;
        let (n, e) = rsa_components(&tbs.subject_public_key_info)?;
        let (t, z) = decode_exponent(&e)?;
        let ext = p.extension(&TIMELOCK_PARAMETERS_OID_DER).ok_or(
            PuzzleCertificateError::BadParameters(ParameterProblem::Missing),
        )?;
        let meta = parse_parameters(ext.value(), t)?;
        let key = PuzzlePublicKey::new(n, t, z, meta)?;
        if key.fingerprint_hex() != marked {
            return Err(PuzzleCertificateError::BadParameters(
                ParameterProblem::FingerprintMismatch {
                    marked,
                    certified: key.fingerprint_hex(),
                },
            ));
        }
        Ok(key)
    }

    /// The fingerprint in the time-lock URI of the subjectAltName.
    fn marked_fingerprint(&self) -> Result<String> {
        let san = self
            .cert
            .decode_extension::<SubjectAltName>(CE_SUBJECT_ALT_NAME, Extension::SubjectAltName)?;
        let names = san.map(|(_, s)| s.0).unwrap_or_default();
        let uri = names
            .iter()
            .find_map(|n| match n {
                GeneralName::UniformResourceIdentifier(u)
                    if u.as_str().starts_with(TIMELOCK_URN_PREFIX) =>
                {
                    Some(u.as_str().to_string())
                }
                _ => None,
            })
            .ok_or(PuzzleCertificateError::NotTimeLock(
                NotTimeLockReason::NoUri,
            ))?;
        let fp = &uri[TIMELOCK_URN_PREFIX.len()..];
        if fp.len() != 64 || !fp.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(PuzzleCertificateError::BadParameters(
                ParameterProblem::BadUri { uri },
            ));
        }
        Ok(fp.to_ascii_lowercase())
    }

    /// The certificate.
    pub fn certificate(&self) -> &Certificate {
        &self.cert
    }

    /// The subject name as an RFC 4514 string.
    pub fn subject(&self) -> String {
        self.cert.subject()
    }

    /// The subject's common name, if any.
    pub fn common_name(&self) -> Option<String> {
        self.cert.common_name()
    }

    /// The issuer name as an RFC 4514 string.
    pub fn issuer(&self) -> String {
        self.cert.issuer()
    }

    /// Start of the validity period.
    pub fn not_before(&self) -> SystemTime {
        self.cert.not_before()
    }

    /// End of the validity period.
    pub fn not_after(&self) -> SystemTime {
        self.cert.not_after()
    }

    /// The serial number in hex.
    pub fn serial_hex(&self) -> String {
        self.cert.serial_hex()
    }

    /// The DER encoding.
    pub fn to_der(&self) -> &[u8] {
        self.cert.to_der()
    }

    /// The PEM encoding (`-----BEGIN CERTIFICATE-----`).
    pub fn to_pem(&self) -> String {
        self.cert.to_pem()
    }

    /// The bytes of the subjectPublicKey bit string (an `RSAPublicKey` with `n` and `E`).
    pub fn subject_public_key(&self) -> &[u8] {
        self.cert.subject_key_bits()
    }
}

/// Reads a time-lock certificate (PEM or DER), checks it against `ca` at time `now` and
/// returns the certified puzzle key (see [`PuzzleCertificate::verify`]).
pub fn verify_puzzle_certificate(
    bytes: &[u8],
    ca: &CaCertificate,
    now: SystemTime,
) -> Result<PuzzlePublicKey> {
    PuzzleCertificate::from_bytes(bytes)?.verify(ca, now)
}

/// Decodes the parameters extension into the key's metadata; `t` is the one from `E`.
fn parse_parameters(der: &[u8], t: u64) -> Result<PuzzleMeta> {
    let bad = PuzzleCertificateError::BadParameters;
    let p = TimeLockParameters::from_der(der).map_err(|e| bad(ParameterProblem::Der(e)))?;
    if p.version == 1 {
        return Err(bad(ParameterProblem::Version1));
    }
    if p.version != PARAMETERS_VERSION {
        return Err(bad(ParameterProblem::UnsupportedVersion {
            found: p.version,
        }));
    }
    if p.squarings != t {
        return Err(bad(ParameterProblem::TMismatch {
            extension: p.squarings,
            exponent: t,
        }));
    }
    let number = |field: &'static str, s: &str| -> Result<f64> {
        let ok_chars = !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
        match s.parse::<f64>() {
            Ok(x) if ok_chars && x.is_finite() => Ok(x),
            _ => Err(bad(ParameterProblem::NotNumber {
                field,
                text: s.to_string(),
            })),
        }
    };
    let hash = PuzzleHash::parse(&p.hash).map_err(|e| bad(e.into()))?;
    Ok(PuzzleMeta {
        duration_secs: number("durationSeconds", &p.duration_seconds)?,
        rate: number("rate", &p.rate)?,
        rate_measured: p.rate_measured,
        hash,
        issuer: p.issuer,
        created: p.created,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_round_trips_and_bad_ones_are_refused() {
        for (t, z) in [(1u64, 1u32), (20_000, 12345), (u64::MAX, 7)] {
            let z = Integer::from(z) << 1000u32;
            let e = encode_exponent(t, &z);
            assert!(e.is_odd());
            assert_eq!(decode_exponent(&e).unwrap(), (t, z));
        }
        let bad = [
            (Integer::from(65537), ExponentProblem::NoZ),
            (Integer::from(1) << 80u32, ExponentProblem::Even),
            ((Integer::from(1) << 65u32) + 1u32, ExponentProblem::ZeroT),
            (Integer::from(0), ExponentProblem::NotPositive),
            (Integer::from(-3), ExponentProblem::NotPositive),
        ];
        for (e, why) in bad {
            match decode_exponent(&e) {
                Err(PuzzleCertificateError::BadExponent(got)) => assert_eq!(got, why, "E = {e}"),
                other => panic!("E = {e}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_oid_constant_matches_its_text() {
        assert_eq!(
            hourglass_x509::oid::oid_text(&TIMELOCK_PARAMETERS_OID_DER),
            TIMELOCK_PARAMETERS_OID
        );
        assert_eq!(TIMELOCK_PARAMETERS_OID, format!("{HOURGLASS_OID_ARC}.1"));
    }
}

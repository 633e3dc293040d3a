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
//! - [`CaCertificate`]: a self-signed institution CA ([`CaCertificate::self_signed`]) or one
//!   read from a file ([`CaCertificate::from_bytes`]).
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

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use der::asn1::{
    Any, BitString, GeneralizedTime, Ia5String, OctetString, SetOfVec, UintRef, UtcTime,
};
use der::oid::ObjectIdentifier;
use der::pem::LineEnding;
use der::{Decode, Encode, Reader, Sequence, SliceReader, Tag, Tagged};
use hourglass_arith::entropy::EntropySource;
use hourglass_arith::Integer;
use hourglass_rsa::padding::Pkcs1v15Sign;
use hourglass_rsa::{HashAlg, PrivateKey, PublicKey};
use rug::integer::Order;
use sha1::{Digest, Sha1};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use x509_cert::attr::AttributeTypeAndValue;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, KeyUsage, KeyUsages, SubjectAltName,
    SubjectKeyIdentifier,
};
use x509_cert::name::{Name, RdnSequence, RelativeDistinguishedName};
use x509_cert::serial_number::SerialNumber;
use x509_cert::time::{Time, Validity};
use x509_cert::Version;

use crate::key::{PuzzleHash, PuzzleMeta, PuzzlePublicKey};

mod tsa;
pub use tsa::{NotTsaReason, TsaAnchor, TsaCertificate, KP_TIME_STAMPING, MAX_INTERMEDIATES};

/// The hourglass OID arc: `2.25.<UUID e6682136-d0cc-4163-85ae-3dc5352e4da3 as an integer>`
/// (ITU-T X.667: a UUID-based OID needs no registration).
pub const HOURGLASS_OID_ARC: &str = "2.25.306263111566275780816363928834165067171";

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

/// How far `notBefore` is set before the time of issue, so that a certificate is valid at once
/// on machines whose clock is slightly behind.
pub const BACKDATE: Duration = Duration::from_secs(3600);

/// Largest certificate file read (PEM or DER).
pub const MAX_CERTIFICATE_FILE: usize = 1 << 20;

/// Largest modulus accepted in a certificate, in bytes (a 32768-bit modulus).
const MAX_MODULUS_BYTES: usize = 4096;

/// Version of the time-lock parameters extension.
/// Version 2: the certified key uses the full-domain inputs of puzzle format version 2.
const PARAMETERS_VERSION: u8 = 2;

/// Longest common name (`ub-common-name` in RFC 5280).
const MAX_COMMON_NAME: usize = 64;

const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const SHA256_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");
const SHA384_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.12");
const SHA512_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.13");
const AT_COMMON_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.3");
const AT_SERIAL_NUMBER: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.5");
const CE_SUBJECT_KEY_IDENTIFIER: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.14");
const CE_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.15");
const CE_SUBJECT_ALT_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.17");
const CE_BASIC_CONSTRAINTS: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.19");
const CE_AUTHORITY_KEY_IDENTIFIER: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.35");

/// Why a certificate could not be issued, read or trusted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CertificateError {
    /// Not a well-formed X.509 certificate (bad PEM or DER, wrong version, duplicate or
    /// unsupported critical extensions, ...).
    #[error("malformed certificate: {0}")]
    Malformed(#[source] Malformation),
    /// The certificate given as the CA is not a certificate authority.
    #[error("not a CA certificate: {0}")]
    NotCa(#[source] NotCaReason),
    /// The certificate names another issuer than the CA's subject.
    #[error("the certificate was issued by '{issuer}', not by the CA '{ca}'")]
    WrongIssuer {
        /// The certificate's issuer name (RFC 4514).
        issuer: String,
        /// The CA certificate's subject name (RFC 4514).
        ca: String,
    },
    /// The signature does not verify with the CA's public key.
    #[error("the signature of the {what} does not verify with the CA's key: it was altered, or signed by another key")]
    BadSignature {
        /// Which certificate.
        what: CertRole,
    },
    /// A signature algorithm other than sha{256,384,512}WithRSAEncryption.
    #[error("unsupported signature algorithm {0} (expected sha256WithRSAEncryption)")]
    UnsupportedAlgorithm(ObjectIdentifier),
    /// The validity period ended before `now`.
    #[error("the {what} expired at {} (it is now {})", rfc3339(*not_after), rfc3339(*now))]
    Expired {
        /// Which certificate.
        what: CertRole,
        /// End of the validity period.
        not_after: SystemTime,
        /// The time checked against.
        now: SystemTime,
    },
    /// The validity period starts after `now`.
    #[error("the {what} is not valid before {} (it is now {})", rfc3339(*not_before), rfc3339(*now))]
    NotYetValid {
        /// Which certificate.
        what: CertRole,
        /// Start of the validity period.
        not_before: SystemTime,
        /// The time checked against.
        now: SystemTime,
    },
    /// A well-formed certificate without the time-lock marker (an ordinary certificate).
    #[error("not a time-lock certificate: {0}")]
    NotTimeLock(#[source] NotTimeLockReason),
    /// The public exponent is not a valid `E = z * 2^65 + t * 2 + 1`.
    #[error("invalid time-lock exponent E: {0}")]
    BadExponent(#[source] ExponentProblem),
    /// The time-lock parameters extension or marker is malformed or disagrees with the key.
    #[error("invalid time-lock parameters: {0}")]
    BadParameters(#[source] ParameterProblem),
    /// A well-formed certificate that may not sign timestamps.
    #[error("not a timestamp authority certificate: {0}")]
    NotTsa(#[source] NotTsaReason),
    /// No chain leads from a TSA certificate to an anchor the verifier pinned.
    #[error("the TSA certificate '{subject}' (issued by '{issuer}') does not chain to a pinned anchor ({})", anchors.join(", "))]
    NoPathToAnchor {
        /// The TSA certificate's subject (RFC 4514).
        subject: String,
        /// Its issuer (RFC 4514).
        issuer: String,
        /// The anchors tried.
        anchors: Vec<String>,
    },
    /// The CA private key is not the key of the CA certificate.
    #[error("the CA private key does not belong to the CA certificate")]
    KeyMismatch,
    /// Options that cannot make a valid certificate.
    #[error("invalid certificate options: {0}")]
    InvalidOptions(#[source] OptionProblem),
    /// RSA failure while signing (entropy, fault detection).
    #[error(transparent)]
    Rsa(#[from] hourglass_rsa::Error),
    /// The certified values do not form a valid puzzle key.
    #[error(transparent)]
    Key(#[from] crate::Error),
}

/// Which of the two certificates of a check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertRole {
    /// The certificate being checked.
    Certificate,
    /// The CA certificate it is checked against.
    CaCertificate,
}

impl std::fmt::Display for CertRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CertRole::Certificate => "certificate",
            CertRole::CaCertificate => "CA certificate",
        })
    }
}

/// The X.509 extensions this module decodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Extension {
    /// basicConstraints.
    BasicConstraints,
    /// keyUsage.
    KeyUsage,
    /// subjectAltName.
    SubjectAltName,
    /// subjectKeyIdentifier.
    SubjectKeyIdentifier,
    /// extendedKeyUsage.
    ExtendedKeyUsage,
}

impl std::fmt::Display for Extension {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Extension::BasicConstraints => "basicConstraints",
            Extension::KeyUsage => "keyUsage",
            Extension::SubjectAltName => "subjectAltName",
            Extension::SubjectKeyIdentifier => "subjectKeyIdentifier",
            Extension::ExtendedKeyUsage => "extendedKeyUsage",
        })
    }
}

/// Why a certificate is not well formed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Malformation {
    /// A file larger than any certificate.
    #[error("larger than {max} bytes")]
    TooLarge {
        /// The largest file read.
        max: usize,
    },
    /// An empty file.
    #[error("the file is empty")]
    Empty,
    /// Neither PEM nor DER.
    #[error("neither PEM (-----BEGIN CERTIFICATE-----) nor DER")]
    NotPemOrDer,
    /// A PEM block without its END line.
    #[error("PEM without an END CERTIFICATE line")]
    PemNoEnd,
    /// PEM that does not decode.
    #[error("malformed PEM: {0}")]
    Pem(#[source] der::pem::Error),
    /// A PEM block of something else.
    #[error("PEM label '{label}' is not CERTIFICATE")]
    PemLabel {
        /// The label found.
        label: String,
    },
    /// DER that is not an X.509 certificate.
    #[error("not an X.509 certificate: {0}")]
    NotX509(#[source] der::Error),
    /// The certificate's outer structure cannot be split into its parts.
    #[error("certificate: {0}")]
    Structure(#[source] der::Error),
    /// An extension that does not decode.
    #[error("{extension} extension: {source}")]
    Extension {
        /// The extension.
        extension: Extension,
        /// The decoder's error.
        #[source]
        source: der::Error,
    },
    /// Extensions in a version 1 or 2 certificate.
    #[error("extensions in a certificate older than version 3")]
    ExtensionsBeforeV3,
    /// Signature algorithms inside and outside the signed part that differ.
    #[error("the signature algorithm inside and outside the signed part differ")]
    AlgorithmMismatch,
    /// An extension listed twice.
    #[error("extension {oid} appears twice")]
    DuplicateExtension {
        /// The extension's OID, as text.
        oid: String,
    },
    /// A critical extension this module does not process.
    #[error("unsupported critical extension {oid}")]
    UnsupportedCritical {
        /// The extension's OID, as text.
        oid: String,
    },
    /// Signature algorithm parameters other than NULL.
    #[error("signature algorithm parameters must be NULL")]
    SignatureParameters,
    /// A public key that is not rsaEncryption.
    #[error("public key algorithm {oid} is not rsaEncryption")]
    NotRsa {
        /// The key's algorithm.
        oid: ObjectIdentifier,
    },
    /// A public key bit string that is not whole bytes.
    #[error("public key bit string has unused bits")]
    UnusedBits,
    /// A public key that is not an RSAPublicKey.
    #[error("RSAPublicKey: {0}")]
    RsaPublicKey(#[source] der::Error),
    /// Public key integers larger than any key's.
    #[error("public key integers are limited to {max} bytes")]
    IntegerTooLarge {
        /// The largest modulus, in bytes.
        max: usize,
    },
}

/// Why a certificate cannot serve as a CA.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum NotCaReason {
    /// Not X.509 version 3.
    #[error("a CA certificate must be X.509 version 3")]
    NotV3,
    /// No basicConstraints `CA:TRUE`.
    #[error("basicConstraints does not say CA:TRUE")]
    NotCaTrue,
    /// A keyUsage without keyCertSign.
    #[error("keyUsage does not allow keyCertSign")]
    NoKeyCertSign,
    /// An RSA key that cannot be used.
    #[error("the CA's RSA key is not usable: {0}")]
    Key(#[source] hourglass_rsa::Error),
}

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

/// A part of a certificate being encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EncodedItem {
    /// An extension.
    Extension,
    /// The modulus.
    Modulus,
    /// The public exponent.
    Exponent,
    /// The RSAPublicKey.
    RsaPublicKey,
    /// The public key bit string.
    PublicKey,
    /// The serial number.
    SerialNumber,
    /// A name.
    Name,
    /// The TBSCertificate.
    TbsCertificate,
    /// The signature.
    Signature,
    /// The certificate.
    Certificate,
    /// A key identifier.
    KeyId,
    /// The subjectAltName.
    SubjectAltName,
    /// The time-lock parameters.
    TimeLockParameters,
}

impl std::fmt::Display for EncodedItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            EncodedItem::Extension => "extension",
            EncodedItem::Modulus => "modulus",
            EncodedItem::Exponent => "exponent",
            EncodedItem::RsaPublicKey => "RSAPublicKey",
            EncodedItem::PublicKey => "public key",
            EncodedItem::SerialNumber => "serial number",
            EncodedItem::Name => "name",
            EncodedItem::TbsCertificate => "TBSCertificate",
            EncodedItem::Signature => "signature",
            EncodedItem::Certificate => "certificate",
            EncodedItem::KeyId => "key id",
            EncodedItem::SubjectAltName => "subjectAltName",
            EncodedItem::TimeLockParameters => "time-lock parameters",
        })
    }
}

/// Why options cannot make a valid certificate.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OptionProblem {
    /// A validity period that ends before it starts.
    #[error("the validity period ends before it starts")]
    ValidityReversed,
    /// A time before 1970.
    #[error("a time before 1970")]
    Before1970,
    /// A time X.509 cannot represent.
    #[error("time out of range: {0}")]
    TimeOutOfRange(#[source] der::Error),
    /// A part that could not be encoded.
    #[error("cannot encode {what}: {source}")]
    Encode {
        /// The part.
        what: EncodedItem,
        /// The encoder's error.
        #[source]
        source: der::Error,
    },
    /// A common name of the wrong length.
    #[error("the common name must have 1 to {max} characters, '{name}' has {chars}")]
    CommonNameLength {
        /// The name given.
        name: String,
        /// Its characters.
        chars: usize,
        /// The most allowed.
        max: usize,
    },
    /// A common name with control characters.
    #[error("the common name contains control characters")]
    CommonNameControl,
}

/// Result alias for certificate operations.
pub type Result<T> = std::result::Result<T, CertificateError>;

fn malformed(why: Malformation) -> CertificateError {
    CertificateError::Malformed(why)
}

fn encoding(what: EncodedItem) -> impl Fn(der::Error) -> CertificateError {
    move |source| CertificateError::InvalidOptions(OptionProblem::Encode { what, source })
}

/// `E = z * 2^65 + t * 2 + 1`: the puzzle exponent `2^t + z` in the odd integer stored in a
/// time-lock certificate (bits 1..=64 hold `t`, bits 65 and up hold `z`).
pub fn encode_exponent(t: u64, z: &Integer) -> Integer {
    (Integer::from(z << 65u32) | (Integer::from(t) << 1u32)) + 1u32
}

/// Splits a certificate exponent `E` into `(t, z)`. Refuses an even `E` (not a time-lock
/// exponent), `E < 2^65` (no room for `z >= 1`), and `t = 0`.
pub fn decode_exponent(e: &Integer) -> Result<(u64, Integer)> {
    let bad = CertificateError::BadExponent;
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

/// Whether `bytes` look like a certificate (PEM `CERTIFICATE` or DER) rather than a JSON key.
pub fn looks_like_certificate(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(1 << 16)];
    if find(head, b"-----BEGIN CERTIFICATE-----").is_some() {
        return true;
    }
    head.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == 0x30)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The validity period of a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValidityPeriod {
    /// Start (inclusive), whole seconds.
    pub not_before: SystemTime,
    /// End (inclusive), whole seconds.
    pub not_after: SystemTime,
}

impl ValidityPeriod {
    /// From `now - BACKDATE` to `now + days` days (`days = 0` expires at once).
    pub fn days_from(now: SystemTime, days: u32) -> Self {
        Self {
            not_before: now.checked_sub(BACKDATE).unwrap_or(now),
            not_after: now + Duration::from_secs(u64::from(days) * 86_400),
        }
    }

    /// [`Self::days_from`] the current time.
    pub fn days_from_now(days: u32) -> Self {
        Self::days_from(SystemTime::now(), days)
    }

    fn to_asn1(self) -> Result<Validity> {
        if self.not_after < self.not_before {
            return Err(CertificateError::InvalidOptions(
                OptionProblem::ValidityReversed,
            ));
        }
        Ok(Validity {
            not_before: to_time(self.not_before)?,
            not_after: to_time(self.not_after)?,
        })
    }
}

/// UTCTime through 2049, GeneralizedTime after (RFC 5280 section 4.1.2.5), whole seconds.
fn to_time(t: SystemTime) -> Result<Time> {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map_err(|_| CertificateError::InvalidOptions(OptionProblem::Before1970))?
        .as_secs();
    let d = Duration::from_secs(secs);
    match UtcTime::from_unix_duration(d) {
        Ok(u) => Ok(Time::UtcTime(u)),
        Err(_) => GeneralizedTime::from_unix_duration(d)
            .map(Time::GeneralTime)
            .map_err(|e| CertificateError::InvalidOptions(OptionProblem::TimeOutOfRange(e))),
    }
}

fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

/// What to put into a new certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateOptions {
    /// The subject's common name (1 to 64 characters).
    pub common_name: String,
    /// When the certificate is valid.
    pub validity: ValidityPeriod,
}

impl CertificateOptions {
    /// A certificate for `common_name`, valid from now (less [`BACKDATE`]) for `days` days.
    pub fn days(common_name: &str, days: u32) -> Self {
        Self {
            common_name: common_name.to_string(),
            validity: ValidityPeriod::days_from_now(days),
        }
    }
}

// ASN.1 structures. TBSCertificate and Extension are modelled here rather than taken from
// x509-cert, because x509-cert's `ObjectIdentifier` (const-oid 0.9) only holds 32-bit arcs and
// so cannot decode an extension under a UUID arc; extension IDs are kept as raw OID values.

/// `Extension ::= SEQUENCE { extnID OBJECT IDENTIFIER, critical BOOLEAN DEFAULT FALSE,
/// extnValue OCTET STRING }`, with the OID kept as an `Any`.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct RawExtension {
    extn_id: Any,
    #[asn1(default = "Default::default")]
    critical: bool,
    extn_value: OctetString,
}

impl RawExtension {
    fn new(oid_der: &[u8], critical: bool, value: Vec<u8>) -> Result<Self> {
        Ok(Self {
            extn_id: Any::new(Tag::ObjectIdentifier, oid_der)
                .map_err(encoding(EncodedItem::Extension))?,
            critical,
            extn_value: OctetString::new(value).map_err(encoding(EncodedItem::Extension))?,
        })
    }

    fn standard<T: Encode>(oid: ObjectIdentifier, critical: bool, value: &T) -> Result<Self> {
        Self::new(
            oid.as_bytes(),
            critical,
            value.to_der().map_err(encoding(EncodedItem::Extension))?,
        )
    }

    fn is(&self, oid_der: &[u8]) -> bool {
        self.extn_id.tag() == Tag::ObjectIdentifier && self.extn_id.value() == oid_der
    }

    fn oid_text(&self) -> String {
        ObjectIdentifier::from_bytes(self.extn_id.value())
            .map(|o| o.to_string())
            .unwrap_or_else(|_| {
                if self.is(&TIMELOCK_PARAMETERS_OID_DER) {
                    TIMELOCK_PARAMETERS_OID.to_string()
                } else {
                    format!("(OID {})", hex::encode(self.extn_id.value()))
                }
            })
    }
}

/// `TBSCertificate` (RFC 5280 section 4.1).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct TbsCertificate {
    #[asn1(context_specific = "0", default = "Default::default")]
    version: Version,
    serial_number: SerialNumber,
    signature: AlgorithmIdentifierOwned,
    issuer: Name,
    validity: Validity,
    subject: Name,
    subject_public_key_info: SubjectPublicKeyInfoOwned,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    issuer_unique_id: Option<BitString>,
    #[asn1(context_specific = "2", tag_mode = "IMPLICIT", optional = "true")]
    subject_unique_id: Option<BitString>,
    #[asn1(context_specific = "3", tag_mode = "EXPLICIT", optional = "true")]
    extensions: Option<Vec<RawExtension>>,
}

/// `Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature BIT STRING }`.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct CertificateAsn1 {
    tbs_certificate: TbsCertificate,
    signature_algorithm: AlgorithmIdentifierOwned,
    signature: BitString,
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

/// A parsed certificate with the exact bytes its signature covers.
#[derive(Clone, Debug)]
struct Parsed {
    der: Vec<u8>,
    tbs_der: Vec<u8>,
    cert: CertificateAsn1,
}

impl Parsed {
    fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() > MAX_CERTIFICATE_FILE {
            return Err(malformed(Malformation::TooLarge {
                max: MAX_CERTIFICATE_FILE,
            }));
        }
        let der = match find(bytes, b"-----BEGIN ") {
            Some(start) => pem_certificate(&bytes[start..])?,
            None => {
                let start = bytes
                    .iter()
                    .position(|b| !b.is_ascii_whitespace())
                    .ok_or(malformed(Malformation::Empty))?;
                if bytes[start] != 0x30 {
                    return Err(malformed(Malformation::NotPemOrDer));
                }
                bytes[start..].to_vec()
            }
        };
        let cert =
            CertificateAsn1::from_der(&der).map_err(|e| malformed(Malformation::NotX509(e)))?;
        let tbs_der = raw_tbs(&der)?.to_vec();
        let tbs = &cert.tbs_certificate;
        if tbs.extensions.is_some() && tbs.version != Version::V3 {
            return Err(malformed(Malformation::ExtensionsBeforeV3));
        }
        if tbs.signature != cert.signature_algorithm {
            return Err(malformed(Malformation::AlgorithmMismatch));
        }
        let exts = tbs.extensions.as_deref().unwrap_or(&[]);
        for (i, a) in exts.iter().enumerate() {
            if exts[..i].iter().any(|b| b.extn_id == a.extn_id) {
                return Err(malformed(Malformation::DuplicateExtension {
                    oid: a.oid_text(),
                }));
            }
        }
        Ok(Self { der, tbs_der, cert })
    }

    fn tbs(&self) -> &TbsCertificate {
        &self.cert.tbs_certificate
    }

    fn extension(&self, oid_der: &[u8]) -> Option<&RawExtension> {
        self.tbs()
            .extensions
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .find(|e| e.is(oid_der))
    }

    fn decode_extension<'a, T: Decode<'a>>(
        &'a self,
        oid: ObjectIdentifier,
        extension: Extension,
    ) -> Result<Option<(bool, T)>> {
        match self.extension(oid.as_bytes()) {
            None => Ok(None),
            Some(e) => T::from_der(e.extn_value.as_bytes())
                .map(|v| Some((e.critical, v)))
                .map_err(|source| malformed(Malformation::Extension { extension, source })),
        }
    }

    /// Refuses critical extensions this module does not process (RFC 5280 section 4.2), the
    /// ones in `also` aside (processed by the caller).
    fn check_critical(&self, also: &[&[u8]]) -> Result<()> {
        let known: [&[u8]; 5] = [
            CE_BASIC_CONSTRAINTS.as_bytes(),
            CE_KEY_USAGE.as_bytes(),
            CE_SUBJECT_ALT_NAME.as_bytes(),
            CE_SUBJECT_KEY_IDENTIFIER.as_bytes(),
            CE_AUTHORITY_KEY_IDENTIFIER.as_bytes(),
        ];
        for e in self.tbs().extensions.as_deref().unwrap_or(&[]) {
            if e.critical && !known.iter().chain(also).any(|k| e.is(k)) {
                return Err(malformed(Malformation::UnsupportedCritical {
                    oid: e.oid_text(),
                }));
            }
        }
        Ok(())
    }

    fn check_validity(&self, now: SystemTime, what: CertRole) -> Result<()> {
        let v = &self.tbs().validity;
        let (not_before, not_after) = (v.not_before.to_system_time(), v.not_after.to_system_time());
        if now < not_before {
            return Err(CertificateError::NotYetValid {
                what,
                not_before,
                now,
            });
        }
        if now > not_after {
            return Err(CertificateError::Expired {
                what,
                not_after,
                now,
            });
        }
        Ok(())
    }

    /// Checks the signature with `key` over the exact bytes of the TBSCertificate.
    fn check_signature(&self, key: &PublicKey, what: CertRole) -> Result<()> {
        let hash = signature_hash(&self.cert.signature_algorithm)?;
        let sig = self
            .cert
            .signature
            .as_bytes()
            .ok_or(CertificateError::BadSignature { what })?;
        Pkcs1v15Sign::new(hash)
            .verify(key, &self.tbs_der, sig)
            .map_err(|_| CertificateError::BadSignature { what })
    }

    fn subject_key_bits(&self) -> &[u8] {
        self.tbs()
            .subject_public_key_info
            .subject_public_key
            .raw_bytes()
    }
}

/// The DER of the first `CERTIFICATE` PEM block in `text` (which starts at a `-----BEGIN`).
fn pem_certificate(text: &[u8]) -> Result<Vec<u8>> {
    const END: &[u8] = b"-----END CERTIFICATE-----";
    let end = find(text, END).ok_or(malformed(Malformation::PemNoEnd))?;
    let block = &text[..end + END.len()];
    let (label, der) = der::pem::decode_vec(block).map_err(|e| malformed(Malformation::Pem(e)))?;
    if label != "CERTIFICATE" {
        return Err(malformed(Malformation::PemLabel {
            label: label.to_string(),
        }));
    }
    Ok(der)
}

/// The DER of every certificate of a file: each `CERTIFICATE` block of PEM, in order, or the
/// one certificate of a DER file. A file larger than [`MAX_CERTIFICATE_FILE`] is refused.
pub fn pem_certificates(bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
    if bytes.len() > MAX_CERTIFICATE_FILE {
        return Err(malformed(Malformation::TooLarge {
            max: MAX_CERTIFICATE_FILE,
        }));
    }
    let mut rest = bytes;
    let mut ders = Vec::new();
    while let Some(start) = find(rest, b"-----BEGIN ") {
        let der = pem_certificate(&rest[start..])?;
        let end = find(&rest[start..], b"-----END CERTIFICATE-----").map_or(rest.len(), |e| {
            start + e + b"-----END CERTIFICATE-----".len()
        });
        ders.push(der);
        rest = &rest[end..];
    }
    if ders.is_empty() {
        ders.push(Parsed::from_bytes(bytes)?.der);
    }
    Ok(ders)
}

/// Every certificate of a file (PEM, several per file, or one DER certificate), each read and
/// checked as a CA certificate: the anchors a verifier names in one file (`--tsa-ca`).
pub fn ca_certificates(bytes: &[u8]) -> Result<Vec<CaCertificate>> {
    pem_certificates(bytes)?
        .iter()
        .map(|der| CaCertificate::from_bytes(der))
        .collect()
}

/// The raw TBSCertificate (tag, length and content) inside a certificate's DER.
fn raw_tbs(der: &[u8]) -> Result<&[u8]> {
    let mut reader = SliceReader::new(der).map_err(|e| malformed(Malformation::Structure(e)))?;
    let tbs = reader
        .sequence(|r| {
            let tbs = r.tlv_bytes()?;
            r.tlv_bytes()?;
            r.tlv_bytes()?;
            Ok(tbs)
        })
        .map_err(|e| malformed(Malformation::Structure(e)))?;
    reader
        .finish(tbs)
        .map_err(|e| malformed(Malformation::Structure(e)))
}

fn signature_hash(alg: &AlgorithmIdentifierOwned) -> Result<HashAlg> {
    let hash = match alg.oid {
        SHA256_WITH_RSA => HashAlg::Sha256,
        SHA384_WITH_RSA => HashAlg::Sha384,
        SHA512_WITH_RSA => HashAlg::Sha512,
        other => return Err(CertificateError::UnsupportedAlgorithm(other)),
    };
    match &alg.parameters {
        None => {}
        Some(p) if p.tag() == Tag::Null && p.value().is_empty() => {}
        Some(_) => return Err(malformed(Malformation::SignatureParameters)),
    }
    Ok(hash)
}

fn null() -> Any {
    Any::from(der::asn1::Null)
}

fn sha256_with_rsa() -> AlgorithmIdentifierOwned {
    AlgorithmIdentifierOwned {
        oid: SHA256_WITH_RSA,
        parameters: Some(null()),
    }
}

fn be_bytes(x: &Integer) -> Vec<u8> {
    x.to_digits::<u8>(Order::Msf)
}

/// `SubjectPublicKeyInfo` for an `rsaEncryption` key `(n, e)`.
fn rsa_spki(n: &Integer, e: &Integer) -> Result<SubjectPublicKeyInfoOwned> {
    let (n, e) = (be_bytes(n), be_bytes(e));
    let inner = pkcs1::RsaPublicKey {
        modulus: UintRef::new(&n).map_err(encoding(EncodedItem::Modulus))?,
        public_exponent: UintRef::new(&e).map_err(encoding(EncodedItem::Exponent))?,
    }
    .to_der()
    .map_err(encoding(EncodedItem::RsaPublicKey))?;
    Ok(SubjectPublicKeyInfoOwned {
        algorithm: AlgorithmIdentifierOwned {
            oid: RSA_ENCRYPTION,
            parameters: Some(null()),
        },
        subject_public_key: BitString::from_bytes(&inner)
            .map_err(encoding(EncodedItem::PublicKey))?,
    })
}

/// `(n, e)` from an `rsaEncryption` SubjectPublicKeyInfo, with size limits.
fn rsa_components(spki: &SubjectPublicKeyInfoOwned) -> Result<(Integer, Integer)> {
    if spki.algorithm.oid != RSA_ENCRYPTION {
        return Err(malformed(Malformation::NotRsa {
            oid: spki.algorithm.oid,
        }));
    }
    let bits = spki
        .subject_public_key
        .as_bytes()
        .ok_or(malformed(Malformation::UnusedBits))?;
    let key = pkcs1::RsaPublicKey::from_der(bits)
        .map_err(|e| malformed(Malformation::RsaPublicKey(e)))?;
    let (n, e) = (key.modulus.as_bytes(), key.public_exponent.as_bytes());
    if n.len() > MAX_MODULUS_BYTES || e.len() > 2 * MAX_MODULUS_BYTES + 16 {
        return Err(malformed(Malformation::IntegerTooLarge {
            max: MAX_MODULUS_BYTES,
        }));
    }
    Ok((
        Integer::from_digits(n, Order::Msf),
        Integer::from_digits(e, Order::Msf),
    ))
}

/// RFC 5280 key identifier (method 1): SHA-1 of the subjectPublicKey bits.
fn key_identifier(spki: &SubjectPublicKeyInfoOwned) -> Vec<u8> {
    Sha1::digest(spki.subject_public_key.raw_bytes()).to_vec()
}

/// A random positive 128-bit serial number: 16 bytes, the first in `0x40..=0x7f`, so the DER
/// INTEGER is always exactly 16 bytes long.
fn random_serial(rng: &mut dyn EntropySource) -> Result<SerialNumber> {
    let mut bytes = [0u8; 16];
    rng.fill(&mut bytes).map_err(hourglass_rsa::Error::from)?;
    bytes[0] = (bytes[0] & 0x3f) | 0x40;
    SerialNumber::new(&bytes).map_err(encoding(EncodedItem::SerialNumber))
}

/// Checks a subject common name: 1 to 64 characters (`ub-common-name`), no control characters.
pub fn check_common_name(cn: &str) -> Result<()> {
    let chars = cn.chars().count();
    if chars == 0 || chars > MAX_COMMON_NAME {
        return Err(CertificateError::InvalidOptions(
            OptionProblem::CommonNameLength {
                name: cn.to_string(),
                chars,
                max: MAX_COMMON_NAME,
            },
        ));
    }
    if cn.chars().any(char::is_control) {
        return Err(CertificateError::InvalidOptions(
            OptionProblem::CommonNameControl,
        ));
    }
    Ok(())
}

/// A name of one attribute per RDN, in order.
fn make_name(attributes: &[(ObjectIdentifier, Tag, &str)]) -> Result<Name> {
    let mut rdns = Vec::with_capacity(attributes.len());
    for &(oid, tag, value) in attributes {
        let atv = AttributeTypeAndValue {
            oid,
            value: Any::new(tag, value.as_bytes()).map_err(encoding(EncodedItem::Name))?,
        };
        let set = SetOfVec::try_from(vec![atv]).map_err(encoding(EncodedItem::Name))?;
        rdns.push(RelativeDistinguishedName(set));
    }
    Ok(RdnSequence(rdns))
}

/// The first common name of `name`, if it is a readable string.
fn common_name(name: &Name) -> Option<String> {
    name.0
        .iter()
        .flat_map(|rdn| rdn.0.iter())
        .find(|atv| atv.oid == AT_COMMON_NAME)
        .and_then(|atv| {
            std::str::from_utf8(atv.value.value())
                .ok()
                .map(str::to_string)
        })
}

/// Signs a TBSCertificate with the CA key (sha256WithRSAEncryption, PKCS#1 v1.5).
fn sign(tbs: TbsCertificate, key: &PrivateKey, rng: &mut dyn EntropySource) -> Result<Parsed> {
    let tbs_der = tbs
        .to_der()
        .map_err(encoding(EncodedItem::TbsCertificate))?;
    let sig = Pkcs1v15Sign::new(HashAlg::Sha256).sign(key, &tbs_der, rng)?;
    let cert = CertificateAsn1 {
        tbs_certificate: tbs,
        signature_algorithm: sha256_with_rsa(),
        signature: BitString::from_bytes(&sig).map_err(encoding(EncodedItem::Signature))?,
    };
    let der = cert.to_der().map_err(encoding(EncodedItem::Certificate))?;
    Ok(Parsed { der, tbs_der, cert })
}

/// Signs, with the CA's key, a version 3 certificate that `ca` issues to `subject` for `spki`
/// with `extensions`, valid as `options` says, under a random serial number.
fn issue_under(
    ca: &CaCertificate,
    ca_key: &PrivateKey,
    subject: Name,
    spki: SubjectPublicKeyInfoOwned,
    extensions: Vec<RawExtension>,
    options: &CertificateOptions,
    rng: &mut dyn EntropySource,
) -> Result<Parsed> {
    let tbs = TbsCertificate {
        version: Version::V3,
        serial_number: random_serial(rng)?,
        signature: sha256_with_rsa(),
        issuer: ca.parsed.tbs().subject.clone(),
        validity: options.validity.to_asn1()?,
        subject,
        subject_public_key_info: spki,
        issuer_unique_id: None,
        subject_unique_id: None,
        extensions: Some(extensions),
    };
    sign(tbs, ca_key, rng)
}

fn to_pem(der: &[u8]) -> String {
    der::pem::encode_string("CERTIFICATE", LineEnding::LF, der)
        .unwrap_or_else(|_| unreachable!("a certificate of at most 1 MiB encodes as PEM"))
}

/// An institution's certificate authority: a CA certificate with an RSA key.
#[derive(Debug, Clone)]
pub struct CaCertificate {
    parsed: Parsed,
    public: PublicKey,
}

impl CaCertificate {
    /// Makes a self-signed CA certificate for `key`: subject and issuer `CN=<common name>`,
    /// basicConstraints `CA:TRUE` (critical), keyUsage keyCertSign and cRLSign (critical),
    /// subjectKeyIdentifier, a random serial number, signed with sha256WithRSAEncryption.
    pub fn self_signed(
        key: &PrivateKey,
        options: &CertificateOptions,
        rng: &mut dyn EntropySource,
    ) -> Result<Self> {
        check_common_name(&options.common_name)?;
        let name = make_name(&[(AT_COMMON_NAME, Tag::Utf8String, &options.common_name)])?;
        let spki = rsa_spki(key.public().n(), key.public().e())?;
        let ski = key_identifier(&spki);
        let extensions = vec![
            RawExtension::standard(
                CE_BASIC_CONSTRAINTS,
                true,
                &BasicConstraints {
                    ca: true,
                    path_len_constraint: None,
                },
            )?,
            RawExtension::standard(
                CE_KEY_USAGE,
                true,
                &KeyUsage(KeyUsages::KeyCertSign | KeyUsages::CRLSign),
            )?,
            RawExtension::standard(
                CE_SUBJECT_KEY_IDENTIFIER,
                false,
                &SubjectKeyIdentifier(OctetString::new(ski).map_err(encoding(EncodedItem::KeyId))?),
            )?,
        ];
        let tbs = TbsCertificate {
            version: Version::V3,
            serial_number: random_serial(rng)?,
            signature: sha256_with_rsa(),
            issuer: name.clone(),
            validity: options.validity.to_asn1()?,
            subject: name,
            subject_public_key_info: spki,
            issuer_unique_id: None,
            subject_unique_id: None,
            extensions: Some(extensions),
        };
        let parsed = sign(tbs, key, rng)?;
        Self::from_parsed(parsed)
    }

    /// Reads a CA certificate (PEM or DER) and checks that it is one: version 3,
    /// basicConstraints `CA:TRUE`, keyUsage (if present) with keyCertSign, an RSA key, and a
    /// valid signature if it is self-issued. Its validity period is checked when it is used.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_parsed(Parsed::from_bytes(bytes)?)
    }

    fn from_parsed(parsed: Parsed) -> Result<Self> {
        if parsed.tbs().version != Version::V3 {
            return Err(CertificateError::NotCa(NotCaReason::NotV3));
        }
        parsed.check_critical(&[])?;
        match parsed.decode_extension::<BasicConstraints>(
            CE_BASIC_CONSTRAINTS,
            Extension::BasicConstraints,
        )? {
            Some((_, bc)) if bc.ca => {}
            _ => return Err(CertificateError::NotCa(NotCaReason::NotCaTrue)),
        }
        if let Some((_, ku)) =
            parsed.decode_extension::<KeyUsage>(CE_KEY_USAGE, Extension::KeyUsage)?
        {
            if !ku.key_cert_sign() {
                return Err(CertificateError::NotCa(NotCaReason::NoKeyCertSign));
            }
        }
        let (n, e) = rsa_components(&parsed.tbs().subject_public_key_info)?;
        let public =
            PublicKey::new(n, e).map_err(|err| CertificateError::NotCa(NotCaReason::Key(err)))?;
        if parsed.tbs().issuer == parsed.tbs().subject {
            parsed.check_signature(&public, CertRole::CaCertificate)?;
        }
        Ok(Self { parsed, public })
    }

    /// The CA's public key.
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// The subject name as an RFC 4514 string (`CN=Example University`).
    pub fn subject(&self) -> String {
        self.parsed.tbs().subject.to_string()
    }

    /// The subject's common name, if any.
    pub fn common_name(&self) -> Option<String> {
        common_name(&self.parsed.tbs().subject)
    }

    /// End of the validity period.
    pub fn not_after(&self) -> SystemTime {
        self.parsed.tbs().validity.not_after.to_system_time()
    }

    /// The serial number in hex.
    pub fn serial_hex(&self) -> String {
        hex::encode(self.parsed.tbs().serial_number.as_bytes())
    }

    /// SHA-256 of the DER certificate, in hex (what `openssl x509 -fingerprint -sha256` shows).
    pub fn sha256_hex(&self) -> String {
        hex::encode(sha2::Sha256::digest(&self.parsed.der))
    }

    /// The DER encoding.
    pub fn to_der(&self) -> &[u8] {
        &self.parsed.der
    }

    /// The PEM encoding (`-----BEGIN CERTIFICATE-----`).
    pub fn to_pem(&self) -> String {
        to_pem(&self.parsed.der)
    }

    /// The key identifier to name this CA in certificates it issues: its subjectKeyIdentifier,
    /// or the SHA-1 of its key when it has none.
    fn key_id(&self) -> Result<Vec<u8>> {
        Ok(
            match self.parsed.decode_extension::<SubjectKeyIdentifier>(
                CE_SUBJECT_KEY_IDENTIFIER,
                Extension::SubjectKeyIdentifier,
            )? {
                Some((_, ski)) => ski.0.as_bytes().to_vec(),
                None => key_identifier(&self.parsed.tbs().subject_public_key_info),
            },
        )
    }
}

/// A time-lock certificate: an X.509 v3 certificate for a puzzle public key.
#[derive(Debug, Clone)]
pub struct PuzzleCertificate {
    parsed: Parsed,
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
        if ca_key.public() != ca.public_key() {
            return Err(CertificateError::KeyMismatch);
        }
        ca.parsed
            .check_validity(SystemTime::now(), CertRole::CaCertificate)?;
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
                    .map_err(encoding(EncodedItem::TimeLockParameters))?,
            )?,
        ];
        Ok(Self {
            parsed: issue_under(ca, ca_key, subject, spki, extensions, options, rng)?,
        })
    }

    /// Parses a certificate (PEM or DER) without checking anything but its form; see
    /// [`Self::verify`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Ok(Self {
            parsed: Parsed::from_bytes(bytes)?,
        })
    }

    /// Checks the certificate and rebuilds the puzzle key, in this order: the issuer is the
    /// CA's subject, the signature verifies with the CA's key, both certificates are valid at
    /// `now`, the certificate is version 3, no unknown extension is critical, it is not a CA,
    /// the time-lock URI is present, `E` decodes to `(t, z)`, the parameters extension is well
    /// formed and names the same `t`, and the key's fingerprint is the one in the URI.
    pub fn verify(&self, ca: &CaCertificate, now: SystemTime) -> Result<PuzzlePublicKey> {
        let p = &self.parsed;
        let tbs = p.tbs();
        if tbs.issuer != ca.parsed.tbs().subject {
            return Err(CertificateError::WrongIssuer {
                issuer: tbs.issuer.to_string(),
                ca: ca.subject(),
            });
        }
        p.check_signature(ca.public_key(), CertRole::Certificate)?;
        ca.parsed.check_validity(now, CertRole::CaCertificate)?;
        p.check_validity(now, CertRole::Certificate)?;
        if tbs.version != Version::V3 {
            return Err(CertificateError::NotTimeLock(NotTimeLockReason::OldX509));
        }
        p.check_critical(&[])?;
        if let Some((_, bc)) = p.decode_extension::<BasicConstraints>(
            CE_BASIC_CONSTRAINTS,
            Extension::BasicConstraints,
        )? {
            if bc.ca {
                return Err(CertificateError::NotTimeLock(NotTimeLockReason::IsCa));
            }
        }
        let marked = self.marked_fingerprint()?;
        let (n, e) = rsa_components(&tbs.subject_public_key_info)?;
        let (t, z) = decode_exponent(&e)?;
        let ext = p
            .extension(&TIMELOCK_PARAMETERS_OID_DER)
            .ok_or(CertificateError::BadParameters(ParameterProblem::Missing))?;
        let meta = parse_parameters(ext.extn_value.as_bytes(), t)?;
        let key = PuzzlePublicKey::new(n, t, z, meta)?;
        if key.fingerprint_hex() != marked {
            return Err(CertificateError::BadParameters(
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
            .parsed
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
            .ok_or(CertificateError::NotTimeLock(NotTimeLockReason::NoUri))?;
        let fp = &uri[TIMELOCK_URN_PREFIX.len()..];
        if fp.len() != 64 || !fp.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(CertificateError::BadParameters(ParameterProblem::BadUri {
                uri,
            }));
        }
        Ok(fp.to_ascii_lowercase())
    }

    /// The subject name as an RFC 4514 string.
    pub fn subject(&self) -> String {
        self.parsed.tbs().subject.to_string()
    }

    /// The subject's common name, if any.
    pub fn common_name(&self) -> Option<String> {
        common_name(&self.parsed.tbs().subject)
    }

    /// The issuer name as an RFC 4514 string.
    pub fn issuer(&self) -> String {
        self.parsed.tbs().issuer.to_string()
    }

    /// Start of the validity period.
    pub fn not_before(&self) -> SystemTime {
        self.parsed.tbs().validity.not_before.to_system_time()
    }

    /// End of the validity period.
    pub fn not_after(&self) -> SystemTime {
        self.parsed.tbs().validity.not_after.to_system_time()
    }

    /// The serial number in hex.
    pub fn serial_hex(&self) -> String {
        hex::encode(self.parsed.tbs().serial_number.as_bytes())
    }

    /// The DER encoding.
    pub fn to_der(&self) -> &[u8] {
        &self.parsed.der
    }

    /// The PEM encoding (`-----BEGIN CERTIFICATE-----`).
    pub fn to_pem(&self) -> String {
        to_pem(&self.parsed.der)
    }

    /// The bytes of the subjectPublicKey bit string (an `RSAPublicKey` with `n` and `E`).
    pub fn subject_public_key(&self) -> &[u8] {
        self.parsed.subject_key_bits()
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
    let bad = CertificateError::BadParameters;
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
                Err(CertificateError::BadExponent(got)) => assert_eq!(got, why, "E = {e}"),
                other => panic!("E = {e}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_oid_constant_matches_its_text() {
        // 2.25.N.1: first octet 2*40+25, then N and 1 in base 128.
        let mut n = rug::Integer::from_str_radix(&HOURGLASS_OID_ARC[5..], 10).unwrap();
        let mut digits = Vec::new();
        while n > 0 {
            digits.push((n.to_u32_wrapping() & 0x7f) as u8);
            n >>= 7u32;
        }
        let mut expected = vec![2 * 40 + 25];
        for (i, d) in digits.iter().rev().enumerate() {
            expected.push(if i + 1 < digits.len() { d | 0x80 } else { *d });
        }
        expected.push(1);
        assert_eq!(expected, TIMELOCK_PARAMETERS_OID_DER);
        assert_eq!(TIMELOCK_PARAMETERS_OID, format!("{HOURGLASS_OID_ARC}.1"));
    }

    #[test]
    fn detects_certificates_by_content() {
        assert!(looks_like_certificate(b"\n-----BEGIN CERTIFICATE-----\n"));
        assert!(looks_like_certificate(&[0x30, 0x82, 0x01]));
        assert!(!looks_like_certificate(b"{\"type\": \"x\"}"));
        assert!(!looks_like_certificate(b""));
    }
}

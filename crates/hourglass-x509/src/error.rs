//! Why a certificate could not be issued, read or trusted.

use std::time::SystemTime;

use der::oid::ObjectIdentifier;

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
    /// The CA private key is not the key of the CA certificate.
    #[error("the CA private key does not belong to the CA certificate")]
    KeyMismatch,
    /// Options that cannot make a valid certificate.
    #[error("invalid certificate options: {0}")]
    InvalidOptions(#[source] OptionProblem),
    /// RSA failure while signing (entropy, fault detection).
    #[error(transparent)]
    Rsa(#[from] hourglass_rsa::Error),
}

impl CertificateError {
    /// Whether this is a negative verdict on a readable certificate, checked and failed
    /// (another issuer, an altered signature, outside its validity period), rather than input
    /// that could not be read or a failure to issue.
    pub fn is_verdict(&self) -> bool {
        matches!(
            self,
            CertificateError::WrongIssuer { .. }
                | CertificateError::BadSignature { .. }
                | CertificateError::Expired { .. }
                | CertificateError::NotYetValid { .. }
        )
    }
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

pub(crate) fn malformed(why: Malformation) -> CertificateError {
    CertificateError::Malformed(why)
}

pub(crate) fn encoding(what: EncodedItem) -> impl Fn(der::Error) -> CertificateError {
    move |source| CertificateError::InvalidOptions(OptionProblem::Encode { what, source })
}

/// A time as RFC 3339, to the second, for messages.
fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

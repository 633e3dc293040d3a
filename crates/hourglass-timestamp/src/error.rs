//! Why a token, reply or query could not be made, read or trusted, and whether that is a
//! negative verdict or an error.

use hourglass_x509::CertificateError;

use crate::anchor::AnchorError;
use crate::path::PathProblem;
use crate::signature::{AlgorithmProblem, KeyProblem, SignatureProblem};

/// Why a token, reply or query could not be made, read or trusted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TimestampError {
    /// Larger than any token, reply or query.
    #[error("larger than {max} bytes")]
    TooLarge {
        /// The limit.
        max: usize,
    },
    /// Not the DER structure expected.
    #[error("not an RFC 3161 {what}: {source}")]
    NotDer {
        /// What was expected.
        what: &'static str,
        /// The decoder's error.
        #[source]
        source: der::Error,
    },
    /// A structure that decodes but breaks the RFC's rules.
    #[error("malformed {what}: {why}")]
    Malformed {
        /// Which structure.
        what: &'static str,
        /// What is wrong.
        why: &'static str,
    },
    /// A reply whose status grants nothing.
    #[error("the TSA refused: status {status}{}{}", fail_info.as_deref().map(|f| format!(", {f}")).unwrap_or_default(), text.as_deref().map(|t| format!(", \"{t}\"")).unwrap_or_default())]
    Refused {
        /// The status.
        status: String,
        /// The failInfo names (RFC 4210's: `badAlg`, ...), joined by `+`.
        fail_info: Option<String>,
        /// The statusString.
        text: Option<String>,
    },
    /// A reply that says granted but carries no token.
    #[error("the reply says granted but carries no token")]
    NoToken,
    /// A digest algorithm this verifier does not accept.
    #[error(
        "unsupported {what} algorithm {oid} (this verifier accepts SHA-256, SHA-384 and SHA-512)"
    )]
    UnsupportedAlgorithm {
        /// Which algorithm.
        what: &'static str,
        /// Its OID.
        oid: String,
    },
    /// The signer's signature algorithm is not one this verifier checks.
    #[error("the token's signature: {0}")]
    SignatureAlgorithm(#[source] AlgorithmProblem),
    /// An imprint made with SHA-1 or MD5 (collisions can be made for both).
    #[error("the token's message imprint uses {alg}, which collisions break; only SHA-256, SHA-384 and SHA-512 imprints are accepted")]
    WeakImprint {
        /// `SHA-1` or `MD5`.
        alg: &'static str,
    },
    /// A signed attribute that disagrees with the token.
    #[error("the token's signed attributes are wrong: {why}")]
    SignedAttributes {
        /// What is wrong.
        why: &'static str,
    },
    /// The signer's certificate is neither in the token nor among the certificates given.
    #[error("the token does not carry its signer's certificate (give it with --untrusted, or ask the TSA with certReq)")]
    NoSignerCertificate,
    /// The signer's certificate carries a key this verifier cannot use, or refuses.
    #[error("the TSA certificate '{subject}' has {problem}")]
    SignerKey {
        /// The certificate's subject.
        subject: String,
        /// What is wrong with its key.
        problem: KeyProblem,
    },
    /// The signature does not verify under the signer's certificate.
    #[error("the token's signature does not verify under its TSA certificate '{subject}': {problem} (altered, or signed by another key)")]
    BadSignature {
        /// The TSA certificate's subject.
        subject: String,
        /// What failed.
        problem: SignatureProblem,
    },
    /// The signer's certificate is not a timestamp authority's.
    #[error("'{subject}' is not a timestamp authority's certificate: {reason}")]
    NotTsa {
        /// The certificate's subject.
        subject: String,
        /// Why.
        reason: NotTsaReason,
    },
    /// No valid path from the signer's certificate to an anchor the verifier pinned.
    #[error("the TSA certificate '{subject}' is not trusted: {problem}")]
    Path {
        /// The TSA certificate's subject.
        subject: String,
        /// What the path validation found.
        problem: PathProblem,
    },
    /// The token covers other data.
    #[error("the token covers other data (its {alg} imprint is {token}, the data's is {data})")]
    ImprintMismatch {
        /// The imprint's hash.
        alg: &'static str,
        /// The token's imprint, hex.
        token: String,
        /// The data's, hex.
        data: String,
    },
    /// The reply answers another query.
    #[error("the reply does not answer this query: {why}")]
    WrongReply {
        /// What differs.
        why: &'static str,
    },
    /// A certificate that could not be read, or an authority's key that is not its
    /// certificate's.
    #[error(transparent)]
    Certificate(#[from] CertificateError),
    /// An anchor that cannot vouch for an authority.
    #[error("TSA anchor: {0}")]
    Anchor(#[from] AnchorError),
    /// The authority's key failed while signing (entropy, fault check).
    #[error("the TSA could not sign: {0}")]
    Sign(String),
    /// A policy that is not a dotted object identifier.
    #[error("'{0}' is not an object identifier (dotted decimal, at least two arcs, the first 0, 1 or 2)")]
    BadPolicy(String),
    /// No anchor to verify against.
    #[error("no TSA anchor given: a token is only trusted against a CA or key the verifier names")]
    NoAnchor,
}

impl TimestampError {
    /// Whether this is a negative verdict on a readable token (it does not verify, covers other
    /// data, its authority is not trusted at its `genTime` or its key is too weak), rather than
    /// input that could not be read or checked at all (exit 2: an error).
    pub fn is_verdict(&self) -> bool {
        match self {
            TimestampError::WeakImprint { .. }
            | TimestampError::SignedAttributes { .. }
            | TimestampError::BadSignature { .. }
            | TimestampError::NotTsa { .. }
            | TimestampError::Path { .. }
            | TimestampError::ImprintMismatch { .. }
            | TimestampError::WrongReply { .. } => true,
            TimestampError::SignerKey { problem, .. } => {
                matches!(problem, KeyProblem::WeakRsa { .. })
            }
            _ => false,
        }
    }
}

/// Why a well-formed certificate may not sign timestamps (RFC 3161 section 2.3).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotTsaReason {
    /// No extendedKeyUsage extension.
    #[error("it has no extendedKeyUsage; a TSA certificate must carry id-kp-timeStamping (RFC 3161 section 2.3)")]
    NoExtendedKeyUsage,
    /// The extension is not critical.
    #[error("its extendedKeyUsage is not critical, as RFC 3161 section 2.3 requires")]
    NotCritical,
    /// The extension lists other purposes, or not timeStamping.
    #[error("its extendedKeyUsage must be exactly id-kp-timeStamping (RFC 3161 section 2.3)")]
    NotOnlyTimeStamping,
    /// A keyUsage that allows neither digitalSignature nor nonRepudiation.
    #[error("its keyUsage allows neither digitalSignature nor nonRepudiation")]
    KeyUsage,
    /// A CA certificate.
    #[error("it is a CA certificate")]
    IsCa,
    /// Not X.509 version 3.
    #[error("it is not an X.509 version 3 certificate")]
    NotV3,
}

/// Result alias for timestamps.
pub type Result<T> = std::result::Result<T, TimestampError>;

pub(crate) fn not_der(what: &'static str) -> impl Fn(der::Error) -> TimestampError {
    move |source| TimestampError::NotDer { what, source }
}

pub(crate) fn malformed(what: &'static str, why: &'static str) -> TimestampError {
    TimestampError::Malformed { what, why }
}

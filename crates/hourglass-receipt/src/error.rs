//! Why a receipt was refused, and whether that is a negative verdict.

use hourglass_log::LogError;
use hourglass_timestamp::TimestampError;

/// Why a receipt was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReceiptError {
    /// The file is not a receipt (not JSON of the receipt's shape, or too large).
    #[error("not a receipt: {why}")]
    Malformed {
        /// What is wrong.
        why: &'static str,
    },
    /// The receipt names a version this build does not read.
    #[error("receipt version {found} is not supported (this build reads versions 1 to 3)")]
    UnsupportedVersion {
        /// The version found.
        found: u32,
    },
    /// The statement is not in canonical form.
    #[error("the receipt's statement is not canonical: line {line} should be `{expected}: ...`")]
    NotCanonical {
        /// The 1-based line that is wrong.
        line: usize,
        /// The key expected there.
        expected: &'static str,
    },
    /// A field of the statement has a value outside its form.
    #[error("the receipt's statement has an invalid {field}")]
    BadField {
        /// The field.
        field: &'static str,
    },
    /// The signature does not verify under the institution's key (forged or altered receipt,
    /// or another institution's).
    #[error("the receipt's signature does not verify under this institution key")]
    BadSignature,
    /// The statement names another institution key than the one given.
    #[error("the receipt was signed for institution key {named}, not the one given ({given})")]
    OtherInstitution {
        /// The fingerprint the statement names.
        named: String,
        /// The fingerprint of the key given.
        given: String,
    },
    /// The receipt's timestamp token is not the one its statement names, does not verify,
    /// does not chain to the institution's key or a given TSA CA, or states another time or
    /// bundle than the statement.
    #[error("the receipt's timestamp: {0}")]
    Timestamp(#[source] TimestampError),
    /// The token verifies but disagrees with the statement.
    #[error("the receipt's timestamp disagrees with its statement: {why}")]
    TimestampMismatch {
        /// What differs.
        why: &'static str,
    },
    /// The receipt claims to be in a transparency log, and no log key was given to check it.
    #[error("the receipt claims to be in the transparency log '{origin}'; it is checked only against that log's key, pinned by the verifier")]
    LogNotPinned {
        /// The log the receipt names.
        origin: String,
    },
    /// A log key was pinned, and the receipt is not in any log (the institution handed out a
    /// receipt that nobody else can see).
    #[error("the receipt is not in a transparency log: nobody but its holder has seen it")]
    NotLogged,
    /// The receipt's log evidence does not check out (its checkpoint's signatures or quorum,
    /// or its inclusion proof), or it names another log than the pinned one.
    #[error("the receipt's log entry: {0}")]
    Log(#[source] LogError),
    /// The log evidence is for another log or entry than the statement says.
    #[error("the receipt's log entry disagrees with its statement: {why}")]
    LogMismatch {
        /// What differs.
        why: &'static str,
    },
    /// Signing failed.
    #[error(transparent)]
    Rsa(#[from] hourglass_rsa::Error),
}

impl ReceiptError {
    /// Whether this is a negative verdict on a readable receipt (forged, altered, another
    /// institution's, a token that does not check out), rather than input that could not be
    /// read at all.
    pub fn is_verdict(&self) -> bool {
        match self {
            ReceiptError::BadSignature
            | ReceiptError::OtherInstitution { .. }
            | ReceiptError::TimestampMismatch { .. }
            | ReceiptError::NotLogged
            | ReceiptError::LogMismatch { .. } => true,
            ReceiptError::Timestamp(e) => e.is_verdict(),
            ReceiptError::Log(e) => e.is_verdict(),
            _ => false,
        }
    }
}

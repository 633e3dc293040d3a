//! Why a combined signature does not verify.

/// Why a combined signature does not verify.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// The shares of `d` do not make a working key.
    #[error(
        "the shares of d do not combine to a working key (a party deviated from the protocol)"
    )]
    SharesDoNotCombine,
    /// The message has no inverse modulo `N`.
    #[error("message not invertible modulo N")]
    NotInvertible,
    /// The RSA check of the combined signature failed.
    #[error("{0}")]
    Check(#[source] hourglass_rsa::Error),
    /// A partial signature is wrong.
    #[error("a partial signature is wrong (a share does not belong to this key, or a fault)")]
    WrongPartial,
}

impl SignatureError {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): shares
    /// or a partial signature that do not make a valid signature (a party deviated), or an RSA
    /// check that says so. A message with no inverse modulo `N` is an error.
    pub fn is_verdict(&self) -> bool {
        match self {
            SignatureError::SharesDoNotCombine | SignatureError::WrongPartial => true,
            SignatureError::Check(e) => e.is_verdict(),
            SignatureError::NotInvertible => false,
        }
    }
}

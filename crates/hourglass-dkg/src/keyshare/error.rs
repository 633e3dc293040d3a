//! Why a share file is not usable.

use std::path::PathBuf;

use crate::{PartyId, TranscriptProblem};

/// A numeric field of a share file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareField {
    /// The modulus.
    N,
    /// The share of `d`.
    DShare,
    /// The threshold share (v2).
    Share,
    /// The verification base (v2).
    VerificationBase,
    /// A member's verification key (v2).
    VerificationKey {
        /// The member.
        member: PartyId,
    },
}

impl std::fmt::Display for ShareField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ShareField::N => "n",
            ShareField::DShare => "d_share",
            ShareField::Share => "share",
            ShareField::VerificationBase => "verification_base",
            ShareField::VerificationKey { member } => {
                return write!(f, "verification key of member {member}")
            }
        })
    }
}

/// Why a share file (or a transcript) is not usable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShareError {
    /// A problem in the share file at `path`.
    #[error("{}: {problem}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        problem: Box<ShareError>,
    },
    /// Not JSON of a share file.
    #[error("not a share file: {0}")]
    Json(#[source] serde_json::Error),
    /// Another format.
    #[error(
        "format {found:?}, expected {:?} or {:?}",
        crate::formats::SHARE_FORMAT,
        crate::formats::THRESHOLD_SHARE_FORMAT
    )]
    Format {
        /// The format in the file.
        found: String,
    },
    /// A session that is not 32 hex digits.
    #[error("session must be 32 hex digits")]
    Session,
    /// A member list that is not sorted, distinct, of at least 3, with this party.
    #[error("members must be at least 3 sorted distinct ids including this party")]
    Members,
    /// A number that is not hexadecimal.
    #[error("{field} is not a hex number")]
    NotHex {
        /// The field.
        field: ShareField,
    },
    /// A modulus of zero or below.
    #[error("n must be positive")]
    NonPositiveModulus,
    /// A public key that is not valid.
    #[error("public key: {0}")]
    PublicKey(#[source] hourglass_rsa::Error),
    /// A share larger than the modulus.
    #[error("d_share is larger than the modulus")]
    ShareTooLarge,
    /// A threshold the members cannot carry (v2): `1 <= t` and `2t + 1 <= members`.
    #[error("threshold {threshold} with {members} members (1 <= t and 2t + 1 <= members)")]
    Threshold {
        /// The threshold.
        threshold: usize,
        /// The members.
        members: usize,
    },
    /// An epoch of 0 in a v2 file (the reshare makes epoch 1).
    #[error("epoch must be at least 1 (the reshare makes epoch 1)")]
    Epoch,
    /// Not one verification key per member (v2).
    #[error("{keys} verification keys for {members} members")]
    VerificationKeys {
        /// Keys listed.
        keys: usize,
        /// Members listed.
        members: usize,
    },
    /// A value outside its range (v2): a verification value not in `1..N`, a share not
    /// positive or longer than the sharing allows.
    #[error("{field} is out of range")]
    OutOfRange {
        /// The field.
        field: ShareField,
    },
    /// A committee transcript that is not usable.
    #[error("transcript: {0}")]
    Transcript(#[source] TranscriptProblem),
}

impl ShareError {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never for
    /// now, a share file that cannot be used is malformed input (as is a committee transcript
    /// in it, whose own answer this is).
    pub fn is_verdict(&self) -> bool {
        match self {
            ShareError::File { problem, .. } => problem.is_verdict(),
            ShareError::Transcript(problem) => problem.is_verdict(),
            _ => false,
        }
    }
}

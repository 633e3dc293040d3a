//! The errors of the log: input that cannot be read (an error), and findings about a log that
//! was read (a negative verdict: [`LogError::is_verdict`]).

use tlog_tiles::Hash;

/// Why a log, a checkpoint, a proof or a key was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LogError {
    /// The input is not of the expected format.
    #[error("malformed {what}: {why}")]
    Malformed {
        /// What was being read (`checkpoint`, `tile`, `verifier key`, ...).
        what: &'static str,
        /// What is wrong with it.
        why: String,
    },
    /// The input is larger than any legitimate one.
    #[error("{what} is larger than {limit} bytes")]
    TooLarge {
        /// What was being read.
        what: &'static str,
        /// The largest accepted.
        limit: usize,
    },
    /// A key of the wrong kind was given (a witness's key as the log's, or the reverse).
    #[error("{name}: {why}")]
    WrongKey {
        /// The key's name.
        name: String,
        /// What is wrong.
        why: &'static str,
    },
    /// The verifier's own settings do not make sense (a quorum larger than the witnesses).
    #[error("{0}")]
    Settings(String),
    /// The checkpoint is for another log than the pinned key's.
    #[error("the checkpoint is for the log '{found}', not the pinned log '{expected}'")]
    OtherLog {
        /// The origin the pinned log key names.
        expected: String,
        /// The checkpoint's origin.
        found: String,
    },
    /// No signature of the pinned log key is on the checkpoint.
    #[error("the checkpoint is not signed by the pinned log key {key}")]
    NotSignedByLog {
        /// The key's name and id.
        key: String,
    },
    /// A signature by a pinned key does not verify (forged, or over another text).
    #[error("the checkpoint's signature by {name} (key {id:08x}) does not verify")]
    BadSignature {
        /// The signer's name.
        name: String,
        /// Its key id.
        id: u32,
    },
    /// Too few of the pinned witnesses cosigned the checkpoint.
    #[error(
        "the checkpoint is cosigned by {got} of the pinned witnesses, {needed} required{}",
        if cosigned.is_empty() { String::new() } else { format!(" (cosigned by {})", cosigned.join(", ")) }
    )]
    Quorum {
        /// Valid cosignatures of distinct pinned witnesses.
        got: usize,
        /// The quorum.
        needed: usize,
        /// The witnesses that did cosign.
        cosigned: Vec<String>,
    },
    /// An inclusion proof does not lead from the entry to the checkpoint's root.
    #[error("the inclusion proof of entry {index} does not lead to the root of the checkpoint of size {size}")]
    NotIncluded {
        /// The entry's index.
        index: u64,
        /// The checkpoint's size.
        size: u64,
    },
    /// Two views of the log that cannot both be true: a fork, or a rewritten history.
    #[error(
        "the log's history was rewritten or forked: the tree of size {old_size} (root {old_root}) \
         is not a prefix of the tree of size {new_size} (root {new_root})"
    )]
    Inconsistent {
        /// The earlier size.
        old_size: u64,
        /// Its root.
        old_root: Hash,
        /// The later size.
        new_size: u64,
        /// Its root.
        new_root: Hash,
    },
    /// The log is smaller than a size it showed before.
    #[error("the log shrank: it showed a tree of size {old_size} before and shows {new_size} now")]
    Shrank {
        /// The size seen before.
        old_size: u64,
        /// The size seen now.
        new_size: u64,
    },
    /// Served tiles do not hash to the checkpoint's root.
    #[error("the log's tiles do not hash to the root of its checkpoint of size {size}")]
    TilesMismatch {
        /// The checkpoint's size.
        size: u64,
    },
    /// The entries the log serves do not make the root of its checkpoint.
    #[error("the entries the log serves do not hash to the root of its checkpoint of size {size}")]
    EntriesMismatch {
        /// The checkpoint's size.
        size: u64,
    },
    /// An entry the auditor verified before is served changed: its bundle, downloaded again,
    /// does not match the leaf hash the verified tree holds for it (an entry rewritten in
    /// place).
    #[error(
        "entry {index} of the log was rewritten: the entry served now does not hash to the leaf \
         of the tree of size {size} verified before"
    )]
    EntryRewritten {
        /// The entry's index.
        index: u64,
        /// The size of the tree verified before, which holds the entry.
        size: u64,
    },
    /// A resource could not be fetched.
    #[error("cannot fetch {url}: {why}")]
    Fetch {
        /// The resource.
        url: String,
        /// What went wrong.
        why: String,
    },
    /// The log does not serve a resource its checkpoint needs.
    #[error("the log does not serve {url}")]
    Missing {
        /// The resource.
        url: String,
    },
    /// A file (a state file) could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// Making randomness failed.
    #[error(transparent)]
    Entropy(#[from] hourglass_arith::Error),
    /// A witness did not cosign a checkpoint (it refused, answered without its cosignature, or
    /// knows a larger tree than the log's).
    #[error("{0}")]
    WitnessRefused(String),
    /// A computation on the tree failed (an index outside the tree, a missing stored hash).
    #[error("tree: {0}")]
    Tree(String),
}

impl LogError {
    /// Whether this is a negative verdict on a log that was read (a forged or missing signature,
    /// too few cosignatures, a proof that fails, a fork), as opposed to input that could not be
    /// read or fetched at all.
    pub fn is_verdict(&self) -> bool {
        matches!(
            self,
            LogError::OtherLog { .. }
                | LogError::NotSignedByLog { .. }
                | LogError::BadSignature { .. }
                | LogError::Quorum { .. }
                | LogError::NotIncluded { .. }
                | LogError::Inconsistent { .. }
                | LogError::Shrank { .. }
                | LogError::TilesMismatch { .. }
                | LogError::EntriesMismatch { .. }
                | LogError::EntryRewritten { .. }
        )
    }

    pub(crate) fn malformed(what: &'static str, why: impl Into<String>) -> Self {
        LogError::Malformed {
            what,
            why: why.into(),
        }
    }
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, LogError>;

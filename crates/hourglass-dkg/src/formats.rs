//! The format tags the crate's files start with: a reader checks the tag before anything else,
//! and its error names the tags it expected.

/// The `format` line every cluster configuration starts with.
pub const CLUSTER_FORMAT: &str = "hourglass-dkg-cluster-v1";

/// The format tag of n-of-n share files.
pub const SHARE_FORMAT: &str = "hourglass-dkg-share-v1";

/// The format tag of threshold share files (version 2).
pub const THRESHOLD_SHARE_FORMAT: &str = "hourglass-dkg-share-v2";

/// The format tag of the transcript files written now (version 2, signed).
pub const TRANSCRIPT_FORMAT: &str = "hourglass-dkg-transcript-v2";

/// The format tag of version 1 transcripts (unsigned): still read, never trusted.
pub const TRANSCRIPT_FORMAT_V1: &str = "hourglass-dkg-transcript-v1";

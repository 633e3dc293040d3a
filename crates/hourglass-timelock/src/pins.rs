//! What a verifier pins of a public set's origin.

/// What a verifier pins of a public set's origin ([`crate::verdict::Verifier::public`]).
#[derive(Debug, Clone, Default)]
pub struct OriginPins {
    /// The committee, for a set on a committee's modulus.
    pub committee: Option<CommitteePins>,
}

/// A committee as the verifier pins it: its published transcript and the certificates of
/// members the verifier trusts.
#[derive(Debug, Clone)]
pub struct CommitteePins {
    /// The committee's `transcript.json` (its text, as published).
    pub transcript: String,
    /// The members' certificates the verifier trusts (DER).
    pub certificates: Vec<Vec<u8>>,
}

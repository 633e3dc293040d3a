//! Why one link of a bundle does not verify.

/// Why one link does not verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum LinkFault {
    /// A private set has no key with the link's fingerprint.
    UnknownKey,
    /// A public link names another set.
    OtherSet,
    /// The link's result is not the puzzle's (or the squarings') for its input.
    DoesNotVerify,
    /// A proof of another scheme than the set fixes.
    ProofScheme(hourglass_vdf::proof_file::ProofScheme),
    /// The proof does not verify.
    BadProof(String),
}

impl std::fmt::Display for LinkFault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            LinkFault::UnknownKey => f.write_str("no private key of the set has this fingerprint"),
            LinkFault::OtherSet => f.write_str("the link is for another public set"),
            LinkFault::DoesNotVerify => {
                f.write_str("the link does not verify (wrong, altered, or for another input)")
            }
            LinkFault::ProofScheme(s) => write!(f, "the set fixes {s} proofs"),
            LinkFault::BadProof(why) => write!(f, "the proof does not verify: {why}"),
        }
    }
}

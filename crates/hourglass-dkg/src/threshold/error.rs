//! Why a threshold operation (reshare, refresh, signing with `t + 1` shares) cannot go on.

use crate::PartyId;

/// What differs between two shares of different clusters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterDifference {
    /// Another generation session.
    #[error("another generation session")]
    Session,
    /// Another modulus.
    #[error("another modulus")]
    Modulus,
    /// The same session and modulus, another cluster name or public exponent.
    #[error("another cluster name or public exponent")]
    NameOrExponent,
}

impl ClusterDifference {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never: shares
    /// of different clusters are a mix-up of files.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

/// Why a threshold operation (reshare, refresh, signing with `t + 1` shares) cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ThresholdError {
    /// Fewer signers than `t + 1`.
    #[error("threshold t = {threshold} needs at least {needed} signers, {got} given")]
    TooFewSigners {
        /// The threshold.
        threshold: usize,
        /// `t + 1`.
        needed: usize,
        /// The signers given.
        got: usize,
    },
    /// A signer named twice.
    #[error("party {party} is named twice among the signers")]
    DuplicateSigner {
        /// The party.
        party: PartyId,
    },
    /// A signer that holds no share.
    #[error("party {party} is not a member of the cluster (members: {members:?})")]
    UnknownSigner {
        /// The party.
        party: PartyId,
        /// The members.
        members: Vec<PartyId>,
    },
    /// This party is not among the signers it was asked to sign with.
    #[error("party {party} is not among the signers {signers:?}")]
    NotASigner {
        /// This party.
        party: PartyId,
        /// The signers.
        signers: Vec<PartyId>,
    },
    /// A party whose share is of another cluster: another generation session, another modulus,
    /// or another cluster name or public exponent (the first that differs).
    #[error("party {party} holds a share of another cluster: {differs}")]
    OtherCluster {
        /// The party.
        party: PartyId,
        /// What differs.
        differs: ClusterDifference,
    },
    /// A party with another threshold: `t` is fixed at reshare, and nobody changes it on
    /// another party's word.
    #[error("party {party} has threshold {theirs}, this party {ours}: t is fixed at reshare, and nobody changes it on another party's word")]
    OtherThreshold {
        /// The party.
        party: PartyId,
        /// Its threshold.
        theirs: usize,
        /// This party's.
        ours: usize,
    },
    /// A party whose share is of another epoch.
    #[error("party {party} holds a share of epoch {theirs}, this party of epoch {ours}: {}", if theirs < ours { format!("party {party} missed a refresh (its share file is an old copy)") } else { "this party missed a refresh (its share file is an old copy)".to_string() })]
    OtherEpoch {
        /// The party.
        party: PartyId,
        /// Its epoch.
        theirs: u32,
        /// This party's.
        ours: u32,
    },
    /// A party whose share is of the same epoch but other verification data (another reshare
    /// or refresh of this cluster).
    #[error("party {party} holds a share of epoch {epoch} with other public verification data (another reshare or refresh of this cluster)")]
    OtherVerification {
        /// The party.
        party: PartyId,
        /// The epoch.
        epoch: u32,
    },
    /// A party with an n-of-n share where a threshold one is needed, or the other way round.
    #[error("party {party} holds {}", if *.threshold { "a threshold (v2) share: refresh it (dkg refresh), it is already reshared" } else { "an n-of-n (v1) share: reshare it first (dkg reshare --threshold T)" })]
    OtherKind {
        /// The party.
        party: PartyId,
        /// Whether its share is a threshold one.
        threshold: bool,
    },
    /// Partial signatures whose proofs of correctness do not verify, with too few valid ones
    /// left to sign.
    #[error("the partial signatures of parties {wrong:?} are wrong (their proofs of correctness do not verify); {valid} valid partials remain and {needed} are needed: no signature")]
    WrongPartials {
        /// The parties whose partials are wrong.
        wrong: Vec<PartyId>,
        /// Valid partials left.
        valid: usize,
        /// `t + 1`.
        needed: usize,
    },
    /// Partials whose proofs verify but that do not combine into a valid signature.
    #[error("the partial signatures do not combine into a valid signature: one of parties {parties:?} is wrong")]
    DoNotCombine {
        /// The parties among which one is wrong.
        parties: Vec<PartyId>,
    },
    /// A dealer's sub-share that is not the one its commitments promise.
    #[error("party {dealer} dealt this party a sub-share that does not match its commitments")]
    BadSubShare {
        /// The dealer.
        dealer: PartyId,
    },
    /// The dealt sharings do not make the key (`C_0^e != v^Delta`).
    #[error("the dealt shares do not make the key (a share file is damaged or of another key, or a party deviated): nothing is written")]
    DealtSumWrong,
    /// The refresh's public residues do not add up to a multiple of `k!`.
    #[error("the refresh's public residues do not add up to a multiple of k! (a party deviated): nothing is written")]
    ResidueSum,
    /// A party disagrees on the new epoch's public data.
    #[error(
        "party {party} ends the reshare with other public verification data: nothing is written"
    )]
    Disagree {
        /// The party.
        party: PartyId,
    },
    /// A secret to deal longer than the sharing allows.
    #[error("a share to deal is longer than the sharing's bound")]
    DealtTooLarge,
    /// A threshold share outside its bound.
    #[error("the threshold share is outside its bound")]
    ShareOutOfRange,
}

impl ThresholdError {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): a party
    /// caught deviating, by a check that fails (partial signatures whose proofs do not verify
    /// or that do not combine, a sub-share that is not the one its commitments promise, dealt
    /// sharings that do not make the key, residues that do not add up, other public data at
    /// the end of a reshare). Signers or shares that do not go together (too few, repeated,
    /// unknown, another cluster, threshold, epoch or kind) and values out of range are errors.
    pub fn is_verdict(&self) -> bool {
        match self {
            ThresholdError::WrongPartials { .. }
            | ThresholdError::DoNotCombine { .. }
            | ThresholdError::BadSubShare { .. }
            | ThresholdError::DealtSumWrong
            | ThresholdError::ResidueSum
            | ThresholdError::Disagree { .. } => true,
            ThresholdError::TooFewSigners { .. }
            | ThresholdError::DuplicateSigner { .. }
            | ThresholdError::UnknownSigner { .. }
            | ThresholdError::NotASigner { .. }
            | ThresholdError::OtherCluster { .. }
            | ThresholdError::OtherThreshold { .. }
            | ThresholdError::OtherEpoch { .. }
            | ThresholdError::OtherVerification { .. }
            | ThresholdError::OtherKind { .. }
            | ThresholdError::DealtTooLarge
            | ThresholdError::ShareOutOfRange => false,
        }
    }
}

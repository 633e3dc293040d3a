//! What a party did wrong in a session: a message that breaks the protocol, or a failure
//! (a lost link, no answer).

use std::sync::Arc;

use crate::wire::Tag;
use crate::{LinkLoss, LinkRejection, PartyId, WireError};

/// What was wrong with a party's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageProblem {
    /// A malformed frame or payload.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// Its link broke the framing.
    #[error(transparent)]
    Link(#[from] LinkRejection),
    /// A frame whose sender is not the link's authenticated party.
    #[error("claims to be party {claimed} on an authenticated link")]
    Impersonation {
        /// The sender the frame names.
        claimed: PartyId,
    },
    /// A second message for the same round.
    #[error("duplicate message for {tag:?}")]
    Duplicate {
        /// The round.
        tag: Tag,
    },
    /// A message for a round that is over.
    #[error("unexpected message for finished round {tag:?}")]
    FinishedRound {
        /// The round.
        tag: Tag,
    },
    /// A later message of the same kind arrived where this one was due: the sender skipped it
    /// (links deliver in order).
    #[error("sent a later message without the one for {tag:?}")]
    Skipped {
        /// The round it skipped.
        tag: Tag,
    },
    /// A set of the transcript signatures that does not list every member once, in order.
    #[error("its set of the transcript signatures does not list every member in order")]
    EchoOrder,
    /// An echo of the transcript signatures whose digest is not 32 bytes.
    #[error("its echo of the transcript signatures does not carry a 32-byte digest")]
    EchoDigest,
    /// A trial division witness that does not divide its modulus ([`crate::trial`]).
    #[error("claims a small factor of a modulus that does not divide it")]
    FalseWitness,
    /// A message of another session.
    #[error("message belongs to another session")]
    OtherSession,
    /// Too many messages buffered ahead of the protocol.
    #[error("too many messages ahead of the protocol")]
    TooManyAhead,
    /// An abort reason over the limit.
    #[error("abort reason too long")]
    AbortReasonTooLong,
    /// An abort naming a malformed party id.
    #[error("bad party id in abort")]
    AbortPartyId,
    /// An abort naming more parties than there are.
    #[error("an abort names too many parties")]
    AbortTooManyParties,
    /// A hello with a malformed member id.
    #[error("bad member id")]
    MemberId,
    /// A pairwise seed that is not 32 bytes.
    #[error("pairwise seed must be 32 bytes")]
    SeedLength,
    /// No pairwise seed with the sender.
    #[error("no pairwise seed")]
    NoPairwiseSeed,
    /// A signer that was asked to sign something else.
    #[error("it was asked to sign something else (another message, scheme, hash or key)")]
    SignsOther,
    /// A signing salt of the wrong length.
    #[error("salt of the wrong length")]
    SaltLength,
}

impl MessageProblem {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never: a
    /// message that cannot be read, comes out of turn, from another session or claims another
    /// sender is malformed input, not a party proven to lie.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

/// Why a party is taken to have failed (what this party observed of it).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Failure {
    /// Its link was lost.
    #[error(transparent)]
    Link(#[from] LinkLoss),
    /// It did not answer within the timeout.
    #[error("no answer within {timeout_ms} ms")]
    NoAnswer {
        /// The timeout, in milliseconds.
        timeout_ms: u128,
    },
    /// A party asked for a restart.
    #[error("a party asked for a restart")]
    RestartRequested,
    /// It did not answer during the restart.
    #[error("no answer during the restart")]
    NoAnswerDuringRestart,
    /// Sending to it failed for another reason (the transport's error).
    #[error("{0}")]
    Send(Arc<dyn std::error::Error + Send + Sync>),
    /// It failed while signing, which needs every member.
    #[error("{0} (signing needs every member)")]
    WhileSigning(Box<Failure>),
    /// It failed while signing with threshold shares, which needs every signer named.
    #[error("{0} (signing needs every signer named: name others, at least t + 1)")]
    WhileSigningWithThreshold(Box<Failure>),
    /// It failed during a reshare or refresh, which needs every member.
    #[error("{0} (a reshare or refresh needs every member)")]
    WhileResharing(Box<Failure>),
    /// It failed in the round of transcript signatures, which needs every member's.
    #[error("{0} (the transcript needs every member's signature)")]
    WhileSigningTranscript(Box<Failure>),
}

impl Failure {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never: a party
    /// that stops answering or whose link is lost has failed, which proves nothing against it.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

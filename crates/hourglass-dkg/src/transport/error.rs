//! How a link to a party is lost, or dropped for breaking the framing.

use std::sync::Arc;

use crate::wire::FrameType;

/// How a link to a party was lost.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LinkLoss {
    /// It closed.
    #[error("connection closed")]
    Closed,
    /// It failed.
    #[error("connection failed: {0}")]
    Failed(Arc<std::io::Error>),
    /// It closed in the middle of a frame.
    #[error("connection closed in the middle of a frame")]
    ClosedMidFrame,
    /// It failed in the middle of a frame.
    #[error("connection failed in the middle of a frame: {0}")]
    FailedMidFrame(Arc<std::io::Error>),
    /// Sending on it failed.
    #[error("sending failed: {0}")]
    SendFailed(Arc<std::io::Error>),
    /// The transport was dropped.
    #[error("transport dropped")]
    TransportDropped,
    /// It never connected.
    #[error("never connected")]
    NeverConnected,
    /// The party is not a peer of this one.
    #[error("not a peer of this party")]
    NotAPeer,
    /// A frame from it through the relay of a star failed its authentication: forged,
    /// altered, replayed, reordered, or one before it dropped ([`crate::star`]).
    #[error("a frame through the relay failed its authentication (altered, replayed, reordered or dropped)")]
    Unauthentic,
    /// The relay of a star reports that the party's connection to it is gone.
    #[error("its connection to the relay is gone (as the relay reports it)")]
    AtRelay,
    /// Its key announcement through the relay of a star was missing, malformed or not signed
    /// by the key of its pinned certificate.
    #[error("no key announcement signed by its certificate's key came through the relay")]
    NoSignedKey,
    /// Its frames through the relay of a star came further ahead of the protocol than a
    /// member's may ([`crate::bounds::FrameBounds::stamped`]): it flooded this party, or the
    /// relay repeated its frames. Its later frames are dropped.
    #[error("its frames through the relay came too far ahead of the protocol ({queued} bytes queued, limit {limit}): it flooded this party, or the relay repeated them")]
    FloodedThroughRelay {
        /// Its bytes queued.
        queued: u64,
        /// The limit.
        limit: u64,
    },
}

impl LinkLoss {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never: a lost
    /// link is a failure of the network or of the party.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

/// Why a peer's link was dropped for breaking the framing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkRejection {
    /// A frame larger than any a legitimate peer sends
    /// ([`crate::bounds::FrameBounds`]).
    #[error(
        "oversized {} ({len} bytes, limit {max} for this cluster)",
        .frame.map_or_else(|| "frame".to_string(), |f| format!("{f} frame"))
    )]
    OversizedFrame {
        /// Its announced length.
        len: u64,
        /// The limit.
        max: usize,
        /// Its kind and step, when its header was read.
        frame: Option<FrameType>,
    },
    /// Too many bytes sent ahead of the protocol.
    #[error("flooded: {queued} bytes sent ahead of the protocol (limit {limit})")]
    Flooded {
        /// Bytes queued.
        queued: u64,
        /// The limit.
        limit: u64,
    },
}

impl LinkRejection {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never: a peer
    /// that breaks the framing sends malformed input.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

//! Distributed RSA key generation among many parties, and signing with the shares.
//!
//! `k` parties jointly generate an RSA modulus `N = pq` and additive shares `d_1 + ... + d_k = d`
//! of the private exponent for `e = 65537`, such that no party ever learns `p`, `q` or `d`
//! (Boneh and Franklin's protocol, in the form implemented by Congos and Lesueur; semi-honest
//! parties, privacy against `floor((k-1)/2)` colluders).
//!
//! - [`transport`]: the message layer the protocol runs on ([`transport::Transport`]): an
//!   in-memory mesh for tests and simulations, and mutually authenticated TLS ([`tls`]) between
//!   processes, both with an optional delay/jitter/loss shaper;
//! - [`cluster`]: the cluster configuration (`CLUSTER.toml`) and the generation of a ready
//!   cluster for testing on one machine;
//! - [`params::Settings`]: what every party must agree on (modulus size, batch, sieving bound,
//!   biprimality rounds, failure handling).
#![forbid(unsafe_code)]

pub mod adversary;
pub mod bgw;
pub mod cluster;
pub mod keyshare;
pub mod params;
pub mod protocol;
pub mod rng;
pub mod session;
pub mod sieve;
pub mod sign;
pub mod tls;
pub mod transcript;
pub mod transport;
pub mod wire;

pub use hourglass_arith::Integer;
pub use transport::PartyId;

/// Errors of distributed key generation and signing.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The generation stopped after the requested number of batches, before a key was found
    /// (benchmarks measure iterations this way); the report says what was done.
    #[error("stopped after {} batches without a key", .0.batches)]
    Stopped(Box<protocol::Report>),
    /// A party sent something malformed, unexpected or oversized; the run is aborted.
    #[error("bad message from party {sender}: {reason}")]
    BadMessage {
        /// The authenticated sender.
        sender: PartyId,
        /// What was wrong (never contains secret values).
        reason: String,
    },
    /// Another party stopped the generation, naming the parties it holds responsible (its word
    /// alone removes nobody: the generation stops, and no key comes out).
    #[error("party {by} stopped the generation, naming {culprits:?}: {reason}")]
    Reported {
        /// The party that announced the stop.
        by: PartyId,
        /// The parties it named.
        culprits: Vec<PartyId>,
        /// Its reason.
        reason: String,
    },
    /// A party asked to remove parties this party sees alive: a false accusation. Nobody is
    /// removed on another party's word; the generation stops, naming the accuser.
    #[error("party {accuser} accused parties {accused:?}, which answer this party: a false accusation (nobody is removed on another party's word; the generation stops)")]
    FalseAccusation {
        /// The accuser.
        accuser: PartyId,
        /// The parties it accused that this party sees alive.
        accused: Vec<PartyId>,
    },
    /// A party failed at this party, while another survivor still reaches it: a party is
    /// removed only if every survivor saw it fail, so the generation stops instead.
    #[error("party {party} failed here ({reason}) but party {witness} still reaches it; nobody is removed unless every survivor saw it fail, so the generation stops")]
    Disputed {
        /// The party that failed here.
        party: PartyId,
        /// A survivor that did not see it fail.
        witness: PartyId,
        /// What this party observed.
        reason: String,
    },
    /// The link to a party failed (closed, reset) or it did not answer in time.
    #[error("party {party} failed: {reason}")]
    PartyFailed {
        /// The party that failed.
        party: PartyId,
        /// What was observed.
        reason: String,
    },
    /// Too few parties are left to continue.
    #[error("only {left} parties left, fewer than the {minimum} needed (2t + 1 for the fixed threshold t = {threshold}, or min_parties): the generation stops rather than weaken its privacy")]
    TooFewParties {
        /// Parties still alive.
        left: usize,
        /// The minimum: `max(min_parties, 2t + 1)`.
        minimum: usize,
        /// The fixed privacy threshold `t`.
        threshold: usize,
    },
    /// The cluster configuration is unusable.
    #[error("cluster configuration: {0}")]
    Config(String),
    /// TLS setup or handshake failed.
    #[error("TLS: {0}")]
    Tls(String),
    /// Invalid parameters.
    #[error("invalid parameters: {0}")]
    InvalidParameters(String),
    /// A share file is malformed or does not fit the other shares.
    #[error("key share: {0}")]
    Share(String),
    /// The joint signature did not verify.
    #[error("the combined signature does not verify: {0}")]
    Signature(String),
    /// An I/O error.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// An arithmetic or entropy error.
    #[error(transparent)]
    Arith(#[from] hourglass_arith::Error),
    /// An RSA error (encoding, padding).
    #[error(transparent)]
    Rsa(#[from] hourglass_rsa::Error),
}

impl Error {
    /// An I/O error with context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            context: context.into(),
            source,
        }
    }
}

/// Results of this crate.
pub type Result<T> = std::result::Result<T, Error>;

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
    /// The link to a party failed (closed, reset) or it did not answer in time.
    #[error("party {party} failed: {reason}")]
    PartyFailed {
        /// The party that failed.
        party: PartyId,
        /// What was observed.
        reason: String,
    },
    /// Too few parties are left to continue.
    #[error("only {left} parties left, the minimum is {minimum}")]
    TooFewParties {
        /// Parties still alive.
        left: usize,
        /// The configured minimum.
        minimum: usize,
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

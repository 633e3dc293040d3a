//! Distributed RSA key generation among many parties, and signing with the shares: with every
//! share, or, after a reshare, with any `t + 1`.
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
//!   biprimality rounds, failure handling), and [`bounds::FrameBounds`]: the largest frame of
//!   each type a legitimate party sends with them;
//! - [`transcript`]: the public record of a generation (`transcript.json`), signed by every
//!   member with its party key in the round that ends [`protocol::generate_signed`], and
//!   checked by anyone who trusts the members' certificates
//!   ([`transcript::SignedTranscript::verify`]);
//! - [`limits`]: the open-file limit a cluster needs (a socket per link), raised at start;
//! - [`reshare`] and [`threshold`]: from the n-of-n shares to a `t`-of-`k` sharing of `d`
//!   with no dealer (and proactive refreshes to new epochs), so that any `t + 1` members sign
//!   ([`sign::sign_threshold`]) with partial signatures whose proofs name a wrong one.
#![deny(unsafe_code)]

pub mod adversary;
pub mod bgw;
pub mod bounds;
pub mod cluster;
mod error;
mod formats;
pub mod keyshare;
// The only unsafe code: reading and raising the open-file limit through libc (see its SAFETY
// notes).
#[allow(unsafe_code)]
pub mod limits;
pub mod params;
mod party;
pub mod protocol;
pub mod reshare;
pub mod rng;
pub mod session;
pub mod sieve;
pub mod sign;
pub mod star;
pub mod threshold;
pub mod tls;
pub mod transcript;
pub mod transport;
pub mod trial;
pub mod wire;

pub use cluster::error::{ConfigError, ConfigProblem};
pub use error::{Error, IoOp, Result};
pub use hourglass_arith::Integer;
pub use keyshare::error::{ShareError, ShareField};
pub use params::error::ParamError;
pub use party::PartyId;
pub use session::error::{Failure, MessageProblem};
pub use sign::error::SignatureError;
pub use threshold::error::{ClusterDifference, ThresholdError};
pub use tls::error::{CertStep, TlsError};
pub use transcript::error::{
    CertificateProblem, SignatureFault, TranscriptField, TranscriptProblem, TrustError,
};
pub use transport::error::{LinkLoss, LinkRejection};
pub use wire::WireError;

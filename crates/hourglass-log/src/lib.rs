//! hourglass's transparency log: an append-only Merkle tree of entries (the service's signed
//! receipts) that anyone can audit, laid out as a C2SP tiled log, with checkpoints that the log
//! signs and independent witnesses cosign.
//!
//! - [`keys`]: the log's and the witnesses' Ed25519 keys, as C2SP signed-note verifier and
//!   signer keys (`name+id+base64`);
//! - [`checkpoint`]: C2SP tlog-checkpoint signed notes, cosignatures (C2SP
//!   tlog-cosignature/v1), and their verification under pinned keys and a witness quorum
//!   ([`checkpoint::LogPins`]);
//! - [`tree`]: RFC 6962 hashing, inclusion and consistency proofs, and the stored hashes a log
//!   keeps (through the `tlog_tiles` crate);
//! - [`tiles`]: the tile and entry-bundle resources (`tile/<L>/<N>[.p/<W>]`,
//!   `tile/entries/<N>[.p/<W>]`);
//! - [`client`]: verifying a log from its resources (signature, tiles, entries, consistency
//!   with the last verified checkpoint);
//! - [`witness`]: what a witness decides on an `add-checkpoint` request (C2SP tlog-witness), and
//!   what it remembers;
//! - [`cosign`]: the log's half of the witness protocol: the witnesses it asks, with their
//!   quorum, and what their answers mean;
//! - [`memory`]: a log laid out in memory as it is served (tests, static logs);
//! - `http` (feature `http`): fetching a log over HTTP, and asking a witness to cosign a
//!   checkpoint (the whole exchange, its 409 retries included).
//!
//! The formats (notes, checkpoints, keys) come from the `signed_note` and `tlog_tiles` crates,
//! ports of Go's `sumdb` packages; this crate owns the rules of their use: which keys are
//! pinned, what a quorum is, what is refused.
//!
//! ```
//! use hourglass_arith::entropy::OsEntropy;
//! use hourglass_log::checkpoint::{LogPins, SignedCheckpoint};
//! use hourglass_log::keys::{KeyRole, SigningKey};
//! use hourglass_log::tree::{append, leaf_hash, prove_inclusion, root, HashMemo};
//!
//! # fn main() -> Result<(), hourglass_log::LogError> {
//! // A log of three entries, and its checkpoint signed by the log's key.
//! let key = SigningKey::generate("log.example.org/receipts", KeyRole::Log, &mut OsEntropy)?;
//! let entries: [&[u8]; 3] = [b"first", b"second", b"third"];
//! let mut memo = HashMemo::new();
//! let leaves: Vec<_> = entries.iter().map(|e| leaf_hash(e)).collect();
//! append(&mut memo, 0, &leaves)?;
//! let checkpoint = SignedCheckpoint::sign(key.name(), 3, root(&memo, 3)?, &key)?;
//!
//! // Anyone with the log's public key: the checkpoint, then entry 1 in it.
//! let verified = SignedCheckpoint::parse(&checkpoint.to_bytes())?
//!     .verify(&LogPins::log_only(key.verifier())?)?;
//! prove_inclusion(&memo, 3, 1)?.verify(b"second", &verified.root)?;
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

pub mod checkpoint;
pub mod client;
pub mod cosign;
mod error;
#[cfg(feature = "http")]
pub mod http;
pub mod keys;
pub mod memory;
pub mod tiles;
pub mod tree;
pub mod witness;

pub use error::{LogError, Result};

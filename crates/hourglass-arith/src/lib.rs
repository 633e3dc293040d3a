//! The arithmetic core of hourglass.
//!
//! Everything above this crate (RSA variants, time-lock puzzles, VDFs, distributed key
//! generation) does its big-integer work through GMP, reached through [`rug`]. This crate adds
//! what GMP does not give directly:
//!
//! - [`entropy`]: where random bits come from (the OS CSPRNG by default, a file or device such as
//!   a hardware RNG, or an explicitly insecure seeded generator for tests and benchmarks);
//! - [`prime`]: random primes by incremental sieving, and primality testing with a chosen number
//!   of Miller-Rabin rounds plus a strong Lucas test (Baillie-PSW);
//! - [`modular`]: modular helpers with constant-time variants for secret exponents;
//! - [`secret`]: a zeroizing wrapper for secret integers;
//! - [`hash_to_int`]: hashing byte strings onto the whole group `Z_n` (RFC 9380's
//!   `expand_message_xmd`), for every input raised to a sequential or secret power;
//! - [`checkpoint`]: authenticated, atomic checkpoints for long squaring runs;
//! - [`atomic`]: files that appear whole or not at all (the one way hourglass writes files).
//!
//! ```
//! use hourglass_arith::{entropy::SeededEntropy, prime::{random_prime, PrimeRequest}};
//!
//! // A deterministic, insecure source: fine for examples and tests only.
//! let mut rng = SeededEntropy::new(b"doc example");
//! let p = random_prime(&PrimeRequest::new(256), &mut rng).unwrap();
//! assert_eq!(p.significant_bits(), 256);
//! assert!(p.is_probably_prime(30) != rug::integer::IsPrime::No);
//! ```

pub mod atomic;
pub mod checkpoint;
pub mod entropy;
pub mod fixed;
pub mod hash_to_int;
pub mod modular;
pub mod mont;
pub mod prime;
pub mod secret;
pub mod squaring;

pub use rug::Integer;

/// Errors from the arithmetic core.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The entropy source could not deliver the requested bytes.
    #[error("entropy source failed: {0}")]
    Entropy(String),
    /// The entropy file or device ran out of bytes.
    #[error("entropy source {source_name} ran out after {consumed} bytes (needed {needed} more)")]
    EntropyExhausted {
        /// A printable name for the source (usually its path).
        source_name: String,
        /// Bytes consumed before it ran out.
        consumed: u64,
        /// Bytes still needed by the request that failed.
        needed: usize,
    },
    /// A parameter was outside the range an operation accepts.
    #[error("invalid parameter: {0}")]
    InvalidParameter(String),
    /// A modular inverse was requested for a non-invertible value.
    #[error("value is not invertible modulo the given modulus")]
    NotInvertible,
}

/// Parses a non-negative integer written as 1 to 8192 hexadecimal digits (no prefix, no sign,
/// no spaces): the form every hourglass file uses. `None` for anything else.
pub fn integer_from_hex(s: &str) -> Option<Integer> {
    if s.is_empty() || s.len() > 8192 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Integer::from_str_radix(s, 16).ok()
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

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
//! - [`atomic`]: files that appear whole or not at all (the one way hourglass writes files);
//! - [`threads`]: independent work (exponentiations, verifications) spread over the cores.
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
mod error;
pub mod fixed;
pub mod hash_to_int;
mod hex;
pub mod modular;
pub mod mont;
pub mod prime;
pub mod secret;
pub mod squaring;
pub mod threads;

pub use error::{Error, Result};
pub use hex::{bytes_from_canonical_hex, integer_from_canonical_hex, integer_from_hex};
pub use rug::Integer;

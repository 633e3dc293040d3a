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
    /// The operating system's random generator failed.
    #[error("the operating system's random generator failed: {0}")]
    OsRandom(getrandom::Error),
    /// The entropy file or device could not be opened or read.
    #[error("entropy source {}: {source} (--entropy takes a readable file or device)", path.display())]
    EntropyIo {
        /// The file or device.
        path: std::path::PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A thread panicked while holding the shared entropy file.
    #[error("the shared entropy file was left poisoned by a panicked thread")]
    EntropyPoisoned,
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
    /// An argument outside what a function accepts (the message names the function's rule).
    #[error("invalid argument: {0}")]
    InvalidArgument(&'static str),
    /// A modulus larger than the squaring kernels support.
    #[error("a {bits}-bit modulus is larger than the {max} bits the squaring kernels support")]
    ModulusTooLarge {
        /// The modulus's size.
        bits: u32,
        /// The largest size supported.
        max: u32,
    },
    /// A modulus the operation cannot use (even, or too small).
    #[error("{0}")]
    UnsuitableModulus(&'static str),
    /// A Montgomery operand of the wrong size.
    #[error("operand has {got} limbs, the context works with {want}")]
    OperandSize {
        /// Limbs given.
        got: usize,
        /// Limbs expected.
        want: usize,
    },
    /// A Montgomery operand not below the modulus.
    #[error("operand is not reduced modulo n")]
    OperandNotReduced,
    /// A kernel this CPU or modulus does not support.
    #[error("the {0} kernel is not available for this modulus on this CPU")]
    KernelUnavailable(mont::Kernel),
    /// The error-checked squaring engine kept detecting wrong results.
    #[error(
        "squaring faults keep recurring after {done} squarings: the machine computes wrong results"
    )]
    RecurringFaults {
        /// Verified squarings before the faults.
        done: u64,
    },
    /// A domain separation tag outside 1 to `max` bytes.
    #[error("a domain separation tag has 1 to {max} bytes")]
    TagLength {
        /// The longest tag allowed here.
        max: usize,
    },
    /// expand_message_xmd asked for a length it cannot produce.
    #[error("expand_message_xmd cannot produce {0} bytes (1 to 8160)")]
    ExpandLength(usize),
    /// Hashing into the group found no element (a tiny modulus).
    #[error("no element of [2, n-2] found for this input (is n tiny?)")]
    NoResidue,
    /// A prime of fewer than 3 bits was asked for.
    #[error("cannot make a {0}-bit prime (need at least 3 bits)")]
    PrimeTooSmall(u32),
    /// CRT recombination of congruences that contradict each other.
    #[error("inconsistent congruences (a != b modulo gcd(m, n))")]
    InconsistentCongruences,
    /// A modular inverse was requested for a non-invertible value.
    #[error("value is not invertible modulo the given modulus")]
    NotInvertible,
    /// No directory to keep the checkpoint key in.
    #[error("no state directory for the checkpoint key: set HOURGLASS_STATE_DIR or HOME")]
    NoStateDir,
    /// Reading or writing a checkpoint, its key or a side file.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: std::path::PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A checkpoint key file others can read or write.
    #[error("{} is accessible to other users (mode {mode:o}): anyone who reads it can forge checkpoints; run chmod 600 on it", path.display())]
    KeyExposed {
        /// The key file.
        path: std::path::PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// A checkpoint key file of the wrong length.
    #[error("{} is not a checkpoint key (32 bytes); delete it to make a new one", path.display())]
    NotAKey {
        /// The file.
        path: std::path::PathBuf,
    },
    /// An authentic checkpoint of another run (this user's other work: neither used nor
    /// overwritten).
    #[error("{}: the checkpoint belongs to another puzzle or input", path.display())]
    ForeignCheckpoint {
        /// The checkpoint.
        path: std::path::PathBuf,
    },
    /// An authentic checkpoint of a run with another length or block size.
    #[error("{}: the checkpoint is for a run of {total} squarings in blocks of {block}, not {want_total} in blocks of {want_block}", path.display())]
    CheckpointShape {
        /// The checkpoint.
        path: std::path::PathBuf,
        /// Its run's length.
        total: u64,
        /// Its run's block.
        block: u64,
        /// This run's length.
        want_total: u64,
        /// This run's block.
        want_block: u64,
    },
    /// A checkpoint path that is a directory.
    #[error("the checkpoint {} is a directory", path.display())]
    CheckpointIsDirectory {
        /// The path.
        path: std::path::PathBuf,
    },
    /// An untrusted checkpoint that could not be moved aside.
    #[error("the checkpoint {} is not trusted ({why}) and cannot be moved aside: {source}", path.display())]
    CannotSetAside {
        /// The checkpoint.
        path: std::path::PathBuf,
        /// Why it is not trusted.
        why: String,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// A checkpoint state that does not fit the run (not reduced, past the end).
    #[error("checkpoint state does not fit this run")]
    StateMismatch,
    /// A checkpoint state at 0 squarings that does not start from this run's input.
    #[error("checkpoint state does not start from this input")]
    StateInput,
}

/// Parses a non-negative integer written as 1 to 8192 hexadecimal digits (no prefix, no sign,
/// no spaces): the form every hourglass file uses. `None` for anything else.
pub fn integer_from_hex(s: &str) -> Option<Integer> {
    if s.is_empty() || s.len() > 8192 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Integer::from_str_radix(s, 16).ok()
}

/// Parses a non-negative integer in the canonical hex form the time-certifying files require
/// (bundles, sets, proofs, receipts, transcripts): 1 to 8192 lowercase hexadecimal digits with
/// no leading zero (zero is `0`). `None` for anything else, so one value has one spelling.
pub fn integer_from_canonical_hex(s: &str) -> Option<Integer> {
    let canonical = s == "0" || !s.starts_with('0');
    if !canonical || !is_lower_hex(s) || s.len() > 8192 {
        return None;
    }
    Integer::from_str_radix(s, 16).ok()
}

/// Parses exactly `N` bytes written as `2 N` lowercase hexadecimal digits (digests,
/// fingerprints, session ids). `None` for anything else.
pub fn bytes_from_canonical_hex<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != 2 * N || !is_lower_hex(s) {
        return None;
    }
    let mut out = [0u8; N];
    for (byte, pair) in out.iter_mut().zip(s.as_bytes().chunks_exact(2)) {
        *byte = (hex_digit(pair[0]) << 4) | hex_digit(pair[1]);
    }
    Some(out)
}

/// The value of a lowercase hexadecimal digit (already checked).
fn hex_digit(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        _ => b - b'a' + 10,
    }
}

/// Whether `s` is non-empty and only `0-9a-f`.
fn is_lower_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod hex_tests {
    use super::*;

    #[test]
    fn canonical_hex_has_one_spelling_per_value() {
        assert_eq!(integer_from_canonical_hex("0"), Some(Integer::ZERO));
        assert_eq!(integer_from_canonical_hex("1f"), Some(Integer::from(31)));
        for bad in ["", "00", "01f", "1F", "0x1f", " 1f", "1f ", "-1", "g"] {
            assert_eq!(integer_from_canonical_hex(bad), None, "{bad:?}");
            if bad != "00" {
                assert_eq!(bytes_from_canonical_hex::<1>(bad), None, "{bad:?}");
            }
        }
        // Fixed-width bytes keep their leading zeros: "00" is the one spelling of [0].
        assert_eq!(bytes_from_canonical_hex::<1>("00"), Some([0]));
        assert_eq!(integer_from_canonical_hex(&"f".repeat(8193)), None);
        assert!(integer_from_canonical_hex(&"f".repeat(8192)).is_some());
        assert_eq!(bytes_from_canonical_hex::<2>("00af"), Some([0x00, 0xaf]));
        assert_eq!(bytes_from_canonical_hex::<2>("00AF"), None);
        assert_eq!(bytes_from_canonical_hex::<2>("0af"), None);
        assert_eq!(bytes_from_canonical_hex::<2>("00af00"), None);
    }
}

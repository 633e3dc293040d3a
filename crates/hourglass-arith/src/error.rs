//! Errors from the arithmetic core.

use crate::mont::kernel::Kernel;

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
    KernelUnavailable(Kernel),
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

impl Error {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never, for
    /// the arithmetic core, whose failures are all errors.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

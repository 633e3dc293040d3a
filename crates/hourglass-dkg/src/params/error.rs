//! Invalid parameters: settings, sizes and values out of range, and internal inconsistencies.

use hourglass_rsa::HashAlg;

use crate::wire::Tag;

/// Invalid parameters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    /// A threshold outside `1..=(parties - 1) / 2`.
    #[error("threshold {threshold} for {parties} parties: use 1 to {max} (a generation needs 2t + 1 parties)")]
    Threshold {
        /// The threshold.
        threshold: usize,
        /// The parties.
        parties: usize,
        /// The largest threshold.
        max: usize,
    },
    /// A modulus size outside 512 to 8192 or not a multiple of 16.
    #[error("modulus size {bits} bits: use a multiple of 16 from 512 to 8192")]
    Bits {
        /// The size.
        bits: u32,
    },
    /// A batch outside 1 to 4096.
    #[error("batch {batch}: use 1 to 4096 candidate pairs per round")]
    Batch {
        /// The batch.
        batch: usize,
    },
    /// Biprimality rounds outside 1 to 1024.
    #[error("{rounds} biprimality rounds: use 1 to 1024")]
    BiprimalityRounds {
        /// The rounds.
        rounds: u32,
    },
    /// `min_parties` below 3.
    #[error("at least 3 parties are needed (with 2, BGW shares reveal the secrets)")]
    MinParties,
    /// A zero timeout.
    #[error("timeout must be positive")]
    Timeout,
    /// Fewer than 3 parties for the sieve.
    #[error("at least 3 parties")]
    SieveParties,
    /// A sieving bound of 65536 or more.
    #[error("sieving bound {bound}: use a bound below 65536")]
    SieveBound {
        /// The bound.
        bound: u32,
    },
    /// A sieving bound with no prime above the party count.
    #[error("sieving bound {bound} has no prime above {parties} (the party count) to sieve with")]
    NoSievePrime {
        /// The bound.
        bound: u32,
        /// The parties.
        parties: usize,
    },
    /// Sieving moduli that are not coprime.
    #[error("sieving moduli not coprime")]
    SieveModuli,
    /// A sieving bound that leaves too few random bits.
    #[error("sieving bound {bound} is too large for {prime_bits}-bit primes and {parties} parties (each party needs at least {min_free_bits} free random bits)")]
    SieveTooLarge {
        /// The bound.
        bound: u32,
        /// The primes' size.
        prime_bits: u32,
        /// The parties.
        parties: usize,
        /// The fewest free bits.
        min_free_bits: u32,
    },
    /// Primes too small to sieve for this many parties.
    #[error("{prime_bits}-bit primes are too small to sieve for {parties} parties")]
    PrimesTooSmall {
        /// The primes' size.
        prime_bits: u32,
        /// The parties.
        parties: usize,
    },
    /// An adversary specification that is not `ID:BEHAVIOUR`.
    #[error("adversary '{spec}': use ID:BEHAVIOUR with BEHAVIOUR one of {}", crate::adversary::deviation::Deviation::ALL.iter().map(|(_, n)| *n).collect::<Vec<_>>().join(", "))]
    Adversary {
        /// What was given.
        spec: String,
    },
    /// A modulus with a factor below the party count.
    #[error("the modulus has a factor below {parties}, so {parties} parties cannot share over it")]
    ShamirModulus {
        /// The parties.
        parties: usize,
    },
    /// A Lagrange coefficient that is not invertible.
    #[error("Lagrange coefficient not invertible")]
    Lagrange,
    /// An even modulus.
    #[error("the modulus must be odd")]
    EvenModulus,
    /// A digest of the wrong length for its hash.
    #[error("a {} digest has {want} bytes, not {got}", hash.name())]
    DigestLength {
        /// The hash.
        hash: HashAlg,
        /// Its output length.
        want: usize,
        /// The digest's length.
        got: usize,
    },
    /// A frame too long for the length prefix.
    #[error("a frame of {len} bytes does not fit the 4-byte length prefix")]
    FrameTooLarge {
        /// Its length.
        len: usize,
    },
    /// The in-memory transport's shaper lock was poisoned.
    #[error("shaper lock poisoned")]
    ShaperPoisoned,
    /// An internal inconsistency: a biprimality exponent not divisible by 4.
    #[error("internal: biprimality exponent not divisible by 4")]
    BiprimalityExponent,
    /// An internal inconsistency: rounds out of order.
    #[error("internal: round {tag:?} repeats or precedes {last:?}")]
    RoundOrder {
        /// The round.
        tag: Tag,
        /// The last round.
        last: Tag,
    },
}

impl ParamError {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never:
    /// parameters out of range are a usage error.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

//! Why a VDF operation failed: one variant per cause, grouped by area (the modulus, the input,
//! parameters, proof files, the evaluation's powers file).

use std::path::PathBuf;

use rug::Integer;

use crate::scheme::ProofScheme;

/// Errors of the VDF library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The modulus cannot be used for a VDF.
    #[error("unusable modulus: {0}")]
    InvalidModulus(#[from] ModulusError),
    /// The input cannot be used.
    #[error("invalid input: {0}")]
    InvalidInput(#[from] InputError),
    /// A parameter (iterations, security level, ...) is out of range.
    #[error("invalid parameters: {0}")]
    InvalidParameters(#[from] ParamError),
    /// The proof does not verify. Deliberately unspecific beyond what is public.
    #[error("the proof is invalid: {0}")]
    InvalidProof(&'static str),
    /// A proof file could not be parsed.
    #[error("malformed proof file: {0}")]
    Format(#[from] FormatError),
    /// The file of kept powers beside a checkpoint could not be written.
    #[error("checkpoint: {}: {source}", path.display())]
    PowersFile {
        /// The powers file.
        path: PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
    /// An error of the arithmetic core (squaring engine, checkpoint files).
    #[error(transparent)]
    Arith(#[from] hourglass_arith::Error),
}

impl Error {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never. A
    /// proof judged against what the verifier trusts is a
    /// [`ProofVerdict`](crate::proof_file::ProofVerdict), not an error; an error here is a file,
    /// a parameter or a self-check that failed.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

/// Why a modulus cannot serve as a VDF group.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ModulusError {
    /// Fewer bits than the smallest modulus accepted.
    #[error("a {bits}-bit modulus is too small (at least {min} bits)")]
    TooSmall {
        /// The modulus's size.
        bits: u32,
        /// The smallest size accepted.
        min: u32,
    },
    /// More bits than the largest modulus accepted.
    #[error("a {bits}-bit modulus is above the {max}-bit limit")]
    TooLarge {
        /// The modulus's size.
        bits: u32,
        /// The largest size accepted.
        max: u32,
    },
    /// An even modulus.
    #[error("the modulus is even")]
    Even,
    /// A modulus with prime factors below 2^16.
    #[error("the modulus has the small factor {factor}")]
    SmallFactor {
        /// The product of its small prime factors (its gcd with the primorial).
        factor: Integer,
    },
    /// A perfect power.
    #[error("the modulus is a perfect power")]
    PerfectPower,
    /// A prime modulus (its group order is known).
    #[error("the modulus is prime (its group order is known)")]
    Prime,
}

/// Why an input cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum InputError {
    /// An element that is not in canonical form (`min(v, N - v)`).
    #[error("the input is not a canonical group element")]
    NotCanonical,
    /// An input that hashes to 0, 1 or a non-unit.
    #[error("the input hashes to a degenerate element (this reveals a factor of the modulus)")]
    Degenerate,
    /// An input longer than a proof file carries.
    #[error("the input is {len} bytes; a proof file carries at most {max} (hash a larger document first)")]
    TooLong {
        /// The input's length.
        len: usize,
        /// The longest input a proof file carries.
        max: usize,
    },
}

/// A parameter out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    /// A number of squarings outside 1 to 2^50.
    #[error("the number of iterations must be between 1 and 2^50, not {found}")]
    Iterations {
        /// The number given.
        found: u64,
    },
    /// A security level other than 128 or 256.
    #[error("security level k = {found} is not supported (128 or 256)")]
    SecurityLevel {
        /// The level given, in bits.
        found: u32,
    },
    /// More sieving primes than fit a 64-bit word.
    #[error("at most {max} sieving primes fit a 64-bit word")]
    SievePrimes {
        /// The number asked for.
        count: usize,
        /// The most that fit.
        max: usize,
    },
    /// No candidate of a hash-to-prime search was prime (vanishingly unlikely).
    #[error("no prime among the hash candidates (this should never happen)")]
    NoPrime,
}

/// A hexadecimal field of a proof file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProofField {
    /// `input`.
    Input,
    /// `output`.
    Output,
    /// Wesolowski's `pi`.
    Pi,
    /// Wesolowski's challenge `l`.
    L,
    /// A Pietrzak `mu`.
    Mu,
}

impl std::fmt::Display for ProofField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ProofField::Input => "input",
            ProofField::Output => "output",
            ProofField::Pi => "pi",
            ProofField::L => "l",
            ProofField::Mu => "mu",
        })
    }
}

/// Why a proof file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FormatError {
    /// A file larger than any proof file.
    #[error("larger than {max} bytes")]
    TooLarge {
        /// The largest file read.
        max: usize,
    },
    /// Not JSON, or JSON without the fields of a proof file.
    #[error("{0}")]
    Json(#[source] serde_json::Error),
    /// A `proof` object that is neither scheme's.
    #[error("proof must be {{\"pi\", \"l\"}} (wesolowski) or {{\"mu\": [...]}} (pietrzak), with no other fields")]
    ProofShape,
    /// A `format` other than an hourglass VDF proof's.
    #[error("not an hourglass VDF proof (format {found:?})")]
    NotAProof {
        /// The `format` in the file.
        found: String,
    },
    /// A version this one does not read.
    #[error("version {found} is not supported (this hourglass reads version {supported})")]
    UnknownVersion {
        /// The version in the file.
        found: u32,
        /// The version this one reads.
        supported: u32,
    },
    /// A security level or number of iterations out of range.
    #[error("invalid parameters: {0}")]
    Parameters(#[source] ParamError),
    /// A modulus that is neither a built-in name nor canonical hexadecimal.
    #[error(
        "modulus must be {} or lowercase hex without leading zeros",
        builtin.join(", ")
    )]
    ModulusSyntax {
        /// The built-in moduli's names.
        builtin: &'static [&'static str],
    },
    /// An input that is not lowercase hexadecimal of at most `max` bytes.
    #[error("input must be lowercase hex of at most {max} bytes")]
    InputSyntax {
        /// The longest input.
        max: usize,
    },
    /// A fixed-width field of the wrong length or not lowercase hexadecimal.
    #[error("{field} must be {digits} lowercase hex digits")]
    FixedHex {
        /// The field.
        field: ProofField,
        /// The digits it must have.
        digits: usize,
    },
    /// A field whose hexadecimal does not decode.
    #[error("{field}: {source}")]
    Hex {
        /// The field.
        field: ProofField,
        /// Why.
        #[source]
        source: hex::FromHexError,
    },
    /// A Pietrzak proof with more rounds than any number of iterations needs.
    #[error("too many rounds")]
    TooManyRounds {
        /// Rounds in the file.
        rounds: usize,
        /// The most accepted.
        max: usize,
    },
    /// A proof object of the other scheme.
    #[error("the proof object does not match the scheme {scheme}")]
    SchemeMismatch {
        /// The scheme the file names.
        scheme: ProofScheme,
    },
    /// A scheme this one does not know.
    #[error("unknown scheme {found:?} (wesolowski or pietrzak)")]
    UnknownScheme {
        /// The scheme in the file.
        found: String,
    },
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

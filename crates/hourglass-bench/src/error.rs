//! Why a benchmark stopped: one variant per cause, with a hint where the user can act.

use std::path::PathBuf;

use hourglass_arith::mont::Kernel;
use hourglass_timelock::SetKind;

/// Errors of the benchmarks.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A count option (`--runs`, `--count`) was zero.
    #[error("{option} must be at least 1")]
    ZeroCount {
        /// The option, as written on the command line.
        option: &'static str,
    },
    /// Options that must all be positive were not (the options, as written in the message).
    #[error("{options} must be positive")]
    NotPositive {
        /// The options and their ranges, as the message names them.
        options: &'static str,
    },
    /// A modulus size outside what the command accepts.
    #[error("--bits {bits} is outside {min}..={max}")]
    BitsOutOfRange {
        /// The requested size.
        bits: u32,
        /// Smallest accepted size.
        min: u32,
        /// Largest accepted size.
        max: u32,
    },
    /// A modulus size outside what `bench rsa` measures.
    #[error("--bits {bits}: sizes must be within {min}..={max}")]
    RsaBitsOutOfRange {
        /// The requested size.
        bits: u32,
        /// Smallest accepted size.
        min: u32,
        /// Largest accepted size.
        max: u32,
    },
    /// `--seconds` outside its range.
    #[error("--seconds must be within {min}..={max}")]
    SecondsOutOfRange {
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value.
        max: f64,
    },
    /// `--parties` outside 3 to 128.
    #[error("--parties: use 3 to 128 parties")]
    PartiesOutOfRange,
    /// `--rtt-ms` outside 0 to 60000.
    #[error("--rtt-ms {rtt_ms}: use 0 to 60000 milliseconds")]
    RttOutOfRange {
        /// The value given.
        rtt_ms: f64,
    },
    /// The running executable, whose `dkg local` the scale table runs, cannot be found.
    #[error("cannot find the hourglass executable for the scale table: {0}")]
    CurrentExe(#[source] std::io::Error),
    /// Full generations of the scale table failed (each configuration's first failure; the
    /// other configurations ran and were reported).
    #[error("{} of the scale table's configurations failed: {}", failures.len(), failures.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "))]
    ScaleFailed {
        /// Each failed configuration, with its error.
        failures: Vec<ScaleFailure>,
    },
    /// An output file (a plot) exists and replacing it was not allowed.
    #[error("{} already exists", path.display())]
    OutputExists {
        /// The output.
        path: PathBuf,
    },
    /// An output file (a plot) could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The output.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// Writing to standard output failed.
    #[error("cannot write to standard output: {0}")]
    Stdout(#[source] std::io::Error),
    /// The benchmark's document could not be digested.
    #[error("digesting the document: {0}")]
    Io(#[source] std::io::Error),
    /// A temporary directory for the benchmark's files could not be made.
    #[error("temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    /// A JSON report could not be serialised.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// An RSA decryption in the benchmark did not give back the message.
    #[error("benchmark decryption gave a wrong result")]
    WrongDecryption,
    /// A puzzle solution made by the benchmark did not verify.
    #[error("benchmark solution did not verify")]
    SolutionRejected,
    /// A bundle sealed by the benchmark did not verify.
    #[error("the {}benchmark bundle does not verify", match set { SetKind::Private => "private ", SetKind::Public => "" })]
    BundleRejected {
        /// The kind of set it was sealed on.
        set: SetKind,
    },
    /// The solver's error-checked run was stopped before the end.
    #[error("benchmark run stopped unexpectedly")]
    RunStopped,
    /// Two implementations of the same squarings gave different results (an arithmetic fault).
    #[error("{0}")]
    Disagreement(Disagreement),
    /// A party thread of the DKG benchmark panicked.
    #[error("a benchmark party panicked")]
    PartyPanicked,
    /// The DKG benchmark ran no party.
    #[error("no parties")]
    NoParties,
    /// OpenSSL's Montgomery context could not be made or used.
    #[error("OpenSSL Montgomery context failed")]
    OpensslMontgomery,
    /// An OpenSSL call failed.
    #[error("OpenSSL: {0}")]
    Openssl(#[from] openssl::error::ErrorStack),
    /// The arithmetic core failed (entropy, parameters).
    #[error(transparent)]
    Arith(#[from] hourglass_arith::Error),
    /// An RSA operation or key generation failed.
    #[error(transparent)]
    Rsa(#[from] hourglass_rsa::Error),
    /// A puzzle, set or bundle operation failed.
    #[error(transparent)]
    Timelock(#[from] hourglass_timelock::Error),
    /// A VDF evaluation, proof or group failed.
    #[error(transparent)]
    Vdf(#[from] hourglass_vdf::Error),
    /// A distributed key generation failed.
    #[error("benchmark generation failed: {0}")]
    Dkg(#[from] hourglass_dkg::Error),
    /// The TSA benchmark's server or clients failed.
    #[error("TSA benchmark: {0}")]
    Tsa(String),
    /// `hourglass serve`, started by a benchmark, failed.
    #[error("the service: {0}")]
    Service(String),
    /// The transparency log benchmark failed.
    #[error("log benchmark: {0}")]
    Log(String),
    /// A token of the TSA benchmark did not read or verify.
    #[error("TSA benchmark: {0}")]
    Timestamp(#[from] hourglass_timestamp::TimestampError),
}

/// A configuration of the scale table whose full generation failed.
#[derive(Debug)]
pub struct ScaleFailure {
    /// Number of parties.
    pub parties: usize,
    /// Modulus size in bits.
    pub bits: u32,
    /// The simulated round trip, `None` on plain loopback.
    pub rtt_ms: Option<f64>,
    /// Which run failed (from 1).
    pub run: usize,
    /// What went wrong.
    pub problem: ScaleRunProblem,
}

impl std::fmt::Display for ScaleFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} parties at {} bits, ", self.parties, self.bits)?;
        match self.rtt_ms {
            Some(rtt) => write!(f, "{rtt} ms round trip")?,
            None => f.write_str("loopback")?,
        }
        write!(f, ", run {}: {}", self.run, self.problem)
    }
}

/// Why one full generation of the scale table failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ScaleRunProblem {
    /// No temporary directory for the cluster.
    #[error("temporary directory: {0}")]
    TempDir(#[source] std::io::Error),
    /// `hourglass dkg local` could not be started.
    #[error("cannot start `hourglass dkg local`: {0}")]
    Start(#[source] std::io::Error),
    /// `hourglass dkg local` failed.
    #[error("`hourglass dkg local` exited with {}: {stderr}", code.map_or("a signal".to_string(), |c| format!("status {c}")))]
    Exit {
        /// Its exit status (`None`: killed by a signal).
        code: Option<i32>,
        /// The first lines of its standard error, joined by " / ".
        stderr: String,
    },
    /// Its JSON summary does not parse.
    #[error("`hourglass dkg local --json` printed no summary this version reads: {0}")]
    Report(#[source] serde_json::Error),
}

/// Which two computations of the same squarings disagreed.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Disagreement {
    /// The error-checked solver and the bare kernel.
    SolverKernel,
    /// The error-checked solver and GMP's `mpz_powm`.
    SolverGmp,
    /// OpenSSL's Montgomery squarings and GMP (`bench puzzle`).
    OpensslGmpPuzzle,
    /// OpenSSL's Montgomery squarings and GMP (`bench squaring`).
    OpensslGmp,
    /// One of hourglass's Montgomery kernels and GMP.
    Kernel(Kernel),
}

impl std::fmt::Display for Disagreement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SolverKernel => {
                f.write_str("solver and kernel disagree: arithmetic fault on this machine?")
            }
            Self::SolverGmp => {
                f.write_str("solver and GMP disagree: arithmetic fault on this machine?")
            }
            Self::OpensslGmpPuzzle => {
                f.write_str("OpenSSL and GMP disagree on the squaring result")
            }
            Self::OpensslGmp => f.write_str("OpenSSL disagrees with GMP"),
            Self::Kernel(kernel) => write!(f, "the {kernel} kernel disagrees with GMP"),
        }
    }
}

impl Error {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never
    /// (a benchmark judges nothing).
    pub fn is_verdict(&self) -> bool {
        false
    }

    /// What the user can do about it, for the errors they can act on. Errors wrapped from the
    /// scheme crates ([`Error::Rsa`], [`Error::Arith`], ...) carry no hint here: the caller maps
    /// them as it maps those crates' errors everywhere else.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            Error::OutputExists { .. } => {
                Some("pass --force to replace it, or choose another output path")
            }
            Error::Write { .. } => {
                Some("check that the directory exists, is writable and has free space")
            }
            Error::ScaleFailed { .. } => Some(
                "run a failed configuration alone to see every party's messages: \
                 hourglass dkg local --parties K --bits B --timeout 600 --connect-timeout 600 -o DIR",
            ),
            Error::Dkg(hourglass_dkg::Error::OpenFiles(_)) => Some(
                "the in-process tables run every party as a thread of this process: k parties \
                 hold about k * k sockets",
            ),
            _ => None,
        }
    }
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

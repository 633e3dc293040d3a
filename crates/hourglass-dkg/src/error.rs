//! The crate's error: one variant per cause, grouped by area. Each area's own error (the
//! cluster configuration, TLS, parameters, share files, transcripts, messages, failures of
//! parties) lives beside the module that owns it.

use std::path::PathBuf;

use crate::protocol::report::Report;
use crate::{
    CertificateProblem, ConfigError, Failure, MessageProblem, ParamError, PartyId, ShareError,
    SignatureError, SignatureFault, ThresholdError, TlsError, TrustError,
};

/// Results of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// Errors of distributed key generation and signing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The generation stopped after the requested number of batches, before a key was found
    /// (benchmarks measure iterations this way); the report says what was done.
    #[error("stopped after {} batches without a key", .0.batches)]
    Stopped(Box<Report>),
    /// A party sent something malformed, unexpected or oversized; the run is aborted.
    #[error("bad message from party {sender}: {reason}")]
    BadMessage {
        /// The authenticated sender.
        sender: PartyId,
        /// What was wrong (never contains secret values).
        reason: MessageProblem,
    },
    /// Another party stopped the generation, naming the parties it holds responsible (its word
    /// alone removes nobody: the generation stops, and no key comes out).
    #[error("party {by} stopped the generation, naming {culprits:?}: {reason}")]
    Reported {
        /// The party that announced the stop.
        by: PartyId,
        /// The parties it named.
        culprits: Vec<PartyId>,
        /// Its reason, as it sent it (another party's text).
        reason: String,
    },
    /// A party asked to remove parties this party sees alive: a false accusation. Nobody is
    /// removed on another party's word; the generation stops, naming the accuser.
    #[error("party {accuser} accused parties {accused:?}, which answer this party: a false accusation (nobody is removed on another party's word; the generation stops)")]
    FalseAccusation {
        /// The accuser.
        accuser: PartyId,
        /// The parties it accused that this party sees alive.
        accused: Vec<PartyId>,
    },
    /// A party failed at this party, while another survivor still reaches it: a party is
    /// removed only if every survivor saw it fail, so the generation stops instead.
    #[error("party {party} failed here ({reason}) but party {witness} still reaches it; nobody is removed unless every survivor saw it fail, so the generation stops")]
    Disputed {
        /// The party that failed here.
        party: PartyId,
        /// A survivor that did not see it fail.
        witness: PartyId,
        /// What this party observed.
        reason: Failure,
    },
    /// The link to a party failed (closed, reset) or it did not answer in time.
    #[error("{} failed: {reason}", party_name(*.party))]
    PartyFailed {
        /// The party that failed.
        party: PartyId,
        /// What was observed.
        reason: Failure,
    },
    /// Too few parties are left to continue.
    #[error("only {left} parties left, fewer than the {minimum} needed (2t + 1 for the fixed threshold t = {threshold}, or min_parties): the generation stops rather than weaken its privacy")]
    TooFewParties {
        /// Parties still alive.
        left: usize,
        /// The minimum: `max(min_parties, 2t + 1)`.
        minimum: usize,
        /// The fixed privacy threshold `t`.
        threshold: usize,
    },
    /// The cluster configuration is unusable.
    #[error("cluster configuration: {0}")]
    Config(#[from] ConfigError),
    /// TLS setup or handshake failed.
    #[error("TLS: {0}")]
    Tls(#[from] TlsError),
    /// Invalid parameters.
    #[error("invalid parameters: {0}")]
    InvalidParameters(#[from] ParamError),
    /// A share file (or a transcript) is malformed or does not fit the other shares.
    #[error("key share: {0}")]
    Share(#[from] ShareError),
    /// The joint signature did not verify.
    #[error("the combined signature does not verify: {0}")]
    Signature(#[from] SignatureError),
    /// A threshold reshare, refresh or signature cannot go on (see [`ThresholdError`]).
    #[error("{0}")]
    Threshold(#[from] ThresholdError),
    /// A member's signature of the transcript, in the round that ends a generation, is wrong:
    /// the generation stops and nothing is written (every member must sign the same transcript).
    #[error("party {party}'s signature of the transcript {fault}: the generation stops and no transcript is written")]
    TranscriptSignature {
        /// The member whose signature is wrong.
        party: PartyId,
        /// What is wrong with it.
        fault: SignatureFault,
    },
    /// A transcript does not show that its committee generated the modulus.
    #[error("the transcript is not the committee's: {0}")]
    Untrusted(#[from] TrustError),
    /// Pinned certificates that cannot be read.
    #[error("certificates {}: {problem}", path.display())]
    Certificates {
        /// The file or directory.
        path: PathBuf,
        /// What is wrong.
        #[source]
        problem: CertificateProblem,
    },
    /// This process may not open enough files for its links (see [`crate::limits`]).
    #[error(transparent)]
    OpenFiles(#[from] crate::limits::OpenFilesError),
    /// An I/O error.
    #[error("{op}: {source}")]
    Io {
        /// What was being done.
        op: IoOp,
        /// The underlying error.
        #[source]
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
    /// An I/O error of `op`.
    pub fn io(op: IoOp, source: std::io::Error) -> Self {
        Error::Io { op, source }
    }

    /// Whether this is a negative verdict (exit status 1) rather than an error (2): a party
    /// caught deviating (a false accusation, a transcript signature, partial signature or
    /// dealt sub-share that does not verify), a combined signature or a transcript that does
    /// not verify. A lost link, a timeout, another party's word, a malformed message or file,
    /// bad parameters and I/O are errors.
    pub fn is_verdict(&self) -> bool {
        match self {
            Error::FalseAccusation { .. } => true,
            Error::BadMessage { reason, .. } => reason.is_verdict(),
            Error::Disputed { reason, .. } | Error::PartyFailed { reason, .. } => {
                reason.is_verdict()
            }
            Error::Config(e) => e.is_verdict(),
            Error::Tls(e) => e.is_verdict(),
            Error::InvalidParameters(e) => e.is_verdict(),
            Error::Share(e) => e.is_verdict(),
            Error::Signature(e) => e.is_verdict(),
            Error::Threshold(e) => e.is_verdict(),
            Error::TranscriptSignature { fault, .. } => fault.is_verdict(),
            Error::Untrusted(e) => e.is_verdict(),
            Error::Certificates { problem, .. } => problem.is_verdict(),
            Error::OpenFiles(e) => e.is_verdict(),
            Error::Arith(e) => e.is_verdict(),
            Error::Rsa(e) => e.is_verdict(),
            Error::Stopped(_)
            | Error::Reported { .. }
            | Error::TooFewParties { .. }
            | Error::Io { .. } => false,
        }
    }
}

/// What was being done when an I/O error happened.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum IoOp {
    /// Reading a file or directory.
    Read(PathBuf),
    /// Reading a party's TLS key.
    ReadKey(PathBuf),
    /// Reading a share file.
    ReadShare(PathBuf),
    /// Creating a directory.
    Create(PathBuf),
    /// Writing a file.
    Write(PathBuf),
    /// Resolving a party's address.
    Resolve {
        /// The address.
        address: String,
    },
    /// Listening on a party's address.
    Listen {
        /// The party.
        party: PartyId,
        /// The address.
        address: String,
    },
    /// Making the listening socket non-blocking.
    ConfigureListener,
    /// Registering the listening socket with the network runtime.
    RegisterListener,
    /// Starting the network runtime.
    StartRuntime,
    /// Starting the network thread.
    StartThread,
}

impl std::fmt::Display for IoOp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IoOp::Read(p) => write!(f, "reading {}", p.display()),
            IoOp::ReadKey(p) => write!(f, "reading key {}", p.display()),
            IoOp::ReadShare(p) => write!(f, "reading share {}", p.display()),
            IoOp::Create(p) => write!(f, "creating {}", p.display()),
            IoOp::Write(p) => write!(f, "writing {}", p.display()),
            IoOp::Resolve { address } => write!(f, "resolving {address}"),
            IoOp::Listen { party, address } => write!(f, "party {party}: listening on {address}"),
            IoOp::ConfigureListener => f.write_str("configuring the listening socket"),
            IoOp::RegisterListener => f.write_str("registering the listening socket"),
            IoOp::StartRuntime => f.write_str("starting the network runtime"),
            IoOp::StartThread => f.write_str("starting the network thread"),
        }
    }
}

/// How an error names a party: "party N", or "the relay" for a star's relay (id
/// [`crate::party::RELAY_ID`], never a member's).
fn party_name(party: PartyId) -> String {
    if party == crate::party::RELAY_ID {
        "the relay".to_string()
    } else {
        format!("party {party}")
    }
}

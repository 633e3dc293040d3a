//! Why a generation or a signature failed: one variant per cause, grouped by area (the
//! cluster configuration, TLS, parameters, share files, messages, failures of parties).

use std::path::PathBuf;
use std::sync::Arc;

use hourglass_rsa::HashAlg;

use crate::protocol;
use crate::transport::PartyId;
use crate::wire::{FrameType, Tag};

/// Errors of distributed key generation and signing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The generation stopped after the requested number of batches, before a key was found
    /// (benchmarks measure iterations this way); the report says what was done.
    #[error("stopped after {} batches without a key", .0.batches)]
    Stopped(Box<protocol::Report>),
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
    #[error("party {party} failed: {reason}")]
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

impl ConfigError {
    /// A problem in the configuration file at `path`.
    pub fn in_file(path: impl Into<PathBuf>, problem: ConfigProblem) -> Self {
        ConfigError::File {
            path: path.into(),
            problem: Box::new(problem),
        }
    }
}

impl Error {
    /// An I/O error of `op`.
    pub fn io(op: IoOp, source: std::io::Error) -> Self {
        Error::Io { op, source }
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

/// Why a party is taken to have failed (what this party observed of it).
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Failure {
    /// Its link was lost.
    #[error(transparent)]
    Link(#[from] LinkLoss),
    /// It did not answer within the timeout.
    #[error("no answer within {timeout_ms} ms")]
    NoAnswer {
        /// The timeout, in milliseconds.
        timeout_ms: u128,
    },
    /// A party asked for a restart.
    #[error("a party asked for a restart")]
    RestartRequested,
    /// It did not answer during the restart.
    #[error("no answer during the restart")]
    NoAnswerDuringRestart,
    /// Sending to it failed for another reason.
    #[error("{0}")]
    Send(Arc<Error>),
    /// It failed while signing, which needs every member.
    #[error("{0} (signing needs every member)")]
    WhileSigning(Box<Failure>),
    /// It failed while signing with threshold shares, which needs every signer named.
    #[error("{0} (signing needs every signer named: name others, at least t + 1)")]
    WhileSigningWithThreshold(Box<Failure>),
    /// It failed during a reshare or refresh, which needs every member.
    #[error("{0} (a reshare or refresh needs every member)")]
    WhileResharing(Box<Failure>),
    /// It failed in the round of transcript signatures, which needs every member's.
    #[error("{0} (the transcript needs every member's signature)")]
    WhileSigningTranscript(Box<Failure>),
}

/// How a link to a party was lost.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum LinkLoss {
    /// It closed.
    #[error("connection closed")]
    Closed,
    /// It failed.
    #[error("connection failed: {0}")]
    Failed(Arc<std::io::Error>),
    /// It closed in the middle of a frame.
    #[error("connection closed in the middle of a frame")]
    ClosedMidFrame,
    /// It failed in the middle of a frame.
    #[error("connection failed in the middle of a frame: {0}")]
    FailedMidFrame(Arc<std::io::Error>),
    /// Sending on it failed.
    #[error("sending failed: {0}")]
    SendFailed(Arc<std::io::Error>),
    /// The transport was dropped.
    #[error("transport dropped")]
    TransportDropped,
    /// It never connected.
    #[error("never connected")]
    NeverConnected,
    /// The party is not a peer of this one.
    #[error("not a peer of this party")]
    NotAPeer,
}

/// Why a peer's link was dropped for breaking the framing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum LinkRejection {
    /// A frame larger than any a legitimate peer sends
    /// ([`crate::bounds::FrameBounds`]).
    #[error(
        "oversized {} ({len} bytes, limit {max} for this cluster)",
        .frame.map_or_else(|| "frame".to_string(), |f| format!("{f} frame"))
    )]
    OversizedFrame {
        /// Its announced length.
        len: u64,
        /// The limit.
        max: usize,
        /// Its kind and step, when its header was read.
        frame: Option<FrameType>,
    },
    /// Too many bytes sent ahead of the protocol.
    #[error("flooded: {queued} bytes sent ahead of the protocol (limit {limit})")]
    Flooded {
        /// Bytes queued.
        queued: u64,
        /// The limit.
        limit: u64,
    },
}

/// What is wrong with a frame or payload on the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// Shorter than the frame header.
    #[error("frame of {len} bytes is shorter than the header")]
    ShortFrame {
        /// The frame's length.
        len: usize,
    },
    /// Not an hourglass frame.
    #[error("not a hourglass dkg frame (bad magic)")]
    BadMagic,
    /// A wire version this one does not speak.
    #[error("unsupported wire version {found}")]
    UnsupportedVersion {
        /// The version in the frame.
        found: u8,
    },
    /// A frame kind this one does not know.
    #[error("unknown kind {found}")]
    UnknownKind {
        /// The kind byte.
        found: u8,
    },
    /// A fixed-size field cut short.
    #[error("truncated")]
    Truncated,
    /// A payload length that is not the rest of the frame.
    #[error("payload length {declared} does not match the {actual} bytes that follow")]
    PayloadLength {
        /// The declared length.
        declared: usize,
        /// The bytes that follow.
        actual: usize,
    },
    /// A value longer than what is left.
    #[error("value of {declared} bytes but only {left} left")]
    ValueLength {
        /// The declared length.
        declared: usize,
        /// The bytes left.
        left: usize,
    },
    /// An integer not below its bound.
    #[error("value of {bits} bits is out of range (must be below a {bound_bits}-bit modulus)")]
    OutOfRange {
        /// The value's size.
        bits: u32,
        /// The bound's size.
        bound_bits: u32,
    },
    /// Bytes after the last value.
    #[error("{count} unexpected trailing bytes")]
    TrailingBytes {
        /// How many.
        count: usize,
    },
}

/// What was wrong with a party's message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageProblem {
    /// A malformed frame or payload.
    #[error(transparent)]
    Wire(#[from] WireError),
    /// Its link broke the framing.
    #[error(transparent)]
    Link(#[from] LinkRejection),
    /// A frame whose sender is not the link's authenticated party.
    #[error("claims to be party {claimed} on an authenticated link")]
    Impersonation {
        /// The sender the frame names.
        claimed: PartyId,
    },
    /// A second message for the same round.
    #[error("duplicate message for {tag:?}")]
    Duplicate {
        /// The round.
        tag: Tag,
    },
    /// A message for a round that is over.
    #[error("unexpected message for finished round {tag:?}")]
    FinishedRound {
        /// The round.
        tag: Tag,
    },
    /// A message of another session.
    #[error("message belongs to another session")]
    OtherSession,
    /// Too many messages buffered ahead of the protocol.
    #[error("too many messages ahead of the protocol")]
    TooManyAhead,
    /// An abort reason over the limit.
    #[error("abort reason too long")]
    AbortReasonTooLong,
    /// An abort naming a malformed party id.
    #[error("bad party id in abort")]
    AbortPartyId,
    /// An abort naming more parties than there are.
    #[error("an abort names too many parties")]
    AbortTooManyParties,
    /// A hello with a malformed member id.
    #[error("bad member id")]
    MemberId,
    /// A pairwise seed that is not 32 bytes.
    #[error("pairwise seed must be 32 bytes")]
    SeedLength,
    /// No pairwise seed with the sender.
    #[error("no pairwise seed")]
    NoPairwiseSeed,
    /// A signer that was asked to sign something else.
    #[error("it was asked to sign something else (another message, scheme, hash or key)")]
    SignsOther,
    /// A signing salt of the wrong length.
    #[error("salt of the wrong length")]
    SaltLength,
}

/// Why a cluster configuration (or the run's view of it) is unusable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A problem in the configuration file.
    #[error("{}: {problem}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        problem: Box<ConfigProblem>,
    },
    /// Too few parties for a new cluster.
    #[error("{parties} parties: a cluster needs at least {min}")]
    TooFewParties {
        /// Parties asked for.
        parties: usize,
        /// The fewest allowed.
        min: usize,
    },
    /// `min_parties` above the new cluster's size.
    #[error("min_parties is {min_parties} but the cluster would have only {parties} parties")]
    MinParties {
        /// The setting.
        min_parties: usize,
        /// Parties asked for.
        parties: usize,
    },
    /// A base port that leaves no room for every party.
    #[error("ports {base} to {last}: use a base port from 1 to {max}")]
    BasePort {
        /// The base port.
        base: u16,
        /// The last port needed.
        last: usize,
        /// The largest base port that fits.
        max: usize,
    },
    /// A cluster directory that is not empty.
    #[error("refusing to write a cluster into {}: the directory is not empty", dir.display())]
    NotEmpty {
        /// The directory.
        dir: PathBuf,
    },
    /// The `[generation]` table could not be written.
    #[error("writing the [generation] table: {0}")]
    WriteGeneration(#[source] toml::ser::Error),
    /// A number of ports outside 1 to 256.
    #[error("{count} ports: ask for 1 to 256")]
    PortCount {
        /// Ports asked for.
        count: usize,
    },
    /// Port arithmetic overflowed.
    #[error("port arithmetic overflowed")]
    PortOverflow,
    /// No run of free loopback ports.
    #[error("found no {count} consecutive free loopback ports")]
    NoFreePorts {
        /// Ports asked for.
        count: usize,
    },
    /// This party is not a member of the run.
    #[error("party {party} is not among the members {members:?}")]
    NotMember {
        /// This party.
        party: PartyId,
        /// The members.
        members: Vec<PartyId>,
    },
    /// A share of another party.
    #[error("the share belongs to party {share}, this is party {me}")]
    OtherPartysShare {
        /// The share's party.
        share: PartyId,
        /// This party.
        me: PartyId,
    },
    /// A party with no certificate among those given (every member of a generation needs
    /// one: it signs the transcript with the key behind it).
    #[error("party {party} has no certificate among the cluster's")]
    NoCertificate {
        /// The party.
        party: PartyId,
    },
    /// A private key that is not the one of the party's certificate.
    #[error("the private key does not belong to party {party}'s certificate")]
    KeyNotCertified {
        /// The party.
        party: PartyId,
    },
    /// A private key the TLS library cannot use.
    #[error("unusable private key: {0}")]
    UnusableKey(#[source] rustls::Error),
    /// A party with other generation settings.
    #[error("party {party} runs with different generation settings (bits, batch, sieve bound, rounds, minimum or timeout); every party needs the same [generation] table")]
    SettingsMismatch {
        /// The party.
        party: PartyId,
    },
    /// A party that expects other members.
    #[error("party {party} expects members {theirs:?}, this party {ours:?}")]
    MembersMismatch {
        /// The party.
        party: PartyId,
        /// The members it expects.
        theirs: Vec<PartyId>,
        /// The members this party expects.
        ours: Vec<PartyId>,
    },
}

/// What is wrong in a cluster configuration file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigProblem {
    /// Not valid TOML, or unknown fields.
    #[error("{0}")]
    Toml(#[source] toml::de::Error),
    /// A `format` other than this version's.
    #[error(
        "format {found:?} is not supported (expected {:?})",
        crate::cluster::CLUSTER_FORMAT
    )]
    Format {
        /// The format in the file.
        found: String,
    },
    /// Invalid `[generation]` settings.
    #[error("[generation]: invalid parameters: {0}")]
    Generation(#[source] ParamError),
    /// Too few `[[party]]` entries.
    #[error("{found} [[party]] entries; a cluster needs at least {min}")]
    TooFewParties {
        /// Entries in the file.
        found: usize,
        /// The fewest allowed.
        min: usize,
    },
    /// A threshold the cluster's size cannot carry.
    #[error("invalid parameters: {0}")]
    Threshold(#[source] ParamError),
    /// `min_parties` above the cluster's size.
    #[error(
        "[generation] min_parties is {min_parties} but the cluster has only {parties} parties"
    )]
    MinParties {
        /// The setting.
        min_parties: usize,
        /// The cluster's size.
        parties: usize,
    },
    /// A party id 0.
    #[error("party id 0: ids start at 1")]
    ZeroId,
    /// A party id listed twice.
    #[error("party id {id} is listed twice")]
    DuplicateId {
        /// The id.
        id: PartyId,
    },
    /// An address that is not `host:port`.
    #[error("party {party}: address {address:?} is not ip:port or host:port")]
    BadAddress {
        /// The party.
        party: PartyId,
        /// The address in the file.
        address: String,
    },
    /// An address used by two parties.
    #[error("party {party}: address {address} is used by another party")]
    DuplicateAddress {
        /// The party.
        party: PartyId,
        /// The address.
        address: String,
    },
    /// A party certificate that cannot be used.
    #[error("party {party}: certificate {}: {problem}", path.display())]
    Certificate {
        /// The party.
        party: PartyId,
        /// The certificate file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        problem: CertificateProblem,
    },
    /// Two parties with the same certificate.
    #[error("parties {first} and {second} have the same certificate")]
    SameCertificate {
        /// The first party.
        first: PartyId,
        /// The second.
        second: PartyId,
    },
    /// A key file without a PKCS#8 PEM key.
    #[error("key {}: no PKCS#8 PEM private key (\"BEGIN PRIVATE KEY\")", path.display())]
    NoKey {
        /// The key file.
        path: PathBuf,
    },
    /// A key the TLS library cannot use.
    #[error("key {}: unusable private key: {source}", path.display())]
    UnusableKey {
        /// The key file.
        path: PathBuf,
        /// Why.
        #[source]
        source: rustls::Error,
    },
    /// A loaded key that the TLS library cannot use.
    #[error("unusable private key: {0}")]
    UnusableLoadedKey(#[source] rustls::Error),
    /// A key that matches no party's certificate.
    #[error("key {} matches none of the parties' certificates", path.display())]
    KeyMatchesNone {
        /// The key file.
        path: PathBuf,
    },
    /// The party asked for is not in the cluster.
    #[error("party {party} is not in the cluster")]
    PartyNotInCluster {
        /// The party.
        party: PartyId,
    },
    /// The key is another party's.
    #[error("the key is party {key_party}'s, not party {party}'s")]
    OtherPartysKey {
        /// The key's party.
        key_party: PartyId,
        /// The party asked for.
        party: PartyId,
    },
    /// The key matches no party.
    #[error("the key matches no party")]
    KeyMatchesNoParty,
}

/// Why a party certificate file cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CertificateProblem {
    /// It cannot be read.
    #[error("{0}")]
    Read(#[source] std::io::Error),
    /// Bad PEM.
    #[error("bad PEM: {0}")]
    Pem(#[source] rustls::pki_types::pem::Error),
    /// No certificate in it.
    #[error("no PEM CERTIFICATE in the file")]
    NoCertificate,
    /// Several certificates in it.
    #[error("{count} certificates; pin exactly one per party")]
    Several {
        /// How many.
        count: usize,
    },
    /// Not an X.509 certificate.
    #[error("not an X.509 certificate: {0}")]
    NotX509(#[source] rustls::Error),
    /// A file larger than any certificate file should be (refused before it is read).
    #[error("{len} bytes, more than the {max} a certificate file may have")]
    TooLarge {
        /// The file's size.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// A directory without `*.pem` or `*.crt` files.
    #[error("no *.pem or *.crt file in the directory")]
    EmptyDirectory,
    /// A file in a directory of certificates that cannot be used.
    #[error("{}: {problem}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        problem: Box<CertificateProblem>,
    },
}

/// A step of making a cluster's TLS identities.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CertStep {
    /// Generating a key.
    GenerateKey,
    /// Setting the certificate's parameters.
    Parameters,
    /// Signing the certificate.
    Sign,
}

impl std::fmt::Display for CertStep {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CertStep::GenerateKey => "generating a key",
            CertStep::Parameters => "certificate parameters",
            CertStep::Sign => "signing a certificate",
        })
    }
}

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// Making a party's key or certificate failed.
    #[error("{step}: {source}")]
    Certificate {
        /// The step.
        step: CertStep,
        /// Why.
        #[source]
        source: rcgen::Error,
    },
    /// The TLS configuration could not be built.
    #[error("{0}")]
    Setup(#[source] rustls::Error),
    /// The network thread stopped during setup.
    #[error("the network thread stopped during setup")]
    ThreadStopped,
    /// A party key that can sign with none of the TLS 1.3 signature schemes.
    #[error(
        "the party key signs with none of the TLS 1.3 signature schemes (ECDSA, Ed25519, RSA-PSS)"
    )]
    NoSigningScheme,
    /// Signing the transcript with the party key failed.
    #[error("signing the transcript: {0}")]
    Sign(#[source] rustls::Error),
}

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
    #[error("adversary '{spec}': use ID:BEHAVIOUR with BEHAVIOUR one of {}", crate::adversary::Deviation::ALL.iter().map(|(_, n)| *n).collect::<Vec<_>>().join(", "))]
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

/// A numeric field of a share file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareField {
    /// The modulus.
    N,
    /// The share of `d`.
    DShare,
    /// The threshold share (v2).
    Share,
    /// The verification base (v2).
    VerificationBase,
    /// A member's verification key (v2).
    VerificationKey {
        /// The member.
        member: PartyId,
    },
}

impl std::fmt::Display for ShareField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ShareField::N => "n",
            ShareField::DShare => "d_share",
            ShareField::Share => "share",
            ShareField::VerificationBase => "verification_base",
            ShareField::VerificationKey { member } => {
                return write!(f, "verification key of member {member}")
            }
        })
    }
}

/// Why a share file (or a transcript) is not usable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ShareError {
    /// A problem in the share file at `path`.
    #[error("{}: {problem}", path.display())]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        problem: Box<ShareError>,
    },
    /// Not JSON of a share file.
    #[error("not a share file: {0}")]
    Json(#[source] serde_json::Error),
    /// Another format.
    #[error(
        "format {found:?}, expected {:?} or {:?}",
        crate::keyshare::SHARE_FORMAT,
        crate::keyshare::THRESHOLD_SHARE_FORMAT
    )]
    Format {
        /// The format in the file.
        found: String,
    },
    /// A session that is not 32 hex digits.
    #[error("session must be 32 hex digits")]
    Session,
    /// A member list that is not sorted, distinct, of at least 3, with this party.
    #[error("members must be at least 3 sorted distinct ids including this party")]
    Members,
    /// A number that is not hexadecimal.
    #[error("{field} is not a hex number")]
    NotHex {
        /// The field.
        field: ShareField,
    },
    /// A modulus of zero or below.
    #[error("n must be positive")]
    NonPositiveModulus,
    /// A public key that is not valid.
    #[error("public key: {0}")]
    PublicKey(#[source] hourglass_rsa::Error),
    /// A share larger than the modulus.
    #[error("d_share is larger than the modulus")]
    ShareTooLarge,
    /// A threshold the members cannot carry (v2): `1 <= t` and `2t + 1 <= members`.
    #[error("threshold {threshold} with {members} members (1 <= t and 2t + 1 <= members)")]
    Threshold {
        /// The threshold.
        threshold: usize,
        /// The members.
        members: usize,
    },
    /// An epoch of 0 in a v2 file (the reshare makes epoch 1).
    #[error("epoch must be at least 1 (the reshare makes epoch 1)")]
    Epoch,
    /// Not one verification key per member (v2).
    #[error("{keys} verification keys for {members} members")]
    VerificationKeys {
        /// Keys listed.
        keys: usize,
        /// Members listed.
        members: usize,
    },
    /// A value outside its range (v2): a verification value not in `1..N`, a share not
    /// positive or longer than the sharing allows.
    #[error("{field} is out of range")]
    OutOfRange {
        /// The field.
        field: ShareField,
    },
    /// A committee transcript that is not usable.
    #[error("transcript: {0}")]
    Transcript(#[source] TranscriptProblem),
}

/// Why a committee transcript file is not usable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TranscriptProblem {
    /// Not JSON of a transcript.
    #[error("{0}")]
    Json(#[source] serde_json::Error),
    /// Another format.
    #[error(
        "format {found:?}, expected {:?} (or {:?}, read but not trusted)",
        crate::transcript::TRANSCRIPT_FORMAT,
        crate::transcript::TRANSCRIPT_FORMAT_V1
    )]
    Format {
        /// The format in the file.
        found: String,
    },
    /// A hexadecimal field that is not in canonical form (lowercase, no leading zeros, the
    /// right length).
    #[error("{field} is not canonical lowercase hex{}", .expected.map(|n| format!(" of {n} digits")).unwrap_or_default())]
    Hex {
        /// The field.
        field: TranscriptField,
        /// The number of digits the field must have, for fixed-size fields.
        expected: Option<usize>,
    },
    /// A modulus of zero.
    #[error("n must be positive")]
    NonPositiveModulus,
    /// A member list that is not at least 3 sorted distinct nonzero ids (v2).
    #[error("members must be at least 3 sorted distinct nonzero ids")]
    Members,
    /// Not one certificate hash per member (v2).
    #[error("{certificates} certificate hashes for {members} members")]
    CertificateCount {
        /// Members listed.
        members: usize,
        /// Certificate hashes listed.
        certificates: usize,
    },
    /// Two members with the same certificate (v2).
    #[error("members {first} and {second} have the same certificate")]
    SameCertificate {
        /// The first member.
        first: PartyId,
        /// The second.
        second: PartyId,
    },
    /// A threshold the members cannot carry (v2): `1 <= t` and `2t + 1 <= members`.
    #[error("threshold {threshold} with {members} members (a generation needs 1 <= t and 2t + 1 members)")]
    Threshold {
        /// The threshold.
        threshold: u64,
        /// Members listed.
        members: usize,
    },
    /// A signature by a party that is not a member, a second one by a member, or signatures
    /// not in the order of the members (v2).
    #[error("signature by party {member}: not a member, repeated, or out of member order")]
    SignatureMember {
        /// The party the signature names.
        member: PartyId,
    },
    /// A signature scheme this version does not know (v2).
    #[error("member {member}: unknown signature scheme {scheme:?}")]
    Scheme {
        /// The member.
        member: PartyId,
        /// The scheme in the file.
        scheme: String,
    },
    /// A signature that is empty or longer than any supported key makes (v2).
    #[error("member {member}: a signature of {len} bytes (1 to {max} allowed)")]
    SignatureLength {
        /// The member.
        member: PartyId,
        /// Its length.
        len: usize,
        /// The longest allowed.
        max: usize,
    },
    /// A fingerprint that is not the fields'.
    #[error("the fingerprint does not match the fields (the file was modified)")]
    Fingerprint,
}

/// A hexadecimal field of a transcript file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TranscriptField {
    /// The session id.
    Session,
    /// The modulus.
    N,
    /// The fingerprint.
    Fingerprint,
    /// A member's certificate hash.
    CertificateSha256 {
        /// The member.
        member: PartyId,
    },
    /// A member's signature.
    Signature {
        /// The member.
        member: PartyId,
    },
}

impl std::fmt::Display for TranscriptField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TranscriptField::Session => f.write_str("session"),
            TranscriptField::N => f.write_str("n"),
            TranscriptField::Fingerprint => f.write_str("fingerprint"),
            TranscriptField::CertificateSha256 { member } => {
                write!(f, "certificate_sha256 of member {member}")
            }
            TranscriptField::Signature { member } => write!(f, "signature of member {member}"),
        }
    }
}

/// Why a transcript does not show that its committee generated the modulus
/// ([`crate::transcript::SignedTranscript::verify`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// A v1 transcript: it carries no signatures, so anyone could have written it.
    #[error("a v1 transcript carries no signatures: anyone who knows a modulus's factors can write one, so it proves nothing (ask the committee for the v2 transcript.json that `hourglass dkg` now writes)")]
    Unsigned,
    /// Members whose certificate is not among the pinned ones.
    #[error("no pinned certificate for members {members:?} (the transcript names certificates that are not among those trusted)")]
    NotPinned {
        /// The members.
        members: Vec<PartyId>,
    },
    /// Members that did not sign.
    #[error("members {members:?} did not sign the transcript")]
    MissingSignatures {
        /// The members.
        members: Vec<PartyId>,
    },
    /// A member's signature that does not verify.
    #[error("member {member}'s signature {fault}")]
    BadSignature {
        /// The member.
        member: PartyId,
        /// What is wrong.
        fault: SignatureFault,
    },
}

/// What is wrong with a member's signature of a transcript.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureFault {
    /// It does not verify under the member's certificate (another key, another transcript,
    /// another session, or damage).
    #[error("does not verify under the member's certificate")]
    Invalid,
    /// The member signed a transcript with another fingerprint (another modulus, session or
    /// member list than this party's).
    #[error("is of another transcript (fingerprint {signed}, this party's is {ours})")]
    OtherTranscript {
        /// The fingerprint it signed, in hex.
        signed: String,
        /// This party's, in hex.
        ours: String,
    },
    /// A scheme this build cannot verify, or not a TLS 1.3 scheme.
    #[error("uses signature scheme {scheme}, which cannot be verified here")]
    UnsupportedScheme {
        /// The scheme (its TLS name, or its number).
        scheme: String,
    },
    /// Longer than any supported key makes.
    #[error("is {len} bytes long (at most {max})")]
    TooLong {
        /// Its length.
        len: usize,
        /// The longest allowed.
        max: usize,
    },
    /// The member's certificate cannot be parsed for verification.
    #[error("cannot be checked: the member's certificate is unusable ({0})")]
    Certificate(String),
}

/// Why a combined signature does not verify.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureError {
    /// The shares of `d` do not make a working key.
    #[error(
        "the shares of d do not combine to a working key (a party deviated from the protocol)"
    )]
    SharesDoNotCombine,
    /// The message has no inverse modulo `N`.
    #[error("message not invertible modulo N")]
    NotInvertible,
    /// The RSA check of the combined signature failed.
    #[error("{0}")]
    Check(#[source] hourglass_rsa::Error),
    /// A partial signature is wrong.
    #[error("a partial signature is wrong (a share does not belong to this key, or a fault)")]
    WrongPartial,
}

/// What differs between two shares of different clusters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ClusterDifference {
    /// Another generation session.
    #[error("another generation session")]
    Session,
    /// Another modulus.
    #[error("another modulus")]
    Modulus,
    /// The same session and modulus, another cluster name or public exponent.
    #[error("another cluster name or public exponent")]
    NameOrExponent,
}

/// Why a threshold operation (reshare, refresh, signing with `t + 1` shares) cannot go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ThresholdError {
    /// Fewer signers than `t + 1`.
    #[error("threshold t = {threshold} needs at least {needed} signers, {got} given")]
    TooFewSigners {
        /// The threshold.
        threshold: usize,
        /// `t + 1`.
        needed: usize,
        /// The signers given.
        got: usize,
    },
    /// A signer named twice.
    #[error("party {party} is named twice among the signers")]
    DuplicateSigner {
        /// The party.
        party: PartyId,
    },
    /// A signer that holds no share.
    #[error("party {party} is not a member of the cluster (members: {members:?})")]
    UnknownSigner {
        /// The party.
        party: PartyId,
        /// The members.
        members: Vec<PartyId>,
    },
    /// This party is not among the signers it was asked to sign with.
    #[error("party {party} is not among the signers {signers:?}")]
    NotASigner {
        /// This party.
        party: PartyId,
        /// The signers.
        signers: Vec<PartyId>,
    },
    /// A party whose share is of another cluster: another generation session, another modulus,
    /// or another cluster name or public exponent (the first that differs).
    #[error("party {party} holds a share of another cluster: {differs}")]
    OtherCluster {
        /// The party.
        party: PartyId,
        /// What differs.
        differs: ClusterDifference,
    },
    /// A party with another threshold: `t` is fixed at reshare, and nobody changes it on
    /// another party's word.
    #[error("party {party} has threshold {theirs}, this party {ours}: t is fixed at reshare, and nobody changes it on another party's word")]
    OtherThreshold {
        /// The party.
        party: PartyId,
        /// Its threshold.
        theirs: usize,
        /// This party's.
        ours: usize,
    },
    /// A party whose share is of another epoch.
    #[error("party {party} holds a share of epoch {theirs}, this party of epoch {ours}: {}", if theirs < ours { format!("party {party} missed a refresh (its share file is an old copy)") } else { "this party missed a refresh (its share file is an old copy)".to_string() })]
    OtherEpoch {
        /// The party.
        party: PartyId,
        /// Its epoch.
        theirs: u32,
        /// This party's.
        ours: u32,
    },
    /// A party whose share is of the same epoch but other verification data (another reshare
    /// or refresh of this cluster).
    #[error("party {party} holds a share of epoch {epoch} with other public verification data (another reshare or refresh of this cluster)")]
    OtherVerification {
        /// The party.
        party: PartyId,
        /// The epoch.
        epoch: u32,
    },
    /// A party with an n-of-n share where a threshold one is needed, or the other way round.
    #[error("party {party} holds {}", if *.threshold { "a threshold (v2) share: refresh it (dkg refresh), it is already reshared" } else { "an n-of-n (v1) share: reshare it first (dkg reshare --threshold T)" })]
    OtherKind {
        /// The party.
        party: PartyId,
        /// Whether its share is a threshold one.
        threshold: bool,
    },
    /// Partial signatures whose proofs of correctness do not verify, with too few valid ones
    /// left to sign.
    #[error("the partial signatures of parties {wrong:?} are wrong (their proofs of correctness do not verify); {valid} valid partials remain and {needed} are needed: no signature")]
    WrongPartials {
        /// The parties whose partials are wrong.
        wrong: Vec<PartyId>,
        /// Valid partials left.
        valid: usize,
        /// `t + 1`.
        needed: usize,
    },
    /// Partials whose proofs verify but that do not combine into a valid signature.
    #[error("the partial signatures do not combine into a valid signature: one of parties {parties:?} is wrong")]
    DoNotCombine {
        /// The parties among which one is wrong.
        parties: Vec<PartyId>,
    },
    /// A dealer's sub-share that is not the one its commitments promise.
    #[error("party {dealer} dealt this party a sub-share that does not match its commitments")]
    BadSubShare {
        /// The dealer.
        dealer: PartyId,
    },
    /// The dealt sharings do not make the key (`C_0^e != v^Delta`).
    #[error("the dealt shares do not make the key (a share file is damaged or of another key, or a party deviated): nothing is written")]
    DealtSumWrong,
    /// The refresh's public residues do not add up to a multiple of `k!`.
    #[error("the refresh's public residues do not add up to a multiple of k! (a party deviated): nothing is written")]
    ResidueSum,
    /// A party disagrees on the new epoch's public data.
    #[error(
        "party {party} ends the reshare with other public verification data: nothing is written"
    )]
    Disagree {
        /// The party.
        party: PartyId,
    },
    /// A secret to deal longer than the sharing allows.
    #[error("a share to deal is longer than the sharing's bound")]
    DealtTooLarge,
    /// A threshold share outside its bound.
    #[error("the threshold share is outside its bound")]
    ShareOutOfRange,
}

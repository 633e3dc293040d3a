//! Command-line errors: what went wrong, and what to do next.
//!
//! A [`CliError`] is a typed value: a kind with its data. Its message comes from the data
//! ([`std::fmt::Display`]), its hint from the kind ([`CliError::hint`]), and its exit status
//! from the kind, decided in one place: [`CliError::exit_code`]. Commands build the value;
//! they never choose an exit status or assemble a message.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};

use hourglass_dkg::PartyId;
use hourglass_receipt::ReceiptError;
use hourglass_rsa::inspect::Severity;
use hourglass_rsa::Error as RsaError;
use hourglass_timelock::certificate::{CertificateError, PuzzleCertificateError};
use hourglass_timelock::tlock::TlockError;
use hourglass_timelock::Rejection;
use hourglass_timestamp::{TimestampError, TokenRefused};

/// Exit status of an error: bad usage, an unreadable file, malformed input, a failed
/// computation.
pub const EXIT_ERROR: u8 = 2;
/// Exit status of a negative verdict: an invalid signature, bundle, proof, solution or
/// certificate.
pub const EXIT_INVALID: u8 = 1;

/// What every command's `--help` says about exit codes.
pub const EXIT_CODES_HELP: &str = "Exit status: 0 success or valid, 1 a negative verdict (invalid signature, bundle, proof, solution or certificate), 2 an error (bad usage, unreadable file, malformed input).";

/// An error to show the user: `hourglass: error: ...` then `hourglass: hint: ...`, or a
/// negative verdict (`hourglass: invalid ...`, exit status 1).
#[derive(Debug)]
#[non_exhaustive]
pub enum CliError {
    /// Flags or arguments that cannot work: nothing was done.
    Usage(Usage),
    /// A file, directory or stream that could not be opened, read, written or created.
    Io {
        /// What was being done.
        op: IoOp,
        /// With which path (`-` for a standard stream).
        path: PathBuf,
        /// Why it failed.
        source: std::io::Error,
    },
    /// An output that cannot be written where it was asked, found before any work.
    Output {
        /// The output's path.
        path: PathBuf,
        /// What is in the way.
        problem: OutputProblem,
    },
    /// An input larger than its format allows, refused before it was read.
    TooLarge {
        /// What the input is ("key", "bundle").
        what: &'static str,
        /// Its path.
        path: PathBuf,
        /// The largest such input, in bytes.
        max: u64,
    },
    /// An input that is not what the command needs.
    Input {
        /// The input's path.
        path: PathBuf,
        /// What is wrong with it.
        problem: InputProblem,
    },
    /// The passphrase of a key: missing, unreadable, or asked for in vain.
    Passphrase(PassphraseProblem),
    /// Long work that stopped before the end (Ctrl-C, or no link finished yet).
    Stopped(Stopped),
    /// The party processes of a local run (`dkg local`, `dkg sign`, the public demo) failed.
    Local(LocalRun),
    /// A server (a TSA) could not be reached, or answered something else than asked.
    Remote {
        /// The server's URL.
        url: String,
        /// What went wrong.
        why: String,
    },
    /// hourglass's own check of what it just made failed: nothing was written.
    SelfCheck(SelfCheck),
    /// A step of `hourglass demo` failed.
    Demo(DemoFailure),
    /// `rsa inspect --fail-on`: the key's verdict is at least as bad as the limit.
    KeyPolicy {
        /// The key's verdict.
        verdict: Severity,
    },
    /// A report that could not be serialised as JSON.
    Json(serde_json::Error),
    /// An error of one of the libraries, with the CLI's hint for it.
    Library(Box<LibraryError>),
    /// A negative verdict: the input is well formed and was checked, and it is not valid.
    Verdict(NegativeVerdict),
    /// `{path}: {inner}`: an error about a named file.
    WithPath {
        /// The file.
        path: PathBuf,
        /// The error.
        inner: Box<CliError>,
    },
    /// `sealing {input}: {inner}`.
    Sealing {
        /// The content being sealed.
        input: PathBuf,
        /// The error.
        inner: Box<CliError>,
    },
    /// `inner` with the call site's hint in place of its own.
    Hinted {
        /// What to do about it, in this command.
        hint: &'static str,
        /// The error.
        inner: Box<CliError>,
    },
    /// `inner`, whose hint (if it has one) adds that the squarings are saved in `checkpoint`.
    SquaringsSaved {
        /// Where the squarings are.
        checkpoint: PathBuf,
        /// The error.
        inner: Box<CliError>,
    },
}

/// Flags or arguments that cannot work.
#[derive(Debug)]
#[non_exhaustive]
pub enum Usage {
    /// `{flag} must {must}`: a value out of its range.
    Range {
        /// The flag (or flags).
        flag: &'static str,
        /// What its value must be ("be within 1024..=8192").
        must: Cow<'static, str>,
    },
    /// `give {choices}`: none of the ways to give something was used.
    Give(&'static str),
    /// `{flag} {value}: {problem}`: a value that names nothing hourglass knows.
    Value {
        /// The flag.
        flag: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        problem: Cow<'static, str>,
    },
    /// `{flag}: expected a non-negative integer ...`.
    NotAnInteger {
        /// The flag.
        flag: &'static str,
    },
    /// `unknown --hash ...`.
    UnknownHash(String),
    /// Flags or values that do not go together, in words.
    Conflict(&'static str),
    /// The duration and rate give more squarings than a time-lock file allows.
    TooManySquarings {
        /// The number of squarings they give.
        t: f64,
    },
    /// Encryption asked for (by `why`) with a key format other than PEM.
    EncryptedPemOnly {
        /// `--encrypt`, or `--passphrase-file`.
        why: &'static str,
        /// The `--format` given.
        format: String,
    },
    /// A VDF input longer than a VDF input may be.
    VdfInputTooLong {
        /// Its length in bytes.
        len: usize,
        /// The largest VDF input.
        max: usize,
    },
}

/// The operation of an [`CliError::Io`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum IoOp {
    /// `cannot read {what} {path}`: a whole input.
    Read(&'static str),
    /// `cannot open {what} {path}`: a streamed input.
    Open(&'static str),
    /// `reading {path}`: a read that failed part-way.
    Reading,
    /// `cannot read {what} {path}`: a directory's entries.
    List(&'static str),
    /// `cannot write {path}`.
    Write,
    /// `cannot write to standard output`.
    WriteStdout,
    /// `cannot create {path}`: a directory.
    CreateDir,
    /// `cannot write beside {path}`: a temporary directory beside an output.
    WriteBeside,
    /// `writing man pages into {path}`.
    ManPages,
}

/// What keeps an output from being written (see [`CliError::Output`]).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum OutputProblem {
    /// The file exists, and `--force` was not given.
    Exists,
    /// The directory exists and is not empty, and `--force` was not given.
    NotEmpty,
    /// A file was asked for, and the path is a directory.
    IsDirectory,
    /// A directory was asked for, and the path is something else.
    NotDirectory,
    /// The directory the file would go in does not exist.
    NoParent {
        /// That directory.
        dir: PathBuf,
    },
    /// An output directory that must exist does not.
    NoDirectory,
}

/// What is wrong with an input (see [`CliError::Input`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum InputProblem {
    /// Not UTF-8 text.
    NotText,
    /// A public key where a private key is needed.
    PublicKey,
    /// A batch file without proofs.
    NoProofs,
    /// A key directory without `.key` files.
    NoPuzzleKeys,
    /// A cluster directory without share files.
    NoShares,
    /// A signer without a share file in the cluster directory.
    NoShareOf {
        /// The signer.
        party: PartyId,
    },
    /// Shares of another set of parties than the key was shared among.
    OtherShares {
        /// The parties the key was shared among.
        members: Vec<PartyId>,
        /// The parties whose shares the directory holds.
        held: Vec<PartyId>,
    },
    /// A time-lock file of another length than its header promises.
    TlockLength {
        /// Its length.
        actual: u64,
        /// The length its header promises.
        expected: u64,
    },
    /// A puzzle certificate given without the CA to check it against.
    CertificateWithoutCa,
    /// A JSON puzzle public key given with a CA, which checks certificates only.
    NotACertificate {
        /// The `--ca` given.
        ca: PathBuf,
    },
    /// A private set where a public one is verified.
    PrivateSet,
    /// A version 1 receipt asked for the timestamp token only version 2 carries.
    NoTimestamp,
}

/// The passphrase of a key could not be had (see [`CliError::Passphrase`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum PassphraseProblem {
    /// A passphrase given to a command whose private keys (`what`) cannot be encrypted.
    Unencryptable {
        /// The keys the command writes.
        what: &'static str,
    },
    /// No `--passphrase-file` and no terminal to ask.
    NoTerminal,
    /// The terminal could not be read.
    Prompt(std::io::Error),
    /// An empty passphrase typed for a new key.
    Empty,
    /// Two different passphrases typed for a new key.
    Differ,
    /// A `--passphrase-file` that is not UTF-8.
    FileNotText {
        /// The file.
        path: PathBuf,
    },
    /// A `--passphrase-file` whose first line is empty.
    FileEmpty {
        /// The file.
        path: PathBuf,
    },
}

/// Long work that stopped before the end (see [`CliError::Stopped`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum Stopped {
    /// Squaring stopped after `done` of `total` squarings.
    Squarings {
        /// Squarings done.
        done: u64,
        /// Squarings needed.
        total: u64,
        /// Where the progress is saved, if it is.
        checkpoint: Option<PathBuf>,
    },
    /// Sealing stopped before the first link was finished.
    NoLink,
}

/// The party processes of a local run failed (see [`CliError::Local`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum LocalRun {
    /// `cannot {action}`: a process could not be started.
    Start {
        /// What could not be done ("start a party process").
        action: &'static str,
        /// Why.
        source: std::io::Error,
    },
    /// A party process could not be waited for.
    Wait {
        /// The party.
        party: PartyId,
        /// Why.
        source: std::io::Error,
    },
    /// Some party processes failed: a negative verdict when one of them gave one (exit
    /// status 1: it caught a party deviating), an error otherwise.
    Failed {
        /// The step ("the generation", "joint signing").
        what: &'static str,
        /// Each failed party with its exit status (`None`: a signal ended it) and its last
        /// words (standard error).
        failures: Vec<(PartyId, Option<i32>, String)>,
    },
    /// The committee of the public demo could not be generated.
    Committee {
        /// The generation's standard error.
        stderr: String,
    },
    /// A party printed a report that does not parse.
    Report {
        /// The party.
        party: PartyId,
        /// Why it does not parse.
        source: serde_json::Error,
    },
    /// No party finished.
    NoneFinished,
    /// The parties report different moduli.
    Disagree,
    /// The parties' transcript could not be read.
    Transcript(std::io::Error),
    /// The transcript's members are not the parties that finished.
    OtherMembers,
}

/// A check of hourglass's own result that failed (see [`CliError::SelfCheck`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum SelfCheck {
    /// The certificate just issued does not verify.
    Certificate(PuzzleCertificateError),
    /// The certificate just issued does not give back the puzzle key.
    CertificateKey,
    /// The VDF proof just made does not verify.
    Proof(hourglass_vdf::Error),
}

/// A step of `hourglass demo` that failed (see [`CliError::Demo`]).
#[derive(Debug)]
#[non_exhaustive]
pub enum DemoFailure {
    /// A step's error, shown as it is: the demo's steps are not the user's commands.
    Step(Box<dyn std::error::Error + Send + Sync>),
    /// The demo's check of its own results (in words) failed: a bug in hourglass.
    Check(&'static str),
}

/// A negative verdict (see [`CliError::Verdict`]): what was checked, and why it is not valid.
#[derive(Debug)]
#[non_exhaustive]
pub enum NegativeVerdict {
    /// A puzzle solution that does not verify.
    Solution(Rejection),
    /// A delayed (puzzle) signature that does not verify.
    DelayedSignature,
    /// A bundle that does not verify.
    Bundle {
        /// Why, when the verifier says.
        reason: Option<String>,
    },
    /// A valid bundle that does not prove the document predates the deadline.
    AfterDeadline,
    /// A receipt that is authentic but not valid (for another document, or stating an invalid
    /// submission).
    Receipt {
        /// Why, as hourglass-receipt says.
        reason: String,
    },
    /// A VDF proof that does not verify.
    Proof {
        /// Why.
        reason: String,
        /// Whether the proof is over another modulus than the trusted one.
        untrusted_modulus: bool,
    },
    /// Some proofs of a batch do not verify.
    Proofs {
        /// How many do not.
        invalid: usize,
        /// How many there are.
        total: usize,
    },
    /// A log whose audit did not pass (entries that are not the institution's receipts).
    Log {
        /// Why, as hourglass-receipt says.
        reason: String,
    },
    /// A log search found nothing.
    NoLogEntries,
}

/// An error of one of the libraries. Wrapping errors are unwrapped on conversion (an RSA error
/// inside a time-lock error is an RSA error here), so that each keeps its hint.
#[derive(Debug)]
#[non_exhaustive]
pub enum LibraryError {
    /// The arithmetic core (entropy, checkpoints, parameters).
    Arith(hourglass_arith::Error),
    /// RSA keys and operations.
    Rsa(RsaError),
    /// VDF groups, evaluations and proofs.
    Vdf(hourglass_vdf::Error),
    /// Puzzles, sets, bundles and verdicts.
    Timelock(hourglass_timelock::Error),
    /// Time-lock files.
    Tlock(TlockError),
    /// CA certificates, and the X.509 form of every certificate.
    Certificate(CertificateError),
    /// Time-lock certificates.
    PuzzleCertificate(PuzzleCertificateError),
    /// Submission receipts.
    Receipt(ReceiptError),
    /// RFC 3161 timestamps: queries, replies and tokens.
    Timestamp(TimestampError),
    /// A named timestamp token that does not date a bundle.
    TokenRefused(TokenRefused),
    /// Distributed key generation.
    Dkg(hourglass_dkg::Error),
    /// Benchmarks.
    Bench(hourglass_bench::Error),
    /// The submission service.
    Serve(hourglass_serve::Error),
    /// Transparency logs: keys, checkpoints, tiles, proofs, witnesses.
    Log(hourglass_log::LogError),
}

impl LibraryError {
    /// Whether the library calls it a negative verdict (exit status 1) rather than an error:
    /// each library's own `is_verdict`, nothing decided here.
    pub fn is_verdict(&self) -> bool {
        match self {
            LibraryError::Arith(e) => e.is_verdict(),
            LibraryError::Rsa(e) => e.is_verdict(),
            LibraryError::Vdf(e) => e.is_verdict(),
            LibraryError::Timelock(e) => e.is_verdict(),
            LibraryError::Tlock(e) => e.is_verdict(),
            LibraryError::Certificate(e) => e.is_verdict(),
            LibraryError::PuzzleCertificate(e) => e.is_verdict(),
            LibraryError::Receipt(e) => e.is_verdict(),
            LibraryError::Timestamp(e) => e.is_verdict(),
            LibraryError::TokenRefused(e) => e.is_verdict(),
            LibraryError::Dkg(e) => e.is_verdict(),
            LibraryError::Bench(e) => e.is_verdict(),
            LibraryError::Serve(e) => e.is_verdict(),
            LibraryError::Log(e) => e.is_verdict(),
        }
    }
}

impl CliError {
    /// The process exit status: [`EXIT_INVALID`] for a negative verdict, [`EXIT_ERROR`] for
    /// everything else. The one place where exit statuses are decided.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Verdict(_) => EXIT_INVALID,
            // The libraries decide which of their errors are negative verdicts.
            CliError::Library(e) if e.is_verdict() => EXIT_INVALID,
            CliError::Library(_) => EXIT_ERROR,
            // A party process that caught another deviating gave a negative verdict, and so
            // does the run: the other failures follow from the same deviation.
            CliError::Local(LocalRun::Failed { failures, .. })
                if failures
                    .iter()
                    .any(|(_, status, _)| *status == Some(i32::from(EXIT_INVALID))) =>
            {
                EXIT_INVALID
            }
            CliError::WithPath { inner, .. }
            | CliError::Sealing { inner, .. }
            | CliError::Hinted { inner, .. }
            | CliError::SquaringsSaved { inner, .. } => inner.exit_code(),
            // `rsa inspect --fail-on` is documented as status 1 but has always been 2; kept.
            CliError::KeyPolicy { .. } => EXIT_ERROR,
            CliError::Usage(_)
            | CliError::Io { .. }
            | CliError::Output { .. }
            | CliError::TooLarge { .. }
            | CliError::Input { .. }
            | CliError::Passphrase(_)
            | CliError::Stopped(_)
            | CliError::Local(_)
            | CliError::Remote { .. }
            | CliError::SelfCheck(_)
            | CliError::Demo(_)
            | CliError::Json(_) => EXIT_ERROR,
        }
    }

    /// What to do about it, if hourglass knows.
    pub fn hint(&self) -> Option<Cow<'static, str>> {
        let hint = match self {
            CliError::Usage(u) => u.hint(),
            CliError::Io { op, .. } => match op {
                IoOp::Read(_) => Some("check the path and permissions"),
                IoOp::Write => {
                    Some("check that the directory exists, is writable and has free space")
                }
                _ => None,
            },
            CliError::Output { problem, .. } => Some(match problem {
                OutputProblem::Exists => {
                    "pass --force to replace it, or choose another output path"
                }
                OutputProblem::NotEmpty => {
                    "pass --force to replace it, or choose another directory"
                }
                OutputProblem::IsDirectory => "give a file name for the output",
                OutputProblem::NotDirectory => "choose another output directory",
                OutputProblem::NoParent { .. } => "create the directory first",
                OutputProblem::NoDirectory => return None,
            }),
            CliError::TooLarge { .. } => Some("is it the right file?"),
            CliError::Input { problem, .. } => problem.hint(),
            CliError::Passphrase(p) => p.hint(),
            CliError::Stopped(Stopped::Squarings { checkpoint, .. }) => Some(match checkpoint {
                Some(_) => "run the same command again to resume",
                None => "pass --checkpoint FILE to be able to resume",
            }),
            CliError::Stopped(Stopped::NoLink) => Some("run the same command again to continue"),
            CliError::SelfCheck(SelfCheck::Certificate(_) | SelfCheck::CertificateKey) => {
                Some("this is a bug in hourglass; please report it")
            }
            CliError::SelfCheck(SelfCheck::Proof(_)) => Some(
                "a hardware fault or a corrupt checkpoint: delete the checkpoint files and run again",
            ),
            CliError::Library(e) => e.hint(),
            CliError::Verdict(NegativeVerdict::Proof {
                untrusted_modulus: true,
                ..
            }) => Some(
                "pass --modulus FILE naming the modulus you trust (the prover may know the factors of its own)",
            ),
            CliError::Remote { .. } => Some("check the URL (a TSA's, such as http://HOST/tsa) and the network"),
            CliError::Verdict(_)
            | CliError::Local(_)
            | CliError::Demo(_)
            | CliError::KeyPolicy { .. }
            | CliError::Json(_) => None,
            CliError::WithPath { inner, .. } | CliError::Sealing { inner, .. } => {
                return inner.hint()
            }
            CliError::Hinted { hint, .. } => Some(*hint),
            CliError::SquaringsSaved { checkpoint, inner } => {
                return inner.hint().map(|h| {
                    Cow::Owned(format!(
                        "{h}; the squarings are saved in {}, so an intact copy opens at once",
                        checkpoint.display()
                    ))
                })
            }
        };
        hint.map(Cow::Borrowed)
    }

    /// The same error, with `hint` in place of its own.
    pub fn with_hint(self, hint: &'static str) -> Self {
        CliError::Hinted {
            hint,
            inner: Box::new(self),
        }
    }

    /// The same error about the file `path` (`key.pem: ...`).
    pub fn with_path(self, path: impl Into<PathBuf>) -> Self {
        CliError::WithPath {
            path: path.into(),
            inner: Box::new(self),
        }
    }

    /// An I/O error of `op` on `path`.
    pub fn io(op: IoOp, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        CliError::Io {
            op,
            path: path.into(),
            source,
        }
    }

    /// An output that cannot be written at `path`.
    pub fn output(path: impl Into<PathBuf>, problem: OutputProblem) -> Self {
        CliError::Output {
            path: path.into(),
            problem,
        }
    }

    /// An input at `path` that is not what the command needs.
    pub fn input(path: impl Into<PathBuf>, problem: InputProblem) -> Self {
        CliError::Input {
            path: path.into(),
            problem,
        }
    }

    /// Whether this is a negative verdict rather than an error.
    pub fn is_verdict(&self) -> bool {
        self.exit_code() == EXIT_INVALID
    }

    /// Prints to standard error: `hourglass: error: ...` for an error; a negative verdict's
    /// message (which says what is invalid) without the `error:` label.
    pub fn print(&self) {
        if self.is_verdict() {
            eprintln!("hourglass: {self}");
        } else {
            eprintln!("hourglass: error: {self}");
        }
        if let Some(hint) = self.hint() {
            eprintln!("hourglass: hint: {hint}");
        }
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CliError::Usage(u) => u.fmt(f),
            CliError::Io { op, path, source } => {
                let p = path.display();
                match op {
                    IoOp::Read(what) | IoOp::List(what) => {
                        write!(f, "cannot read {what} {p}: {source}")
                    }
                    IoOp::Open(what) => write!(f, "cannot open {what} {p}: {source}"),
                    IoOp::Reading => write!(f, "reading {p}: {source}"),
                    IoOp::Write => write!(f, "cannot write {p}: {source}"),
                    IoOp::WriteStdout => write!(f, "cannot write to standard output: {source}"),
                    IoOp::CreateDir => write!(f, "cannot create {p}: {source}"),
                    IoOp::WriteBeside => write!(f, "cannot write beside {p}: {source}"),
                    IoOp::ManPages => write!(f, "writing man pages into {p}: {source}"),
                }
            }
            CliError::Output { path, problem } => {
                let p = path.display();
                match problem {
                    OutputProblem::Exists => write!(f, "{p} already exists"),
                    OutputProblem::NotEmpty => write!(f, "{p} already exists and is not empty"),
                    OutputProblem::IsDirectory => write!(f, "{p} is a directory"),
                    OutputProblem::NotDirectory => {
                        write!(f, "{p} exists and is not a directory")
                    }
                    OutputProblem::NoParent { dir } => write!(
                        f,
                        "cannot write {p}: directory {} does not exist",
                        dir.display()
                    ),
                    OutputProblem::NoDirectory => write!(f, "output directory {p} does not exist"),
                }
            }
            CliError::TooLarge { what, path, max } => write!(
                f,
                "{what} {} is larger than any {what} ({max} bytes)",
                path.display()
            ),
            CliError::Input { path, problem } => fmt_input(f, path, problem),
            CliError::Passphrase(p) => p.fmt(f),
            CliError::Stopped(Stopped::Squarings {
                done,
                total,
                checkpoint,
            }) => match checkpoint {
                Some(path) => write!(
                    f,
                    "stopped after {done} of {total} squarings; progress is saved in {}",
                    path.display()
                ),
                None => write!(
                    f,
                    "stopped after {done} of {total} squarings; progress was not saved"
                ),
            },
            CliError::Stopped(Stopped::NoLink) => {
                f.write_str("no link finished yet; nothing to submit")
            }
            CliError::Local(l) => l.fmt(f),
            CliError::Remote { url, why } => write!(f, "{url}: {why}"),
            CliError::SelfCheck(SelfCheck::Certificate(e)) => {
                write!(f, "the new certificate does not check out: {e}")
            }
            CliError::SelfCheck(SelfCheck::CertificateKey) => f.write_str(
                "the new certificate does not give back the puzzle key: nothing was written",
            ),
            CliError::SelfCheck(SelfCheck::Proof(e)) => {
                write!(
                    f,
                    "the new proof does not verify ({e}); nothing was written"
                )
            }
            CliError::Demo(DemoFailure::Step(e)) => e.fmt(f),
            CliError::Demo(DemoFailure::Check(what)) => f.write_str(what),
            CliError::KeyPolicy { verdict } => {
                write!(
                    f,
                    "{}",
                    format!("key verdict is {verdict:?}").to_lowercase()
                )
            }
            CliError::Json(e) => e.fmt(f),
            CliError::Library(e) => e.fmt(f),
            CliError::Verdict(v) => v.fmt(f),
            CliError::WithPath { path, inner } => write!(f, "{}: {inner}", path.display()),
            CliError::Sealing { input, inner } => {
                write!(f, "sealing {}: {inner}", input.display())
            }
            CliError::Hinted { inner, .. } | CliError::SquaringsSaved { inner, .. } => inner.fmt(f),
        }
    }
}

/// The message needs no source chain: it already says the cause, on one line.
impl std::error::Error for CliError {}

impl Usage {
    /// `{flag} must {must}`.
    pub fn range(flag: &'static str, must: impl Into<Cow<'static, str>>) -> Self {
        Usage::Range {
            flag,
            must: must.into(),
        }
    }

    /// `{flag} {value}: {problem}`.
    pub fn value(
        flag: &'static str,
        value: impl fmt::Display,
        problem: impl Into<Cow<'static, str>>,
    ) -> Self {
        Usage::Value {
            flag,
            value: value.to_string(),
            problem: problem.into(),
        }
    }

    fn hint(&self) -> Option<&'static str> {
        match self {
            Usage::EncryptedPemOnly { .. } => Some("drop --format (PEM is the default), or drop --encrypt and --passphrase-file to write the key unencrypted"),
            Usage::VdfInputTooLong { .. } => Some(VDF_INPUT_HINT),
            _ => None,
        }
    }
}

impl fmt::Display for Usage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Usage::Range { flag, must } => write!(f, "{flag} must {must}"),
            Usage::Give(choices) => write!(f, "give {choices}"),
            Usage::Value {
                flag,
                value,
                problem,
            } => write!(f, "{flag} {value}: {problem}"),
            Usage::NotAnInteger { flag } => write!(
                f,
                "{flag}: expected a non-negative integer in decimal or hexadecimal with 0x"
            ),
            Usage::UnknownHash(name) => {
                write!(f, "unknown --hash {name:?}: use sha256, sha384 or sha512")
            }
            Usage::Conflict(what) => f.write_str(what),
            Usage::TooManySquarings { t } => write!(
                f,
                "the duration and rate give an absurd number of squarings ({t:.3e}; the limit is 2^60)"
            ),
            Usage::EncryptedPemOnly { why, format } => {
                write!(f, "{why} writes PEM (encrypted PKCS#8) only, not --format {format}")
            }
            Usage::VdfInputTooLong { len, max } => write!(
                f,
                "the input has {len} bytes; a VDF input is at most {max}"
            ),
        }
    }
}

impl From<Usage> for CliError {
    fn from(u: Usage) -> Self {
        CliError::Usage(u)
    }
}

/// What a VDF input is for, when one is too long.
const VDF_INPUT_HINT: &str = "VDF inputs are seeds and challenges: pass a digest of a large file, e.g. --input $(sha256sum FILE | cut -c1-64)";

fn fmt_input(f: &mut fmt::Formatter<'_>, path: &Path, problem: &InputProblem) -> fmt::Result {
    let p = path.display();
    match problem {
        InputProblem::NotText => write!(f, "{p} is not a text file"),
        InputProblem::PublicKey => write!(f, "{p}: this is a public key; a private key is needed"),
        InputProblem::NoProofs => write!(f, "{p} holds no proofs"),
        InputProblem::NoPuzzleKeys => write!(f, "no .key files in {p}"),
        InputProblem::NoShares => write!(f, "no share files (party-I.share.json) in {p}"),
        InputProblem::NoShareOf { party } => {
            write!(f, "no share file of signer {party} (party-{party}.share.json) in {p}")
        }
        InputProblem::OtherShares { members, held } => write!(
            f,
            "the key was shared among parties {members:?} but {p} holds shares of {held:?}"
        ),
        InputProblem::TlockLength { actual, expected } => {
            let what = if actual < expected {
                "truncated"
            } else {
                "longer than it should be"
            };
            write!(
                f,
                "{p}: the time-lock file is {what}: {actual} bytes where its header promises {expected}"
            )
        }
        InputProblem::CertificateWithoutCa => write!(
            f,
            "{p} is a certificate; it is trusted only once checked against the institution's CA"
        ),
        InputProblem::NotACertificate { ca } => write!(
            f,
            "--ca {} checks certificates, but {p} is not one (a JSON public key carries no signature)",
            ca.display()
        ),
        InputProblem::PrivateSet => {
            write!(f, "{p} is a private set: verify its bundles with --keys")
        }
        InputProblem::NoTimestamp => write!(
            f,
            "{p} is a version 1 receipt: it carries no timestamp token"
        ),
    }
}

impl InputProblem {
    fn hint(&self) -> Option<&'static str> {
        match self {
            InputProblem::NoPuzzleKeys => {
                Some("--keys is the directory written by `hourglass submit new-set`")
            }
            InputProblem::NoShares => {
                Some("generate a key first: hourglass dkg local --parties 3 -o DIR")
            }
            InputProblem::TlockLength { .. } => {
                Some("get an intact copy of the file (nothing was computed or written)")
            }
            InputProblem::CertificateWithoutCa => Some(
                "pass --ca CA.crt: the CA certificate of the institution that issued the puzzle",
            ),
            InputProblem::NotACertificate { .. } => Some("pass the NAME.crt written by `hourglass puzzle certify`, or drop --ca to use NAME.pub unchecked"),
            InputProblem::NotText
            | InputProblem::PublicKey
            | InputProblem::NoProofs
            | InputProblem::OtherShares { .. }
            | InputProblem::NoShareOf { .. }
            | InputProblem::PrivateSet => None,
            InputProblem::NoTimestamp => Some(
                "the service stamps submissions since schema 3; older receipts state the institution's clock only",
            ),
        }
    }
}

impl PassphraseProblem {
    fn hint(&self) -> Option<&'static str> {
        match self {
            PassphraseProblem::Unencryptable { .. } => Some("only PEM RSA keys can be encrypted (`rsa keygen --encrypt`, `ca new --encrypt`); drop --passphrase-file here (the file is written with mode 0600)"),
            PassphraseProblem::NoTerminal => Some("pass --passphrase-file FILE (the passphrase on its first line, the file readable only by you)"),
            PassphraseProblem::FileEmpty { .. } => Some("write the passphrase on its first line"),
            PassphraseProblem::Prompt(_)
            | PassphraseProblem::Empty
            | PassphraseProblem::Differ
            | PassphraseProblem::FileNotText { .. } => None,
        }
    }
}

impl fmt::Display for PassphraseProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PassphraseProblem::Unencryptable { what } => write!(
                f,
                "--passphrase-file asks for an encrypted private key, but {what} cannot be encrypted; nothing was written"
            ),
            PassphraseProblem::NoTerminal => {
                f.write_str("a passphrase is needed and there is no terminal to ask")
            }
            PassphraseProblem::Prompt(e) => write!(f, "cannot read the passphrase: {e}"),
            PassphraseProblem::Empty => f.write_str("the passphrase is empty"),
            PassphraseProblem::Differ => {
                f.write_str("the two passphrases differ; nothing was written")
            }
            PassphraseProblem::FileNotText { path } => {
                write!(f, "passphrase file {} is not UTF-8 text", path.display())
            }
            PassphraseProblem::FileEmpty { path } => {
                write!(f, "passphrase file {} is empty", path.display())
            }
        }
    }
}

impl From<PassphraseProblem> for CliError {
    fn from(p: PassphraseProblem) -> Self {
        CliError::Passphrase(p)
    }
}

/// How a coordinator's message names one of its processes: a party by its id, a star's relay
/// as the relay.
fn process_name(party: PartyId) -> String {
    if party == hourglass_dkg::cluster::RELAY_ID {
        "the relay".to_string()
    } else {
        format!("party {party}")
    }
}

impl fmt::Display for LocalRun {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LocalRun::Start { action, source } => write!(f, "cannot {action}: {source}"),
            LocalRun::Wait { party, source } => write!(f, "{}: {source}", process_name(*party)),
            LocalRun::Failed { what, failures } => {
                write!(f, "{what} failed:")?;
                for (party, _, stderr) in failures {
                    write!(f, "\n  {}: {stderr}", process_name(*party))?;
                }
                Ok(())
            }
            LocalRun::Committee { stderr } => {
                write!(f, "the committee's generation failed: {stderr}")
            }
            LocalRun::Report { party, source } => {
                write!(f, "party {party} printed an unreadable report: {source}")
            }
            LocalRun::NoneFinished => f.write_str("no party finished"),
            LocalRun::Disagree => f.write_str("the parties disagree on the modulus"),
            LocalRun::Transcript(e) => {
                write!(f, "cannot read the parties' transcript.json: {e}")
            }
            LocalRun::OtherMembers => {
                f.write_str("the transcript's members are not the parties that finished")
            }
        }
    }
}

impl From<LocalRun> for CliError {
    fn from(l: LocalRun) -> Self {
        CliError::Local(l)
    }
}

impl fmt::Display for NegativeVerdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NegativeVerdict::Solution(reason) => write!(f, "invalid solution: {reason}"),
            NegativeVerdict::DelayedSignature => f.write_str(
                "invalid signature: the file, the signature or the key differs from what was signed",
            ),
            NegativeVerdict::Bundle { reason } => write!(
                f,
                "invalid bundle: {}",
                reason.as_deref().unwrap_or("it does not verify")
            ),
            NegativeVerdict::AfterDeadline => {
                f.write_str("the document is not proven to predate the deadline")
            }
            NegativeVerdict::Receipt { reason } => f.write_str(reason),
            NegativeVerdict::Proof { reason, .. } => write!(f, "invalid proof: {reason}"),
            NegativeVerdict::Proofs { invalid, total } => {
                write!(f, "{invalid} of {total} proofs are invalid")
            }
            NegativeVerdict::Log { reason } => f.write_str(reason),
            NegativeVerdict::NoLogEntries => {
                f.write_str("the log holds no receipt for what was asked")
            }
        }
    }
}

impl From<NegativeVerdict> for CliError {
    fn from(v: NegativeVerdict) -> Self {
        CliError::Verdict(v)
    }
}

/// Whether `e` refuses a checkpoint of another run (another puzzle, file or evaluation), which
/// the user resolves by choosing another `--checkpoint` or deleting the old one.
pub fn is_foreign_checkpoint(e: &hourglass_arith::Error) -> bool {
    matches!(
        e,
        hourglass_arith::Error::ForeignCheckpoint { .. }
            | hourglass_arith::Error::CheckpointShape { .. }
            | hourglass_arith::Error::StateMismatch
            | hourglass_arith::Error::StateInput
    )
}

impl fmt::Display for LibraryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LibraryError::Arith(e) => e.fmt(f),
            LibraryError::Rsa(RsaError::Verification) => f.write_str("invalid signature"),
            LibraryError::Rsa(e) => e.fmt(f),
            LibraryError::Vdf(e) => e.fmt(f),
            LibraryError::Timelock(hourglass_timelock::Error::Trust(t)) if t.is_refutation() => {
                write!(f, "the set's origin does not verify: {t}")
            }
            LibraryError::Timelock(e) => e.fmt(f),
            LibraryError::Tlock(e) => e.fmt(f),
            LibraryError::Certificate(e) if e.is_verdict() => {
                write!(f, "invalid certificate: {e}")
            }
            LibraryError::Certificate(e) => e.fmt(f),
            LibraryError::PuzzleCertificate(e) if e.is_verdict() => {
                write!(f, "invalid certificate: {e}")
            }
            LibraryError::PuzzleCertificate(e) => e.fmt(f),
            LibraryError::Receipt(e) => e.fmt(f),
            LibraryError::Timestamp(e) if e.is_verdict() => write!(f, "invalid timestamp: {e}"),
            LibraryError::Timestamp(e) => e.fmt(f),
            LibraryError::TokenRefused(e) if e.error.is_verdict() => {
                write!(f, "invalid timestamp: {e}")
            }
            LibraryError::TokenRefused(e) => e.fmt(f),
            LibraryError::Dkg(e) => e.fmt(f),
            LibraryError::Bench(e) => e.fmt(f),
            LibraryError::Serve(e) => e.fmt(f),
            LibraryError::Log(e) if e.is_verdict() => write!(f, "the log does not verify: {e}"),
            LibraryError::Log(e) => e.fmt(f),
        }
    }
}

impl LibraryError {
    /// What to do about it, if hourglass knows.
    pub fn hint(&self) -> Option<&'static str> {
        match self {
            LibraryError::Arith(e) => arith_hint(e),
            LibraryError::Rsa(e) => rsa_hint(e),
            LibraryError::Vdf(e) => vdf_hint(e),
            LibraryError::Timelock(e) => timelock_hint(e),
            LibraryError::Tlock(e) => tlock_hint(e),
            LibraryError::Certificate(e) => certificate_hint(e),
            LibraryError::PuzzleCertificate(e) => puzzle_certificate_hint(e),
            LibraryError::Receipt(ReceiptError::Timestamp(e)) => timestamp_hint(e),
            LibraryError::Receipt(ReceiptError::LogNotPinned { .. }) => Some(
                "pass --log-key with the log's verifier key (the service serves it at /log/key; get it once, from a source you trust)",
            ),
            LibraryError::Receipt(ReceiptError::Log(e)) => log_hint(e),
            LibraryError::Receipt(_) => None,
            LibraryError::Timestamp(e) => timestamp_hint(e),
            LibraryError::TokenRefused(e) => timestamp_hint(&e.error),
            LibraryError::Dkg(e) => dkg_hint(e),
            LibraryError::Bench(e) => e.hint(),
            LibraryError::Serve(e) => e.hint(),
            LibraryError::Log(e) => log_hint(e),
        }
    }
}

fn log_hint(e: &hourglass_log::LogError) -> Option<&'static str> {
    use hourglass_log::LogError as E;
    Some(match e {
        E::Quorum { .. } => "the log published a checkpoint too few of your witnesses cosigned: a split view cannot be ruled out",
        E::Inconsistent { .. } | E::Shrank { .. } => "keep the state file and the log's checkpoints as evidence: a log that forks or rewrites its history is misbehaving",
        E::WrongKey { .. } => "--log-key takes a log's key (type 0x01); --witness-key a witness's (type 0x04)",
        E::Fetch { .. } | E::Missing { .. } => "is the log's URL its prefix (e.g. http://host:8080/log)? Is it reachable?",
        _ => return None,
    })
}

fn timestamp_hint(e: &TimestampError) -> Option<&'static str> {
    use hourglass_timestamp::path::PathProblem as P;
    Some(match e {
        TimestampError::Path {
            problem: P::NoPath { .. } | P::AnchorNotValidAt { .. },
            ..
        } => {
            "pass --tsa-ca with the CA certificate of the TSA you trust (its /tsa-ca.pem, or its published root), and its intermediates with --untrusted"
        }
        TimestampError::Certificate(_) => "expected PEM or DER X.509 certificates",
        TimestampError::Anchor(_) => {
            "--tsa-ca takes the CA certificates (a root, or an intermediate) of the authority you trust"
        }
        TimestampError::ImprintMismatch { .. } => "is it the token of this file, byte for byte?",
        TimestampError::NotDer { .. } | TimestampError::Malformed { .. } => {
            "expected an RFC 3161 reply (.tsr) or token, DER"
        }
        TimestampError::NoSignerCertificate => {
            "give the authority's certificate with --untrusted (for sigstore, its chain), or stamp again with certReq (hourglass timestamp stamp always asks for it)"
        }
        _ => return None,
    })
}

fn arith_hint(e: &hourglass_arith::Error) -> Option<&'static str> {
    match e {
        hourglass_arith::Error::EntropyExhausted { .. } => Some("the entropy file ran out: supply a larger file or a device (e.g. /dev/hwrng); hourglass never falls back to another source"),
        _ => None,
    }
}

fn rsa_hint(e: &RsaError) -> Option<&'static str> {
    Some(match e {
        RsaError::Insecure(_) => "these sizes are broken by published attacks; pass --allow-insecure only to reproduce papers or for tests",
        RsaError::Parse(_) => "keys can be PEM (PKCS#8 or PKCS#1), DER, hourglass hex or JSON; see docs/FORMATS.md",
        RsaError::InvalidKey(_) => "the key file is inconsistent (edited or corrupted); regenerate it or check it with `openssl pkey -check`",
        RsaError::Decryption => "wrong key, corrupted ciphertext, or a different --hash/--label than at encryption",
        RsaError::Verification => "the file, the signature or the key differs from what was signed (or the padding/--hash differs)",
        RsaError::MessageTooLong { .. } => "RSA encrypts short secrets (such as a symmetric key); encrypt large files with a symmetric cipher",
        RsaError::InputOutOfRange { .. } => "the input must be exactly as long as the modulus and smaller than it: is it for this key?",
        RsaError::PassphraseRequired => "pass --passphrase-file FILE, or run on a terminal to be asked",
        RsaError::WrongPassphrase => "the passphrase is the first line of --passphrase-file (or what you type at the prompt); passphrases are case-sensitive",
        RsaError::UnsupportedEncryption(_) => "hourglass reads PBES2 keys (PBKDF2 or scrypt with AES-CBC): re-encrypt with `openssl pkey -aes256`",
        RsaError::FaultDetected => "a computation fault was detected (hardware error or attack); the result was withheld. Try again; if it repeats, check the machine",
        _ => return None,
    })
}

fn vdf_hint(e: &hourglass_vdf::Error) -> Option<&'static str> {
    use hourglass_vdf::{Error, InputError, ParamError};
    match e {
        Error::InvalidModulus(_) => {
            Some("a VDF needs an RSA modulus of at least 1024 bits whose factors nobody knows")
        }
        Error::Format(_) => Some("see docs/FORMATS.md, section 15, for the proof format"),
        Error::InvalidInput(InputError::TooLong { .. }) => Some(VDF_INPUT_HINT),
        Error::InvalidParameters(ParamError::SecurityLevel { .. }) => {
            Some("pass --security 128 or --security 256")
        }
        Error::PowersFile { .. } => Some(
            "the powers file sits beside the checkpoint: check that its directory is writable and has free space",
        ),
        _ => None,
    }
}

fn timelock_hint(e: &hourglass_timelock::Error) -> Option<&'static str> {
    use hourglass_timelock::{Error, ParamError, TrustError};
    match e {
        Error::InvalidParameters(ParamError::Recipient(_)) => Some(
            "an hourglass recipient is the age1hourglass1... string `hourglass timelock recipient` prints",
        ),
        Error::Insecure(_) => Some(
            "pass --allow-insecure only to reproduce the paper's figures or for tests, never for real deadlines",
        ),
        Error::UnverifiedProof { .. } => Some(
            "a hardware fault or a corrupt checkpoint: delete the checkpoint files and run again",
        ),
        // The set's claim is refuted by what the verifier pinned: a negative verdict.
        Error::Trust(t) if t.is_refutation() => Some(
            "the set, or the transcript it names, is not the committee's: do not trust bundles on it",
        ),
        Error::Trust(TrustError::UnpinnedCommittee { .. }) => Some(
            "give the committee's transcript.json (--transcript) and the certificates of its members you trust (--committee-cert FILE, repeated, or a directory), from a source you trust, not from the set's issuer",
        ),
        Error::Trust(_) => Some(
            "--transcript and --committee-cert pin a committee; a set on RSA-2048 or the institution's own modulus needs neither",
        ),
        _ => None,
    }
}

fn tlock_hint(e: &TlockError) -> Option<&'static str> {
    match e {
        TlockError::NotTlock => Some("expected a .tlock file written by `hourglass timelock seal`"),
        TlockError::UnsupportedVersion(_) => {
            Some("the file was written by another version of hourglass: open it with that version")
        }
        TlockError::CorruptHeader(_) | TlockError::Truncated(_) | TlockError::Damaged => Some(
            "the file was damaged, cut short or edited: get an intact copy (nothing was computed or written)",
        ),
        TlockError::Authentication => Some(
            "the file was damaged or edited after sealing: get an intact copy; nothing was written",
        ),
        TlockError::FaultDetected => {
            Some("a hardware fault is likely: try again; if it repeats, check the machine")
        }
        TlockError::Io { .. } => Some("check the paths, permissions and free space"),
        _ => None,
    }
}

fn certificate_hint(e: &CertificateError) -> Option<&'static str> {
    Some(match e {
        CertificateError::Malformed(_) => "expected a PEM or DER X.509 certificate",
        CertificateError::NotCa(_) => {
            "--ca and --ca-cert take the CA certificate (NAME.crt) written by `hourglass ca new`"
        }
        CertificateError::WrongIssuer { .. } => {
            "the certificate comes from another CA: check that --ca names the institution's CA certificate"
        }
        CertificateError::BadSignature { .. } => {
            "the certificate was altered, or signed by another key under the same CA name: get a fresh copy from the institution and check --ca"
        }
        CertificateError::UnsupportedAlgorithm(_) => {
            "hourglass checks RSA PKCS#1 v1.5 signatures with SHA-256, SHA-384 or SHA-512"
        }
        CertificateError::Expired { .. } => {
            "ask the institution for a renewed certificate (`hourglass puzzle certify ... --days N`), and check this machine's clock"
        }
        CertificateError::NotYetValid { .. } => "check this machine's clock (`date -u`)",
        CertificateError::KeyMismatch => {
            "--ca-key and --ca-cert must be NAME.key and NAME.crt of the same `hourglass ca new`"
        }
        CertificateError::InvalidOptions(_) => {
            "a common name (--name) has 1 to 64 characters; --days must leave a valid period"
        }
        _ => return None,
    })
}

fn puzzle_certificate_hint(e: &PuzzleCertificateError) -> Option<&'static str> {
    Some(match e {
        PuzzleCertificateError::Certificate(c) => return certificate_hint(c),
        PuzzleCertificateError::NotTimeLock(_) => {
            "this is an ordinary X.509 certificate; pass the NAME.crt written by `hourglass puzzle certify`"
        }
        PuzzleCertificateError::BadExponent(_) | PuzzleCertificateError::BadParameters(_) => {
            "this is not a valid hourglass time-lock certificate (see docs/FORMATS.md)"
        }
        _ => return None,
    })
}

fn threshold_hint(e: &hourglass_dkg::ThresholdError) -> Option<&'static str> {
    use hourglass_dkg::ThresholdError as T;
    Some(match e {
        T::TooFewSigners { .. } | T::DuplicateSigner { .. } | T::UnknownSigner { .. } | T::NotASigner { .. } => {
            "name at least t + 1 distinct members with --signers (nothing was signed)"
        }
        T::WrongPartials { .. } | T::DoNotCombine { .. } => {
            "nothing was written: sign again with other parties, or with more than t + 1 so that a wrong partial can be left out"
        }
        T::OtherEpoch { .. } => {
            "a party that missed a refresh cannot sign with this epoch: sign with parties of the same epoch (its old share file is useless)"
        }
        T::OtherCluster { .. } | T::OtherVerification { .. } => {
            "every share file must come from the same generation and the same reshare or refresh"
        }
        T::OtherKind { .. } => "reshare n-of-n shares once (dkg reshare --threshold T); refresh threshold shares (dkg refresh)",
        T::OtherThreshold { .. } => "every party gives the same --threshold; after the reshare it is fixed",
        _ => return None,
    })
}

fn dkg_hint(e: &hourglass_dkg::Error) -> Option<&'static str> {
    use hourglass_dkg::Error as E;
    match e {
        E::BadMessage { .. } => Some("the run was aborted; check that every party runs the same hourglass version and configuration"),
        E::TooFewParties { .. } => Some("start the missing parties (or lower min_parties in the [generation] table) and run again"),
        E::Config(hourglass_dkg::ConfigError::NotEmpty { .. }) => {
            Some("choose an empty or new directory for the cluster")
        }
        E::Config(_) => Some("check the cluster configuration (docs/FORMATS.md section 16)"),
        E::Tls(_) => Some("every party's certificate must be listed in every configuration"),
        E::OpenFiles(_) => Some("each party holds a TLS connection (an open file) to every other party, and `dkg local` two pipes per party process; or run fewer parties on this machine"),
        E::Share(_) => Some("share files are written by `hourglass dkg party` (v1) and `dkg reshare` / `dkg refresh` (v2); see docs/FORMATS.md section 16"),
        E::Threshold(t) => threshold_hint(t),
        E::TranscriptSignature { .. } => Some("no key was kept: the named party's key does not match the certificate the others pin, or it deviated from the protocol"),
        E::Untrusted(_) => Some("check the transcript against the committee members' certificates (a cluster's certs/ directory); docs/FORMATS.md section 16.6"),
        E::Certificates { .. } => Some("give a PEM file of CERTIFICATE blocks, or a directory of *.pem / *.crt files"),
        _ => None,
    }
}

// Conversions unwrap the libraries' wrapping variants (all `#[error(transparent)]`, so the
// message is the same) down to the error that carries the hint.

impl From<hourglass_arith::Error> for LibraryError {
    fn from(e: hourglass_arith::Error) -> Self {
        LibraryError::Arith(e)
    }
}

impl From<RsaError> for LibraryError {
    fn from(e: RsaError) -> Self {
        match e {
            RsaError::Arith(inner) => inner.into(),
            other => LibraryError::Rsa(other),
        }
    }
}

impl From<hourglass_vdf::Error> for LibraryError {
    fn from(e: hourglass_vdf::Error) -> Self {
        match e {
            hourglass_vdf::Error::Arith(inner) => inner.into(),
            other => LibraryError::Vdf(other),
        }
    }
}

impl From<hourglass_timelock::Error> for LibraryError {
    fn from(e: hourglass_timelock::Error) -> Self {
        use hourglass_timelock::Error;
        match e {
            Error::Arith(inner) => inner.into(),
            Error::Rsa(inner) => inner.into(),
            Error::Vdf(inner) => inner.into(),
            other => LibraryError::Timelock(other),
        }
    }
}

impl From<TlockError> for LibraryError {
    fn from(e: TlockError) -> Self {
        match e {
            TlockError::Timelock(inner) => inner.into(),
            other => LibraryError::Tlock(other),
        }
    }
}

impl From<CertificateError> for LibraryError {
    fn from(e: CertificateError) -> Self {
        match e {
            CertificateError::Rsa(inner) => inner.into(),
            other => LibraryError::Certificate(other),
        }
    }
}

impl From<PuzzleCertificateError> for LibraryError {
    fn from(e: PuzzleCertificateError) -> Self {
        match e {
            PuzzleCertificateError::Certificate(inner) => inner.into(),
            PuzzleCertificateError::Key(inner) => inner.into(),
            other => LibraryError::PuzzleCertificate(other),
        }
    }
}

impl From<ReceiptError> for LibraryError {
    /// Kept whole: a receipt's RSA failure is the receipt's (no RSA hint, no verdict).
    fn from(e: ReceiptError) -> Self {
        LibraryError::Receipt(e)
    }
}

impl From<TimestampError> for LibraryError {
    fn from(e: TimestampError) -> Self {
        LibraryError::Timestamp(e)
    }
}

impl From<TokenRefused> for LibraryError {
    fn from(e: TokenRefused) -> Self {
        LibraryError::TokenRefused(e)
    }
}

impl From<hourglass_dkg::Error> for LibraryError {
    fn from(e: hourglass_dkg::Error) -> Self {
        match e {
            hourglass_dkg::Error::Arith(inner) => inner.into(),
            hourglass_dkg::Error::Rsa(inner) => inner.into(),
            other => LibraryError::Dkg(other),
        }
    }
}

impl From<hourglass_bench::Error> for LibraryError {
    /// The arithmetic and RSA errors are unwrapped; the others keep the benchmarks' hints.
    fn from(e: hourglass_bench::Error) -> Self {
        match e {
            hourglass_bench::Error::Arith(inner) => inner.into(),
            hourglass_bench::Error::Rsa(inner) => inner.into(),
            other => LibraryError::Bench(other),
        }
    }
}

impl From<hourglass_log::LogError> for LibraryError {
    fn from(e: hourglass_log::LogError) -> Self {
        match e {
            hourglass_log::LogError::Entropy(inner) => inner.into(),
            other => LibraryError::Log(other),
        }
    }
}

impl From<hourglass_serve::Error> for LibraryError {
    /// Kept whole, with the service's own hints.
    fn from(e: hourglass_serve::Error) -> Self {
        LibraryError::Serve(e)
    }
}

/// `From` each library's error (through [`LibraryError`]), so that `?` works in commands.
macro_rules! library_errors {
    ($($t:ty),* $(,)?) => {$(
        impl From<$t> for CliError {
            fn from(e: $t) -> Self {
                CliError::Library(Box::new(e.into()))
            }
        }
    )*};
}

library_errors!(
    LibraryError,
    hourglass_arith::Error,
    RsaError,
    hourglass_vdf::Error,
    hourglass_timelock::Error,
    TlockError,
    CertificateError,
    PuzzleCertificateError,
    ReceiptError,
    TimestampError,
    TokenRefused,
    hourglass_dkg::Error,
    hourglass_bench::Error,
    hourglass_serve::Error,
    hourglass_log::LogError,
);

#[cfg(test)]
mod tests {
    use super::*;
    use hourglass_timelock::TrustError;
    use std::time::SystemTime;

    fn io() -> std::io::Error {
        std::io::Error::from(std::io::ErrorKind::NotFound)
    }

    fn wrap(e: CliError) -> CliError {
        CliError::SquaringsSaved {
            checkpoint: "x.ckpt".into(),
            inner: Box::new(CliError::Sealing {
                input: "x".into(),
                inner: Box::new(e.with_path("p").with_hint("h")),
            }),
        }
    }

    /// Every kind of the CLI's own, with the exit status it must give.
    fn own_kinds() -> Vec<(CliError, u8)> {
        vec![
            (Usage::range("--bits", "be within 1..=2").into(), EXIT_ERROR),
            (Usage::Give("--a or --b").into(), EXIT_ERROR),
            (
                Usage::value("--kill", 9, "no such party").into(),
                EXIT_ERROR,
            ),
            (Usage::NotAnInteger { flag: "--n" }.into(), EXIT_ERROR),
            (Usage::UnknownHash("md5".into()).into(), EXIT_ERROR),
            (Usage::Conflict("--public needs --set").into(), EXIT_ERROR),
            (Usage::TooManySquarings { t: 1e30 }.into(), EXIT_ERROR),
            (
                Usage::EncryptedPemOnly {
                    why: "--encrypt",
                    format: "der".into(),
                }
                .into(),
                EXIT_ERROR,
            ),
            (Usage::VdfInputTooLong { len: 9, max: 8 }.into(), EXIT_ERROR),
            (CliError::io(IoOp::Read("key"), "k", io()), EXIT_ERROR),
            (CliError::io(IoOp::Open("input"), "k", io()), EXIT_ERROR),
            (CliError::io(IoOp::Reading, "k", io()), EXIT_ERROR),
            (CliError::io(IoOp::List("cluster"), "k", io()), EXIT_ERROR),
            (CliError::io(IoOp::Write, "k", io()), EXIT_ERROR),
            (CliError::io(IoOp::WriteStdout, "-", io()), EXIT_ERROR),
            (CliError::io(IoOp::CreateDir, "k", io()), EXIT_ERROR),
            (CliError::io(IoOp::WriteBeside, "k", io()), EXIT_ERROR),
            (CliError::io(IoOp::ManPages, "k", io()), EXIT_ERROR),
            (CliError::output("o", OutputProblem::Exists), EXIT_ERROR),
            (CliError::output("o", OutputProblem::NotEmpty), EXIT_ERROR),
            (
                CliError::output("o", OutputProblem::IsDirectory),
                EXIT_ERROR,
            ),
            (
                CliError::output("o", OutputProblem::NotDirectory),
                EXIT_ERROR,
            ),
            (
                CliError::output("o", OutputProblem::NoParent { dir: "d".into() }),
                EXIT_ERROR,
            ),
            (
                CliError::output("o", OutputProblem::NoDirectory),
                EXIT_ERROR,
            ),
            (
                CliError::TooLarge {
                    what: "key",
                    path: "k".into(),
                    max: 1,
                },
                EXIT_ERROR,
            ),
            (CliError::input("i", InputProblem::NotText), EXIT_ERROR),
            (CliError::input("i", InputProblem::PublicKey), EXIT_ERROR),
            (CliError::input("i", InputProblem::NoProofs), EXIT_ERROR),
            (CliError::input("i", InputProblem::NoPuzzleKeys), EXIT_ERROR),
            (CliError::input("i", InputProblem::NoShares), EXIT_ERROR),
            (
                CliError::input(
                    "i",
                    InputProblem::OtherShares {
                        members: vec![1, 2, 3],
                        held: vec![1, 2],
                    },
                ),
                EXIT_ERROR,
            ),
            (
                CliError::input(
                    "i",
                    InputProblem::TlockLength {
                        actual: 1,
                        expected: 2,
                    },
                ),
                EXIT_ERROR,
            ),
            (
                CliError::input("i", InputProblem::CertificateWithoutCa),
                EXIT_ERROR,
            ),
            (
                CliError::input("i", InputProblem::NotACertificate { ca: "ca".into() }),
                EXIT_ERROR,
            ),
            (CliError::input("i", InputProblem::PrivateSet), EXIT_ERROR),
            (
                PassphraseProblem::Unencryptable { what: "a share" }.into(),
                EXIT_ERROR,
            ),
            (PassphraseProblem::NoTerminal.into(), EXIT_ERROR),
            (PassphraseProblem::Prompt(io()).into(), EXIT_ERROR),
            (PassphraseProblem::Empty.into(), EXIT_ERROR),
            (PassphraseProblem::Differ.into(), EXIT_ERROR),
            (
                PassphraseProblem::FileNotText { path: "p".into() }.into(),
                EXIT_ERROR,
            ),
            (
                PassphraseProblem::FileEmpty { path: "p".into() }.into(),
                EXIT_ERROR,
            ),
            (
                CliError::Stopped(Stopped::Squarings {
                    done: 1,
                    total: 2,
                    checkpoint: None,
                }),
                EXIT_ERROR,
            ),
            (CliError::Stopped(Stopped::NoLink), EXIT_ERROR),
            (
                LocalRun::Start {
                    action: "start a party process",
                    source: io(),
                }
                .into(),
                EXIT_ERROR,
            ),
            (
                LocalRun::Wait {
                    party: 1,
                    source: io(),
                }
                .into(),
                EXIT_ERROR,
            ),
            (
                LocalRun::Failed {
                    what: "the generation",
                    failures: vec![(1, Some(2), "gone".into()), (2, None, "killed".into())],
                }
                .into(),
                EXIT_ERROR,
            ),
            (
                LocalRun::Failed {
                    what: "joint signing",
                    failures: vec![(1, Some(2), "gone".into()), (2, Some(1), "liar".into())],
                }
                .into(),
                EXIT_INVALID,
            ),
            (
                LocalRun::Committee { stderr: "x".into() }.into(),
                EXIT_ERROR,
            ),
            (
                LocalRun::Report {
                    party: 1,
                    source: serde_json::from_str::<u8>("x").unwrap_err(),
                }
                .into(),
                EXIT_ERROR,
            ),
            (LocalRun::NoneFinished.into(), EXIT_ERROR),
            (LocalRun::Disagree.into(), EXIT_ERROR),
            (LocalRun::Transcript(io()).into(), EXIT_ERROR),
            (LocalRun::OtherMembers.into(), EXIT_ERROR),
            (
                CliError::SelfCheck(SelfCheck::Certificate(CertificateError::KeyMismatch.into())),
                EXIT_ERROR,
            ),
            (CliError::SelfCheck(SelfCheck::CertificateKey), EXIT_ERROR),
            (
                CliError::SelfCheck(SelfCheck::Proof(hourglass_vdf::Error::InvalidProof("x"))),
                EXIT_ERROR,
            ),
            (
                CliError::Demo(DemoFailure::Step(Box::new(io()))),
                EXIT_ERROR,
            ),
            (CliError::Demo(DemoFailure::Check("demo: x")), EXIT_ERROR),
            (
                CliError::KeyPolicy {
                    verdict: Severity::Weak,
                },
                EXIT_ERROR,
            ),
            (
                CliError::Json(serde_json::from_str::<u8>("x").unwrap_err()),
                EXIT_ERROR,
            ),
            (
                NegativeVerdict::Solution(Rejection::WrongSolution).into(),
                EXIT_INVALID,
            ),
            (NegativeVerdict::DelayedSignature.into(), EXIT_INVALID),
            (
                NegativeVerdict::Bundle { reason: None }.into(),
                EXIT_INVALID,
            ),
            (NegativeVerdict::AfterDeadline.into(), EXIT_INVALID),
            (
                NegativeVerdict::Receipt { reason: "x".into() }.into(),
                EXIT_INVALID,
            ),
            (
                NegativeVerdict::Proof {
                    reason: "x".into(),
                    untrusted_modulus: true,
                }
                .into(),
                EXIT_INVALID,
            ),
            (
                NegativeVerdict::Proofs {
                    invalid: 1,
                    total: 2,
                }
                .into(),
                EXIT_INVALID,
            ),
        ]
    }

    /// Library errors, converted as commands convert them, with the exit status they must give.
    fn library_kinds() -> Vec<(CliError, u8)> {
        let now = SystemTime::UNIX_EPOCH;
        let role = || hourglass_timelock::certificate::CertRole::Certificate;
        vec![
            (RsaError::Verification.into(), EXIT_INVALID),
            (RsaError::Decryption.into(), EXIT_ERROR),
            (RsaError::FaultDetected.into(), EXIT_ERROR),
            // Unwrapped through the libraries that carry it.
            (
                hourglass_timelock::Error::Rsa(RsaError::Verification).into(),
                EXIT_INVALID,
            ),
            (
                hourglass_dkg::Error::Rsa(RsaError::Verification).into(),
                EXIT_INVALID,
            ),
            (
                hourglass_dkg::Error::from(hourglass_dkg::ThresholdError::WrongPartials {
                    wrong: vec![4],
                    valid: 2,
                    needed: 3,
                })
                .into(),
                EXIT_INVALID,
            ),
            (
                hourglass_dkg::Error::from(hourglass_dkg::ThresholdError::TooFewSigners {
                    threshold: 2,
                    needed: 3,
                    got: 2,
                })
                .into(),
                EXIT_ERROR,
            ),
            (
                hourglass_dkg::Error::FalseAccusation {
                    accuser: 2,
                    accused: vec![1, 3],
                }
                .into(),
                EXIT_INVALID,
            ),
            (
                hourglass_dkg::Error::from(hourglass_dkg::TrustError::MissingSignatures {
                    members: vec![2],
                })
                .into(),
                EXIT_INVALID,
            ),
            (
                hourglass_dkg::Error::from(hourglass_dkg::TrustError::NotPinned {
                    members: vec![2],
                })
                .into(),
                EXIT_ERROR,
            ),
            (
                hourglass_dkg::Error::from(hourglass_dkg::limits::OpenFilesError::HardLimit {
                    needed: 100,
                    hard: 64,
                })
                .into(),
                EXIT_ERROR,
            ),
            (
                CertificateError::Rsa(RsaError::Verification).into(),
                EXIT_INVALID,
            ),
            (
                hourglass_bench::Error::Rsa(RsaError::Verification).into(),
                EXIT_INVALID,
            ),
            // A receipt's own RSA failure is the receipt's: not a verdict.
            (ReceiptError::Rsa(RsaError::Verification).into(), EXIT_ERROR),
            (
                hourglass_timelock::Error::Trust(TrustError::OtherModulus).into(),
                EXIT_INVALID,
            ),
            (
                TlockError::Timelock(hourglass_timelock::Error::Trust(TrustError::OtherModulus))
                    .into(),
                EXIT_INVALID,
            ),
            (
                hourglass_timelock::Error::Trust(TrustError::UnpinnedCommittee {
                    committee: "c".into(),
                })
                .into(),
                EXIT_ERROR,
            ),
            (
                CertificateError::WrongIssuer {
                    issuer: "a".into(),
                    ca: "b".into(),
                }
                .into(),
                EXIT_INVALID,
            ),
            (
                CertificateError::Expired {
                    what: role(),
                    not_after: now,
                    now,
                }
                .into(),
                EXIT_INVALID,
            ),
            (
                CertificateError::NotYetValid {
                    what: role(),
                    not_before: now,
                    now,
                }
                .into(),
                EXIT_INVALID,
            ),
            (CertificateError::KeyMismatch.into(), EXIT_ERROR),
            (ReceiptError::BadSignature.into(), EXIT_INVALID),
            (
                ReceiptError::OtherInstitution {
                    named: "a".into(),
                    given: "b".into(),
                }
                .into(),
                EXIT_INVALID,
            ),
            (ReceiptError::Malformed { why: "x" }.into(), EXIT_ERROR),
            (TlockError::Authentication.into(), EXIT_ERROR),
            (hourglass_vdf::Error::InvalidProof("x").into(), EXIT_ERROR),
            (
                hourglass_arith::Error::EntropyExhausted {
                    source_name: "f".into(),
                    consumed: 1,
                    needed: 1,
                }
                .into(),
                EXIT_ERROR,
            ),
        ]
    }

    #[test]
    fn every_kind_has_its_exit_code() {
        for (e, code) in own_kinds().into_iter().chain(library_kinds()) {
            let what = format!("{e:?}");
            assert_eq!(e.exit_code(), code, "{what}");
            // Context and hints never change the status.
            assert_eq!(wrap(e).exit_code(), code, "wrapped {what}");
        }
    }

    #[test]
    fn every_kind_has_a_message() {
        for (e, _) in own_kinds().into_iter().chain(library_kinds()) {
            assert!(!e.to_string().trim().is_empty(), "{e:?}");
        }
    }

    #[test]
    fn messages_and_hints_come_from_the_data() {
        let e = CliError::output("key.pem", OutputProblem::Exists);
        assert_eq!(e.to_string(), "key.pem already exists");
        assert_eq!(
            e.hint().as_deref(),
            Some("pass --force to replace it, or choose another output path")
        );
        let e = CliError::from(RsaError::Verification);
        assert_eq!(e.to_string(), "invalid signature");
        assert!(e.is_verdict());
        let e = CliError::from(ReceiptError::BadSignature).with_path("r.json");
        assert_eq!(
            e.to_string(),
            "r.json: the receipt's signature does not verify under this institution key"
        );
        let e = CliError::from(CertificateError::WrongIssuer {
            issuer: "CN=a".into(),
            ca: "CN=b".into(),
        });
        assert!(e.to_string().starts_with("invalid certificate: "), "{e}");
        let e = CliError::Sealing {
            input: "doc".into(),
            inner: Box::new(Usage::range("--bits", "be within 1024..=8192").into()),
        };
        assert_eq!(
            e.to_string(),
            "sealing doc: --bits must be within 1024..=8192"
        );
        // A call site's hint replaces the kind's; the message is unchanged.
        let e = CliError::from(TlockError::Authentication)
            .with_path("f.tlock")
            .with_hint("another hint");
        assert_eq!(e.hint().as_deref(), Some("another hint"));
        assert!(e.to_string().starts_with("f.tlock: "), "{e}");
        // The saved squarings extend the hint, when there is one.
        let saved = |inner: CliError| CliError::SquaringsSaved {
            checkpoint: "f.ckpt".into(),
            inner: Box::new(inner),
        };
        assert_eq!(
            saved(TlockError::Authentication.into()).hint().as_deref(),
            Some("the file was damaged or edited after sealing: get an intact copy; nothing was written; the squarings are saved in f.ckpt, so an intact copy opens at once")
        );
        assert_eq!(saved(LocalRun::Disagree.into()).hint(), None);
        assert_eq!(
            CliError::KeyPolicy {
                verdict: Severity::Broken
            }
            .to_string(),
            "key verdict is broken"
        );
    }
}

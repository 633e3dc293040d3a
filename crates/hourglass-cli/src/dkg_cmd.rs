//! `hourglass dkg ...`: distributed RSA key generation among parties that do not trust each
//! other (Boneh-Franklin), over mutually authenticated TLS, and signing with the shares: with
//! every share, or after a reshare to threshold shares with any `t + 1` (and refreshes of
//! those to new epochs).

use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, Stdio};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use hourglass_dkg::adversary::{parse_adversary, Deviant, Deviation};
use hourglass_dkg::bounds::FrameBounds;
use hourglass_dkg::cluster::{free_loopback_base_port, init_cluster, ClusterConfig};
use hourglass_dkg::keyshare::AnyShare;
use hourglass_dkg::limits::{ensure_open_files, PROCESS_OPEN_FILES};
use hourglass_dkg::params::Settings;
use hourglass_dkg::protocol::{generate_signed, Progress, Report, SignedGeneration};
use hourglass_dkg::reshare::{refresh, reshare};
use hourglass_dkg::sign::{sign_jointly, sign_threshold, Scheme};
use hourglass_dkg::threshold::{Sizes, ThresholdShare};
use hourglass_dkg::tls::{TlsOptions, TlsTransport};
use hourglass_dkg::transcript::{read_certificates, SignedTranscript};
use hourglass_dkg::transport::{NetSim, Transport};
use hourglass_dkg::PartyId;
use hourglass_rsa::encoding::{encode_public_key, KeyFormat};
use hourglass_rsa::HashAlg;
use serde::{Deserialize, Serialize};

use crate::cli_error::{CliError, InputProblem, IoOp, LocalRun, OutputProblem, Usage};
use crate::files::{
    check_output, read_input, write_output, write_output_replacing, write_shared_output, DirOutput,
    Sensitivity,
};
use crate::progress::ReportArgs;
use hourglass_arith::entropy::EntropyArgs;

/// Arguments of `hourglass dkg`.
#[derive(Args, Debug)]
pub struct DkgArgs {
    #[command(subcommand)]
    command: DkgCommand,
}

#[derive(Subcommand, Debug)]
enum DkgCommand {
    /// Write a ready cluster for testing on one machine: configs, TLS keys, loopback ports.
    #[command(after_help = "Examples:
  hourglass dkg init --parties 3 --bits 2048 -o cluster
  hourglass dkg party --config cluster/party-1.toml --id 1 &   (and so on for 2 and 3)
For a real deployment, give each organisation its own key and certificate and one config
listing every party's address and certificate (docs/FORMATS.md section 16).")]
    Init(InitArgs),
    /// Run one party of a generation (every party runs this at about the same time).
    #[command(after_help = "Examples:
  hourglass dkg party --config cluster/party-2.toml --id 2
  hourglass dkg party --config party.toml --id 7 -o /secure/dir --rtt-ms 80
Writes public.pem (the public key, readable by OpenSSL), transcript.json (the public record of the
generation, format v2: signed by every member with the key of its TLS certificate, over the
fingerprint a public puzzle set names; every member checks the others' signatures before
anything is written) and party-I.share.json (this party's share of d, mode 0600). If a party
dies or stops answering, the others restart without it, down to min_parties. The report (--json:
one object) gives the time, candidate pairs, batches, bytes sent and this process's peak
resident memory (peak_rss_bytes). A party holds a socket for every other party: the soft limit
of open files is raised when it is too low (up to the hard limit; see `ulimit -n`).")]
    Party(PartyArgs),
    /// Run every party of a fresh loopback cluster as separate processes, and report.
    #[command(after_help = "Examples:
  hourglass dkg local --parties 3 --bits 2048 -o cluster
  hourglass dkg local --parties 10 --bits 2048 --batch 64 -o cluster10
  hourglass dkg local --parties 4 --bits 1024 --kill 3 --kill-after-ms 500 -o c4   (failure tolerance)
  hourglass dkg local --parties 5 --bits 1024 --adversary 2:false-abort --adversary 4:false-abort -o c5
      (deviating parties: the honest ones stop naming them; nobody honest is ever removed)
  hourglass dkg local --parties 50 --bits 1024 --timeout 600 --connect-timeout 120 --json -o c50
      (a large cluster: generous timeouts on a loaded machine; the summary, per party)
Writes the cluster, public.pem and transcript.json (v2, signed by every member; checked here
against the cluster's certs/) into the output directory. The summary gives the time, candidate
pairs (iterations), batches, and per party the time, bytes sent and peak resident memory
(median and max over the parties that finished).")]
    Local(LocalArgs),
    /// Sign a file with the shares in a cluster directory (runs every party-sign locally).
    #[command(after_help = "Examples:
  hourglass dkg sign --cluster cluster -i contract.pdf -o contract.sig
  hourglass dkg sign --cluster cluster -i contract.pdf -o contract.sig --pss
  hourglass dkg sign --cluster cluster --signers 1,4,5 -i contract.pdf -o contract.sig   (after dkg reshare)
  hourglass dkg sign --cluster cluster --signers 1,2,3,5 --adversary 3:wrong-partial -i contract.pdf -o c.sig
      (party 3 lies: its partial is named and left out, and the three others sign)
  openssl dgst -sha256 -verify cluster/public.pem -signature contract.sig contract.pdf
  (for --pss add: -sigopt rsa_padding_mode:pss -sigopt rsa_pss_saltlen:-1)
With n-of-n shares (from a generation) every party signs. With threshold shares (from dkg
reshare) any t + 1 sign: --signers names them (default: every share in the directory); fewer
than t + 1, a party named twice or one without a share is refused before anything runs. A
wrong partial signature is named (its proof of correctness fails) and left out while t + 1
valid ones remain, with a warning; otherwise the command fails naming it. The signature is
checked with the public key before it is written.")]
    Sign(SignArgs),
    /// One party's part of a joint signature (every signer runs this with the same file).
    #[command(after_help = "Examples:
  hourglass dkg party-sign --config party.toml --id 2 -i contract.pdf
  hourglass dkg party-sign --config party.toml --id 1 -i contract.pdf -o contract.sig --pss
  hourglass dkg party-sign --config party.toml --id 4 --signers 1,4,5 -i contract.pdf -o contract.sig
With a threshold share, every signer runs it with the same --signers list and connects to
those parties only.")]
    PartySign(PartySignArgs),
    /// Turn a cluster directory's n-of-n shares into t-of-k shares: afterwards any t + 1 sign.
    #[command(after_help = "Examples:
  hourglass dkg reshare --cluster cluster --threshold 2
  hourglass dkg sign --cluster cluster --signers 1,4,5 -i contract.pdf -o contract.sig
Runs every party's dkg party-reshare (a reshare needs every share of d). Nobody ever holds d:
each party deals its share of d by Shamir's scheme over the integers to the others, over the
cluster's TLS links. Each party-I.share.json is rewritten in place (atomically, mode 0600) as a
version 2 file of epoch 1, once every party has checked the new sharing; the public key does
not change. t is fixed here and checked at every use: 1 <= t and 2t + 1 <= parties. Any t
parties learn nothing of d (docs/FORMATS.md section 16.7).")]
    Reshare(ReshareArgs),
    /// One party's part of a reshare (every party runs this with the same threshold).
    #[command(after_help = "Examples:
  hourglass dkg party-reshare --config party.toml --id 2 --threshold 2
Rewrites this party's share file (default: party-I.share.json beside the configuration) in
place, atomically, mode 0600, once every party has checked the new sharing. A party asked for
another threshold than the others is refused, naming it: nobody changes t on another's word.")]
    PartyReshare(PartyReshareArgs),
    /// Refresh a cluster directory's threshold shares to a new epoch (same key, t and parties).
    #[command(after_help = "Examples:
  hourglass dkg refresh --cluster cluster
Runs every party's dkg party-refresh. Every share changes and the epoch goes up by one; the
key, t and the parties stay. Shares of different epochs never sign together (refused by
epoch; even relabelled, they make no signature), so a copy of an old share file is useless.
A party whose share is of another epoch is named (it missed a refresh).")]
    Refresh(RefreshArgs),
    /// One party's part of a refresh (every party runs this at the same time).
    #[command(after_help = "Examples:
  hourglass dkg party-refresh --config party.toml --id 2
Rewrites this party's share file in place, atomically, mode 0600, once every party has checked
the new epoch's sharing.")]
    PartyRefresh(PartyRefreshArgs),
}

/// Generation settings shared by `init` and `local`.
#[derive(Args, Debug, Clone)]
struct GenerationArgs {
    /// Modulus size in bits.
    #[arg(long, default_value_t = 2048)]
    bits: u32,
    /// Candidate pairs per round trip.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Largest sieving prime (default: the largest that fits, as measured best).
    #[arg(long)]
    sieve_bound: Option<u32>,
    /// Biprimality test repetitions.
    #[arg(long, default_value_t = 64)]
    rounds: u32,
    /// Fewest parties to continue with after failures (never fewer than 2t + 1).
    #[arg(long, default_value_t = 3)]
    min_parties: usize,
    /// Colluding parties tolerated, t (default floor((k-1)/2)); fixed for the cluster and never
    /// lowered: a generation that would continue with fewer than 2t + 1 parties stops.
    #[arg(long, value_name = "T")]
    threshold: Option<usize>,
    /// Seconds to wait for a party before declaring it failed.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
}

impl GenerationArgs {
    fn settings(&self) -> Result<Settings, CliError> {
        if !(self.timeout > 0.0 && self.timeout < 86_400.0) {
            return Err(Usage::range("--timeout", "be between 0 and 86400 seconds").into());
        }
        let settings = Settings {
            bits: self.bits,
            batch: self.batch,
            sieve_bound: self.sieve_bound,
            biprimality_rounds: self.rounds,
            min_parties: self.min_parties,
            threshold: self.threshold,
            timeout_ms: (self.timeout * 1000.0) as u64,
        };
        settings.validate()?;
        Ok(settings)
    }
}

#[derive(Args, Debug)]
struct InitArgs {
    /// Number of parties.
    #[arg(long)]
    parties: usize,
    #[command(flatten)]
    generation: GenerationArgs,
    /// Output directory (must not exist or be empty).
    #[arg(short, long)]
    out: PathBuf,
    /// First loopback port (default: a free range).
    #[arg(long)]
    base_port: Option<u16>,
    /// Cluster name (mixed into the session identifier).
    #[arg(long, default_value = "test-cluster")]
    name: String,
}

/// Simulated network conditions.
#[derive(Args, Debug, Clone, Default)]
struct NetSimArgs {
    /// Add this round-trip time to every link (milliseconds), to simulate a wide-area network.
    #[arg(long, default_value_t = 0.0)]
    rtt_ms: f64,
    /// Add up to this much random one-way delay (milliseconds).
    #[arg(long, default_value_t = 0.0)]
    jitter_ms: f64,
    /// Fraction of frames delayed by a retransmission timeout (0 to 1).
    #[arg(long, default_value_t = 0.0)]
    loss: f64,
}

impl NetSimArgs {
    fn sim(&self) -> Result<NetSim, CliError> {
        if !(0.0..=60_000.0).contains(&self.rtt_ms) || !(0.0..=60_000.0).contains(&self.jitter_ms) {
            return Err(Usage::range("--rtt-ms and --jitter-ms", "be between 0 and 60000").into());
        }
        if !(0.0..=0.5).contains(&self.loss) {
            return Err(Usage::range("--loss", "be between 0 and 0.5").into());
        }
        Ok(NetSim {
            rtt: Duration::from_secs_f64(self.rtt_ms / 1000.0),
            jitter: Duration::from_secs_f64(self.jitter_ms / 1000.0),
            loss: self.loss,
        })
    }

    fn to_args(&self) -> Vec<String> {
        vec![
            "--rtt-ms".into(),
            self.rtt_ms.to_string(),
            "--jitter-ms".into(),
            self.jitter_ms.to_string(),
            "--loss".into(),
            self.loss.to_string(),
        ]
    }
}

#[derive(Args, Debug)]
struct PartyArgs {
    /// This party's cluster configuration.
    #[arg(long)]
    config: PathBuf,
    /// This party's id (must match the key in the configuration).
    #[arg(long)]
    id: PartyId,
    /// Directory for public.pem, transcript.json (signed by every member) and the share file
    /// (default: the configuration's directory).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Seconds to wait for all parties to connect (also the time each TLS handshake has).
    #[arg(long, default_value_t = 30.0)]
    connect_timeout: f64,
    #[command(flatten)]
    net: NetSimArgs,
    /// Print the report as JSON on standard output.
    #[arg(long)]
    json: bool,
    /// No progress on standard error.
    #[arg(short, long)]
    quiet: bool,
    /// TESTING ONLY: deviate from the protocol (what `dkg local --adversary` runs).
    #[arg(long, value_name = "BEHAVIOUR", hide = true)]
    deviate: Option<String>,
    #[command(flatten)]
    entropy: EntropyArgs,
}

#[derive(Args, Debug)]
struct LocalArgs {
    /// Number of parties.
    #[arg(long, default_value_t = 3)]
    parties: usize,
    #[command(flatten)]
    generation: GenerationArgs,
    /// Cluster directory to create (configs, keys, certs, shares, public.pem, transcript.json).
    #[arg(short, long)]
    out: PathBuf,
    /// Seconds each party waits for the others to connect (its `dkg party --connect-timeout`;
    /// raise it for large clusters on a loaded machine).
    #[arg(long, default_value_t = 30.0)]
    connect_timeout: f64,
    #[command(flatten)]
    net: NetSimArgs,
    /// Kill this party's process during the generation (failure-tolerance demonstration).
    #[arg(long)]
    kill: Option<PartyId>,
    /// When to kill it, in milliseconds after start.
    #[arg(long, default_value_t = 1000)]
    kill_after_ms: u64,
    /// Run party ID deviating from the protocol, for tests and demonstrations (repeatable):
    /// false-abort (accuses every other party), garbage (malformed frames), silent (stops
    /// answering mid-run), wrong-share (a wrong share of d in the final test), wrong-signature
    /// (a damaged signature of the transcript), wrong-partial (a wrong partial power of the
    /// final test message: as wrong-share here; in dkg sign with threshold shares, the liar is
    /// named and left out). The others finish without it, or stop (naming it
    /// where they can tell); they never remove an honest party and never produce a wrong key.
    #[arg(long, value_name = "ID:BEHAVIOUR")]
    adversary: Vec<String>,
    #[command(flatten)]
    report: ReportArgs,
    /// INSECURE: derive each party's randomness from this text and its id (reproducible tests
    /// only; anyone who knows the text knows the factors).
    #[arg(long, value_name = "TEXT")]
    seed: Option<String>,
}

#[derive(Args, Debug)]
struct SignArgs {
    /// Cluster directory (party-I.toml and party-I.share.json files).
    #[arg(long)]
    cluster: PathBuf,
    /// The parties that sign, with threshold shares (at least t + 1; default: every share in
    /// the directory).
    #[arg(long, value_delimiter = ',', value_name = "ID,ID,...")]
    signers: Option<Vec<PartyId>>,
    /// Run signer ID deviating from the protocol, for tests and demonstrations:
    /// wrong-partial (a wrong partial signature: named and left out while t + 1 valid ones
    /// remain), or any behaviour of dkg local --adversary.
    #[arg(long, value_name = "ID:BEHAVIOUR")]
    adversary: Option<String>,
    /// File to sign.
    #[arg(short, long)]
    input: PathBuf,
    /// Signature output.
    #[arg(short, long)]
    out: PathBuf,
    #[command(flatten)]
    scheme: SchemeArgs,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Args, Debug, Clone)]
struct SchemeArgs {
    /// RSASSA-PSS instead of PKCS#1 v1.5 (salt as long as the hash).
    #[arg(long)]
    pss: bool,
    /// Hash: sha256, sha384 or sha512.
    #[arg(long, default_value = "sha256")]
    hash: String,
}

impl SchemeArgs {
    fn parse(&self) -> Result<(Scheme, HashAlg), CliError> {
        let hash = match self.hash.as_str() {
            "sha256" => HashAlg::Sha256,
            "sha384" => HashAlg::Sha384,
            "sha512" => HashAlg::Sha512,
            other => return Err(Usage::UnknownHash(other.to_string()).into()),
        };
        let scheme = if self.pss {
            Scheme::Pss
        } else {
            Scheme::Pkcs1v15
        };
        Ok((scheme, hash))
    }

    fn to_args(&self) -> Vec<String> {
        let mut v = vec!["--hash".into(), self.hash.clone()];
        if self.pss {
            v.push("--pss".into());
        }
        v
    }
}

#[derive(Args, Debug)]
struct PartySignArgs {
    /// This party's cluster configuration.
    #[arg(long)]
    config: PathBuf,
    /// This party's id.
    #[arg(long)]
    id: PartyId,
    /// This party's share (default: party-I.share.json beside the configuration).
    #[arg(long)]
    share: Option<PathBuf>,
    /// File to sign.
    #[arg(short, long)]
    input: PathBuf,
    /// Write the signature here (any party may; all compute the same signature).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// The parties that sign, with a threshold share (at least t + 1, this one among them;
    /// every signer gives the same list).
    #[arg(long, value_delimiter = ',', value_name = "ID,ID,...")]
    signers: Option<Vec<PartyId>>,
    #[command(flatten)]
    scheme: SchemeArgs,
    /// Seconds to wait for the other parties.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// Print what was done as JSON on standard output (the signers used and left out).
    #[arg(long)]
    json: bool,
    /// TESTING ONLY: deviate from the protocol (what `dkg sign --adversary` runs).
    #[arg(long, value_name = "BEHAVIOUR", hide = true)]
    deviate: Option<String>,
    #[command(flatten)]
    entropy: EntropyArgs,
}

#[derive(Args, Debug)]
struct ReshareArgs {
    /// Cluster directory (party-I.toml and party-I.share.json files: every party's).
    #[arg(long)]
    cluster: PathBuf,
    /// The threshold t: any t + 1 parties sign, any t learn nothing (1 <= t, 2t + 1 <= parties).
    #[arg(long, value_name = "T")]
    threshold: usize,
    /// Seconds each party waits for the others.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Args, Debug)]
struct RefreshArgs {
    /// Cluster directory (party-I.toml and party-I.share.json files: every party's).
    #[arg(long)]
    cluster: PathBuf,
    /// Seconds each party waits for the others.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    #[command(flatten)]
    report: ReportArgs,
}

/// What `party-reshare` and `party-refresh` share.
#[derive(Args, Debug)]
struct PartyResharingArgs {
    /// This party's cluster configuration.
    #[arg(long)]
    config: PathBuf,
    /// This party's id.
    #[arg(long)]
    id: PartyId,
    /// This party's share, rewritten in place (default: party-I.share.json beside the
    /// configuration).
    #[arg(long)]
    share: Option<PathBuf>,
    /// Seconds to wait for the other parties.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    /// Print what was done as JSON on standard output.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    entropy: EntropyArgs,
}

#[derive(Args, Debug)]
struct PartyReshareArgs {
    #[command(flatten)]
    party: PartyResharingArgs,
    /// The threshold t (every party gives the same).
    #[arg(long, value_name = "T")]
    threshold: usize,
}

#[derive(Args, Debug)]
struct PartyRefreshArgs {
    #[command(flatten)]
    party: PartyResharingArgs,
}

/// What `party-reshare`, `party-refresh` and `party-sign --json` print.
#[derive(Debug, Serialize, Deserialize)]
struct ThresholdReport {
    party: PartyId,
    threshold: usize,
    epoch: u32,
    #[serde(default)]
    used: Vec<PartyId>,
    #[serde(default)]
    excluded: Vec<PartyId>,
    seconds: f64,
}

/// What `dkg party --json` prints.
#[derive(Debug, Serialize, Deserialize)]
struct PartyReport {
    party: PartyId,
    members: Vec<PartyId>,
    bits: u32,
    n_sha256: String,
    candidates: u64,
    candidates_all_epochs: u64,
    expected_candidates: f64,
    biprimality_tests: u64,
    batches: u64,
    bytes_sent: u64,
    seconds: f64,
    /// This process's peak resident memory in bytes (absent where the system does not say).
    #[serde(default)]
    peak_rss_bytes: Option<u64>,
    sieve_bound: u32,
    removed: Vec<(PartyId, String)>,
    public_key: String,
    share: String,
}

fn share_path(dir: &Path, id: PartyId) -> PathBuf {
    dir.join(format!("party-{id}.share.json"))
}

fn config_dir(config: &ClusterConfig) -> PathBuf {
    config
        .path()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

fn seconds(value: f64, flag: &'static str) -> Result<Duration, CliError> {
    if !(value > 0.0 && value < 86_400.0) {
        return Err(Usage::range(flag, "be between 0 and 86400 seconds").into());
    }
    Ok(Duration::from_secs_f64(value))
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(data))
}

/// This process's peak resident memory so far, in bytes: `getrusage(RUSAGE_SELF)`'s
/// `ru_maxrss` (KiB on Linux and the BSDs, bytes on macOS); `None` where it is not available.
fn peak_rss_bytes() -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: an all-zero `rusage` is a valid value (integers and timevals), and
        // getrusage writes one `rusage` through the pointer, which points to this local.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; RUSAGE_SELF is a valid `who`.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
            return None;
        }
        let max = u64::try_from(usage.ru_maxrss).ok()?;
        let unit = if cfg!(target_os = "macos") { 1 } else { 1024 };
        Some(max.saturating_mul(unit))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Open files a coordinator of `parties` party processes (`dkg local`, `dkg sign`) needs: the
/// standard output and error pipes of every party, kept until it ends, and the margin of any
/// process (the cluster's files while they are written, the pipe of a process being started).
fn coordinator_open_files(parties: usize) -> u64 {
    2 * parties as u64 + PROCESS_OPEN_FILES
}

/// The median and the largest of some per-party figures (the lower median for an even count,
/// so that it is one party's figure).
#[derive(Debug, Clone, Copy, Serialize)]
struct Spread {
    median: u64,
    max: u64,
}

impl Spread {
    fn of(values: impl IntoIterator<Item = u64>) -> Option<Spread> {
        let mut v: Vec<u64> = values.into_iter().collect();
        v.sort_unstable();
        Some(Spread {
            median: *v.get((v.len().checked_sub(1)?) / 2)?,
            max: *v.last()?,
        })
    }
}

/// Runs `hourglass dkg ...`.
pub fn run(args: DkgArgs) -> Result<(), CliError> {
    match args.command {
        DkgCommand::Init(a) => run_init(a),
        DkgCommand::Party(a) => run_party(a),
        DkgCommand::Local(a) => run_local(a),
        DkgCommand::Sign(a) => run_sign(a),
        DkgCommand::PartySign(a) => run_party_sign(a),
        DkgCommand::Reshare(a) => {
            run_resharing(&a.cluster, Some(a.threshold), a.timeout, &a.report)
        }
        DkgCommand::Refresh(a) => run_resharing(&a.cluster, None, a.timeout, &a.report),
        DkgCommand::PartyReshare(a) => run_party_resharing(a.party, Some(a.threshold)),
        DkgCommand::PartyRefresh(a) => run_party_resharing(a.party, None),
    }
}

fn run_init(args: InitArgs) -> Result<(), CliError> {
    let settings = args.generation.settings()?;
    if args.parties < 3 || args.parties > 256 {
        return Err(Usage::range("--parties", "be between 3 and 256").into());
    }
    let base = match args.base_port {
        Some(p) => p,
        None => free_loopback_base_port(args.parties).map_err(CliError::from)?,
    };
    let dir = DirOutput::create(&args.out)?;
    let staged = init_cluster(dir.path(), args.parties, &settings, base, &args.name)
        .map_err(CliError::from)?;
    dir.commit()?;
    let configs = staged
        .iter()
        .map(|c| args.out.join(c.file_name().unwrap_or_default()));
    println!(
        "wrote a {}-party cluster in {} (ports {}-{}):",
        args.parties,
        args.out.display(),
        base,
        u32::from(base) + args.parties as u32 - 1
    );
    for (i, c) in configs.enumerate() {
        println!(
            "  hourglass dkg party --config {} --id {}",
            c.display(),
            i + 1
        );
    }
    Ok(())
}

fn run_party(args: PartyArgs) -> Result<(), CliError> {
    let config = ClusterConfig::load(&args.config).map_err(CliError::from)?;
    let out_dir = args.out.clone().unwrap_or_else(|| config_dir(&config));
    if !out_dir.is_dir() {
        return Err(CliError::output(out_dir, OutputProblem::NoDirectory));
    }
    // Before the generation: a share already there is never overwritten (unless --force).
    check_output(&share_path(&out_dir, args.id))?;
    let bounds =
        FrameBounds::generation(&config.generation, config.ids().len()).map_err(CliError::from)?;
    let options = TlsOptions {
        connect_timeout: seconds(args.connect_timeout, "--connect-timeout")?,
        sim: args.net.sim()?,
        bounds,
    };
    let mut entropy = args.entropy.source()?;
    let quiet = args.quiet;
    let me = args.id;
    if !quiet {
        eprintln!(
            "party {me}: connecting to {} parties of cluster {:?}",
            config.parties.len() - 1,
            config.name
        );
    }
    let deviation = args
        .deviate
        .as_deref()
        .map(|d| {
            Deviation::from_name(d)
                .ok_or_else(|| CliError::from(Usage::value("--deviate", d, "no such behaviour")))
        })
        .transpose()?;
    let signer = config.transcript_signer().map_err(CliError::from)?;
    let tls = TlsTransport::connect(&config, me, &options).map_err(CliError::from)?;
    let missing = tls.missing();
    if !missing.is_empty() && !quiet {
        eprintln!("party {me}: parties {missing:?} did not connect; continuing without them");
    }
    let mut transport: Box<dyn Transport> = match deviation {
        Some(d) => Box::new(Deviant::new(tls, d)),
        None => Box::new(tls),
    };
    let mut last = Instant::now();
    let mut progress = |p: &Progress| {
        if quiet {
            return;
        }
        match p {
            Progress::Started {
                epoch,
                members,
                sieve_bound,
                expected,
            } => eprintln!(
                "party {me}: generation {epoch} with parties {members:?}, sieving to {sieve_bound}, ~{expected:.0} candidate pairs expected"
            ),
            Progress::Batch { candidates, tests } => {
                if last.elapsed() >= Duration::from_secs(2) {
                    last = Instant::now();
                    eprintln!("party {me}: {candidates} candidate pairs, {tests} biprimality tests");
                }
            }
            Progress::Restart { removed } => {
                for (party, reason) in removed {
                    eprintln!("party {me}: party {party} failed ({reason})");
                }
                eprintln!("party {me}: restarting without them");
            }
        }
    };
    let SignedGeneration {
        generated,
        transcript,
    } = generate_signed(
        &mut *transport,
        &config.ids(),
        &config.generation,
        &config.name,
        &signer,
        entropy.as_mut(),
        &mut progress,
    )
    .map_err(CliError::from)?;
    drop(transport);
    let share = &generated.share;
    let public_pem = encode_public_key(&share.public, KeyFormat::Pem)?;
    let public_path = out_dir.join("public.pem");
    let share_file = share_path(&out_dir, me);
    write_output(&share_file, share.to_json().as_bytes(), Sensitivity::Secret)?;
    // Every party of a local cluster writes the same public files into one directory.
    write_shared_output(&public_path, &public_pem)?;
    // The public record anyone can check the modulus against (e.g. for a public puzzle set),
    // with every member's signature (each checked above); the same bytes at every member.
    write_shared_output(
        &out_dir.join("transcript.json"),
        transcript.to_json().as_bytes(),
    )?;
    let report: &Report = &generated.report;
    let summary = PartyReport {
        party: me,
        members: share.members.clone(),
        bits: share.public.bits(),
        n_sha256: sha256_hex(&share.public.n().to_digits::<u8>(rug::integer::Order::Msf)),
        candidates: report.candidates,
        candidates_all_epochs: report.candidates_all_epochs,
        expected_candidates: report.expected_candidates,
        biprimality_tests: report.biprimality_tests,
        batches: report.batches,
        bytes_sent: report.bytes_sent,
        seconds: report.elapsed.as_secs_f64(),
        peak_rss_bytes: peak_rss_bytes(),
        sieve_bound: report.sieve_bound,
        removed: report
            .removed
            .iter()
            .map(|(party, why)| (*party, why.to_string()))
            .collect(),
        public_key: public_path.display().to_string(),
        share: share_file.display().to_string(),
    };
    if args.json {
        print_json(&summary)?;
    } else {
        println!(
            "party {me}: {}-bit modulus with parties {:?} in {:.1} s ({} candidate pairs in {} batches, {} biprimality tests, {:.1} MB sent, peak memory {})",
            summary.bits,
            summary.members,
            summary.seconds,
            summary.candidates,
            summary.batches,
            summary.biprimality_tests,
            summary.bytes_sent as f64 / 1e6,
            summary
                .peak_rss_bytes
                .map_or("unknown".to_string(), |b| format!("{:.1} MB", b as f64 / 1e6))
        );
        println!("  public key: {}", summary.public_key);
        println!(
            "  share:      {} (mode 0600; keep it secret)",
            summary.share
        );
    }
    Ok(())
}

fn spawn_self(args: &[String]) -> Result<Child, CliError> {
    let exe = std::env::current_exe().map_err(|source| LocalRun::Start {
        action: "find the hourglass executable",
        source,
    })?;
    Process::new(exe)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| {
            LocalRun::Start {
                action: "start a party process",
                source,
            }
            .into()
        })
}

/// The party processes of a local run, killed if the coordinator stops early.
struct Parties(Vec<(PartyId, Option<Child>)>);

impl Parties {
    /// Waits for every process; the standard output of each that succeeded (except
    /// `ignore`, a party killed on purpose), or an error with every failure's message.
    fn wait_all(
        &mut self,
        what: &'static str,
        ignore: &[PartyId],
    ) -> Result<Vec<(PartyId, Vec<u8>)>, CliError> {
        let mut outputs = Vec::new();
        let mut failures = Vec::new();
        for (id, child) in &mut self.0 {
            let Some(child) = child.take() else { continue };
            let output = child
                .wait_with_output()
                .map_err(|source| LocalRun::Wait { party: *id, source })?;
            if ignore.contains(id) {
                continue;
            }
            if output.status.success() {
                outputs.push((*id, output.stdout));
            } else {
                failures.push((
                    *id,
                    String::from_utf8_lossy(&output.stderr).trim().to_string(),
                ));
            }
        }
        if failures.is_empty() {
            Ok(outputs)
        } else {
            Err(LocalRun::Failed { what, failures }.into())
        }
    }
}

impl Drop for Parties {
    fn drop(&mut self) {
        for (_, child) in &mut self.0 {
            if let Some(c) = child {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

fn run_local(args: LocalArgs) -> Result<(), CliError> {
    let settings = args.generation.settings()?;
    if args.parties < 3 || args.parties > 256 {
        return Err(Usage::range("--parties", "be between 3 and 256").into());
    }
    if let Some(k) = args.kill {
        if k == 0 || k as usize > args.parties {
            return Err(Usage::value("--kill", k, "no such party").into());
        }
    }
    let mut adversaries = Vec::new();
    for spec in &args.adversary {
        let (id, how) = parse_adversary(spec)?;
        if id == 0 || id as usize > args.parties || adversaries.iter().any(|(a, _)| *a == id) {
            return Err(Usage::value(
                "--adversary",
                spec,
                format!("party {id} does not exist or is named twice"),
            )
            .into());
        }
        adversaries.push((id, how));
    }
    args.net.sim()?;
    seconds(args.connect_timeout, "--connect-timeout")?;
    // Children inherit the raised limit, which covers each party's own need too.
    ensure_open_files(coordinator_open_files(args.parties)).map_err(hourglass_dkg::Error::from)?;
    let base = free_loopback_base_port(args.parties).map_err(CliError::from)?;
    let dir = DirOutput::create(&args.out)?;
    let configs =
        init_cluster(dir.path(), args.parties, &settings, base, "local").map_err(CliError::from)?;
    let start = Instant::now();
    let mut parties = Parties(Vec::new());
    for (i, config) in configs.iter().enumerate() {
        let id = i as PartyId + 1;
        let mut a = vec![
            "dkg".to_string(),
            "party".into(),
            "--config".into(),
            config.display().to_string(),
            "--id".into(),
            id.to_string(),
            "--json".into(),
            "--quiet".into(),
            "--connect-timeout".into(),
            args.connect_timeout.to_string(),
        ];
        a.extend(args.net.to_args());
        if let Some(seed) = &args.seed {
            a.push("--seed".into());
            a.push(format!("{seed}-{id}"));
        }
        if let Some((_, how)) = adversaries.iter().find(|(a, _)| *a == id) {
            a.push("--deviate".into());
            a.push(how.name().into());
        }
        parties.0.push((id, Some(spawn_self(&a)?)));
    }
    if let Some(victim) = args.kill {
        std::thread::sleep(Duration::from_millis(args.kill_after_ms));
        if let Some((_, Some(child))) = parties.0.iter_mut().find(|(id, _)| *id == victim) {
            let _ = child.kill();
            if !args.report.json && !args.report.quiet {
                eprintln!(
                    "killed party {victim} after {} ms",
                    start.elapsed().as_millis()
                );
            }
        }
    }
    let mut reports = Vec::new();
    let mut ignore: Vec<PartyId> = adversaries.iter().map(|(id, _)| *id).collect();
    ignore.extend(args.kill);
    for (id, stdout) in parties.wait_all("the generation", &ignore)? {
        let text = String::from_utf8_lossy(&stdout);
        let report: PartyReport = serde_json::from_str(text.trim())
            .map_err(|source| LocalRun::Report { party: id, source })?;
        reports.push(report);
    }
    let first = reports.first().ok_or(LocalRun::NoneFinished)?;
    if reports.iter().any(|r| r.n_sha256 != first.n_sha256) {
        return Err(LocalRun::Disagree.into());
    }
    let elapsed = start.elapsed().as_secs_f64();
    // Every party checked the others' signatures; check the published file once more, as a
    // verifier would, against the cluster's certificates.
    let transcript_path = dir.path().join("transcript.json");
    let text = std::fs::read_to_string(&transcript_path).map_err(LocalRun::Transcript)?;
    let committee = SignedTranscript::from_json(&text)
        .and_then(|t| t.verify(&read_certificates(&dir.path().join("certs"))?))
        .map_err(|e| CliError::from(e).with_path("transcript.json"))?;
    if committee.members != first.members {
        return Err(LocalRun::OtherMembers.into());
    }
    dir.commit()?;
    let public_key = args.out.join("public.pem").display().to_string();
    let max_bytes = reports.iter().map(|r| r.bytes_sent).max().unwrap_or(0);
    let bytes = Spread::of(reports.iter().map(|r| r.bytes_sent));
    let memory = Spread::of(reports.iter().filter_map(|r| r.peak_rss_bytes));
    let party_seconds = {
        let mut v: Vec<f64> = reports.iter().map(|r| r.seconds).collect();
        v.sort_by(f64::total_cmp);
        (v[(v.len() - 1) / 2], v[v.len() - 1])
    };
    if args.report.json {
        let per_party: Vec<_> = reports
            .iter()
            .map(|r| {
                serde_json::json!({"party": r.party, "seconds": r.seconds,
                    "bytes_sent": r.bytes_sent, "peak_rss_bytes": r.peak_rss_bytes})
            })
            .collect();
        let summary = serde_json::json!({
            "parties": args.parties,
            "members": first.members,
            "bits": first.bits,
            "seconds": elapsed,
            "candidates": first.candidates,
            "candidates_all_epochs": first.candidates_all_epochs,
            "expected_candidates": first.expected_candidates,
            "batches": first.batches,
            "biprimality_tests": first.biprimality_tests,
            "seconds_per_party": {"median": party_seconds.0, "max": party_seconds.1},
            "bytes_sent_per_party": bytes,
            "peak_rss_bytes_per_party": memory,
            "per_party": per_party,
            "max_bytes_sent_per_party": max_bytes,
            "removed": first.removed,
            "public_key": public_key,
            "transcript": args.out.join("transcript.json").display().to_string(),
            "transcript_fingerprint": hex::encode(committee.fingerprint),
            "threshold": committee.threshold,
        });
        println!("{summary}");
    } else if !args.report.quiet {
        println!(
            "{} parties generated a {}-bit key in {elapsed:.1} s",
            first.members.len(),
            first.bits
        );
        println!(
            "  candidate pairs: {} (expected ~{:.0}) in {} batches, biprimality tests: {}",
            first.candidates, first.expected_candidates, first.batches, first.biprimality_tests,
        );
        let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
        let spread = |s: Option<Spread>| {
            s.map_or("unknown".to_string(), |s| {
                format!("median {}, max {}", mb(s.median), mb(s.max))
            })
        };
        println!(
            "  per party ({} finished): time median {:.1} s, max {:.1} s; sent {}; peak memory {}",
            reports.len(),
            party_seconds.0,
            party_seconds.1,
            spread(bytes),
            spread(memory)
        );
        for (party, reason) in &first.removed {
            println!("  party {party} failed ({reason}) and was left out");
        }
        println!("  public key: {public_key}");
        println!(
            "  transcript: {}/transcript.json, signed by every member (fingerprint {}; publish it with public.pem and certs/: a public puzzle set names its fingerprint)",
            args.out.display(),
            &hex::encode(committee.fingerprint)[..16]
        );
        println!("  shares:     {}/party-I.share.json", args.out.display());
        println!(
            "next: hourglass dkg sign --cluster {} -i FILE -o FILE.sig",
            args.out.display()
        );
    }
    Ok(())
}

/// Prints `value` as one line of JSON on standard output.
fn print_json(value: &impl Serialize) -> Result<(), CliError> {
    println!("{}", serde_json::to_string(value).map_err(CliError::Json)?);
    Ok(())
}

/// Why `--signers` does not go with n-of-n shares.
const NOT_THRESHOLD_SHARES: &str = "--signers needs threshold shares: n-of-n shares (from a generation) sign with every member; reshare them first (dkg reshare --threshold T) to sign with any t + 1";

/// A `--deviate` behaviour by name.
fn deviation(name: Option<&str>) -> Result<Option<Deviation>, CliError> {
    name.map(|d| {
        Deviation::from_name(d)
            .ok_or_else(|| CliError::from(Usage::value("--deviate", d, "no such behaviour")))
    })
    .transpose()
}

/// `transport`, deviating as told.
fn deviating(transport: TlsTransport, how: Option<Deviation>) -> Box<dyn Transport> {
    match how {
        Some(d) => Box::new(Deviant::new(transport, d)),
        None => Box::new(transport),
    }
}

fn run_party_sign(args: PartySignArgs) -> Result<(), CliError> {
    let (scheme, hash) = args.scheme.parse()?;
    let how = deviation(args.deviate.as_deref())?;
    let config = ClusterConfig::load(&args.config).map_err(CliError::from)?;
    let share_file = args
        .share
        .clone()
        .unwrap_or_else(|| share_path(&config_dir(&config), args.id));
    let share = AnyShare::load(&share_file).map_err(CliError::from)?;
    let data = read_input(&args.input, "input")?;
    let digest = hash.digest(&data);
    let timeout = seconds(args.timeout, "--timeout")?;
    let mut entropy = args.entropy.source()?;
    let start = Instant::now();
    let (sig, report) = match &share {
        AnyShare::Additive(share) => {
            if args.signers.as_ref().is_some_and(|s| *s != share.members) {
                return Err(Usage::Conflict(NOT_THRESHOLD_SHARES).into());
            }
            let options = TlsOptions {
                connect_timeout: timeout,
                ..TlsOptions::new(FrameBounds::signing(
                    share.public.bits(),
                    share.members.len(),
                    hash,
                ))
            };
            let tls = TlsTransport::connect(&config, args.id, &options).map_err(CliError::from)?;
            let mut transport = deviating(tls, how);
            let sig = sign_jointly(
                &mut *transport,
                share,
                scheme,
                hash,
                &digest,
                timeout,
                entropy.as_mut(),
            )
            .map_err(CliError::from)?;
            let report = ThresholdReport {
                party: args.id,
                threshold: share.members.len() - 1,
                epoch: 0,
                used: share.members.clone(),
                excluded: Vec::new(),
                seconds: start.elapsed().as_secs_f64(),
            };
            (sig, report)
        }
        AnyShare::Threshold(share) => {
            let signers = args.signers.clone().ok_or(Usage::Conflict(
                "a threshold share signs with the parties named in --signers (the same list at every signer)",
            ))?;
            share
                .public
                .check_signers(&signers)
                .map_err(CliError::from)?;
            let sizes = share.public.sizes().map_err(CliError::from)?;
            let options = TlsOptions {
                connect_timeout: timeout,
                ..TlsOptions::new(FrameBounds::threshold_signing(&sizes, signers.len(), hash))
            };
            let among = config.among(&signers).map_err(CliError::from)?;
            let tls = TlsTransport::connect(&among, args.id, &options).map_err(CliError::from)?;
            let mut transport = deviating(tls, how);
            let signed = sign_threshold(
                &mut *transport,
                share,
                &signers,
                scheme,
                hash,
                &digest,
                timeout,
                entropy.as_mut(),
            )
            .map_err(CliError::from)?;
            for party in &signed.excluded {
                eprintln!(
                    "hourglass: warning: party {party}'s partial signature is wrong (its proof of correctness does not verify); it was left out and parties {:?} signed",
                    signed.used
                );
            }
            let report = ThresholdReport {
                party: args.id,
                threshold: share.public.threshold,
                epoch: share.public.epoch,
                used: signed.used.clone(),
                excluded: signed.excluded.clone(),
                seconds: start.elapsed().as_secs_f64(),
            };
            (signed.signature, report)
        }
    };
    if let Some(out) = &args.out {
        write_output(out, &sig, Sensitivity::Public)?;
    }
    if args.json {
        print_json(&report)?;
    }
    Ok(())
}

/// The ids of the share files (`party-I.share.json`) in a cluster directory, sorted.
fn held_shares(cluster: &Path) -> Result<Vec<PartyId>, CliError> {
    let mut ids: Vec<PartyId> = Vec::new();
    let entries =
        std::fs::read_dir(cluster).map_err(|e| CliError::io(IoOp::List("cluster"), cluster, e))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(id) = name
            .strip_prefix("party-")
            .and_then(|r| r.strip_suffix(".share.json"))
            .and_then(|r| r.parse::<PartyId>().ok())
        {
            ids.push(id);
        }
    }
    ids.sort_unstable();
    if ids.is_empty() {
        return Err(CliError::input(cluster, InputProblem::NoShares));
    }
    Ok(ids)
}

/// Loads the share files of `ids` in `cluster` and checks, before any process starts, that
/// they sign or reshare together: every one against the first (the library's rule), naming
/// the file that differs.
fn shares_together(cluster: &Path, ids: &[PartyId]) -> Result<Vec<AnyShare>, CliError> {
    let shares = ids
        .iter()
        .map(|&id| AnyShare::load(&share_path(cluster, id)).map_err(CliError::from))
        .collect::<Result<Vec<_>, _>>()?;
    let first = shares[0].claim();
    for share in &shares[1..] {
        first
            .check(share.party(), &share.claim())
            .map_err(|e| CliError::from(e).with_path(share_path(cluster, share.party())))?;
    }
    Ok(shares)
}

/// Runs `dkg party-ARGS` for each party of `ids` in the cluster directory and returns the
/// standard output of each (`ignore`: a deviating party, whose outcome does not count).
fn run_parties(
    cluster: &Path,
    ids: &[PartyId],
    what: &'static str,
    args_of: impl Fn(PartyId) -> Vec<String>,
    ignore: &[PartyId],
) -> Result<Vec<(PartyId, Vec<u8>)>, CliError> {
    ensure_open_files(coordinator_open_files(ids.len())).map_err(hourglass_dkg::Error::from)?;
    let mut parties = Parties(Vec::new());
    for &id in ids {
        let mut a = vec![
            "dkg".to_string(),
            String::new(),
            "--config".into(),
            cluster
                .join(format!("party-{id}.toml"))
                .display()
                .to_string(),
            "--id".into(),
            id.to_string(),
        ];
        let extra = args_of(id);
        a[1] = extra[0].clone();
        a.extend(extra.into_iter().skip(1));
        parties.0.push((id, Some(spawn_self(&a)?)));
    }
    parties.wait_all(what, ignore)
}

fn run_resharing(
    cluster: &Path,
    threshold: Option<usize>,
    timeout: f64,
    report: &ReportArgs,
) -> Result<(), CliError> {
    seconds(timeout, "--timeout")?;
    let ids = held_shares(cluster)?;
    let shares = shares_together(cluster, &ids)?;
    let members = shares[0].members().to_vec();
    if members != ids {
        return Err(CliError::input(
            cluster,
            InputProblem::OtherShares { members, held: ids },
        ));
    }
    // The library's rules, before any process starts: the kind of share, and the threshold.
    let me = ids[0];
    let t = match (&shares[0], threshold) {
        (AnyShare::Additive(s), Some(t)) => {
            Sizes::new(s.public.bits(), s.members.len(), t).map_err(CliError::from)?;
            t
        }
        (AnyShare::Threshold(s), None) => s.public.threshold,
        (share, _) => {
            return Err(CliError::from(hourglass_dkg::Error::from(
                hourglass_dkg::ThresholdError::OtherKind {
                    party: me,
                    threshold: matches!(share, AnyShare::Threshold(_)),
                },
            )))
        }
    };
    let (what, command) = match threshold {
        Some(_) => ("the reshare", "party-reshare"),
        None => ("the refresh", "party-refresh"),
    };
    let start = Instant::now();
    let outputs = run_parties(
        cluster,
        &ids,
        what,
        |_| {
            let mut a = vec![
                command.to_string(),
                "--json".into(),
                "--timeout".into(),
                timeout.to_string(),
            ];
            if let Some(t) = threshold {
                a.extend(["--threshold".into(), t.to_string()]);
            }
            a
        },
        &[],
    )?;
    let first: ThresholdReport = outputs
        .first()
        .map(|(id, out)| {
            serde_json::from_slice(out).map_err(|source| LocalRun::Report { party: *id, source })
        })
        .ok_or(LocalRun::NoneFinished)??;
    let elapsed = start.elapsed().as_secs_f64();
    report.result(serde_json::json!({
        "cluster": cluster, "parties": ids, "threshold": t, "epoch": first.epoch,
        "seconds": elapsed,
    }));
    report.info(format_args!(
        "{} parties {} the key to threshold t = {t} (epoch {}) in {elapsed:.1} s: any {} of them sign, any {t} learn nothing",
        ids.len(),
        if threshold.is_some() { "reshared" } else { "refreshed" },
        first.epoch,
        t + 1
    ));
    report.info(format_args!(
        "  shares: {}/party-I.share.json (version 2, rewritten in place, mode 0600)",
        cluster.display()
    ));
    Ok(())
}

fn run_party_resharing(args: PartyResharingArgs, threshold: Option<usize>) -> Result<(), CliError> {
    let config = ClusterConfig::load(&args.config).map_err(CliError::from)?;
    let share_file = args
        .share
        .clone()
        .unwrap_or_else(|| share_path(&config_dir(&config), args.id));
    let held = AnyShare::load(&share_file).map_err(CliError::from)?;
    let timeout = seconds(args.timeout, "--timeout")?;
    let mut entropy = args.entropy.source()?;
    let start = Instant::now();
    let connect = |sizes: &Sizes, refreshing: bool| {
        let options = TlsOptions {
            connect_timeout: timeout,
            ..TlsOptions::new(FrameBounds::resharing(sizes, refreshing))
        };
        let among = config.among(held.members())?;
        TlsTransport::connect(&among, args.id, &options)
    };
    let new: ThresholdShare = match (&held, threshold) {
        (AnyShare::Additive(share), Some(t)) => {
            let sizes =
                Sizes::new(share.public.bits(), share.members.len(), t).map_err(CliError::from)?;
            let mut tls = connect(&sizes, false).map_err(CliError::from)?;
            reshare(&mut tls, share, t, timeout, entropy.as_mut())
        }
        (AnyShare::Threshold(share), None) => {
            let sizes = share.public.sizes().map_err(CliError::from)?;
            let mut tls = connect(&sizes, true).map_err(CliError::from)?;
            refresh(&mut tls, share, timeout, entropy.as_mut())
        }
        (share, _) => Err(hourglass_dkg::ThresholdError::OtherKind {
            party: args.id,
            threshold: matches!(share, AnyShare::Threshold(_)),
        }
        .into()),
    }
    .map_err(CliError::from)?;
    // The same party's share moving to a new epoch: replaced in place, atomically.
    write_output_replacing(&share_file, new.to_json().as_bytes(), Sensitivity::Secret)?;
    let report = ThresholdReport {
        party: args.id,
        threshold: new.public.threshold,
        epoch: new.public.epoch,
        used: new.public.members.clone(),
        excluded: Vec::new(),
        seconds: start.elapsed().as_secs_f64(),
    };
    if args.json {
        print_json(&report)?;
    } else {
        eprintln!(
            "party {}: share of epoch {} (threshold t = {}) written to {} (mode 0600)",
            args.id,
            report.epoch,
            report.threshold,
            share_file.display()
        );
    }
    Ok(())
}

fn run_sign(args: SignArgs) -> Result<(), CliError> {
    args.scheme.parse()?;
    check_output(&args.out)?;
    let ids = held_shares(&args.cluster)?;
    let first = AnyShare::load(&share_path(&args.cluster, ids[0])).map_err(CliError::from)?;
    let (signers, threshold) = match &first {
        AnyShare::Additive(share) => {
            // Every party with a share in the directory signs.
            if share.members != ids {
                return Err(CliError::input(
                    &args.cluster,
                    InputProblem::OtherShares {
                        members: share.members.clone(),
                        held: ids,
                    },
                ));
            }
            if args.signers.as_ref().is_some_and(|s| *s != share.members) {
                return Err(Usage::Conflict(NOT_THRESHOLD_SHARES).into());
            }
            (ids.clone(), None)
        }
        AnyShare::Threshold(share) => {
            let signers = args.signers.clone().unwrap_or_else(|| ids.clone());
            share
                .public
                .check_signers(&signers)
                .map_err(CliError::from)?;
            if let Some(&party) = signers.iter().find(|s| !ids.contains(s)) {
                return Err(CliError::input(
                    &args.cluster,
                    InputProblem::NoShareOf { party },
                ));
            }
            (signers, Some(share.public.threshold))
        }
    };
    let mut sorted = signers.clone();
    sorted.sort_unstable();
    // Check the shares belong together before starting any process.
    shares_together(&args.cluster, &sorted)?;
    let adversary = args
        .adversary
        .as_deref()
        .map(|spec| -> Result<_, CliError> {
            let (id, how) = parse_adversary(spec)?;
            if !sorted.contains(&id) {
                return Err(Usage::value(
                    "--adversary",
                    spec,
                    format!("party {id} is not a signer"),
                )
                .into());
            }
            Ok((id, how))
        })
        .transpose()?;
    let ignore: Vec<PartyId> = adversary.iter().map(|(id, _)| *id).collect();
    let writer = *sorted
        .iter()
        .find(|id| !ignore.contains(id))
        .unwrap_or(&sorted[0]);
    let tmp = tempfile::Builder::new()
        .prefix(".dkg-sign.")
        .tempdir_in(
            args.out
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new(".")),
        )
        .map_err(|e| CliError::io(IoOp::WriteBeside, &args.out, e))?;
    let sig_tmp = tmp.path().join("sig");
    let list = sorted
        .iter()
        .map(PartyId::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let outputs = run_parties(
        &args.cluster,
        &sorted,
        "joint signing",
        |id| {
            let mut a = vec![
                "party-sign".to_string(),
                "-i".into(),
                args.input.display().to_string(),
                "--json".into(),
            ];
            a.extend(args.scheme.to_args());
            if threshold.is_some() {
                a.extend(["--signers".into(), list.clone()]);
            }
            if id == writer {
                a.extend(["-o".into(), sig_tmp.display().to_string()]);
            }
            if let Some((_, how)) = adversary.filter(|(a, _)| *a == id) {
                a.extend(["--deviate".into(), how.name().into()]);
            }
            a
        },
        &ignore,
    )?;
    let sig = read_input(&sig_tmp, "signature")?;
    let signed: ThresholdReport = outputs
        .iter()
        .find(|(id, _)| *id == writer)
        .map(|(id, out)| {
            serde_json::from_slice(out).map_err(|source| LocalRun::Report { party: *id, source })
        })
        .ok_or(LocalRun::NoneFinished)??;
    write_output(&args.out, &sig, Sensitivity::Public)?;
    for party in &signed.excluded {
        eprintln!(
            "hourglass: warning: party {party}'s partial signature was wrong (its proof of correctness does not verify): it was left out, and parties {:?} signed",
            signed.used
        );
    }
    args.report.result(serde_json::json!({
        "signature": args.out, "input": args.input, "parties": sorted, "bytes": sig.len(),
        "scheme": if args.scheme.pss { "pss" } else { "pkcs1v15" },
        "threshold": threshold, "used": signed.used, "excluded": signed.excluded,
    }));
    args.report.info(format_args!(
        "{} parties signed {} ({} bytes) -> {}",
        signed.used.len(),
        args.input.display(),
        sig.len(),
        args.out.display()
    ));
    Ok(())
}

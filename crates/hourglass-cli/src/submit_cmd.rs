//! `hourglass submit ...`: offline submission (paper section IV).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use clap::{Args, Subcommand};
use hourglass_dkg::transcript::{read_certificates, PublicTranscript};
use hourglass_receipt::{CheckedReceipt, ReceiptVerdict, MAX_RECEIPT_BYTES};
use hourglass_timelock::anyset::AnySet;
use hourglass_timelock::bundle::{Bundle, SealEnd, SealOptions, MAX_BUNDLE_BYTES};
use hourglass_timelock::dated::{DatedVerdict, Reception};
use hourglass_timelock::public::{
    CommitteePins, ModulusOrigin, OriginPins, ProofScheme, PublicSet,
};
use hourglass_timelock::submission::{generate_set, MAX_SET_BYTES};
use hourglass_timelock::verdict::{rfc3339, unix_secs, Verifier, VerifyOptions};
use hourglass_timelock::PuzzleKey;
use hourglass_timestamp::{granted_reply, Evidence};
use hourglass_vdf::group::RsaGroup;

use crate::cli_error::{CliError, InputProblem, IoOp, NegativeVerdict, Stopped, Usage};
use crate::files::{
    open_input, read_input, read_input_limited, with_ext, write_output, write_output_replacing,
    DirOutput, Sensitivity,
};
use crate::progress::ReportArgs;
use crate::progress::{format_rate, format_secs, stop_flag, ProgressDisplay, ProgressMode};
use crate::puzzle_cmd::HashArg;
use crate::puzzle_files::{digest_file, load_puzzle_key};

/// The largest committee transcript read.
const MAX_TRANSCRIPT_BYTES: u64 = 1 << 20;
use hourglass_arith::entropy::EntropyArgs;

/// Arguments of `hourglass submit`.
#[derive(Args, Debug)]
pub struct SubmitArgs {
    #[command(subcommand)]
    command: SubmitCommand,
}

#[derive(Subcommand, Debug)]
enum SubmitCommand {
    /// Institution: make a puzzle set (several keys of different durations) in a directory.
    #[command(after_help = "Examples:
  hourglass submit new-set --durations 12h,4h,1h,10min --name 'Conf 2027' -o keys/   (rate measured here)
  hourglass submit new-set --durations 12h,4h,1h,10min --rate 1500000 -o keys/
Publish keys/set.json; keep keys/*.key secret.
A public set (no key at all; anyone verifies bundles, nobody can forge them):
  hourglass submit new-set --public --modulus rsa-2048 --durations 4h,1h,10min --rate 1500000 -o pub/
  hourglass submit new-set --public --modulus committee/transcript.json --durations 4h,1h --rate 1500000 -o pub/")]
    NewSet(NewSetArgs),
    /// Author: seal a document offline by solving a chain of puzzles (or open-ended squaring).
    #[command(after_help = "Examples:
  hourglass submit seal --set set.json -i paper.pdf --expect 5h -o paper.bundle
  hourglass submit seal --set set.json -i paper.pdf -o paper.bundle              (Ctrl-C when online again)
  hourglass submit seal --set set.json -i paper.pdf --open-ended -o paper.bundle
Run the same command again to resume after a crash or Ctrl-C; finished links are kept.")]
    Seal(SealArgs),
    /// Verify a bundle, credit its time, and check it against the deadline: the institution with
    /// its keys (private sets), or anyone with the public set (--public).
    #[command(after_help = "Examples:
  hourglass submit verify --keys keys/ -i paper.pdf paper.bundle
  hourglass submit verify --keys keys/ -i paper.pdf paper.bundle --deadline 2027-03-01T23:59:59Z --json
  hourglass submit verify --public paper.bundle --document paper.pdf --set pub/set.json   (no secret needed)
  hourglass submit verify --public paper.bundle --document paper.pdf --set pub/set.json \
      --transcript committee/transcript.json --committee-cert committee/certs   (a committee's set)
A set on a committee's modulus verifies only against members you pin: the set's own word is
not proof. The verdict says whom it trusts (trust:, or \"trust\" and \"trustless\" in --json).")]
    Verify(VerifyArgs),
    /// Check a receipt from an institution's service (`hourglass serve`) offline: its RSA-PSS
    /// signature under the institution's key, its RFC 3161 timestamp token (version 2), its
    /// place in the service's transparency log (version 3: the inclusion proof, the log's
    /// checkpoint and its witnesses' cosignatures), and optionally that it is for your document.
    #[command(after_help = "Examples:
  hourglass submit check-receipt receipt.json --institution institution.pub --log-key log.pub
  hourglass submit check-receipt receipt.json --institution institution.pub --log-key log.pub \
      --witness-key w1.pub --witness-key w2.pub --witness-quorum 2 --document paper.pdf --json
  hourglass submit check-receipt receipt.json --institution institution.pub --extract-token -o paper.tsr
  openssl ts -verify -data paper.bundle -in paper.tsr -CAfile tsa-ca.pem -untrusted tsa.pem
The institution's key is at /institution.pub on its service, the log's at /log/key: get them once,
from a source you trust. A receipt that claims a log is refused without --log-key; with it, a
receipt that is in no log is refused (exit 1): nobody else has seen it.
The token's chain is pinned by that key (the service's TSA CA is made with it), or, when given,
by --tsa-ca alone.")]
    CheckReceipt(CheckReceiptArgs),
    /// Timestamp a bundle at any RFC 3161 timestamp authority (TSA): the reply is checked
    /// (status, nonce, imprint, and the signature with --tsa-ca) before it is written
    /// (`hourglass timestamp stamp` does the same for any file).
    #[command(after_help = "Examples:
  hourglass submit stamp paper.bundle --tsa https://tsa.example/tsr -o paper.tsr --tsa-ca tsa-root.pem
  hourglass submit stamp paper.bundle --tsa http://localhost:8080/tsa -o paper.tsr
  hourglass submit stamp paper.bundle --query -o paper.tsq     (send it another way)
  hourglass submit verify --public paper.bundle --document paper.pdf --set set.json \
      --timestamp paper.tsr --tsa-ca tsa-root.pem
With a public set and a TSA of your choice, nobody needs an hourglass institution: the TSA dates
the bundle, and the bundle's squarings date the document before that.")]
    Stamp(crate::timestamp_cmd::StampArgs),
}

#[derive(Args, Debug)]
struct CheckReceiptArgs {
    /// The receipt (JSON, from the service's submission page or API).
    #[arg(value_name = "RECEIPT")]
    receipt: PathBuf,
    /// The institution's public key (PEM; the service serves it at /institution.pub).
    #[arg(long, value_name = "FILE")]
    institution: PathBuf,
    /// Also check that the receipt is for this document (its SHA-256).
    #[arg(long, value_name = "FILE")]
    document: Option<PathBuf>,
    /// The CA the receipt's timestamp token must chain to (an institution's own TSA chain;
    /// PEM or DER, repeat for several). Given, it replaces the institution's key as the
    /// token's anchor.
    #[arg(long = "tsa-ca", value_name = "FILE")]
    tsa_ca: Vec<PathBuf>,
    /// Write the receipt's timestamp token, once checked, as an RFC 3161 reply (what
    /// `openssl ts -verify -in` reads) to --output.
    #[arg(long, requires = "output")]
    extract_token: bool,
    /// Where --extract-token writes the token (.tsr).
    #[arg(short, long, value_name = "FILE", requires = "extract_token")]
    output: Option<PathBuf>,
    /// The transparency log's verifier key (the service serves it at /log/key): the receipt's
    /// inclusion proof and the log's checkpoint are checked against it.
    #[arg(long, value_name = "FILE")]
    log_key: Option<PathBuf>,
    /// A witness whose cosignature on the receipt's checkpoint counts (its verifier key;
    /// repeat for several).
    #[arg(long = "witness-key", value_name = "FILE", requires = "log_key")]
    witness_key: Vec<PathBuf>,
    /// How many of the --witness-key witnesses must have cosigned (default: all of them).
    #[arg(long, value_name = "N", requires = "witness_key")]
    witness_quorum: Option<usize>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct NewSetArgs {
    /// Durations of the puzzles, comma-separated (e.g. 12h,4h,1h,10min).
    #[arg(long, value_delimiter = ',', value_parser = humantime::parse_duration, required = true)]
    durations: Vec<Duration>,
    /// Reference rate in squarings per second (default: measured on this machine).
    #[arg(long)]
    rate: Option<f64>,
    /// Modulus size.
    #[arg(long, default_value_t = 2048)]
    bits: u32,
    /// Name of the set (the deadline it serves); also the issuer of its keys.
    #[arg(long, default_value = "hourglass puzzle set")]
    name: String,
    /// Hash for documents.
    #[arg(long, value_enum, default_value = "sha256")]
    hash: HashArg,
    /// Output directory (created): set.json plus NAME-DURATION.key/.pub per puzzle (a public
    /// set: set.json only).
    #[arg(short, long, value_name = "DIR")]
    out: PathBuf,
    /// A public set: links on a modulus without trapdoor, each carrying a proof.
    #[arg(long, requires = "modulus")]
    public: bool,
    /// The public modulus: `rsa-2048` (the RSA challenge number), a committee's
    /// `transcript.json` (from `hourglass dkg`), or any RSA public key file of at least 2048 bits
    /// (then recorded as the institution's own: whoever knows its factors could forge).
    #[arg(long, value_name = "rsa-2048|FILE", requires = "public")]
    modulus: Option<String>,
    /// The proof every link of a public set carries.
    #[arg(long, value_enum, default_value = "wesolowski", requires = "public")]
    proof: ProofScheme,
    #[command(flatten)]
    entropy: EntropyArgs,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Args, Debug)]
struct SealArgs {
    /// The institution's puzzle set.
    #[arg(long, value_name = "FILE")]
    set: PathBuf,
    /// The finished document.
    #[arg(short, long, value_name = "FILE")]
    input: PathBuf,
    /// Expected offline time (chooses the puzzles: longest that fits, then shorter ones).
    #[arg(long, value_parser = humantime::parse_duration)]
    expect: Option<Duration>,
    /// Stop once this much time is credited (default: the --expect time, else run until
    /// Ctrl-C).
    #[arg(long, value_parser = humantime::parse_duration)]
    until: Option<Duration>,
    /// Open-ended mode: square with the shortest key's modulus until stopped (section IV-C).
    #[arg(long, conflicts_with = "expect")]
    open_ended: bool,
    /// The bundle to write (rewritten after every finished link).
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    /// Seconds between checkpoints of the link in progress.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    checkpoint_every: u64,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
    /// Progress as JSON lines on stderr, result as JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct VerifyArgs {
    /// Directory with the set's private keys (*.key): a private set's bundle.
    #[arg(
        long,
        value_name = "DIR",
        required_unless_present = "public",
        conflicts_with = "public"
    )]
    keys: Option<PathBuf>,
    /// The submitted document.
    #[arg(short = 'i', long, visible_alias = "input", value_name = "FILE")]
    document: PathBuf,
    /// The submitted bundle (or give it to --public).
    #[arg(value_name = "BUNDLE", required_unless_present = "public")]
    bundle: Option<PathBuf>,
    /// Verify a public set's bundle with public files only.
    #[arg(long, value_name = "BUNDLE", requires = "set")]
    public: Option<PathBuf>,
    /// The public set (its set.json, or the directory holding it).
    #[arg(long, value_name = "FILE|DIR")]
    set: Option<PathBuf>,
    /// With --public, for a set on a committee's modulus: the committee's signed
    /// transcript.json, as the committee published it.
    #[arg(
        long,
        value_name = "FILE",
        requires = "public",
        requires = "committee_cert"
    )]
    transcript: Option<PathBuf>,
    /// With --transcript: a certificate of a committee member you trust (PEM; repeat the flag,
    /// or give a directory of them). Every member must be pinned.
    #[arg(long, value_name = "FILE|DIR", requires = "transcript")]
    committee_cert: Vec<PathBuf>,
    /// The deadline (RFC 3339, e.g. 2027-03-01T23:59:59Z).
    #[arg(long, value_parser = humantime::parse_rfc3339_weak)]
    deadline: Option<SystemTime>,
    /// When the submission was received, by the institution's own clock (default: now).
    #[arg(long, value_parser = humantime::parse_rfc3339_weak, conflicts_with = "timestamp")]
    received: Option<SystemTime>,
    /// An RFC 3161 timestamp of the bundle file (a .tsr reply or a token; repeat for several
    /// TSAs): received becomes the earliest latest time they prove (genTime + accuracy).
    /// Needs --tsa-ca.
    #[arg(long, value_name = "FILE", requires = "tsa_ca")]
    timestamp: Vec<PathBuf>,
    /// A CA certificate the timestamps must chain to (PEM or DER; repeat for several).
    #[arg(long = "tsa-ca", value_name = "FILE", requires = "timestamp")]
    tsa_ca: Vec<PathBuf>,
    /// Certificates to build the timestamps' paths from, not trusted (the authority's own when
    /// a token does not carry it, and its intermediates; PEM or DER, repeat for several).
    #[arg(long, value_name = "FILE", requires = "timestamp")]
    untrusted: Vec<PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// Print only a negative verdict and errors (the exit status is the verdict: 0 valid, 1
    /// invalid, 2 error).
    #[arg(long, conflicts_with = "json")]
    quiet: bool,
    #[command(flatten)]
    entropy: EntropyArgs,
}

/// Runs `hourglass submit ...`.
pub fn run(args: SubmitArgs) -> Result<(), CliError> {
    match args.command {
        SubmitCommand::NewSet(a) => new_set(a),
        SubmitCommand::Seal(a) => seal_cmd(a),
        SubmitCommand::Verify(a) => verify(a),
        SubmitCommand::CheckReceipt(a) => check_receipt_cmd(a),
        SubmitCommand::Stamp(a) => {
            crate::timestamp_cmd::stamp(a, Some(hourglass_timelock::bundle::MAX_BUNDLE_BYTES))
        }
    }
}

/// A file-name-safe label for a duration (`12h`, `10min`).
fn duration_label(d: Duration) -> String {
    humantime::format_duration(d).to_string().replace(' ', "")
}

fn new_set(a: NewSetArgs) -> Result<(), CliError> {
    if a.public {
        return new_public_set(a);
    }
    if !(1024..=8192).contains(&a.bits) {
        return Err(Usage::range("--bits", "be within 1024..=8192").into());
    }
    let dir = DirOutput::create(&a.out)?;
    let (rate, measured) = crate::puzzle_cmd::reference_rate(
        a.bits,
        a.rate,
        &a.entropy,
        a.report.quiet || a.report.json,
    )?;
    let mut rng = a.entropy.source()?;
    let (set, keys) = generate_set(
        &a.name,
        &a.durations,
        a.bits,
        (rate, measured),
        a.hash.into(),
        &mut *rng,
    )?;
    for (d, key) in a.durations.iter().zip(&keys) {
        let base = dir.path().join(format!("puzzle-{}", duration_label(*d)));
        write_output(
            &base.with_extension("key"),
            key.to_json().as_bytes(),
            Sensitivity::Secret,
        )?;
        write_output(
            &base.with_extension("pub"),
            key.public().to_json().as_bytes(),
            Sensitivity::Public,
        )?;
    }
    write_output(
        &dir.path().join("set.json"),
        set.to_json().as_bytes(),
        Sensitivity::Public,
    )?;
    dir.commit()?;
    let set_path = a.out.join("set.json");
    a.report.result(serde_json::json!({
        "set": set_path, "kind": "private", "name": a.name, "rate": rate, "rate_measured": measured,
        "puzzles": set.puzzles.iter().map(|p| serde_json::json!({
            "t": p.t(), "credited_secs": p.credited_secs(), "fingerprint": p.fingerprint_hex(),
        })).collect::<Vec<_>>(),
    }));
    a.report.info(format_args!(
        "wrote {} with {} puzzle{} ({}) at {}sq/s ({}); keep the .key files secret",
        set_path.display(),
        set.puzzles.len(),
        if set.puzzles.len() == 1 { "" } else { "s" },
        set.puzzles
            .iter()
            .map(|p| format_secs(p.credited_secs()))
            .collect::<Vec<_>>()
            .join(", "),
        format_rate(rate),
        rate_origin(measured)
    ));
    Ok(())
}

fn rate_origin(measured: bool) -> &'static str {
    if measured {
        "measured on this machine"
    } else {
        "given"
    }
}

/// `t = round(duration * rate)`, at least one squaring.
fn squarings_for(d: Duration, rate: f64) -> Result<u64, CliError> {
    hourglass_timelock::submission::squarings_for(d, rate).ok_or_else(|| {
        hourglass_timelock::Error::InvalidParameters(
            hourglass_timelock::ParamError::DurationTooShort { duration: d },
        )
        .into()
    })
}

fn new_public_set(a: NewSetArgs) -> Result<(), CliError> {
    let dir = DirOutput::create(&a.out)?;
    let spec = a.modulus.as_deref().unwrap_or("rsa-2048");
    let (n, origin) = if spec == "rsa-2048" {
        (
            RsaGroup::rsa_2048().modulus().clone(),
            ModulusOrigin::Rsa2048,
        )
    } else {
        let path = Path::new(spec);
        let bytes = read_input(path, "modulus")?;
        let text = String::from_utf8_lossy(&bytes);
        // A JSON file with a "format" is a committee's transcript; anything else a key file.
        let is_transcript = serde_json::from_str::<serde_json::Value>(&text)
            .is_ok_and(|v| v.get("format").is_some());
        if is_transcript {
            let t = PublicTranscript::from_json(&text).map_err(|e| {
                CliError::from(e)
                    .with_path(path)
                    .with_hint("a committee's transcript.json is written by `hourglass dkg party` or `dkg local`")
            })?;
            let origin = ModulusOrigin::Dkg {
                committee: format!("cluster '{}', members {:?}", t.cluster, t.members),
                transcript: t.fingerprint_hex(),
            };
            (t.n, origin)
        } else {
            eprintln!("hourglass: warning: {spec} is recorded as the institution's own modulus: whoever knows its factors can forge bundles (use a committee's transcript.json from `hourglass dkg`, or rsa-2048)");
            (
                crate::files::modulus_from_key_file(path)?,
                ModulusOrigin::Institution,
            )
        }
    };
    let (rate, measured) = crate::puzzle_cmd::reference_rate(
        n.significant_bits(),
        a.rate,
        &a.entropy,
        a.report.quiet || a.report.json,
    )?;
    let squarings = a
        .durations
        .iter()
        .map(|d| squarings_for(*d, rate))
        .collect::<Result<Vec<_>, _>>()?;
    let created = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
    let set = PublicSet::new(
        &a.name,
        n,
        origin,
        squarings,
        rate,
        measured,
        a.hash.into(),
        a.proof,
        &created,
    )?;
    write_output(
        &dir.path().join("set.json"),
        set.to_json().as_bytes(),
        Sensitivity::Public,
    )?;
    dir.commit()?;
    let set_path = a.out.join("set.json");
    a.report.result(serde_json::json!({
        "set": set_path, "kind": "public", "name": a.name, "rate": rate, "rate_measured": measured,
        "modulus_bits": set.n().significant_bits(), "origin": set.origin.describe(),
        "squarings": set.squarings,
    }));
    a.report.info(format_args!(
        "wrote {}: a public set of {} link lengths ({}) at {}sq/s ({}) on {}-bit {}; there is no key to keep",
        set_path.display(),
        set.squarings.len(),
        set.squarings
            .iter()
            .map(|&t| format_secs(set.credited_secs(t)))
            .collect::<Vec<_>>()
            .join(", "),
        format_rate(rate),
        rate_origin(measured),
        set.n().significant_bits(),
        set.origin.describe()
    ));
    Ok(())
}

/// Reads a set file of either kind (a directory means its set.json).
fn load_set(path: &Path) -> Result<AnySet, CliError> {
    let path = if path.is_dir() {
        path.join("set.json")
    } else {
        path.to_path_buf()
    };
    let text = String::from_utf8(read_input_limited(&path, "puzzle set", MAX_SET_BYTES)?)
        .map_err(|_| CliError::input(&path, InputProblem::NotText))?;
    AnySet::from_json(&text).map_err(|e| {
        CliError::from(e).with_path(&path).with_hint(
            "the set is the set.json an institution publishes (hourglass submit new-set)",
        )
    })
}

fn seal_cmd(a: SealArgs) -> Result<(), CliError> {
    let set = load_set(&a.set)?;
    let hash = set.hash();
    let digest = digest_file(&a.input, hash)?;
    let public = set.is_public();
    let mut bundle = match std::fs::read_to_string(&a.out) {
        Ok(text) => {
            let b = Bundle::from_json(&text).map_err(|e| CliError::from(e).with_path(&a.out))?;
            set.check_resume(&b, &digest).map_err(|e| {
                CliError::from(e)
                    .with_path(&a.out)
                    .with_hint("choose another -o, or delete the old bundle")
            })?;
            if !a.quiet {
                eprintln!(
                    "hourglass: resuming {} ({} finished links)",
                    a.out.display(),
                    b.links.len()
                );
            }
            b
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => set.new_bundle(&digest),
        Err(e) => return Err(CliError::io(IoOp::Reading, &a.out, e)),
    };
    let options = SealOptions {
        expect_secs: a.expect.map(|d| d.as_secs_f64()),
        until_credited_secs: a.until.map(|d| d.as_secs_f64()),
        open_ended: a.open_ended,
        checkpoint: crate::progress::checkpoint_file(with_ext(&a.out, ".ckpt"))?,
        checkpoint_every: Duration::from_secs(a.checkpoint_every.max(1)),
    };
    let mode = ProgressMode::from_flags(a.quiet, a.json);
    let mut display: Option<(usize, ProgressDisplay)> = None;
    let out = a.out.clone();
    let quiet = a.quiet || a.json;
    let mut show = |index: usize, secs: f64, p: hourglass_arith::squaring::Progress| {
        if display.as_ref().is_none_or(|(i, _)| *i != index) {
            if let Some((_, d)) = display.as_mut() {
                d.finish();
            }
            let label = if a.open_ended {
                "open-ended squaring".to_string()
            } else {
                format!("link {} ({})", index + 1, format_secs(secs))
            };
            display = Some((index, ProgressDisplay::new(mode, &label)));
        }
        if let Some((_, d)) = display.as_mut() {
            d.update(p);
        }
    };
    let mut saved = |b: &Bundle| -> hourglass_timelock::Result<()> {
        write_output_replacing(&out, b.to_json().as_bytes(), Sensitivity::Public)
            .map_err(|e| hourglass_timelock::Error::OnLink(e.to_string()))?;
        if !quiet {
            let newline = if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
                "\n"
            } else {
                ""
            };
            eprintln!(
                "{newline}hourglass: link {} done; credited so far {}",
                b.links.len(),
                format_secs(set.credited_secs(b))
            );
        }
        Ok(())
    };
    let end = set.seal(&mut bundle, &options, stop_flag(), &mut show, &mut saved);
    if let Some((_, d)) = display.as_mut() {
        d.finish();
    }
    let end = end?;
    let credited = set.credited_secs(&bundle);
    if a.json {
        println!(
            "{}",
            serde_json::json!({"bundle": a.out, "set": if public { "public" } else { "private" }, "links": bundle.links.len(), "credited_secs": credited, "stopped": end == SealEnd::Stopped})
        );
    } else if !a.quiet {
        eprintln!(
            "hourglass: {} {} with {} link(s), crediting {}{}",
            if end == SealEnd::Stopped {
                "stopped;"
            } else {
                "sealed:"
            },
            a.out.display(),
            bundle.links.len(),
            format_secs(credited),
            if end == SealEnd::Stopped {
                " (run the same command to continue)"
            } else {
                ""
            }
        );
    }
    if bundle.links.is_empty() {
        return Err(CliError::Stopped(Stopped::NoLink));
    }
    Ok(())
}

fn load_keys(dir: &Path) -> Result<Vec<PuzzleKey>, CliError> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| CliError::io(IoOp::List("key directory"), dir, e))?;
    let mut keys = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "key") {
            keys.push(load_puzzle_key(&path)?);
        }
    }
    if keys.is_empty() {
        return Err(CliError::input(dir, InputProblem::NoPuzzleKeys));
    }
    Ok(keys)
}

/// A bundle and the bytes of its file (what timestamps cover).
fn load_bundle_bytes(path: &Path) -> Result<(Bundle, Vec<u8>), CliError> {
    let bytes = read_input_limited(path, "bundle", MAX_BUNDLE_BYTES)?;
    let text =
        std::str::from_utf8(&bytes).map_err(|_| CliError::input(path, InputProblem::NotText))?;
    let bundle = Bundle::from_json(text).map_err(|e| CliError::from(e).with_path(path))?;
    Ok((bundle, bytes))
}

/// What the verifier pins of a public set's origin: the committee from --transcript and
/// --committee-cert.
fn origin_pins(a: &VerifyArgs) -> Result<OriginPins, CliError> {
    let Some(transcript) = &a.transcript else {
        return Ok(OriginPins::default());
    };
    let text = String::from_utf8(read_input_limited(
        transcript,
        "committee transcript",
        MAX_TRANSCRIPT_BYTES,
    )?)
    .map_err(|_| CliError::input(transcript, InputProblem::NotText))?;
    let mut certificates = Vec::new();
    for path in &a.committee_cert {
        certificates
            .extend(read_certificates(path).map_err(|e| CliError::from(e).with_path(path))?);
    }
    Ok(OriginPins {
        committee: Some(CommitteePins {
            transcript: text,
            certificates,
        }),
    })
}

/// The verifier the arguments pin: the key directory's keys, or the public set with its origin.
fn verifier(a: &VerifyArgs) -> Result<(Verifier, PathBuf), CliError> {
    match (&a.public, &a.keys, &a.bundle) {
        (Some(bundle), _, _) => {
            let set_path = a
                .set
                .as_deref()
                .ok_or(Usage::Conflict("--public needs --set"))?;
            let AnySet::Public(set) = load_set(set_path)? else {
                return Err(CliError::input(set_path, InputProblem::PrivateSet));
            };
            let verifier = Verifier::public(set, &origin_pins(a)?)?;
            Ok((verifier, bundle.clone()))
        }
        (None, Some(keys_dir), Some(bundle)) => {
            let verifier = Verifier::private(load_keys(keys_dir)?).map_err(|e| {
                CliError::from(e)
                    .with_path(keys_dir)
                    .with_hint("--keys is the directory of one puzzle set")
            })?;
            Ok((verifier, bundle.clone()))
        }
        _ => Err(Usage::Give("--keys DIR BUNDLE, or --public BUNDLE --set SET").into()),
    }
}

fn verify(a: VerifyArgs) -> Result<(), CliError> {
    let start = std::time::Instant::now();
    let (verifier, bundle_path) = verifier(&a)?;
    let (bundle, bundle_bytes) = load_bundle_bytes(&bundle_path)?;
    // Timestamps first: a token that cannot be read is named before any squaring.
    let reception = if a.timestamp.is_empty() {
        Reception::Stated {
            given: a.received,
            now: SystemTime::now(),
        }
    } else {
        let trust = crate::timestamp_cmd::TrustArgs {
            tsa_ca: a.tsa_ca.clone(),
            untrusted: a.untrusted.clone(),
        };
        let tokens = crate::timestamp_cmd::load_tokens(&a.timestamp)?;
        match Evidence::check(
            &bundle_bytes,
            &tokens,
            &trust.untrusted()?,
            &trust.anchors()?,
        ) {
            Err(refused) if !refused.is_verdict() => return Err(refused.into()),
            checked => Reception::Timestamps(checked),
        }
    };
    let document = open_input(&a.document, "document")?;
    let digest = verifier
        .digest(document)
        .map_err(|e| CliError::io(IoOp::Reading, &a.document, e))?;
    let mut rng = a.entropy.source()?;
    let verdict = verifier.verify(&bundle, &digest, &VerifyOptions::default(), &mut *rng)?;
    let elapsed = start.elapsed();
    let dated = DatedVerdict::new(verdict, reception, a.deadline.map(unix_secs));
    if a.json {
        let mut v = serde_json::to_value(&dated).unwrap_or_default();
        // How long this command took: a measurement, not part of the verdict.
        v["verify_ms"] = serde_json::json!(elapsed.as_secs_f64() * 1e3);
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else if !a.quiet {
        if let Some(e) = dated.evidence() {
            for t in e.tokens() {
                let v = t.token();
                println!(
                    "timestamp {}: genTime {}, proves no later than {}, by {} (chains to {})",
                    t.name(),
                    v.info().gen_time_rfc3339(),
                    rfc3339(v.info().latest()),
                    v.tsa(),
                    v.anchor()
                );
            }
        }
        match (dated.dating(), dated.received_from()) {
            (Some(dating), Some(from)) => {
                println!(
                    "received: {} ({})",
                    rfc3339(dating.received()),
                    from.as_str()
                );
            }
            _ => println!("received: unknown (no timestamp dates the bundle)"),
        }
        print_verdict(&dated, elapsed);
    }
    let verdict = dated.verdict();
    if !verdict.is_valid() {
        return Err(NegativeVerdict::Bundle {
            reason: verdict.reason().map(str::to_string),
        }
        .into());
    }
    if dated.before_deadline() == Some(false) {
        return Err(NegativeVerdict::AfterDeadline.into());
    }
    Ok(())
}

/// The verdict for people.
fn print_verdict(dated: &DatedVerdict, elapsed: Duration) {
    let verdict = dated.verdict();
    println!("bundle: {} set", verdict.set());
    println!(
        "trust: {}{}",
        verdict.trust().assumption(),
        if verdict.trust().trustless() {
            ""
        } else {
            " (not trustless)"
        }
    );
    if !verdict.document_matches() {
        println!("document: does NOT match the bundle's digest");
    }
    for l in verdict.links() {
        println!(
            "link {}: {} ({} squarings, {}){}",
            l.index() + 1,
            if l.is_valid() { "valid" } else { "INVALID" },
            l.t(),
            format_secs(l.credited_secs()),
            l.reason()
                .as_ref()
                .map(|r| format!(": {r}"))
                .unwrap_or_default()
        );
    }
    match (verdict.is_valid(), dated.dating()) {
        (true, Some(dating)) => println!(
            "credited: {} -> the document existed by {} (received {})",
            format_secs(verdict.credited_secs()),
            rfc3339(dating.predated_to()),
            rfc3339(dating.received())
        ),
        _ => {
            if let Some(reason) = &verdict.reason() {
                println!("reason: {reason}");
            }
        }
    }
    if let Some(ok) = dated.before_deadline() {
        println!(
            "before the deadline: {}",
            if ok { "yes, provably" } else { "NO" }
        );
    }
    println!(
        "summary: {} of {} links valid, {} credited, bundle {}{} (verified in {:.1} ms)",
        verdict.links().iter().filter(|l| l.is_valid()).count(),
        verdict.links().len(),
        format_secs(verdict.credited_secs()),
        if verdict.is_valid() {
            "valid"
        } else {
            "INVALID"
        },
        match dated.before_deadline() {
            Some(true) => ", before the deadline",
            Some(false) => ", NOT proven before the deadline",
            None => "",
        },
        elapsed.as_secs_f64() * 1e3
    );
}

fn check_receipt_cmd(a: CheckReceiptArgs) -> Result<(), CliError> {
    use hourglass_receipt::{check_receipt, ReceiptReport};
    let institution = crate::key_files::load_public(&a.institution)?;
    let tsa_anchors = crate::timestamp_cmd::TrustArgs {
        tsa_ca: a.tsa_ca.clone(),
        untrusted: Vec::new(),
    }
    .anchors()?;
    let pins = a
        .log_key
        .as_deref()
        .map(|k| crate::log_keys::load_pins(k, &a.witness_key, a.witness_quorum))
        .transpose()?;
    if let Some(out) = &a.output {
        crate::files::check_output(out)?;
    }
    let bytes = read_input_limited(&a.receipt, "receipt", MAX_RECEIPT_BYTES as u64)?;
    let checked = check_receipt(&bytes, &institution, &tsa_anchors, pins.as_ref());
    // The document is read only for an authentic receipt; reading it may fail.
    let mut document_matches = Ok(None);
    let report = ReceiptReport::judge(checked, |c| {
        document_matches = a
            .document
            .as_ref()
            .map(|path| {
                c.statement
                    .document_matches(open_input(path, "document")?)
                    .map_err(|e| CliError::io(IoOp::Reading, path, e))
            })
            .transpose();
        document_matches.as_ref().ok().copied().flatten()
    })
    .map_err(|e| CliError::from(e).with_path(&a.receipt))?;
    document_matches?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
    }
    let reason = report.reason().map(str::to_string);
    let document_matches = report.document_matches();
    let checked = report
        .into_checked()
        .map_err(|e| CliError::from(e).with_path(&a.receipt))?;
    if let (true, Some(out)) = (a.extract_token, &a.output) {
        let (token, _) = checked
            .timestamp
            .as_ref()
            .ok_or_else(|| crate::timestamp_cmd::no_token(&a.receipt))?;
        write_output(out, &granted_reply(token)?, Sensitivity::Public)?;
    }
    if !a.json {
        print_receipt(&checked, document_matches);
    }
    match reason {
        None => Ok(()),
        Some(reason) => Err(NegativeVerdict::Receipt { reason }.into()),
    }
}

/// `check-receipt`'s text: what an authentic receipt states and proves.
fn print_receipt(checked: &CheckedReceipt, document_matches: Option<bool>) {
    let statement = &checked.statement;
    let timestamp = checked.timestamp.as_ref().map(|(_, t)| t);
    let dating = checked.dating(None);
    let predated = rfc3339(dating.predated_to());
    let received = rfc3339(dating.received());
    println!(
        "receipt: authentic, signed by institution key {}",
        &statement.institution[..16]
    );
    match timestamp {
        Some(t) => println!(
            "timestamp: received no later than {} (genTime {}), by {} (chains to {})",
            rfc3339(t.info().latest()),
            t.info().gen_time_rfc3339(),
            t.tsa(),
            t.anchor()
        ),
        None => {
            println!("timestamp: none (a version 1 receipt: received is the institution's word)")
        }
    }
    match &checked.log {
        Some(l) => {
            println!(
                "log: entry {} of {}, in its checkpoint of size {}{}",
                l.index,
                l.checkpoint.origin,
                l.checkpoint.size,
                if l.checkpoint.cosignatures.is_empty() {
                    String::new()
                } else {
                    format!(
                        " cosigned by {}",
                        l.checkpoint
                            .cosignatures
                            .iter()
                            .map(|c| c.witness.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    )
                }
            );
            println!("log trust: {}", l.trust);
        }
        None => println!(
            "log: none (the receipt names no transparency log; pass --log-key to require one)"
        ),
    }
    println!(
        "submission {} to set '{}': {}",
        statement.submission,
        statement.set,
        statement.verdict.as_str()
    );
    if statement.verdict == ReceiptVerdict::Valid {
        println!(
            "credited: {} -> the document existed by {predated} (received {received})",
            format_secs(dating.credited_ms as f64 / 1000.0)
        );
    } else {
        println!("reason: {}", statement.reason);
    }
    match document_matches {
        Some(true) => println!("document: matches the receipt"),
        Some(false) => println!("document: does NOT match the receipt"),
        None => {}
    }
}

//! `hourglass log ...`: the transparency log of receipts: keys for witnesses, verifying a log
//! (and its consistency with the last run), searching it, and running a witness.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand, ValueEnum};
use hourglass_arith::entropy::EntropyArgs;
use hourglass_log::checkpoint::{hash_to_base64, LogPins, VerifiedCheckpoint};
use hourglass_log::http::HttpLog;
use hourglass_log::keys::{KeyRole, SigningKey, MAX_KEY_TEXT_BYTES};
use hourglass_log::witness::KnownCheckpoint;
use hourglass_receipt::{audit_log, search_log, EntryFilter, EntrySummary, ReceiptVerdict};

use crate::cli_error::{CliError, IoOp, Usage};
use crate::files::{
    check_output, open_input, read_input_limited, write_output, write_output_replacing, Sensitivity,
};

/// Arguments of `hourglass log`.
#[derive(Args, Debug)]
pub struct LogArgs {
    #[command(subcommand)]
    command: LogCommand,
}

#[derive(Subcommand, Debug)]
enum LogCommand {
    /// Make an Ed25519 key for a witness (or a log): the private key (mode 0600) and its C2SP
    /// verifier key (`name+hash+base64`), the form every --log-key, --witness and --witness-key
    /// takes.
    #[command(after_help = "Examples:
  hourglass log keygen --name witness.example.org/w1 -o witness.key      (writes witness.key and witness.pub)
  hourglass log witness --listen 0.0.0.0:7380 --key witness.key --log-key log.pub --state witness-state/
A log's own key is made by `hourglass serve` at first start (DIR/log.key, DIR/log.pub);
`--role log` makes one ahead of time (name it after the log's origin).")]
    Keygen(KeygenArgs),
    /// Verify a log: its checkpoint (signature and witnesses), every tile and entry it serves,
    /// and its consistency with the checkpoint saved by the last run; prints the size and the
    /// new entries, and saves the new checkpoint.
    #[command(after_help = "Examples:
  curl -sf -o log.pub http://127.0.0.1:8080/log/key     (once, from a source you trust)
  hourglass log verify --log http://127.0.0.1:8080/log --log-key log.pub --state log.state
  hourglass log verify --log http://127.0.0.1:8080/log --log-key log.pub --state log.state \\
      --witness-key w1.pub --witness-key w2.pub --witness-quorum 2 --json
The first run reads the whole log and saves its checkpoint in --state; every later run proves
that the log's new checkpoint extends the saved one (exit 1 on a fork or a rewritten history,
naming the sizes and roots; the state is then left as it was).")]
    Verify(VerifyArgs),
    /// Every receipt in a log for a document (or a set): what the institution told everyone,
    /// not only you. Exit 0 if any is found, 1 if none.
    #[command(after_help = "Examples:
  hourglass log search --log http://127.0.0.1:8080/log --log-key log.pub --document paper.pdf
  hourglass log search --log http://127.0.0.1:8080/log --log-key log.pub --set conf-2027 \\
      --institution institution.pub --json")]
    Search(SearchArgs),
    /// Run a witness (C2SP tlog-witness): POST /add-checkpoint cosigns a log's checkpoint only
    /// if it is consistent with the last one it cosigned for that log (409 or 422 otherwise).
    #[command(after_help = "Examples:
  hourglass log keygen --name witness.example.org/w1 -o witness.key
  hourglass log witness --listen 127.0.0.1:7380 --key witness.key --log-key log.pub --state w1-state/
Then give the log `--witness http://127.0.0.1:7380=witness.pub` (hourglass serve).")]
    Witness(WitnessArgs),
}

/// What a key signs.
#[derive(Debug, Clone, Copy, ValueEnum)]
enum RoleArg {
    /// A witness's cosigning key (C2SP tlog-cosignature/v1).
    Witness,
    /// A log's checkpoint-signing key.
    Log,
}

#[derive(Args, Debug)]
struct KeygenArgs {
    /// The key's name: a witness's (or a log's origin), e.g. witness.example.org/w1.
    #[arg(long)]
    name: String,
    /// The private key file; the verifier key goes beside it, with .pub for .key.
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    /// What the key signs.
    #[arg(long, value_enum, default_value = "witness")]
    role: RoleArg,
    #[command(flatten)]
    entropy: EntropyArgs,
}

/// The pinned keys of a log, as every checking command takes them.
#[derive(Args, Debug)]
struct PinArgs {
    /// The log's verifier key (the service serves it at /log/key): get it once, from a source
    /// you trust.
    #[arg(long, value_name = "FILE")]
    log_key: PathBuf,
    /// A witness whose cosignatures count (its verifier key; repeat for several).
    #[arg(long = "witness-key", value_name = "FILE")]
    witness_key: Vec<PathBuf>,
    /// How many of the --witness-key witnesses must have cosigned the checkpoint (default: all
    /// of them).
    #[arg(long, value_name = "N", requires = "witness_key")]
    witness_quorum: Option<usize>,
}

#[derive(Args, Debug)]
struct VerifyArgs {
    /// The log's URL prefix (e.g. http://host:8080/log).
    #[arg(long, value_name = "URL")]
    log: String,
    #[command(flatten)]
    pins: PinArgs,
    /// The checkpoint verified by the last run (read if it exists, written on success).
    #[arg(long, value_name = "FILE")]
    state: PathBuf,
    /// Also check that every new entry is a receipt signed by this institution key.
    #[arg(long, value_name = "FILE")]
    institution: Option<PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct SearchArgs {
    /// The log's URL prefix (e.g. http://host:8080/log).
    #[arg(long, value_name = "URL")]
    log: String,
    #[command(flatten)]
    pins: PinArgs,
    /// Receipts for this document (by its SHA-256).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "set",
        conflicts_with = "set"
    )]
    document: Option<PathBuf>,
    /// Receipts for submissions to this set.
    #[arg(long, value_name = "NAME")]
    set: Option<String>,
    /// Also check that each receipt found is signed by this institution key.
    #[arg(long, value_name = "FILE")]
    institution: Option<PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
struct WitnessArgs {
    /// Address to listen on (port 0: any free port, printed at start).
    #[arg(long, value_name = "ADDR:PORT")]
    listen: SocketAddr,
    /// The witness's private key (from `hourglass log keygen`).
    #[arg(long, value_name = "FILE")]
    key: PathBuf,
    /// The verifier key of a log this witness witnesses (repeat for several logs).
    #[arg(long = "log-key", value_name = "FILE", required = true)]
    log_key: Vec<PathBuf>,
    /// The directory where the witness remembers the last checkpoint it cosigned for each log
    /// (created; keep it: a witness that forgets can be shown a forked log).
    #[arg(long, value_name = "DIR")]
    state: PathBuf,
}

impl LogArgs {
    /// Whether the command is a server (`log witness`), which keeps SIGPIPE ignored.
    pub fn serves(&self) -> bool {
        matches!(self.command, LogCommand::Witness(_))
    }
}

/// Runs `hourglass log ...`.
pub fn run(args: LogArgs) -> Result<(), CliError> {
    match args.command {
        LogCommand::Keygen(a) => keygen(a),
        LogCommand::Verify(a) => verify(a),
        LogCommand::Search(a) => search(a),
        LogCommand::Witness(a) => witness(a),
    }
}

fn pins(a: &PinArgs) -> Result<LogPins, CliError> {
    crate::log_keys::load_pins(&a.log_key, &a.witness_key, a.witness_quorum)
}

fn keygen(a: KeygenArgs) -> Result<(), CliError> {
    let role = match a.role {
        RoleArg::Witness => KeyRole::Witness,
        RoleArg::Log => KeyRole::Log,
    };
    let public = public_path(&a.out);
    check_output(&a.out)?;
    check_output(&public)?;
    let key = SigningKey::generate(&a.name, role, &mut *a.entropy.source()?).map_err(|e| {
        CliError::from(Usage::Value {
            flag: "--name",
            value: a.name.clone(),
            problem: e.to_string().into(),
        })
    })?;
    let mut secret = key.encode();
    secret.push('\n');
    write_output(&a.out, secret.as_bytes(), Sensitivity::Secret)?;
    let verifier = key.verifier().encode();
    write_output(
        &public,
        format!("{verifier}\n").as_bytes(),
        Sensitivity::Public,
    )?;
    println!("{verifier}");
    eprintln!(
        "hourglass: wrote {} (private, 0600) and {} (its verifier key)",
        a.out.display(),
        public.display()
    );
    Ok(())
}

/// `witness.key` -> `witness.pub`; any other name gets `.pub` appended.
fn public_path(private: &Path) -> PathBuf {
    match private.extension() {
        Some(e) if e == "key" => private.with_extension("pub"),
        _ => crate::files::with_ext(private, ".pub"),
    }
}

/// What the output says of an entry (the library's summary, as JSON).
/// One line of `log verify` and `log search` for an entry.
fn entry_line(e: &EntrySummary) -> String {
    match e {
        EntrySummary::Unknown {
            index,
            problem,
            bytes,
        } => format!("  entry {index}: not an hourglass receipt ({bytes} bytes: {problem})"),
        EntrySummary::Receipt {
            index,
            submission,
            set,
            verdict,
            document_sha256,
            received,
            predated_to,
            signed_by_institution,
            ..
        } => {
            let signed = match signed_by_institution {
                Some(true) => ", signed by the institution",
                Some(false) => ", NOT signed by the institution key given",
                None => "",
            };
            let verdict = match verdict {
                ReceiptVerdict::Valid => format!("valid, existed by {predated_to}"),
                ReceiptVerdict::Invalid => "invalid".into(),
            };
            format!(
                "  entry {index}: submission {submission} to set '{set}': {verdict} (received {received}), document sha256 {document_sha256}{signed}"
            )
        }
    }
}

/// Whether the entries listed are said to be the institution's without its key.
fn unchecked_signatures(unchecked: bool, listed: usize) {
    if unchecked && listed > 0 {
        println!(
            "signatures: not checked (the entries are in the log; pass --institution KEY to check that the institution signed each)"
        );
    }
}

fn print_checkpoint(c: &VerifiedCheckpoint, pins: &LogPins) {
    println!(
        "log: {}, size {} (root {})",
        c.origin,
        c.size,
        hash_to_base64(&c.root)
    );
    if c.cosignatures.is_empty() {
        println!("cosigned by: no witness");
    } else {
        let by: Vec<String> = c
            .cosignatures
            .iter()
            .map(|w| format!("{} at {}", w.witness, w.rfc3339()))
            .collect();
        println!("cosigned by: {}", by.join(", "));
    }
    println!("trust: {}", pins.trust());
}

fn load_institution(path: Option<&Path>) -> Result<Option<hourglass_rsa::PublicKey>, CliError> {
    path.map(crate::key_files::load_public).transpose()
}

fn verify(a: VerifyArgs) -> Result<(), CliError> {
    let pins = pins(&a.pins)?;
    let institution = load_institution(a.institution.as_deref())?;
    let source = HttpLog::new(&a.log)?;
    let previous = KnownCheckpoint::load(&a.state, pins.log())
        .map_err(|e| CliError::from(e).with_path(&a.state))?;
    let audit = audit_log(&source, &pins, previous.as_ref(), institution.as_ref())?;
    // The state advances only when the audit passed, the whole log having verified.
    if let Some(state) = audit.state_to_save() {
        write_output_replacing(&a.state, state.to_json().as_bytes(), Sensitivity::Public)?;
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&audit).unwrap_or_default()
        );
    }
    let valid = audit.is_valid();
    let reason = audit.reason().map(str::to_string);
    let entries = audit.new_entries().to_vec();
    let checkpoint = audit.into_checkpoint()?;
    if !a.json {
        print_checkpoint(&checkpoint, &pins);
        match &previous {
            Some(p) => println!(
                "consistent with the checkpoint of size {} saved by the last run (root {})",
                p.size,
                hash_to_base64(&p.root)
            ),
            None => println!("first run: the whole log was read"),
        }
        println!("new entries: {}", entries.len());
        for e in &entries {
            println!("{}", entry_line(e));
        }
        unchecked_signatures(institution.is_none(), entries.len());
        if valid {
            println!("state: {} (size {})", a.state.display(), checkpoint.size);
        } else {
            println!("state: {} left as it was", a.state.display());
        }
    }
    match reason {
        None => Ok(()),
        Some(reason) => Err(crate::cli_error::NegativeVerdict::Log { reason }.into()),
    }
}

fn search(a: SearchArgs) -> Result<(), CliError> {
    let pins = pins(&a.pins)?;
    let institution = load_institution(a.institution.as_deref())?;
    let filter = match (&a.document, &a.set) {
        (Some(path), _) => EntryFilter::document(open_input(path, "document")?)
            .map_err(|e| CliError::io(IoOp::Reading, path, e))?,
        (None, Some(set)) => EntryFilter::Set(set.clone()),
        (None, None) => return Err(Usage::Give("--document or --set").into()),
    };
    let source = HttpLog::new(&a.log)?;
    let search = search_log(&source, &pins, &filter, institution.as_ref())?;
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&search).unwrap_or_default()
        );
    } else {
        print_checkpoint(search.checkpoint(), &pins);
        println!(
            "receipts found: {} of {} entries",
            search.found().len(),
            search.entries_read()
        );
        for e in search.found() {
            println!("{}", entry_line(e));
        }
        unchecked_signatures(institution.is_none(), search.found().len());
    }
    if search.found().is_empty() {
        return Err(crate::cli_error::NegativeVerdict::NoLogEntries.into());
    }
    Ok(())
}

fn witness(a: WitnessArgs) -> Result<(), CliError> {
    let text = read_input_limited(&a.key, "witness key", MAX_KEY_TEXT_BYTES as u64 + 2)?;
    let key = std::str::from_utf8(&text)
        .map_err(|_| hourglass_log::LogError::Malformed {
            what: "private key",
            why: "not text".into(),
        })
        .and_then(SigningKey::parse)
        .map_err(|e| CliError::from(e).with_path(&a.key))?;
    key.verifier()
        .expect_role(KeyRole::Witness)
        .map_err(|e| CliError::from(e).with_path(&a.key))?;
    let logs = a
        .log_key
        .iter()
        .map(|p| crate::log_keys::load_verifier_key(p, KeyRole::Log))
        .collect::<Result<Vec<_>, _>>()?;
    crate::serve_cmd::init_tracing();
    let name = key.verifier().encode();
    hourglass_serve::run_witness(
        hourglass_serve::WitnessConfig {
            listen: a.listen,
            key,
            logs,
            state: a.state,
        },
        |addr| eprintln!("hourglass log witness: listening on http://{addr} as {name}"),
    )?;
    Ok(())
}

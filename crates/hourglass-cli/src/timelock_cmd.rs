//! `hourglass timelock ...`: Rivest-Shamir-Wagner time-lock encryption of files, and solving
//! classic RSW puzzles (Rivest's LCS35 and CSAIL2019 format).

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use hourglass_arith::squaring::{measure_rate, Progress};
use hourglass_arith::Integer;
use hourglass_timelock::age::AgeRecipient;
use hourglass_timelock::rsw::{
    parse_integer, printable_text, solve_rsw, xor_message, RswPuzzle, MAX_SQUARINGS,
};
use hourglass_timelock::tlock::{
    check_body, decrypt_body, solve_key, KeyOutcome, SealingKey, TlockError, TlockHeader,
};
use hourglass_timelock::{SolveOptions, SolveOutcome};

use crate::cli_error::{is_foreign_checkpoint, CliError, InputProblem, IoOp, Stopped, Usage};
use crate::files::{check_output, open_input, with_ext, Sensitivity};
use crate::output_file::StagedOutput;
use crate::progress::ReportArgs;
use crate::progress::{
    format_rate, format_secs, stop_flag, LongRunArgs, ProgressDisplay, ProgressMode,
};
use hourglass_arith::entropy::EntropyArgs;

/// Arguments of `hourglass timelock`.
#[derive(Args, Debug)]
#[command(after_help = "Examples:
  hourglass timelock seal --duration 2h -i letter.txt -o letter.txt.tlock
  hourglass timelock open -i letter.txt.tlock -o letter.txt
  hourglass timelock open-rsw --n \"$N\" --base 2 --squarings 16000 --z \"$Z\"")]
pub struct TimelockArgs {
    #[command(subcommand)]
    command: TimelockCommand,
}

#[derive(Subcommand, Debug)]
enum TimelockCommand {
    /// Encrypt a file so that opening it takes t sequential squarings (about --duration).
    #[command(after_help = "Examples:
  hourglass timelock seal --duration 2h -i letter.txt -o letter.txt.tlock        (rate measured here)
  hourglass timelock seal --duration 30d --rate 1400000 -i bid.pdf -o bid.pdf.tlock
  hourglass timelock seal --squarings 100000000 --bits 3072 -i notes.md -o notes.md.tlock

The trapdoor (the factors of the modulus) is wiped as soon as the file is sealed: nobody, not
even the sender, can open it faster than by doing the squarings.")]
    Seal(SealArgs),
    /// Decrypt a .tlock file by doing its t sequential squarings (error-checked, resumable).
    #[command(after_help = "Examples:
  hourglass timelock open -i letter.txt.tlock -o letter.txt
  hourglass timelock open -i bid.pdf.tlock -o bid.pdf --checkpoint-every 30 --json
  (after a crash or Ctrl-C, run the same command again: it resumes from OUT.ckpt)

Nothing is written unless the whole content authenticates.")]
    Open(OpenArgs),
    /// Solve a classic RSW puzzle w = A^(2^T) mod N; with --z, show the message w XOR Z.
    #[command(
        name = "open-rsw",
        after_help = "Examples:
  hourglass timelock open-rsw --n 0xc3a5... --base 2 --squarings 16000 --z 8177...
  hourglass timelock open-rsw --n \"$N\" --base 2 --squarings 79685186856218 --z \"$Z\" \\
      --checkpoint lcs35.ckpt          (Rivest's LCS35; rerun the same command to resume)

  hourglass timelock open-rsw --modulus committee.pem --base 2 --squarings 1000000
N, A and Z are decimal, or hexadecimal with a 0x prefix. The message is shown as text when it is
printable, in hex otherwise (the bytes of w XOR Z, big-endian)."
    )]
    OpenRsw(OpenRswArgs),
    /// Print an age recipient (age1hourglass1...) that time-locks files for age users.
    #[command(after_help = "Examples:
  hourglass timelock recipient --duration 1h                     (rate measured here)
  hourglass timelock recipient --duration 30d --rate 1400000
  hourglass timelock recipient --squarings 2000000000 --bits 3072
  age -r \"$(hourglass timelock recipient --duration 1h)\" -o notes.age notes.md
  age -d -j hourglass notes.age > notes.md                       (does the squarings)

The recipient holds only the delay; each file gets a fresh modulus whose factors are forgotten
once its key is sealed (age-plugin-hourglass must be on PATH, beside hourglass).")]
    Recipient(RecipientArgs),
}

#[derive(Args, Debug)]
struct RecipientArgs {
    /// Intended opening time on the reference machine (e.g. 10min, 1h, 30d).
    #[arg(long, value_parser = humantime::parse_duration, required_unless_present = "squarings", conflicts_with = "squarings")]
    duration: Option<Duration>,
    /// Reference rate in squarings per second (default: measured on this machine, 2 s).
    #[arg(long, requires = "duration")]
    rate: Option<f64>,
    /// The number of squarings directly.
    #[arg(long)]
    squarings: Option<u64>,
    /// Bits of each file's modulus.
    #[arg(long, default_value_t = 2048)]
    bits: u32,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Args, Debug)]
struct SealArgs {
    /// How long opening should take on a machine like this one (e.g. 10min, 2h, 30d).
    #[arg(long, value_parser = humantime::parse_duration, conflicts_with = "squarings", required_unless_present = "squarings")]
    duration: Option<Duration>,
    /// The opener's squarings per second (default: measured on this machine for 2 s).
    #[arg(long, requires = "duration")]
    rate: Option<f64>,
    /// The number of squarings t directly.
    #[arg(long)]
    squarings: Option<u64>,
    /// The content to seal; `-` for stdin.
    #[arg(short, long, value_name = "FILE")]
    input: PathBuf,
    /// The time-lock file to write (FILE.tlock); `-` for stdout (held in memory until complete,
    /// at most 1 GiB).
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    /// Modulus size in bits.
    #[arg(long, default_value_t = 2048)]
    bits: u32,
    #[command(flatten)]
    report: ReportArgs,
    #[command(flatten)]
    entropy: EntropyArgs,
}

#[derive(Args, Debug)]
struct OpenArgs {
    /// The time-lock file; `-` for stdin.
    #[arg(short, long, value_name = "FILE")]
    input: PathBuf,
    /// Where to write the content; `-` for stdout (held in memory until it authenticates).
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    #[command(flatten)]
    run: LongRunArgs,
}

#[derive(Args, Debug)]
struct OpenRswArgs {
    /// The modulus N (decimal, or hex with 0x).
    #[arg(long = "n", value_name = "N", required_unless_present = "modulus")]
    n: Option<String>,
    /// Or the modulus of an RSA public key file (for example a committee's key from
    /// `hourglass dkg`, whose factors nobody knows).
    #[arg(long, value_name = "FILE", conflicts_with = "n")]
    modulus: Option<PathBuf>,
    /// The base A (Rivest's puzzles use 2).
    #[arg(long, value_name = "A")]
    base: String,
    /// The number of squarings T.
    #[arg(long, value_name = "T")]
    squarings: u64,
    /// The mask Z: show the message w XOR Z.
    #[arg(long = "z", value_name = "Z")]
    z: Option<String>,
    /// Checkpoint file: resumed from if it exists, kept after success (rerunning prints w at
    /// once). Without it, a stopped run starts over.
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// Seconds between checkpoints.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    checkpoint_every: u64,
    /// Print w in hexadecimal (0x...) instead of decimal.
    #[arg(long)]
    hex: bool,
    /// No progress output.
    #[arg(long)]
    quiet: bool,
    /// Progress as JSON lines on stderr, result as JSON on stdout.
    #[arg(long)]
    json: bool,
}

/// Runs `hourglass timelock ...`.
pub fn run(args: TimelockArgs) -> Result<(), CliError> {
    match args.command {
        TimelockCommand::Seal(a) => seal_cmd(a),
        TimelockCommand::Open(a) => open_cmd(a),
        TimelockCommand::OpenRsw(a) => open_rsw_cmd(a),
        TimelockCommand::Recipient(a) => recipient_cmd(a),
    }
}

fn recipient_cmd(a: RecipientArgs) -> Result<(), CliError> {
    let (t, rate) = match (a.squarings, a.duration) {
        (Some(t), _) => (t, None),
        (None, Some(d)) => {
            let quiet = a.report.quiet || a.report.json;
            let (rate, _) = crate::puzzle_cmd::reference_rate(
                a.bits,
                a.rate,
                &hourglass_arith::entropy::EntropyArgs::default(),
                quiet,
            )?;
            let t = (d.as_secs_f64() * rate).round();
            if !(1.0..=MAX_SQUARINGS as f64).contains(&t) {
                return Err(Usage::Conflict(
                    "the duration and rate give less than one or more than 2^60 squarings",
                )
                .into());
            }
            (t as u64, Some(rate))
        }
        (None, None) => return Err(Usage::Give("--duration or --squarings").into()),
    };
    let recipient = AgeRecipient {
        t,
        bits: a.bits,
        rate: rate.map(|r| r.round().clamp(1.0, f64::from(u32::MAX)) as u32),
    };
    let text = recipient.to_bech32()?;
    if a.report.json {
        a.report
            .result(serde_json::json!({"recipient": text, "t": t, "bits": a.bits, "rate": rate}));
    } else {
        println!("{text}");
    }
    a.report.info(format_args!(
        "an age recipient for {t} squarings{} on {}-bit moduli; decrypt with `age -d -j hourglass` (age-plugin-hourglass on PATH)",
        rate.map(|r| format!(" (about {} at {}sq/s)", format_secs(t as f64 / r), format_rate(r)))
            .unwrap_or_default(),
        a.bits
    ));
    Ok(())
}

/// The hint for a checkpoint of another run.
const CHECKPOINT_HINT: &str =
    "a checkpoint from another file or puzzle is refused: pass another --checkpoint or delete the old one";

/// `err` with [`CHECKPOINT_HINT`] when the failure was a foreign checkpoint.
fn checkpoint_hint(err: CliError, foreign: bool) -> CliError {
    if foreign {
        err.with_hint(CHECKPOINT_HINT)
    } else {
        err
    }
}

/// The input's length when it is a regular file (so it can be recorded or checked).
fn regular_file_len(path: &Path) -> Option<u64> {
    if path.as_os_str() == "-" {
        return None;
    }
    std::fs::metadata(path)
        .ok()
        .filter(|m| m.is_file())
        .map(|m| m.len())
}

fn seal_cmd(a: SealArgs) -> Result<(), CliError> {
    if !(1024..=8192).contains(&a.bits) {
        return Err(Usage::range("--bits", "be within 1024..=8192").into());
    }
    if let Some(t) = a.squarings {
        if t == 0 || t > MAX_SQUARINGS {
            return Err(Usage::range(
                "--squarings",
                format!("be within 1..={MAX_SQUARINGS} (2^60)"),
            )
            .into());
        }
    }
    if a.rate.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
        return Err(Usage::range("--rate", "be a positive number of squarings per second").into());
    }
    let content_len = regular_file_len(&a.input);
    let mut input = open_input(&a.input, "content")?;
    check_output(&a.out)?;
    let mut rng = a.entropy.source()?;
    let start = Instant::now();
    let key = SealingKey::generate(a.bits, &mut *rng).map_err(CliError::from)?;
    let (t, rate, measured) = match (a.squarings, a.duration) {
        (Some(t), _) => (t, None, false),
        (None, Some(d)) => {
            let (rate, measured) = match a.rate {
                Some(r) => (r, false),
                None => {
                    if !a.report.json && !a.report.quiet {
                        eprintln!(
                            "hourglass: measuring this machine's squaring rate at {} bits (2 s)...",
                            a.bits
                        );
                    }
                    (measure_rate(key.n(), Duration::from_secs(2)), true)
                }
            };
            let t = (d.as_secs_f64() * rate).round();
            if t < 1.0 {
                return Err(
                    Usage::Conflict("the duration and rate give less than one squaring").into(),
                );
            }
            if t > MAX_SQUARINGS as f64 {
                return Err(Usage::TooManySquarings { t }.into());
            }
            (t as u64, Some(rate), measured)
        }
        (None, None) => return Err(Usage::Give("--duration or --squarings").into()),
    };
    let mut out = StagedOutput::create(&a.out, Sensitivity::Public)?;
    let header = key
        .seal(t, content_len, &mut input, &mut out, &mut *rng)
        .map_err(|e| CliError::Sealing {
            input: a.input.clone(),
            inner: Box::new(e.into()),
        })?;
    out.commit()?;
    let secs = start.elapsed().as_secs_f64();
    let rate_source = match (rate, measured) {
        (None, _) => "not given",
        (Some(_), true) => "measured on this machine",
        (Some(_), false) => "given",
    };
    if a.report.json {
        println!(
            "{}",
            serde_json::json!({"output": a.out, "t": t, "bits": header.modulus_bits(), "rate": rate, "rate_measured": measured, "duration_secs": rate.map(|r| t as f64 / r), "content_len": header.content_len(), "seal_secs": secs})
        );
    } else if !a.report.quiet {
        let time = match rate {
            Some(r) => format!(
                ", about {} at {}sq/s ({rate_source})",
                format_secs(t as f64 / r),
                format_rate(r)
            ),
            None => String::new(),
        };
        eprintln!(
            "hourglass: sealed {} into {}: {} bits, t = {t} squarings{time}; the trapdoor is wiped, no one can open it faster",
            a.input.display(),
            a.out.display(),
            header.modulus_bits(),
        );
    }
    Ok(())
}

/// Runs `solve` with a progress display for `label`.
fn with_progress<T>(
    mode: ProgressMode,
    label: &str,
    solve: impl FnOnce(&mut dyn FnMut(Progress)) -> T,
) -> T {
    let mut display = ProgressDisplay::new(mode, label);
    let out = solve(&mut |p| display.update(p));
    display.finish();
    out
}

fn stopped(done: u64, total: u64, checkpoint: Option<&Path>) -> CliError {
    CliError::Stopped(Stopped::Squarings {
        done,
        total,
        checkpoint: checkpoint.map(Path::to_path_buf),
    })
}

fn open_cmd(a: OpenArgs) -> Result<(), CliError> {
    let mut input = open_input(&a.input, "time-lock file")?;
    let header =
        TlockHeader::read_from(&mut input).map_err(|e| CliError::from(e).with_path(&a.input))?;
    if let (Some(expected), Some(actual)) = (header.expected_file_len(), regular_file_len(&a.input))
    {
        if expected != actual {
            return Err(CliError::input(
                &a.input,
                InputProblem::TlockLength { actual, expected },
            ));
        }
    }
    // The body against the trailer written at sealing, before any squaring (a second handle
    // reads it; the first stays at the first chunk). A pipe can only be checked at the end.
    if a.input.as_os_str() != "-" && regular_file_len(&a.input).is_some() {
        let mut body = std::fs::File::open(&a.input)
            .map_err(|e| CliError::io(IoOp::Open("time-lock file"), &a.input, e))?;
        std::io::Seek::seek(
            &mut body,
            std::io::SeekFrom::Start(header.as_bytes().len() as u64),
        )
        .map_err(|e| CliError::io(IoOp::Reading, &a.input, e))?;
        check_body(&header, &mut std::io::BufReader::new(body))
            .map_err(|e| CliError::from(e).with_path(&a.input))?;
    }
    let ckpt_path = match (
        &a.run.checkpoint,
        a.out.as_os_str() == "-",
        a.input.as_os_str() == "-",
    ) {
        (Some(c), _, _) => c.clone(),
        (None, false, _) => with_ext(&a.out, ".ckpt"),
        (None, true, false) => with_ext(&a.input, ".ckpt"),
        (None, true, true) => {
            return Err(Usage::Give(
                "--checkpoint FILE when both input and output are standard streams",
            )
            .into())
        }
    };
    // Probe the output now, so an unwritable directory shows before hours of squaring; the real
    // temporary file is made after them (a kill -9 meanwhile leaves nothing behind).
    drop(StagedOutput::create(&a.out, Sensitivity::Secret)?);
    let ckpt = crate::progress::checkpoint_file(ckpt_path.clone())?;
    let resumed = ckpt_path.exists();
    let options = SolveOptions {
        checkpoint: Some(ckpt.clone()),
        checkpoint_every: a.run.every(),
        ..SolveOptions::default()
    };
    let mode = a.run.mode();
    if mode == ProgressMode::Human {
        eprintln!(
            "hourglass: opening {}: {} squarings modulo a {}-bit n{}",
            a.input.display(),
            header.t(),
            header.modulus_bits(),
            if resumed {
                format!(", resuming from {}", ckpt_path.display())
            } else {
                String::new()
            }
        );
    }
    let start = Instant::now();
    let key = with_progress(mode, "opening", |progress| {
        solve_key(&header, &options, stop_flag(), progress)
    })
    .map_err(|e| {
        let foreign = matches!(&e, TlockError::Timelock(hourglass_timelock::Error::Arith(a)) if is_foreign_checkpoint(a));
        checkpoint_hint(CliError::from(e), foreign)
    })?;
    let key = match key {
        KeyOutcome::Recovered(key) => key,
        KeyOutcome::Stopped { done } => return Err(stopped(done, header.t(), Some(&ckpt_path))),
    };
    let mut out = StagedOutput::create(&a.out, Sensitivity::Secret)?;
    let content_len = decrypt_body(&header, &key, &mut input, &mut out).map_err(|e| {
        CliError::SquaringsSaved {
            checkpoint: ckpt_path.clone(),
            inner: Box::new(CliError::from(e).with_path(&a.input)),
        }
    })?;
    drop(key);
    out.commit()?;
    // The finished checkpoint holds a^(2^t), i.e. the key: remove it now the content is out.
    ckpt.remove();
    let secs = start.elapsed().as_secs_f64();
    if a.run.json {
        println!(
            "{}",
            serde_json::json!({"output": a.out, "content_len": content_len, "t": header.t(), "bits": header.modulus_bits(), "seconds": secs})
        );
    } else if !a.run.quiet {
        eprintln!(
            "hourglass: opened in {}: {content_len} bytes written to {}",
            format_secs(secs),
            a.out.display()
        );
    }
    Ok(())
}

fn integer_arg(flag: &'static str, value: &str) -> Result<Integer, CliError> {
    parse_integer(value).ok_or_else(|| Usage::NotAnInteger { flag }.into())
}

fn open_rsw_cmd(a: OpenRswArgs) -> Result<(), CliError> {
    let n = match (&a.n, &a.modulus) {
        (_, Some(path)) => crate::files::modulus_from_key_file(path)?,
        (Some(n), None) => integer_arg("--n", n)?,
        (None, None) => return Err(Usage::Give("--n N or --modulus FILE").into()),
    };
    let base = integer_arg("--base", &a.base)?;
    let z = a.z.as_deref().map(|z| integer_arg("--z", z)).transpose()?;
    let puzzle = RswPuzzle::new(n, base, a.squarings).map_err(|e| {
        CliError::from(e).with_hint("N must be odd, 1 < A < N - 1, and 1 <= T <= 2^60")
    })?;
    let options = SolveOptions {
        checkpoint: a
            .checkpoint
            .clone()
            .map(crate::progress::checkpoint_file)
            .transpose()?,
        checkpoint_every: Duration::from_secs(a.checkpoint_every.max(1)),
        ..SolveOptions::default()
    };
    let mode = ProgressMode::from_flags(a.quiet, a.json);
    if mode == ProgressMode::Human {
        let resume = match &a.checkpoint {
            Some(c) if c.exists() => format!(", resuming from {}", c.display()),
            Some(_) => String::new(),
            None => " (no --checkpoint: a stopped run starts over)".into(),
        };
        eprintln!(
            "hourglass: computing w = A^(2^T) mod N: {} squarings modulo a {}-bit N{resume}",
            puzzle.t(),
            puzzle.n().significant_bits()
        );
    }
    let start = Instant::now();
    let outcome = with_progress(mode, "solving", |progress| {
        solve_rsw(&puzzle, &options, stop_flag(), progress)
    })
    .map_err(|e| {
        let foreign = matches!(&e, hourglass_timelock::Error::Arith(a) if is_foreign_checkpoint(a));
        checkpoint_hint(CliError::from(e), foreign)
    })?;
    let w = match outcome {
        SolveOutcome::Solved(w) => w,
        SolveOutcome::Stopped { done } => {
            return Err(stopped(done, puzzle.t(), a.checkpoint.as_deref()))
        }
    };
    let secs = start.elapsed().as_secs_f64();
    let message = z.as_ref().map(|z| xor_message(&w, z));
    let text = message.as_deref().and_then(printable_text);
    if a.json {
        println!(
            "{}",
            serde_json::json!({
                "w": w.to_string(),
                "w_hex": format!("0x{w:x}"),
                "t": puzzle.t(),
                "seconds": secs,
                "message_text": text,
                "message_hex": message.as_ref().map(hex::encode),
            })
        );
    } else {
        if a.hex {
            println!("w (hex): 0x{w:x}");
        } else {
            println!("w (decimal): {w}");
        }
        match (&message, text) {
            (_, Some(text)) => println!("message (text): {text}"),
            (Some(bytes), None) => println!("message (hex): {}", hex::encode(bytes)),
            (None, None) => {}
        }
        if !a.quiet {
            eprintln!(
                "hourglass: {} squarings in {}",
                puzzle.t(),
                format_secs(secs)
            );
        }
    }
    Ok(())
}

//! `hourglass puzzle ...`: RSA time-lock puzzle keys, solving and verification.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clap::{Args, Subcommand, ValueEnum};
use hourglass_arith::squaring::measure_rate;
use hourglass_timelock::{
    solve, PuzzleHash, PuzzleKey, PuzzleKeyGen, PuzzlePublicKey, Solution, SolveOptions,
    SolveOutcome,
};

use crate::cli_error::CliError;
use crate::entropy_args::EntropyArgs;
use crate::files::{open_input, read_input, write_output, Sensitivity};
use crate::progress::{format_rate, format_secs, stop_flag, ProgressDisplay, ProgressMode};

/// Arguments of `hourglass puzzle`.
#[derive(Args, Debug)]
pub struct PuzzleArgs {
    #[command(subcommand)]
    command: PuzzleCommand,
}

#[derive(Subcommand, Debug)]
enum PuzzleCommand {
    /// Make a puzzle key: NAME.key (private, 0600) and NAME.pub (public: n, t, z, ...).
    #[command(after_help = "Examples:
  hourglass puzzle keygen --bits 2048 --duration 1h -o deadline-1h        (rate measured here)
  hourglass puzzle keygen --bits 2048 --duration 12h --rate 1400000 --issuer 'Conf 2027' -o p12h
  hourglass puzzle keygen --bits 2048 --squarings 1000000 -o small")]
    Keygen(KeygenArgs),
    /// Solve a puzzle for a document (t sequential squarings; resumable, error-checked).
    #[command(after_help = "Examples:
  hourglass puzzle solve -p deadline-1h.pub -i paper.pdf -o paper.sol
  hourglass puzzle solve -p deadline-1h.pub -i paper.pdf -o paper.sol --checkpoint-every 30
  (run the same command again after a crash or Ctrl-C: it resumes from paper.sol.ckpt)")]
    Solve(SolveArgs),
    /// Verify a solution with the private key (exit 0 valid, 1 invalid).
    #[command(
        after_help = "Example:\n  hourglass puzzle verify -k deadline-1h.key -i paper.pdf -s paper.sol"
    )]
    Verify(VerifyArgs),
}

#[derive(ValueEnum, Debug, Clone, Copy)]
pub(crate) enum HashArg {
    Sha256,
    Sha512,
    #[value(name = "sha3-256")]
    Sha3_256,
    Blake2b,
    Sha1,
    Ripemd160,
}

impl From<HashArg> for PuzzleHash {
    fn from(h: HashArg) -> Self {
        match h {
            HashArg::Sha256 => PuzzleHash::Sha256,
            HashArg::Sha512 => PuzzleHash::Sha512,
            HashArg::Sha3_256 => PuzzleHash::Sha3_256,
            HashArg::Blake2b => PuzzleHash::Blake2b,
            HashArg::Sha1 => PuzzleHash::Sha1,
            HashArg::Ripemd160 => PuzzleHash::Ripemd160,
        }
    }
}

#[derive(Args, Debug)]
struct KeygenArgs {
    /// Modulus size in bits.
    #[arg(long, default_value_t = 2048)]
    bits: u32,
    /// Intended solving time on the reference machine (e.g. 10min, 1h, 12h).
    #[arg(long, value_parser = humantime::parse_duration, conflicts_with = "squarings", required_unless_present = "squarings")]
    duration: Option<Duration>,
    /// Reference rate in squarings per second (default: measured on this machine).
    #[arg(long, requires = "duration")]
    rate: Option<f64>,
    /// The number of squarings t directly.
    #[arg(long)]
    squarings: Option<u64>,
    /// Bits of the private exponent d (at least 128).
    #[arg(long, default_value_t = 256)]
    d_bits: u32,
    /// Hash authors should digest documents with.
    #[arg(long, value_enum, default_value = "sha256")]
    hash: HashArg,
    /// Issuer name recorded in the public key.
    #[arg(long, default_value = "")]
    issuer: String,
    /// Output name: writes NAME.key and NAME.pub.
    #[arg(short, long, value_name = "NAME")]
    out: PathBuf,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    entropy: EntropyArgs,
}

#[derive(Args, Debug)]
struct SolveArgs {
    /// The puzzle public key (NAME.pub).
    #[arg(short, long, value_name = "FILE")]
    puzzle: PathBuf,
    /// The document; `-` for stdin.
    #[arg(short, long, value_name = "FILE")]
    input: PathBuf,
    /// Where to write the solution.
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    /// Hash for the document (default: the one the puzzle key names).
    #[arg(long, value_enum)]
    hash: Option<HashArg>,
    /// Checkpoint file (default: SOLUTION.ckpt).
    #[arg(long, value_name = "FILE")]
    checkpoint: Option<PathBuf>,
    /// Seconds between checkpoints (at most 60 is sensible).
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
    /// The puzzle private key (NAME.key).
    #[arg(short, long, value_name = "FILE")]
    key: PathBuf,
    /// The submitted document; `-` for stdin.
    #[arg(short, long, value_name = "FILE")]
    input: PathBuf,
    /// The solution file.
    #[arg(short, long, value_name = "FILE")]
    solution: PathBuf,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    entropy: EntropyArgs,
}

/// Runs `hourglass puzzle ...`.
pub fn run(args: PuzzleArgs) -> Result<(), CliError> {
    match args.command {
        PuzzleCommand::Keygen(a) => keygen(a),
        PuzzleCommand::Solve(a) => solve_cmd(a),
        PuzzleCommand::Verify(a) => verify(a),
    }
}

fn text(path: &Path, what: &str) -> Result<String, CliError> {
    String::from_utf8(read_input(path, what)?)
        .map_err(|_| CliError::new(format!("{} is not a text file", path.display())))
}

/// Loads a puzzle public key file.
pub fn load_puzzle_public(path: &Path) -> Result<PuzzlePublicKey, CliError> {
    PuzzlePublicKey::from_json(&text(path, "puzzle public key")?).map_err(|e| {
        CliError::new(e.to_string())
            .context(path.display())
            .hint("a puzzle public key is the NAME.pub file written by `hourglass puzzle keygen`")
    })
}

/// Loads a puzzle private key file.
pub fn load_puzzle_key(path: &Path) -> Result<PuzzleKey, CliError> {
    let t = zeroize::Zeroizing::new(text(path, "puzzle key")?);
    PuzzleKey::from_json(&t).map_err(|e| {
        CliError::new(e.to_string())
            .context(path.display())
            .hint("a puzzle private key is the NAME.key file written by `hourglass puzzle keygen`")
    })
}

/// Digest of a file (streamed), with `hash`.
pub fn digest_file(path: &Path, hash: PuzzleHash) -> Result<Vec<u8>, CliError> {
    let mut input = open_input(path, "document")?;
    let mut h = hash.hasher();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = input
            .read(&mut buf)
            .map_err(|e| CliError::new(format!("reading {}: {e}", path.display())))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().into_vec())
}

fn with_ext(base: &Path, ext: &str) -> PathBuf {
    let mut s = base.as_os_str().to_owned();
    s.push(ext);
    PathBuf::from(s)
}

fn keygen(a: KeygenArgs) -> Result<(), CliError> {
    if !(1024..=8192).contains(&a.bits) {
        return Err(CliError::usage("--bits must be within 1024..=8192"));
    }
    let (t, rate, measured) = match (a.squarings, a.duration) {
        (Some(t), _) => {
            if t == 0 {
                return Err(CliError::usage("--squarings must be at least 1"));
            }
            (t, a.rate.unwrap_or(f64::NAN), false)
        }
        (None, Some(d)) => {
            let (rate, measured) = match a.rate {
                Some(r) if r.is_finite() && r > 0.0 => (r, false),
                Some(_) => {
                    return Err(CliError::usage(
                        "--rate must be a positive number of squarings per second",
                    ))
                }
                None => {
                    eprintln!(
                        "hourglass: measuring this machine's squaring rate at {} bits (2 s)...",
                        a.bits
                    );
                    let n = sample_modulus(a.bits, &a.entropy)?;
                    (measure_rate(&n, Duration::from_secs(2)), true)
                }
            };
            let t = (d.as_secs_f64() * rate).round();
            if t < 1.0 || t > 1e18 {
                return Err(CliError::usage(
                    "the duration and rate give an absurd number of squarings",
                ));
            }
            (t as u64, rate, measured)
        }
        (None, None) => return Err(CliError::usage("give --duration or --squarings")),
    };
    let mut rng = a.entropy.source()?;
    let mut gen = PuzzleKeyGen::new(a.bits, t)
        .d_bits(a.d_bits)
        .hash(a.hash.into())
        .issuer(&a.issuer);
    if rate.is_finite() {
        gen = gen.rate(rate, measured);
    }
    let start = Instant::now();
    let key = gen
        .generate(&mut *rng)
        .map_err(|e| CliError::new(e.to_string()))?;
    let elapsed = start.elapsed();
    let (key_path, pub_path) = (with_ext(&a.out, ".key"), with_ext(&a.out, ".pub"));
    write_output(&key_path, key.to_json().as_bytes(), Sensitivity::Secret)?;
    write_output(
        &pub_path,
        key.public().to_json().as_bytes(),
        Sensitivity::Public,
    )?;
    let p = key.public();
    if a.json {
        println!(
            "{}",
            serde_json::json!({"key": key_path, "public": pub_path, "bits": p.bits(), "t": p.t(), "rate": p.meta().rate, "rate_measured": p.meta().rate_measured, "duration_secs": p.meta().duration_secs, "fingerprint": p.fingerprint_hex(), "keygen_secs": elapsed.as_secs_f64()})
        );
    } else {
        eprintln!(
            "hourglass: wrote {} (private) and {} (public): {} bits, t = {} squarings = {} at {}sq/s ({}), fingerprint {}, made in {:.0} ms",
            key_path.display(),
            pub_path.display(),
            p.bits(),
            p.t(),
            format_secs(p.meta().duration_secs),
            format_rate(p.meta().rate),
            if p.meta().rate_measured { "measured on this machine" } else { "given" },
            &p.fingerprint_hex()[..16],
            elapsed.as_secs_f64() * 1e3
        );
    }
    Ok(())
}

/// A throwaway modulus of `bits` bits for rate measurements.
fn sample_modulus(bits: u32, entropy: &EntropyArgs) -> Result<hourglass_arith::Integer, CliError> {
    use hourglass_arith::prime::{random_prime, PrimeRequest};
    let mut rng = entropy.source()?;
    let p = random_prime(&PrimeRequest::new(bits - bits / 2), &mut *rng)?;
    let q = random_prime(&PrimeRequest::new(bits / 2), &mut *rng)?;
    Ok(p * q)
}

fn solve_cmd(a: SolveArgs) -> Result<(), CliError> {
    let key = load_puzzle_public(&a.puzzle)?;
    let hash = a.hash.map(PuzzleHash::from).unwrap_or(key.meta().hash);
    let digest = digest_file(&a.input, hash)?;
    let m = hourglass_timelock::input_from_digest(key.n(), &digest)
        .map_err(|e| CliError::new(e.to_string()))?;
    let ckpt = a
        .checkpoint
        .clone()
        .unwrap_or_else(|| with_ext(&a.out, ".ckpt"));
    let resumed = ckpt.exists();
    let options = SolveOptions {
        checkpoint: Some(ckpt.clone()),
        checkpoint_every: Duration::from_secs(a.checkpoint_every.max(1)),
        ..SolveOptions::default()
    };
    let mode = ProgressMode::from_flags(a.quiet, a.json);
    if mode == ProgressMode::Human {
        eprintln!(
            "hourglass: solving {} squarings ({} at the reference rate){}",
            key.t(),
            format_secs(key.credited_secs()),
            if resumed {
                format!(", resuming from {}", ckpt.display())
            } else {
                String::new()
            }
        );
    }
    let mut display = ProgressDisplay::new(mode, "solving");
    let start = Instant::now();
    let outcome = solve(&key, &m, &options, stop_flag(), &mut |p| display.update(p));
    display.finish();
    let outcome = outcome.map_err(|e| CliError::new(e.to_string()).hint("a checkpoint from another puzzle or document is refused: pass another --checkpoint or delete the old one"))?;
    match outcome {
        SolveOutcome::Stopped { done } => Err(CliError::new(format!(
            "stopped after {done} of {} squarings; progress is saved in {}",
            key.t(),
            ckpt.display()
        ))
        .hint("run the same command again to resume")),
        SolveOutcome::Solved(c) => {
            let solution = Solution {
                puzzle: key.fingerprint(),
                hash,
                digest,
                t: key.t(),
                c,
            };
            write_output(&a.out, solution.to_json().as_bytes(), Sensitivity::Public)?;
            let _ = std::fs::remove_file(&ckpt);
            let secs = start.elapsed().as_secs_f64();
            if a.json {
                println!(
                    "{}",
                    serde_json::json!({"solution": a.out, "t": key.t(), "seconds": secs, "credited_secs": key.credited_secs()})
                );
            } else if !a.quiet {
                eprintln!(
                    "hourglass: solved in {}; solution written to {}",
                    format_secs(secs),
                    a.out.display()
                );
            }
            Ok(())
        }
    }
}

fn verify(a: VerifyArgs) -> Result<(), CliError> {
    let key = load_puzzle_key(&a.key)?;
    let solution = Solution::from_json(&text(&a.solution, "solution")?)
        .map_err(|e| CliError::new(e.to_string()).context(a.solution.display()))?;
    let digest = digest_file(&a.input, solution.hash)?;
    let mut rng = a.entropy.source()?;
    let start = Instant::now();
    let verdict = solution
        .verify(&key, &digest, &mut *rng)
        .map_err(|e| CliError::new(e.to_string()))?;
    let elapsed = start.elapsed();
    let credited = key.public().credited_secs();
    if a.json {
        println!(
            "{}",
            serde_json::json!({"valid": verdict.is_ok(), "reason": verdict.as_ref().err().map(|r| r.to_string()), "credited_secs": if verdict.is_ok() { credited } else { 0.0 }, "t": key.public().t(), "verify_ms": elapsed.as_secs_f64() * 1e3})
        );
    }
    match verdict {
        Ok(()) => {
            if !a.json {
                println!("valid: the document was final at least {} before this solution was produced ({} squarings)", format_secs(credited), key.public().t());
            }
            Ok(())
        }
        Err(reason) => Err(CliError::new(format!("invalid solution: {reason}"))),
    }
}

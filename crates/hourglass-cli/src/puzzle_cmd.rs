//! `hourglass puzzle ...`: RSA time-lock puzzle keys, solving and verification.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use clap::{Args, Subcommand, ValueEnum};
use hourglass_arith::squaring::measure_rate;
use hourglass_timelock::certificate::{looks_like_certificate, verify_puzzle_certificate};
use hourglass_timelock::{
    solve, PuzzleHash, PuzzleKeyGen, PuzzlePublicKey, Solution, SolveOptions, SolveOutcome,
};

use crate::cli_error::{
    is_foreign_checkpoint, CliError, InputProblem, NegativeVerdict, Stopped, Usage,
};
use crate::files::{check_output, read_input, with_ext, write_output, Sensitivity};
use crate::progress::ReportArgs;
use crate::progress::{
    format_rate, format_secs, stop_flag, LongRunArgs, ProgressDisplay, ProgressMode,
};
use crate::puzzle_files::{digest_file, load_puzzle_key, text};
use hourglass_arith::entropy::EntropyArgs;

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
    /// Certify a puzzle key: an X.509 v3 time-lock certificate signed by the institution's CA.
    #[command(after_help = "Examples:
  hourglass ca new -o example-ca --name 'Example University'
  hourglass puzzle certify -k deadline-1h.key --ca-key example-ca.key --ca-cert example-ca.crt -o deadline-1h.crt
  hourglass puzzle certify -k deadline-1h.key --ca-key example-ca.key --ca-cert example-ca.crt -o deadline-1h.crt --days 30 --name 'Conf 2027 deadline'
Check it with OpenSSL:
  openssl verify -CAfile example-ca.crt deadline-1h.crt
  openssl x509 -text -noout -certopt ext_parse -in deadline-1h.crt")]
    Certify(crate::ca_cmd::CertifyArgs),
    /// Solve a puzzle for a document (t sequential squarings; resumable, error-checked).
    #[command(after_help = "Examples:
  hourglass puzzle solve -p deadline-1h.pub -i paper.pdf -o paper.sol
  hourglass puzzle solve -p deadline-1h.crt --ca example-ca.crt -i paper.pdf -o paper.sol
  hourglass puzzle solve -p deadline-1h.pub -i paper.pdf -o paper.sol --checkpoint-every 30
  (run the same command again after a crash or Ctrl-C: it resumes from paper.sol.ckpt)")]
    Solve(SolveArgs),
    /// Verify a solution with the private key (exit 0 valid, 1 invalid).
    #[command(
        after_help = "Example:\n  hourglass puzzle verify -k deadline-1h.key -i paper.pdf -s paper.sol"
    )]
    Verify(VerifyArgs),
    /// Sequential squarings per second on this machine (paper Table I); --compare adds GMP and
    /// OpenSSL on the same modulus.
    #[command(
        after_help = "Examples:\n  hourglass puzzle bench\n  hourglass puzzle bench --bits 2048 --compare --json"
    )]
    Bench(hourglass_bench::puzzle::PuzzleBenchArgs),
    /// Sign a file with a puzzle key (fast): a delayed signature that takes t squarings to verify.
    #[command(
        after_help = "Example:\n  hourglass puzzle sign -k deputy-48h.key -i contract.pdf -o contract.sig"
    )]
    Sign(SignArgs),
    /// Verify a delayed signature: t sequential squarings (progress, checkpoints, resume).
    #[command(
        after_help = "Examples:\n  hourglass puzzle verify-signature -p deputy-48h.pub -i contract.pdf -s contract.sig\n  hourglass puzzle verify-signature -p deputy-48h.crt --ca CA.crt -i contract.pdf -s contract.sig"
    )]
    VerifySignature(VerifySignatureArgs),
}

#[derive(ValueEnum, Debug, Clone, Copy)]
pub(crate) enum HashArg {
    Sha256,
    Sha512,
    #[value(name = "sha3-256")]
    Sha3_256,
    Blake2b,
}

impl From<HashArg> for PuzzleHash {
    fn from(h: HashArg) -> Self {
        match h {
            HashArg::Sha256 => PuzzleHash::Sha256,
            HashArg::Sha512 => PuzzleHash::Sha512,
            HashArg::Sha3_256 => PuzzleHash::Sha3_256,
            HashArg::Blake2b => PuzzleHash::Blake2b,
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
    /// Bits of the private exponent d (at least 256: once one solution is public, a d of b
    /// bits falls to a kangaroo search in about 2^(b/2) steps).
    #[arg(long, default_value_t = 256)]
    d_bits: u32,
    /// Accept a d below 256 bits (down to 64): reproducing the paper or tests only.
    #[arg(long)]
    allow_insecure: bool,
    /// Hash authors should digest documents with.
    #[arg(long, value_enum, default_value = "sha256")]
    hash: HashArg,
    /// Issuer name recorded in the public key.
    #[arg(long, default_value = "")]
    issuer: String,
    /// Output name: writes NAME.key and NAME.pub.
    #[arg(short, long, value_name = "NAME")]
    out: PathBuf,
    #[command(flatten)]
    report: ReportArgs,
    #[command(flatten)]
    entropy: EntropyArgs,
}

#[derive(Args, Debug)]
struct SolveArgs {
    /// The puzzle public key: NAME.pub, or a time-lock certificate NAME.crt (needs --ca).
    #[arg(short, long, value_name = "FILE")]
    puzzle: PathBuf,
    /// The institution's CA certificate: a certificate given to -p is trusted only if this CA
    /// issued it and it is valid now.
    #[arg(long, value_name = "FILE")]
    ca: Option<PathBuf>,
    /// The document; `-` for stdin.
    #[arg(short, long, value_name = "FILE")]
    input: PathBuf,
    /// Where to write the solution.
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    #[command(flatten)]
    run: LongRunArgs,
}

#[derive(Args, Debug)]
struct SignArgs {
    /// The puzzle private key (NAME.key).
    #[arg(short, long, value_name = "FILE")]
    key: PathBuf,
    /// The file to sign; `-` for stdin.
    #[arg(short, long, value_name = "FILE")]
    input: PathBuf,
    /// Where to write the signature (binary, the modulus length).
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    #[command(flatten)]
    entropy: EntropyArgs,
}

#[derive(Args, Debug)]
struct VerifySignatureArgs {
    /// The puzzle public key (NAME.pub) or certificate (NAME.crt, with --ca).
    #[arg(short, long, value_name = "FILE")]
    puzzle: PathBuf,
    /// The CA certificate a NAME.crt must be signed by.
    #[arg(long, value_name = "FILE")]
    ca: Option<PathBuf>,
    /// The signed file; `-` for stdin.
    #[arg(short, long, value_name = "FILE")]
    input: PathBuf,
    /// The signature.
    #[arg(short, long, value_name = "FILE")]
    signature: PathBuf,
    #[command(flatten)]
    run: LongRunArgs,
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
        PuzzleCommand::Certify(a) => crate::ca_cmd::certify(a),
        PuzzleCommand::Solve(a) => solve_cmd(a),
        PuzzleCommand::Verify(a) => verify(a),
        PuzzleCommand::Bench(a) => hourglass_bench::puzzle::run(a).map_err(CliError::from),
        PuzzleCommand::Sign(a) => sign(a),
        PuzzleCommand::VerifySignature(a) => verify_signature(a),
    }
}

/// Loads a puzzle public key: a NAME.pub JSON file as written by `hourglass puzzle keygen`, or
/// a time-lock certificate (PEM or DER, detected by content), which must be checked against the
/// CA certificate `ca`: issued by it, unaltered, valid now. A certificate without `ca` and a
/// JSON file with `ca` (it carries no signature to check) are errors.
pub(crate) fn load_puzzle_public_checked(
    path: &Path,
    ca: Option<&Path>,
) -> Result<PuzzlePublicKey, CliError> {
    let bytes = read_input(path, "puzzle public key")?;
    if looks_like_certificate(&bytes) {
        let Some(ca) = ca else {
            return Err(CliError::input(path, InputProblem::CertificateWithoutCa));
        };
        let ca_cert = crate::ca_cmd::load_ca_certificate(ca)?;
        return verify_puzzle_certificate(&bytes, &ca_cert, SystemTime::now())
            .map_err(|e| CliError::from(e).with_path(path));
    }
    if let Some(ca) = ca {
        return Err(CliError::input(
            path,
            InputProblem::NotACertificate {
                ca: ca.to_path_buf(),
            },
        ));
    }
    let text =
        String::from_utf8(bytes).map_err(|_| CliError::input(path, InputProblem::NotText))?;
    PuzzlePublicKey::from_json(&text).map_err(|e| {
        CliError::from(e).with_path(path).with_hint(
            "a puzzle public key is the NAME.pub file written by `hourglass puzzle keygen`, or a NAME.crt from `hourglass puzzle certify` with --ca",
        )
    })
}

fn keygen(a: KeygenArgs) -> Result<(), CliError> {
    if !(1024..=8192).contains(&a.bits) {
        return Err(Usage::range("--bits", "be within 1024..=8192").into());
    }
    let (key_path, pub_path) = (with_ext(&a.out, ".key"), with_ext(&a.out, ".pub"));
    check_output(&key_path)?;
    check_output(&pub_path)?;
    let (t, rate, measured) = match (a.squarings, a.duration) {
        (Some(t), _) => {
            if t == 0 {
                return Err(Usage::range("--squarings", "be at least 1").into());
            }
            (t, a.rate.unwrap_or(f64::NAN), false)
        }
        (None, Some(d)) => {
            let (rate, measured) =
                reference_rate(a.bits, a.rate, &a.entropy, a.report.quiet || a.report.json)?;
            let t = (d.as_secs_f64() * rate).round();
            if !(1.0..=1e18).contains(&t) {
                return Err(Usage::Conflict(
                    "the duration and rate give an absurd number of squarings",
                )
                .into());
            }
            (t as u64, rate, measured)
        }
        (None, None) => return Err(Usage::Give("--duration or --squarings").into()),
    };
    let mut rng = a.entropy.source()?;
    let mut gen = PuzzleKeyGen::new(a.bits, t)
        .d_bits(a.d_bits)
        .allow_insecure(a.allow_insecure)
        .hash(a.hash.into())
        .issuer(&a.issuer);
    if rate.is_finite() {
        gen = gen.rate(rate, measured);
    }
    let start = Instant::now();
    let key = gen.generate(&mut *rng)?;
    let elapsed = start.elapsed();
    write_output(&key_path, key.to_json().as_bytes(), Sensitivity::Secret)?;
    write_output(
        &pub_path,
        key.public().to_json().as_bytes(),
        Sensitivity::Public,
    )?;
    let p = key.public();
    a.report.result(serde_json::json!({"key": key_path, "public": pub_path, "bits": p.bits(), "t": p.t(), "rate": p.meta().rate, "rate_measured": p.meta().rate_measured, "duration_secs": p.meta().duration_secs, "fingerprint": p.fingerprint_hex(), "keygen_secs": elapsed.as_secs_f64()}));
    a.report.info(format_args!(
            "wrote {} (private) and {} (public): {} bits, t = {} squarings = {} at {}sq/s ({}), fingerprint {}, made in {:.0} ms",
            key_path.display(),
            pub_path.display(),
            p.bits(),
            p.t(),
            format_secs(p.meta().duration_secs),
            format_rate(p.meta().rate),
            if p.meta().rate_measured { "measured on this machine" } else { "given" },
            &p.fingerprint_hex()[..16],
            elapsed.as_secs_f64() * 1e3
    ));
    Ok(())
}

/// A throwaway modulus of `bits` bits for rate measurements.
/// The reference squaring rate: `given` if any (it must be positive), else measured on this
/// machine for 2 s with a throwaway `bits`-bit modulus. Returns the rate and whether it was
/// measured.
pub(crate) fn reference_rate(
    bits: u32,
    given: Option<f64>,
    entropy: &EntropyArgs,
    quiet: bool,
) -> Result<(f64, bool), CliError> {
    match given {
        Some(r) if r.is_finite() && r > 0.0 => Ok((r, false)),
        Some(_) => {
            Err(Usage::range("--rate", "be a positive number of squarings per second").into())
        }
        None => {
            if !quiet {
                eprintln!(
                    "hourglass: measuring this machine's squaring rate at {bits} bits (2 s)..."
                );
            }
            let mut rng = entropy.source()?;
            let n = hourglass_arith::prime::random_modulus(bits, &mut *rng)?;
            Ok((measure_rate(&n, Duration::from_secs(2)), true))
        }
    }
}

fn solve_cmd(a: SolveArgs) -> Result<(), CliError> {
    let key = load_puzzle_public_checked(&a.puzzle, a.ca.as_deref())?;
    // The key fixes the hash; the author does not choose it.
    let hash = key.meta().hash;
    let digest = digest_file(&a.input, hash)?;
    let m = hourglass_timelock::input_from_digest(key.n(), &digest)?;
    check_output(&a.out)?;
    let ckpt = a.run.checkpoint_file(&a.out)?;
    let resumed = ckpt.path().exists();
    let options = SolveOptions {
        checkpoint: Some(ckpt.clone()),
        checkpoint_every: a.run.every(),
        ..SolveOptions::default()
    };
    let mode = a.run.mode();
    if mode == ProgressMode::Human {
        eprintln!(
            "hourglass: solving {} squarings ({} at the reference rate){}{}",
            key.t(),
            format_secs(key.credited_secs()),
            match &a.ca {
                Some(ca) => format!(", certificate checked against {}", ca.display()),
                None => String::new(),
            },
            if resumed {
                format!(", resuming from {}", ckpt.path().display())
            } else {
                String::new()
            }
        );
    }
    let mut display = ProgressDisplay::new(mode, "solving");
    let start = Instant::now();
    let outcome = solve(&key, &m, &options, stop_flag(), &mut |p| display.update(p));
    display.finish();
    let outcome = outcome.map_err(|e| {
        let foreign =
            matches!(&e, hourglass_timelock::Error::Arith(a) if is_foreign_checkpoint(a));
        let err = CliError::from(e);
        if foreign {
            err.with_hint("a checkpoint from another puzzle or document is refused: pass another --checkpoint or delete the old one")
        } else {
            err
        }
    })?;
    match outcome {
        SolveOutcome::Stopped { done } => Err(CliError::Stopped(Stopped::Squarings {
            done,
            total: key.t(),
            checkpoint: Some(ckpt.path().to_path_buf()),
        })),
        SolveOutcome::Solved(c) => {
            let solution = Solution::new(&key, digest, c);
            write_output(&a.out, solution.to_json().as_bytes(), Sensitivity::Public)?;
            ckpt.remove();
            let secs = start.elapsed().as_secs_f64();
            if a.run.json {
                println!(
                    "{}",
                    serde_json::json!({"solution": a.out, "t": key.t(), "seconds": secs, "credited_secs": key.credited_secs()})
                );
            } else if !a.run.quiet {
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
        .map_err(|e| CliError::from(e).with_path(&a.solution))?;
    // The verifier's key fixes the hash, whatever the solution file names.
    let digest = digest_file(&a.input, key.public().meta().hash)?;
    let mut rng = a.entropy.source()?;
    let start = Instant::now();
    let verdict = solution.verify(&key, &digest, &mut *rng)?;
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
        Err(reason) => Err(NegativeVerdict::Solution(reason).into()),
    }
}

fn sign(a: SignArgs) -> Result<(), CliError> {
    let key = load_puzzle_key(&a.key)?;
    let digest = digest_file(&a.input, PuzzleHash::Sha256)?;
    let mut rng = a.entropy.source()?;
    let sig = hourglass_timelock::signature::sign_digest(&key, &digest, &mut *rng)?;
    write_output(&a.out, &sig, Sensitivity::Public)?;
    eprintln!(
        "hourglass: signed; verifying takes {} squarings (about {} at the reference rate)",
        key.public().t(),
        format_secs(key.public().credited_secs())
    );
    Ok(())
}

fn verify_signature(a: VerifySignatureArgs) -> Result<(), CliError> {
    use hourglass_timelock::signature::{verify_digest, DelayedVerdict};
    let key = load_puzzle_public_checked(&a.puzzle, a.ca.as_deref())?;
    let digest = digest_file(&a.input, PuzzleHash::Sha256)?;
    let sig = read_input(&a.signature, "signature")?;
    let ckpt = a.run.checkpoint_file(&a.signature)?;
    let options = SolveOptions {
        checkpoint: Some(ckpt.clone()),
        checkpoint_every: a.run.every(),
        ..SolveOptions::default()
    };
    let mode = a.run.mode();
    let mut display = ProgressDisplay::new(mode, "verifying");
    let verdict = verify_digest(&key, &digest, &sig, &options, stop_flag(), &mut |p| {
        display.update(p)
    });
    display.finish();
    let verdict = verdict?;
    if a.run.json {
        println!(
            "{}",
            serde_json::json!({"valid": verdict == DelayedVerdict::Valid, "t": key.t()})
        );
    }
    match verdict {
        DelayedVerdict::Valid => {
            ckpt.remove();
            if !a.run.json {
                println!("valid delayed signature ({} squarings)", key.t());
            }
            Ok(())
        }
        DelayedVerdict::Invalid => {
            ckpt.remove();
            Err(NegativeVerdict::DelayedSignature.into())
        }
        DelayedVerdict::Stopped { done } => Err(CliError::Stopped(Stopped::Squarings {
            done,
            total: key.t(),
            checkpoint: Some(ckpt.path().to_path_buf()),
        })),
    }
}

//! `hourglass bench puzzle` (and `hourglass puzzle bench`): sequential squaring rates (paper
//! Table I) for the hourglass solver, GMP's `mpz_powm` and OpenSSL's Montgomery multiplication
//! on the same modulus in the same run, the solver's error-checking and checkpoint overhead, and
//! the cost of `r = 2^t mod phi(n)` at key generation (paper Table II).

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use clap::Args;
use hourglass_arith::checkpoint::{Checkpoint, CheckpointFile, CheckpointKey};
use hourglass_arith::entropy::OsEntropy;
use hourglass_arith::modular::pow_mod_vartime;
use hourglass_arith::prime::{random_prime, PrimeRequest};
use hourglass_arith::squaring::{measure_rate, square_k_times, Outcome, SquaringRun};
use hourglass_arith::Integer;
use serde::Serialize;

use crate::args::parse_bits_list;
use crate::openssl_baseline::montgomery_squarings;
use crate::{Disagreement, Error, Result};

/// Arguments of the puzzle benchmark.
#[derive(Args, Debug)]
pub struct PuzzleBenchArgs {
    /// Modulus sizes, comma-separated.
    #[arg(long, default_value = "1024,2048,3072,4096", value_parser = parse_bits_list)]
    bits: std::vec::Vec<u32>,
    /// Seconds of squaring per measurement.
    #[arg(long, default_value_t = 4.0)]
    seconds: f64,
    /// Interleaved repetitions of each measurement (the best is kept).
    #[arg(long, default_value_t = 2)]
    repeat: u32,
    /// Also time GMP's mpz_powm and OpenSSL's BN_mod_mul_montgomery on the same modulus.
    #[arg(long)]
    compare: bool,
    /// Also reproduce Table II (time of r = 2^t mod phi(n) for 10 min ... 72 h puzzles).
    #[arg(long)]
    table2: bool,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// No progress messages on standard error (the tables still print).
    #[arg(long, conflicts_with = "json")]
    quiet: bool,
}

/// Paper Table I, fastest machine (Core 2 Duo T9900 3.06 GHz, 64-bit Linux): squarings/s.
const PAPER_T9900: [(u32, f64); 3] = [(1024, 1_396_290.0), (2048, 386_330.0), (4096, 104_780.0)];
/// Paper Table II (Core 2 Duo E6750, t from the T9900's S): seconds for r = 2^t mod phi(n).
const PAPER_TABLE2: [(&str, f64, [f64; 3]); 5] = [
    ("10 min", 600.0, [0.754, 0.292, 0.132]),
    ("1 h", 3600.0, [4.512, 1.738, 0.791]),
    ("12 h", 43_200.0, [53.98, 20.91, 9.50]),
    ("24 h", 86_400.0, [108.0, 41.84, 18.98]),
    ("72 h", 259_200.0, [324.2, 125.7, 56.93]),
];

#[derive(Serialize)]
struct SizeRow {
    bits: u32,
    squarings: u64,
    hourglass_rate: f64,
    hourglass_ns: f64,
    kernel: &'static str,
    checked_overhead_percent: f64,
    gmp_powm_rate: Option<f64>,
    openssl_mont_rate: Option<f64>,
    ratio_vs_faster_baseline: Option<f64>,
    paper_t9900_rate: Option<f64>,
    verify_median_ms: f64,
    table2: Vec<Table2Row>,
}

#[derive(Serialize)]
struct Table2Row {
    puzzle: &'static str,
    t: u64,
    seconds: f64,
    paper_seconds: Option<f64>,
}

fn modulus(bits: u32) -> Result<(Integer, Integer)> {
    let mut rng = OsEntropy;
    let p = random_prime(&PrimeRequest::new(bits - bits / 2), &mut rng)?;
    let q = random_prime(&PrimeRequest::new(bits / 2), &mut rng)?;
    let phi = Integer::from(&p - 1u32) * Integer::from(&q - 1u32);
    Ok((p * q, phi))
}

impl PuzzleBenchArgs {
    /// `hourglass bench puzzle` always compares and prints Table II.
    pub fn include_everything(&mut self) {
        self.compare = true;
        self.table2 = true;
    }
}

/// Median time of verifying a puzzle solution with a `bits`-bit key (the default 256-bit d).
fn verification_ms(bits: u32) -> Result<f64> {
    use hourglass_timelock::{document_input, PuzzleHash, PuzzleKeyGen};
    let mut rng = OsEntropy;
    let key = PuzzleKeyGen::new(bits, 1).generate(&mut rng)?;
    let m = document_input(key.public(), PuzzleHash::Sha256, b"benchmark")?;
    let e_tilde = (Integer::from(1) << 1u32) + key.public().z();
    let c = pow_mod_vartime(&m, &e_tilde, key.public().n())?;
    let times = crate::stats::time_ms(51, || match key.verify(&m, &c, &mut rng) {
        Ok(true) => Ok(()),
        Ok(false) => Err(Error::SolutionRejected),
        Err(e) => Err(e.into()),
    })?;
    Ok(crate::stats::Summary::of(&times).median)
}

/// Runs the benchmark.
pub fn run(a: PuzzleBenchArgs) -> Result<()> {
    if !a.json {
        crate::machine::print_line();
    }
    if !(0.05..=600.0).contains(&a.seconds) {
        return Err(Error::SecondsOutOfRange {
            min: 0.05,
            max: 600.0,
        });
    }
    let mut rows = Vec::new();
    for &bits in &a.bits {
        if !(512..=16384).contains(&bits) {
            return Err(Error::BitsOutOfRange {
                bits,
                min: 512,
                max: 16384,
            });
        }
        if !a.json && !a.quiet {
            eprintln!("hourglass: measuring {bits} bits...");
        }
        let (n, phi) = modulus(bits)?;
        let x = Integer::from(&n / 7u32);
        let estimate = measure_rate(&n, Duration::from_secs_f64((a.seconds / 5.0).min(0.5)));
        // Whole blocks only: a real solve of hours spends a negligible share in its final
        // partial block, so a short benchmark must not be dominated by it.
        let block = hourglass_arith::squaring::DEFAULT_BLOCK;
        let k = ((estimate * a.seconds) as u64).div_ceil(block).max(1) * block;

        // Interleaved repetitions, best of each: robust against other load on the machine.
        let mont = hourglass_arith::mont::MontContext::new(&n)?;
        let mut kernel_secs = f64::INFINITY;
        let (mut solver_secs, mut gmp_secs, mut ossl_secs) =
            (f64::INFINITY, f64::INFINITY, f64::INFINITY);
        for _ in 0..a.repeat.max(1) {
            // The solver as it runs for real: error checking on, checkpoints at the default interval.
            let ckpt = CheckpointFile::new(
                std::env::temp_dir().join(format!("hourglass-bench-{}.ckpt", std::process::id())),
                CheckpointKey::ephemeral()?,
            );
            let run = SquaringRun::new(&n, &x, k)?;
            let start = Instant::now();
            let outcome = run.run(
                run.initial_state(),
                &AtomicBool::new(false),
                Duration::from_secs(3600),
                Duration::from_secs(60),
                &mut |_| {},
                &mut |s| ckpt.save_state(&run, b"bench", s),
            )?;
            solver_secs = solver_secs.min(start.elapsed().as_secs_f64());
            ckpt.remove();
            let Outcome::Finished(state) = outcome else {
                return Err(Error::RunStopped);
            };
            // The bare kernel over the same k: the baseline for the checking overhead.
            let start = Instant::now();
            let bare = mont.square_k_times(&x, k);
            kernel_secs = kernel_secs.min(start.elapsed().as_secs_f64());
            if bare != state.x {
                return Err(Error::Disagreement(Disagreement::SolverKernel));
            }
            // GMP's mpz_powm over the same k.
            let start = Instant::now();
            let plain = square_k_times(&x, k, &n);
            gmp_secs = gmp_secs.min(start.elapsed().as_secs_f64());
            if plain != state.x {
                return Err(Error::Disagreement(Disagreement::SolverGmp));
            }
            if a.compare {
                let (ossl, secs) = montgomery_squarings(&n, &x, k)?;
                if ossl != plain {
                    return Err(Error::Disagreement(Disagreement::OpensslGmpPuzzle));
                }
                ossl_secs = ossl_secs.min(secs);
            }
        }
        let (gmp_rate, ossl_rate) = if a.compare {
            (Some(k as f64 / gmp_secs), Some(k as f64 / ossl_secs))
        } else {
            (None, None)
        };
        let rate = k as f64 / solver_secs;
        let faster = match (gmp_rate, ossl_rate) {
            (Some(g), Some(o)) => Some(g.max(o)),
            _ => None,
        };
        let mut table2 = Vec::new();
        if a.table2 {
            let col = match bits {
                1024 => Some(0),
                2048 => Some(1),
                4096 => Some(2),
                _ => None,
            };
            for (name, secs, paper) in PAPER_TABLE2 {
                let t = (secs * rate) as u64;
                let start = Instant::now();
                let r = pow_mod_vartime(&Integer::from(2), &Integer::from(t), &phi)?;
                let took = start.elapsed().as_secs_f64();
                drop(r);
                table2.push(Table2Row {
                    puzzle: name,
                    t,
                    seconds: took,
                    paper_seconds: col.map(|c| paper[c]),
                });
            }
        }
        let verify_median_ms = verification_ms(bits)?;
        rows.push(SizeRow {
            bits,
            squarings: k,
            hourglass_rate: rate,
            hourglass_ns: 1e9 / rate,
            kernel: mont.kernel().name(),
            checked_overhead_percent: (solver_secs / kernel_secs - 1.0) * 100.0,
            gmp_powm_rate: gmp_rate,
            openssl_mont_rate: ossl_rate,
            ratio_vs_faster_baseline: faster.map(|f| rate / f),
            paper_t9900_rate: PAPER_T9900
                .iter()
                .find(|(b, _)| *b == bits)
                .map(|(_, r)| *r),
            verify_median_ms,
            table2,
        });
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({"openssl_version": crate::openssl_baseline::version(), "sizes": rows})).unwrap_or_default());
        return Ok(());
    }
    println!("Table I: sequential modular squarings per second (S) on this machine");
    println!(
        "{:>6} {:>13} {:>9} {:>10} {:>13} {:>13} {:>9} {:>14}",
        "bits",
        "hourglass S",
        "ns/sq",
        "checks+ckpt",
        "GMP mpz_powm",
        "OpenSSL mont",
        "ratio",
        "paper T9900 S"
    );
    for r in &rows {
        let opt = |v: Option<f64>| v.map(|x| format!("{x:.0}")).unwrap_or_else(|| "-".into());
        println!(
            "{:>6} {:>13.0} {:>9.0} {:>9.2}% {:>13} {:>13} {:>9} {:>14}",
            r.bits,
            r.hourglass_rate,
            r.hourglass_ns,
            r.checked_overhead_percent,
            opt(r.gmp_powm_rate),
            opt(r.openssl_mont_rate),
            r.ratio_vs_faster_baseline
                .map(|x| format!("{x:.2}x"))
                .unwrap_or_else(|| "-".into()),
            opt(r.paper_t9900_rate)
        );
    }
    let verify: Vec<String> = rows
        .iter()
        .map(|r| format!("{} bits {:.3} ms", r.bits, r.verify_median_ms))
        .collect();
    println!("solution verification (c^d mod n == m, CRT, blinded, fault-checked; 256-bit d), median of 51: {}", verify.join(", "));
    println!("(hourglass S includes Gerbicz error checking and checkpointing as a real solve runs them; 'checks+ckpt'");
    println!(" is its cost over the bare kernel ({}) on the same length; 'ratio' is hourglass / the faster baseline)", rows.first().map(|r| r.kernel).unwrap_or("-"));
    let probe = Checkpoint {
        context: vec![0; 64],
        block: 1,
        total: 1,
        state: hourglass_arith::squaring::SquaringState {
            done: 0,
            x: Integer::from(1) << 4096u32,
            check: Integer::from(1) << 4096u32,
        },
        aux: Vec::new(),
    };
    let file = CheckpointFile::new(
        std::env::temp_dir().join(format!("hourglass-bench-probe-{}.ckpt", std::process::id())),
        CheckpointKey::ephemeral()?,
    );
    let start = Instant::now();
    for _ in 0..5 {
        file.save(&probe)?;
    }
    let save_ms = start.elapsed().as_secs_f64() * 1e3 / 5.0;
    file.remove();
    println!("one checkpoint write (HMAC, temp file, fsync, rename) takes {save_ms:.2} ms: every 60 s that is {:.4}% of the time", save_ms / 600.0);
    if a.table2 {
        println!("\nTable II: time to compute r = 2^t mod phi(n) at key generation, t = T x S(this machine)");
        for r in &rows {
            for row in &r.table2 {
                println!(
                    "{:>6} bits {:>7}: t = {:>15}  {:>10}   paper {}",
                    r.bits,
                    row.puzzle,
                    row.t,
                    format!("{:.3} ms", row.seconds * 1e3),
                    row.paper_seconds
                        .map(|s| format!("{s} s (t from a 2009 CPU's S)"))
                        .unwrap_or_else(|| "-".into())
                );
            }
        }
    }
    Ok(())
}

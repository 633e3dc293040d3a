//! `hourglass bench squaring`: nanoseconds per sequential modular squaring for each of
//! hourglass's kernels, GMP's `mpz_powm` (exponent 2^k) and OpenSSL's `BN_mod_mul_montgomery`,
//! on the same modulus in the same run, with the distance to a simple model of the multiplier.

use std::time::Instant;

use clap::Args;
use hourglass_arith::entropy::{random_exact_bits, SeededEntropy};
use hourglass_arith::mont::{Kernel, MontContext};
use hourglass_arith::squaring::square_k_times;
use hourglass_arith::Integer;
use serde::Serialize;

use super::openssl_baseline::montgomery_squarings;
use crate::cli_error::CliError;

/// Arguments of `hourglass bench squaring`.
#[derive(Args, Debug)]
pub struct SquaringBenchArgs {
    /// Modulus sizes in bits.
    #[arg(long, value_delimiter = ',', default_value = "1024,2048,3072,4096")]
    bits: Vec<u32>,
    /// Seconds per measurement (each is repeated --repeat times, interleaved; best kept).
    #[arg(long, default_value_t = 0.3)]
    seconds: f64,
    /// Interleaved repetitions.
    #[arg(long, default_value_t = 5)]
    repeat: usize,
    /// Print JSON instead of a table.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Row {
    bits: u32,
    squarings: u64,
    kernels: Vec<(String, f64)>,
    best_kernel: String,
    best_ns: f64,
    gmp_ns: f64,
    openssl_ns: f64,
    speedup_vs_faster_baseline: f64,
    tsc_cycles_per_squaring: Option<f64>,
    model_cycles: f64,
    model_name: String,
}

/// Reads the time-stamp counter (x86-64), for cycles per squaring.
fn cycles() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: RDTSC has no preconditions on x86-64.
        Some(unsafe { std::arch::x86_64::_rdtsc() })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// The model's minimum cycles per Montgomery squaring for `kernel` at `bits`: MULX kernels issue
/// one 64 x 64-bit product per cycle and need `L (L + 1) / 2` for the square plus `L^2` for the
/// reduction; IFMA issues one 8-lane 52 x 52-bit multiply-add per cycle and needs `4 D^2` lane
/// products (low and high halves of `a b` and `m n`, no symmetry) for `D` digits (padded to 8).
fn model(kernel: Kernel, bits: u32) -> (f64, String) {
    match kernel {
        Kernel::X86Ifma => {
            let d = f64::from((bits + 2).div_ceil(52 * 8) * 8);
            (4.0 * d * d / 8.0, format!("IFMA: 4 D^2 / 8, D = {d}"))
        }
        _ => {
            let l = f64::from(bits.div_ceil(64));
            (
                l * (l + 1.0) / 2.0 + l * l,
                format!("MULX: L(L+1)/2 + L^2, L = {l}"),
            )
        }
    }
}

/// Runs `hourglass bench squaring`.
pub fn run(a: SquaringBenchArgs) -> Result<(), CliError> {
    if !(0.01..=60.0).contains(&a.seconds) {
        return Err(CliError::usage("--seconds must be within 0.01..=60"));
    }
    let mut rows = Vec::new();
    for &bits in &a.bits {
        if !(512..=8192).contains(&bits) {
            return Err(CliError::usage(format!(
                "--bits {bits} is outside 512..=8192"
            )));
        }
        let mut rng = SeededEntropy::new(format!("bench squaring {bits}").as_bytes());
        let mut n = random_exact_bits(&mut rng, bits)?;
        n.set_bit(0, true);
        let x = Integer::from(&n / 7u32);
        let ctx = MontContext::new(&n)?;
        let portable = MontContext::new_portable(&n)?;
        let kernels: Vec<Kernel> = [Kernel::X86Ifma, Kernel::X86Adx]
            .into_iter()
            .filter(|k| ctx.supports(*k))
            .collect();
        // Squarings per measurement, from a quick estimate with GMP.
        let start = Instant::now();
        let probe = 2000u64;
        std::hint::black_box(square_k_times(&x, probe, &n));
        let per = start.elapsed().as_secs_f64() / probe as f64;
        let k = ((a.seconds / per) as u64).max(1000);
        let mut best: Vec<f64> = vec![f64::INFINITY; kernels.len() + 1];
        let mut best_cycles: Option<f64> = None;
        let (mut gmp, mut ossl) = (f64::INFINITY, f64::INFINITY);
        let want = square_k_times(&x, k, &n);
        for _ in 0..a.repeat.max(1) {
            for (i, &kernel) in kernels.iter().enumerate() {
                let c0 = cycles();
                let t = Instant::now();
                let y = ctx.square_k_times_with(&x, k, kernel)?;
                let ns = t.elapsed().as_secs_f64() * 1e9 / k as f64;
                if y != want {
                    return Err(CliError::new(format!(
                        "the {kernel} kernel disagrees with GMP"
                    )));
                }
                if ns < best[i] {
                    best[i] = ns;
                    if i == 0 {
                        best_cycles = c0.zip(cycles()).map(|(s, e)| (e - s) as f64 / k as f64);
                    }
                }
            }
            let t = Instant::now();
            let y = portable.square_k_times_with(&x, k / 4, Kernel::Portable)?;
            best[kernels.len()] =
                best[kernels.len()].min(t.elapsed().as_secs_f64() * 1e9 / (k / 4) as f64);
            std::hint::black_box(y);
            let t = Instant::now();
            std::hint::black_box(square_k_times(&x, k, &n));
            gmp = gmp.min(t.elapsed().as_secs_f64() * 1e9 / k as f64);
            let (y, secs) = montgomery_squarings(&n, &x, k)?;
            if y != want {
                return Err(CliError::new("OpenSSL disagrees with GMP"));
            }
            ossl = ossl.min(secs * 1e9 / k as f64);
        }
        let mut names: Vec<String> = kernels.iter().map(|k| k.name().to_string()).collect();
        names.push(Kernel::Portable.name().to_string());
        let (bi, best_ns) = best
            .iter()
            .enumerate()
            .min_by(|x, y| x.1.total_cmp(y.1))
            .map(|(i, &v)| (i, v))
            .unwrap_or((0, f64::NAN));
        let first = kernels.first().copied().unwrap_or(Kernel::Portable);
        let (model_cycles, model_name) = model(first, bits);
        rows.push(Row {
            bits,
            squarings: k,
            kernels: names.iter().cloned().zip(best.iter().copied()).collect(),
            best_kernel: names[bi].clone(),
            best_ns,
            gmp_ns: gmp,
            openssl_ns: ossl,
            speedup_vs_faster_baseline: gmp.min(ossl) / best_ns,
            tsc_cycles_per_squaring: best_cycles,
            model_cycles,
            model_name,
        });
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({
                "openssl_version": super::openssl_baseline::version(),
                "sizes": rows,
            }))
            .unwrap_or_default()
        );
        return Ok(());
    }
    println!(
        "ns per sequential modular squaring, best of {} interleaved runs ({})",
        a.repeat,
        super::openssl_baseline::version()
    );
    println!(
        "  bits | {:<40} | {:>9} {:>9} | {:>8} | cycles (TSC) vs model",
        "hourglass kernels (best first)", "GMP powm", "OpenSSL", "speedup"
    );
    for r in &rows {
        let mut ks: Vec<_> = r.kernels.clone();
        ks.sort_by(|x, y| x.1.total_cmp(&y.1));
        let kernels = ks
            .iter()
            .map(|(n, v)| format!("{n} {v:.0}"))
            .collect::<Vec<_>>()
            .join(", ");
        let cyc = r
            .tsc_cycles_per_squaring
            .map(|c| {
                format!(
                    "{c:.0} vs {:.0} ({:.0}% of peak; {})",
                    r.model_cycles,
                    100.0 * r.model_cycles / c,
                    r.model_name
                )
            })
            .unwrap_or_else(|| "-".into());
        println!(
            "  {:>4} | {:<40} | {:>9.0} {:>9.0} | {:>7.2}x | {}",
            r.bits, kernels, r.gmp_ns, r.openssl_ns, r.speedup_vs_faster_baseline, cyc
        );
    }
    println!("speedup = the faster of GMP and OpenSSL over hourglass's best kernel (target: 1.3x at every size)");
    Ok(())
}

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

use crate::openssl_baseline::montgomery_squarings;
use crate::{Disagreement, Error, Result};

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
    /// No progress messages on standard error (the tables still print).
    #[arg(long, conflicts_with = "json")]
    quiet: bool,
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
    model_cycles: Option<f64>,
    model_name: Option<String>,
}

/// Reads the time-stamp counter (x86-64), for cycles per squaring.
fn cycles() -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    {
        Some(hourglass_arith::mont::peak::cycles())
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        None
    }
}

/// Multiplier instructions one Montgomery squaring of `kernel` issues for `ctx`'s modulus, the
/// measured peak rate of that instruction (per counter cycle), and a description. MULX kernels
/// need `L (L + 1) / 2` 64-bit products for the square and `L^2` for the reduction; the IFMA
/// kernel issues the multiply-adds [`square_multiply_adds`](hourglass_arith::mont::ifma::IfmaContext::square_multiply_adds) counts for `D` digits
/// in `V` vectors (low and high halves of `m n` per vector in each of its `D` steps, and of
/// `a a_i` from the vector holding digit `i` up: each cross product once), at the rate measured
/// for zmm.
fn model(kernel: Kernel, ctx: &MontContext) -> Option<(f64, f64, String)> {
    #[cfg(target_arch = "x86_64")]
    {
        let peak = hourglass_arith::mont::peak::measure();
        match kernel {
            Kernel::X86Ifma => {
                let ifma = ctx.ifma()?;
                let (lanes, vectors) = ifma.shape();
                let d = ifma.steps() as f64;
                let per = peak.ifma_per_cycle?;
                Some((
                    ifma.square_multiply_adds() as f64,
                    per,
                    format!(
                        "{} IFMA ops (2 D V + a a_i from digit i up), D = {d}, V = {vectors} x \
                         {lanes} lanes, peak {per:.2}/cycle",
                        ifma.square_multiply_adds()
                    ),
                ))
            }
            _ => {
                let l = ctx.limbs() as f64;
                let per = peak.mul64_per_cycle?;
                Some((
                    l * (l + 1.0) / 2.0 + l * l,
                    per,
                    format!("L(L+1)/2 + L^2 products, L = {l}, peak {per:.2}/cycle"),
                ))
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (kernel, ctx);
        None
    }
}

/// Runs `hourglass bench squaring`.
pub fn run(a: SquaringBenchArgs) -> Result<()> {
    if !a.json {
        crate::machine::print_line();
    }
    if !(0.01..=60.0).contains(&a.seconds) {
        return Err(Error::SecondsOutOfRange {
            min: 0.01,
            max: 60.0,
        });
    }
    let mut rows = Vec::new();
    for &bits in &a.bits {
        if !(512..=8192).contains(&bits) {
            return Err(Error::BitsOutOfRange {
                bits,
                min: 512,
                max: 8192,
            });
        }
        let mut rng = SeededEntropy::new(format!("bench squaring {bits}").as_bytes());
        let mut n = random_exact_bits(&mut rng, bits)?;
        n.set_bit(0, true);
        let x = Integer::from(&n / 7u32);
        let ctx = MontContext::new(&n)?;
        let portable = MontContext::new_portable(&n)?;
        // The kernel the solver uses first (the cycle model describes it), then the others.
        let mut kernels: Vec<Kernel> = Vec::new();
        for k in [ctx.kernel(), Kernel::X86Ifma, Kernel::X86Adx] {
            if k != Kernel::Portable && ctx.supports(k) && !kernels.contains(&k) {
                kernels.push(k);
            }
        }
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
                    return Err(Error::Disagreement(Disagreement::Kernel(kernel)));
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
                return Err(Error::Disagreement(Disagreement::OpensslGmp));
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
        let modelled = model(first, &ctx);
        let model_cycles = modelled.as_ref().map(|(ops, per, _)| ops / per);
        let model_name = modelled.map(|(_, _, name)| format!("{}: {name}", first.name()));
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
                "openssl_version": crate::openssl_baseline::version(),
                "sizes": rows,
            }))
            .unwrap_or_default()
        );
        return Ok(());
    }
    println!(
        "ns per sequential modular squaring, best of {} interleaved runs ({})",
        a.repeat,
        crate::openssl_baseline::version()
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
        let cyc = match (r.tsc_cycles_per_squaring, r.model_cycles, &r.model_name) {
            (Some(c), Some(m), Some(name)) => {
                format!("{c:.0} vs {m:.0} ({:.0}% of peak; {name})", 100.0 * m / c)
            }
            _ => "-".into(),
        };
        println!(
            "  {:>4} | {:<40} | {:>9.0} {:>9.0} | {:>7.2}x | {}",
            r.bits, kernels, r.gmp_ns, r.openssl_ns, r.speedup_vs_faster_baseline, cyc
        );
    }
    println!("speedup = the faster of GMP and OpenSSL over hourglass's best kernel (target: 1.3x at every size)");
    println!("cycles: time-stamp-counter cycles per squaring of the kernel the solver uses at that size,");
    println!(
        "against the multiplier instructions it must issue at the peak rate measured just now"
    );
    Ok(())
}

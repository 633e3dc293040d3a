//! Timing independence of the constant-time exponentiation, dudect-style (Reparaz, Balasch and
//! Verbauwhede, "Dude, is my code constant time?", 2017): two classes of secret exponent of
//! very different weight (all ones, and a single top bit) are timed on random bases in random
//! interleaved order, the slowest tenth of the pooled samples is cropped, and Welch's t
//! statistic between the classes must stay below 10 (dudect's "definitely not constant time"
//! line). The same statistic on GMP's variable-time `mpz_powm` must exceed it, so the test can
//! fail. The other secrets of a private operation (the blinding pair's products, the CRT
//! recombination) are tested the same way, each against GMP's variable-time arithmetic on the
//! same classes. The time is measured, never asserted.
//!
//! Longer runs (more samples, a smaller detectable difference):
//! `HOURGLASS_DUDECT_SAMPLES=200000 cargo test --release -p hourglass-arith --test ct_timing -- --nocapture`.

use std::time::Instant;

use hourglass_arith::entropy::{random_below, random_exact_bits, random_u64, SeededEntropy};
use hourglass_arith::modular::{pow_mod_ct, pow_mod_ct_pair, pow_mod_u64_ct, CtCrt, CtModulus};
use rug::Integer;

/// Welch's t between two samples, after cropping the slowest 10% of the pooled samples.
fn welch_t(a: &[f64], b: &[f64]) -> f64 {
    let mut pooled: Vec<f64> = a.iter().chain(b).copied().collect();
    pooled.sort_by(f64::total_cmp);
    let cut = pooled[pooled.len() * 9 / 10];
    let stats = |v: &[f64]| {
        let v: Vec<f64> = v.iter().copied().filter(|&x| x <= cut).collect();
        let n = v.len() as f64;
        let mean = v.iter().sum::<f64>() / n;
        let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
        (mean, var, n)
    };
    let (ma, va, na) = stats(a);
    let (mb, vb, nb) = stats(b);
    (ma - mb) / (va / na + vb / nb).sqrt()
}

/// Times `f(class, base)` for random classes and bases; returns the two classes' samples (ns).
fn measure(
    samples: usize,
    n: &Integer,
    f: impl Fn(bool, &Integer) -> Integer,
) -> (Vec<f64>, Vec<f64>) {
    let mut rng = SeededEntropy::new(b"dudect");
    let (mut heavy, mut light) = (Vec::new(), Vec::new());
    for _ in 0..samples {
        let class = random_u64(&mut rng).unwrap() & 1 == 1;
        let base = random_below(&mut rng, n).unwrap();
        let t = Instant::now();
        std::hint::black_box(f(class, &base));
        let ns = t.elapsed().as_nanos() as f64;
        if class {
            heavy.push(ns)
        } else {
            light.push(ns)
        }
    }
    (heavy, light)
}

/// Samples per class pair: `HOURGLASS_DUDECT_SAMPLES`, 4000 by default.
fn samples() -> usize {
    std::env::var("HOURGLASS_DUDECT_SAMPLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4000)
}

#[test]
fn secret_exponent_weight_does_not_show_in_the_time() {
    let samples = samples();
    let bits = 1024;
    let mut rng = SeededEntropy::new(b"dudect modulus");
    let n = random_exact_bits(&mut rng, bits).unwrap() | 1u32;
    let heavy_exp = (Integer::from(1) << bits) - 1u32; // all ones
    let light_exp = Integer::from(1) << (bits - 1); // one bit, same length
    let exp = |heavy: bool| if heavy { &heavy_exp } else { &light_exp };

    // Warm up (caches, frequency), then measure.
    measure(samples / 10, &n, |h, b| pow_mod_ct(b, exp(h), &n).unwrap());
    let (a, b) = measure(samples, &n, |h, b| pow_mod_ct(b, exp(h), &n).unwrap());
    let t_ct = welch_t(&a, &b);
    // As many samples as the subject: with a quarter, a noisy neighbour on a shared machine
    // once pulled the control's |t| under the line (a failure of the test, not of the code).
    let (a, b) = measure(samples, &n, |h, b| {
        Integer::from(b.pow_mod_ref(exp(h), &n).unwrap())
    });
    let t_vartime = welch_t(&a, &b);
    judge(
        "pow_mod_ct",
        &format!("{samples} samples at {bits} bits"),
        t_ct,
        t_vartime,
    );
}

/// Prints both statistics and asserts the verdicts: the variable-time control must tell the two
/// classes of secret apart (|t| above 10, so the test can fail) and the subject must not.
fn judge(subject: &str, setting: &str, t_ct: f64, t_vartime: f64) {
    eprintln!(
        "dudect, {setting}: |t| = {:.2} for {subject}, {:.1} for the variable-time control",
        t_ct.abs(),
        t_vartime.abs()
    );
    assert!(
        t_vartime.abs() > 10.0,
        "the variable-time control should tell the two classes apart: |t| = {t_vartime:.1}"
    );
    assert!(
        t_ct.abs() < 10.0,
        "{subject}'s time depends on the secret's class: |t| = {t_ct:.2}"
    );
}

/// The two CRT halves' exponentiations interleaved (`pow_mod_ct_pair`, RSA's private
/// operation): one secret exponent heavy or light, the other random, on two moduli.
#[test]
fn paired_exponent_weight_does_not_show_in_the_time() {
    let samples = samples();
    let bits = 1024;
    let mut rng = SeededEntropy::new(b"dudect pair");
    let p = random_exact_bits(&mut rng, bits).unwrap() | 1u32;
    let q = random_exact_bits(&mut rng, bits).unwrap() | 1u32;
    let heavy_exp = (Integer::from(1) << bits) - 1u32;
    let light_exp = Integer::from(1) << (bits - 1);
    let other = random_exact_bits(&mut rng, bits).unwrap();
    let run = |heavy: bool, b: &Integer| {
        let e = if heavy { &heavy_exp } else { &light_exp };
        let [x, _] = pow_mod_ct_pair([b, b], [e, &other], [&p, &q], bits).unwrap();
        x
    };
    measure(samples / 10, &p, run);
    let (a, b) = measure(samples, &p, run);
    let t = welch_t(&a, &b);
    eprintln!(
        "dudect, {samples} samples at {bits} bits: |t| = {:.2} for pow_mod_ct_pair",
        t.abs()
    );
    assert!(
        t.abs() < 10.0,
        "pow_mod_ct_pair's time depends on the exponent's weight: |t| = {t:.2}"
    );
}

/// The fault check's 64-bit exponentiation (`pow_mod_u64_ct`, `x^(d mod (t - 1)) mod t` for a
/// secret prime `t`): an exponent of 64 ones against one of a single bit, on random bases; GMP's
/// `mpz_powm` on the same 64-bit numbers is the control that must show the difference.
#[test]
fn the_64_bit_exponent_weight_does_not_show_in_the_time() {
    let samples = samples();
    let n: u64 = 18446744073709551557; // the largest 64-bit prime
    let modulus = Integer::from(n);
    let exp = |heavy: bool| if heavy { u64::MAX } else { 1 << 63 };
    let run = |heavy: bool, b: &Integer| {
        // Many calls per sample: one takes about a microsecond, near the clock's resolution.
        let mut x = b.to_u64_wrapping();
        for _ in 0..16 {
            x = pow_mod_u64_ct(x, exp(heavy), n).unwrap();
        }
        Integer::from(x)
    };
    measure(samples / 10, &modulus, run);
    let (a, b) = measure(samples, &modulus, run);
    let t_ct = welch_t(&a, &b);
    let (a, b) = measure(samples, &modulus, |heavy, b| {
        let e = Integer::from(exp(heavy));
        let mut x = b.clone();
        for _ in 0..16 {
            x = Integer::from(x.pow_mod_ref(&e, &modulus).unwrap());
        }
        x
    });
    let t_vartime = welch_t(&a, &b);
    judge(
        "pow_mod_u64_ct",
        &format!("{samples} samples at 64 bits"),
        t_ct,
        t_vartime,
    );
}

/// The products of an RSA key's blinding and unblinding (`CtModulus::mul` by a kept secret
/// factor, then the factor squared for the next use, modulo the public `n`): the factor
/// `R^-1 mod n`, whose Montgomery digits are 1, 0, 0, ... (`R = 2^(52 D)` on IFMA, `2^(64 L)`
/// without), against a random factor, on random values. The control is GMP's product and
/// division with the factor 1 against the same random one (GMP's time follows the plain
/// value's length; `R^-1` is as long as any other value).
#[test]
fn the_blinding_factor_does_not_show_in_the_time() {
    let samples = samples();
    let bits = 2048;
    let mut rng = SeededEntropy::new(b"dudect blinding");
    let n = random_exact_bits(&mut rng, bits).unwrap() | 1u32;
    let modulus = CtModulus::new(&n).unwrap();
    let r_bits = if hourglass_arith::mont::ifma::available() {
        52 * (bits + 2).div_ceil(52)
    } else {
        64 * bits.div_ceil(64)
    };
    let r_inv = Integer::from((Integer::from(1) << r_bits).invert_ref(&n).unwrap());
    let values = [random_below(&mut rng, &n).unwrap(), r_inv];
    let factors = values.each_ref().map(|v| modulus.factor(v).unwrap());
    // Several products per sample: one takes about a microsecond.
    let run = |heavy: bool, x: &Integer| {
        let mut f = factors[usize::from(!heavy)].clone();
        let mut x = x.clone();
        for _ in 0..4 {
            x = modulus.mul(&x, &f).unwrap();
            f = modulus.square(&f).unwrap();
        }
        x
    };
    measure(samples / 10, &n, run);
    let (a, b) = measure(samples, &n, run);
    let t_ct = welch_t(&a, &b);
    let plain = [values[0].clone(), Integer::from(1)];
    let (a, b) = measure(samples, &n, |heavy, x| {
        let mut f = plain[usize::from(!heavy)].clone();
        let mut x = x.clone();
        for _ in 0..4 {
            x = Integer::from(&x * &f) % &n;
            f = Integer::from(&f * &f) % &n;
        }
        x
    });
    let t_vartime = welch_t(&a, &b);
    judge(
        "CtModulus::mul and square",
        &format!("{samples} samples at {bits} bits"),
        t_ct,
        t_vartime,
    );
}

/// The CRT recombination of an RSA private operation (`CtCrt::combine`, Garner's formula with
/// the secret primes), on two classes of halves that differ where a leak would be: `sp >= sq`
/// with a short difference (`sq = sp - (sp >> 512)`: the correction by `p` never taken, the
/// products short in GMP's arithmetic) against `sp < sq` with a full-length difference (the
/// correction always taken). The halves are made before the clock starts. Both classes give
/// results of full length (a zero difference would give `m = sq`, shorter, and the conversion
/// to GMP's integers takes time by length). The control is the same formula in GMP's
/// arithmetic.
#[test]
fn the_crt_halves_do_not_show_in_the_recombination_time() {
    let samples = samples();
    let bits = 1024;
    let mut rng = SeededEntropy::new(b"dudect crt");
    let p = random_exact_bits(&mut rng, bits).unwrap() | 1u32;
    // A stand-in for the other prime, of the same length and above p.
    let q = loop {
        let q = random_exact_bits(&mut rng, bits).unwrap() | 1u32;
        if q > p && Integer::from(q.gcd_ref(&p)) == 1 {
            break q;
        }
    };
    let qinv = Integer::from(q.invert_ref(&p).unwrap());
    let crt = CtCrt::new(&p, &q, &qinv).unwrap();
    // Halves in [p/4, p), so that neither is short; (class, sp, sq) for every sample.
    let quarter = Integer::from(&p >> 2u32);
    let span = Integer::from(&p - &quarter);
    let inputs: Vec<(bool, Integer, Integer)> = (0..samples + samples / 10)
        .map(|_| {
            let short = random_u64(&mut rng).unwrap() & 1 == 1;
            let u = random_below(&mut rng, &span).unwrap() + &quarter;
            let v = random_below(&mut rng, &span).unwrap() + &quarter;
            let (lo, hi) = if u < v { (u, v) } else { (v, u) };
            if short {
                let sq = &hi - Integer::from(&hi >> (bits / 2));
                (true, hi, sq)
            } else {
                (false, lo, hi)
            }
        })
        .collect();
    // Several recombinations per sample: one takes about a microsecond. The first tenth warms
    // up (caches, frequency) and is not counted.
    let time = |f: &dyn Fn(&Integer, &Integer) -> Integer| {
        let (mut short, mut long) = (Vec::new(), Vec::new());
        for (i, (class, sp, sq)) in inputs.iter().enumerate() {
            let t = Instant::now();
            for _ in 0..4 {
                std::hint::black_box(f(sp, sq));
            }
            let ns = t.elapsed().as_nanos() as f64;
            if i >= samples / 10 {
                if *class {
                    short.push(ns)
                } else {
                    long.push(ns)
                }
            }
        }
        welch_t(&short, &long)
    };
    let t_ct = time(&|sp, sq| crt.combine(sp, sq).unwrap());
    let t_vartime = time(&|sp, sq| {
        let mut h = Integer::from(sp - sq) * &qinv;
        h.modulo_mut(&p);
        h * &q + sq
    });
    judge(
        "CtCrt::combine",
        &format!("{samples} samples at {bits}-bit halves"),
        t_ct,
        t_vartime,
    );
}

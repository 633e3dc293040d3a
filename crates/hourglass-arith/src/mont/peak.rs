//! Measured peak throughput of this CPU's multipliers, in time-stamp-counter cycles: the
//! "distance to the limit" of the squaring kernels (`hourglass bench squaring`).
//!
//! Each measurement runs many independent multiplications (eight chains, so latency never
//! limits), so the rate is the multiplier's issue rate. Kernels are timed with the same counter,
//! so a turbo clock above the counter's rate cancels out.

use std::arch::x86_64::*;

/// Independent multiplications per second's worth of counter cycles.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MultiplierPeak {
    /// 64 x 64 -> 128-bit MULX products per counter cycle, if the CPU has BMI2.
    pub mul64_per_cycle: Option<f64>,
    /// 8-lane 52-bit IFMA instructions per counter cycle, if the CPU has IFMA.
    pub ifma_per_cycle: Option<f64>,
}

/// Eight independent chains of MULX (`lo = lo(c * lo)`), `iterations` times each.
///
/// # Safety
/// The CPU must support BMI2.
#[target_feature(enable = "bmi2")]
unsafe fn mul64_chains(iterations: u64, seed: u64) -> u64 {
    let mut v = [
        seed,
        seed ^ 1,
        seed ^ 2,
        seed ^ 3,
        seed ^ 4,
        seed ^ 5,
        seed ^ 6,
        seed ^ 7,
    ];
    // SAFETY: plain register arithmetic; MULX needs BMI2 (the caller's contract).
    unsafe {
        std::arch::asm!(
            "2:",
            "mulx {hi}, {a0}, {a0}",
            "mulx {hi}, {a1}, {a1}",
            "mulx {hi}, {a2}, {a2}",
            "mulx {hi}, {a3}, {a3}",
            "mulx {hi}, {a4}, {a4}",
            "mulx {hi}, {a5}, {a5}",
            "mulx {hi}, {a6}, {a6}",
            "mulx {hi}, {a7}, {a7}",
            "dec {n}",
            "jnz 2b",
            n = inout(reg) iterations.max(1) => _,
            hi = out(reg) _,
            a0 = inout(reg) v[0], a1 = inout(reg) v[1], a2 = inout(reg) v[2], a3 = inout(reg) v[3],
            a4 = inout(reg) v[4], a5 = inout(reg) v[5], a6 = inout(reg) v[6], a7 = inout(reg) v[7],
            in("rdx") 0x9e37_79b9_7f4a_7c15u64,
            options(nomem, nostack),
        );
    }
    v.iter().fold(0, |a, b| a ^ b)
}

/// # Safety
/// The CPU must support AVX-512F and IFMA.
#[target_feature(enable = "avx512f,avx512ifma")]
unsafe fn ifma_chains(iterations: u64, seed: u64) -> u64 {
    let a = _mm512_set1_epi64(seed as i64 & 0xf_ffff_ffff_ffff);
    let b = _mm512_set1_epi64(0x3_1415_9265_3589);
    let mut acc = [_mm512_set1_epi64(seed as i64); 8];
    for _ in 0..iterations {
        for v in acc.iter_mut() {
            *v = _mm512_madd52lo_epu64(*v, a, b);
        }
    }
    let mut x = acc[0];
    for v in &acc[1..] {
        x = _mm512_xor_si512(x, *v);
    }
    _mm512_reduce_add_epi64(x) as u64
}

fn per_cycle(ops: u64, f: impl Fn() -> u64) -> f64 {
    let mut best = f64::INFINITY;
    for _ in 0..5 {
        // SAFETY: RDTSC has no preconditions on x86-64.
        let start = unsafe { _rdtsc() };
        std::hint::black_box(f());
        // SAFETY: as above.
        let cycles = (unsafe { _rdtsc() } - start) as f64;
        best = best.min(cycles);
    }
    ops as f64 / best
}

/// Measures the peaks (about 50 ms).
pub fn measure() -> MultiplierPeak {
    let iterations = 2_000_000u64;
    let seed = std::hint::black_box(0x1234_5678_9abc_def1u64);
    MultiplierPeak {
        mul64_per_cycle: std::arch::is_x86_feature_detected!("bmi2").then(|| {
            per_cycle(8 * iterations, || {
                // SAFETY: BMI2 availability checked just above.
                unsafe { mul64_chains(iterations, seed) }
            })
        }),
        ifma_per_cycle: super::ifma::available().then(|| {
            per_cycle(8 * iterations, || {
                // SAFETY: IFMA availability checked just above.
                unsafe { ifma_chains(iterations, seed) }
            })
        }),
    }
}

/// The time-stamp counter.
pub fn cycles() -> u64 {
    // SAFETY: RDTSC has no preconditions on x86-64.
    unsafe { _rdtsc() }
}

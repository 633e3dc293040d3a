//! Differential tests of the Montgomery squaring kernels against GMP.
//!
//! Every case runs through the portable kernel and, where the CPU and the size allow it, the
//! x86-64 ADX kernel, and must equal `squaring::square_k_times` (GMP `mpz_powm` with exponent
//! `2^k`). All inputs come from a seeded generator, so failures reproduce.

use hourglass_arith::entropy::{random_below, random_exact_bits, SeededEntropy};
use hourglass_arith::mont::{Kernel, MontContext};
use hourglass_arith::squaring::square_k_times;
use hourglass_arith::Integer;

/// Size classes: every assembly kernel (512..4096 bits), sizes that need padding, and sizes
/// only the portable kernel handles.
const BITS: &[u32] = &[
    512, 1000, 1024, 1025, 1536, 2000, 2047, 2048, 2560, 3072, 3584, 4096, 4097, 6144, 8192,
];

fn rng(label: &str) -> SeededEntropy {
    SeededEntropy::new(format!("mont differential {label}").as_bytes())
}

fn odd_modulus(rng: &mut SeededEntropy, bits: u32) -> Integer {
    let mut n = random_exact_bits(rng, bits).unwrap();
    n.set_bit(0, true);
    n
}

/// The kernels to try for `ctx`: always the portable one, plus ADX and IFMA when they can run.
fn kernels(ctx: &MontContext) -> Vec<Kernel> {
    let mut k = vec![Kernel::Portable];
    for fast in [Kernel::X86Adx, Kernel::X86Ifma] {
        if ctx.supports(fast) {
            k.push(fast);
        }
    }
    k
}

/// Checks `x^(2^k) mod n` with both contexts (padded for ADX, and portable-only) and every
/// kernel each supports.
fn check(n: &Integer, x: &Integer, k: u64, what: &str) {
    let want = square_k_times(x, k, n);
    let contexts = [
        MontContext::new(n).unwrap(),
        MontContext::new_portable(n).unwrap(),
    ];
    for ctx in &contexts {
        for kernel in kernels(ctx) {
            let got = ctx.square_k_times_with(x, k, kernel).unwrap();
            assert_eq!(
                got,
                want,
                "{what}: {} bits, {} limbs, kernel {kernel}, k = {k}",
                n.significant_bits(),
                ctx.limbs()
            );
        }
    }
}

#[test]
fn random_inputs_at_every_size() {
    let mut rng = rng("random");
    for &bits in BITS {
        for _ in 0..4 {
            let n = odd_modulus(&mut rng, bits);
            let x = random_below(&mut rng, &n).unwrap();
            for k in [1u64, 2, 5, 64] {
                check(&n, &x, k, "random");
            }
        }
    }
}

#[test]
fn edge_operands() {
    let mut rng = rng("edges");
    for &bits in BITS {
        let n = odd_modulus(&mut rng, bits);
        let ctx = MontContext::new(&n).unwrap();
        let r = Integer::from(1) << (64 * ctx.limbs() as u32);
        let r_inv = Integer::from(r.invert_ref(&n).unwrap());
        let word = Integer::from(1) << 64;
        let candidates = [
            Integer::new(),
            Integer::from(1),
            Integer::from(2),
            Integer::from(&n - 1u32),
            Integer::from(&n - 2u32),
            Integer::from(&n >> 1u32),
            // Around the Montgomery radix (reduced modulo n by the API).
            Integer::from(&r - 1u32),
            r.clone(),
            Integer::from(&r + 1u32),
            // Operands whose Montgomery form is 1, n - 1, 2^64 - 1 and R - 1 mod n.
            r_inv.clone(),
            Integer::from(&n - 1u32) * &r_inv % &n,
            Integer::from(&word - 1u32) * &r_inv % &n,
            Integer::from(&r - 1u32) * &r_inv % &n,
            // n itself and a multiple of n (both reduce to 0), and a negative operand.
            n.clone(),
            Integer::from(&n * 3u32),
            Integer::from(-7),
        ];
        for x in &candidates {
            for k in [0u64, 1, 2, 3, 10] {
                check(&n, x, k, "edge operand");
            }
        }
    }
}

/// Moduli with special limb patterns at every size class: all-ones limbs, sparse limbs, the
/// smallest and largest odd moduli with that many limbs.
fn special_moduli(bits: u32) -> Vec<Integer> {
    let one = Integer::from(1);
    let top = Integer::from(&one << (bits - 1));
    let limbs = bits.div_ceil(64);
    let mut v = vec![
        // All ones: 2^bits - 1.
        Integer::from(&one << bits) - 1u32,
        // Sparse: top bit and bit 0.
        Integer::from(&top + 1u32),
        // Sparse: top, middle and low bits.
        (&top + Integer::from(&one << (bits / 2))) + 1u32,
        // Alternating all-ones and zero limbs.
        (0..limbs)
            .filter(|i| i % 2 == 0)
            .fold(Integer::new(), |acc, i| {
                acc + ((Integer::from(&one << 64u32) - 1u32) << (64 * i))
            })
            .keep_bits(bits)
            | Integer::from(&top + 1u32),
        // Top limb all ones, the rest zero but the last bit.
        (Integer::from(&one << bits) - Integer::from(&one << (bits - 64))) + 1u32,
    ];
    if bits.is_multiple_of(64) {
        // Smallest odd modulus that needs this many limbs.
        v.push(Integer::from(&one << (bits - 64)) + 1u32);
    }
    v
}

#[test]
fn special_moduli_at_every_size() {
    let mut rng = rng("special moduli");
    for &bits in BITS {
        for n in special_moduli(bits) {
            assert!(n.is_odd());
            let x = random_below(&mut rng, &n).unwrap();
            for k in [1u64, 3, 20] {
                check(&n, &x, k, "special modulus");
                check(
                    &n,
                    &Integer::from(&n - 1u32),
                    k,
                    "special modulus, x = n - 1",
                );
            }
        }
    }
}

#[test]
fn smallest_and_largest_moduli() {
    // The extremes of the accepted range and of the kernel sizes.
    let one = Integer::from(1);
    let mut moduli = vec![
        Integer::from(3),
        Integer::from(u64::MAX),
        Integer::from(&one << 64u32) + 1u32,
        Integer::from(&one << 8192u32) - 1u32,
    ];
    for limbs in [8u32, 16, 24, 32, 40, 48, 56, 64] {
        moduli.push(Integer::from(&one << (64 * limbs)) - 1u32);
        moduli.push(Integer::from(&one << (64 * limbs - 1)) + 1u32);
        moduli.push(Integer::from(&one << (64 * (limbs - 1))) + 1u32);
    }
    for n in &moduli {
        for x in [
            Integer::from(2),
            Integer::from(n - 1u32),
            Integer::from(n >> 1u32),
        ] {
            check(n, &x, 7, "extreme modulus");
        }
    }
}

/// Long chains: the kernels keep their values in Montgomery form for the whole chain, so a
/// single wrong carry anywhere shows up here.
/// The squaring issue's check: chains of 10^6 squarings at 1024, 2048, 3072 and 4096 bits equal
/// GMP's `pow_mod`, for every kernel this CPU runs, the portable fallback included.
#[test]
fn million_squaring_chains_match_gmp_at_every_size() {
    let mut rng = rng("million chains");
    for &bits in &[1024u32, 2048, 3072, 4096] {
        let n = odd_modulus(&mut rng, bits);
        let x = random_below(&mut rng, &n).unwrap();
        let k = 1_000_000;
        let want = square_k_times(&x, k, &n);
        let ctx = MontContext::new(&n).unwrap();
        for kernel in kernels(&ctx) {
            assert_eq!(
                ctx.square_k_times_with(&x, k, kernel).unwrap(),
                want,
                "{bits} bits, kernel {kernel}"
            );
        }
    }
}

#[test]
fn long_chains_match_gmp() {
    let mut rng = rng("long chains");
    for &bits in &[512u32, 1024, 1536, 2048, 2560, 3072, 3584, 4096] {
        let n = odd_modulus(&mut rng, bits);
        let x = random_below(&mut rng, &n).unwrap();
        let k = 100_000;
        let want = square_k_times(&x, k, &n);
        let ctx = MontContext::new(&n).unwrap();
        for kernel in kernels(&ctx) {
            // The portable kernel gets a shorter chain above 2048 bits to keep the test fast;
            // it is checked at full length at the smaller sizes.
            let k_here = if kernel == Kernel::Portable && bits > 2048 {
                20_000
            } else {
                k
            };
            let want_here = if k_here == k {
                want.clone()
            } else {
                square_k_times(&x, k_here, &n)
            };
            assert_eq!(
                ctx.square_k_times_with(&x, k_here, kernel).unwrap(),
                want_here,
                "{bits} bits, kernel {kernel}, k = {k_here}"
            );
        }
    }
}

#[test]
fn long_chains_above_the_kernel_sizes() {
    let mut rng = rng("long chains, portable only");
    for &bits in &[4097u32, 6144, 8192] {
        let n = odd_modulus(&mut rng, bits);
        let x = random_below(&mut rng, &n).unwrap();
        let ctx = MontContext::new(&n).unwrap();
        assert!(!ctx.supports(Kernel::X86Adx));
        for kernel in kernels(&ctx) {
            assert_eq!(
                ctx.square_k_times_with(&x, 2_000, kernel).unwrap(),
                square_k_times(&x, 2_000, &n),
                "{bits} bits, kernel {kernel}"
            );
        }
        let k = 2_000;
        assert_eq!(ctx.square_k_times(&x, k), square_k_times(&x, k, &n));
    }
}

#[test]
fn montgomery_form_round_trips() {
    let mut rng = rng("round trip");
    for &bits in BITS {
        let n = odd_modulus(&mut rng, bits);
        let ctx = MontContext::new(&n).unwrap();
        for _ in 0..10 {
            let x = random_below(&mut rng, &n).unwrap();
            let a = ctx.to_montgomery(&x);
            assert_eq!(a.len(), ctx.limbs());
            assert_eq!(ctx.from_montgomery(&a), x);
        }
    }
}

#[test]
fn square_in_place_composes() {
    // k squarings in one call equal the same squarings split over several calls.
    let mut rng = rng("composition");
    let n = odd_modulus(&mut rng, 2048);
    let x = random_below(&mut rng, &n).unwrap();
    let ctx = MontContext::new(&n).unwrap();
    for kernel in kernels(&ctx) {
        let mut whole = ctx.to_montgomery(&x);
        ctx.square_in_place(&mut whole, 1000, kernel).unwrap();
        let mut parts = ctx.to_montgomery(&x);
        for k in [1u64, 10, 100, 389, 500] {
            ctx.square_in_place(&mut parts, k, kernel).unwrap();
        }
        assert_eq!(whole, parts, "kernel {kernel}");
    }
}

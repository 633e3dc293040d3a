//! Constant-time modular exponentiation with a full-length secret exponent: the IFMA
//! fixed-window code against GMP's `mpz_powm_sec`, per modulus size (the CRT halves of RSA-1024,
//! -2048, -3072 and -4096 are 512, 1024, 1536 and 2048 bits). Prints the median time of each and
//! the ratio, then two exponentiations (two moduli of one size, as the halves of an RSA CRT
//! private operation) by GMP, one after the other on IFMA, and by `pow_ct_pair`, which
//! interleaves them where that pays. The small sizes show where GMP stays the faster choice
//! (`modular::pow_mod_ct_bits` and `pow_mod_ct_pair` follow these crossovers).
//!
//! `cargo run --release -p hourglass-arith --example ctexp [--features host-gmp] [RUNS]`

use std::time::Instant;

use hourglass_arith::entropy::{random_below, random_exact_bits, SeededEntropy};
use hourglass_arith::mont::ifma::IfmaContext;
use rug::Integer;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(201);
    let mut rng = SeededEntropy::new(b"ctexp example");
    println!("bits  gmp_powm_sec_us  ifma_fixed_window_us  speedup");
    for bits in [576u32, 640, 704, 768, 832, 1024, 1536, 2048, 3072, 4096] {
        let n = random_exact_bits(&mut rng, bits).unwrap() | 1u32;
        let Some(ctx) = IfmaContext::new(&n) else {
            println!("{bits}: no AVX-512 IFMA on this CPU");
            return;
        };
        let e = random_exact_bits(&mut rng, bits).unwrap();
        let x = random_below(&mut rng, &n).unwrap();
        let (mut gmp, mut ours) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let t = Instant::now();
            let a = Integer::from(x.secure_pow_mod_ref(&e, &n));
            gmp.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            let b = ctx.pow_ct(&x, &e, bits);
            ours.push(t.elapsed().as_secs_f64() * 1e6);
            assert_eq!(a, b);
        }
        let (g, o) = (median(gmp), median(ours));
        println!("{bits:4}  {g:15.1}  {o:20.1}  {:7.2}x", g / o);
    }
    println!("bits  two_gmp_us  two_pow_ct_us  pow_ct_pair_us  pair_vs_gmp  pair_vs_two");
    for bits in [512u32, 520, 576, 640, 768, 1024, 1536, 2048, 3072] {
        let p = random_exact_bits(&mut rng, bits).unwrap() | 1u32;
        let q = random_exact_bits(&mut rng, bits).unwrap() | 1u32;
        let (Some(cp), Some(cq)) = (IfmaContext::new(&p), IfmaContext::new(&q)) else {
            return;
        };
        let (ep, eq) = (
            random_exact_bits(&mut rng, bits).unwrap(),
            random_exact_bits(&mut rng, bits).unwrap(),
        );
        let x = random_below(&mut rng, &p).unwrap();
        let (mut gmp, mut apart, mut paired) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let t = Instant::now();
            let g = [
                Integer::from(x.secure_pow_mod_ref(&ep, &p)),
                Integer::from(x.secure_pow_mod_ref(&eq, &q)),
            ];
            gmp.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            let one = [cp.pow_ct(&x, &ep, bits), cq.pow_ct(&x, &eq, bits)];
            apart.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            let two = cp.pow_ct_pair(&cq, [&x, &x], [&ep, &eq], bits).unwrap();
            paired.push(t.elapsed().as_secs_f64() * 1e6);
            assert!(g == one && one == two);
        }
        let (g, a, b) = (median(gmp), median(apart), median(paired));
        println!(
            "{bits:4}  {g:10.1}  {a:13.1}  {b:14.1}  {:10.2}x  {:10.2}x",
            g / b,
            a / b
        );
    }
}

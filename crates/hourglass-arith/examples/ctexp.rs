//! Constant-time modular exponentiation with a full-length secret exponent: the IFMA
//! fixed-window code against GMP's `mpz_powm_sec`, per modulus size (the CRT halves of RSA-2048,
//! -3072 and -4096 are 1024, 1536 and 2048 bits). Prints the median time of each and the ratio,
//! then two exponentiations (two moduli of one size, as the halves of an RSA CRT private
//! operation) one after the other against `pow_ct_pair`, which interleaves them where that pays.
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
    for bits in [1024u32, 1536, 2048, 3072, 4096] {
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
    println!("bits  two_pow_ct_us  pow_ct_pair_us  speedup");
    for bits in [1024u32, 1536, 2048, 3072] {
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
        let (mut apart, mut paired) = (Vec::new(), Vec::new());
        for _ in 0..runs {
            let t = Instant::now();
            let one = [cp.pow_ct(&x, &ep, bits), cq.pow_ct(&x, &eq, bits)];
            apart.push(t.elapsed().as_secs_f64() * 1e6);
            let t = Instant::now();
            let two = cp.pow_ct_pair(&cq, [&x, &x], [&ep, &eq], bits).unwrap();
            paired.push(t.elapsed().as_secs_f64() * 1e6);
            assert_eq!(one, two);
        }
        let (a, b) = (median(apart), median(paired));
        println!("{bits:4}  {a:13.1}  {b:14.1}  {:6.2}x", a / b);
    }
}

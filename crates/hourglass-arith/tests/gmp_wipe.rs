//! `secret::wipe_gmp_memory` in a test binary of its own: it sets process-wide functions, which
//! must not change under other tests running GMP on other threads.

use gmp_mpfr_sys::gmp;
use hourglass_arith::entropy::{random_exact_bits, SeededEntropy};
use hourglass_arith::modular::{pow_mod_ct_pair, pow_mod_vartime};
use hourglass_arith::secret::wipe_gmp_memory;
use rug::Integer;

/// GMP's current allocation, reallocation and free functions, as addresses.
fn functions() -> [Option<usize>; 3] {
    let (mut a, mut r, mut f): (
        gmp::allocate_function,
        gmp::reallocate_function,
        gmp::free_function,
    ) = (None, None, None);
    // SAFETY: three valid out-pointers.
    unsafe { gmp::get_memory_functions(&mut a, &mut r, &mut f) };
    [
        a.map(|a| a as usize),
        r.map(|r| r as usize),
        f.map(|f| f as usize),
    ]
}

/// A CRT-like workload: paired constant-time exponentiations, their recombination, a public
/// exponentiation and an inverse.
fn workload(seed: &[u8]) -> Vec<Integer> {
    let mut rng = SeededEntropy::new(seed);
    let p = random_exact_bits(&mut rng, 1024).unwrap().next_prime();
    let q = random_exact_bits(&mut rng, 1024).unwrap().next_prime();
    let x = random_exact_bits(&mut rng, 1000).unwrap();
    let (dp, dq) = (
        random_exact_bits(&mut rng, 1020).unwrap(),
        random_exact_bits(&mut rng, 1020).unwrap(),
    );
    let [sp, sq] = pow_mod_ct_pair([&x, &x], [&dp, &dq], [&p, &q], 1024).unwrap();
    let qinv = q.clone().invert(&p).unwrap();
    let mut h = Integer::from(&sp - &sq) * &qinv;
    h.modulo_mut(&p);
    let m = h * &q + &sq;
    let n = Integer::from(&p * &q);
    let big = (Integer::from(&m) << 20000u32) + &n;
    vec![
        sp,
        sq,
        Integer::from(&m % &n),
        pow_mod_vartime(&m, &Integer::from(65537), &n).unwrap(),
        Integer::from(&big % &n),
    ]
}

#[test]
fn gmp_takes_the_wiping_functions_and_computes_as_before() {
    let defaults = functions();
    let before = workload(b"gmp wipe");
    let kept: Integer = (Integer::from(1) << 5000u32) - 1u32; // allocated before the switch
    wipe_gmp_memory();
    let installed = functions();
    assert!(installed.iter().all(Option::is_some));
    assert_ne!(installed, defaults);
    wipe_gmp_memory();
    assert_eq!(functions(), installed, "later calls change nothing");
    assert_eq!(workload(b"gmp wipe"), before);
    // A block from before the switch grows, shrinks and is freed by the new functions.
    let mut grown = kept.clone();
    grown <<= 100_000u32;
    grown >>= 100_000u32;
    assert_eq!(grown, kept);
    grown.shrink_to_fit();
    drop(kept);
    assert_eq!(grown.significant_bits(), 5000);
}

//! The smooth-document forgery against puzzle inputs, as an attacker with many machines mounts it.
//!
//! Right after a puzzle set is published, the attacker computes `c_p = p^(e~) mod n` for every
//! small prime `p`, in parallel (no sequential work per document). `m -> m^(e~)` is
//! multiplicative, so for any later document whose input `m` factors over those primes,
//! `prod c_p^(a_p)` is a valid solution, produced instantly, claiming `t` sequential squarings.
//!
//! The first test shows the mechanics are real: the table forges a solution that the
//! institution's verification accepts for any smooth input. The others show that the inputs
//! hourglass derives (documents, chain links) are full-size elements of `Z_n`, so no document or
//! link ever reaches the table (version 1's 257-bit inputs `0x01 || digest` did fail these).

use hourglass_arith::entropy::SeededEntropy;
use hourglass_arith::modular::pow_mod_vartime;
use hourglass_arith::squaring::square_k_times;
use hourglass_arith::Integer;
use hourglass_timelock::bundle::chain_input;
use hourglass_timelock::{document_input, PuzzleHash, PuzzleKey, PuzzleKeyGen, PuzzlePublicKey};

/// The primes below `bound`.
fn primes(bound: u32) -> Vec<u32> {
    (2..bound)
        .filter(|&p| (2..p).take_while(|d| d * d <= p).all(|d| p % d != 0))
        .collect()
}

/// The attacker's table: `p^(2^t + z) mod n` for every prime `p`, by the public operation
/// (`t` squarings each: the parallel precomputation).
fn table(key: &PuzzlePublicKey, primes: &[u32]) -> Vec<Integer> {
    primes
        .iter()
        .map(|&p| {
            let p = Integer::from(p);
            let alpha = square_k_times(&p, key.t(), key.n());
            let beta = pow_mod_vartime(&p, key.z(), key.n()).unwrap();
            alpha * beta % key.n()
        })
        .collect()
}

/// The attacker's forgery for `m`: a solution if `m` factors over the table's primes.
fn forge(key: &PuzzlePublicKey, primes: &[u32], table: &[Integer], m: &Integer) -> Option<Integer> {
    let mut rest = m.clone();
    let mut c = Integer::from(1);
    for (&p, c_p) in primes.iter().zip(table) {
        while rest.is_divisible_u(p) {
            rest /= p;
            c = c * c_p % key.n();
        }
    }
    (rest == 1).then_some(c)
}

fn key() -> PuzzleKey {
    let mut rng = SeededEntropy::new(b"smooth forgery");
    PuzzleKeyGen::new(1024, 2000).generate(&mut rng).unwrap()
}

#[test]
fn a_table_of_small_primes_forges_solutions_for_smooth_inputs() {
    let key = key();
    let public = key.public();
    let small = primes(200);
    let t = table(public, &small);
    let mut rng = SeededEntropy::new(b"verify forgeries");
    // Inputs the attacker hopes for: smooth ones (as 0x01 || digest could be, being 257 bits).
    for m in [
        Integer::from(2u32 * 3 * 5 * 7 * 11 * 13 * 197),
        Integer::from(Integer::u_pow_u(199, 30)) * 4u32,
    ] {
        let c = forge(public, &small, &t, &m).expect("smooth by construction");
        assert!(
            key.verify(&m, &c, &mut rng).unwrap(),
            "the forgery is a valid solution"
        );
    }
}

/// Every document input is a full-size residue: within 64 bits of `n`, with no small-prime
/// structure the table could use. (On version 1 inputs, 257 bits for a 1024-bit `n`, the first
/// assertion fails.)
#[test]
fn document_and_chain_inputs_are_full_domain_and_never_hit_the_table() {
    let key = key();
    let public = key.public();
    let small = primes(2000);
    let t = table(public, &small);
    let n_bits = public.n().significant_bits();
    for i in 0..300u32 {
        let doc = format!("submission number {i}");
        for hash in PuzzleHash::ALL {
            let m = document_input(public, hash, doc.as_bytes()).unwrap();
            assert!(
                m.significant_bits() + 64 >= n_bits,
                "input of {} bits for a {n_bits}-bit modulus",
                m.significant_bits()
            );
            assert!(forge(public, &small, &t, &m).is_none());
        }
        // Chain links: the previous link's output, hashed onto the next modulus.
        let previous = Integer::from(Integer::u_pow_u(i + 2, 40));
        let m = chain_input(&previous, public.n()).unwrap();
        assert!(m.significant_bits() + 64 >= n_bits);
        assert!(forge(public, &small, &t, &m).is_none());
    }
}

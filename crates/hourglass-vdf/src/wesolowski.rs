//! Wesolowski's VDF (paper 003, section 2.3) with the fast verification of sections 3-5.
//!
//! **Proof.** `l = H_prime(statement)` ([`crate::hash_prime`]) and `pi = x^q` with
//! `q = floor(2^T / l)`. The prover never squares again: writing `q` in base `2^kappa`,
//! `q = sum b_i 2^(i kappa)` with digits `b_i = floor(2^kappa rho_i / l)` where
//! `rho_i = 2^(T - (i+1) kappa) mod l` (and `b_m = floor(2^(T - m kappa) / l)` on top), gives
//! `pi = prod C_i^(b_i)` over the kept powers `C_i = x^(2^(i kappa))`. The product is computed
//! `gamma` bits of the digits at a time (Horner over the chunks): for each chunk the powers are
//! multiplied into `2^gamma` buckets by their chunk value, and the buckets are combined with two
//! running products. That is about `T / gamma` multiplications, split over the available
//! threads (each takes a share of the powers; the partial proofs are multiplied).
//!
//! **Verification.** `r = 2^T mod l`, `y' = pi^l x^r` by a double exponentiation
//! ([`MultiExp`]), then `y' = y` (canonically) and `l = H_prime(statement)`. The statement is
//! the whole `(N, x, y, T, k)`, so `l` commits to everything.

use rug::Integer;

use crate::error::{Error, Result};
use crate::eval::Evaluation;
use crate::hash_prime::HashToPrime;
use crate::hash_prime::SecurityLevel;
use crate::multiexp::{MultiExp, Ring};
use crate::statement::Statement;
use crate::traits::Vdf;

/// The scheme name in statements and files.
pub const SCHEME: &str = crate::scheme::WESOLOWSKI;

/// A Wesolowski proof.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WesolowskiProof {
    /// `pi = x^floor(2^T / l)`, canonical.
    pub pi: Integer,
    /// The challenge prime `l` (`2k` bits).
    pub l: Integer,
}

/// Wesolowski's VDF with its parameters.
#[derive(Debug, Clone)]
pub struct Wesolowski {
    level: SecurityLevel,
    multiexp: MultiExp,
    threads: usize,
}

impl Default for Wesolowski {
    fn default() -> Self {
        Self::new(SecurityLevel::K128)
    }
}

impl Wesolowski {
    /// At security level `level`, with the default double exponentiation and every core.
    pub fn new(level: SecurityLevel) -> Self {
        Self {
            level,
            multiexp: MultiExp::default(),
            threads: hourglass_arith::threads::available_threads(),
        }
    }

    /// With another double-exponentiation algorithm for verification.
    pub fn with_multiexp(mut self, multiexp: MultiExp) -> Self {
        self.multiexp = multiexp;
        self
    }

    /// With `threads` proving threads (at least one).
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// The challenge prime of a statement.
    pub fn challenge(&self, statement: &Statement) -> Result<Integer> {
        HashToPrime::new(self.level).prime(&statement.encode(SCHEME))
    }

    /// `pi = x^floor(2^T / l)` from the kept powers.
    pub fn proof_for_challenge(&self, evaluation: &Evaluation, l: &Integer) -> Integer {
        let digits = digits(evaluation.iterations(), evaluation.stride(), l);
        let powers = evaluation.powers();
        debug_assert_eq!(digits.len(), powers.len());
        let group = evaluation.group();
        let kappa = evaluation.stride() as u32;
        let threads = self.threads.min(powers.len()).max(1);
        let share = powers.len().div_ceil(threads);
        let gamma = best_chunk_bits(share as u64, kappa);
        let parts: Vec<_> = powers.chunks(share).zip(digits.chunks(share)).collect();
        let pi = with_ring!(group, |ring| {
            let partials = hourglass_arith::threads::parallel_map(&parts, threads, |(p, d)| {
                bucket_product(&ring, p, d, kappa, gamma)
            });
            let mut pi = ring.one();
            for part in &partials {
                ring.mul_assign(&mut pi, part);
            }
            ring.lower(&pi)
        });
        group.canonical(&pi)
    }
}

impl Vdf for Wesolowski {
    type Proof = WesolowskiProof;

    fn level(&self) -> SecurityLevel {
        self.level
    }

    fn prove(&self, evaluation: &Evaluation) -> Result<WesolowskiProof> {
        let statement = evaluation.statement(self.level);
        let l = self.challenge(&statement)?;
        let pi = self.proof_for_challenge(evaluation, &l);
        Ok(WesolowskiProof { pi, l })
    }

    fn verify(&self, statement: &Statement, proof: &WesolowskiProof) -> Result<()> {
        statement.check_well_formed()?;
        if statement.level != self.level {
            return Err(Error::InvalidProof(
                "the proof is for another security level",
            ));
        }
        let group = &statement.group;
        if !group.is_canonical(&proof.pi) {
            return Err(Error::InvalidProof(
                "pi is not a canonical group element (min(v, N - v))",
            ));
        }
        if proof.l.significant_bits() != self.level.prime_bits() {
            return Err(Error::InvalidProof(
                "the challenge prime has the wrong size",
            ));
        }
        let r = Integer::from(2)
            .pow_mod(&Integer::from(statement.iterations), &proof.l)
            .unwrap_or_else(|_| unreachable!("positive exponent, l > 1"));
        let n = group.modulus();
        let y = with_ring!(group, |ring| {
            self.multiexp
                .compute_in(&ring, n, &proof.pi, &proof.l, &statement.x, &r)
        });
        if group.canonical(&y) != statement.y {
            return Err(Error::InvalidProof("pi^l * x^r is not the output"));
        }
        if self.challenge(statement)? != proof.l {
            return Err(Error::InvalidProof(
                "the challenge prime is not the hash of the statement",
            ));
        }
        if !group.all_units([&statement.x, &statement.y, &proof.pi]) {
            return Err(Error::InvalidProof("an element is not a unit"));
        }
        Ok(())
    }
}

/// Digit `i` of `floor(2^T / l)` in base `2^kappa`, for `i = 0 ..= floor(T / kappa)`, each as
/// `ceil(kappa / 64)` little-endian limbs.
fn digits(iterations: u64, kappa: u64, l: &Integer) -> Vec<Vec<u64>> {
    let m = iterations / kappa;
    let limbs = kappa.div_ceil(64) as usize;
    let to_limbs = |d: Integer| -> Vec<u64> {
        let mut v = d.to_digits::<u64>(rug::integer::Order::Lsf);
        v.resize(limbs, 0);
        v
    };
    let mut out = vec![Vec::new(); m as usize + 1];
    let top_exp = iterations - m * kappa;
    out[m as usize] = to_limbs((Integer::from(1) << top_exp as u32) / l);
    // rho_(m-1) = 2^(T - m kappa) mod l, then rho_(i-1) = rho_i 2^kappa mod l.
    let mut rho = (Integer::from(1) << top_exp as u32) % l;
    let shift = Integer::from(2)
        .pow_mod(&Integer::from(kappa), l)
        .unwrap_or_else(|_| unreachable!("l > 1"));
    for i in (0..m as usize).rev() {
        let b = Integer::from(&rho << kappa as u32) / l;
        out[i] = to_limbs(b);
        rho *= &shift;
        rho %= l;
    }
    out
}

/// The chunk width `gamma` minimising the multiplications of [`bucket_product`] for `count`
/// powers with `kappa`-bit digits.
fn best_chunk_bits(count: u64, kappa: u32) -> u32 {
    (1..=16u32)
        .min_by_key(|&g| {
            let chunks = u64::from(kappa.div_ceil(g));
            chunks * (count + (2u64 << g)) + u64::from(kappa)
        })
        .unwrap_or(8)
}

/// Bits `[start, start + width)` of a little-endian limb array (width at most 16).
fn chunk(limbs: &[u64], start: u32, width: u32) -> usize {
    let word = (start / 64) as usize;
    let bit = start % 64;
    let mut v = limbs.get(word).copied().unwrap_or(0) >> bit;
    if bit + width > 64 {
        v |= limbs.get(word + 1).copied().unwrap_or(0) << (64 - bit);
    }
    (v & ((1u64 << width) - 1)) as usize
}

/// `prod powers[i]^(digits[i])` with `kappa`-bit digits, `gamma` bits at a time.
fn bucket_product<R: Ring>(
    ring: &R,
    powers: &[Integer],
    digits: &[Vec<u64>],
    kappa: u32,
    gamma: u32,
) -> R::Elem {
    let powers: Vec<R::Elem> = powers.iter().map(|p| ring.lift(p)).collect();
    let chunks = kappa.div_ceil(gamma);
    let mut acc = ring.one();
    let mut buckets: Vec<Option<R::Elem>> = vec![None; 1 << gamma];
    for c in (0..chunks).rev() {
        let start = c * gamma;
        let width = gamma.min(kappa - start);
        for _ in 0..width {
            ring.square_assign(&mut acc);
        }
        for b in buckets.iter_mut() {
            *b = None;
        }
        for (p, d) in powers.iter().zip(digits) {
            let v = chunk(d, start, width);
            if v != 0 {
                match &mut buckets[v] {
                    Some(b) => ring.mul_assign(b, p),
                    slot @ None => *slot = Some(p.clone()),
                }
            }
        }
        // prod_v bucket_v^v = prod_v (prod_{u >= v} bucket_u), as two running products.
        let mut running: Option<R::Elem> = None;
        let mut total: Option<R::Elem> = None;
        for b in buckets.iter().skip(1).rev() {
            if let Some(b) = b {
                running = Some(match running {
                    Some(mut r) => {
                        ring.mul_assign(&mut r, b);
                        r
                    }
                    None => b.clone(),
                });
            }
            if let Some(r) = &running {
                total = Some(match total {
                    Some(mut t) => {
                        ring.mul_assign(&mut t, r);
                        t
                    }
                    None => r.clone(),
                });
            }
        }
        if let Some(t) = total {
            ring.mul_assign(&mut acc, &t);
        }
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::toy::toy_group as toy;

    #[test]
    fn digits_spell_floor_two_to_t_over_l() {
        let l = (Integer::from(1) << 255u32).next_prime();
        for (t, kappa) in [
            (1u64, 1024u64),
            (300, 7),
            (5000, 64),
            (5000, 1024),
            (4096, 1024),
            (77_777, 3),
        ] {
            let d = digits(t, kappa, &l);
            let mut q = Integer::new();
            for (i, limbs) in d.iter().enumerate() {
                let v = Integer::from_digits(limbs, rug::integer::Order::Lsf);
                assert!(v.significant_bits() as u64 <= kappa);
                q += v << (i as u64 * kappa) as u32;
            }
            assert_eq!(
                q,
                (Integer::from(1) << t as u32) / &l,
                "t {t} kappa {kappa}"
            );
        }
    }

    #[test]
    fn bucket_product_matches_direct_exponentiation() {
        let (g, _) = toy();
        let n = g.modulus();
        let powers: Vec<Integer> = (0..37u32).map(|i| Integer::from(i * 7919 + 3)).collect();
        let digits: Vec<Vec<u64>> = (0..37u64)
            .map(|i| vec![i.wrapping_mul(0x9e37_79b9_7f4a_7c15), i ^ 0xffff_0000_1234])
            .collect();
        let mut expect = Integer::from(1);
        for (p, d) in powers.iter().zip(&digits) {
            let e = Integer::from_digits(d, rug::integer::Order::Lsf);
            expect *= Integer::from(p.pow_mod_ref(&e, n).unwrap());
            expect %= n;
        }
        let ring = crate::multiexp::GmpRing::new(n);
        for gamma in [1, 3, 8, 13] {
            let gmp = bucket_product(&ring, &powers, &digits, 128, gamma);
            assert_eq!(gmp, expect, "gamma {gamma}");
            let fast = with_ring!(g, |r| r
                .lower(&bucket_product(&r, &powers, &digits, 128, gamma)));
            assert_eq!(fast, expect, "fastest ring, gamma {gamma}");
        }
    }

    #[test]
    fn proofs_verify_and_tampering_fails() {
        let (g, order) = toy();
        let x = g.hash_to_element(b"seed").unwrap();
        for t in [1u64, 2, 255, 256, 1000, 4097] {
            let ev = Evaluation::with_group_order(&g, &x, t, &order, 64).unwrap();
            let vdf = Wesolowski::default();
            let proof = vdf.prove(&ev).unwrap();
            let st = ev.statement(vdf.level());
            vdf.verify(&st, &proof).unwrap();
            let mut bad = st.clone();
            bad.iterations += 1;
            assert!(vdf.verify(&bad, &proof).is_err(), "T + 1");
        }
    }
}

//! Pietrzak's VDF ("Simple verifiable delay functions", ITCS 2019) in `Z_N* / {+1, -1}`.
//!
//! The claim `y = x^(2^T)` is halved `log T` times. In round `i`, with claim
//! `y_i = x_i^(2^T_i)`:
//!
//! 1. if `T_i` is odd, the claim becomes `y_i^2 = x_i^(2^(T_i + 1))` (so `T_i` is even);
//! 2. the prover sends `mu_i = x_i^(2^(T_i / 2))`;
//! 3. the challenge `r_i` is the top `k` bits of `d_(i+1) = H(d_i, i, x_i, y_i, mu_i)`, a hash
//!    chain that starts from the hash of the whole statement, so every challenge depends on
//!    the entire transcript so far;
//! 4. the new claim is `x_(i+1) = x_i^r_i mu_i`, `y_(i+1) = mu_i^r_i y_i`, `T_(i+1) = T_i / 2`.
//!
//! Rounds stop once `T_i <= `[`DIRECT_LIMIT`], and the verifier checks the last claim by
//! squaring. The proof is the list of `mu_i`.
//!
//! **Prover.** `mu_i = x_i^(2^h_i)` where `x_i = x^(prod_(m < i) (r_m + 2^h_m))`; expanding the
//! product, `mu_i = prod_S X(h_i + sum_(m in S) h_m)^(prod_(m < i, m not in S) r_m)` over the
//! subsets `S` of the earlier rounds, with `X(p) = x^(2^p)`. The halves `h_m` depend on `T`
//! only, so every position needed is known before the first challenge; each `X(p)` comes from
//! the nearest kept power of the evaluation (at most `kappa` squarings, on all cores), and the
//! product is folded one round at a time (`2^i - 1` short exponentiations in round `i`). After
//! `depth` rounds (chosen to minimise the total), `mu_i` is computed by squaring `x_i` directly:
//! about `T / 2^depth` squarings.

use rug::Integer;
use sha2::{Digest, Sha256, Sha512};

use crate::error::{Error, Result};
use crate::eval::Evaluation;
use crate::group::RsaGroup;
use crate::hash_prime::SecurityLevel;
use crate::multiexp::{pow, Ring};
use crate::statement::Statement;
use crate::traits::Vdf;
use hourglass_arith::mont::MontContext;

/// The scheme name in statements and files.
pub const SCHEME: &str = crate::scheme::PIETRZAK;
/// Rounds stop when the remaining claim has at most this many squarings.
pub const DIRECT_LIMIT: u64 = 64;

/// A Pietrzak proof: one `mu` per round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PietrzakProof {
    /// `mu_i`, canonical.
    pub mu: Vec<Integer>,
}

/// Pietrzak's VDF at a security level.
#[derive(Debug, Clone)]
pub struct Pietrzak {
    level: SecurityLevel,
}

impl Default for Pietrzak {
    fn default() -> Self {
        Self::new(SecurityLevel::K128)
    }
}

/// The number of rounds for `T` squarings.
pub fn rounds(iterations: u64) -> usize {
    halves(iterations).len()
}

/// `h_i = T_i / 2` for each round (after making `T_i` even).
fn halves(iterations: u64) -> Vec<u64> {
    let mut out = Vec::new();
    let mut t = iterations;
    while t > DIRECT_LIMIT {
        t += t & 1;
        t /= 2;
        out.push(t);
    }
    out
}

/// The hash chain of the transcript.
struct Transcript {
    level: SecurityLevel,
    digest: Vec<u8>,
}

impl Transcript {
    fn hash(level: SecurityLevel, parts: &[&[u8]]) -> Vec<u8> {
        match level {
            SecurityLevel::K128 => {
                let mut h = Sha256::new();
                parts.iter().for_each(|p| h.update(p));
                h.finalize().to_vec()
            }
            SecurityLevel::K256 => {
                let mut h = Sha512::new();
                parts.iter().for_each(|p| h.update(p));
                h.finalize().to_vec()
            }
        }
    }

    fn new(statement: &Statement) -> Self {
        let level = statement.level;
        Self {
            level,
            digest: Self::hash(level, &[&statement.encode(SCHEME)]),
        }
    }

    /// The challenge of round `i` (the top `k` bits of the next digest).
    fn challenge(
        &mut self,
        group: &RsaGroup,
        i: usize,
        x: &Integer,
        y: &Integer,
        mu: &Integer,
    ) -> Integer {
        self.digest = Self::hash(
            self.level,
            &[
                b"hourglass-vdf-v1/pietrzak/round\0",
                &self.digest,
                &(i as u32).to_be_bytes(),
                &group.encode(x),
                &group.encode(y),
                &group.encode(mu),
            ],
        );
        let k = self.level.bits() as usize / 8;
        Integer::from_digits(&self.digest[..k], rug::integer::Order::Msf)
    }
}

/// One round's update of the claim: `(x^r mu, mu^r y)`, canonical.
fn fold_claim(
    group: &RsaGroup,
    x: &Integer,
    y: &Integer,
    mu: &Integer,
    r: &Integer,
) -> (Integer, Integer) {
    let (x2, y2) = with_ring!(group, |ring| {
        let mu = ring.lift(mu);
        let x2 = ring.mul(&pow(&ring, &ring.lift(x), r), &mu);
        let y2 = ring.mul(&pow(&ring, &mu, r), &ring.lift(y));
        (ring.lower(&x2), ring.lower(&y2))
    });
    (group.canonical(&x2), group.canonical(&y2))
}

impl Pietrzak {
    /// At security level `level`.
    pub fn new(level: SecurityLevel) -> Self {
        Self { level }
    }

    /// How many rounds the prover takes from kept powers (the rest square directly).
    fn depth(iterations: u64, kappa: u64, rounds: usize) -> usize {
        (0..=rounds.min(16))
            .min_by_key(|&d| {
                let folded = (1u64 << d) * (kappa + 200);
                let direct = iterations >> d;
                folded + direct
            })
            .unwrap_or(0)
    }
}

impl Vdf for Pietrzak {
    type Proof = PietrzakProof;

    fn level(&self) -> SecurityLevel {
        self.level
    }

    fn prove(&self, evaluation: &Evaluation) -> Result<PietrzakProof> {
        let statement = evaluation.statement(self.level);
        let group = evaluation.group();
        let n = group.modulus();
        let mont = MontContext::new(n)?;
        let h = halves(evaluation.iterations());
        let depth = Self::depth(evaluation.iterations(), evaluation.stride(), h.len());
        // Positions X(h_i + sum_S h_m) for the folded rounds, subset bit m = round m.
        let mut positions: Vec<Vec<u64>> = Vec::with_capacity(depth);
        for (i, &hi) in h.iter().enumerate().take(depth) {
            positions.push(
                (0..1usize << i)
                    .map(|s| {
                        hi + (0..i)
                            .filter(|m| s >> m & 1 == 1)
                            .map(|m| h[m])
                            .sum::<u64>()
                    })
                    .collect(),
            );
        }
        let values = power_values(evaluation, &mont, &positions);
        let mut transcript = Transcript::new(&statement);
        let (mut x, mut y, mut t) = (
            statement.x.clone(),
            statement.y.clone(),
            statement.iterations,
        );
        let mut challenges: Vec<Integer> = Vec::with_capacity(h.len());
        let mut mu_list = Vec::with_capacity(h.len());
        for (i, &hi) in h.iter().enumerate() {
            if t % 2 == 1 {
                // Odd T_i: the claim becomes y_i^2 = x_i^(2^(T_i + 1)).
                y = group.canonical(&group.mul(&y, &y));
            }
            let mu = if i < depth {
                // Fold bit m of the subset index with challenge r_m, lowest bit first.
                let folded = with_ring!(group, |ring| {
                    let mut level: Vec<_> = values[i].iter().map(|v| ring.lift(v)).collect();
                    for r in challenges.iter().take(i) {
                        level = level
                            .chunks(2)
                            .map(|pair| ring.mul(&pow(&ring, &pair[0], r), &pair[1]))
                            .collect();
                    }
                    ring.lower(&level[0])
                });
                group.canonical(&folded)
            } else {
                group.canonical(&mont.square_k_times(&x, hi))
            };
            let r = transcript.challenge(group, i, &x, &y, &mu);
            (x, y) = fold_claim(group, &x, &y, &mu, &r);
            t = hi;
            challenges.push(r);
            mu_list.push(mu);
        }
        Ok(PietrzakProof { mu: mu_list })
    }

    fn verify(&self, statement: &Statement, proof: &PietrzakProof) -> Result<()> {
        self.walk(statement, proof).map(|_| ())
    }
}

impl Pietrzak {
    /// The round challenges `r_0 .. r_(R-1)` of a proof that verifies (docs/FORMATS.md 15.6;
    /// listed in the known-answer vectors so that other implementations can check their
    /// transcript hashing round by round).
    pub fn challenges(&self, statement: &Statement, proof: &PietrzakProof) -> Result<Vec<Integer>> {
        self.walk(statement, proof)
    }

    /// Verifies, returning the challenges.
    fn walk(&self, statement: &Statement, proof: &PietrzakProof) -> Result<Vec<Integer>> {
        statement.check_well_formed()?;
        if statement.level != self.level {
            return Err(Error::InvalidProof(
                "the proof is for another security level",
            ));
        }
        let group = &statement.group;
        let h = halves(statement.iterations);
        if proof.mu.len() != h.len() {
            return Err(Error::InvalidProof("wrong number of rounds for T"));
        }
        if proof.mu.iter().any(|mu| !group.is_canonical(mu)) {
            return Err(Error::InvalidProof(
                "a mu is not a canonical group element (min(v, N - v))",
            ));
        }
        let mut transcript = Transcript::new(statement);
        let (mut x, mut y, mut t) = (
            statement.x.clone(),
            statement.y.clone(),
            statement.iterations,
        );
        let mut challenges = Vec::with_capacity(h.len());
        for (i, (mu, &hi)) in proof.mu.iter().zip(&h).enumerate() {
            if t % 2 == 1 {
                // Odd T_i: the claim becomes y_i^2 = x_i^(2^(T_i + 1)).
                y = group.canonical(&group.mul(&y, &y));
            }
            let r = transcript.challenge(group, i, &x, &y, mu);
            (x, y) = fold_claim(group, &x, &y, mu, &r);
            t = hi;
            challenges.push(r);
        }
        let mut last = x;
        for _ in 0..t {
            last = group.mul(&last, &last);
        }
        if group.canonical(&last) != y {
            return Err(Error::InvalidProof("the last claim does not hold"));
        }
        let mut all = vec![&statement.x, &statement.y];
        all.extend(proof.mu.iter());
        if !group.all_units(all) {
            return Err(Error::InvalidProof("an element is not a unit"));
        }
        Ok(challenges)
    }
}

/// `X(p)` for every position, computed on all cores.
fn power_values(
    evaluation: &Evaluation,
    mont: &MontContext,
    positions: &[Vec<u64>],
) -> Vec<Vec<Integer>> {
    let flat: Vec<(usize, u64)> = positions
        .iter()
        .enumerate()
        .flat_map(|(i, ps)| ps.iter().map(move |&p| (i, p)))
        .collect();
    let computed = hourglass_arith::threads::parallel_map(
        &flat,
        hourglass_arith::threads::available_threads(),
        |&(_, p)| evaluation.power_at(p, mont),
    );
    let mut out: Vec<Vec<Integer>> = positions
        .iter()
        .map(|p| Vec::with_capacity(p.len()))
        .collect();
    for ((i, _), v) in flat.into_iter().zip(computed) {
        out[i].push(v);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::toy::toy_group as toy;

    #[test]
    fn round_counts_follow_t() {
        assert_eq!(rounds(1), 0);
        assert_eq!(rounds(64), 0);
        assert_eq!(rounds(65), 1);
        assert_eq!(rounds(1 << 20), 14);
        assert_eq!(halves(101), vec![51]);
        assert_eq!(halves(1000), vec![500, 250, 125, 63]);
    }

    #[test]
    fn proofs_verify_for_odd_even_and_tiny_t() {
        let (g, order) = toy();
        let x = g.hash_to_element(b"p").unwrap();
        for t in [1u64, 63, 64, 65, 127, 1000, 4097, 10_001] {
            for stride in [16u64, 1024] {
                let ev = Evaluation::with_group_order(&g, &x, t, &order, stride).unwrap();
                let vdf = Pietrzak::default();
                let proof = vdf.prove(&ev).unwrap();
                assert_eq!(proof.mu.len(), rounds(t));
                let st = ev.statement(vdf.level());
                vdf.verify(&st, &proof)
                    .unwrap_or_else(|e| panic!("t {t} stride {stride}: {e}"));
                if let Some(first) = proof.mu.first() {
                    let mut bad = proof.clone();
                    bad.mu[0] = g.canonical(&Integer::from(first + 1u32));
                    assert!(vdf.verify(&st, &bad).is_err());
                }
            }
        }
    }
}

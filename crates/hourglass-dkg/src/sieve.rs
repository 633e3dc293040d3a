//! Distributed sieving (paper section 3.1), generalised to any number of parties.
//!
//! Every prime candidate is `p = offset + sum_j p_j`. With `M` the product of the sieving
//! primes `> k` and `M_4` four times the product of the odd primes up to `min(k,`
//! [`LEAD_PRIME_MAX`]`)`:
//!
//! - `p ≡ a (mod M)` where `a = prod a_i` is a product of random units, additively shared as
//!   `sum b_j` by the multiplication tree in [`crate::protocol`] ([`tree_levels`]), so `p` has no
//!   prime factor in `M`;
//! - `p_j ≡ 0 (mod M_4)` for every party but one (the lead), and `p_lead ≡ t (mod M_4)` with `t` a unit
//!   that is `3 mod 4` (the paper's `r_i` construction, with 4 in place of 2), so `p` has no
//!   prime factor up to `k` and `p ≡ 3 (mod 4)` as the biprimality test needs;
//! - the paper puts `k` itself in `M` when it is prime; we put it in `M_4`, so that every
//!   Lagrange coefficient for the points `1..k` is a unit mod `M`, which the zero sharings
//!   drawn from pairwise streams need ([`crate::bgw::Shamir::zero_from_streams`]);
//! - `offset` is a public multiple of `M * M_4` near `3 * 2^(n-2)` and the random parts are
//!   bounded so that `3 * 2^(n-2) <= p < 2^n`: `N = pq` has exactly `2n` bits.
//!
//! The lead chooses `p mod M_4` and `q mod M_4`, so it knows them. With every odd prime up to
//! `k` in `M_4` (as the paper has it), that was more than `N^(1/4)` from about 180 parties at
//! 1024 bits and 360 at 2048, where Coppersmith's method factors `N` from `p mod M_4` (a
//! known residue modulo more than `N^(1/4)`): the lead of the pair that became the key could
//! factor it. So `M_4` stops at [`LEAD_PRIME_MAX`] (less than `2^61`, far below `N^(1/4)` at
//! any size this crate accepts), and the primes between it and `k` are not sieved: the trial
//! division of every `N` removes those candidates before the biprimality test, at the cost of
//! more candidate pairs ([`Sieve::expected_iterations`] counts them). This also lifts the
//! ceiling `M_4` put on the committee (358 parties at 1024 bits).

use hourglass_arith::secret::{mod_ct_padded, SecretInt};
use rug::ops::RemRounding;
use rug::Integer;

use crate::rng::Drbg;
use crate::{ParamError, Result};

/// Fewest random bits in each party's free part `r''` (beyond the sieved residue).
pub const MIN_FREE_BITS: u32 = 16;

/// The largest prime whose residue the lead of a pair chooses (in `M_4`); what the lead learns
/// of `p` and `q` is their residues modulo `4 * 3 * 5 * ... * 47`, less than `2^61` (see the
/// module's documentation for why it is bounded).
pub const LEAD_PRIME_MAX: u32 = 47;

/// The levels of the sieving tree that multiplies `contributors` fresh units into their
/// product: each level multiplies adjacent pairs and carries an odd last value up to the next
/// level, until one value is left. Returns the number of values at each level that multiplies
/// (`ceil(log2(contributors))` levels; level `i` multiplies `size / 2` pairs).
pub fn tree_levels(contributors: usize) -> Vec<usize> {
    let mut levels = Vec::new();
    let mut size = contributors;
    while size > 1 {
        levels.push(size);
        size = size.div_ceil(2);
    }
    levels
}

/// How the residues `a mod M` of a batch's candidates are drawn. Both give every candidate a
/// uniformly random unit modulo `M`, unknown to any `t` members; they differ in cost, and
/// [`Sieve::method`] picks the cheaper for the committee.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SieveMethod {
    /// The product of `t + 1` members' units by a tree of `t` multiplications (double
    /// sharings, `1 + 2 ceil(log2(t + 1))` rounds): cheapest for small committees.
    Tree,
    /// Pairs of random sharings `(x, r)` tested by opening `x r` (3 rounds): the pair passes
    /// when `x r` is a unit, and becomes a candidate pair `(p, q)` with `p = x` and `q = r`
    /// modulo `M`, so the opened value is `N mod M`, which the pair's `N` reveals anyway; the
    /// others are dropped unused. About `1 / unit_fraction()^2` attempts per candidate pair,
    /// whatever `t`: cheaper than the tree from about 10 parties.
    Tested,
}

/// The public parameters of sieving for one prime size and party count.
#[derive(Debug, Clone)]
pub struct Sieve {
    bound: u32,
    parties: usize,
    prime_bits: u32,
    m: Integer,
    /// For each prime `l` of `M`, `c_l`: 1 modulo `l`, 0 modulo the others.
    crt: Vec<(u32, Integer)>,
    m4: Integer,
    m_inv: Integer,
    period: Integer,
    offset: Integer,
    free_bound: Integer,
}

fn primes_up_to(bound: u32) -> impl Iterator<Item = u32> {
    std::iter::once(2).chain(
        hourglass_arith::prime::small_primes()
            .iter()
            .copied()
            .take_while(move |&p| p <= bound),
    )
}

impl Sieve {
    /// Sieving up to `bound` (default: [`Sieve::default_bound`]) for `prime_bits`-bit primes
    /// shared among `parties`.
    pub fn new(prime_bits: u32, parties: usize, bound: Option<u32>) -> Result<Self> {
        let bound = match bound {
            Some(b) => b,
            None => Self::default_bound(prime_bits, parties)?,
        };
        Self::build(prime_bits, parties, bound)
    }

    fn build(prime_bits: u32, parties: usize, bound: u32) -> Result<Self> {
        if parties < 3 {
            return Err(ParamError::SieveParties.into());
        }
        if bound >= 1 << 16 {
            return Err(ParamError::SieveBound { bound }.into());
        }
        let k = parties as u32;
        let mut m = Integer::from(1);
        let mut m4 = Integer::from(4);
        for p in primes_up_to(bound) {
            if p > k {
                m *= p;
            } else if p > 2 && p <= LEAD_PRIME_MAX {
                m4 *= p;
            }
        }
        if m == 1 {
            return Err(ParamError::NoSievePrime { bound, parties }.into());
        }
        let m_inv = m.clone().invert(&m4).map_err(|_| ParamError::SieveModuli)?;
        let period = Integer::from(&m * &m4);
        let top = Integer::from(1) << prime_bits;
        let low = Integer::from(3) << (prime_bits - 2);
        let offset = (low + &period - 1u32) / &period * &period;
        let room = top - &offset - Integer::from(&m * k);
        let free_bound = if room > 0 {
            room / Integer::from(&period * k)
        } else {
            Integer::new()
        };
        if free_bound.significant_bits() <= MIN_FREE_BITS {
            return Err(ParamError::SieveTooLarge {
                bound,
                prime_bits,
                parties,
                min_free_bits: MIN_FREE_BITS,
            }
            .into());
        }
        let crt = primes_up_to(bound)
            .filter(|&p| p > k)
            .map(|l| {
                let others = Integer::from(&m / l);
                let inverse = Integer::from(others.mod_u(l)).invert(&Integer::from(l));
                (l, others * inverse.unwrap_or_default())
            })
            .collect();
        Ok(Sieve {
            bound,
            parties,
            prime_bits,
            m,
            crt,
            m4,
            m_inv,
            period,
            offset,
            free_bound,
        })
    }

    /// The largest sieving bound that leaves every party [`MIN_FREE_BITS`] free bits (the
    /// paper's "largest value satisfying M < p", which it found optimal, and so did we:
    /// `hourglass bench dkg --sieve-bounds`).
    pub fn default_bound(prime_bits: u32, parties: usize) -> Result<u32> {
        let mut best = None;
        for p in primes_up_to(65535).filter(|&p| p > parties as u32) {
            match Self::build(prime_bits, parties, p) {
                Ok(_) => best = Some(p),
                Err(_) if best.is_some() => break,
                Err(_) => {}
            }
        }
        best.ok_or_else(|| {
            ParamError::PrimesTooSmall {
                prime_bits,
                parties,
            }
            .into()
        })
    }

    /// The sieving bound.
    pub fn bound(&self) -> u32 {
        self.bound
    }

    /// `M`, the product of the sieving primes `> k` (the BGW modulus of the sieving rounds).
    pub fn modulus(&self) -> &Integer {
        &self.m
    }

    /// The public offset added by the first party.
    pub fn offset(&self) -> &Integer {
        &self.offset
    }

    /// A fresh random unit `a_i` modulo `M`, drawn in CRT form: a uniform nonzero residue
    /// modulo each prime of `M`, combined as `sum r_l c_l mod M` with `c_l = 1 mod l` and
    /// `0` modulo the others, so every unit is equally likely. No draw is rejected for a
    /// common factor (at 1024-bit primes and 3 parties a quarter of the residues are units),
    /// and the work does not depend on the unit: products by the `r_l` and one constant-time
    /// reduction padded to the sum's public length.
    pub fn random_unit(&self, rng: &mut Drbg) -> Integer {
        let mut sum = SecretInt::new(Integer::with_capacity(
            self.m.significant_bits() as usize + 32,
        ));
        for (l, c) in &self.crt {
            let r = rng.nonzero_below_u32(*l);
            *sum.expose_mut() += c * r;
        }
        let limbs = (self.m.significant_bits() as usize + 16 + 32).div_ceil(64);
        mod_ct_padded(sum.expose(), &self.m, limbs).unwrap_or_default()
    }

    /// This party's share `p_j` of a candidate, from its additive share `b_j` of the sieved
    /// residue; exactly one member, the `lead`, adds the offset and the residue mod `M_4`.
    pub fn candidate_share(&self, lead: bool, b: &Integer, rng: &mut Drbg) -> Integer {
        let target = if lead {
            let odd = Integer::from(&self.m4 >> 2);
            loop {
                let t = rng.below(&self.m4);
                if t.mod_u(4) == 3 && t.clone().gcd(&odd) == 1 {
                    break t;
                }
            }
        } else {
            Integer::new()
        };
        let mut r = Integer::from(&target - b) * &self.m_inv;
        r = r.rem_euc(&self.m4);
        r += &self.m4 * rng.below(&self.free_bound);
        let mut share = r * &self.m + b;
        if lead {
            share += &self.offset;
        }
        share
    }

    /// The primes no candidate is divisible by: 2, the odd primes up to `min(k,`
    /// [`LEAD_PRIME_MAX`]`)` (in `M_4`) and those above `k` up to the bound (in `M`). The
    /// primes between [`LEAD_PRIME_MAX`] and `k`, in a committee larger than that, are left to
    /// the trial division of `N`.
    pub fn sieved_primes(&self) -> impl Iterator<Item = u32> {
        let k = self.parties as u32;
        primes_up_to(self.bound).filter(move |&p| p <= LEAD_PRIME_MAX || p > k)
    }

    /// Expected number of candidate pairs until both are prime (prime number theorem, with
    /// every sieved prime excluded, [`Sieve::sieved_primes`]).
    pub fn expected_iterations(&self) -> f64 {
        let survive: f64 = self
            .sieved_primes()
            .map(|p| 1.0 - 1.0 / f64::from(p))
            .product();
        // p is uniform-ish in [3/4, 1) * 2^n.
        let ln_p = f64::from(self.prime_bits) * std::f64::consts::LN_2 + (0.875f64).ln();
        let prob = 1.0 / (ln_p * survive);
        1.0 / (prob * prob)
    }

    /// Expected number of candidate pairs whose `N` survives a trial division by every odd
    /// prime below `trial_bound` ([`crate::trial`]): [`Sieve::expected_iterations`] times the
    /// chance that neither `p` nor `q` has an unsieved prime factor below the bound, so the
    /// expected number of biprimality tests. It is the expected count of pairs sieved to that
    /// bound: about `(ln 2^n / (e^γ ln B))^2` for `n`-bit primes.
    pub fn expected_tests(&self, trial_bound: u32) -> f64 {
        // Every sieved prime is at most the sieve's bound: the set is looked up below it only.
        let sieved: std::collections::BTreeSet<u32> = self.sieved_primes().collect();
        let survive: f64 = hourglass_arith::prime::odd_primes_below(trial_bound)
            .into_iter()
            .filter(|&p| p > self.bound || !sieved.contains(&p))
            .map(|p| {
                let pass = 1.0 - 1.0 / f64::from(p);
                pass * pass
            })
            .product();
        self.expected_iterations() * survive
    }

    /// The fraction of residues modulo `M` that are units: `prod (1 - 1/m)` over the primes
    /// `m` in `M`. A random sharing modulo `M` is a unit with this probability.
    pub fn unit_fraction(&self) -> f64 {
        let k = self.parties as u32;
        primes_up_to(self.bound)
            .filter(|&p| p > k)
            .map(|p| 1.0 - 1.0 / f64::from(p))
            .product()
    }

    /// How a committee with threshold `threshold` draws its sieved residues: the method that
    /// sends fewer values per member and candidate ([`SieveMethod`]).
    pub fn method(&self, threshold: usize) -> SieveMethod {
        let (k, t) = (self.parties as f64, threshold as f64);
        // A random sharing extracted from dealt ones: k - 1 values sent per k - t outputs.
        let random = (k - 1.0) / (k - t);
        // The tree: t multiplications, each a double sharing, a point to the king and the
        // king's value back; and t + 1 units dealt.
        let tree = t * (2.0 * random + 2.0) + (t + 1.0) * (k - 1.0) / k;
        // The test: two random sharings, a point to the king and the king's value back, per
        // attempt; an attempt that passes is a pair (two candidates).
        let pairs = 128;
        let tested = (2.0 * random + 2.0) * self.attempts(pairs) as f64 / (2 * pairs) as f64;
        if tested < tree {
            SieveMethod::Tested
        } else {
            SieveMethod::Tree
        }
    }

    /// The attempts [`SieveMethod::Tested`] draws for `pairs` candidate pairs: enough that
    /// fewer than `pairs` pass with probability about 0.1% (`pairs + 3 sqrt(pairs)` expected
    /// to pass, an attempt passing with probability `unit_fraction()^2`: `x` and `r` both
    /// units).
    pub fn attempts(&self, pairs: usize) -> usize {
        let pass = self.unit_fraction().powi(2);
        let wanted = pairs as f64 + 3.0 * (pairs as f64).sqrt();
        (wanted / pass).ceil() as usize
    }

    /// The number of parties the parameters are for.
    pub fn parties(&self) -> usize {
        self.parties
    }

    /// The period `M * M_4` of the sieved residues.
    pub fn period(&self) -> &Integer {
        &self.period
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crt_units_are_units_and_cover_every_residue_pattern() {
        let sieve = Sieve::new(512, 3, None).unwrap();
        let mut rng = Drbg::from_key(&[9; 32]);
        let (first, second) = (sieve.crt[0].0, sieve.crt[1].0);
        let mut pairs = std::collections::BTreeSet::new();
        for _ in 0..2_000 {
            let a = sieve.random_unit(&mut rng);
            assert!(a > 0 && a < *sieve.modulus());
            assert_eq!(Integer::from(a.gcd_ref(sieve.modulus())), 1);
            pairs.insert((a.mod_u(first), a.mod_u(second)));
        }
        // Residues modulo the two smallest primes of M (5 and 7): all 4 * 6 pairs appear.
        assert_eq!((first, second), (5, 7));
        assert_eq!(pairs.len(), 24);
        for (l, c) in &sieve.crt {
            assert_eq!(c.mod_u(*l), 1);
            assert_eq!(Integer::from(c % sieve.modulus()), *c);
        }
    }

    #[test]
    fn the_expected_tests_are_the_pairs_of_a_sieve_to_the_trial_bound() {
        // Mertens: pairs sieved to B need about (ln x / (e^gamma ln B))^2 draws, whatever
        // sieve got them there.
        let euler_gamma = 0.577_215_664_901_532_9_f64;
        for (bits, k) in [(1024u32, 3usize), (1024, 50), (512, 3)] {
            let sieve = Sieve::new(bits, k, None).unwrap();
            let ln_x = f64::from(bits) * std::f64::consts::LN_2 + 0.875f64.ln();
            let mut last = sieve.expected_iterations();
            for lg in [16u32, 20, 22] {
                let tests = sieve.expected_tests(1 << lg);
                let mertens = (ln_x / (euler_gamma.exp() * f64::from(lg) * 2f64.ln())).powi(2);
                assert!(
                    (tests / mertens - 1.0).abs() < 0.03,
                    "{bits} {k} 2^{lg}: {tests} {mertens}"
                );
                assert!(tests < last, "{bits} {k} 2^{lg}");
                last = tests;
            }
        }
        // Below the sieve's own bound nothing more is removed.
        let sieve = Sieve::new(1024, 3, None).unwrap();
        assert_eq!(sieve.expected_tests(3), sieve.expected_iterations());
    }

    #[test]
    fn shares_sum_to_a_sieved_3_mod_4_candidate_of_the_right_size() {
        for &(bits, k) in &[(256u32, 3usize), (512, 5), (512, 10), (1024, 3), (512, 60)] {
            let sieve = Sieve::new(bits, k, None).unwrap();
            let mut rng = Drbg::from_key(&[k as u8; 32]);
            for _ in 0..50 {
                // a = product of units, additively shared at random.
                let a = (0..k).fold(Integer::from(1), |acc, _| {
                    (acc * sieve.random_unit(&mut rng)).rem_euc(sieve.modulus())
                });
                let mut bs: Vec<Integer> = (1..k).map(|_| rng.below(sieve.modulus())).collect();
                let rest = (&a - bs.iter().sum::<Integer>()).rem_euc(sieve.modulus());
                bs.push(rest);
                let p: Integer = bs
                    .iter()
                    .enumerate()
                    .map(|(j, b)| sieve.candidate_share(j == k / 2, b, &mut rng))
                    .sum();
                assert_eq!(p.significant_bits(), bits);
                assert!(p >= Integer::from(3) << (bits - 2));
                assert_eq!(p.mod_u(4), 3);
                for q in sieve.sieved_primes() {
                    assert_ne!(p.mod_u(q), 0, "{q} divides a candidate");
                }
            }
            assert!(sieve.expected_iterations() > 1.0);
        }
    }

    /// The attack: the lead knows `p mod M_4` (its target; every other share is 0 mod `M_4`),
    /// and a residue modulo more than `N^(1/4)` factors `N` (Coppersmith). With the paper's
    /// `M_4` (every odd prime up to `k`), 200 parties at 1024 bits gave the lead 274 bits of
    /// `p`, above the 256 of `N^(1/4)`. Now at most 61 bits at every committee size, and
    /// committees beyond the old ceiling (358 parties at 1024 bits) can sieve.
    #[test]
    fn the_lead_learns_at_most_61_bits_of_p_at_every_committee_size() {
        for &(bits, k) in &[
            (256u32, 3usize),
            (256, 200),
            (512, 50),
            (512, 200),
            (512, 400),
            (512, 1000),
            (1024, 100),
            (1024, 1000),
        ] {
            let sieve = Sieve::new(bits, k, None).unwrap();
            assert!(sieve.m4.significant_bits() <= 61, "{bits}/{k}");
            assert!(sieve.m4.significant_bits() < bits / 2, "{bits}/{k}");
            let mut rng = Drbg::from_key(&[7; 32]);
            let b = rng.below(sieve.modulus());
            let other = sieve.candidate_share(false, &b, &mut rng);
            assert_eq!(other.rem_euc(&sieve.m4), 0);
            // 47 is still sieved (by the lead); 53, between 47 and k in a committee of 200 or
            // more, is left to the trial division of N, and the expected count knows it.
            let sieved: Vec<u32> = sieve.sieved_primes().collect();
            assert!(sieved.contains(&47), "{bits}/{k}");
            assert_eq!(sieved.contains(&53), k < 53, "{bits}/{k}");
        }
    }

    #[test]
    fn bounds_that_leave_no_room_are_refused() {
        let max = Sieve::default_bound(512, 3).unwrap();
        assert!(Sieve::new(512, 3, Some(max)).is_ok());
        assert!(Sieve::new(512, 3, Some(max + 200)).is_err());
        assert!(Sieve::new(512, 3, Some(2)).is_err());
        assert!(Sieve::new(512, 2, Some(100)).is_err());
    }
}

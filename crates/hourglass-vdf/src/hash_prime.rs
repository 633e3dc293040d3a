//! Hashing a statement to a prime challenge (paper 003, sections 4-5).
//!
//! A challenge prime `l` has exactly `2k` bits (top bit set; `k` = 128 or 256 bits of security)
//! and is the first Baillie-PSW prime in a sequence of candidates derived from one hash context:
//!
//! 1. The statement is absorbed once into a hash context (SHA-256 for `k = 128`, SHA-512 for
//!    `k = 256`). For candidate `j = 0, 1, 2, ..` the context is *copied* and only the four
//!    bytes of `j` are absorbed before finalising (section 5.2: the cost per candidate no longer
//!    depends on the size of the statement).
//! 2. The digest `h` (`2k` bits, top bit forced) is *pre-sieved* (sections 4.2-4.3):
//!    `c = floor(h / B) * B + r`, where `B` is the product of the first 15 primes (2 to 47,
//!    which fits a 64-bit word) and `r` is a residue coprime to `B` derived from the digest
//!    itself: writing `v = h mod B` in the mixed radix `(p_1 - 1, .., p_15 - 1)` gives digits
//!    `d_i`, and `r` is the residue with `r = d_i + 1 (mod p_i)` (by the Chinese remainder
//!    theorem). Every residue coprime to `B` is reachable, so every `2k`-bit prime not dividing
//!    `B` can be the challenge, and no candidate is divisible by a prime up to 47: about 7 times
//!    fewer candidates than raw hashes (Table 3).
//! 3. Candidates surviving trial division by the odd primes up to 1021 (those below 53 never
//!    divide a pre-sieved candidate, but the measurement variants sieve less) get a base-2
//!    Miller-Rabin test, and the first that also passes the strong Lucas test is `l`. Both
//!    run on fixed-width Montgomery arithmetic ([`hourglass_arith::fixed`]): at 256 and 512
//!    bits GMP's per-call overhead would dominate.
//!
//! [`HashToPrime::with_sieve_primes`] and [`HashToPrime::without_context_copy`] exist to
//! reproduce the paper's measurements (number of candidates against the number of sieving
//! primes, hashing with and without context copying); the VDF itself always uses the defaults.

use std::sync::OnceLock;

use hourglass_arith::prime::{miller_rabin, small_primes, strong_lucas};
use rug::integer::Order;
use rug::Integer;
use sha2::{Digest, Sha256, Sha512};

use crate::error::{ParamError, Result};

/// Primes of the pre-sieve by default (2 to 47: their product fits a 64-bit word).
pub const DEFAULT_SIEVE_PRIMES: usize = 15;
/// The largest number of sieving primes supported (their product must fit 64 bits).
pub const MAX_SIEVE_PRIMES: usize = 15;
/// Candidates tried before giving up (the expected number is about 25 for 256 bits; 2^16 misses
/// in a row happen with probability below 2^-3000).
pub const MAX_CANDIDATES: u32 = 1 << 16;
/// Trial division after the pre-sieve goes up to this bound.
const TRIAL_DIVISION_LIMIT: u32 = 1024;

/// Security level `k`: the challenge prime has `2k` bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SecurityLevel {
    /// `k = 128`: 256-bit challenges, SHA-256.
    K128,
    /// `k = 256`: 512-bit challenges, SHA-512.
    K256,
}

impl SecurityLevel {
    /// `k` in bits.
    pub fn bits(self) -> u32 {
        match self {
            SecurityLevel::K128 => 128,
            SecurityLevel::K256 => 256,
        }
    }

    /// The level for `k` bits (128 or 256).
    pub fn from_bits(k: u32) -> Result<Self> {
        match k {
            128 => Ok(SecurityLevel::K128),
            256 => Ok(SecurityLevel::K256),
            _ => Err(ParamError::SecurityLevel { found: k }.into()),
        }
    }

    /// Bits of a challenge prime (`2k`).
    pub fn prime_bits(self) -> u32 {
        2 * self.bits()
    }

    /// The hash function of the challenges (`"sha256"` or `"sha512"`).
    pub fn hash_name(self) -> &'static str {
        match self {
            SecurityLevel::K128 => "sha256",
            SecurityLevel::K256 => "sha512",
        }
    }
}

/// A hash context with the statement absorbed, ready to be copied per candidate.
#[derive(Clone)]
enum Context {
    Sha256(Sha256),
    Sha512(Sha512),
}

impl Context {
    fn new(level: SecurityLevel) -> Self {
        match level {
            SecurityLevel::K128 => Context::Sha256(Sha256::new()),
            SecurityLevel::K256 => Context::Sha512(Sha512::new()),
        }
    }

    fn update(&mut self, data: &[u8]) {
        match self {
            Context::Sha256(h) => h.update(data),
            Context::Sha512(h) => h.update(data),
        }
    }

    fn finalize(self) -> Vec<u8> {
        match self {
            Context::Sha256(h) => h.finalize().to_vec(),
            Context::Sha512(h) => h.finalize().to_vec(),
        }
    }
}

/// The pre-sieve of section 4.3: `B` (the product of the first primes) and the CRT basis
/// for building a residue coprime to `B`.
#[derive(Debug, Clone)]
pub struct PreSieve {
    primes: Vec<u64>,
    modulus: u64,
    /// `e_i` with `e_i = 1 (mod p_i)` and `e_i = 0 (mod p_j)` for `j != i`.
    basis: Vec<u64>,
}

impl PreSieve {
    /// The pre-sieve with the first `count` primes (0 to [`MAX_SIEVE_PRIMES`]).
    pub fn new(count: usize) -> Result<Self> {
        if count > MAX_SIEVE_PRIMES {
            return Err(ParamError::SievePrimes {
                count,
                max: MAX_SIEVE_PRIMES,
            }
            .into());
        }
        Ok(Self::build(count))
    }

    /// `B`.
    pub fn modulus(&self) -> u64 {
        self.modulus
    }

    fn build(count: usize) -> Self {
        let primes: Vec<u64> = std::iter::once(2u64)
            .chain(small_primes().iter().map(|&p| u64::from(p)))
            .take(count)
            .collect();
        let modulus: u64 = primes.iter().product();
        let basis = primes
            .iter()
            .map(|&p| {
                let others = modulus / p;
                let inv = Integer::from(others % p)
                    .invert(&Integer::from(p))
                    .map(|v| v.to_u64().unwrap_or(0))
                    .unwrap_or(0);
                ((u128::from(others) * u128::from(inv)) % u128::from(modulus)) as u64
            })
            .collect();
        Self {
            primes,
            modulus,
            basis,
        }
    }

    /// `floor(h / B) * B + r` for a `bits`-bit `h` with its top bit set, kept within `bits`
    /// bits with the top bit set; `r` is the residue coprime to `B` that `h mod B` selects.
    pub fn apply(&self, mut h: Integer, bits: u32) -> Integer {
        let b = self.modulus;
        if b == 1 {
            return h;
        }
        let v = mod_u64(&h, b);
        let r = self.coprime_residue(v);
        h -= v;
        h += r;
        if h.significant_bits() > bits {
            h -= b;
        } else if !h.get_bit(bits - 1) {
            h += b;
        }
        h
    }

    /// The residue coprime to `B` that `v` (in `[0, B)`) selects.
    fn coprime_residue(&self, v: u64) -> u64 {
        let mut w = v;
        let mut r: u128 = 0;
        for (&p, &e) in self.primes.iter().zip(&self.basis) {
            let digit = w % (p - 1);
            w /= p - 1;
            r += u128::from(digit + 1) * u128::from(e);
            r %= u128::from(self.modulus);
        }
        r as u64
    }
}

/// Products of consecutive odd primes up to [`TRIAL_DIVISION_LIMIT`], each below 2^64, with
/// their factors: one GMP remainder per product, then word arithmetic.
fn trial_division_groups() -> &'static [(u64, Vec<u64>)] {
    static GROUPS: OnceLock<Vec<(u64, Vec<u64>)>> = OnceLock::new();
    GROUPS.get_or_init(|| {
        let mut groups = Vec::new();
        let mut product = 1u64;
        let mut factors = Vec::new();
        for &p in small_primes().iter().filter(|&&p| p < TRIAL_DIVISION_LIMIT) {
            let p = u64::from(p);
            match product.checked_mul(p) {
                Some(next) => {
                    product = next;
                    factors.push(p);
                }
                None => {
                    groups.push((product, std::mem::take(&mut factors)));
                    product = p;
                    factors.push(p);
                }
            }
        }
        if !factors.is_empty() {
            groups.push((product, factors));
        }
        groups
    })
}

/// Counts from one hash-to-prime run, for the benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrimeSearchStats {
    /// Candidates derived (hashes computed).
    pub candidates: u32,
    /// Candidates that reached the Miller-Rabin test.
    pub miller_rabin_tests: u32,
}

/// The hash-to-prime function for one security level.
#[derive(Debug, Clone)]
pub struct HashToPrime {
    level: SecurityLevel,
    sieve: PreSieve,
    copy_context: bool,
}

impl HashToPrime {
    /// The function the VDFs use: [`DEFAULT_SIEVE_PRIMES`] sieving primes, context copying.
    pub fn new(level: SecurityLevel) -> Self {
        Self {
            level,
            sieve: PreSieve::build(DEFAULT_SIEVE_PRIMES),
            copy_context: true,
        }
    }

    /// A variant pre-sieving with the first `count` primes (0 to [`MAX_SIEVE_PRIMES`]); it
    /// produces different challenges, so it exists only for measurements.
    pub fn with_sieve_primes(mut self, count: usize) -> Result<Self> {
        self.sieve = PreSieve::new(count)?;
        Ok(self)
    }

    /// A variant that hashes the whole statement again for every candidate (same results,
    /// slower): the baseline of the context-copying measurement.
    pub fn without_context_copy(mut self) -> Self {
        self.copy_context = false;
        self
    }

    /// The security level.
    pub fn level(&self) -> SecurityLevel {
        self.level
    }

    /// The challenge prime for `statement` (the caller's complete, domain-separated encoding).
    pub fn prime(&self, statement: &[u8]) -> Result<Integer> {
        self.prime_with_stats(statement).map(|(l, _)| l)
    }

    /// [`HashToPrime::prime`] with the counts of the search.
    pub fn prime_with_stats(&self, statement: &[u8]) -> Result<(Integer, PrimeSearchStats)> {
        let mut base = Context::new(self.level);
        base.update(statement);
        let mut stats = PrimeSearchStats::default();
        for j in 0..MAX_CANDIDATES {
            let digest = self.digest(&base, statement, j);
            stats.candidates += 1;
            let c = self.candidate(&digest);
            if !passes_trial_division(&c) {
                continue;
            }
            stats.miller_rabin_tests += 1;
            if bpsw(&c) {
                return Ok((c, stats));
            }
        }
        Err(ParamError::NoPrime.into())
    }

    /// The digest of candidate `j`: from a copy of `base` (the statement absorbed), or by
    /// hashing the whole statement again without context copying.
    fn digest(&self, base: &Context, statement: &[u8], j: u32) -> Vec<u8> {
        if self.copy_context {
            let mut h = base.clone();
            h.update(&j.to_be_bytes());
            h.finalize()
        } else {
            let mut h = Context::new(self.level);
            h.update(statement);
            h.update(&j.to_be_bytes());
            h.finalize()
        }
    }

    /// Only the hashing of a search over `count` candidates (for the benchmarks); returns the
    /// first byte of the last digest so that nothing is optimised away.
    pub fn hash_candidates(&self, statement: &[u8], count: u32) -> u8 {
        let mut base = Context::new(self.level);
        base.update(statement);
        (0..count).fold(0, |_, j| self.digest(&base, statement, j)[0])
    }

    /// The pre-sieved candidate for a digest: `2k` bits, top bit set, coprime to `B`.
    pub fn candidate_from_digest(&self, digest: &[u8]) -> Integer {
        self.candidate(digest)
    }

    fn candidate(&self, digest: &[u8]) -> Integer {
        let bits = self.level.prime_bits();
        let mut h = Integer::from_digits(digest, Order::Msf);
        h.keep_bits_mut(bits);
        h.set_bit(bits - 1, true);
        self.sieve.apply(h, bits)
    }
}

/// `x mod m` for a 64-bit `m`.
fn mod_u64(x: &Integer, m: u64) -> u64 {
    // Non-negative `x` only (candidates are); limbs are little-endian, 64-bit on every target
    // GMP builds with here, folded from the top with 128-bit remainders.
    x.as_limbs().iter().rev().fold(0u64, |r, &limb| {
        (((u128::from(r) << 64) | u128::from(limb)) % u128::from(m)) as u64
    })
}

/// The primality test of a candidate: trial division by the primes up to 1021, then
/// Baillie-PSW. For candidates of more than 20 bits.
pub fn candidate_is_prime(c: &Integer) -> bool {
    passes_trial_division(c) && bpsw(c)
}

/// Baillie-PSW: fixed-width arithmetic up to 512 bits, GMP above.
fn bpsw(c: &Integer) -> bool {
    hourglass_arith::fixed::is_prime_bpsw(c)
        .unwrap_or_else(|| miller_rabin(c, &Integer::from(2)) && strong_lucas(c))
}

/// Whether `c` has no prime factor below [`TRIAL_DIVISION_LIMIT`].
fn passes_trial_division(c: &Integer) -> bool {
    if c.is_even() {
        return false;
    }
    trial_division_groups().iter().all(|(product, factors)| {
        let rem = mod_u64(c, *product);
        factors.iter().all(|&p| !rem.is_multiple_of(p))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenges_are_2k_bit_bpsw_primes_and_deterministic() {
        for level in [SecurityLevel::K128, SecurityLevel::K256] {
            let h = HashToPrime::new(level);
            let l = h.prime(b"statement").unwrap();
            assert_eq!(l.significant_bits(), level.prime_bits());
            assert!(l.is_probably_prime(40) != rug::integer::IsPrime::No);
            assert_eq!(l, h.prime(b"statement").unwrap());
            assert_ne!(l, h.prime(b"statement!").unwrap());
            // Context copying changes the cost, never the result.
            assert_eq!(
                l,
                h.clone()
                    .without_context_copy()
                    .prime(b"statement")
                    .unwrap()
            );
        }
    }

    #[test]
    fn sieved_candidates_are_coprime_to_b_and_reach_every_residue() {
        let h = HashToPrime::new(SecurityLevel::K128);
        let b = h.sieve.modulus;
        assert_eq!(b, 614_889_782_588_491_410);
        for i in 0..2000u32 {
            let digest = Sha256::digest(i.to_be_bytes());
            let c = h.candidate_from_digest(&digest);
            assert_eq!(c.significant_bits(), 256);
            assert_eq!(Integer::from(c.gcd_ref(&Integer::from(b))), 1);
        }
        // Every residue coprime to a small B is produced by the digit map.
        let small = PreSieve::new(4).unwrap(); // B = 210, phi(B) = 48
        let mut seen = std::collections::BTreeSet::new();
        for v in 0..small.modulus {
            let r = small.coprime_residue(v);
            assert_eq!(Integer::from(r).gcd(&Integer::from(210)), 1);
            seen.insert(r);
        }
        assert_eq!(seen.len(), 48);
    }

    #[test]
    fn zero_sieving_primes_uses_the_raw_hash() {
        let h = HashToPrime::new(SecurityLevel::K128)
            .with_sieve_primes(0)
            .unwrap();
        let digest = Sha256::digest(b"x");
        let mut expect = Integer::from_digits(&digest, Order::Msf);
        expect.set_bit(255, true);
        assert_eq!(h.candidate_from_digest(&digest), expect);
        assert!(HashToPrime::new(SecurityLevel::K128)
            .with_sieve_primes(16)
            .is_err());
    }

    #[test]
    fn trial_division_agrees_with_direct_division() {
        let groups = trial_division_groups();
        assert_eq!(groups.first().unwrap().1[0], 3);
        for seed in 0..500u32 {
            let c = Integer::from_digits(&Sha256::digest(seed.to_be_bytes()), Order::Msf);
            let direct = c.is_odd()
                && small_primes()
                    .iter()
                    .filter(|&&p| p < TRIAL_DIVISION_LIMIT)
                    .all(|&p| c.mod_u(p) != 0);
            assert_eq!(passes_trial_division(&c), direct);
        }
    }
}

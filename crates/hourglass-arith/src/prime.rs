//! Primality testing and random prime generation.
//!
//! Testing ([`is_probable_prime`]) is: trial division by small primes, a Miller-Rabin round to
//! base 2, a strong Lucas test with Selfridge's parameters (together these two are the
//! Baillie-PSW test, with no known counterexample), then `mr_rounds` further Miller-Rabin rounds
//! with random bases drawn from the caller's entropy source. By default `mr_rounds` is the count
//! FIPS 186-5 (Table B.1, "M-R tests only" column) asks for at the candidate's size, so the
//! strong Lucas test is a margin on top of the standard.
//!
//! Generation ([`random_prime`]) picks a random odd start with the top two bits set (so that a
//! product of two such primes has exactly twice the bits), sieves a window of candidates
//! `start + 2i` by the small primes, and tests the survivors in order.

use std::sync::OnceLock;

use rug::integer::IsPrime;
use rug::{Assign, Integer};

use crate::entropy::{random_exact_bits, random_range, random_u64, EntropySource};
use crate::{Error, Result};

/// Which tests a candidate must pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PrimalityTest {
    /// Miller-Rabin rounds with random bases (after the base-2 round).
    pub mr_rounds: u32,
    /// Whether the strong Lucas test runs (Baillie-PSW). On by default.
    pub lucas: bool,
}

impl PrimalityTest {
    /// The FIPS 186-5 round count for a candidate of `bits` bits, plus the strong Lucas test.
    pub fn fips186_5(bits: u32) -> Self {
        Self {
            mr_rounds: fips186_5_mr_rounds(bits),
            lucas: true,
        }
    }

    /// Exactly `mr_rounds` random-base rounds, with the strong Lucas test.
    pub fn with_rounds(mr_rounds: u32) -> Self {
        Self {
            mr_rounds,
            lucas: true,
        }
    }
}

/// Miller-Rabin rounds FIPS 186-5 Table B.1 asks for (M-R tests only) for primes of `bits` bits;
/// smaller candidates, outside the table, get the conservative 2^-100 count for 512 bits or more.
pub fn fips186_5_mr_rounds(bits: u32) -> u32 {
    match bits {
        0..=511 => 40,
        512..=1023 => 7,
        1024..=1535 => 5,
        _ => 4,
    }
}

/// The odd primes below `limit`, in increasing order (a sieve of Eratosthenes over the odd
/// numbers: `limit / 2` bytes while it runs).
pub fn odd_primes_below(limit: u32) -> Vec<u32> {
    // composite[i] is for 2i + 1.
    let half = (limit / 2) as usize;
    let mut composite = vec![false; half];
    let mut out = Vec::new();
    for i in 1..half {
        if composite[i] {
            continue;
        }
        let p = 2 * i + 1;
        out.push(p as u32);
        // Odd multiples of p from p^2: (p^2 - 1) / 2, stepping by p.
        let mut j = (p * p) / 2;
        while j < half {
            composite[j] = true;
            j += p;
        }
    }
    out
}

/// The product of `factors`, by a balanced product tree (fast for many small factors); 1 for
/// none.
pub fn product_of(factors: &[u32]) -> Integer {
    product_tree(factors.iter().map(|&p| Integer::from(p)).collect())
        .pop()
        .and_then(|mut root| root.pop())
        .unwrap_or_else(|| Integer::from(1))
}

/// The product tree of `leaves`: the leaves, then each level the products of adjacent pairs of
/// the one below (an odd last value carried up as it is), up to one value, the product of all
/// (no levels for no leaves). Balanced products keep GMP's multiplications of equal lengths.
pub fn product_tree(leaves: Vec<Integer>) -> Vec<Vec<Integer>> {
    if leaves.is_empty() {
        return Vec::new();
    }
    let mut levels = vec![leaves];
    while levels.last().is_some_and(|l| l.len() > 1) {
        let next = levels[levels.len() - 1]
            .chunks(2)
            .map(|c| match c {
                [a, b] => Integer::from(a * b),
                [a] => a.clone(),
                _ => unreachable!("chunks(2) yields one or two items"),
            })
            .collect();
        levels.push(next);
    }
    levels
}

/// Odd primes below 2^16, computed once.
pub fn small_primes() -> &'static [u32] {
    static PRIMES: OnceLock<Vec<u32>> = OnceLock::new();
    PRIMES.get_or_init(|| odd_primes_below(1 << 16))
}

/// The product of the odd primes below 2^16 (for smoothness tests by one GCD).
pub fn small_primorial() -> &'static Integer {
    static PRIMORIAL: OnceLock<Integer> = OnceLock::new();
    PRIMORIAL.get_or_init(|| product_of(small_primes()))
}

/// Is `n` a probable prime under `test`? Random bases come from `rng`.
pub fn is_probable_prime(
    n: &Integer,
    test: PrimalityTest,
    rng: &mut dyn EntropySource,
) -> Result<bool> {
    if let Some(verdict) = trial_division(n) {
        return Ok(verdict);
    }
    if !miller_rabin_secret(n, &Integer::from(2)) {
        return Ok(false);
    }
    if test.lucas && !strong_lucas(n) {
        return Ok(false);
    }
    mr_random_rounds(n, test.mr_rounds, rng)
}

/// Baillie-PSW alone (base-2 Miller-Rabin plus strong Lucas), deterministic. For public values
/// (checking a key someone gave us); generation should use [`is_probable_prime`].
pub fn is_prime_bpsw(n: &Integer) -> bool {
    match trial_division(n) {
        Some(verdict) => verdict,
        None => miller_rabin(n, &Integer::from(2)) && strong_lucas(n),
    }
}

/// `Some(verdict)` when small primes settle the question, `None` when more testing is needed.
fn trial_division(n: &Integer) -> Option<bool> {
    if *n < 2 {
        return Some(false);
    }
    if n.is_even() {
        return Some(*n == 2);
    }
    let primes = small_primes();
    let limit = if n.significant_bits() <= 32 {
        primes.len()
    } else {
        256.min(primes.len())
    };
    for &p in &primes[..limit] {
        if n.mod_u(p) == 0 {
            return Some(*n == p);
        }
        if let Some(v) = n.to_u64() {
            if u64::from(p) * u64::from(p) > v {
                return Some(true);
            }
        }
    }
    None
}

fn mr_random_rounds(n: &Integer, rounds: u32, rng: &mut dyn EntropySource) -> Result<bool> {
    if rounds == 0 {
        return Ok(true);
    }
    let low = Integer::from(2);
    let high = Integer::from(n - 1u32); // bases in [2, n-2]
    if high <= low {
        return Ok(true);
    }
    for _ in 0..rounds {
        let base = random_range(rng, &low, &high)?;
        if !miller_rabin_secret(n, &base) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// One Miller-Rabin round: is odd `n > 3` a strong probable prime to `base`? For public `n`
/// (variable-time exponentiation); a candidate that may become a secret prime goes through
/// [`is_probable_prime`], whose rounds exponentiate in constant time.
pub fn miller_rabin(n: &Integer, base: &Integer) -> bool {
    strong_probable_prime(n, base, |b, d| b.pow_mod_ref(d, n).map(Integer::from))
}

/// [`miller_rabin`] with the exponentiation `base^d mod n` (`d` odd, `n - 1 = d 2^s`) done in
/// time independent of `d`, which is as secret as `n`: on AVX-512 IFMA from 513 bits our
/// fixed-window exponentiation, which is also faster than GMP's variable-time `mpz_powm` there
/// (RSA-2048 key generation 6% faster, `hourglass bench keygen --bits 2048 --seed kg`), else
/// GMP's `mpz_powm_sec`. The squarings after it stop at the first `-1`, which depends on the
/// base and `n` only through where `-1` appears; the strong Lucas test is variable-time.
fn miller_rabin_secret(n: &Integer, base: &Integer) -> bool {
    strong_probable_prime(n, base, |b, d| crate::modular::pow_mod_ct(b, d, n).ok())
}

/// The Miller-Rabin round around `pow(base, d)`, `None` for a base that has no power.
fn strong_probable_prime(
    n: &Integer,
    base: &Integer,
    pow: impl Fn(&Integer, &Integer) -> Option<Integer>,
) -> bool {
    let n_minus_1 = Integer::from(n - 1u32);
    let s = n_minus_1.find_one(0).unwrap_or(0);
    let d = Integer::from(&n_minus_1 >> s);
    let Some(mut x) = pow(base, &d) else {
        return false;
    };
    if x == 1 || x == n_minus_1 {
        return true;
    }
    for _ in 1..s {
        x.square_mut();
        x %= n;
        if x == n_minus_1 {
            return true;
        }
        if x == 1 {
            return false;
        }
    }
    false
}

/// The strong Lucas probable-prime test with Selfridge's method A parameters
/// (D the first of 5, -7, 9, -11, ... with Jacobi(D/n) = -1; P = 1; Q = (1 - D)/4).
pub fn strong_lucas(n: &Integer) -> bool {
    if *n == 2 {
        return true;
    }
    if *n < 2 || n.is_even() {
        return false;
    }
    if n.is_perfect_square() {
        return false;
    }
    // Selfridge's D.
    let mut d_abs: i64 = 5;
    let mut sign: i64 = 1;
    let d = loop {
        let d = Integer::from(d_abs * sign);
        match d.jacobi(n) {
            -1 => break d_abs * sign,
            // gcd(D, n) > 1: n is composite unless n == |D|.
            0 if *n != d_abs => return false,
            _ => {}
        }
        d_abs += 2;
        sign = -sign;
    };
    let q = (1 - d) / 4; // P = 1
                         // n + 1 = k * 2^s with k odd.
    let n_plus_1 = Integer::from(n + 1u32);
    let s = n_plus_1.find_one(0).unwrap_or(0);
    let k = Integer::from(&n_plus_1 >> s);

    // Binary ladder for U_k, V_k (mod n), tracking Q^k.
    let d_int = Integer::from(d);
    let q_int = Integer::from(q);
    let mut u = Integer::from(1); // U_1
    let mut v = Integer::from(1); // V_1 = P
    let mut qk = Integer::from(&q_int) % n; // Q^1
    let mut tmp = Integer::new();
    let half = |x: &mut Integer| {
        if x.is_odd() {
            *x += n;
        }
        *x >>= 1;
    };
    let bits = k.significant_bits();
    for i in (0..bits - 1).rev() {
        // Double: U_2m = U_m V_m ; V_2m = V_m^2 - 2 Q^m.
        u *= &v;
        u %= n;
        tmp.assign(&v * &v);
        tmp -= Integer::from(&qk << 1);
        v.assign(&tmp % n);
        qk.square_mut();
        qk %= n;
        if k.get_bit(i) {
            // Increment: U_{m+1} = (P U + V)/2 ; V_{m+1} = (D U + P V)/2.
            let mut nu = Integer::from(&u + &v);
            let mut nv = Integer::from(&d_int * &u);
            nv += &v;
            nu.modulo_mut(n);
            nv.modulo_mut(n);
            half(&mut nu);
            half(&mut nv);
            u = nu;
            v = nv;
            qk *= &q_int;
            qk.modulo_mut(n);
        }
    }
    u.modulo_mut(n);
    v.modulo_mut(n);
    if u == 0 || v == 0 {
        return true;
    }
    for _ in 1..s {
        // V_2m = V_m^2 - 2 Q^m.
        tmp.assign(&v * &v);
        tmp -= Integer::from(&qk << 1);
        v.assign(&tmp % n);
        v.modulo_mut(n);
        if v == 0 {
            return true;
        }
        qk.square_mut();
        qk %= n;
    }
    false
}

/// What kind of prime [`random_prime`] should find.
pub struct PrimeRequest<'a> {
    /// Exact bit length.
    pub bits: u32,
    /// Set the top two bits (the default), so a product of two such primes has `2 * bits` bits.
    pub top_two_bits: bool,
    /// The tests a candidate must pass.
    pub test: PrimalityTest,
    /// An extra condition checked on sieve survivors before the (expensive) primality test,
    /// e.g. `gcd(p - 1, e) = 1`.
    pub accept: Option<&'a (dyn Fn(&Integer) -> bool + Sync)>,
}

impl std::fmt::Debug for PrimeRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrimeRequest")
            .field("bits", &self.bits)
            .field("top_two_bits", &self.top_two_bits)
            .field("test", &self.test)
            .finish_non_exhaustive()
    }
}

impl<'a> PrimeRequest<'a> {
    /// A `bits`-bit prime with the top two bits set and the FIPS 186-5 test.
    pub fn new(bits: u32) -> Self {
        Self {
            bits,
            top_two_bits: true,
            test: PrimalityTest::fips186_5(bits),
            accept: None,
        }
    }

    /// Replaces the primality test.
    pub fn test(mut self, test: PrimalityTest) -> Self {
        self.test = test;
        self
    }

    /// Adds a condition candidates must meet.
    pub fn accept(mut self, accept: &'a (dyn Fn(&Integer) -> bool + Sync)) -> Self {
        self.accept = Some(accept);
        self
    }
}

/// Candidates per sieve window.
pub const SIEVE_WINDOW: usize = 4096;

/// How many small primes to sieve with for candidates of `bits` bits (chosen by benchmark:
/// more primes save Miller-Rabin rounds on big candidates, but cost sieve time on small ones).
pub fn sieve_prime_count(bits: u32) -> usize {
    let primes = small_primes().len();
    match bits {
        0..=64 => 0,
        65..=256 => 256,
        257..=1024 => 2048,
        1025..=2048 => 4096,
        _ => primes,
    }
    .min(primes)
}

/// `a^-1 mod p` for a prime `p` and `a` not divisible by it.
pub fn inverse_mod_small(a: u32, p: u32) -> u32 {
    let (mut base, mut exp, mut acc) = (u64::from(a % p), p - 2, 1u64);
    let m = u64::from(p);
    while exp > 0 {
        if exp & 1 == 1 {
            acc = acc * base % m;
        }
        base = base * base % m;
        exp >>= 1;
    }
    acc as u32
}

/// Marks every `i < marks.len()` for which `start + i * step` is divisible by 2 or by one of
/// `primes` (odd primes). Unmarked positions are the survivors of the sieve.
pub fn sieve_progression(start: &Integer, step: &Integer, primes: &[u32], marks: &mut [bool]) {
    marks.iter_mut().for_each(|m| *m = false);
    let window = marks.len();
    // The prime 2.
    if step.is_even() {
        if start.is_even() {
            marks.iter_mut().for_each(|m| *m = true);
            return;
        }
    } else {
        let first = usize::from(start.is_odd());
        marks
            .iter_mut()
            .skip(first)
            .step_by(2)
            .for_each(|m| *m = true);
    }
    for &p in primes {
        let r = start.mod_u(p);
        let s = step.mod_u(p);
        if s == 0 {
            if r == 0 {
                marks.iter_mut().for_each(|m| *m = true);
                return;
            }
            continue;
        }
        // start + i*step = 0 (mod p)  <=>  i = -start / step (mod p).
        let neg = u64::from((p - r) % p);
        let mut i = (neg * u64::from(inverse_mod_small(s, p)) % u64::from(p)) as usize;
        while i < window {
            marks[i] = true;
            i += p as usize;
        }
    }
}

/// The first probable prime among `start + i * step` (`i < SIEVE_WINDOW`, in order) that lies in
/// `[low, high)` and passes `accept` and `test`; `None` if the window holds none.
#[allow(clippy::too_many_arguments)]
pub fn first_prime_in_progression(
    start: &Integer,
    step: &Integer,
    low: &Integer,
    high: &Integer,
    test: PrimalityTest,
    accept: Option<&(dyn Fn(&Integer) -> bool + Sync)>,
    rng: &mut dyn EntropySource,
) -> Result<Option<(usize, Integer)>> {
    let nprimes = sieve_prime_count(high.significant_bits());
    let primes = &small_primes()[..nprimes];
    let mut marks = vec![false; SIEVE_WINDOW];
    sieve_progression(start, step, primes, &mut marks);
    let smallest_unsieved = primes.last().copied().unwrap_or(2);
    let mut candidate = Integer::new();
    for (i, &composite) in marks.iter().enumerate() {
        if composite {
            continue;
        }
        candidate.assign(step * i as u64);
        candidate += start;
        if candidate >= *high {
            break;
        }
        if candidate < *low || candidate <= smallest_unsieved {
            continue;
        }
        if let Some(accept) = accept {
            if !accept(&candidate) {
                continue;
            }
        }
        if is_probable_prime(&candidate, test, rng)? {
            return Ok(Some((i, candidate)));
        }
    }
    Ok(None)
}

/// A random prime of exactly `request.bits` bits, by incremental sieving.
pub fn random_prime(request: &PrimeRequest<'_>, rng: &mut dyn EntropySource) -> Result<Integer> {
    let bits = request.bits;
    if bits < 3 {
        return Err(Error::PrimeTooSmall(bits));
    }
    let low = Integer::from(1) << (bits - 1);
    let high = Integer::from(1) << bits;
    let two = Integer::from(2);
    loop {
        let mut start = random_exact_bits(rng, bits)?;
        if request.top_two_bits {
            start.set_bit(bits - 2, true);
        }
        start.set_bit(0, true);
        if let Some((_, p)) = first_prime_in_progression(
            &start,
            &two,
            &low,
            &high,
            request.test,
            request.accept,
            rng,
        )? {
            return Ok(p);
        }
    }
}

/// A random `bits`-bit RSA modulus `p q` (factors discarded), for rate measurements and
/// throwaway groups.
pub fn random_modulus(bits: u32, rng: &mut dyn EntropySource) -> Result<Integer> {
    let p = random_prime(&PrimeRequest::new(bits - bits / 2), rng)?;
    let q = random_prime(&PrimeRequest::new(bits / 2), rng)?;
    Ok(p * q)
}

/// A random prime of exactly 64 bits (top bit set), found from a random odd start by
/// stepping 2 and testing each candidate with [`is_prime_u64`]. For small secret primes
/// drawn often, such as the modulus extension of RSA's fault check: 2.6 times faster
/// than GMP's `next_prime` from the same start (no big-integer work, one random draw).
pub fn random_prime_u64(rng: &mut dyn EntropySource) -> Result<u64> {
    let mut c = random_u64(rng)? | (1 << 63) | 1;
    loop {
        if is_prime_u64(c) {
            return Ok(c);
        }
        // Past the last prime below 2^64 (2^64 - 59): go on from the bottom of the range, so
        // that even a source stuck at its top ends.
        c = c.checked_add(2).unwrap_or((1 << 63) | 1);
    }
}

/// Whether `n` is prime, exactly, for every 64-bit `n`: trial division by the primes up to
/// 53, then Miller-Rabin to base 2 and, for the candidates that pass, to the six other bases of
/// Jim Sinclair's set `{2, 325, 9375, 28178, 450775, 9780504, 1795265022}`, which leaves no
/// strong pseudoprime below 2^64. In 64-bit Montgomery arithmetic, the six bases' chains
/// interleaved.
pub fn is_prime_u64(n: u64) -> bool {
    const SMALL: [u64; 16] = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53];
    if n < 2 {
        return false;
    }
    for p in SMALL {
        if n.is_multiple_of(p) {
            return n == p;
        }
    }
    if n < 53 * 53 {
        return true;
    }
    let m = Mont64::new(n);
    m.strong_probable_prime([2])
        && m.strong_probable_prime([325, 9375, 28178, 450775, 9780504, 1795265022])
}

/// Montgomery arithmetic modulo an odd 64-bit `n > 1`, with `R = 2^64`; values fully reduced.
struct Mont64 {
    n: u64,
    /// `n^-1 mod 2^64`.
    inv: u64,
    /// `R^2 mod n`.
    r2: u64,
}

impl Mont64 {
    fn new(n: u64) -> Self {
        let inv = crate::mont::inverse::inverse_mod_2_64(n);
        let r = n.wrapping_neg() % n;
        let r2 = (u128::from(r) * u128::from(r) % u128::from(n)) as u64;
        Self { n, inv, r2 }
    }

    /// `t R^-1 mod n` for `t < n R`: with `m = t n^-1 mod R` the low halves of `t` and `m n`
    /// agree, so the result is the difference of the high halves (plus `n` if negative).
    fn reduce(&self, t: u128) -> u64 {
        let m = (t as u64).wrapping_mul(self.inv);
        let mn = u128::from(m) * u128::from(self.n);
        let (r, borrow) = ((t >> 64) as u64).overflowing_sub((mn >> 64) as u64);
        if borrow {
            r.wrapping_add(self.n)
        } else {
            r
        }
    }

    /// `a b R^-1 mod n` for `a, b < n`.
    fn mul(&self, a: u64, b: u64) -> u64 {
        self.reduce(u128::from(a) * u128::from(b))
    }

    /// Whether `n` is a strong probable prime to every base (the bases' chains run side by side).
    fn strong_probable_prime<const B: usize>(&self, bases: [u64; B]) -> bool {
        let n = self.n;
        let s = (n - 1).trailing_zeros();
        let d = (n - 1) >> s;
        let one = self.mul(1, self.r2);
        let minus_one = n - one;
        // A base that is a multiple of n says nothing: it starts at 1 and passes.
        let base = bases.map(|a| self.mul(a % n, self.r2));
        let mut x = base;
        for i in (0..63 - d.leading_zeros()).rev() {
            for (x, &b) in x.iter_mut().zip(&base) {
                *x = self.mul(*x, *x);
                if d >> i & 1 == 1 {
                    *x = self.mul(*x, b);
                }
            }
        }
        x.iter().zip(&base).all(|(&x, &b)| {
            if b == 0 || x == one || x == minus_one {
                return true;
            }
            let mut x = x;
            for _ in 1..s {
                x = self.mul(x, x);
                if x == minus_one {
                    return true;
                }
            }
            false
        })
    }
}

/// GMP's own verdict, exposed for differential tests.
pub fn gmp_is_prime(n: &Integer) -> bool {
    n.is_probably_prime(30) != IsPrime::No
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::entropy::SeededEntropy;
    use proptest::prelude::*;

    #[test]
    fn small_numbers_match_sieve() {
        let mut rng = SeededEntropy::new(b"small");
        let primes = small_primes();
        let mut expected = vec![false; 5000];
        expected[2] = true;
        for &p in primes.iter().take_while(|&&p| p < 5000) {
            expected[p as usize] = true;
        }
        for (n, &is_p) in expected.iter().enumerate() {
            let n = Integer::from(n);
            assert_eq!(
                is_probable_prime(&n, PrimalityTest::with_rounds(3), &mut rng).unwrap(),
                is_p,
                "n = {n}"
            );
            assert_eq!(is_prime_bpsw(&n), is_p, "bpsw n = {n}");
        }
    }

    #[test]
    fn odd_primes_below_counts_and_edges() {
        // pi(2^20) = 82,025 and pi(2^16) = 6,542, less the prime 2.
        assert_eq!(odd_primes_below(1 << 20).len(), 82_024);
        assert_eq!(small_primes().len(), 6_541);
        let below = odd_primes_below(100_000);
        for n in 0u32..100_000 {
            let expected = n > 2 && Integer::from(n).is_probably_prime(30) != IsPrime::No;
            assert_eq!(below.binary_search(&n).is_ok(), expected, "n = {n}");
        }
        assert!(odd_primes_below(3).is_empty());
        assert_eq!(odd_primes_below(8), vec![3, 5, 7]);
        assert_eq!(odd_primes_below(7), vec![3, 5]);
    }

    #[test]
    fn product_of_is_the_plain_product() {
        let primes = odd_primes_below(5_000);
        let plain = primes.iter().fold(Integer::from(1), |acc, &p| acc * p);
        assert_eq!(product_of(&primes), plain);
        assert_eq!(product_of(&[]), 1);
        assert_eq!(product_of(&[7]), 7);
    }

    #[test]
    fn lucas_alone_agrees_with_sieve_on_small_odd_numbers() {
        let primes = small_primes();
        // Strong Lucas pseudoprimes (OEIS A217255) below 20000 are its only errors.
        let pseudo = [5459u32, 5777, 10877, 16109, 18971];
        for n in (3u32..20000).step_by(2) {
            let is_p = primes.binary_search(&n).is_ok();
            let lucas = strong_lucas(&Integer::from(n));
            assert_eq!(lucas, is_p || pseudo.contains(&n), "n = {n}");
        }
    }

    #[test]
    fn known_pseudoprimes_are_rejected() {
        let mut rng = SeededEntropy::new(b"psp");
        // Strong pseudoprimes to base 2, and a strong psp to bases 2..=11.
        for n in [
            "2047",
            "3277",
            "4033",
            "3215031751",
            "2152302898747",
            "3474749660383",
        ] {
            let n: Integer = n.parse().unwrap();
            assert!(
                miller_rabin(&n, &Integer::from(2)),
                "{n} is a base-2 strong pseudoprime"
            );
            assert!(!is_prime_bpsw(&n), "{n}");
            assert!(!is_probable_prime(&n, PrimalityTest::with_rounds(0), &mut rng).unwrap());
        }
        // Carmichael number with only large factors.
        let c: Integer = "3825123056546413051".parse().unwrap();
        assert!(!is_prime_bpsw(&c));
    }

    #[test]
    fn random_primes_have_requested_shape() {
        let mut rng = SeededEntropy::new(b"shape");
        for bits in [16u32, 64, 100, 256, 512] {
            let p = random_prime(&PrimeRequest::new(bits), &mut rng).unwrap();
            assert_eq!(p.significant_bits(), bits);
            assert!(p.get_bit(bits - 2), "top two bits set");
            assert!(gmp_is_prime(&p));
        }
    }

    #[test]
    fn progression_sieve_marks_exactly_the_multiples() {
        let start = Integer::from(1_000_003u64);
        let step = Integer::from(30_030u64); // divisible by 2, 3, 5, 7, 11, 13
        let primes = &small_primes()[..100];
        let mut marks = vec![false; 2000];
        sieve_progression(&start, &step, primes, &mut marks);
        for (i, &m) in marks.iter().enumerate() {
            let v = Integer::from(&step * i as u64) + &start;
            let divisible = v.is_even() || primes.iter().any(|&p| v.mod_u(p) == 0);
            assert_eq!(m, divisible, "i = {i}");
        }
        let odd_step = Integer::from(65537u32);
        sieve_progression(&start, &odd_step, primes, &mut marks);
        for (i, &m) in marks.iter().enumerate() {
            let v = Integer::from(&odd_step * i as u64) + &start;
            let divisible = v.is_even() || primes.iter().any(|&p| v.mod_u(p) == 0);
            assert_eq!(m, divisible, "i = {i}");
        }
    }

    #[test]
    fn accept_condition_is_honoured() {
        let mut rng = SeededEntropy::new(b"accept");
        let e = Integer::from(65537);
        let cond = |c: &Integer| Integer::from(c - 1u32).gcd(&e) == 1;
        let p = random_prime(&PrimeRequest::new(128).accept(&cond), &mut rng).unwrap();
        assert_eq!(Integer::from(&p - 1u32).gcd(&e), 1);
    }

    #[test]
    fn the_64_bit_test_is_exact() {
        // Every n below 20000, against the sieve.
        let primes = small_primes();
        for n in 0u64..20000 {
            let expected = n == 2 || (n > 2 && primes.binary_search(&(n as u32)).is_ok());
            assert_eq!(is_prime_u64(n), expected, "n = {n}");
        }
        // Strong pseudoprimes to several small bases, Carmichael numbers, squares of primes,
        // and the primes and composites at the top of the range.
        for n in [
            2047u64,
            3215031751,
            2152302898747,
            3474749660383,
            341550071728321,
            3825123056546413051,
            4294967291 * 4294967291,
            u64::MAX,
            u64::MAX - 58,
            u64::MAX - 1,
            (1 << 63) + 1,
        ] {
            assert_eq!(is_prime_u64(n), gmp_is_prime(&Integer::from(n)), "n = {n}");
        }
        assert!(
            is_prime_u64(u64::MAX - 58),
            "2^64 - 59 is the largest 64-bit prime"
        );
        for n in (u64::MAX - 3000..=u64::MAX).chain((1 << 63) - 1000..(1 << 63) + 3000) {
            assert_eq!(is_prime_u64(n), gmp_is_prime(&Integer::from(n)), "n = {n}");
        }
    }

    #[test]
    fn random_64_bit_primes_are_prime_and_full_length() {
        let mut rng = SeededEntropy::new(b"u64 primes");
        for _ in 0..200 {
            let p = random_prime_u64(&mut rng).unwrap();
            assert!(p >> 63 == 1);
            assert!(gmp_is_prime(&Integer::from(p)), "{p}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, rng_algorithm: proptest::test_runner::RngAlgorithm::ChaCha, ..ProptestConfig::default() })]
        #[test]
        fn agrees_with_gmp(x in any::<u128>(), y in any::<u64>()) {
            let mut rng = SeededEntropy::new(&x.to_le_bytes());
            let n = (Integer::from(x) << 64) + y;
            let n = n | 1u32;
            prop_assert_eq!(is_probable_prime(&n, PrimalityTest::with_rounds(2), &mut rng).unwrap(), gmp_is_prime(&n));
            let q = n.next_prime();
            prop_assert!(is_prime_bpsw(&q));
            prop_assert!(strong_lucas(&q));
        }

        #[test]
        fn the_64_bit_test_agrees_with_gmp(n in any::<u64>()) {
            prop_assert_eq!(is_prime_u64(n), gmp_is_prime(&Integer::from(n)));
            prop_assert_eq!(is_prime_u64(n | 1), gmp_is_prime(&Integer::from(n | 1)));
        }
    }
}

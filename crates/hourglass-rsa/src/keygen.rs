//! Key generation for the five variants.

use hourglass_arith::entropy::{random_exact_bits, random_range, EntropySource};
use hourglass_arith::modular::{crt_pair, inverse, lcm};
use hourglass_arith::prime::{
    first_prime_in_progression, inverse_mod_small, is_probable_prime, random_prime, small_primes,
    small_primorial, PrimalityTest, PrimeRequest, SIEVE_WINDOW,
};
use hourglass_arith::secret::{inverse_ct, inverse_odd_ct};
use hourglass_arith::Integer;
use rug::Assign;

use crate::key::{PrivateKey, Variant};
use crate::params::{
    rebalanced_dp_bits, rebalanced_weakness, security_level, short_e_sizes, short_e_weakness,
    Weakness,
};
use crate::{Error, Insecurity, ParamError, Result};

/// Default size of the extra factor `k_p2` in scheme A (the paper's 56 bits).
pub const DEFAULT_KP2_BITS: u32 = 56;

/// Smallest modulus accepted without `allow_insecure` (RSA-768 and RSA-829 are factored).
pub const MIN_SECURE_BITS: u32 = 1024;
/// Largest modulus accepted.
pub const MAX_BITS: u32 = 16384;

/// How to generate a key. Build with [`KeyGenOptions::new`], adjust, then [`generate`](Self::generate).
#[derive(Debug, Clone)]
pub struct KeyGenOptions {
    bits: u32,
    variant: Variant,
    e: Option<Integer>,
    dp_bits: Option<u32>,
    e_bits: Option<u32>,
    kp2_bits: u32,
    test: Option<PrimalityTest>,
    allow_insecure: bool,
    threads: usize,
}

/// What [`KeyGenOptions::review`] found: reasons to refuse, and milder warnings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParameterReview {
    /// Weaknesses that published attacks exploit (refused unless `allow_insecure`).
    pub insecure: Vec<Weakness>,
    /// Things worth knowing that do not break the key.
    pub warnings: Vec<String>,
}

impl KeyGenOptions {
    /// Safe defaults for `bits` and `variant`.
    pub fn new(bits: u32, variant: Variant) -> Self {
        Self {
            bits,
            variant,
            e: None,
            dp_bits: None,
            e_bits: None,
            kp2_bits: DEFAULT_KP2_BITS,
            test: None,
            allow_insecure: false,
            threads: 1,
        }
    }

    /// Public exponent for the standard and CRT variants (default 65537).
    pub fn public_exponent(mut self, e: Integer) -> Self {
        self.e = Some(e);
        self
    }

    /// Bits of the CRT exponents `d_p`, `d_q` (rebalanced, schemes A and B).
    pub fn dp_bits(mut self, bits: u32) -> Self {
        self.dp_bits = Some(bits);
        self
    }

    /// Bits of the public exponent (schemes A and B).
    pub fn e_bits(mut self, bits: u32) -> Self {
        self.e_bits = Some(bits);
        self
    }

    /// Bits of the extra factor `k_p2` (scheme A).
    pub fn kp2_bits(mut self, bits: u32) -> Self {
        self.kp2_bits = bits;
        self
    }

    /// Primality test for the primes (default: FIPS 186-5 rounds plus strong Lucas).
    pub fn primality(mut self, test: PrimalityTest) -> Self {
        self.test = Some(test);
        self
    }

    /// Accept parameters that published attacks break (tests, reproducing papers).
    pub fn allow_insecure(mut self, allow: bool) -> Self {
        self.allow_insecure = allow;
        self
    }

    /// Threads for the prime searches (p and q are searched in parallel when 2 or more).
    pub fn threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// The modulus size.
    pub fn bits(&self) -> u32 {
        self.bits
    }

    /// The variant.
    pub fn variant(&self) -> Variant {
        self.variant
    }

    /// The CRT exponent size that will be used (rebalanced and schemes A/B).
    pub fn effective_dp_bits(&self) -> u32 {
        self.dp_bits.unwrap_or(match self.variant {
            Variant::Rebalanced => rebalanced_dp_bits(self.bits),
            _ => short_e_sizes(self.bits).1,
        })
    }

    /// The public exponent size that will be used (schemes A/B).
    pub fn effective_e_bits(&self) -> u32 {
        self.e_bits.unwrap_or(short_e_sizes(self.bits).0)
    }

    fn public_exponent_or_default(&self) -> Integer {
        self.e.clone().unwrap_or_else(|| Integer::from(65537))
    }

    /// Checks the parameters against published attacks and hard limits.
    pub fn review(&self) -> Result<ParameterReview> {
        let mut review = ParameterReview::default();
        let n = self.bits;
        if !(64..=MAX_BITS).contains(&n) {
            return Err(ParamError::ModulusSize {
                bits: n,
                min: 64,
                max: MAX_BITS,
            }
            .into());
        }
        if n < MIN_SECURE_BITS {
            review
                .insecure
                .push(Weakness::ModulusFactorable { bits: n });
        } else if n < 2048 {
            review.warnings.push(format!(
                "a {n}-bit modulus gives about {} bits of security; NIST disallows it since 2013",
                security_level(n)
            ));
        }
        let half = n / 2;
        match self.variant {
            Variant::Standard | Variant::Crt => {
                let e = self.public_exponent_or_default();
                if e < 3 || e.is_even() {
                    return Err(ParamError::PublicExponentSmallOrEven.into());
                }
                if e.significant_bits() >= half {
                    return Err(ParamError::PublicExponentTooLarge {
                        e_bits: e.significant_bits(),
                        modulus_bits: n,
                    }
                    .into());
                }
                if e <= 65536 {
                    review.warnings.push(format!(
                        "e = {e} is below 65537 (FIPS 186-5 asks for 2^16 < e < 2^256); safe only with padding"
                    ));
                }
            }
            Variant::Rebalanced => {
                let dp = self.effective_dp_bits();
                if dp < 16 || dp + 2 >= half {
                    return Err(ParamError::DpBitsRange {
                        dp_bits: dp,
                        min: 16,
                        max: half - 3,
                    }
                    .into());
                }
                if let Some(why) = rebalanced_weakness(n, dp) {
                    review.insecure.push(why);
                }
            }
            Variant::SchemeA | Variant::SchemeB => {
                let (ne, nd) = (self.effective_e_bits(), self.effective_dp_bits());
                if ne < 16 || nd < 16 || ne >= n || nd >= half {
                    return Err(ParamError::ShortESizes {
                        e_bits: ne,
                        dp_bits: nd,
                        modulus_bits: n,
                    }
                    .into());
                }
                let extra = if self.variant == Variant::SchemeA {
                    self.kp2_bits
                } else {
                    0
                };
                if ne + nd < half + extra + 16 {
                    return Err(ParamError::NoRoomForKp {
                        sum: ne + nd,
                        kp2_bits: extra,
                    }
                    .into());
                }
                if let Some(why) = short_e_weakness(n, ne, nd) {
                    review.insecure.push(why);
                }
            }
        }
        if let Some(test) = self.test {
            if test.mr_rounds < 1 && !test.lucas {
                review.insecure.push(Weakness::NoPrimalityTest);
            }
        }
        Ok(review)
    }

    /// Generates a key. Fails with [`Error::Insecure`] when [`Self::review`] finds a broken
    /// parameter and `allow_insecure` is off.
    pub fn generate(&self, rng: &mut dyn EntropySource) -> Result<PrivateKey> {
        let review = self.review()?;
        if !review.insecure.is_empty() && !self.allow_insecure {
            return Err(Insecurity::Weaknesses(review.insecure).into());
        }
        let key = match self.variant {
            Variant::Standard | Variant::Crt => self.generate_standard(rng)?,
            Variant::Rebalanced => self.generate_rebalanced(rng)?,
            Variant::SchemeA | Variant::SchemeB => self.generate_short_e(rng)?,
        };
        Ok(key)
    }

    fn test_for(&self, bits: u32) -> PrimalityTest {
        self.test.unwrap_or_else(|| PrimalityTest::fips186_5(bits))
    }

    fn prime_sizes(&self) -> (u32, u32) {
        (self.bits - self.bits / 2, self.bits / 2)
    }

    fn generate_standard(&self, rng: &mut dyn EntropySource) -> Result<PrivateKey> {
        let e = self.public_exponent_or_default();
        let (pb, qb) = self.prime_sizes();
        // gcd(c - 1, e) = 1 in constant time: c becomes a secret prime.
        let coprime = |c: &Integer| inverse_ct(&Integer::from(c - 1u32), &e).is_ok();
        loop {
            let (p, q) = in_parallel(self.threads, rng, &|rng, which| {
                let bits = if which == 0 { pb } else { qb };
                Ok(random_prime(
                    &PrimeRequest::new(bits)
                        .test(self.test_for(bits))
                        .accept(&coprime),
                    rng,
                )?)
            })?;
            if !far_apart(&p, &q, self.bits) {
                continue;
            }
            let lambda = lcm(&Integer::from(&p - 1u32), &Integer::from(&q - 1u32));
            let d = inverse_odd_ct(&e, &lambda)?;
            if d.significant_bits() <= self.bits / 2 {
                continue; // FIPS 186-5: d > 2^(nlen/2)
            }
            let n = Integer::from(&p * &q);
            return PrivateKey::from_components(n, e, d, p, q, None, None, Some(self.variant));
        }
    }

    fn generate_rebalanced(&self, rng: &mut dyn EntropySource) -> Result<PrivateKey> {
        let (pb, qb) = self.prime_sizes();
        let s = self.effective_dp_bits();
        loop {
            let (p, mut q) = in_parallel(self.threads, rng, &|rng, which| {
                let bits = if which == 0 { pb } else { qb };
                Ok(random_prime(
                    &PrimeRequest::new(bits).test(self.test_for(bits)),
                    rng,
                )?)
            })?;
            let pm1 = Integer::from(&p - 1u32);
            if Integer::from(pm1.gcd_ref(&Integer::from(&q - 1u32))) != 2 {
                // Keep p; search q with gcd(p-1, q-1) = 2 built into the sieve filter.
                let coprime = |c: &Integer| Integer::from(c - 1u32).gcd(&pm1) == 2;
                q = random_prime(
                    &PrimeRequest::new(qb)
                        .test(self.test_for(qb))
                        .accept(&coprime),
                    rng,
                )?;
            }
            if !far_apart(&p, &q, self.bits) {
                continue;
            }
            let qm1 = Integer::from(&q - 1u32);
            let dp = random_odd_coprime(s, &pm1, rng)?;
            let mut dq = random_odd_coprime(s, &qm1, rng)?;
            while dq == dp {
                dq = random_odd_coprime(s, &qm1, rng)?;
            }
            // d = d_p mod (p-1), d = d_q mod (q-1): consistent because both are odd and
            // gcd(p-1, q-1) = 2.
            let d = crt_pair(&dp, &pm1, &dq, &qm1)?;
            let lambda = lcm(&pm1, &qm1);
            // d is odd (it is d_p modulo the even p - 1).
            let e = inverse_odd_ct(&d, &lambda)?;
            let n = Integer::from(&p * &q);
            return PrivateKey::from_components(
                n,
                e,
                d,
                p,
                q,
                Some(dp),
                Some(dq),
                Some(self.variant),
            );
        }
    }

    fn generate_short_e(&self, rng: &mut dyn EntropySource) -> Result<PrivateKey> {
        let (pb, qb) = self.prime_sizes();
        let (ne, nd) = (self.effective_e_bits(), self.effective_dp_bits());
        let e = loop {
            let mut e = random_exact_bits(rng, ne)?;
            e.set_bit(0, true);
            if e > 65537 {
                break e;
            }
        };
        loop {
            let ((p, dp), (q, dq)) = in_parallel(self.threads, rng, &|rng, which| {
                let h = if which == 0 { pb } else { qb };
                let test = self.test_for(h);
                match self.variant {
                    Variant::SchemeA => scheme_a_prime(&e, h, nd, self.kp2_bits, test, rng),
                    _ => scheme_b_prime(&e, h, nd, test, rng),
                }
            })?;
            if !far_apart(&p, &q, self.bits) {
                continue;
            }
            let pm1 = Integer::from(&p - 1u32);
            let qm1 = Integer::from(&q - 1u32);
            // Both d_p and d_q are e^-1 modulo gcd(p-1, q-1), so the CRT system is consistent.
            let d = crt_pair(&dp, &pm1, &dq, &qm1)?;
            let n = Integer::from(&p * &q);
            return PrivateKey::from_components(
                n,
                e,
                d,
                p,
                q,
                Some(dp),
                Some(dq),
                Some(self.variant),
            );
        }
    }
}

/// FIPS 186-5: |p - q| > 2^(nlen/2 - 100).
fn far_apart(p: &Integer, q: &Integer, bits: u32) -> bool {
    let diff = Integer::from(p - q).abs();
    diff.significant_bits() > (bits / 2).saturating_sub(100)
}

/// Runs `f(rng, 0)` and `f(rng, 1)`, on two threads when `threads >= 2` (each with its own
/// split of the entropy source).
fn in_parallel<T: Send>(
    threads: usize,
    rng: &mut dyn EntropySource,
    f: &(dyn Fn(&mut dyn EntropySource, usize) -> Result<T> + Sync),
) -> Result<(T, T)> {
    if threads < 2 {
        let a = f(rng, 0)?;
        let b = f(rng, 1)?;
        return Ok((a, b));
    }
    let mut r0 = rng.split()?;
    let mut r1 = rng.split()?;
    std::thread::scope(|scope| {
        let h0 = scope.spawn(move || f(&mut r0, 0));
        let b = f(&mut r1, 1);
        let a = h0
            .join()
            .map_err(|_| Error::from(ParamError::ThreadPanicked))?;
        Ok((a?, b?))
    })
}

/// A random odd `bits`-bit integer coprime to `m`.
fn random_odd_coprime(bits: u32, m: &Integer, rng: &mut dyn EntropySource) -> Result<Integer> {
    loop {
        let mut x = random_exact_bits(rng, bits)?;
        x.set_bit(0, true);
        if Integer::from(x.gcd_ref(m)) == 1 {
            return Ok(x);
        }
    }
}

/// `[3 * 2^(h-2), 2^h)`: `h`-bit values with the top two bits set.
fn prime_range(h: u32) -> (Integer, Integer) {
    (Integer::from(3) << (h - 2), Integer::from(1) << h)
}

/// Random `j` such that a window of `j, j+1, ...` starts inside `[jmin, jmax]`.
fn random_window_start(
    jmin: &Integer,
    jmax: &Integer,
    rng: &mut dyn EntropySource,
) -> Result<Option<Integer>> {
    if jmax < jmin {
        return Ok(None);
    }
    let span = Integer::from(jmax - jmin);
    let top = if span > SIEVE_WINDOW as u64 {
        Integer::from(jmax - SIEVE_WINDOW as u64) + 1u32
    } else {
        Integer::from(jmin + 1u32)
    };
    if top <= *jmin {
        return Ok(Some(jmin.clone()));
    }
    Ok(Some(random_range(rng, jmin, &top)?))
}

/// `ceil(a / b)` for positive `b`.
fn div_ceil(a: &Integer, b: &Integer) -> Integer {
    use rug::ops::DivRounding;
    a.clone().div_ceil(b)
}

/// Scheme B prime: `e d_p = k_p (p - 1) + 1` with `p` an `h`-bit prime (Sun-Hinek-Wu, with
/// `p = p' + 1` tested directly), generalised to `n_e < h`: for a random `k_p` coprime to `e`,
/// the solutions are `d_p(j) = d_0 + j k_p` and `p(j) = p_0 + j e`, an arithmetic progression
/// that is sieved like an ordinary prime search.
fn scheme_b_prime(
    e: &Integer,
    h: u32,
    nd: u32,
    test: PrimalityTest,
    rng: &mut dyn EntropySource,
) -> Result<(Integer, Integer)> {
    let ne = e.significant_bits();
    let kp_bits = (ne + nd + 1).saturating_sub(h).max(2);
    let (low, high) = prime_range(h);
    loop {
        let kp = random_exact_bits(rng, kp_bits)?;
        if Integer::from(kp.gcd_ref(e)) != 1 {
            continue;
        }
        let d0 = inverse(&Integer::from(e % &kp), &kp).unwrap_or_default();
        let d0 = if d0 == 0 { kp.clone() } else { d0 };
        // e d0 - 1 = k_p P0 exactly.
        let p0 = (Integer::from(e * &d0) - 1u32) / &kp + 1u32;
        // p(j) = p0 + j e must lie in [low, high).
        let jmin = div_ceil(&Integer::from(&low - &p0), e).max(Integer::new());
        let jmax = (Integer::from(&high - 1u32) - &p0) / e;
        let Some(j0) = random_window_start(&jmin, &jmax, rng)? else {
            continue;
        };
        let start = Integer::from(e * &j0) + &p0;
        if let Some((i, p)) = first_prime_in_progression(&start, e, &low, &high, test, None, rng)? {
            let j = j0 + i as u64;
            let dp = Integer::from(&kp * &j) + &d0;
            debug_assert_eq!(
                Integer::from(e * &dp),
                (&kp * Integer::from(&p - 1u32)) + 1u32
            );
            return Ok((p, dp));
        }
    }
}

/// Scheme A prime (Sun-Wu): for a random `k_p1` coprime to `e`, `e d_p = k_p1 P + 1` fixes
/// `P(j) = P_0 + j e`; `P` must factor as `k_p2 (p - 1)` with `k_p2` of `kp2_bits` bits and `p`
/// an `h`-bit prime. The progression `P(j)` is sieved for values with a large smooth part
/// (like a quadratic sieve), the smooth part is factored, and its divisors of the right size
/// are tried as `k_p2`.
fn scheme_a_prime(
    e: &Integer,
    h: u32,
    nd: u32,
    kp2_bits: u32,
    test: PrimalityTest,
    rng: &mut dyn EntropySource,
) -> Result<(Integer, Integer)> {
    let ne = e.significant_bits();
    let k1_bits = (ne + nd + 1).saturating_sub(h + kp2_bits);
    if k1_bits < 2 {
        return Err(ParamError::NoRoomForKp1.into());
    }
    let (low, high) = prime_range(h);
    let g_low = Integer::from(1) << (kp2_bits - 1);
    let g_high = Integer::from(1) << kp2_bits;
    // P = g (p - 1) with g in [g_low, g_high) and p in [low, high).
    let big_low = &g_low * Integer::from(&low - 1u32);
    let big_high = &g_high * Integer::from(&high - 1u32);
    let primes = small_primes();
    let logs_scale = 16.0f32;
    let threshold = ((kp2_bits as f32) - 6.0).max(1.0) * logs_scale;
    let mut logs = vec![0u16; SIEVE_WINDOW];
    // e is fixed for the whole search: precompute e^-1 mod l and each prime's weight.
    let sieve: Vec<(u32, u32, u16)> = primes
        .iter()
        .filter_map(|&l| {
            let s = e.mod_u(l);
            (s != 0).then(|| {
                (
                    l,
                    inverse_mod_small(s, l),
                    ((l as f32).log2() * logs_scale) as u16,
                )
            })
        })
        .collect();
    loop {
        let k1 = random_exact_bits(rng, k1_bits)?;
        if Integer::from(k1.gcd_ref(e)) != 1 {
            continue;
        }
        let d0 = inverse(&Integer::from(e % &k1), &k1).unwrap_or_default();
        let d0 = if d0 == 0 { k1.clone() } else { d0 };
        let big0 = (Integer::from(e * &d0) - 1u32) / &k1;
        let jmin = div_ceil(&Integer::from(&big_low - &big0), e).max(Integer::new());
        let jmax = (Integer::from(&big_high - 1u32) - &big0) / e;
        let Some(j0) = random_window_start(&jmin, &jmax, rng)? else {
            continue;
        };
        let start = Integer::from(e * &j0) + &big0;
        // Long windows are sieved: logs[i] accumulates log2 of the small primes dividing
        // P(j0 + i). Short windows (the paper's sizes leave one or two j per k_p1) test each
        // value by one GCD with the primorial instead.
        let window = (Integer::from(&jmax - &j0) + 1u32)
            .to_usize()
            .unwrap_or(SIEVE_WINDOW)
            .min(SIEVE_WINDOW);
        let use_sieve = window >= 64;
        let logs = &mut logs[..window];
        if use_sieve {
            logs.iter_mut().for_each(|l| *l = 0);
            for &(l, inv, weight) in &sieve {
                let r = start.mod_u(l);
                let mut i = ((u64::from((l - r) % l) * u64::from(inv)) % u64::from(l)) as usize;
                while i < window {
                    logs[i] = logs[i].saturating_add(weight);
                    i += l as usize;
                }
            }
        }
        let mut value = Integer::new();
        for (i, &score) in logs.iter().enumerate() {
            value.assign(e * i as u64);
            value += &start;
            if value.is_odd() {
                continue; // p - 1 = P / g must be even
            }
            let twos = value.find_one(0).unwrap_or(0);
            let promising = if use_sieve {
                f32::from(score) + (twos as f32) * logs_scale >= threshold
            } else {
                let smooth = Integer::from(value.gcd_ref(small_primorial()));
                (smooth.significant_bits() + twos) as f32 * logs_scale >= threshold
            };
            if !promising {
                continue;
            }
            if value < big_low || value >= big_high {
                continue;
            }
            let factors = smooth_factors(&value, primes);
            let mut found = None;
            let mut budget = 20_000u32;
            let (g_min, g_max) = divisor_bounds(&value, &low, &high, &g_low, &g_high);
            enumerate_divisors(
                &factors,
                0,
                Integer::from(1),
                &g_min,
                &g_max,
                &mut budget,
                &mut |g| {
                    if found.is_some() {
                        return;
                    }
                    let pm1 = Integer::from(&value / g);
                    if pm1.is_odd() {
                        return;
                    }
                    let p = pm1 + 1u32;
                    if p < low || p >= high {
                        return;
                    }
                    if let Ok(true) = is_probable_prime(&p, test, rng) {
                        found = Some(p);
                    }
                },
            );
            if let Some(p) = found {
                let j = Integer::from(&j0 + i as u64);
                let dp = Integer::from(&k1 * &j) + &d0;
                return Ok((p, dp));
            }
        }
    }
}

/// The factorisation of the part of `value` made of 2 and the small primes.
fn smooth_factors(value: &Integer, primes: &[u32]) -> Vec<(u32, u32)> {
    let mut rest = value.clone();
    let mut out = Vec::new();
    let twos = rest.find_one(0).unwrap_or(0);
    if twos > 0 {
        rest >>= twos;
        out.push((2, twos));
    }
    for &l in primes {
        if rest.mod_u(l) != 0 {
            continue;
        }
        let mut k = 0;
        while rest.mod_u(l) == 0 {
            rest /= l;
            k += 1;
        }
        out.push((l, k));
    }
    out
}

/// The range `[g_min, g_max)` of divisors `g` for which `value / g + 1` lies in `[low, high)`
/// and `g` in `[g_low, g_high)`.
fn divisor_bounds(
    value: &Integer,
    low: &Integer,
    high: &Integer,
    g_low: &Integer,
    g_high: &Integer,
) -> (Integer, Integer) {
    // value / g >= low - 1  <=>  g <= value / (low - 1);  value / g < high - 1  <=>  g > value / (high - 1).
    let g_max = ((value / Integer::from(low - 1u32)) + 1u32).min(g_high.clone());
    let g_min = ((value / Integer::from(high - 1u32)) + 1u32).max(g_low.clone());
    (g_min, g_max)
}

/// Calls `visit` on each divisor of the factored number in `[g_min, g_max)`, pruning products
/// that exceed `g_max`, within `budget` visits.
fn enumerate_divisors(
    factors: &[(u32, u32)],
    index: usize,
    current: Integer,
    g_min: &Integer,
    g_max: &Integer,
    budget: &mut u32,
    visit: &mut dyn FnMut(&Integer),
) {
    if *budget == 0 || current >= *g_max {
        return;
    }
    if index == factors.len() {
        *budget -= 1;
        if current >= *g_min {
            visit(&current);
        }
        return;
    }
    let (l, k) = factors[index];
    let mut c = current;
    for _ in 0..=k {
        if c >= *g_max {
            break;
        }
        enumerate_divisors(factors, index + 1, c.clone(), g_min, g_max, budget, visit);
        c *= l;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hourglass_arith::entropy::SeededEntropy;

    #[test]
    fn every_variant_generates_a_consistent_key() {
        for variant in Variant::ALL {
            let mut rng = SeededEntropy::new(variant.name().as_bytes());
            let key = KeyGenOptions::new(1024, variant)
                .allow_insecure(true)
                .generate(&mut rng)
                .unwrap();
            assert_eq!(key.public().bits(), 1024, "{variant}");
            let [d, p, q, dp, dq, _] = key.secret_components();
            let pm1 = Integer::from(p.expose() - 1u32);
            let qm1 = Integer::from(q.expose() - 1u32);
            assert_eq!(Integer::from(d.expose() % &pm1), *dp.expose());
            assert_eq!(Integer::from(d.expose() % &qm1), *dq.expose());
            let e = key.public().e();
            assert_eq!(Integer::from(e * dp.expose()) % &pm1, 1);
            match variant {
                Variant::Standard | Variant::Crt => assert_eq!(*e, 65537),
                Variant::Rebalanced => {
                    assert_eq!(Integer::from(pm1.gcd_ref(&qm1)), 2);
                    assert!(dp.expose().significant_bits() == 192);
                    assert!(e.significant_bits() > 1000);
                }
                Variant::SchemeA | Variant::SchemeB => {
                    let (ne, nd) = short_e_sizes(1024);
                    assert_eq!(e.significant_bits(), ne);
                    let got = dp.expose().significant_bits();
                    assert!(
                        (nd..=nd + 2).contains(&got),
                        "{variant}: d_p {got} bits, wanted {nd}"
                    );
                }
            }
        }
    }

    #[test]
    fn paper_sizes_are_refused_without_allow_insecure() {
        let mut rng = SeededEntropy::new(b"refuse");
        let weaknesses = |opts: KeyGenOptions, rng: &mut SeededEntropy| match opts.generate(rng) {
            Err(Error::Insecure(Insecurity::Weaknesses(w))) => w,
            other => panic!("expected a refusal, got {other:?}"),
        };
        let opts = KeyGenOptions::new(1024, Variant::Rebalanced).dp_bits(160);
        assert_eq!(
            weaknesses(opts, &mut rng),
            [Weakness::SquareRootSearch { dp_bits: 160 }]
        );
        let opts = KeyGenOptions::new(1024, Variant::SchemeB)
            .e_bits(512)
            .dp_bits(198);
        assert_eq!(
            weaknesses(opts, &mut rng),
            [Weakness::BleichenbacherMay { dp_bits: 198 }]
        );
        let opts = KeyGenOptions::new(512, Variant::Crt);
        let err = opts.generate(&mut rng).unwrap_err();
        assert_eq!(
            err.to_string(),
            "insecure parameters refused: a 512-bit modulus can be factored (RSA-768 fell in 2009, RSA-829 in 2020)"
        );
        // Several weaknesses are all reported, in one message.
        let opts = KeyGenOptions::new(512, Variant::Rebalanced).dp_bits(100);
        assert_eq!(
            weaknesses(opts, &mut rng),
            [
                Weakness::ModulusFactorable { bits: 512 },
                Weakness::SquareRootSearch { dp_bits: 100 }
            ]
        );
    }

    #[test]
    fn unworkable_sizes_name_their_numbers() {
        let err = KeyGenOptions::new(32, Variant::Crt).review().unwrap_err();
        assert!(matches!(
            err,
            Error::InvalidParameters(ParamError::ModulusSize {
                bits: 32,
                min: 64,
                max: MAX_BITS
            })
        ));
        let err = KeyGenOptions::new(2048, Variant::Rebalanced)
            .dp_bits(1100)
            .review()
            .unwrap_err();
        assert!(matches!(
            err,
            Error::InvalidParameters(ParamError::DpBitsRange {
                dp_bits: 1100,
                min: 16,
                max: 1021
            })
        ));
        assert_eq!(
            err.to_string(),
            "invalid parameters: d_p of 1100 bits must be between 16 and 1021 bits"
        );
    }

    #[test]
    fn paper_sizes_work_with_allow_insecure() {
        let mut rng = SeededEntropy::new(b"paper sizes");
        let b = KeyGenOptions::new(1024, Variant::SchemeB)
            .e_bits(512)
            .dp_bits(198)
            .allow_insecure(true)
            .generate(&mut rng)
            .unwrap();
        assert_eq!(b.public().e().significant_bits(), 512);
        let r = KeyGenOptions::new(1024, Variant::Rebalanced)
            .dp_bits(160)
            .allow_insecure(true)
            .generate(&mut rng)
            .unwrap();
        assert_eq!(r.secret_components()[3].expose().significant_bits(), 160);
        // Scheme A with the paper's shape (e about n/2 + k_p2 bits, d_p in (k_p1, 2 k_p1), so
        // one or two candidates per k_p1) scaled down to keep the test fast: the full paper
        // sizes (1024 / 568 / 160 / 56) take tens of seconds.
        let a = KeyGenOptions::new(512, Variant::SchemeA)
            .e_bits(280)
            .dp_bits(80)
            .kp2_bits(24)
            .allow_insecure(true)
            .generate(&mut rng)
            .unwrap();
        assert_eq!(a.public().e().significant_bits(), 280);
        let dp = a.secret_components()[3].expose().significant_bits();
        assert!((80..=82).contains(&dp), "d_p has {dp} bits");
    }

    #[test]
    fn two_threads_give_valid_keys() {
        let mut rng = SeededEntropy::new(b"threads");
        let k = KeyGenOptions::new(1024, Variant::Crt)
            .threads(2)
            .generate(&mut rng)
            .unwrap();
        assert_eq!(k.public().bits(), 1024);
    }
}

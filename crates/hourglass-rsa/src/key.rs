//! Public and private keys, and the protected private-key operation.

use std::sync::{Mutex, OnceLock};

use hourglass_arith::entropy::{random_below, EntropySource};
use hourglass_arith::modular::{
    pow_mod_ct_bits, pow_mod_ct_pair, pow_mod_u64_ct, CtCrt, CtFactor, CtModulus, CtPair,
};
use hourglass_arith::prime::{is_prime_bpsw, random_prime_u64};
use hourglass_arith::secret::{inverse_ct, mod_ct, SecretInt};
use hourglass_arith::Integer;

use crate::error::{Error, KeyError, Result, WhichPrime};
pub use crate::variant::Variant;

/// An RSA public key `(n, e)`.
pub struct PublicKey {
    n: Integer,
    e: Integer,
    /// `n` prepared for the public operation (and a private key's blinding and check), built
    /// at the first use: rebuilding it (`R^2 mod n`, a division) took a quarter of an RSA-2048
    /// public operation. Boxed: the key is small and moved around.
    context: OnceLock<Box<CtModulus>>,
}

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PublicKey")
            .field("n", &self.n)
            .field("e", &self.e)
            .finish()
    }
}

impl Clone for PublicKey {
    fn clone(&self) -> Self {
        Self {
            n: self.n.clone(),
            e: self.e.clone(),
            context: self.context.clone(),
        }
    }
}

impl PartialEq for PublicKey {
    fn eq(&self, other: &Self) -> bool {
        self.n == other.n && self.e == other.e
    }
}

impl Eq for PublicKey {}

impl PublicKey {
    /// A public key after basic sanity checks: odd `n` of at least 64 bits (tiny keys exist
    /// for tests; [`crate::inspect`] judges real-world strength), odd `e` with `1 < e < n`.
    pub fn new(n: Integer, e: Integer) -> Result<Self> {
        const MIN_BITS: u32 = 64;
        if n.significant_bits() < MIN_BITS {
            return Err(KeyError::ModulusTooSmall {
                bits: n.significant_bits(),
                min: MIN_BITS,
            }
            .into());
        }
        if n.is_even() {
            return Err(KeyError::ModulusEven { min: MIN_BITS }.into());
        }
        if e <= 1 || e >= n {
            return Err(KeyError::PublicExponentOutOfRange.into());
        }
        if e.is_even() {
            return Err(KeyError::PublicExponentEven.into());
        }
        Ok(Self {
            n,
            e,
            context: OnceLock::new(),
        })
    }

    /// The modulus.
    pub fn n(&self) -> &Integer {
        &self.n
    }

    /// The public exponent.
    pub fn e(&self) -> &Integer {
        &self.e
    }

    /// Modulus size in bits.
    pub fn bits(&self) -> u32 {
        self.n.significant_bits()
    }

    /// Modulus size in bytes (the length of ciphertexts and signatures).
    pub fn size(&self) -> usize {
        self.bits().div_ceil(8) as usize
    }

    /// Textbook `m^e mod n` (variable time: public values only). Rejects `m >= n`.
    pub fn public_op(&self, m: &Integer) -> Result<Integer> {
        if *m < 0 || *m >= self.n {
            return Err(Error::InputOutOfRange { len: self.size() });
        }
        Ok(self.context()?.pow_vartime(m, &self.e)?)
    }

    /// `n` prepared for repeated work (built once).
    fn context(&self) -> Result<&CtModulus> {
        if let Some(m) = self.context.get() {
            return Ok(m);
        }
        let m = Box::new(CtModulus::new(&self.n)?);
        Ok(self.context.get_or_init(|| m))
    }
}

/// Which protections the private operation applies. Both are on by default; turning them off
/// exists for benchmarks that show their cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Countermeasures {
    /// Multiply the input by a random value whose d-th power is known, and divide it out after.
    pub blinding: bool,
    /// Bellcore countermeasure: verify the result before releasing it, by re-encryption of
    /// the released (unblinded) value for public exponents of at most 64 bits, otherwise by
    /// computing each half modulo `p*t` (`t` a random 64-bit prime), checking it modulo `t`,
    /// and checking the CRT recombination (the blinding pair is then checked when drawn, not
    /// at each use). A mismatch withholds the result ([`Error::FaultDetected`]).
    pub fault_check: bool,
}

impl Default for Countermeasures {
    fn default() -> Self {
        Self {
            blinding: true,
            fault_check: true,
        }
    }
}

/// A blinding pair `(u, v^-1)` with `u^d = v mod n` (`u = s^e`, `v = s` for keys with a public
/// exponent of at most 64 bits, else `u = s`, `v = s^d`), refreshed by squaring after each use.
struct Blinding {
    u: CtFactor,
    v_inv: CtFactor,
    uses: u32,
}

/// Blinding pairs are regenerated from fresh randomness after this many uses.
const BLINDING_REFRESH: u32 = 64;

/// An RSA private key with CRT components.
pub struct PrivateKey {
    public: PublicKey,
    variant: Option<Variant>,
    p: SecretInt,
    q: SecretInt,
    d: SecretInt,
    dp: SecretInt,
    dq: SecretInt,
    qinv: SecretInt,
    countermeasures: Countermeasures,
    blinding: Mutex<Option<Blinding>>,
    /// The CRT halves' exponentiation contexts, built at the first private operation that
    /// needs them (`None` if that failed: the operation then reports the error).
    crt_contexts: OnceLock<Option<CtPair>>,
    /// The CRT recombination, prepared at the first private operation that needs it.
    crt_combine: OnceLock<CtCrt>,
}

impl std::fmt::Debug for PrivateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PrivateKey")
            .field("public", &self.public)
            .field("variant", &self.variant)
            .finish_non_exhaustive()
    }
}

impl Clone for PrivateKey {
    fn clone(&self) -> Self {
        Self {
            public: self.public.clone(),
            variant: self.variant,
            p: self.p.clone(),
            q: self.q.clone(),
            d: self.d.clone(),
            dp: self.dp.clone(),
            dq: self.dq.clone(),
            qinv: self.qinv.clone(),
            countermeasures: self.countermeasures,
            blinding: Mutex::new(None),
            crt_contexts: OnceLock::new(),
            crt_combine: OnceLock::new(),
        }
    }
}

impl PrivateKey {
    /// Builds a key from `n, e, d, p, q` (and the CRT exponents, if known), checking that they
    /// are consistent: `n = pq`, `p` and `q` prime (Baillie-PSW), `e d = 1 mod (p-1)` and
    /// `mod (q-1)`, and CRT exponents that match.
    #[allow(clippy::too_many_arguments)]
    pub fn from_components(
        n: Integer,
        e: Integer,
        d: Integer,
        p: Integer,
        q: Integer,
        dp: Option<Integer>,
        dq: Option<Integer>,
        variant: Option<Variant>,
    ) -> Result<Self> {
        let public = PublicKey::new(n, e)?;
        let (p, q) = (SecretInt::new(p), SecretInt::new(q));
        let (pe, qe) = (p.expose(), q.expose());
        if Integer::from(pe * qe) != *public.n() {
            return Err(KeyError::ModulusNotProduct.into());
        }
        if *pe < 3 || *qe < 3 || pe == qe {
            return Err(KeyError::PrimesNotDistinct.into());
        }
        if !is_prime_bpsw(pe) || !is_prime_bpsw(qe) {
            return Err(KeyError::NotPrime.into());
        }
        let pm1 = SecretInt::new(Integer::from(pe - 1u32));
        let qm1 = SecretInt::new(Integer::from(qe - 1u32));
        let d = SecretInt::new(d);
        // Reductions modulo p - 1 and q - 1 in constant time (GMP's division would take time
        // that depends on them): keys are loaded wherever they are used.
        let check = |prime: WhichPrime, m: &Integer| -> Result<()> {
            let ed = SecretInt::new(Integer::from(public.e() * d.expose()));
            if *SecretInt::new(mod_ct(ed.expose(), m)?).expose() != 1 {
                return Err(KeyError::PrivateExponent { prime }.into());
            }
            Ok(())
        };
        check(WhichPrime::P, pm1.expose())?;
        check(WhichPrime::Q, qm1.expose())?;
        let dp_derived = SecretInt::new(mod_ct(d.expose(), pm1.expose())?);
        let dq_derived = SecretInt::new(mod_ct(d.expose(), qm1.expose())?);
        if let Some(given) = dp.map(SecretInt::new) {
            if given != dp_derived {
                return Err(KeyError::CrtExponent {
                    prime: WhichPrime::P,
                }
                .into());
            }
        }
        if let Some(given) = dq.map(SecretInt::new) {
            if given != dq_derived {
                return Err(KeyError::CrtExponent {
                    prime: WhichPrime::Q,
                }
                .into());
            }
        }
        let qinv =
            // In constant time: keys are loaded wherever they are used.
            SecretInt::new(inverse_ct(qe, pe).map_err(|_| Error::from(KeyError::QNotInvertible))?);
        Ok(Self {
            public,
            variant,
            p,
            q,
            d,
            dp: dp_derived,
            dq: dq_derived,
            qinv,
            countermeasures: Countermeasures::default(),
            blinding: Mutex::new(None),
            crt_contexts: OnceLock::new(),
            crt_combine: OnceLock::new(),
        })
    }

    /// The public half.
    pub fn public_key(&self) -> PublicKey {
        self.public.clone()
    }

    /// The public half, borrowed.
    pub fn public(&self) -> &PublicKey {
        &self.public
    }

    /// The variant this key was generated as, when known (key files from other tools do not
    /// record it; see [`crate::inspect`]).
    pub fn variant(&self) -> Option<Variant> {
        self.variant
    }

    /// Sets the variant (it decides whether the private operation uses the CRT).
    pub fn set_variant(&mut self, variant: Option<Variant>) {
        self.variant = variant;
    }

    /// The active countermeasures.
    pub fn countermeasures(&self) -> Countermeasures {
        self.countermeasures
    }

    /// Changes the countermeasures (benchmarks only; the defaults are the safe choice).
    pub fn set_countermeasures(&mut self, countermeasures: Countermeasures) {
        self.countermeasures = countermeasures;
    }

    /// Secret components, for writing key files: `(d, p, q, d_p, d_q, q^-1 mod p)`.
    pub fn secret_components(&self) -> [&SecretInt; 6] {
        [&self.d, &self.p, &self.q, &self.dp, &self.dq, &self.qinv]
    }

    /// Modulus size in bytes.
    pub fn size(&self) -> usize {
        self.public.size()
    }

    /// The private operation `c^d mod n`, constant-time in the secret exponents, blinded and
    /// fault-checked according to [`Self::countermeasures`]. Uses the CRT unless the key is
    /// [`Variant::Standard`]. Rejects `c >= n`.
    pub fn private_op(&self, c: &Integer, rng: &mut dyn EntropySource) -> Result<Integer> {
        let n = self.public.n();
        if *c < 0 || c >= n {
            return Err(Error::InputOutOfRange { len: self.size() });
        }
        let (modulus, e) = (self.public.context()?, self.public.e());
        // The released value is re-encrypted (for e of at most 64 bits), so that a fault in the
        // exponentiation, the blinding pair or its products is caught.
        if !self.countermeasures.blinding {
            let m = self.exponentiate(c, rng)?;
            if self.reencrypts() && modulus.pow_public(&m, e)? != *c {
                return Err(Error::FaultDetected);
            }
            return Ok(m);
        }
        let (u, v_inv) = self.next_blinding(rng)?;
        let blinded = SecretInt::new(modulus.mul(c, &u)?);
        let m = SecretInt::new(self.exponentiate(blinded.expose(), rng)?);
        let m = modulus.mul(m.expose(), &v_inv)?;
        if self.reencrypts() {
            // m^e = c through the pair (u = s^e, v^-1 = s^-1 for keys with such e): the
            // exponentiation by e runs on the blinded y = m s^-1, where variable time says
            // nothing of m, and y^e u = m^e. A pair that faulted no longer cancels.
            let y = SecretInt::new(modulus.mul(&m, &v_inv)?);
            let ye = SecretInt::new(modulus.pow_vartime(y.expose(), e)?);
            if modulus.mul(ye.expose(), &u)? != *c {
                return Err(Error::FaultDetected);
            }
        }
        Ok(m)
    }

    /// Whether the fault check is a re-encryption of the result (public exponents of at most
    /// 64 bits, where it costs about 2% of a private operation); longer ones use the modulus
    /// extension inside [`Self::exponentiate`].
    fn reencrypts(&self) -> bool {
        self.countermeasures.fault_check && self.public.e().significant_bits() <= 64
    }

    /// The next blinding pair `(u, v^-1)`: the last one squared (in constant time), or a fresh
    /// one every [`BLINDING_REFRESH`] uses.
    fn next_blinding(&self, rng: &mut dyn EntropySource) -> Result<(CtFactor, CtFactor)> {
        let modulus = self.public.context()?;
        let mut guard = self
            .blinding
            .lock()
            .map_err(|_| Error::from(KeyError::BlindingPoisoned))?;
        let fresh = match guard.as_mut() {
            Some(b) if b.uses < BLINDING_REFRESH => {
                b.u = modulus.square(&b.u)?;
                b.v_inv = modulus.square(&b.v_inv)?;
                #[cfg(test)]
                if INJECT_PAIR_FAULT.with(|f| f.take()) {
                    b.v_inv = modulus.square(&b.v_inv)?;
                }
                b.uses += 1;
                return Ok((b.u.clone(), b.v_inv.clone()));
            }
            _ => self.fresh_blinding(modulus, rng)?,
        };
        let pair = (fresh.u.clone(), fresh.v_inv.clone());
        *guard = Some(fresh);
        Ok(pair)
    }

    /// A fresh blinding pair from a random `r`. For a public exponent of at most 64 bits, as
    /// OpenSSL does: `u = r^e` and `v^-1 = r^-1` (`(c r^e)^d = c^d r`), two short
    /// exponentiations and an inverse, checked together (`u (r^-1)^e = 1`) so that a fault in
    /// either is not released as a wrongly unblinded result. For the large exponents of
    /// rebalanced and short-e keys, `u = r` and `v^-1 = (r^d)^-1`, one private operation (the
    /// cheap direction for those keys). Every value derived from `r` is secret: the
    /// exponentiations by `e` are constant-time, the inverses blinded.
    fn fresh_blinding(&self, modulus: &CtModulus, rng: &mut dyn EntropySource) -> Result<Blinding> {
        let (n, e) = (self.public.n(), self.public.e());
        let r = loop {
            let r = SecretInt::new(random_below(rng, n)?);
            if *r.expose() > 1 {
                break r;
            }
        };
        // Not invertible: r shares a factor with n (probability about 2^-1000).
        let inverse = |x: &Integer, rng: &mut dyn EntropySource| {
            modulus.inverse(x, rng).map_err(|_| Error::FaultDetected)
        };
        // The factors kept are the ones checked: u against v^-1 (u (r^-1)^e = 1), and v^-1
        // against what it inverts.
        let (u, v_inv) = if e.significant_bits() <= 64 {
            #[allow(unused_mut)]
            let mut u = SecretInt::new(modulus.pow_public(r.expose(), e)?);
            #[cfg(test)]
            if INJECT_BLINDING_FAULT.with(|f| f.take()) {
                u.expose_mut().toggle_bit(3);
            }
            let u = modulus.factor(u.expose())?;
            let r_inv = SecretInt::new(inverse(r.expose(), rng)?);
            let v_inv = modulus.factor(r_inv.expose())?;
            let check = SecretInt::new(modulus.pow_public(r_inv.expose(), e)?);
            if modulus.mul(check.expose(), &u)? != 1 || modulus.mul(r.expose(), &v_inv)? != 1 {
                return Err(Error::FaultDetected);
            }
            (u, v_inv)
        } else {
            let v = SecretInt::new(self.exponentiate(r.expose(), rng)?);
            let v_inv = modulus.factor(&inverse(v.expose(), rng)?)?;
            if modulus.mul(v.expose(), &v_inv)? != 1 {
                return Err(Error::FaultDetected);
            }
            (modulus.factor(r.expose())?, v_inv)
        };
        Ok(Blinding { u, v_inv, uses: 1 })
    }

    /// `x^d mod n`, by the CRT or directly. With the fault check on and a public exponent
    /// longer than 64 bits (rebalanced and short-e keys), each half is checked by the modulus
    /// extension and the CRT recombination is checked; shorter exponents are checked by
    /// [`Self::private_op`]'s re-encryption of the released value instead.
    fn exponentiate(&self, x: &Integer, rng: &mut dyn EntropySource) -> Result<Integer> {
        let n = self.public.n();
        let extend = self.countermeasures.fault_check && !self.reencrypts();
        let t = if extend {
            random_check_prime(rng)?
        } else {
            Integer::from(1)
        };
        let m = if !self.variant.unwrap_or(Variant::Crt).uses_crt() {
            checked_pow(x, self.d.expose(), n, &t, extend)?
        } else {
            let (p, q) = (self.p.expose(), self.q.expose());
            // The moduli p t and q t of the modulus extension change with every t: nothing to
            // keep there.
            let prepared = if extend {
                None
            } else {
                self.crt_contexts
                    .get_or_init(|| CtPair::new([p, q]).ok())
                    .as_ref()
            };
            let exps = [self.dp.expose(), self.dq.expose()];
            let [sp, sq] = checked_pow_pair(x, exps, [p, q], &t, extend, prepared)?;
            let sp = SecretInt::new(sp);
            let sq = SecretInt::new(sq);
            // Garner's recombination, in constant time.
            let crt = match self.crt_combine.get() {
                Some(crt) => crt,
                None => {
                    // The key's invariants (checked when it was made) rule out an error.
                    let crt = CtCrt::new(p, q, self.qinv.expose())
                        .map_err(|_| Error::from(KeyError::Coefficient))?;
                    self.crt_combine.get_or_init(|| crt)
                }
            };
            let m = crt.combine(sp.expose(), sq.expose())?;
            if extend {
                // Recombination check: m must reduce to both halves.
                let mp = SecretInt::new(mod_ct(&m, p)?);
                let mq = SecretInt::new(mod_ct(&m, q)?);
                if mp.expose() != sp.expose() || mq.expose() != sq.expose() || m >= *n {
                    return Err(Error::FaultDetected);
                }
            }
            m
        };
        Ok(m)
    }
}

/// A random 64-bit prime for the modulus-extension fault check, drawn in 64-bit arithmetic
/// (4.1 us; GMP's `next_prime` took 10.8 of an RSA-1024 rebalanced decryption's 30-60).
fn random_check_prime(rng: &mut dyn EntropySource) -> Result<Integer> {
    Ok(Integer::from(random_prime_u64(rng)?))
}

/// `x^exp mod m`, constant time in `exp`. With `check`, computes modulo `m*t` and verifies the
/// result modulo the small prime `t` against an independent computation, so a fault anywhere in
/// the long exponentiation is caught (except with probability about 2^-64).
fn checked_pow(
    x: &Integer,
    exp: &Integer,
    m: &Integer,
    t: &Integer,
    check: bool,
) -> Result<Integer> {
    let big = pow_mod_ct_bits(x, exp, &extended(m, t, check), exponent_bound(&[exp]))?;
    checked_result(x, exp, big, m, t, check)
}

/// [`checked_pow`] for the two CRT halves at once (their exponentiations interleaved where
/// that is faster, `pow_mod_ct_pair`); without the check, on the contexts `prepared` for `m`
/// when given.
fn checked_pow_pair(
    x: &Integer,
    exp: [&Integer; 2],
    m: [&Integer; 2],
    t: &Integer,
    check: bool,
    prepared: Option<&CtPair>,
) -> Result<[Integer; 2]> {
    let bound = exponent_bound(&exp);
    let [bp, bq] = match prepared {
        Some(pair) if !check => pair.pow([x, x], exp, bound)?,
        _ => {
            let [mp, mq] = m.map(|m| extended(m, t, check));
            pow_mod_ct_pair([x, x], exp, [&mp, &mq], bound)?
        }
    };
    Ok([
        checked_result(x, exp[0], bp, m[0], t, check)?,
        checked_result(x, exp[1], bq, m[1], t, check)?,
    ])
}

/// The public length bound the constant-time exponentiation runs over for these secret
/// exponents: the longest one's bit length rounded up to whole 64-bit words. The work then
/// depends on the key's exponent word count, fixed for the key (as in OpenSSL's and GMP's
/// constant-time exponentiations, whose loops run over the exponent's words), never on the
/// exponents' values. Without it the bound was the modulus's length (plus the fault check's 64
/// bits), so the short CRT exponents of rebalanced keys and schemes A and B, the point of
/// those variants, cost as much as full-length ones.
fn exponent_bound(exps: &[&Integer]) -> u32 {
    let longest = exps.iter().map(|e| e.significant_bits()).max().unwrap_or(0);
    longest.max(1).div_ceil(64) * 64
}

/// The modulus of a checked exponentiation: `m t` with the check, else `m`.
fn extended(m: &Integer, t: &Integer, check: bool) -> Integer {
    if check {
        Integer::from(m * t)
    } else {
        m.clone()
    }
}

/// The result modulo `m` of `big = x^exp mod extended(m, t, check)`, after the check modulo
/// `t` when `check` is set.
fn checked_result(
    x: &Integer,
    exp: &Integer,
    #[allow(unused_mut)] mut big: Integer,
    m: &Integer,
    t: &Integer,
    check: bool,
) -> Result<Integer> {
    #[cfg(test)]
    inject_fault(&mut big);
    if !check {
        return Ok(big);
    }
    // x^exp mod t by Fermat (exp reduced modulo t - 1), in 64-bit arithmetic that is constant
    // time in the secret exponent, base and t (a variable-time exponentiation here ran on
    // d mod (t - 1) at every private operation of a rebalanced or puzzle key).
    let t64 = t.to_u64().ok_or(Error::FaultDetected)?;
    let x_t = Integer::from(x.modulo_ref(t)).to_u64_wrapping();
    let e_t = SecretInt::new(mod_ct(exp, &Integer::from(t64 - 1))?);
    let expected = if x_t == 0 {
        0
    } else {
        pow_mod_u64_ct(x_t, e_t.expose().to_u64_wrapping(), t64)?
    };
    if Integer::from(big.modulo_ref(t)) != expected {
        return Err(Error::FaultDetected);
    }
    let big = SecretInt::new(big);
    Ok(mod_ct(big.expose(), m)?)
}

#[cfg(test)]
thread_local! {
    /// Test-only fault injection: when set, flips this bit of the next modulo-`m t` result.
    static INJECT_FAULT: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
    /// Test-only fault injection: when set, corrupts the next fresh blinding factor `r^e`.
    static INJECT_BLINDING_FAULT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Test-only fault injection: when set, the next update of the stored blinding pair squares
    /// `v^-1` twice.
    pub(crate) static INJECT_PAIR_FAULT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

#[cfg(test)]
fn inject_fault(value: &mut Integer) {
    if let Some(bit) = INJECT_FAULT.with(|f| f.take()) {
        value.toggle_bit(bit);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyGenOptions;
    use hourglass_arith::entropy::SeededEntropy;

    fn key(variant: Variant) -> PrivateKey {
        let mut rng = SeededEntropy::new(variant.name().as_bytes());
        KeyGenOptions::new(1024, variant)
            .allow_insecure(true)
            .generate(&mut rng)
            .unwrap()
    }

    #[test]
    fn the_exponent_bound_covers_the_exponents_in_whole_words() {
        for (lengths, bound) in [
            (&[1u32][..], 64),
            (&[64], 64),
            (&[65, 3], 128),
            (&[320, 319], 320),
            (&[1023, 1024], 1024),
            (&[576, 1025], 1088),
        ] {
            let exps: Vec<Integer> = lengths
                .iter()
                .map(|&b| Integer::from(1) << (b - 1))
                .collect();
            let refs: Vec<&Integer> = exps.iter().collect();
            assert_eq!(exponent_bound(&refs), bound, "{lengths:?}");
        }
        // A short rebalanced exponent runs over its own length, not the modulus's.
        let key = key(Variant::Rebalanced);
        let [_, _, _, dp, dq, _] = key.secret_components();
        let bound = exponent_bound(&[dp.expose(), dq.expose()]);
        assert!(bound < key.public().bits() / 2, "bound {bound}");
    }

    #[test]
    fn injected_fault_is_caught_and_nothing_is_released() {
        for variant in [Variant::Standard, Variant::Crt, Variant::Rebalanced] {
            let k = key(variant);
            let mut rng = SeededEntropy::new(b"fault");
            let c = Integer::from(123456789u64);
            let good = k.private_op(&c, &mut rng).unwrap();
            assert_eq!(k.public.public_op(&good).unwrap(), c);
            for bit in [0u32, 17, 300, 511] {
                INJECT_FAULT.with(|f| f.set(Some(bit)));
                assert!(
                    matches!(k.private_op(&c, &mut rng), Err(Error::FaultDetected)),
                    "{variant} bit {bit}"
                );
            }
            // Without the countermeasure the same fault yields a wrong result (the Bellcore
            // attack's raw material), which shows the hook really corrupts the computation.
            let mut unprotected = k.clone();
            unprotected.set_countermeasures(Countermeasures {
                blinding: false,
                fault_check: false,
            });
            INJECT_FAULT.with(|f| f.set(Some(5)));
            let bad = unprotected.private_op(&c, &mut rng).unwrap();
            assert_ne!(bad, good);
            INJECT_FAULT.with(|f| f.set(None));
        }
    }

    #[test]
    fn blinding_agrees_across_refreshes_for_short_and_long_public_exponents() {
        // Crt: e = 65537 (u = r^e); Rebalanced and SchemeA: e as long as n (u = r).
        for variant in [Variant::Crt, Variant::Rebalanced, Variant::SchemeA] {
            let k = key(variant);
            let mut plain = k.clone();
            plain.set_countermeasures(Countermeasures {
                blinding: false,
                fault_check: true,
            });
            let mut rng = SeededEntropy::new(b"refresh");
            // Past two refreshes.
            for i in 0..2 * BLINDING_REFRESH + 3 {
                let c = random_below(&mut rng, k.public.n()).unwrap();
                let m = k.private_op(&c, &mut rng).unwrap();
                assert_eq!(m, plain.private_op(&c, &mut rng).unwrap(), "{variant} {i}");
                assert_eq!(k.public.public_op(&m).unwrap(), c, "{variant} {i}");
            }
        }
    }

    #[test]
    fn a_fault_in_a_fresh_blinding_factor_is_caught() {
        let k = key(Variant::Crt);
        let mut rng = SeededEntropy::new(b"blinding fault");
        let c = Integer::from(42u32);
        INJECT_BLINDING_FAULT.with(|f| f.set(true));
        assert!(matches!(
            k.private_op(&c, &mut rng),
            Err(Error::FaultDetected)
        ));
        // The next draw is sound again.
        let m = k.private_op(&c, &mut rng).unwrap();
        assert_eq!(k.public.public_op(&m).unwrap(), c);
    }

    #[test]
    fn a_fault_in_the_stored_blinding_pair_is_caught_at_release() {
        let k = key(Variant::Crt);
        let mut rng = SeededEntropy::new(b"pair fault");
        let c = Integer::from(4242u32);
        let good = k.private_op(&c, &mut rng).unwrap();
        INJECT_PAIR_FAULT.with(|f| f.set(true));
        assert!(matches!(
            k.private_op(&c, &mut rng),
            Err(Error::FaultDetected)
        ));
        // Without the check the same fault is released as a wrong result.
        let mut unchecked = k.clone();
        unchecked.set_countermeasures(Countermeasures {
            blinding: true,
            fault_check: false,
        });
        unchecked.private_op(&c, &mut rng).unwrap();
        INJECT_PAIR_FAULT.with(|f| f.set(true));
        assert_ne!(unchecked.private_op(&c, &mut rng).unwrap(), good);
    }

    #[test]
    fn all_countermeasure_combinations_agree() {
        let k = key(Variant::Crt);
        let mut rng = SeededEntropy::new(b"combos");
        let c = Integer::from(987654321u64);
        let mut outputs = Vec::new();
        for blinding in [false, true] {
            for fault_check in [false, true] {
                let mut kk = k.clone();
                kk.set_countermeasures(Countermeasures {
                    blinding,
                    fault_check,
                });
                for _ in 0..3 {
                    outputs.push(kk.private_op(&c, &mut rng).unwrap());
                }
            }
        }
        assert!(outputs.windows(2).all(|w| w[0] == w[1]));
        assert_eq!(k.public.public_op(&outputs[0]).unwrap(), c);
    }

    #[test]
    fn inconsistent_components_are_rejected() {
        let k = key(Variant::Crt);
        let [d, p, q, ..] = k.secret_components();
        let n = k.public.n().clone();
        let e = k.public.e().clone();
        let bad_d = Integer::from(d.expose() + 2u32);
        assert!(PrivateKey::from_components(
            n.clone(),
            e.clone(),
            bad_d,
            p.expose_owned(),
            q.expose_owned(),
            None,
            None,
            None
        )
        .is_err());
        let bad_q = Integer::from(q.expose() + 2u32);
        assert!(PrivateKey::from_components(
            n.clone(),
            e.clone(),
            d.expose_owned(),
            p.expose_owned(),
            bad_q,
            None,
            None,
            None
        )
        .is_err());
        assert!(PrivateKey::from_components(
            n,
            e,
            d.expose_owned(),
            p.expose_owned(),
            q.expose_owned(),
            Some(Integer::from(3)),
            None,
            None
        )
        .is_err());
    }
}

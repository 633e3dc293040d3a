//! Modular arithmetic helpers.
//!
//! Functions that handle secret exponents are constant-time with respect to the exponent (our
//! AVX-512 IFMA fixed-window exponentiation where the CPU has it and the modulus fits, GMP's
//! `mpz_powm_sec` elsewhere); anything variable-time carries `_vartime` in its name.

use rug::Integer;

use crate::secret::SecretInt;
use crate::{Error, Result};

/// Smallest modulus for which one constant-time exponentiation takes the IFMA kernel rather than
/// GMP's `mpz_powm_sec`. GMP's time grows by whole 64-bit limbs and IFMA's by 52-bit digits;
/// measured on the IFMA Xeon (`examples/ctexp.rs`, full-length exponents): GMP faster up to 9
/// limbs (576 bits: 54 against 58 us), even at 10 (640: 70 against 69), IFMA from 11 (704: 92
/// against 80 us; 1024: 224 against 157).
pub const IFMA_CT_MIN_BITS: u32 = 641;

/// Smallest moduli for which [`pow_mod_ct_pair`] interleaves the two exponentiations on IFMA:
/// with the squaring that forms each cross product once, the pair wins over two
/// `mpz_powm_sec` from 8 limbs (512 bits, the halves of RSA-1024: 90-94 against 99-107 us;
/// 520: 94-101 against 150-167); smaller moduli were not measured and stay on GMP.
pub const IFMA_PAIR_MIN_BITS: u32 = 512;

/// `base^exp mod modulus` in time independent of the value of `exp`.
///
/// On CPUs with AVX-512 IFMA, for moduli of [`IFMA_CT_MIN_BITS`] to 4158 bits, this
/// is [`crate::mont::ifma::IfmaContext::pow_ct`] (fixed 5-bit windows over at least the
/// modulus's length, masked table scans: about 1.4x faster than `mpz_powm_sec` at 1024 bits,
/// 2.4x at 2048, 3.3x at 4096, docs/PERFORMANCE.md); elsewhere GMP's `mpz_powm_sec`. The number of
/// windows depends only on the modulus's length and the exponent's when it is longer.
///
/// `modulus` must be odd and `exp` positive (GMP's requirements for the secure variant).
pub fn pow_mod_ct(base: &Integer, exp: &Integer, modulus: &Integer) -> Result<Integer> {
    pow_mod_ct_bits(base, exp, modulus, modulus.significant_bits())
}

/// [`pow_mod_ct`] for an exponent whose length has a public bound `exp_bits` (for instance
/// half the modulus's, for a sum of two secret primes): the work depends on the bound and on
/// the exponent's length only where it is longer, never on its value. On GMP's path (no IFMA)
/// the work follows `mpz_powm_sec`, which depends on the exponent's limb count.
pub fn pow_mod_ct_bits(
    base: &Integer,
    exp: &Integer,
    modulus: &Integer,
    exp_bits: u32,
) -> Result<Integer> {
    check_ct_arguments(exp, modulus)?;
    // The base is reduced in constant time on both paths (the IFMA exponentiation reduces it
    // itself): the modulus may be secret (a CRT prime), and so may the base.
    #[cfg(target_arch = "x86_64")]
    if modulus.significant_bits() >= IFMA_CT_MIN_BITS {
        if let Some(ctx) = crate::mont::ifma::IfmaContext::new_secret(modulus) {
            return Ok(ctx.pow_ct(base, exp, exp_bits));
        }
    }
    let b = SecretInt::new(crate::secret::mod_ct(base, modulus)?);
    Ok(Integer::from(b.expose().secure_pow_mod_ref(exp, modulus)))
}

/// `2^t mod m` for a public `t` and a secret modulus `m > 1`, odd or even: the time-lock
/// trapdoor's `2^t mod phi(n)` and `2^t mod (p - 1)`, whose moduli give the factors away.
/// GMP's `mpz_powm` takes even moduli but runs in time that depends on their values; here
/// `m = 2^s o` with `o` odd, and for `t >= s`, `2^t mod m = 2^s (2^(t - s) mod o)`, the odd
/// part by [`pow_mod_ct_bits`] over 64 exponent bits whatever `t - s` is. The work depends on
/// `t` and the lengths of `m` and of its odd part, not on their values: `s` is found by one
/// `tzcnt` on the low word, and the odd part is `s` bits shorter than `m`, which changes the
/// work only when that crosses a word or digit boundary (`s` is 2 to 4 for most `phi(n)` of
/// random primes, and never more than 63).
///
/// When `2^t` is below `2^(bits - 1) <= m` it is the result as is. Errors for `m <= 1` and for
/// a modulus divisible by 2^64 (no such `phi(n)` or `p - 1` for primes of random form).
pub fn pow2_mod_ct(t: u64, m: &Integer) -> Result<Integer> {
    if *m <= 1 {
        return Err(Error::InvalidArgument("2^t mod m needs m > 1"));
    }
    let bits = u64::from(m.significant_bits());
    if t < bits - 1 {
        // t < bits - 1 < 2^32.
        return Ok(Integer::from(1) << t as u32);
    }
    let low = m.to_u64_wrapping();
    if low == 0 {
        return Err(Error::UnsuitableModulus(
            "2^t mod m: m is divisible by 2^64",
        ));
    }
    // 2^s <= m, so s <= bits - 1 <= t.
    let s = low.trailing_zeros();
    let odd = Integer::from(m >> s);
    if odd == 1 {
        // m = 2^s divides 2^t.
        return Ok(Integer::new());
    }
    // t = s only when m = 2^s (above), so t - s >= 1.
    let x = pow_mod_ct_bits(
        &Integer::from(2),
        &Integer::from(t - u64::from(s)),
        &odd,
        64,
    )?;
    Ok(x << s)
}

/// `base^exp mod n` for an odd 64-bit `n >= 2^63` and `base < n` (the fault check's secret
/// prime, the exponent and base reduced modulo it) with no branch and no memory address that
/// depends on `base`, `exp` or `n`: Montgomery arithmetic with the final correction under a
/// mask, `R^2 mod n` by 64 masked doublings (no division), and 64 steps that each square and
/// multiply, the product kept or dropped by a mask. Errors for an even or shorter `n` or
/// `base >= n` (checks of the arguments' form, the same for every call of the fault check).
pub fn pow_mod_u64_ct(base: u64, exp: u64, n: u64) -> Result<u64> {
    if n & 1 == 0 || n >> 63 == 0 {
        return Err(Error::UnsuitableModulus(
            "64-bit constant-time exponentiation needs an odd modulus >= 2^63",
        ));
    }
    if base >= n {
        return Err(Error::InvalidArgument("the base must be below the modulus"));
    }
    let inv = crate::mont::inverse::inverse_mod_2_64(n);
    // t R^-1 mod n for t < n R: the low halves of t and m n agree, so the result is the
    // difference of the high halves, plus n under a mask when it is negative.
    let reduce = |t: u128| -> u64 {
        let m = (t as u64).wrapping_mul(inv);
        let mn = u128::from(m) * u128::from(n);
        let (r, borrow) = ((t >> 64) as u64).overflowing_sub((mn >> 64) as u64);
        r.wrapping_add(n & u64::from(borrow).wrapping_neg())
    };
    let mul = |a: u64, b: u64| reduce(u128::from(a) * u128::from(b));
    // R mod n = 2^64 - n (n > 2^63); R^2 mod n by 64 doublings, each reduced under a mask.
    let one = n.wrapping_neg();
    let mut r2 = one;
    for _ in 0..64 {
        let d = u128::from(r2) << 1;
        let (e, borrow) = d.overflowing_sub(u128::from(n));
        let keep = u128::from(borrow).wrapping_neg();
        r2 = ((d & keep) | (e & !keep)) as u64;
    }
    let b = mul(base, r2);
    let mut acc = one;
    for i in (0..64).rev() {
        acc = mul(acc, acc);
        let product = mul(acc, b);
        let take = std::hint::black_box((exp >> i & 1).wrapping_neg());
        acc = (product & take) | (acc & !take);
    }
    Ok(reduce(u128::from(acc)))
}

/// Two [`pow_mod_ct_bits`]s, `base_c^exp_c mod modulus_c` (the two halves of an RSA CRT
/// private operation) with one public bound `exp_bits` on both exponents' lengths: on AVX-512
/// IFMA, with moduli of one shape, through [`crate::mont::ifma::IfmaContext::pow_ct_pair`],
/// whose multiplications interleave the two exponentiations where that measured faster;
/// otherwise one after the other. For repeated exponentiations modulo the same two moduli,
/// [`CtPair`] prepares them once.
pub fn pow_mod_ct_pair(
    base: [&Integer; 2],
    exp: [&Integer; 2],
    modulus: [&Integer; 2],
    exp_bits: u32,
) -> Result<[Integer; 2]> {
    CtPair::new(modulus)?.pow(base, exp, exp_bits)
}

/// Two odd moduli prepared for repeated [`pow_mod_ct_pair`]s (the primes of an RSA key): the
/// IFMA contexts, with their `R^2 mod p`, are built once (about 1.3% of an RSA-2048 private
/// operation otherwise). The moduli may be secret: they are wiped on drop, as are the
/// contexts' digits, and `Debug` shows only their lengths.
#[derive(Clone)]
pub struct CtPair {
    modulus: [SecretInt; 2],
    #[cfg(target_arch = "x86_64")]
    ifma: Option<[crate::mont::ifma::IfmaContext; 2]>,
}

impl CtPair {
    /// The prepared pair; an error for an even modulus or one below 3.
    pub fn new(modulus: [&Integer; 2]) -> Result<Self> {
        for m in modulus {
            check_ct_modulus(m)?;
        }
        #[cfg(target_arch = "x86_64")]
        let ifma = if modulus
            .iter()
            .all(|m| m.significant_bits() >= IFMA_PAIR_MIN_BITS)
        {
            use crate::mont::ifma::IfmaContext;
            // Of different shapes, `pow` runs them one after the other.
            match (
                IfmaContext::new_secret(modulus[0]),
                IfmaContext::new_secret(modulus[1]),
            ) {
                (Some(p), Some(q)) => Some([p, q]),
                _ => None,
            }
        } else {
            None
        };
        Ok(Self {
            modulus: modulus.map(|m| SecretInt::new(m.clone())),
            #[cfg(target_arch = "x86_64")]
            ifma,
        })
    }

    /// The moduli.
    pub fn moduli(&self) -> [&Integer; 2] {
        [self.modulus[0].expose(), self.modulus[1].expose()]
    }

    /// `base_c^exp_c mod modulus_c` for both, as [`pow_mod_ct_pair`]: each exponent positive,
    /// `exp_bits` a public bound on their lengths.
    pub fn pow(
        &self,
        base: [&Integer; 2],
        exp: [&Integer; 2],
        exp_bits: u32,
    ) -> Result<[Integer; 2]> {
        for e in exp {
            check_ct_exponent(e)?;
        }
        #[cfg(target_arch = "x86_64")]
        if let Some([p, q]) = &self.ifma {
            if let Some(r) = p.pow_ct_pair(q, base, exp, exp_bits) {
                return Ok(r);
            }
        }
        Ok([
            pow_mod_ct_bits(base[0], exp[0], self.modulus[0].expose(), exp_bits)?,
            pow_mod_ct_bits(base[1], exp[1], self.modulus[1].expose(), exp_bits)?,
        ])
    }
}

impl std::fmt::Debug for CtPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CtPair")
            .field("bits", &self.moduli().map(Integer::significant_bits))
            .finish_non_exhaustive()
    }
}

/// The CRT recombination of an RSA private operation (Garner's formula) for the secret primes
/// `p` and `q`, in constant time: `m = sq + q ((sp - sq) q^-1 mod p)` from `sp = m mod p` and
/// `sq = m mod q`. Every step runs on limbs padded to the primes' lengths, so no branch or
/// memory address depends on the values: `sq mod p` by GMP's `mpn_sec_div_r`, the difference
/// modulo `p` with the correction added under a mask, the product by `q^-1` as one Montgomery
/// multiplication by `q^-1 R mod p` (kept, wiped on drop), the product by `q` by GMP's
/// `mpn_sec_mul`. GMP's integer arithmetic would take value-dependent time (a zero difference
/// skips the products; the division's corrections depend on the quotient), with `p` the
/// divisor.
#[derive(Clone)]
pub struct CtCrt {
    p: zeroize::Zeroizing<Vec<u64>>,
    /// `-p^-1 mod 2^64`.
    p0: u64,
    q: zeroize::Zeroizing<Vec<u64>>,
    /// `q^-1 R mod p` with `R = 2^(64 L)`, `L` the limbs of `p`.
    qinv: zeroize::Zeroizing<Vec<u64>>,
}

impl CtCrt {
    /// The recombination for odd `p > 1`, `q > 1` and `qinv = q^-1 mod p`; an error when
    /// `qinv` is not `q`'s inverse (checked in constant time).
    pub fn new(p: &Integer, q: &Integer, qinv: &Integer) -> Result<Self> {
        check_ct_modulus(p)?;
        if *q <= 1 || *qinv < 0 {
            return Err(Error::InvalidArgument(
                "CRT recombination needs q > 1 and a non-negative q^-1 mod p",
            ));
        }
        use crate::secret::{limbs_ct, mont_mul_limbs_ct, montgomery_limbs_ct, reduce_limbs_ct};
        let p_limbs = zeroize::Zeroizing::new(p.to_digits::<u64>(rug::integer::Order::Lsf));
        let q_limbs = zeroize::Zeroizing::new(q.to_digits::<u64>(rug::integer::Order::Lsf));
        let qinv_limbs = limbs_ct(qinv, qinv.significant_digits::<u64>().max(1));
        let qinv_mont = montgomery_limbs_ct(&reduce_limbs_ct(&qinv_limbs, &p_limbs), &p_limbs);
        let p0 = crate::mont::inverse::inverse_mod_2_64(p.to_u64_wrapping()).wrapping_neg();
        // (q mod p) (q^-1 R) R^-1 = q q^-1 mod p, which must be 1.
        let one = mont_mul_limbs_ct(
            &reduce_limbs_ct(&q_limbs, &p_limbs),
            &qinv_mont,
            &p_limbs,
            p0,
        );
        let is_one = one
            .iter()
            .enumerate()
            .fold(0u64, |acc, (i, &w)| acc | (w ^ u64::from(i == 0)));
        if is_one != 0 {
            return Err(Error::NotInvertible);
        }
        Ok(Self {
            p: p_limbs,
            p0,
            q: q_limbs,
            qinv: qinv_mont,
        })
    }

    /// `m` in `[0, p q)` with `m = sp mod p` and `m = sq mod q`, for `sp` in `[0, p)` and `sq`
    /// in `[0, q)` (an error when either is negative or longer than its prime in limbs).
    pub fn combine(&self, sp: &Integer, sq: &Integer) -> Result<Integer> {
        use crate::secret::{add_masked_in_place_ct, limbs_ct, mont_mul_limbs_ct, mul_ct};
        use crate::secret::{reduce_limbs_ct, sub_in_place_ct};
        let (lp, lq) = (self.p.len(), self.q.len());
        if *sp < 0
            || *sq < 0
            || sp.significant_digits::<u64>() > lp
            || sq.significant_digits::<u64>() > lq
        {
            return Err(Error::InvalidArgument(
                "CRT recombination needs each half below its prime",
            ));
        }
        let sq_limbs = limbs_ct(sq, lp + lq);
        // (sp - sq mod p) mod p: p added back under the borrow's mask.
        let mut diff = limbs_ct(sp, lp);
        let borrow = sub_in_place_ct(&mut diff, &reduce_limbs_ct(&sq_limbs[..lq], &self.p));
        add_masked_in_place_ct(&mut diff, &self.p, borrow.wrapping_neg());
        let h = mont_mul_limbs_ct(&diff, &self.qinv, &self.p, self.p0);
        let mut m = mul_ct(&h, &self.q);
        add_masked_in_place_ct(&mut m, &sq_limbs, u64::MAX);
        Ok(Integer::from_digits(&m, rug::integer::Order::Lsf))
    }
}

impl std::fmt::Debug for CtCrt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CtCrt")
            .field("limbs", &[self.p.len(), self.q.len()])
            .finish_non_exhaustive()
    }
}

/// An odd public modulus prepared for repeated work on secret values modulo it (an RSA key's
/// blinding, unblinding and re-encryption check): products by kept factors in constant time
/// ([`CtModulus::mul`], [`CtModulus::square`]) and powers by public exponents
/// ([`CtModulus::pow_vartime`]), on an IFMA context built once (its `R^2 mod n` is a
/// division: about 2 us of every RSA-2048 private operation's re-encryption when built each
/// time).
#[derive(Clone, Debug)]
pub struct CtModulus {
    n: Integer,
    /// `n`'s limbs and `-n^-1 mod 2^64` (for the products without IFMA).
    limbs: Vec<u64>,
    n0: u64,
    /// A digest of `n` that its factors carry (see [`CtFactor`]).
    origin: u64,
    #[cfg(target_arch = "x86_64")]
    ifma: Option<crate::mont::ifma::IfmaContext>,
}

/// A secret value modulo a [`CtModulus`] kept in the form its products take (Montgomery form),
/// wiped on drop: a factor used again and again, as an RSA key's blinding pair. It carries a
/// 64-bit digest of the modulus that made it, and another modulus refuses it (a guard against
/// mix-ups, not against forgery).
#[derive(Clone)]
pub struct CtFactor {
    origin: u64,
    form: Factor,
}

#[derive(Clone)]
enum Factor {
    /// Montgomery-form digits on the modulus's IFMA context, below `2 n`.
    #[cfg(target_arch = "x86_64")]
    Ifma(zeroize::Zeroizing<Vec<u64>>),
    /// Montgomery form in `n`'s number of limbs (`R = 2^(64 L)`), below `n`.
    Limbs(zeroize::Zeroizing<Vec<u64>>),
}

impl std::fmt::Debug for CtFactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CtFactor(..)")
    }
}

impl CtModulus {
    /// The prepared modulus; an error for an even modulus or one below 3.
    pub fn new(n: &Integer) -> Result<Self> {
        check_ct_modulus(n)?;
        Ok(Self {
            n: n.clone(),
            limbs: n.to_digits(rug::integer::Order::Lsf),
            n0: crate::mont::inverse::inverse_mod_2_64(n.to_u64_wrapping()).wrapping_neg(),
            origin: digest(n),
            #[cfg(target_arch = "x86_64")]
            ifma: if n.significant_bits() >= crate::mont::IFMA_MIN_BITS {
                crate::mont::ifma::IfmaContext::new(n)
            } else {
                None
            },
        })
    }

    /// The modulus.
    pub fn modulus(&self) -> &Integer {
        &self.n
    }

    /// `x` in `[0, n)` as a factor for [`CtModulus::mul`], in constant time.
    pub fn factor(&self, x: &Integer) -> Result<CtFactor> {
        self.check_below(x)?;
        #[cfg(target_arch = "x86_64")]
        if let Some(ctx) = &self.ifma {
            return Ok(self.made(Factor::Ifma(ctx.to_montgomery_ct(x))));
        }
        let x = crate::secret::limbs_ct(x, self.limbs.len());
        Ok(self.made(Factor::Limbs(crate::secret::montgomery_limbs_ct(
            &x,
            &self.limbs,
        ))))
    }

    /// `x f mod n` for `x` in `[0, n)` and a factor `f` of this modulus, in time that depends
    /// on `n`'s length only: one IFMA Montgomery multiplication and a masked subtraction where
    /// the CPU has IFMA (about 1.2 us at 2048 bits with the conversions, against 1.6 for GMP's
    /// product and division), elsewhere GMP's `mpn_sec_mul` and a word-by-word Montgomery reduction with
    /// a masked final subtraction, on limbs padded to `n`'s length.
    pub fn mul(&self, x: &Integer, f: &CtFactor) -> Result<Integer> {
        self.check_below(x)?;
        self.check_origin(f)?;
        match &f.form {
            #[cfg(target_arch = "x86_64")]
            Factor::Ifma(digits) => match &self.ifma {
                Some(ctx) => Ok(ctx.mul_plain_ct(x, digits)),
                None => Err(FOREIGN_FACTOR),
            },
            Factor::Limbs(f) => {
                let x = crate::secret::limbs_ct(x, f.len());
                let product = crate::secret::mont_mul_limbs_ct(&x, f, &self.limbs, self.n0);
                Ok(Integer::from_digits(&product, rug::integer::Order::Lsf))
            }
        }
    }

    /// `f^2 mod n` as a factor, in constant time.
    pub fn square(&self, f: &CtFactor) -> Result<CtFactor> {
        self.product(f, f)
    }

    /// `x^e mod n` for a secret `x` in `[0, n)` and a public `e > 0` (an RSA result's
    /// re-encryption, a blinding factor `r^e`), in time that depends on `e` and `n`'s length
    /// only: square-and-multiply over `e`'s bits with the constant-time products. (GMP's
    /// `mpz_powm_sec` runs over whole exponent limbs: 23-31 us for `e = 65537` at 1024 bits,
    /// against 3.7 here with IFMA.)
    pub fn pow_public(&self, x: &Integer, e: &Integer) -> Result<Integer> {
        check_ct_exponent(e)?;
        let base = self.factor(x)?;
        let mut acc = base.clone();
        for i in (0..e.significant_bits() - 1).rev() {
            acc = self.product(&acc, &acc)?;
            if e.get_bit(i) {
                acc = self.product(&acc, &base)?;
            }
        }
        self.mul(&Integer::from(1), &acc)
    }

    /// `x^-1 mod n` for a secret `x` in `[0, n)` (a blinding factor), through GMP's fast,
    /// variable-time inversion of `x r` for a uniformly random unit `r`, the two products in
    /// constant time: the inversion's time depends on `x r`, which is independent of `x`.
    /// Errors when `x` is not invertible (or, with negligible probability for a modulus without
    /// small factors, after 64 draws of `r` that were not).
    pub fn inverse(
        &self,
        x: &Integer,
        rng: &mut dyn crate::entropy::EntropySource,
    ) -> Result<Integer> {
        self.check_below(x)?;
        for _ in 0..64 {
            let r = self.factor(&crate::entropy::random_below(rng, &self.n)?)?;
            let xr = SecretInt::new(self.mul(x, &r)?);
            if let Some(inv) = xr.expose().invert_ref(&self.n) {
                let inv = SecretInt::new(Integer::from(inv));
                return self.mul(inv.expose(), &r);
            }
            // x r not invertible: x is not (then no r helps), or r shares a factor with n.
            if Integer::from(x.gcd_ref(&self.n)) != 1 {
                return Err(Error::NotInvertible);
            }
        }
        Err(Error::NotInvertible)
    }

    /// `base^exp mod n` for public values, as [`pow_mod_vartime`] but on the kept context.
    pub fn pow_vartime(&self, base: &Integer, exp: &Integer) -> Result<Integer> {
        #[cfg(target_arch = "x86_64")]
        if let (Some(ctx), true) = (&self.ifma, *exp >= 0) {
            return Ok(ctx.pow_vartime(base, exp));
        }
        pow_mod_vartime(base, exp, &self.n)
    }

    /// `f g mod n` as a factor, in constant time.
    fn product(&self, f: &CtFactor, g: &CtFactor) -> Result<CtFactor> {
        self.check_origin(f)?;
        self.check_origin(g)?;
        let form = match (&f.form, &g.form) {
            #[cfg(target_arch = "x86_64")]
            (Factor::Ifma(a), Factor::Ifma(b)) => match &self.ifma {
                Some(ctx) => {
                    let mut out = zeroize::Zeroizing::new(vec![0; a.len()]);
                    ctx.mul(&mut out, a, b);
                    Factor::Ifma(out)
                }
                None => return Err(FOREIGN_FACTOR),
            },
            (Factor::Limbs(a), Factor::Limbs(b)) => {
                Factor::Limbs(crate::secret::mont_mul_limbs_ct(a, b, &self.limbs, self.n0))
            }
            #[cfg(target_arch = "x86_64")]
            _ => return Err(FOREIGN_FACTOR),
        };
        Ok(self.made(form))
    }

    /// A factor of this modulus in `form`.
    fn made(&self, form: Factor) -> CtFactor {
        CtFactor {
            origin: self.origin,
            form,
        }
    }

    /// An error unless this modulus made `f`.
    fn check_origin(&self, f: &CtFactor) -> Result<()> {
        if f.origin != self.origin {
            return Err(FOREIGN_FACTOR);
        }
        Ok(())
    }

    /// An error unless `0 <= x < n`. `x` may be secret (an unblinded result): the comparison
    /// with `n` is a subtraction over all of `n`'s limbs (GMP's compares the lengths first,
    /// which for a modulus with a short top limb says whether `x` is shorter); only the sign
    /// and a length beyond `n`'s, both out of range, are looked at directly.
    fn check_below(&self, x: &Integer) -> Result<()> {
        let len = self.limbs.len();
        let below = *x >= 0 && x.significant_digits::<u64>() <= len && {
            let mut d = crate::secret::limbs_ct(x, len);
            crate::secret::sub_in_place_ct(&mut d, &self.limbs) == 1
        };
        if !below {
            return Err(Error::InvalidArgument(
                "a product modulo n needs factors in [0, n)",
            ));
        }
        Ok(())
    }
}

/// A 64-bit digest of a public `n`'s limbs (multiply and rotate): what [`CtFactor`] carries.
fn digest(n: &Integer) -> u64 {
    n.to_digits::<u64>(rug::integer::Order::Lsf)
        .iter()
        .fold(u64::from(n.significant_bits()), |h, &w| {
            (h ^ w).wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(29)
        })
}

/// A factor made by another modulus.
const FOREIGN_FACTOR: Error = Error::InvalidArgument("a factor of another modulus");

/// The constant-time exponentiations' requirements: an odd modulus above 1 (GMP's secure
/// variant needs it) and a positive exponent.
fn check_ct_arguments(exp: &Integer, modulus: &Integer) -> Result<()> {
    check_ct_modulus(modulus)?;
    check_ct_exponent(exp)
}

/// An odd modulus above 1.
fn check_ct_modulus(modulus: &Integer) -> Result<()> {
    if modulus.is_even() || *modulus <= 1 {
        return Err(Error::UnsuitableModulus(
            "constant-time exponentiation needs an odd modulus > 1",
        ));
    }
    Ok(())
}

/// A positive exponent.
fn check_ct_exponent(exp: &Integer) -> Result<()> {
    if *exp <= 0 {
        return Err(Error::InvalidArgument(
            "constant-time exponentiation needs a positive exponent",
        ));
    }
    Ok(())
}

/// `base^exp mod modulus` for public values (variable time): on CPUs with AVX-512 IFMA, for
/// odd moduli of [`crate::mont::IFMA_MIN_BITS`] to 4158 bits and `exp >= 0`,
/// [`crate::mont::ifma::IfmaContext::pow_vartime`] (RSA's public operation with `e = 65537`
/// about twice as fast as GMP at 2048 bits); elsewhere GMP's `mpz_powm`, which also
/// takes even moduli and negative exponents (through the inverse).
pub fn pow_mod_vartime(base: &Integer, exp: &Integer, modulus: &Integer) -> Result<Integer> {
    #[cfg(target_arch = "x86_64")]
    if *exp >= 0 && modulus.is_odd() && modulus.significant_bits() >= crate::mont::IFMA_MIN_BITS {
        if let Some(ctx) = crate::mont::ifma::IfmaContext::new(modulus) {
            return Ok(ctx.pow_vartime(base, exp));
        }
    }
    base.pow_mod_ref(exp, modulus)
        .map(Integer::from)
        .ok_or(Error::NotInvertible)
}

/// `a^-1 mod m`.
pub fn inverse(a: &Integer, m: &Integer) -> Result<Integer> {
    a.invert_ref(m)
        .map(Integer::from)
        .ok_or(Error::NotInvertible)
}

/// The solution `x` of `x = a (mod m)`, `x = b (mod n)` with `0 <= x < lcm(m, n)`, when the
/// system is consistent. `m` and `n` need not be coprime.
pub fn crt_pair(a: &Integer, m: &Integer, b: &Integer, n: &Integer) -> Result<Integer> {
    let g = Integer::from(m.gcd_ref(n));
    let diff = Integer::from(b - a);
    if !diff.is_divisible(&g) {
        return Err(Error::InconsistentCongruences);
    }
    let m_g = Integer::from(m / &g);
    let n_g = Integer::from(n / &g);
    let lcm = Integer::from(&m_g * n);
    // x = a + m * ((b - a)/g * (m/g)^-1 mod n/g)
    let inv = if n_g == 1 {
        Integer::new()
    } else {
        inverse(&m_g, &n_g)?
    };
    let mut k = Integer::from(&diff / &g) * inv;
    k.modulo_mut(&n_g);
    let mut x = k * m + a;
    x.modulo_mut(&lcm);
    Ok(x)
}

/// The least common multiple.
pub fn lcm(a: &Integer, b: &Integer) -> Integer {
    Integer::from(a.lcm_ref(b))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The oracle: GMP's `mpz_powm`, whatever path `pow_mod_vartime` takes.
    fn gmp_pow(b: &Integer, e: &Integer, m: &Integer) -> Integer {
        Integer::from(b.pow_mod_ref(e, m).unwrap())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        /// The variable-time exponentiation (IFMA from 513 bits where the CPU has it) against
        /// GMP: bases of any size and sign, exponents from zero up, odd and even moduli.
        #[test]
        fn vartime_matches_gmp(
            n_bytes in prop::collection::vec(any::<u8>(), 1..530),
            e_bytes in prop::collection::vec(any::<u8>(), 0..70),
            b_bytes in prop::collection::vec(any::<u8>(), 0..600),
            negative_base in any::<bool>(),
        ) {
            let n = Integer::from_digits(&n_bytes, rug::integer::Order::Msf);
            prop_assume!(n > 1);
            let e = Integer::from_digits(&e_bytes, rug::integer::Order::Msf);
            let mut b = Integer::from_digits(&b_bytes, rug::integer::Order::Msf);
            if negative_base {
                b = -b;
            }
            prop_assert_eq!(pow_mod_vartime(&b, &e, &n).unwrap(), gmp_pow(&b, &e, &n));
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(96))]
        /// A prepared modulus's products by factors and their squares (IFMA from 513 bits
        /// where the CPU has it, Montgomery form on 64-bit limbs below) and its powers against
        /// GMP, for values anywhere in `[0, n)`.
        #[test]
        fn prepared_modulus_matches_gmp(
            n_bytes in prop::collection::vec(any::<u8>(), 1..530),
            a_bytes in prop::collection::vec(any::<u8>(), 0..530),
            b_bytes in prop::collection::vec(any::<u8>(), 0..530),
            e in any::<u32>(),
        ) {
            let n = Integer::from_digits(&n_bytes, rug::integer::Order::Msf) | 1u32;
            prop_assume!(n > 1);
            let a = Integer::from_digits(&a_bytes, rug::integer::Order::Msf) % &n;
            let b = Integer::from_digits(&b_bytes, rug::integer::Order::Msf) % &n;
            let m = CtModulus::new(&n).unwrap();
            let f = m.factor(&b).unwrap();
            prop_assert_eq!(m.mul(&a, &f).unwrap(), Integer::from(&a * &b) % &n);
            // Squared five times: b^32.
            let mut g = f;
            for _ in 0..5 {
                g = m.square(&g).unwrap();
            }
            let b32 = gmp_pow(&b, &Integer::from(32), &n);
            prop_assert_eq!(m.mul(&a, &g).unwrap(), Integer::from(&a * &b32) % &n);
            let e = Integer::from(e);
            prop_assert_eq!(m.pow_vartime(&a, &e).unwrap(), gmp_pow(&a, &e, &n));
            let e = e + 1u32;
            prop_assert_eq!(m.pow_public(&a, &e).unwrap(), gmp_pow(&a, &e, &n));
        }
    }

    #[test]
    fn prepared_modulus_edges() {
        for bits in [64u32, 512, 513, 1024, 2048, 4096, 4158, 4159, 5000] {
            for n in [
                (Integer::from(1) << bits) - 1u32,
                (Integer::from(1) << (bits - 1)) + 1u32,
            ] {
                let m = CtModulus::new(&n).unwrap();
                assert_eq!(m.modulus(), &n);
                let top = Integer::from(&n - 1u32);
                for (a, b) in [
                    (Integer::ZERO, top.clone()),
                    (Integer::from(1), top.clone()),
                    (top.clone(), top.clone()),
                    (Integer::from(&n >> 1u32), top.clone()),
                    (top.clone(), Integer::ZERO),
                ] {
                    let want = Integer::from(&a * &b) % &n;
                    assert_eq!(m.mul(&a, &m.factor(&b).unwrap()).unwrap(), want);
                    assert_eq!(m.mul(&b, &m.factor(&a).unwrap()).unwrap(), want);
                }
                let f = m.factor(&top).unwrap();
                for bad in [Integer::from(-1), n.clone(), Integer::from(&n + 1u32)] {
                    assert!(m.mul(&bad, &f).is_err());
                    assert!(m.factor(&bad).is_err());
                }
            }
        }
        for bad in [Integer::ZERO, Integer::from(1), Integer::from(1) << 100u32] {
            assert!(CtModulus::new(&bad).is_err());
        }
        // A factor of another modulus is refused, of another shape or of the same one.
        let large = (Integer::from(1) << 2048u32) - 1u32;
        let f = CtModulus::new(&large)
            .unwrap()
            .factor(&Integer::from(5))
            .unwrap();
        for other in [
            (Integer::from(1) << 1024u32) - 1u32,
            Integer::from(&large - 2u32),
            &large - (Integer::from(1) << 64u32),
            (Integer::from(1) << 2000u32) - 1u32,
        ] {
            let m = CtModulus::new(&other).unwrap();
            assert!(m.mul(&Integer::from(3), &f).is_err());
            assert!(m.square(&f).is_err());
        }
        // Public exponents must be positive; bases below n.
        let m = CtModulus::new(&large).unwrap();
        assert!(m.pow_public(&Integer::from(3), &Integer::ZERO).is_err());
        assert!(m.pow_public(&large, &Integer::from(3)).is_err());
        assert_eq!(m.pow_public(&Integer::ZERO, &Integer::from(3)).unwrap(), 0);
    }

    /// Garner's recombination with GMP's integer arithmetic: the oracle for [`CtCrt`].
    fn garner(sp: &Integer, sq: &Integer, p: &Integer, q: &Integer) -> Integer {
        let qinv = Integer::from(q.invert_ref(p).unwrap());
        let mut h = Integer::from(sp - sq) * qinv;
        h.modulo_mut(p);
        h * q + sq
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// The constant-time recombination against GMP's, for coprime `p` (odd) and `q` of any
        /// lengths (one limb to past 4096 bits, either the longer) and halves anywhere below
        /// them; the result reduces to both halves.
        #[test]
        fn crt_recombination_matches_gmp(
            p_bytes in prop::collection::vec(any::<u8>(), 1..530),
            q_bytes in prop::collection::vec(any::<u8>(), 1..530),
            a_bytes in prop::collection::vec(any::<u8>(), 0..530),
            b_bytes in prop::collection::vec(any::<u8>(), 0..530),
        ) {
            let p = Integer::from_digits(&p_bytes, rug::integer::Order::Msf) | 1u32;
            let q = Integer::from_digits(&q_bytes, rug::integer::Order::Msf);
            prop_assume!(p > 1 && q > 1 && Integer::from(p.gcd_ref(&q)) == 1);
            let sp = Integer::from_digits(&a_bytes, rug::integer::Order::Msf) % &p;
            let sq = Integer::from_digits(&b_bytes, rug::integer::Order::Msf) % &q;
            let qinv = Integer::from(q.invert_ref(&p).unwrap());
            let m = CtCrt::new(&p, &q, &qinv).unwrap().combine(&sp, &sq).unwrap();
            prop_assert_eq!(&m, &garner(&sp, &sq, &p, &q));
            prop_assert!(m < Integer::from(&p * &q));
            prop_assert_eq!(Integer::from(&m % &p), sp);
            prop_assert_eq!(Integer::from(&m % &q), sq);
        }
    }

    #[test]
    fn crt_recombination_edges() {
        for (pb, qb) in [
            (64u32, 64u32),
            (512, 512),
            (1024, 1024),
            (1024, 1088),
            (1088, 1024),
        ] {
            // Odd p and q of the given lengths, all ones and all ones but bit 1.
            let p = (Integer::from(1) << pb) - 1u32;
            let q = (Integer::from(1) << qb) - 3u32;
            assert_eq!(Integer::from(p.gcd_ref(&q)), 1);
            let qinv = Integer::from(q.invert_ref(&p).unwrap());
            let crt = CtCrt::new(&p, &q, &qinv).unwrap();
            let (tp, tq) = (Integer::from(&p - 1u32), Integer::from(&q - 1u32));
            for (sp, sq) in [
                (Integer::ZERO, Integer::ZERO),
                (tp.clone(), tq.clone()),
                (Integer::ZERO, tq.clone()),
                (tp.clone(), Integer::ZERO),
                (Integer::from(1), Integer::from(1)),
                (tp.clone(), Integer::from(1)),
            ] {
                assert_eq!(crt.combine(&sp, &sq).unwrap(), garner(&sp, &sq, &p, &q));
            }
            // Halves negative or longer than their prime in limbs are refused.
            let long_p = Integer::from(1) << (64 * pb.div_ceil(64));
            let long_q = Integer::from(1) << (64 * qb.div_ceil(64));
            assert!(crt.combine(&Integer::from(-1), &Integer::ZERO).is_err());
            assert!(crt.combine(&Integer::ZERO, &Integer::from(-1)).is_err());
            assert!(crt.combine(&long_p, &Integer::ZERO).is_err());
            assert!(crt.combine(&Integer::ZERO, &long_q).is_err());
            // A coefficient that is not q's inverse, or a bad prime, is refused.
            for bad in [Integer::from(&qinv + 1u32), Integer::ZERO] {
                assert!(CtCrt::new(&p, &q, &bad).is_err());
            }
            // An unreduced coefficient is reduced first.
            assert!(CtCrt::new(&p, &q, &Integer::from(&qinv + &p)).is_ok());
        }
        let q = Integer::from(7);
        for p in [Integer::from(1), Integer::from(10), Integer::from(-5)] {
            assert!(CtCrt::new(&p, &q, &Integer::from(1)).is_err());
        }
        assert!(CtCrt::new(&Integer::from(11), &Integer::from(1), &Integer::from(1)).is_err());
        assert!(CtCrt::new(&Integer::from(11), &Integer::from(3), &Integer::from(-4)).is_err());
    }

    #[test]
    fn vartime_edges_match_gmp() {
        for bits in [512u32, 513, 1024, 2048, 4096, 4158, 4159] {
            let n = (Integer::from(1) << bits) - 1u32; // odd, all ones
            for e in [0u32, 1, 2, 3, 65537] {
                let e = Integer::from(e);
                for b in [
                    Integer::ZERO,
                    Integer::from(1),
                    Integer::from(&n - 1u32),
                    n.clone(),
                    Integer::from(&n + 7u32),
                    Integer::from(-5),
                ] {
                    assert_eq!(pow_mod_vartime(&b, &e, &n).unwrap(), gmp_pow(&b, &e, &n));
                }
            }
        }
        // Negative exponents (the inverse) and even moduli stay on GMP.
        let n = (Integer::from(1) << 1024u32) + 1u32;
        let inv = pow_mod_vartime(&Integer::from(3), &Integer::from(-1), &n).unwrap();
        assert_eq!((inv * 3u32) % &n, 1);
        let even = Integer::from(1) << 1024u32;
        assert_eq!(
            pow_mod_vartime(&Integer::from(3), &Integer::from(5), &even).unwrap(),
            243
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Both paths (IFMA from `IFMA_CT_MIN_BITS` where the CPU has it, GMP below), with
        /// exponents shorter and longer than the bound they are given.
        #[test]
        fn ct_with_a_bound_matches_vartime(
            n_bytes in prop::collection::vec(any::<u8>(), 8..160),
            e_bytes in prop::collection::vec(any::<u8>(), 1..200),
            base in any::<u64>(),
            bound in 1u32..1300,
        ) {
            let n = Integer::from_digits(&n_bytes, rug::integer::Order::Msf) | 1u32;
            prop_assume!(n > 1);
            let e = Integer::from_digits(&e_bytes, rug::integer::Order::Msf);
            prop_assume!(e > 0);
            let b = Integer::from(base);
            prop_assert_eq!(
                pow_mod_ct_bits(&b, &e, &n, bound).unwrap(),
                gmp_pow(&b, &e, &n)
            );
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(24))]
        /// The pair with one bound for both exponents, shorter or longer than either.
        #[test]
        fn ct_pair_with_a_bound_matches_vartime(
            bits in 520u32..1100,
            e_bits in [1u32..700, 1u32..700],
            bound in 1u32..1100,
            seed in any::<u64>(),
        ) {
            let mut rng = crate::entropy::SeededEntropy::new(&seed.to_le_bytes());
            let m = [0, 1].map(|_| crate::entropy::random_exact_bits(&mut rng, bits).unwrap() | 1u32);
            let e = e_bits.map(|b| crate::entropy::random_exact_bits(&mut rng, b).unwrap());
            let b = crate::entropy::random_below(&mut rng, &m[0]).unwrap();
            let got = pow_mod_ct_pair([&b, &b], [&e[0], &e[1]], [&m[0], &m[1]], bound).unwrap();
            for c in 0..2 {
                prop_assert_eq!(&got[c], &gmp_pow(&b, &e[c], &m[c]));
            }
        }
    }

    /// One prepared pair serves many exponentiations (its contexts are never changed by one),
    /// of moduli of one shape (the interleaved kernel) or not (one after the other, and below
    /// the kernel's sizes on GMP); bad arguments are errors, and `Debug` shows no modulus.
    #[test]
    fn a_prepared_pair_serves_repeated_exponentiations() {
        let mut rng = crate::entropy::SeededEntropy::new(b"ct pair");
        for bits in [
            [64, 64],
            [512, 512],
            [1024, 1024],
            [1024, 700],
            [2048, 2048],
        ] {
            let m = bits.map(|b| crate::entropy::random_exact_bits(&mut rng, b).unwrap() | 1u32);
            let pair = CtPair::new([&m[0], &m[1]]).unwrap();
            assert_eq!(pair.moduli(), [&m[0], &m[1]]);
            let shown = format!("{pair:?}");
            assert!(!shown.contains(&m[0].to_string()[..12]), "{shown}");
            for _ in 0..4 {
                let b = [0, 1].map(|c| crate::entropy::random_below(&mut rng, &m[c]).unwrap());
                let e = [0, 1].map(|_| crate::entropy::random_exact_bits(&mut rng, 300).unwrap());
                let got = pair.pow([&b[0], &b[1]], [&e[0], &e[1]], 320).unwrap();
                for c in 0..2 {
                    assert_eq!(got[c], gmp_pow(&b[c], &e[c], &m[c]), "{bits:?}");
                }
            }
            let zero = Integer::new();
            assert!(pair.pow([&zero, &zero], [&zero, &m[1]], 64).is_err());
        }
        let (odd, even) = (Integer::from(1001), Integer::from(1000));
        assert!(CtPair::new([&odd, &even]).is_err());
        assert!(CtPair::new([&Integer::from(1), &odd]).is_err());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(200))]
        /// 2^t mod m for moduli of every 2-adic valuation up to 63 (odd ones too), of a few
        /// words, and `t` around the modulus's length and far above it.
        #[test]
        fn pow2_mod_ct_matches_gmp(
            words in 1usize..6,
            s in 0u32..64,
            t_offset in -3i64..200,
            far in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let mut rng = crate::entropy::SeededEntropy::new(&seed.to_le_bytes());
            let odd = crate::entropy::random_exact_bits(&mut rng, 64 * words as u32).unwrap() | 1u32;
            let m = Integer::from(&odd << s);
            let t = if far {
                (1u64 << 40) + t_offset.unsigned_abs()
            } else {
                (i64::from(m.significant_bits()) + t_offset).max(0) as u64
            };
            let want = gmp_pow(&Integer::from(2), &Integer::from(t), &m);
            prop_assert_eq!(pow2_mod_ct(t, &m).unwrap(), want);
        }
    }

    proptest! {
        /// The 64-bit exponentiation against GMP, on odd moduli of 64 bits (prime or not).
        #[test]
        fn pow_mod_u64_ct_matches_gmp(n in any::<u64>(), base in any::<u64>(), exp in any::<u64>()) {
            let n = n | 1 | 1 << 63;
            let base = base % n;
            let want = gmp_pow(&Integer::from(base), &Integer::from(exp), &Integer::from(n));
            prop_assert_eq!(Integer::from(pow_mod_u64_ct(base, exp, n).unwrap()), want);
        }
    }

    #[test]
    fn pow_mod_u64_ct_edges() {
        for n in [
            u64::MAX,
            (1 << 63) | 1,
            18446744073709551557, /* largest 64-bit prime */
        ] {
            for base in [0, 1, 2, n - 1] {
                for exp in [0, 1, 2, n - 2, n - 1, u64::MAX] {
                    let want =
                        gmp_pow(&Integer::from(base), &Integer::from(exp), &Integer::from(n));
                    assert_eq!(Integer::from(pow_mod_u64_ct(base, exp, n).unwrap()), want);
                }
            }
        }
        assert!(pow_mod_u64_ct(2, 5, 1 << 63).is_err());
        assert!(pow_mod_u64_ct(2, 5, 1_000_003).is_err());
        assert!(pow_mod_u64_ct(u64::MAX, 5, u64::MAX).is_err());
    }

    #[test]
    fn pow2_mod_ct_edges() {
        let pow2 = |e: u32| Integer::from(1) << e;
        // Powers of two (2^t mod 2^s = 0 once t >= s), small moduli, t = 0.
        for (t, m) in [
            (5, pow2(3)),
            (3, pow2(3)),
            (70, pow2(63)),
            (0, Integer::from(3)),
        ] {
            assert_eq!(
                pow2_mod_ct(t, &m).unwrap(),
                gmp_pow(&Integer::from(2), &t.into(), &m)
            );
        }
        for t in 0..200u64 {
            for m in [2u32, 3, 4, 6, 12, 1000, 1024, 65535] {
                let m = Integer::from(m);
                assert_eq!(
                    pow2_mod_ct(t, &m).unwrap(),
                    gmp_pow(&Integer::from(2), &t.into(), &m),
                    "2^{t} mod {m}"
                );
            }
        }
        assert!(pow2_mod_ct(5, &Integer::from(1)).is_err());
        assert!(pow2_mod_ct(5, &Integer::new()).is_err());
        assert!(pow2_mod_ct(500, &(Integer::from(3) << 64)).is_err());
    }

    proptest! {
        /// The blinded inverse is the inverse, and the non-invertible are refused: odd moduli
        /// of one limb (small factors, so many values share one) and of IFMA sizes.
        #[test]
        fn blinded_inverse_matches_gmp(
            small in 3u64..,
            n_bytes in prop::collection::vec(any::<u8>(), 65..300),
            a in any::<u64>(),
            seed in any::<u64>(),
        ) {
            let mut rng = crate::entropy::SeededEntropy::new(&seed.to_le_bytes());
            let large = Integer::from_digits(&n_bytes, rug::integer::Order::Msf) | 1u32;
            for m in [Integer::from(small | 1), large] {
                let modulus = CtModulus::new(&m).unwrap();
                let a = Integer::from(a) % &m;
                match a.invert_ref(&m).map(Integer::from) {
                    Some(want) => prop_assert_eq!(modulus.inverse(&a, &mut rng).unwrap(), want),
                    None => prop_assert!(modulus.inverse(&a, &mut rng).is_err()),
                }
            }
        }
    }

    #[test]
    fn ct_matches_vartime() {
        let m: Integer = "170141183460469231731687303715884105727".parse().unwrap();
        let b = Integer::from(123456789);
        let e = Integer::from(987654321u64);
        assert_eq!(pow_mod_ct(&b, &e, &m).unwrap(), gmp_pow(&b, &e, &m));
        assert!(pow_mod_ct(&b, &e, &Integer::from(100)).is_err());
        assert!(pow_mod_ct(&b, &Integer::new(), &m).is_err());
    }

    proptest! {
        #[test]
        fn crt_pair_solves_both(a in 0u64..1_000_000, b in 0u64..1_000_000, m in 2u64..100_000, n in 2u64..100_000) {
            let (a, b, m, n) = (Integer::from(a), Integer::from(b), Integer::from(m), Integer::from(n));
            match crt_pair(&a, &m, &b, &n) {
                Ok(x) => {
                    prop_assert_eq!(Integer::from(&x - &a).modulo(&m), 0);
                    prop_assert_eq!(Integer::from(&x - &b).modulo(&n), 0);
                    prop_assert!(x < lcm(&m, &n));
                }
                Err(_) => {
                    let g = Integer::from(m.gcd_ref(&n));
                    prop_assert!(!Integer::from(&b - &a).is_divisible(&g));
                }
            }
        }
    }
}

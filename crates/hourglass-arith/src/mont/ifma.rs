//! Montgomery multiplication with AVX-512 IFMA in radix 2^52 (x86-64 only).
//!
//! IFMA's `vpmadd52luq` / `vpmadd52huq` add the low or high 52 bits of eight 52 x 52-bit
//! products to eight 64-bit accumulators at once. Numbers are `L` digits of 52 bits, with
//! `R = 2^(52 L)` and `4 n < R`, held in `V = ceil(L / 8)` vectors of eight lanes (zmm); the
//! lanes above `L` are zero. Each digit is one sequential step, so the multiplication runs `L`
//! steps.
//!
//! [`IfmaContext::mul`] is the word-serial "almost Montgomery multiplication" of Gueron and
//! Krasnov: for each digit `b_i`, add `a b_i` (low halves), derive `m = acc_0 n' mod 2^52` from
//! lane 0, add `m n` (low halves), shift the accumulator down one digit (lane 0 is now
//! divisible by 2^52 and its carry moves to the next digit), and add the high halves of both
//! products, which belong one digit up. Accumulators grow by at most 2^54 per step, so `L`
//! steps fit in 64 bits for `L` below 1024. The result, `a b / R mod n` plus at most `n`, is
//! below `2 n` when `a, b < 2 n`; it is normalised to 52-bit digits and stays "almost
//! reduced" until it leaves Montgomery form.
//!
//! [`IfmaContext::square`] is the same loop with each cross product `a_i a_j` formed once and
//! doubled: step `i` multiplies `a_i` by the vector of `a` that holds digit `i` and by `2 a`
//! above it, and skips the vectors below (their products came doubled from earlier steps), about
//! a fifth fewer multiply-adds at 2048 bits. Squaring chains and the squarings of the
//! exponentiations use it.
//!
//! The multiplication has no branch and no memory address that depends on the values (the
//! normalisation's carries travel by lane masks), which [`IfmaContext::pow_ct`] relies on for
//! secret exponents; the same kernel serves public work (squaring chains, VDF proofs and
//! verification).

use std::arch::x86_64::*;

use rug::integer::Order;
use rug::Integer;
use zeroize::Zeroizing;

const DIGIT_BITS: u32 = 52;
const MASK: u64 = (1 << DIGIT_BITS) - 1;
/// Digits per vector (zmm).
const LANES: usize = 8;
/// Largest number of 8-digit vectors supported (80 digits: moduli up to 4158 bits).
pub const MAX_VECTORS: usize = 10;

/// Whether this CPU has AVX-512F, VL and IFMA, and `HOURGLASS_NO_IFMA` is not set in the
/// environment (read once). The variable makes an IFMA machine behave as one without it (the
/// MULX/ADX kernels and GMP), to measure and test those paths: `bench rsa` then compares
/// against OpenSSL with its own IFMA code masked the same way (`OPENSSL_ia32cap`).
pub fn available() -> bool {
    static AVAILABLE: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *AVAILABLE.get_or_init(|| {
        std::env::var_os("HOURGLASS_NO_IFMA").is_none()
            && std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512ifma")
    })
}

/// Radix-2^52 Montgomery arithmetic modulo one odd `n`. The modulus may be secret (a CRT
/// prime): its digits are wiped when the context is dropped, and `Debug` shows only the shape.
#[derive(Clone)]
pub struct IfmaContext {
    n: Integer,
    vectors: usize,
    /// Digits of the Montgomery radix `R = 2^(52 steps)`, one sequential step each; the vectors
    /// hold at least this many, the lanes above it zero.
    steps: usize,
    /// `n` in `LANES * vectors` digits.
    n_digits: Zeroizing<Vec<u64>>,
    /// `-n^-1 mod 2^52`.
    k0: u64,
    /// `R^2 mod n` in digits.
    r2: Zeroizing<Vec<u64>>,
}

impl std::fmt::Debug for IfmaContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IfmaContext")
            .field("bits", &self.n.significant_bits())
            .field("vectors", &self.vectors)
            .field("steps", &self.steps)
            .finish_non_exhaustive()
    }
}

/// `x` (non-negative, below `2^(52 len)`) as `len` little-endian 52-bit digits.
fn to_digits(x: &Integer, len: usize) -> Vec<u64> {
    let limbs = Zeroizing::new(x.to_digits::<u64>(Order::Lsf));
    (0..len)
        .map(|i| {
            let bit = i * DIGIT_BITS as usize;
            let (w, s) = (bit / 64, bit % 64);
            let lo = limbs.get(w).copied().unwrap_or(0) >> s;
            let hi = if s > 64 - DIGIT_BITS as usize {
                limbs.get(w + 1).copied().unwrap_or(0) << (64 - s)
            } else {
                0
            };
            (lo | hi) & MASK
        })
        .collect()
}

/// The integer of little-endian 52-bit digits (each below 2^52).
fn from_digits(d: &[u64]) -> Integer {
    let mut limbs = Zeroizing::new(vec![0u64; (d.len() * DIGIT_BITS as usize).div_ceil(64) + 1]);
    for (i, &digit) in d.iter().enumerate() {
        let bit = i * DIGIT_BITS as usize;
        let (w, s) = (bit / 64, bit % 64);
        limbs[w] |= digit << s;
        if s > 64 - DIGIT_BITS as usize {
            limbs[w + 1] |= digit >> (64 - s);
        }
    }
    Integer::from_digits(&limbs, Order::Lsf)
}

impl IfmaContext {
    /// The context for odd `n > 1` of at most `52 * 8 * MAX_VECTORS - 2` bits, or `None` when
    /// the CPU lacks IFMA or `n` is out of range. For a public modulus: `R^2 mod n` comes from
    /// GMP's division, whose time depends on `n`'s value (see [`IfmaContext::new_secret`]).
    pub fn new(n: &Integer) -> Option<Self> {
        Self::with_r2(n, |r2, n| Some(r2 % n))
    }

    /// [`IfmaContext::new`] for a secret modulus (a CRT prime, `p t` of the fault check):
    /// `R^2 mod n` by [`crate::secret::mod_ct`], whose time depends only on the lengths (about
    /// 0.8 us more than the division at 1088 and 2048 bits), as GMP's `mpz_powm_sec` does for
    /// its own.
    pub fn new_secret(n: &Integer) -> Option<Self> {
        Self::with_r2(n, |r2, n| crate::secret::mod_ct(&r2, n).ok())
    }

    /// The context, with `R^2 mod n` from `reduce(R^2, n)`.
    fn with_r2(
        n: &Integer,
        reduce: impl FnOnce(Integer, &Integer) -> Option<Integer>,
    ) -> Option<Self> {
        if !available() || *n <= 1 || n.is_even() {
            return None;
        }
        let bits = n.significant_bits() as usize + 2; // 4 n < R
        let steps = bits.div_ceil(DIGIT_BITS as usize);
        // 8-lane vectors. Five 4-lane ones measured 3-4% faster for 17 to 20 steps (moduli of
        // 832 to 1038 bits, the halves of RSA-2048) until the squaring skipped whole vectors,
        // which favours the wider blocks: now three 8-lane vectors are 5-10% faster there.
        let vectors = steps.div_ceil(LANES);
        if vectors > MAX_VECTORS {
            return None;
        }
        let len = LANES * vectors;
        // -n^-1 mod 2^52 from the low limb (no branch on n: it may be a secret CRT prime).
        let k0 = super::inverse::inverse_mod_2_64(n.to_u64_wrapping()).wrapping_neg() & MASK;
        let r = Integer::from(1) << (DIGIT_BITS * steps as u32);
        let r2 = reduce(Integer::from(&r * &r), n)?;
        Some(Self {
            n: n.clone(),
            vectors,
            steps,
            n_digits: Zeroizing::new(to_digits(n, len)),
            k0,
            r2: Zeroizing::new(to_digits(&r2, len)),
        })
    }

    /// The modulus.
    pub fn modulus(&self) -> &Integer {
        &self.n
    }

    /// Lanes per vector (8) and the number of vectors.
    pub fn shape(&self) -> (usize, usize) {
        (LANES, self.vectors)
    }

    /// Digits per number as stored (lanes times vectors; those from [`Self::steps`] up are
    /// zero).
    pub fn digits(&self) -> usize {
        LANES * self.vectors
    }

    /// Digits of the Montgomery radix, `R = 2^(52 steps)`: the multiplication's sequential
    /// steps.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// `x R mod n` (almost reduced) in digits; `x` is reduced modulo `n` first.
    pub fn to_montgomery(&self, x: &Integer) -> Vec<u64> {
        let xd = Zeroizing::new(to_digits(
            &Integer::from(x.modulo_ref(&self.n)),
            self.digits(),
        ));
        let mut out = vec![0; self.digits()];
        self.mul(&mut out, &xd, &self.r2);
        out
    }

    /// `x R mod n` (almost reduced) for a secret `x` below `n`, with no branch or memory
    /// address that depends on it (no reduction by GMP first, as in [`Self::to_montgomery`]).
    pub(crate) fn to_montgomery_ct(&self, x: &Integer) -> Zeroizing<Vec<u64>> {
        let len = self.digits();
        let x = Zeroizing::new(to_digits(x, len));
        let mut out = Zeroizing::new(vec![0; len]);
        self.mul(&mut out, &x, &self.r2);
        out
    }

    /// `x R mod n` (almost reduced) for a secret `x` of any size and sign, reduced modulo `n`
    /// first by GMP's `mpn_sec_div_r` ([`crate::secret::mod_ct`]): the time and memory
    /// accesses depend on the lengths of `x` and `n` only (GMP's division, as in
    /// [`Self::to_montgomery`], on the values; `n` may be a secret prime).
    pub(crate) fn to_montgomery_secret(&self, x: &Integer) -> Zeroizing<Vec<u64>> {
        let n = Zeroizing::new(self.n.to_digits::<u64>(Order::Lsf));
        let r = crate::secret::residue_limbs_ct(x, &n, 0);
        let r = crate::secret::SecretInt::new(Integer::from_digits(&r, Order::Lsf));
        self.to_montgomery_ct(r.expose())
    }

    /// `x f R^-1 mod n`, fully reduced, for `x` below `n` and `f` in Montgomery form (so `x`
    /// times the value `f` stands for), with no branch or memory address that depends on
    /// either: one multiplication and a masked subtraction. The digit copies are wiped.
    pub(crate) fn mul_plain_ct(&self, x: &Integer, f: &[u64]) -> Integer {
        let len = self.digits();
        let x = Zeroizing::new(to_digits(x, len));
        let mut out = Zeroizing::new(vec![0; len]);
        self.mul(&mut out, &x, f);
        self.reduce_ct(&mut out)
    }

    /// The integer `a R^-1 mod n` (fully reduced) of a Montgomery-form value.
    pub fn from_montgomery(&self, a: &[u64]) -> Integer {
        let mut one = vec![0; self.digits()];
        one[0] = 1;
        let mut out = vec![0; self.digits()];
        self.mul(&mut out, a, &one);
        let v = from_digits(&out);
        if v >= self.n {
            v - &self.n
        } else {
            v
        }
    }

    /// `out = a b R^-1 mod n`, almost reduced (below `2 n`), for `a, b` below `2 n` in
    /// normalised digits. `out` may not alias the inputs.
    pub fn mul(&self, out: &mut [u64], a: &[u64], b: &[u64]) {
        Self::mul_multi::<1, false>([out], [a], [b], [self]);
    }

    /// The multiply-adds (8-lane IFMA instructions) one [`IfmaContext::square`] issues:
    /// `2 D V` for `m n` over the `D` steps of `V` vectors, and for `a a_i` twice the vectors
    /// from the one holding digit `i` up.
    pub fn square_multiply_adds(&self) -> usize {
        let product: usize = (0..self.steps)
            .map(|i| 2 * (self.vectors - i / LANES))
            .sum();
        2 * self.steps * self.vectors + product
    }

    /// `out = a^2 R^-1 mod n`, almost reduced, as [`IfmaContext::mul`] with `b = a` but with
    /// each cross product once, doubled (about a fifth fewer multiply-adds at 2048 bits).
    pub fn square(&self, out: &mut [u64], a: &[u64]) {
        Self::mul_multi::<1, true>([out], [a], [a], [self]);
    }

    /// `K` multiplications at once, the `c`-th modulo `ctx[c]`'s modulus (all of one shape):
    /// `out[c] = a[c] b[c] R^-1 mod n_c`, almost reduced, in one interleaved loop; squarings
    /// when `SQ` (then `b` must equal `a`).
    fn mul_multi<const K: usize, const SQ: bool>(
        out: [&mut [u64]; K],
        a: [&[u64]; K],
        b: [&[u64]; K],
        ctx: [&Self; K],
    ) {
        let (shape, steps) = (ctx[0].shape(), ctx[0].steps());
        let len = ctx[0].digits();
        for c in 0..K {
            assert!(ctx[c].shape() == shape && ctx[c].steps() == steps);
            assert!(a[c].len() == len && b[c].len() == len && out[c].len() == len);
        }
        let n = ctx.map(|c| c.n_digits.as_slice());
        let k0 = ctx.map(|c| c.k0);
        // SAFETY: the context exists only when the CPU has AVX-512F, VL and IFMA (checked in
        // `new`), and every slice holds exactly LANES * vectors digits (checked above).
        unsafe {
            match ctx[0].vectors {
                1 => amm::run::<1, K, SQ>(out, a, b, n, k0, steps),
                2 => amm::run::<2, K, SQ>(out, a, b, n, k0, steps),
                3 => amm::run::<3, K, SQ>(out, a, b, n, k0, steps),
                4 => amm::run::<4, K, SQ>(out, a, b, n, k0, steps),
                5 => amm::run::<5, K, SQ>(out, a, b, n, k0, steps),
                6 => amm::run::<6, K, SQ>(out, a, b, n, k0, steps),
                7 => amm::run::<7, K, SQ>(out, a, b, n, k0, steps),
                8 => amm::run::<8, K, SQ>(out, a, b, n, k0, steps),
                9 => amm::run::<9, K, SQ>(out, a, b, n, k0, steps),
                _ => amm::run::<10, K, SQ>(out, a, b, n, k0, steps),
            }
        }
    }

    /// `base^exp mod n` in time independent of `exp`'s value: fixed 5-bit windows over
    /// `exp_bits` bits (a public bound, at least `exp`'s length), each window a fixed run of
    /// squarings and one multiplication by a table entry fetched by a masked scan of the whole
    /// table (no branch and no memory address depends on the exponent), and a final reduction
    /// by a masked subtraction. The multiplication itself has no data-dependent branch or
    /// address. The table and the exponent's digits are wiped before returning.
    ///
    /// `exp` must be non-negative; `base`, of any size and sign, is reduced modulo `n` in
    /// constant time.
    pub fn pow_ct(&self, base: &Integer, exp: &Integer, exp_bits: u32) -> Integer {
        let [r] = Self::pow_ct_multi([self], [base], [exp], exp_bits);
        r
    }

    /// Two [`IfmaContext::pow_ct`]s, `base_c^exp_c mod n_c` for the moduli of `self` and
    /// `other` (the two halves of an RSA CRT exponentiation). Up to 40 digits per number
    /// (moduli up to 2078 bits: the halves of RSA keys up to 4096 bits) their multiplications
    /// are interleaved in one kernel call, which measured 1.21x faster than one after the other
    /// at 1024 bits, 1.15x at 1536 and 1.10x at 2048; above that the two sets of registers
    /// spill (0.55x at 3072) and they run one after the other. The work depends on `exp_bits`
    /// and the exponents' lengths where longer, never on their values. `None` when the two
    /// moduli do not have the same shape.
    pub fn pow_ct_pair(
        &self,
        other: &Self,
        base: [&Integer; 2],
        exp: [&Integer; 2],
        exp_bits: u32,
    ) -> Option<[Integer; 2]> {
        if self.shape() != other.shape() || self.steps != other.steps {
            return None;
        }
        Some(if self.digits() <= 40 {
            Self::pow_ct_multi([self, other], base, exp, exp_bits)
        } else {
            [
                self.pow_ct(base[0], exp[0], exp_bits),
                other.pow_ct(base[1], exp[1], exp_bits),
            ]
        })
    }

    /// `K` constant-time exponentiations in lockstep (see [`IfmaContext::pow_ct`]); every
    /// context has the same shape.
    fn pow_ct_multi<const K: usize>(
        ctx: [&Self; K],
        base: [&Integer; K],
        exp: [&Integer; K],
        exp_bits: u32,
    ) -> [Integer; K] {
        const W: usize = 5;
        const ENTRIES: usize = 1 << W;
        let len = ctx[0].digits();
        let bits = exp
            .iter()
            .fold(exp_bits, |b, e| b.max(e.significant_bits()))
            .max(1) as usize;
        let windows = bits.div_ceil(W);
        let limbs = (windows * W).div_ceil(64) + 1;
        let mut one = vec![0; len];
        one[0] = 1;
        let e: [Zeroizing<Vec<u64>>; K] = std::array::from_fn(|c| {
            let mut e = Zeroizing::new(exp[c].to_digits::<u64>(Order::Lsf));
            e.resize(limbs, 0);
            e
        });
        // table[0] = R mod n (Montgomery 1), table[1] = base R, table[i] = table[i-1] base.
        let mut table: [Zeroizing<Vec<u64>>; K] =
            std::array::from_fn(|_| Zeroizing::new(vec![0u64; ENTRIES * len]));
        let b: [Zeroizing<Vec<u64>>; K] =
            std::array::from_fn(|c| ctx[c].to_montgomery_secret(base[c]));
        for c in 0..K {
            ctx[c].mul(&mut table[c][..len], &one, &ctx[c].r2);
            table[c][len..2 * len].copy_from_slice(&b[c]);
        }
        for i in 2..ENTRIES {
            let both = table.each_mut().map(|t| {
                let (done, rest) = t.split_at_mut(i * len);
                (&mut rest[..len], &done[(i - 1) * len..])
            });
            let prev = both.each_ref().map(|(_, d)| *d);
            Self::mul_multi::<K, false>(
                both.map(|(o, _)| o),
                prev,
                b.each_ref().map(|v| v.as_slice()),
                ctx,
            );
        }
        let fresh = || Zeroizing::new(vec![0u64; len]);
        let mut acc: [_; K] = std::array::from_fn(|_| fresh());
        let mut tmp: [_; K] = std::array::from_fn(|_| fresh());
        let mut entry: [_; K] = std::array::from_fn(|_| fresh());
        let step = |acc: &mut [Zeroizing<Vec<u64>>; K],
                    tmp: &mut [Zeroizing<Vec<u64>>; K],
                    by: Option<&[Zeroizing<Vec<u64>>; K]>| {
            let outs = tmp.each_mut().map(|t| t.as_mut_slice());
            let ins: [&[u64]; K] = std::array::from_fn(|c| acc[c].as_slice());
            match by {
                Some(by) => {
                    let by: [&[u64]; K] = std::array::from_fn(|c| by[c].as_slice());
                    Self::mul_multi::<K, false>(outs, ins, by, ctx);
                }
                None => Self::mul_multi::<K, true>(outs, ins, ins, ctx),
            }
            std::mem::swap(acc, tmp);
        };
        for w in (0..windows).rev() {
            let pos = w * W;
            let (limb, shift) = (pos / 64, pos % 64);
            for c in 0..K {
                let mut digit = e[c][limb] >> shift;
                if shift > 64 - W {
                    digit |= e[c][limb + 1] << (64 - shift);
                }
                let digit = digit & (ENTRIES as u64 - 1);
                select(&table[c], len, digit, &mut entry[c]);
            }
            if w == windows - 1 {
                for c in 0..K {
                    acc[c].copy_from_slice(&entry[c]);
                }
                continue;
            }
            for _ in 0..W {
                step(&mut acc, &mut tmp, None);
            }
            step(&mut acc, &mut tmp, Some(&entry));
        }
        // Out of Montgomery form (a result at most n), then subtract n under a mask.
        std::array::from_fn(|c| {
            let mut out = fresh();
            ctx[c].mul(&mut out, &acc[c], &one);
            ctx[c].reduce_ct(&mut out)
        })
    }

    /// The integer of `x` (below `2 n`, normalised digits) reduced below `n` by a masked
    /// subtraction.
    fn reduce_ct(&self, x: &mut [u64]) -> Integer {
        let mut diff = Zeroizing::new(vec![0u64; x.len()]);
        let mut borrow = 0u64;
        for ((d, &t), &m) in diff.iter_mut().zip(x.iter()).zip(self.n_digits.iter()) {
            let v = t.wrapping_sub(m).wrapping_sub(borrow);
            *d = v & MASK;
            borrow = v >> 63;
        }
        // borrow = 1: x < n, keep it; else x - n.
        let keep = std::hint::black_box(borrow.wrapping_neg());
        for (t, &d) in x.iter_mut().zip(diff.iter()) {
            *t = (*t & keep) | (d & !keep);
        }
        from_digits(x)
    }

    /// `base^exp mod n` for a public `exp >= 0` (variable time: left-to-right binary, one
    /// squaring per bit and a multiplication per set bit), fully reduced; `base` is reduced
    /// modulo `n` first. For the short public exponents of RSA (17 bits for 65537) it is about
    /// twice as fast as GMP's `mpz_powm` at 2048 bits (RSA-2048 encryption 0.016 -> 0.008 ms).
    pub fn pow_vartime(&self, base: &Integer, exp: &Integer) -> Integer {
        if *exp <= 0 {
            return Integer::from(1);
        }
        let b = self.to_montgomery(base);
        let mut acc = b.clone();
        let mut tmp = vec![0; self.digits()];
        for i in (0..exp.significant_bits() - 1).rev() {
            self.square(&mut tmp, &acc);
            std::mem::swap(&mut acc, &mut tmp);
            if exp.get_bit(i) {
                self.mul(&mut tmp, &acc, &b);
                std::mem::swap(&mut acc, &mut tmp);
            }
        }
        self.from_montgomery(&acc)
    }

    /// `k` squarings in place (Montgomery form).
    pub fn square_in_place(&self, a: &mut Vec<u64>, k: u64) {
        let mut tmp = vec![0; self.digits()];
        for _ in 0..k {
            self.square(&mut tmp, a);
            std::mem::swap(a, &mut tmp);
        }
    }

    /// `x^(2^k) mod n` by `k` squarings.
    pub fn square_k_times(&self, x: &Integer, k: u64) -> Integer {
        let mut a = self.to_montgomery(x);
        self.square_in_place(&mut a, k);
        self.from_montgomery(&a)
    }
}

/// `out = table[index]` for a table of `len`-digit entries (`len` a multiple of 8, at most
/// `8 MAX_VECTORS`), reading every entry: the index picks a mask, never an address. Eight
/// digits at a time, all entries in turn, the entry being built in registers.
fn select(table: &[u64], len: usize, index: u64, out: &mut [u64]) {
    assert!(
        len.is_multiple_of(LANES)
            && len <= LANES * MAX_VECTORS
            && out.len() == len
            && table.len().is_multiple_of(len)
            && table.len() / len <= 64
    );
    // SAFETY: only called with a context, which exists only when the CPU has AVX-512F; the
    // lengths are checked above.
    unsafe {
        match len / LANES {
            1 => select_zmm::<1>(table, index, out),
            2 => select_zmm::<2>(table, index, out),
            3 => select_zmm::<3>(table, index, out),
            4 => select_zmm::<4>(table, index, out),
            5 => select_zmm::<5>(table, index, out),
            6 => select_zmm::<6>(table, index, out),
            7 => select_zmm::<7>(table, index, out),
            8 => select_zmm::<8>(table, index, out),
            9 => select_zmm::<9>(table, index, out),
            _ => select_zmm::<10>(table, index, out),
        }
    }
}

/// [`select`] for entries of `V` vectors.
///
/// # Safety
/// The CPU must support AVX-512F; `out` holds `8 V` digits and `table` whole entries of `8 V`
/// digits.
#[target_feature(enable = "avx512f")]
unsafe fn select_zmm<const V: usize>(table: &[u64], index: u64, out: &mut [u64]) {
    let len = LANES * V;
    let entries = table.len() / len;
    let mut acc = [_mm512_setzero_si512(); V];
    for e in 0..entries {
        // An all-ones or all-zero word, made opaque to the compiler: it must not turn the
        // selection into masked loads, which skip the memory of the entries not wanted (a
        // cache-timing leak of the index that tests/ct_timing.rs detects). One word per entry:
        // a whole array of masks made opaque went through memory (4 KiB set and copied per
        // scan, 7% of an RSA-2048 decryption).
        let x = e as u64 ^ index;
        let m = _mm512_set1_epi64(std::hint::black_box(
            ((x | x.wrapping_neg()) >> 63).wrapping_sub(1) as i64,
        ));
        for (v, a) in acc.iter_mut().enumerate() {
            // SAFETY: entry `e` holds `len` digits, and 8 v + 8 <= len.
            let t = unsafe { _mm512_loadu_si512(table.as_ptr().add(e * len + LANES * v).cast()) };
            *a = _mm512_or_si512(*a, _mm512_and_si512(t, m));
        }
    }
    for (v, a) in acc.iter().enumerate() {
        // SAFETY: 8 v + 8 <= len = out.len() (the caller's contract).
        unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(LANES * v).cast(), *a) };
    }
}

/// The lanes that receive a carry, as a bit mask (bit `l` for lane `l`), when the lanes in
/// `generate` carry out (they exceed 2^52 - 1 by at most 2^12) and those in `propagate` equal
/// 2^52 - 1 (they carry out exactly when a carry comes in): one integer addition does the
/// lookahead, with no branch on the values. The two masks are disjoint.
fn carries_in(generate: u128, propagate: u128) -> u128 {
    ((generate << 1).wrapping_add(propagate)) ^ propagate
}

/// Which digits of `a` a step multiplies by `b_i` (a squaring's step `i` reads only the vectors
/// from the one holding digit `i` up: see [`amm_kernel`]).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operand {
    /// No product: these digits' products with `b_i` were added doubled by an earlier step.
    Skip,
    /// The digits of `a`.
    Plain,
    /// The digits of `2 a`, with lane 0's bit 0 (the top bit of the vector below) cleared.
    DoubledFirst,
    /// The digits of `2 a`.
    Doubled,
}

/// The operand of vector `j` in a step of block `block` (the steps whose digit `b_i` lies in
/// vector `block`): all of `a` in a multiplication; in a squaring the block's own vector plain
/// (its products with the block's digits are made from both sides), the vectors above doubled
/// from the block's top (`2 (a >> 52 LANES (block + 1))`, so the first of them without the bit
/// from below), and the vectors below skipped.
const fn operand(square: bool, j: usize, block: usize) -> Operand {
    if !square || j == block {
        Operand::Plain
    } else if j < block {
        Operand::Skip
    } else if j == block + 1 {
        Operand::DoubledFirst
    } else {
        Operand::Doubled
    }
}

/// Generates `K` independent almost-Montgomery multiplications interleaved in one loop (one per
/// modulus of the same shape; `K = 2` for the two halves of an RSA CRT exponentiation), for a
/// vector width (8 lanes in zmm registers), as a module with the
/// kernel `run`.
///
/// The step's state `r` is one accumulator per product (so only one shift per vector), kept
/// with the step's `lo(a b_i)` already added. A step is then `r = shift(r + lo(n m)) + g`,
/// where `g = hi(a b_i) + hi(n m) + lo(a b_{i+1})` is built beside the state's chain, so the
/// chain is one multiply-add, one shift and one addition. The true lane 0, which decides `m`,
/// is kept in a scalar register: the next one is the carry and high halves out of lane 0 plus
/// lane 1 of the state (read at the start of the step, a step behind the vectors) plus
/// `lo(n_1 m)`, and the carry out of lane 0's low 52 bits is known before `m` (the sum is
/// divisible by 2^52, so it carries exactly when `lo(acc + a_0 b_i)` is not zero). The
/// operands `a` and `n` are read from memory by the multiply-adds. The result is normalised to
/// 52-bit digits by vector operations: carries shifted up one lane, then the rare second carry
/// propagated by an integer addition over lane masks, as in a carry-lookahead adder.
///
/// A squaring (`b = a`) adds each cross product `a_i a_j` once, doubled: the steps of block `v`
/// (digits `b_i` in vector `v`) multiply vector `v` of `a` and the vectors of `2 a` above it, and
/// skip the vectors below (see [`operand`]). That saves the multiply-adds of the vectors below,
/// about half of those of `a b_i`, for two vector operations per vector to double `a` once.
/// Which vectors a step reads depends only on `i`, never on the values.
macro_rules! amm_kernel {
    ($name:ident, $lanes:expr, $features:literal, $vec:ty, $zero:ident, $load:ident,
     $store:ident, $set1:ident, $lo:ident, $hi:ident, $align:ident, $add:ident, $and:ident,
     $or:ident, $slli:ident, $srli:ident, $low128:ident, $blend:ident, $cmpgt:ident,
     $cmpeq:ident, $mask_add:ident) => {
        mod $name {
            use super::*;

            const LANES: usize = $lanes;

            /// What a step changes: the accumulators, the true lane 0 of each, and (in the split
            /// chain) the broadcast of this step's digit of `b`.
            struct State<const V: usize, const K: usize> {
                r: [[$vec; V]; K],
                acc: [u64; K],
                bv: [$vec; K],
            }

            /// The operands, as pointers to `LANES V` digits each: `a`, `b`, `n`, and (in a
            /// squaring) `2 a` and `2 a` with each vector's lane-0 bit 0 cleared.
            struct Operands<const K: usize> {
                a: [*const u64; K],
                b: [*const u64; K],
                n: [*const u64; K],
                doubled: [*const u64; K],
                doubled_first: [*const u64; K],
                k0: [u64; K],
                steps: usize,
            }

            /// The `j`-th vector of `p`.
            ///
            /// # Safety
            /// `p` holds at least `LANES (j + 1)` digits.
            #[target_feature(enable = $features)]
            #[inline]
            unsafe fn load(p: *const u64, j: usize) -> $vec {
                // SAFETY: the caller's contract; unaligned load.
                unsafe { $load(p.add(LANES * j).cast()) }
            }

            impl<const K: usize> Operands<K> {
                /// The digits that vector `j` of product `c` multiplies in a step of `block`,
                /// or `None` when skipped.
                #[inline(always)]
                fn operand(
                    &self,
                    square: bool,
                    c: usize,
                    j: usize,
                    block: usize,
                ) -> Option<*const u64> {
                    match operand(square, j, block) {
                        Operand::Skip => None,
                        Operand::Plain => Some(self.a[c]),
                        Operand::DoubledFirst => Some(self.doubled_first[c]),
                        Operand::Doubled => Some(self.doubled[c]),
                    }
                }

                /// Digit `i` of `b` for product `c` (zero from `steps` up).
                #[inline(always)]
                fn b(&self, c: usize, i: usize) -> u64 {
                    if i < self.steps {
                        // SAFETY: `b` holds at least `steps` digits (the kernel's contract).
                        unsafe { *self.b[c].add(i) }
                    } else {
                        0
                    }
                }
            }

            /// Step `i` of the split chain (one product, or two of up to three vectors), in block
            /// `B` (`LAST`: the last step
            /// of its block, whose next step is in block `B + 1`).
            ///
            /// # Safety
            /// As for [`run`].
            #[target_feature(enable = $features)]
            #[inline]
            unsafe fn split_step<
                const V: usize,
                const K: usize,
                const SQ: bool,
                const B: usize,
                const LAST: bool,
            >(
                s: &mut State<V, K>,
                o: &Operands<K>,
                i: usize,
            ) {
                let zero: $vec = $zero();
                let next_block = if LAST { B + 1 } else { B };
                let mut next = [zero; K];
                let mut mv = [zero; K];
                for c in 0..K {
                    let bi = o.b(c, i);
                    // SAFETY: every operand holds LANES V >= 2 digits.
                    let (a0, n0, n1) = unsafe {
                        let a0 = match o.operand(SQ, c, 0, B) {
                            Some(p) => *p,
                            None => 0,
                        };
                        (a0, *o.n[c], *o.n[c].add(1))
                    };
                    let lane1 = _mm_extract_epi64::<1>($low128(s.r[c][0])) as u64;
                    let x = u128::from(s.acc[c]) + u128::from(a0) * u128::from(bi);
                    let m = (x as u64).wrapping_mul(o.k0[c]) & MASK;
                    let y = u128::from(n0) * u128::from(m);
                    // x + y is divisible by 2^52, so the carry out of the low 52 bits of the
                    // sum is 1 exactly when x's low 52 bits are not zero: known before m.
                    let carry = u64::from(x as u64 & MASK != 0);
                    let early = ((x >> DIGIT_BITS) as u64)
                        .wrapping_add(carry)
                        .wrapping_add(lane1);
                    // Lane 0 after the shift: the carry and high halves out of lane 0, plus lane 1
                    // (which holds lo(a_1 b_i) already) and lo(n_1 m).
                    s.acc[c] = early
                        .wrapping_add((y >> DIGIT_BITS) as u64)
                        .wrapping_add(n1.wrapping_mul(m) & MASK);
                    next[c] = $set1(o.b(c, i + 1) as i64);
                    mv[c] = $set1(m as i64);
                }
                for c in 0..K {
                    for j in 0..V {
                        // SAFETY: j + 1 < V where vector j + 1 is read; every operand holds
                        // LANES V digits.
                        unsafe {
                            // What goes in after the shift, off the state's chain: hi(a b_i) +
                            // hi(n m) + the next step's lo(a b_{i+1}).
                            let mut u = zero;
                            if let Some(p) = o.operand(SQ, c, j, B) {
                                u = $hi(u, load(p, j), s.bv[c]);
                            }
                            if let Some(p) = o.operand(SQ, c, j, next_block) {
                                u = $lo(u, load(p, j), next[c]);
                            }
                            let g = $hi(u, load(o.n[c], j), mv[c]);
                            let q = $lo(s.r[c][j], load(o.n[c], j), mv[c]);
                            let above = if j + 1 < V {
                                $lo(s.r[c][j + 1], load(o.n[c], j + 1), mv[c])
                            } else {
                                zero
                            };
                            s.r[c][j] = $add($align::<1>(above, q), g);
                        }
                    }
                }
                s.bv = next;
            }

            /// Step `i` in the plain order (two or more products of four or more vectors, or one
            /// of nine or ten), in block `B`.
            ///
            /// # Safety
            /// As for [`run`].
            #[target_feature(enable = $features)]
            #[inline]
            unsafe fn plain_step<const V: usize, const K: usize, const SQ: bool, const B: usize>(
                s: &mut State<V, K>,
                o: &Operands<K>,
                i: usize,
            ) {
                let zero: $vec = $zero();
                let mut bv = [zero; K];
                let mut mv = [zero; K];
                for c in 0..K {
                    let bi = o.b(c, i);
                    // SAFETY: every operand holds LANES V >= 1 digits.
                    let (a0, n0) = unsafe {
                        let a0 = match o.operand(SQ, c, 0, B) {
                            Some(p) => *p,
                            None => 0,
                        };
                        (a0, *o.n[c])
                    };
                    let t = u128::from(s.acc[c]) + u128::from(a0) * u128::from(bi);
                    let m = (t as u64).wrapping_mul(o.k0[c]) & MASK;
                    let t = t + u128::from(n0) * u128::from(m);
                    s.acc[c] = (t >> DIGIT_BITS) as u64;
                    bv[c] = $set1(bi as i64);
                    mv[c] = $set1(m as i64);
                }
                // SAFETY: every operand holds LANES V digits.
                unsafe {
                    for c in 0..K {
                        for j in 0..V {
                            if let Some(p) = o.operand(SQ, c, j, B) {
                                s.r[c][j] = $lo(s.r[c][j], load(p, j), bv[c]);
                            }
                        }
                        for j in 0..V {
                            s.r[c][j] = $lo(s.r[c][j], load(o.n[c], j), mv[c]);
                        }
                    }
                    for c in 0..K {
                        // Every digit down one place; lane 0's value is in `acc` already.
                        for j in 0..V {
                            let next = if j + 1 < V { s.r[c][j + 1] } else { zero };
                            s.r[c][j] = $align::<1>(next, s.r[c][j]);
                        }
                        s.acc[c] =
                            s.acc[c].wrapping_add(_mm_cvtsi128_si64($low128(s.r[c][0])) as u64);
                    }
                    for c in 0..K {
                        for j in 0..V {
                            if let Some(p) = o.operand(SQ, c, j, B) {
                                s.r[c][j] = $hi(s.r[c][j], load(p, j), bv[c]);
                            }
                        }
                        for j in 0..V {
                            s.r[c][j] = $hi(s.r[c][j], load(o.n[c], j), mv[c]);
                        }
                    }
                }
            }

            /// The steps of block `B` (digits `LANES B` up to the block's end or `steps`).
            ///
            /// # Safety
            /// As for [`run`].
            #[target_feature(enable = $features)]
            #[inline]
            unsafe fn block<const V: usize, const K: usize, const SQ: bool, const B: usize>(
                s: &mut State<V, K>,
                o: &Operands<K>,
                split: bool,
                range: std::ops::Range<usize>,
            ) {
                let last = range.end - 1;
                for i in range {
                    // SAFETY: the caller's contract.
                    unsafe {
                        match (split, i == last) {
                            (true, false) => split_step::<V, K, SQ, B, false>(s, o, i),
                            (true, true) => split_step::<V, K, SQ, B, true>(s, o, i),
                            (false, _) => plain_step::<V, K, SQ, B>(s, o, i),
                        }
                    }
                }
            }

            /// `K` almost-Montgomery multiplications with `V` vectors each (squarings when
            /// `SQ`: then `b` must equal `a`).
            ///
            /// # Safety
            /// The CPU must support the target features, and every slice must hold `LANES V`
            /// digits.
            #[target_feature(enable = $features)]
            pub(super) unsafe fn run<const V: usize, const K: usize, const SQ: bool>(
                out: [&mut [u64]; K],
                a: [&[u64]; K],
                b: [&[u64]; K],
                n: [&[u64]; K],
                k0: [u64; K],
                steps: usize,
            ) {
                // Pairs of up to three vectors (the halves of RSA-1024 and RSA-2048) square by
                // the multiplication: the squaring's saved multiply-adds do not pay for doubling
                // `a` there (RSA-2048 decryption 2% faster, RSA-1024 4-5%, alternated runs).
                if SQ && K == 2 && V <= 3 {
                    // SAFETY: the caller's contract (and `b` equals `a`).
                    return unsafe { run::<V, K, false>(out, a, b, n, k0, steps) };
                }
                let zero: $vec = $zero();
                let mask = $set1(MASK as i64);
                // 2 a, and 2 a with each vector's lowest bit (the top bit of the vector below)
                // cleared, for a squaring; kept in memory, read by the multiply-adds.
                let mut doubled = [[zero; V]; K];
                let mut doubled_first = [[zero; V]; K];
                if SQ {
                    let clear_low = $blend(1, $set1(-1), $set1(!1));
                    for c in 0..K {
                        let mut below = zero;
                        for j in 0..V {
                            // SAFETY: `a[c]` holds LANES V digits (the caller's contract).
                            let x = unsafe { load(a[c].as_ptr(), j) };
                            let from_below = $srli::<51>($align::<{ LANES as i32 - 1 }>(x, below));
                            doubled[c][j] = $or($and($slli::<1>(x), mask), from_below);
                            doubled_first[c][j] = $and(doubled[c][j], clear_low);
                            below = x;
                        }
                    }
                }
                let o = Operands {
                    a: a.map(<[u64]>::as_ptr),
                    b: b.map(<[u64]>::as_ptr),
                    n: n.map(<[u64]>::as_ptr),
                    doubled: std::array::from_fn(|c| doubled[c].as_ptr().cast()),
                    doubled_first: std::array::from_fn(|c| doubled_first[c].as_ptr().cast()),
                    k0,
                    steps,
                };
                let mut s = State {
                    r: [[zero; V]; K],
                    acc: [0u64; K],
                    bv: [zero; K],
                };
                // One product: the split chain, except for 9 or 10 8-lane vectors, whose extra
                // live vectors spill (4096-bit squarings measured 17% faster in the plain
                // order). Two products of up to 3 vectors (moduli up to 1246 bits, the halves
                // of RSA-2048) too: RSA-2048 decryption measured 2-3% faster, exponentiation
                // pairs up to 7% at 520-768 bits. From 4 vectors (1536-bit halves) the two
                // products hide each other's latency and the plain order (low halves, shift,
                // high halves) wins by issuing fewer instructions (5% at 1536 bits).
                let split = (K == 1 && V <= 8) || (K == 2 && V <= 3);
                if split {
                    // The state starts with step 0's lo(a b_0).
                    for c in 0..K {
                        s.bv[c] = $set1(b[c][0] as i64);
                        for j in 0..V {
                            if let Some(p) = o.operand(SQ, c, j, 0) {
                                // SAFETY: every operand holds LANES V digits.
                                s.r[c][j] = $lo(zero, unsafe { load(p, j) }, s.bv[c]);
                            }
                        }
                    }
                }
                // A multiplication is one block; a squaring's blocks follow the vectors.
                let blocks = if SQ { steps.div_ceil(LANES) } else { 1 };
                for v in 0..blocks {
                    let range = if SQ {
                        LANES * v..steps.min(LANES * (v + 1))
                    } else {
                        0..steps
                    };
                    // SAFETY: the caller's contract; `v < V`.
                    unsafe {
                        match v {
                            0 => block::<V, K, SQ, 0>(&mut s, &o, split, range),
                            1 => block::<V, K, SQ, 1>(&mut s, &o, split, range),
                            2 => block::<V, K, SQ, 2>(&mut s, &o, split, range),
                            3 => block::<V, K, SQ, 3>(&mut s, &o, split, range),
                            4 => block::<V, K, SQ, 4>(&mut s, &o, split, range),
                            5 => block::<V, K, SQ, 5>(&mut s, &o, split, range),
                            6 => block::<V, K, SQ, 6>(&mut s, &o, split, range),
                            7 => block::<V, K, SQ, 7>(&mut s, &o, split, range),
                            8 => block::<V, K, SQ, 8>(&mut s, &o, split, range),
                            _ => block::<V, K, SQ, 9>(&mut s, &o, split, range),
                        }
                    }
                }
                // Normalise: lane 0 is the scalar one; each lane keeps its low 52 bits and
                // takes the high bits of the lane below; a lane can then exceed 2^52 - 1 by at
                // most 2^12, so one more carry per lane is left, propagated through lanes equal
                // to 2^52 - 1 by adding lane masks as integers.
                for (c, out) in out.into_iter().enumerate() {
                    let mut x = s.r[c];
                    x[0] = $blend(1, x[0], $set1(s.acc[c] as i64));
                    let mut high = [zero; V];
                    for j in 0..V {
                        high[j] = $srli::<52>(x[j]);
                    }
                    let mut generate = 0u128;
                    let mut propagate = 0u128;
                    for j in 0..V {
                        let below = if j == 0 { zero } else { high[j - 1] };
                        x[j] = $add(
                            $and(x[j], mask),
                            $align::<{ LANES as i32 - 1 }>(high[j], below),
                        );
                        generate |= u128::from($cmpgt(x[j], mask)) << (LANES * j);
                        propagate |= u128::from($cmpeq(x[j], mask)) << (LANES * j);
                    }
                    let carry_in = carries_in(generate, propagate);
                    let one = $set1(1);
                    for j in 0..V {
                        let k = (carry_in >> (LANES * j)) as u8 & ((1u16 << LANES) - 1) as u8;
                        x[j] = $and($mask_add(x[j], k, x[j], one), mask);
                        // SAFETY: `out` holds LANES V digits (the caller's contract).
                        unsafe { $store(out.as_mut_ptr().add(LANES * j).cast(), x[j]) };
                    }
                }
            }
        }
    };
}

amm_kernel!(
    amm,
    8,
    "avx512f,avx512ifma",
    __m512i,
    _mm512_setzero_si512,
    _mm512_loadu_si512,
    _mm512_storeu_si512,
    _mm512_set1_epi64,
    _mm512_madd52lo_epu64,
    _mm512_madd52hi_epu64,
    _mm512_alignr_epi64,
    _mm512_add_epi64,
    _mm512_and_si512,
    _mm512_or_si512,
    _mm512_slli_epi64,
    _mm512_srli_epi64,
    _mm512_castsi512_si128,
    _mm512_mask_blend_epi64,
    _mm512_cmpgt_epu64_mask,
    _mm512_cmpeq_epu64_mask,
    _mm512_mask_add_epi64
);

#[cfg(test)]
mod tests {
    use super::*;

    fn moduli() -> Vec<Integer> {
        let mut out = Vec::new();
        for bits in [64u32, 200, 412, 413, 1024, 2048, 3072, 4096, 4150] {
            let base = (Integer::from(1) << (bits - 1)) + 0x1234_5677u32;
            out.push(base | 1u32);
            out.push((Integer::from(1) << bits) - 1u32); // all ones
            out.push((Integer::from(1) << (bits - 1)) + 1u32); // sparse
        }
        out
    }

    #[test]
    fn constant_time_exponentiation_matches_gmp() {
        if !available() {
            eprintln!("skipped: no AVX-512 IFMA on this CPU");
            return;
        }
        let mut rng = crate::entropy::SeededEntropy::new(b"pow_ct");
        for bits in [520u32, 1024, 1536, 2048, 3072, 4096] {
            let n = crate::entropy::random_exact_bits(&mut rng, bits).unwrap() | 1u32;
            let ctx = IfmaContext::new(&n).unwrap();
            let exps = [
                Integer::from(1),
                Integer::from(2),
                Integer::from(31),
                Integer::from(32),
                (Integer::from(1) << bits) - 1u32,
                Integer::from(1) << (bits - 1),
                crate::entropy::random_bits(&mut rng, bits).unwrap(),
            ];
            for e in &exps {
                for x in [
                    Integer::from(0),
                    Integer::from(1),
                    Integer::from(&n - 1u32),
                    crate::entropy::random_below(&mut rng, &n).unwrap(),
                    Integer::from(&n + 5u32),
                ] {
                    let expect = x.clone().pow_mod(e, &n).unwrap();
                    assert_eq!(ctx.pow_ct(&x, e, bits), expect, "{bits} bits");
                }
            }
            // The bound is a floor: a longer exponent is still done whole.
            let e = crate::entropy::random_bits(&mut rng, bits + 40).unwrap();
            let x = Integer::from(7);
            assert_eq!(ctx.pow_ct(&x, &e, 16), x.clone().pow_mod(&e, &n).unwrap());
            assert_eq!(ctx.pow_ct(&x, &Integer::ZERO, bits), 1);
        }
    }

    #[test]
    fn paired_exponentiations_match_gmp() {
        if !available() {
            eprintln!("skipped: no AVX-512 IFMA on this CPU");
            return;
        }
        let mut rng = crate::entropy::SeededEntropy::new(b"pow_ct_pair");
        for bits in [512u32, 520, 1024, 1536, 2048] {
            let p = crate::entropy::random_exact_bits(&mut rng, bits).unwrap() | 1u32;
            let q = crate::entropy::random_exact_bits(&mut rng, bits).unwrap() | 1u32;
            let (cp, cq) = (IfmaContext::new(&p).unwrap(), IfmaContext::new(&q).unwrap());
            for _ in 0..3 {
                let ep = crate::entropy::random_bits(&mut rng, bits).unwrap();
                let eq = crate::entropy::random_bits(&mut rng, bits - 7).unwrap();
                let xp = crate::entropy::random_below(&mut rng, &p).unwrap();
                let xq = Integer::from(&q + 12345u32);
                let [rp, rq] = cp.pow_ct_pair(&cq, [&xp, &xq], [&ep, &eq], bits).unwrap();
                assert_eq!(rp, xp.clone().pow_mod(&ep, &p).unwrap(), "{bits} bits");
                assert_eq!(rq, xq.clone().pow_mod(&eq, &q).unwrap(), "{bits} bits");
            }
        }
        // Different shapes do not pair.
        let small = IfmaContext::new(&((Integer::from(1) << 1023u32) + 1u32)).unwrap();
        let large = IfmaContext::new(&((Integer::from(1) << 2047u32) + 1u32)).unwrap();
        let one = Integer::from(1);
        assert!(small
            .pow_ct_pair(&large, [&one, &one], [&one, &one], 8)
            .is_none());
    }

    #[test]
    fn almost_reduced_inputs_give_almost_reduced_products() {
        if !available() {
            eprintln!("skipped: no AVX-512 IFMA on this CPU");
            return;
        }
        let mut rng = crate::entropy::SeededEntropy::new(b"almost reduced");
        for round in 0..400u32 {
            let bits = 513 + (round * 37) % 3640;
            let n = crate::entropy::random_exact_bits(&mut rng, bits).unwrap() | 1u32;
            let (ctx, other) = (IfmaContext::new(&n).unwrap(), IfmaContext::new(&n).unwrap());
            let two_n = Integer::from(&n << 1u32);
            let r_inv = (Integer::from(1) << (52 * ctx.steps() as u32))
                .invert(&n)
                .unwrap();
            let pick = |rng: &mut crate::entropy::SeededEntropy, i: u32| match i % 4 {
                0 => Integer::from(&two_n - 1u32),
                1 => Integer::from(&n + 1u32),
                _ => crate::entropy::random_below(rng, &two_n).unwrap(),
            };
            let (a, b) = (pick(&mut rng, round), pick(&mut rng, round / 4));
            let (ad, bd) = (to_digits(&a, ctx.digits()), to_digits(&b, ctx.digits()));
            let expect = Integer::from(&a * &b) * &r_inv % &n;
            let mut out = vec![0; ctx.digits()];
            ctx.mul(&mut out, &ad, &bd);
            let got = from_digits(&out);
            assert!(
                got < two_n && Integer::from(&got % &n) == expect,
                "{bits} bits"
            );
            // The lanes above the radix's digits stay zero (the next product reads them).
            assert!(out[ctx.steps()..].iter().all(|&d| d == 0), "{bits} bits");
            assert!(ctx.steps() <= ctx.digits() && ctx.steps() + 8 > ctx.digits());
            // Two at once (the interleaved kernel) agree with one at a time.
            let (mut o1, mut o2) = (vec![0; ctx.digits()], vec![0; ctx.digits()]);
            IfmaContext::mul_multi::<2, false>(
                [&mut o1, &mut o2],
                [&ad, &bd],
                [&bd, &bd],
                [&ctx, &other],
            );
            assert_eq!(o1, out);
            let mut sq = vec![0; ctx.digits()];
            ctx.mul(&mut sq, &bd, &bd);
            assert_eq!(o2, sq);
            // The squaring (each cross product once, doubled) gives the same digits as the
            // multiplication, alone and two at once.
            let mut sq2 = vec![0; ctx.digits()];
            ctx.square(&mut sq2, &bd);
            assert_eq!(sq2, sq, "{bits} bits");
            let mut sa = vec![0; ctx.digits()];
            ctx.mul(&mut sa, &ad, &ad);
            let (mut s1, mut s2) = (vec![0; ctx.digits()], vec![0; ctx.digits()]);
            IfmaContext::mul_multi::<2, true>(
                [&mut s1, &mut s2],
                [&ad, &bd],
                [&ad, &bd],
                [&ctx, &other],
            );
            assert_eq!((s1, s2), (sa, sq), "{bits} bits");
        }
    }

    #[test]
    fn carry_lookahead_matches_a_lane_by_lane_ripple() {
        let mut rng = crate::entropy::SeededEntropy::new(b"carries");
        let mut word = || {
            let mut b = [0u8; 16];
            crate::entropy::EntropySource::fill(&mut rng, &mut b).unwrap();
            u128::from_le_bytes(b)
        };
        for round in 0..20000 {
            // Sparse and dense patterns, long runs of lanes equal to 2^52 - 1 included.
            let (x, y) = (word(), word());
            let generate = if round % 3 == 0 {
                x & y & word()
            } else {
                x & !y
            };
            let mut propagate = if round % 2 == 0 { y } else { !x | y };
            propagate &= !generate;
            let mut expect = 0u128;
            let mut carry = false;
            for lane in 0..128 {
                if carry {
                    expect |= 1 << lane;
                }
                let g = generate >> lane & 1 == 1;
                let p = propagate >> lane & 1 == 1;
                carry = g || (p && carry);
            }
            assert_eq!(
                carries_in(generate, propagate),
                expect,
                "{generate:x} {propagate:x}"
            );
        }
    }

    #[test]
    fn the_table_scan_picks_the_entry() {
        if !available() {
            eprintln!("skipped: no AVX-512 IFMA on this CPU");
            return;
        }
        for len in [8usize, 24, 40, 80] {
            let table: Vec<u64> = (0..32 * len as u64).collect();
            let mut out = vec![0; len];
            for i in 0..32u64 {
                select(&table, len, i, &mut out);
                let expect: Vec<u64> = (0..len as u64).map(|d| len as u64 * i + d).collect();
                assert_eq!(out, expect);
            }
        }
    }

    #[test]
    fn debug_shows_the_shape_not_the_modulus() {
        let Some(ctx) = IfmaContext::new(&moduli()[12]) else {
            eprintln!("skipped: no AVX-512 IFMA on this CPU");
            return;
        };
        let shown = format!("{ctx:?}");
        assert!(shown.contains("bits: 1024"), "{shown}");
        assert!(!shown.contains(&ctx.modulus().to_string()[..20]), "{shown}");
        assert!(
            !shown.contains(&ctx.modulus().to_string_radix(16)[..20]),
            "{shown}"
        );
    }

    #[test]
    fn a_secret_modulus_gets_the_same_context() {
        if !available() {
            eprintln!("skipped: no AVX-512 IFMA on this CPU");
            return;
        }
        for n in moduli() {
            let (public, secret) = (
                IfmaContext::new(&n).unwrap(),
                IfmaContext::new_secret(&n).unwrap(),
            );
            assert_eq!(*public.r2, *secret.r2);
            assert_eq!(*public.n_digits, *secret.n_digits);
            assert_eq!((public.k0, public.steps), (secret.k0, secret.steps));
        }
    }

    #[test]
    fn digits_round_trip() {
        let x = (Integer::from(1) << 2047u32) - 12345u32;
        assert_eq!(from_digits(&to_digits(&x, 40)), x);
    }

    #[test]
    fn multiplication_and_squaring_match_gmp() {
        if !available() {
            eprintln!("skipped: no AVX-512 IFMA on this CPU");
            return;
        }
        for n in moduli() {
            let ctx = IfmaContext::new(&n).unwrap();
            let samples = [
                Integer::ZERO,
                Integer::from(1),
                Integer::from(&n - 1u32),
                Integer::from(&n >> 1u32),
                Integer::from(&n / 3u32),
                Integer::from(&n - 2u32),
            ];
            for a in &samples {
                for b in &samples {
                    let am = ctx.to_montgomery(a);
                    let bm = ctx.to_montgomery(b);
                    let mut out = vec![0; ctx.digits()];
                    ctx.mul(&mut out, &am, &bm);
                    let expect = Integer::from(a * b) % &n;
                    assert_eq!(
                        ctx.from_montgomery(&out),
                        expect,
                        "n {} bits",
                        n.significant_bits()
                    );
                }
                let expect = a
                    .clone()
                    .pow_mod(&(Integer::from(1) << 1000u32), &n)
                    .unwrap();
                assert_eq!(ctx.square_k_times(a, 1000), expect);
            }
        }
    }
}

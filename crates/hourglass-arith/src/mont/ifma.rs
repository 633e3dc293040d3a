//! Montgomery multiplication with AVX-512 IFMA in radix 2^52 (x86-64 only).
//!
//! IFMA's `vpmadd52luq` / `vpmadd52huq` add the low or high 52 bits of eight 52 x 52-bit
//! products to eight 64-bit accumulators at once. Numbers are held as `L` digits of 52 bits in
//! `V` vectors of eight lanes (zmm), or of four (ymm) when that needs fewer digits (20 instead
//! of 24 at 1024 bits: each digit is one sequential step), so `R = 2^(52 L)` with `4 n < R`.
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
//! Everything here is variable-time with respect to values only through the final
//! normalisation's carry loop; use it for public data (squaring chains, VDF proofs and
//! verification), like the other kernels.

use std::arch::x86_64::*;

use rug::integer::Order;
use rug::Integer;

const DIGIT_BITS: u32 = 52;
const MASK: u64 = (1 << DIGIT_BITS) - 1;
/// Largest number of 8-digit vectors supported (80 digits: moduli up to 4158 bits).
pub const MAX_VECTORS: usize = 10;

/// Whether this CPU has AVX-512F and AVX-512 IFMA.
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
        && std::arch::is_x86_feature_detected!("avx512ifma")
}

/// Radix-2^52 Montgomery arithmetic modulo one odd `n`.
#[derive(Clone, Debug)]
pub struct IfmaContext {
    n: Integer,
    /// Lanes per vector: 8 (zmm) or 4 (ymm, when that needs fewer digits).
    lanes: usize,
    vectors: usize,
    /// `n` in `L` digits.
    n_digits: Vec<u64>,
    /// `-n^-1 mod 2^52`.
    k0: u64,
    /// `R^2 mod n` in digits.
    r2: Vec<u64>,
}

/// `x` (non-negative, below `2^(52 len)`) as `len` little-endian 52-bit digits.
fn to_digits(x: &Integer, len: usize) -> Vec<u64> {
    let limbs = x.to_digits::<u64>(Order::Lsf);
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
    let mut limbs = vec![0u64; (d.len() * DIGIT_BITS as usize).div_ceil(64) + 1];
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
    /// the CPU lacks IFMA or `n` is out of range.
    pub fn new(n: &Integer) -> Option<Self> {
        if !available() || *n <= 1 || n.is_even() {
            return None;
        }
        let bits = n.significant_bits() as usize + 2; // 4 n < R
        let digits = bits.div_ceil(DIGIT_BITS as usize);
        // Each digit is one sequential step: 4-lane vectors when they need fewer steps than
        // 8-lane ones (20 instead of 24 at 1024 bits), for up to 8 vectors.
        let (lanes, vectors) = if digits.div_ceil(4) * 4 < digits.div_ceil(8) * 8 && digits <= 32 {
            (4, digits.div_ceil(4))
        } else {
            (8, digits.div_ceil(8))
        };
        if lanes == 8 && vectors > MAX_VECTORS {
            return None;
        }
        let len = lanes * vectors;
        // -n^-1 mod 2^52 by Newton's iteration on the low limb (no branch on n: the modulus may
        // be a secret prime of a CRT half).
        let n0 = n.to_u64_wrapping();
        let mut inv = n0; // correct to 3 bits for odd n0
        for _ in 0..5 {
            inv = inv.wrapping_mul(2u64.wrapping_sub(n0.wrapping_mul(inv)));
        }
        let k0 = inv.wrapping_neg() & MASK;
        let r = Integer::from(1) << (DIGIT_BITS * len as u32);
        let r2 = Integer::from(&r * &r) % n;
        Some(Self {
            n: n.clone(),
            lanes,
            vectors,
            n_digits: to_digits(n, len),
            k0,
            r2: to_digits(&r2, len),
        })
    }

    /// The modulus.
    pub fn modulus(&self) -> &Integer {
        &self.n
    }

    /// Lanes per vector (8, or 4 when that needs fewer digits) and the number of vectors.
    pub fn shape(&self) -> (usize, usize) {
        (self.lanes, self.vectors)
    }

    /// Digits per number (lanes times vectors).
    pub fn digits(&self) -> usize {
        self.lanes * self.vectors
    }

    /// `x R mod n` (almost reduced) in digits; `x` is reduced modulo `n` first.
    pub fn to_montgomery(&self, x: &Integer) -> Vec<u64> {
        let xd = to_digits(&Integer::from(x.modulo_ref(&self.n)), self.digits());
        let mut out = vec![0; self.digits()];
        self.mul(&mut out, &xd, &self.r2);
        out
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
        let len = self.digits();
        assert!(a.len() == len && b.len() == len && out.len() == len);
        // SAFETY: the context exists only when the CPU has AVX-512F, VL and IFMA (checked in
        // `new`), and every slice holds exactly lanes * vectors digits (checked above).
        unsafe {
            match (self.lanes, self.vectors) {
                (4, 1) => amm_ymm::<1>(out, a, b, &self.n_digits, self.k0),
                (4, 3) => amm_ymm::<3>(out, a, b, &self.n_digits, self.k0),
                (4, 5) => amm_ymm::<5>(out, a, b, &self.n_digits, self.k0),
                (4, 7) => amm_ymm::<7>(out, a, b, &self.n_digits, self.k0),
                (4, _) => unreachable!("4-lane vectors are chosen only for 1, 3, 5 or 7 of them"),
                (_, 1) => amm::<1>(out, a, b, &self.n_digits, self.k0),
                (_, 2) => amm::<2>(out, a, b, &self.n_digits, self.k0),
                (_, 3) => amm::<3>(out, a, b, &self.n_digits, self.k0),
                (_, 4) => amm::<4>(out, a, b, &self.n_digits, self.k0),
                (_, 5) => amm::<5>(out, a, b, &self.n_digits, self.k0),
                (_, 6) => amm::<6>(out, a, b, &self.n_digits, self.k0),
                (_, 7) => amm::<7>(out, a, b, &self.n_digits, self.k0),
                (_, 8) => amm::<8>(out, a, b, &self.n_digits, self.k0),
                (_, 9) => amm::<9>(out, a, b, &self.n_digits, self.k0),
                _ => amm::<10>(out, a, b, &self.n_digits, self.k0),
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
    /// `exp` must be non-negative; `base` is reduced modulo `n` (with GMP, variable-time in
    /// `base`: blind it when it is secret, as RSA does).
    pub fn pow_ct(&self, base: &Integer, exp: &Integer, exp_bits: u32) -> Integer {
        const W: usize = 5;
        const ENTRIES: usize = 1 << W;
        let len = self.digits();
        let bits = (exp_bits.max(exp.significant_bits()) as usize).max(1);
        let windows = bits.div_ceil(W);
        let limbs = (windows * W).div_ceil(64) + 1;
        let mut e = zeroize::Zeroizing::new(exp.to_digits::<u64>(Order::Lsf));
        e.resize(limbs, 0);
        let mut table = zeroize::Zeroizing::new(vec![0u64; ENTRIES * len]);
        let mut one = vec![0; len];
        one[0] = 1;
        // table[0] = R mod n (Montgomery 1), table[1] = base R, table[i] = table[i-1] base.
        self.mul(&mut table[..len], &one, &self.r2);
        let b = self.to_montgomery(base);
        table[len..2 * len].copy_from_slice(&b);
        for i in 2..ENTRIES {
            let (done, rest) = table.split_at_mut(i * len);
            self.mul(&mut rest[..len], &done[(i - 1) * len..], &b);
        }
        let mut acc = zeroize::Zeroizing::new(vec![0u64; len]);
        let mut tmp = zeroize::Zeroizing::new(vec![0u64; len]);
        let mut entry = zeroize::Zeroizing::new(vec![0u64; len]);
        for w in (0..windows).rev() {
            let pos = w * W;
            let (limb, shift) = (pos / 64, pos % 64);
            let mut digit = e[limb] >> shift;
            if shift > 64 - W {
                digit |= e[limb + 1] << (64 - shift);
            }
            let digit = digit & (ENTRIES as u64 - 1);
            select(&table, len, digit, &mut entry);
            if w == windows - 1 {
                acc.copy_from_slice(&entry);
                continue;
            }
            for _ in 0..W {
                self.mul(&mut tmp, &acc, &acc);
                std::mem::swap(&mut *acc, &mut *tmp);
            }
            self.mul(&mut tmp, &acc, &entry);
            std::mem::swap(&mut *acc, &mut *tmp);
        }
        // Out of Montgomery form (a result at most n), then subtract n under a mask.
        self.mul(&mut tmp, &acc, &one);
        let mut diff = zeroize::Zeroizing::new(vec![0u64; len]);
        let mut borrow = 0u64;
        for ((d, &t), &m) in diff.iter_mut().zip(tmp.iter()).zip(&self.n_digits) {
            let v = t.wrapping_sub(m).wrapping_sub(borrow);
            *d = v & MASK;
            borrow = v >> 63;
        }
        // borrow = 1: tmp < n, keep it; else tmp - n.
        let keep = std::hint::black_box(borrow.wrapping_neg());
        for (t, &d) in tmp.iter_mut().zip(diff.iter()) {
            *t = (*t & keep) | (d & !keep);
        }
        from_digits(&tmp)
    }

    /// `k` squarings in place (Montgomery form).
    pub fn square_in_place(&self, a: &mut Vec<u64>, k: u64) {
        let mut tmp = vec![0; self.digits()];
        for _ in 0..k {
            self.mul(&mut tmp, a, a);
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

/// `out = table[index]` for a table of `len`-digit entries, reading every entry (the index
/// picks a mask, never an address).
fn select(table: &[u64], len: usize, index: u64, out: &mut [u64]) {
    out.fill(0);
    for (i, item) in table.chunks_exact(len).enumerate() {
        let x = i as u64 ^ index;
        // All ones when x == 0, else zero, without a branch.
        let mask = std::hint::black_box(((x | x.wrapping_neg()) >> 63).wrapping_sub(1));
        for (o, &t) in out.iter_mut().zip(item) {
            *o |= t & mask;
        }
    }
}

/// Generates one almost-Montgomery multiplication for a vector width (8 lanes in zmm, or 4
/// lanes in ymm registers with AVX-512VL).
///
/// The accumulator is split in two: `p` collects the `a b_i` products, which do not depend on
/// `m`, and `q` the `m n` products. The only value carried from one digit to the next is lane
/// 0, which decides `m`; it is tracked in scalar registers: lane 0 of the next step is lane 1
/// of this step's state plus `lo(a_1 b_i) + lo(n_1 m) + hi(a_0 b_i) + hi(n_0 m)` and the carry
/// out of lane 0, all computed with scalar multiplications, while the vectors (read one step
/// behind, for lane 1) do the bulk of the work. The carries never enter the vectors: lane 0 of
/// a vector state is shifted out before it is read, except at the end, where the scalar lane 0
/// replaces it.
macro_rules! amm_kernel {
    ($name:ident, $lanes:expr, $features:literal, $vec:ty, $zero:ident, $load:ident, $store:ident,
     $set1:ident, $lo:ident, $hi:ident, $align:ident, $add:ident, $low128:ident) => {
        /// One almost-Montgomery multiplication with `V` vectors.
        ///
        /// # Safety
        /// The CPU must support the target features, and every slice must hold `LANES V` digits.
        #[target_feature(enable = $features)]
        unsafe fn $name<const V: usize>(out: &mut [u64], a: &[u64], b: &[u64], n: &[u64], k0: u64) {
            const LANES: usize = $lanes;
            let zero: $vec = $zero();
            let mut av = [zero; V];
            let mut nv = [zero; V];
            let mut p = [zero; V];
            let mut q = [zero; V];
            for j in 0..V {
                // SAFETY: LANES V digits in each slice (the caller's contract); unaligned loads.
                unsafe {
                    av[j] = $load(a.as_ptr().add(LANES * j).cast());
                    nv[j] = $load(n.as_ptr().add(LANES * j).cast());
                }
            }
            let (a0, a1, n0, n1) = (a[0], a[1], n[0], n[1]);
            let mul = |x: u64, y: u64| u128::from(x) * u128::from(y);
            let lo = |w: u128| (w as u64) & MASK;
            let hi = |w: u128| (w >> DIGIT_BITS) as u64;
            // Lane 0 of the state at the start of the step, carries included.
            let mut lane0 = 0u64;
            // Lane 1 of the state at the start of the step (read from the vectors).
            let mut lane1 = 0u64;
            for &bi in b.iter().take(LANES * V) {
                let ab0 = mul(a0, bi);
                let t = lane0.wrapping_add(lo(ab0));
                let m = t.wrapping_mul(k0) & MASK;
                let nm0 = mul(n0, m);
                let carry = t.wrapping_add(lo(nm0)) >> DIGIT_BITS;
                lane0 = lane1
                    .wrapping_add(lo(mul(a1, bi)))
                    .wrapping_add(lo(mul(n1, m)))
                    .wrapping_add(hi(ab0))
                    .wrapping_add(hi(nm0))
                    .wrapping_add(carry);
                let bv = $set1(bi as i64);
                let mv = $set1(m as i64);
                for j in 0..V {
                    p[j] = $lo(p[j], av[j], bv);
                    q[j] = $lo(q[j], nv[j], mv);
                }
                // Move every digit down one place (lane 0 is dropped: its value is in `carry`).
                for j in 0..V {
                    let (pn, qn) = if j + 1 < V {
                        (p[j + 1], q[j + 1])
                    } else {
                        (zero, zero)
                    };
                    p[j] = $align::<1>(pn, p[j]);
                    q[j] = $align::<1>(qn, q[j]);
                }
                for j in 0..V {
                    p[j] = $hi(p[j], av[j], bv);
                    q[j] = $hi(q[j], nv[j], mv);
                }
                lane1 = _mm_extract_epi64::<1>($low128($add(p[0], q[0]))) as u64;
            }
            // Normalise to 52-bit digits; lane 0 is the scalar one (it holds the last carry).
            let mut carry = 0u64;
            for j in 0..V {
                let mut lanes = [0u64; LANES];
                // SAFETY: a LANES-lane store into a LANES-element array.
                unsafe { $store(lanes.as_mut_ptr().cast(), $add(p[j], q[j])) };
                if j == 0 {
                    lanes[0] = lane0;
                }
                for (k, &lane) in lanes.iter().enumerate() {
                    let t = lane + carry;
                    out[LANES * j + k] = t & MASK;
                    carry = t >> DIGIT_BITS;
                }
            }
            debug_assert_eq!(carry, 0, "the result is below 2n < R");
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
    _mm512_castsi512_si128
);
amm_kernel!(
    amm_ymm,
    4,
    "avx512f,avx512vl,avx512ifma",
    __m256i,
    _mm256_setzero_si256,
    _mm256_loadu_si256,
    _mm256_storeu_si256,
    _mm256_set1_epi64x,
    _mm256_madd52lo_epu64,
    _mm256_madd52hi_epu64,
    _mm256_alignr_epi64,
    _mm256_add_epi64,
    _mm256_castsi256_si128
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
    fn the_table_scan_picks_the_entry() {
        let table: Vec<u64> = (0..32 * 3).collect();
        let mut out = vec![0; 3];
        for i in 0..32u64 {
            select(&table, 3, i, &mut out);
            assert_eq!(out, vec![3 * i, 3 * i + 1, 3 * i + 2]);
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

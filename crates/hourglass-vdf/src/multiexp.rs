//! Double exponentiation `a^e * b^f mod N`, the core of Wesolowski verification
//! (`y = pi^l * x^r`, paper 003 section 3).
//!
//! Four algorithms, all variable-time (every operand is public):
//!
//! - [`MultiExp::Separate`]: two GMP `mpz_powm` calls and one product (the paper's baseline);
//! - [`MultiExp::Shamir`]: one shared squaring chain, multiplying by `a`, `b` or `ab` per bit;
//! - [`MultiExp::Interleaved`]: one shared squaring chain with an independent sliding window of
//!   width `w` per base (odd powers precomputed);
//! - [`MultiExp::Yll`]: the simultaneous sliding window of Yen, Lai and Lenstra: windows of
//!   `w` bits taken from both exponents at once, with the table of `a^i b^j` for all `i, j`
//!   below `2^w` not both even.
//!
//! `hourglass bench vdf` times them side by side (Table 2); [`MultiExp::default`] is the
//! fastest there. The paper found 2-YLL and 3-YLL best with OpenSSL's multiplication on an M1;
//! with IFMA multiplication, interleaved windows of width 5 win by a few percent.

use rug::Integer;

/// A double-exponentiation algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum MultiExp {
    /// `a^e mod N` and `b^f mod N` by GMP, then their product.
    Separate,
    /// Shamir's trick (Straus with 1-bit windows).
    Shamir,
    /// Interleaved sliding windows of width `w` (1 to 8); the default is `w = 5`.
    Interleaved(u32),
    /// Yen-Lai-Lenstra simultaneous sliding window of width `w` (1 to 4).
    Yll(u32),
}

impl Default for MultiExp {
    /// Interleaved windows of width 5: the fastest of [`MultiExp::candidates`] for 256- and
    /// 512-bit exponents at 1024 to 4096 bits on the development machine (`hourglass bench vdf`,
    /// Table 2), 3.5 times faster than [`MultiExp::Separate`] at 2048 bits with IFMA.
    fn default() -> Self {
        MultiExp::Interleaved(5)
    }
}

impl std::fmt::Display for MultiExp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            MultiExp::Separate => f.write_str("separate (2 x GMP powm)"),
            MultiExp::Shamir => f.write_str("Shamir"),
            MultiExp::Interleaved(w) => write!(f, "interleaved, w = {w}"),
            MultiExp::Yll(w) => write!(f, "{w}-YLL"),
        }
    }
}

/// Multiplication modulo one `N`: what the algorithms need. Two implementations:
/// [`GmpRing`] (GMP multiply and divide) and, on x86-64 CPUs with AVX-512 IFMA, [`IfmaRing`]
/// (radix-2^52 Montgomery form, about 3.5 times faster at 2048 bits).
pub trait Ring: Sync {
    /// An element in the ring's own representation.
    type Elem: Clone + Send + Sync;
    /// The element for `x` (reduced modulo `N` first).
    fn lift(&self, x: &Integer) -> Self::Elem;
    /// The integer of an element, fully reduced.
    fn lower(&self, e: &Self::Elem) -> Integer;
    /// `a b`.
    fn mul(&self, a: &Self::Elem, b: &Self::Elem) -> Self::Elem;
    /// `1`.
    fn one(&self) -> Self::Elem {
        self.lift(&Integer::from(1))
    }
    /// `acc = acc b`.
    fn mul_assign(&self, acc: &mut Self::Elem, b: &Self::Elem) {
        *acc = self.mul(acc, b);
    }
    /// `acc = acc^2`.
    fn square_assign(&self, acc: &mut Self::Elem) {
        *acc = self.mul(acc, acc);
    }
}

/// GMP arithmetic: `mpz_mul` then `mpz_tdiv_r`.
#[derive(Debug, Clone, Copy)]
pub struct GmpRing<'a> {
    n: &'a Integer,
}

impl<'a> GmpRing<'a> {
    /// The ring modulo `n`.
    pub fn new(n: &'a Integer) -> Self {
        Self { n }
    }
}

impl Ring for GmpRing<'_> {
    type Elem = Integer;

    fn lift(&self, x: &Integer) -> Integer {
        Integer::from(x.modulo_ref(self.n))
    }

    fn lower(&self, e: &Integer) -> Integer {
        e.clone()
    }

    fn mul(&self, a: &Integer, b: &Integer) -> Integer {
        let mut p = Integer::from(a * b);
        p %= self.n;
        p
    }

    fn mul_assign(&self, acc: &mut Integer, b: &Integer) {
        *acc *= b;
        *acc %= self.n;
    }

    fn square_assign(&self, acc: &mut Integer) {
        acc.square_mut();
        *acc %= self.n;
    }
}

/// AVX-512 IFMA Montgomery arithmetic ([`hourglass_arith::mont::ifma`]).
#[cfg(target_arch = "x86_64")]
#[derive(Debug, Clone, Copy)]
pub struct IfmaRing<'a> {
    ctx: &'a hourglass_arith::mont::ifma::IfmaContext,
}

#[cfg(target_arch = "x86_64")]
impl<'a> IfmaRing<'a> {
    /// The ring of an IFMA context.
    pub fn new(ctx: &'a hourglass_arith::mont::ifma::IfmaContext) -> Self {
        Self { ctx }
    }
}

#[cfg(target_arch = "x86_64")]
impl Ring for IfmaRing<'_> {
    type Elem = Vec<u64>;

    fn lift(&self, x: &Integer) -> Vec<u64> {
        self.ctx.to_montgomery(x)
    }

    fn lower(&self, e: &Vec<u64>) -> Integer {
        self.ctx.from_montgomery(e)
    }

    fn mul(&self, a: &Vec<u64>, b: &Vec<u64>) -> Vec<u64> {
        let mut out = vec![0; self.ctx.digits()];
        self.ctx.mul(&mut out, a, b);
        out
    }
}

impl MultiExp {
    /// `a^e * b^f mod n` with GMP arithmetic, for non-negative exponents.
    pub fn compute(
        self,
        a: &Integer,
        e: &Integer,
        b: &Integer,
        f: &Integer,
        n: &Integer,
    ) -> Integer {
        self.compute_in(&GmpRing::new(n), n, a, e, b, f)
    }

    /// `a^e * b^f mod n` in `ring` (modulo `n`). [`MultiExp::Separate`] always uses GMP's
    /// `mpz_powm` (the paper's baseline).
    pub fn compute_in<R: Ring>(
        self,
        ring: &R,
        n: &Integer,
        a: &Integer,
        e: &Integer,
        b: &Integer,
        f: &Integer,
    ) -> Integer {
        match self {
            MultiExp::Separate => {
                let x = Integer::from(
                    a.pow_mod_ref(e, n)
                        .unwrap_or_else(|| unreachable!("e >= 0")),
                );
                let y = Integer::from(
                    b.pow_mod_ref(f, n)
                        .unwrap_or_else(|| unreachable!("f >= 0")),
                );
                GmpRing::new(n).mul(&x, &y)
            }
            MultiExp::Shamir => ring.lower(&shamir(ring, &ring.lift(a), e, &ring.lift(b), f)),
            MultiExp::Interleaved(w) => ring.lower(&interleaved(
                ring,
                &[(ring.lift(a), e), (ring.lift(b), f)],
                w.clamp(1, 8),
            )),
            MultiExp::Yll(w) => ring.lower(&yll(
                ring,
                &ring.lift(a),
                e,
                &ring.lift(b),
                f,
                w.clamp(1, 4),
            )),
        }
    }

    /// Every algorithm with the window widths worth comparing, for the benchmark.
    pub fn candidates() -> Vec<MultiExp> {
        let mut all = vec![MultiExp::Separate, MultiExp::Shamir];
        all.extend((3..=6).map(MultiExp::Interleaved));
        all.extend((1..=3).map(MultiExp::Yll));
        all
    }
}

fn shamir<R: Ring>(ring: &R, a: &R::Elem, e: &Integer, b: &R::Elem, f: &Integer) -> R::Elem {
    let ab = ring.mul(a, b);
    let bits = e.significant_bits().max(f.significant_bits());
    let mut acc = ring.one();
    for i in (0..bits).rev() {
        ring.square_assign(&mut acc);
        match (e.get_bit(i), f.get_bit(i)) {
            (true, true) => ring.mul_assign(&mut acc, &ab),
            (true, false) => ring.mul_assign(&mut acc, a),
            (false, true) => ring.mul_assign(&mut acc, b),
            (false, false) => {}
        }
    }
    acc
}

/// Sliding-window digits of `e`: `(position, odd digit)` pairs, highest first, each digit
/// below `2^w`, so that `e = sum digit * 2^position`.
fn sliding_digits(e: &Integer, w: u32) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut i = e.significant_bits();
    while i > 0 {
        let top = i - 1;
        if !e.get_bit(top) {
            i -= 1;
            continue;
        }
        // The window [low, top] of at most w bits ending in a set bit.
        let mut low = top.saturating_sub(w - 1);
        while !e.get_bit(low) {
            low += 1;
        }
        let mut digit = 0u32;
        for bit in (low..=top).rev() {
            digit = (digit << 1) | u32::from(e.get_bit(bit));
        }
        out.push((low, digit));
        i = low;
    }
    out
}

/// `prod g^e` over `terms`: one squaring chain, a sliding window of width `w` per base.
pub fn interleaved<R: Ring>(ring: &R, terms: &[(R::Elem, &Integer)], w: u32) -> R::Elem {
    // Odd powers g, g^3, .., g^(2^w - 1) of each base.
    let tables: Vec<Vec<R::Elem>> = terms
        .iter()
        .map(|(g, _)| {
            let g2 = ring.mul(g, g);
            let mut t = vec![g.clone()];
            for k in 1..(1usize << (w - 1)) {
                t.push(ring.mul(&t[k - 1], &g2));
            }
            t
        })
        .collect();
    let digits: Vec<Vec<(u32, u32)>> = terms.iter().map(|(_, e)| sliding_digits(e, w)).collect();
    let bits = terms
        .iter()
        .map(|(_, e)| e.significant_bits())
        .max()
        .unwrap_or(0);
    let mut next: Vec<usize> = vec![0; terms.len()];
    let mut acc = ring.one();
    let mut started = false;
    for i in (0..bits).rev() {
        if started {
            ring.square_assign(&mut acc);
        }
        for (t, d) in digits.iter().enumerate() {
            if let Some(&(pos, digit)) = d.get(next[t]) {
                if pos == i {
                    let entry = &tables[t][(digit >> 1) as usize];
                    if started {
                        ring.mul_assign(&mut acc, entry);
                    } else {
                        acc = entry.clone();
                        started = true;
                    }
                    next[t] += 1;
                }
            }
        }
    }
    acc
}

/// `g^e` by a sliding window of width 5.
pub fn pow<R: Ring>(ring: &R, g: &R::Elem, e: &Integer) -> R::Elem {
    interleaved(ring, &[(g.clone(), e)], 5)
}

fn yll<R: Ring>(ring: &R, a: &R::Elem, e: &Integer, b: &R::Elem, f: &Integer, w: u32) -> R::Elem {
    // table[i][j] = a^i b^j for i, j < 2^w (the entries with both i and j even are not window
    // values, but they are the cheapest way to build the others).
    let size = 1usize << w;
    let mut table: Vec<Vec<R::Elem>> = Vec::with_capacity(size);
    for i in 0..size {
        let mut row: Vec<R::Elem> = Vec::with_capacity(size);
        for j in 0..size {
            let v = match (i, j) {
                (0, 0) => ring.one(),
                (0, _) => ring.mul(&row[j - 1], b),
                (_, _) => ring.mul(&table[i - 1][j], a),
            };
            row.push(v);
        }
        table.push(row);
    }
    let bits = e.significant_bits().max(f.significant_bits());
    let column = |k: u32| (u32::from(e.get_bit(k)), u32::from(f.get_bit(k)));
    let mut acc = ring.one();
    let mut i = i64::from(bits) - 1;
    while i >= 0 {
        let top = i as u32;
        if column(top) == (0, 0) {
            ring.square_assign(&mut acc);
            i -= 1;
            continue;
        }
        // Window [low, top] of at most w columns, ending in a non-zero column.
        let mut low = top.saturating_sub(w - 1);
        while column(low) == (0, 0) {
            low += 1;
        }
        let (mut de, mut df) = (0usize, 0usize);
        for k in (low..=top).rev() {
            let (be, bf) = column(k);
            de = (de << 1) | be as usize;
            df = (df << 1) | bf as usize;
        }
        for _ in low..=top {
            ring.square_assign(&mut acc);
        }
        ring.mul_assign(&mut acc, &table[de][df]);
        i = i64::from(low) - 1;
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn modulus() -> Integer {
        (Integer::from(1) << 521u32) - 1u32
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, rng_seed: proptest::test_runner::RngSeed::Fixed(4), ..ProptestConfig::default() })]
        #[test]
        fn every_algorithm_matches_separate_exponentiation(
            a in any::<[u64; 9]>(), b in any::<[u64; 9]>(),
            e in any::<[u64; 4]>(), f in any::<[u64; 4]>(), shift in 0u32..200,
        ) {
            let n = modulus();
            let a = Integer::from_digits(&a, rug::integer::Order::Lsf) % &n;
            let b = Integer::from_digits(&b, rug::integer::Order::Lsf) % &n;
            let e = Integer::from_digits(&e, rug::integer::Order::Lsf);
            let f = Integer::from_digits(&f, rug::integer::Order::Lsf) >> shift;
            let expect = MultiExp::Separate.compute(&a, &e, &b, &f, &n);
            for alg in MultiExp::candidates().into_iter().chain([MultiExp::Interleaved(1), MultiExp::Yll(4)]) {
                prop_assert_eq!(&alg.compute(&a, &e, &b, &f, &n), &expect, "{}", alg);
                #[cfg(target_arch = "x86_64")]
                if let Some(ctx) = hourglass_arith::mont::ifma::IfmaContext::new(&n) {
                    let ring = IfmaRing::new(&ctx);
                    prop_assert_eq!(&alg.compute_in(&ring, &n, &a, &e, &b, &f), &expect, "IFMA {}", alg);
                }
            }
        }
    }

    #[test]
    fn edge_exponents() {
        let n = modulus();
        let a = Integer::from(3);
        let b = Integer::from(5);
        for (e, f) in [(0u32, 0u32), (0, 1), (1, 0), (1, 1), (255, 256), (0, 65535)] {
            let (e, f) = (Integer::from(e), Integer::from(f));
            let expect = MultiExp::Separate.compute(&a, &e, &b, &f, &n);
            for alg in MultiExp::candidates() {
                assert_eq!(alg.compute(&a, &e, &b, &f, &n), expect, "{alg} {e} {f}");
            }
        }
    }
}

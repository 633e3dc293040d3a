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
//! `hourglass bench vdf` times them side by side; [`MultiExp::default`] is the fastest on the
//! development machine.

use rug::Integer;

/// A double-exponentiation algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum MultiExp {
    /// `a^e mod N` and `b^f mod N` by GMP, then their product.
    #[default]
    Separate,
    /// Shamir's trick (Straus with 1-bit windows).
    Shamir,
    /// Interleaved sliding windows of width `w` (1 to 8).
    Interleaved(u32),
    /// Yen-Lai-Lenstra simultaneous sliding window of width `w` (1 to 4).
    Yll(u32),
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

/// Modular arithmetic for one modulus: what the algorithms need.
struct Ring<'a> {
    n: &'a Integer,
}

impl Ring<'_> {
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

impl MultiExp {
    /// `a^e * b^f mod n` for non-negative exponents and `a, b` reduced modulo `n`.
    pub fn compute(
        self,
        a: &Integer,
        e: &Integer,
        b: &Integer,
        f: &Integer,
        n: &Integer,
    ) -> Integer {
        let ring = Ring { n };
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
                ring.mul(&x, &y)
            }
            MultiExp::Shamir => shamir(&ring, a, e, b, f),
            MultiExp::Interleaved(w) => interleaved(&ring, &[(a, e), (b, f)], w.clamp(1, 8)),
            MultiExp::Yll(w) => yll(&ring, a, e, b, f, w.clamp(1, 4)),
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

fn shamir(ring: &Ring<'_>, a: &Integer, e: &Integer, b: &Integer, f: &Integer) -> Integer {
    let ab = ring.mul(a, b);
    let bits = e.significant_bits().max(f.significant_bits());
    let mut acc = Integer::from(1);
    for i in (0..bits).rev() {
        ring.square_assign(&mut acc);
        match (e.get_bit(i), f.get_bit(i)) {
            (true, true) => ring.mul_assign(&mut acc, &ab),
            (true, false) => ring.mul_assign(&mut acc, a),
            (false, true) => ring.mul_assign(&mut acc, b),
            (false, false) => {}
        }
    }
    Integer::from(acc.modulo_ref(ring.n))
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

fn interleaved(ring: &Ring<'_>, terms: &[(&Integer, &Integer)], w: u32) -> Integer {
    // Odd powers g, g^3, .., g^(2^w - 1) of each base.
    let tables: Vec<Vec<Integer>> = terms
        .iter()
        .map(|(g, _)| {
            let g2 = ring.mul(g, g);
            let mut t = vec![Integer::from(g.modulo_ref(ring.n))];
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
    let mut acc = Integer::from(1);
    for i in (0..bits).rev() {
        ring.square_assign(&mut acc);
        for (t, d) in digits.iter().enumerate() {
            if let Some(&(pos, digit)) = d.get(next[t]) {
                if pos == i {
                    ring.mul_assign(&mut acc, &tables[t][(digit >> 1) as usize]);
                    next[t] += 1;
                }
            }
        }
    }
    Integer::from(acc.modulo_ref(ring.n))
}

fn yll(ring: &Ring<'_>, a: &Integer, e: &Integer, b: &Integer, f: &Integer, w: u32) -> Integer {
    // table[i][j] = a^i b^j for i, j < 2^w (entries with both i and j even are never used
    // as window values, but the ones needed to build the rest are cheap to keep).
    let size = 1usize << w;
    let a = Integer::from(a.modulo_ref(ring.n));
    let b = Integer::from(b.modulo_ref(ring.n));
    let mut table: Vec<Vec<Integer>> = vec![vec![Integer::from(1); size]; size];
    for i in 0..size {
        for j in 0..size {
            table[i][j] = match (i, j) {
                (0, 0) => Integer::from(1),
                (0, _) => ring.mul(&table[0][j - 1], &b),
                (_, _) => ring.mul(&table[i - 1][j], &a),
            };
        }
    }
    let bits = e.significant_bits().max(f.significant_bits());
    let column = |k: u32| (u32::from(e.get_bit(k)), u32::from(f.get_bit(k)));
    let mut acc = Integer::from(1);
    let mut i = bits as i64 - 1;
    while i >= 0 {
        let top = i as u32;
        let (ce, cf) = column(top);
        if ce == 0 && cf == 0 {
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
        i = low as i64 - 1;
    }
    Integer::from(acc.modulo_ref(ring.n))
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

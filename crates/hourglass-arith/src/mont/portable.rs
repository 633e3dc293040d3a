//! Portable Montgomery squaring: plain Rust with `u128` products, any limb count.
//!
//! Used for sizes without a specialised kernel and on CPUs without BMI2/ADX. The algorithm is
//! the textbook one ("separated operand scanning"): the square is computed with each
//! off-diagonal product once, doubled, and the diagonal added; then the 2L-limb result is
//! reduced word by word; a final conditional subtraction brings it below `n` (or, in lazy mode,
//! the value is simply kept below `2n`).

/// Number of scratch limbs [`mont_sqr`] needs for `limbs`-limb operands.
pub(crate) const fn scratch_len(limbs: usize) -> usize {
    2 * limbs + 1
}

/// One Montgomery squaring: `out = a^2 / R mod n` with `R = 2^(64 L)`, `L = a.len()`.
///
/// - Strict mode (`lazy == false`): requires `a < n`, gives `out < n`.
/// - Lazy mode (`lazy == true`, only valid when `4n < R`): requires `a < 2n`, gives `out < 2n`
///   without any subtraction (`(4 n^2 + R n) / R < 2n`).
///
/// `n0` is `-n^-1 mod 2^64`; `t` is scratch of at least [`scratch_len`] limbs. Slices must have
/// `a.len() == n.len() == out.len()`.
pub(crate) fn mont_sqr(a: &[u64], n: &[u64], n0: u64, lazy: bool, t: &mut [u64], out: &mut [u64]) {
    let l = a.len();
    debug_assert!(n.len() == l && out.len() == l && t.len() >= scratch_len(l));
    let t = &mut t[..scratch_len(l)];
    t.fill(0);

    // Off-diagonal products a_i a_j (i < j), each once. Row i ends at t[i + l], which no
    // earlier row has written.
    for i in 0..l {
        let ai = u128::from(a[i]);
        let mut carry = 0u64;
        for (tj, &aj) in t[2 * i + 1..i + l].iter_mut().zip(&a[i + 1..]) {
            let s = ai * u128::from(aj) + u128::from(*tj) + u128::from(carry);
            *tj = s as u64;
            carry = (s >> 64) as u64;
        }
        t[i + l] = carry;
    }

    // Double (shift left by one bit) and add the diagonal a_i^2.
    let mut shifted_out = 0u64;
    for w in t[..2 * l].iter_mut() {
        let v = *w;
        *w = (v << 1) | shifted_out;
        shifted_out = v >> 63;
    }
    let mut carry = 0u64;
    for (i, &ai) in a.iter().enumerate() {
        let sq = u128::from(ai) * u128::from(ai);
        let s0 = u128::from(t[2 * i]) + u128::from(sq as u64) + u128::from(carry);
        t[2 * i] = s0 as u64;
        let s1 = u128::from(t[2 * i + 1]) + (sq >> 64) + (s0 >> 64);
        t[2 * i + 1] = s1 as u64;
        carry = (s1 >> 64) as u64;
    }
    debug_assert!(carry == 0 && shifted_out == 0);

    // Word-by-word Montgomery reduction.
    for i in 0..l {
        let m = u128::from(t[i].wrapping_mul(n0));
        let mut carry = 0u64;
        for (tj, &nj) in t[i..i + l].iter_mut().zip(n) {
            let s = m * u128::from(nj) + u128::from(*tj) + u128::from(carry);
            *tj = s as u64;
            carry = (s >> 64) as u64;
        }
        // T + m n B^i < 2 R^2 (strict) or < 2 R n (lazy), so this stops inside t.
        let mut k = i + l;
        let (s, mut c) = t[k].overflowing_add(carry);
        t[k] = s;
        while c {
            k += 1;
            let (s, c2) = t[k].overflowing_add(1);
            t[k] = s;
            c = c2;
        }
    }

    let (hi, top) = t[l..].split_at(l);
    out.copy_from_slice(hi);
    if !lazy && (top[0] != 0 || !less_than(out, n)) {
        sub_in_place(out, n);
    }
}

/// `x < y` for equal-length little-endian limb slices.
pub(crate) fn less_than(x: &[u64], y: &[u64]) -> bool {
    for (a, b) in x.iter().rev().zip(y.iter().rev()) {
        if a != b {
            return a < b;
        }
    }
    false
}

/// `x -= y` modulo `2^(64 len)`.
pub(crate) fn sub_in_place(x: &mut [u64], y: &[u64]) {
    let mut borrow = false;
    for (a, &b) in x.iter_mut().zip(y) {
        let (d1, b1) = a.overflowing_sub(b);
        let (d2, b2) = d1.overflowing_sub(u64::from(borrow));
        *a = d2;
        borrow = b1 || b2;
    }
}

/// `k` squarings in place. `a < n` on entry and on exit (lazy mode keeps the intermediate
/// values below `2n` and corrects once at the end). Allocates its scratch once, before the
/// loop.
pub(crate) fn square_chain(a: &mut [u64], n: &[u64], n0: u64, lazy: bool, k: u64) {
    let l = a.len();
    let mut t = vec![0u64; scratch_len(l)];
    let mut other = vec![0u64; l];
    for _ in 0..k {
        mont_sqr(a, n, n0, lazy, &mut t, &mut other);
        a.copy_from_slice(&other);
    }
    if lazy && !less_than(a, n) {
        sub_in_place(a, n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comparison_and_subtraction() {
        assert!(less_than(&[5, 1], &[0, 2]));
        assert!(!less_than(&[0, 2], &[5, 1]));
        assert!(!less_than(&[3, 3], &[3, 3]));
        let mut x = [0u64, 1];
        sub_in_place(&mut x, &[1, 0]);
        assert_eq!(x, [u64::MAX, 0]);
    }
}

//! Secret integers that are wiped when dropped.
//!
//! [`SecretInt`] holds p, q, d, phi, CRT exponents and key shares. Dropping it overwrites the
//! GMP limb buffer with zeros; `Debug` prints `SecretInt(...)`. Reading the value is explicit
//! ([`SecretInt::expose`]).
//!
//! GMP also copies limbs into temporaries and reallocated buffers during arithmetic (products,
//! quotients, the intermediate values of a CRT recombination). [`wipe_gmp_memory`], which every
//! hourglass program calls first thing, makes GMP wipe each heap block it frees or moves. Left:
//! GMP's small scratch space on the stack (`alloca`), overwritten by later calls rather than
//! wiped.

use std::ffi::c_void;
use std::sync::Once;

use gmp_mpfr_sys::gmp;
use rug::integer::Order;
use rug::Integer;
use zeroize::{Zeroize, Zeroizing};

/// Makes GMP wipe every heap block before freeing it, and the old block when it moves one to
/// grow it, so that secret limbs in GMP's temporaries do not outlive them in freed memory.
/// Blocks come from `malloc` as with GMP's own functions, so blocks allocated before the call
/// are freed correctly after it (GMP's rule against changing functions with live objects is
/// about allocators that cannot free each other's blocks). Call it at the start of `main`,
/// before other threads use GMP (it sets process-wide function pointers); later calls do
/// nothing. The hourglass programs (the CLI, the age plugin, the Python module) call it; a
/// program that uses the library crates directly calls it itself. With a shared system GMP
/// (not hourglass's builds, which link GMP statically) the functions would apply to every
/// user of that library in the process. Costs a write of each freed block: RSA private
/// operations unchanged within 1%, key generation 2% slower (alternated in one process).
pub fn wipe_gmp_memory() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // SAFETY: the three functions keep GMP's contract (below); they are compatible with the
        // default ones, which use malloc, realloc and free.
        unsafe { gmp::set_memory_functions(Some(allocate), Some(reallocate), Some(free_wiped)) }
    });
}

/// GMP's allocation function: `malloc`, aborting when out of memory (GMP's functions may not
/// return an error, and may not unwind).
extern "C" fn allocate(size: usize) -> *mut c_void {
    // SAFETY: malloc with a positive size; the result is checked.
    let p = unsafe { libc::malloc(size.max(1)) };
    if p.is_null() {
        std::process::abort();
    }
    p
}

/// Wipes `size` bytes at `ptr`, a word at a time (`malloc`'s blocks are aligned for `u64`).
///
/// # Safety
/// `ptr` must be a live allocation from `malloc` of at least `size` bytes.
unsafe fn wipe_block(ptr: *mut c_void, size: usize) {
    #[cfg(all(target_os = "linux", debug_assertions))]
    // SAFETY: `ptr` is a live malloc block (the caller's contract).
    debug_assert!(unsafe { libc::malloc_usable_size(ptr) } >= size);
    let words = size / 8;
    // SAFETY: the caller's contract; malloc aligns blocks for any scalar type, and the words
    // and the bytes after them lie within the `size` bytes.
    unsafe {
        std::slice::from_raw_parts_mut(ptr.cast::<u64>(), words).zeroize();
        std::slice::from_raw_parts_mut(ptr.cast::<u8>().add(8 * words), size % 8).zeroize();
    }
}

/// GMP's reallocation function: always moves, so the old block can be wiped.
///
/// # Safety
/// GMP's contract: `ptr` is a block of `old_size` bytes from these functions (or `malloc`).
unsafe extern "C" fn reallocate(ptr: *mut c_void, old_size: usize, new_size: usize) -> *mut c_void {
    let new = allocate(new_size);
    // SAFETY: both blocks are live, distinct, and hold at least the bytes copied.
    unsafe {
        std::ptr::copy_nonoverlapping(ptr.cast::<u8>(), new.cast::<u8>(), old_size.min(new_size));
        free_wiped(ptr, old_size);
    }
    new
}

/// GMP's free function: wipes the block, then frees it.
///
/// # Safety
/// GMP's contract: `ptr` is a live block of `size` bytes from these functions (or `malloc`).
unsafe extern "C" fn free_wiped(ptr: *mut c_void, size: usize) {
    // SAFETY: the caller's contract.
    unsafe {
        wipe_block(ptr, size);
        libc::free(ptr);
    }
}

/// A secret big integer, zeroized on drop (`Default`: zero).
#[derive(Clone, PartialEq, Eq, Default)]
pub struct SecretInt(Integer);

impl SecretInt {
    /// Wraps a secret value.
    pub fn new(value: Integer) -> Self {
        Self(value)
    }

    /// The secret value. Every use of the secret goes through this visible call.
    pub fn expose(&self) -> &Integer {
        &self.0
    }

    /// The secret value, for arithmetic in place (sums of shares): the value stays in this
    /// wiped buffer, and when GMP moves it to grow it the old buffer is wiped too if
    /// [`wipe_gmp_memory`] was called.
    pub fn expose_mut(&mut self) -> &mut Integer {
        &mut self.0
    }

    /// Copies the secret out as a public value, for the rare places that must publish
    /// (writing a key file, tests).
    pub fn expose_owned(&self) -> Integer {
        self.0.clone()
    }
}

impl From<Integer> for SecretInt {
    fn from(value: Integer) -> Self {
        Self(value)
    }
}

impl std::fmt::Debug for SecretInt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretInt(...)")
    }
}

/// Overwrites every allocated limb of `x` with zeros, then sets it to zero.
fn wipe(x: &mut Integer) {
    // SAFETY: `as_raw_mut` gives the live mpz_t of `x`. `d` points to `alloc` limbs owned by
    // it (since GMP 6.2 `alloc` may be 0, with `d` at a dummy limb: nothing is written then),
    // and we write within that allocation only, without changing its size or ownership.
    unsafe {
        let raw = x.as_raw_mut();
        let alloc = usize::try_from((*raw).alloc).unwrap_or(0);
        let limbs = std::slice::from_raw_parts_mut((*raw).d.as_ptr(), alloc);
        limbs.zeroize();
        (*raw).size = 0;
    }
}

impl Drop for SecretInt {
    fn drop(&mut self) {
        wipe(&mut self.0);
    }
}

impl Zeroize for SecretInt {
    fn zeroize(&mut self) {
        wipe(&mut self.0);
    }
}

/// `x mod m` in `[0, m)` for `x` of any sign and positive `m`, either secret, with GMP's
/// `mpn_sec_div_r`: its time and memory accesses depend on the two limb counts (and `x`'s sign)
/// only (`%` is GMP's schoolbook division, whose quotient corrections depend on the values).
/// The operands' copies and the scratch space are wiped. `x`'s limb count is its own; when it
/// varies with the secret, [`mod_ct_padded`] fixes it.
pub fn mod_ct(x: &Integer, m: &Integer) -> crate::Result<Integer> {
    mod_ct_padded(x, m, 0)
}

/// [`mod_ct`] with the dividend padded to at least `limbs` limbs: for a secret whose length
/// varies (a sum of products, say), a public bound on its length makes the work independent
/// of it.
pub fn mod_ct_padded(x: &Integer, m: &Integer, limbs: usize) -> crate::Result<Integer> {
    if *m <= 0 {
        return Err(crate::Error::InvalidArgument("x mod m needs m > 0"));
    }
    let d = Zeroizing::new(m.to_digits::<u64>(Order::Lsf));
    Ok(Integer::from_digits(
        &residue_limbs_ct(x, &d, limbs),
        Order::Lsf,
    ))
}

/// The least non-negative residue of `x` (of any sign, which is public) modulo `m`, given as
/// limbs with a non-zero top limb, in `m`'s number of limbs: `|x| mod m` by
/// [`reduce_limbs_ct`] on at least `limbs` limbs, and for negative `x`, `m` minus that, reduced
/// once more. Wiped.
pub(crate) fn residue_limbs_ct(x: &Integer, m: &[u64], limbs: usize) -> Zeroizing<Vec<u64>> {
    // `write_digits` ignores the sign.
    let abs = limbs_ct(x, x.significant_digits::<u64>().max(limbs));
    let r = reduce_limbs_ct(&abs, m);
    if *x >= 0 {
        return r;
    }
    let mut neg = Zeroizing::new(m.to_vec());
    sub_in_place_ct(&mut neg, &r);
    reduce_limbs_ct(&neg, m)
}

/// `n mod d` into `n`'s low `d.len()` limbs with GMP's `mpn_sec_div_r` (time and memory
/// accesses set by the two lengths); `n` at least as long as `d`, whose top limb is not zero.
/// The scratch is wiped.
fn remainder_in_place(n: &mut [u64], d: &[u64]) {
    assert!(!d.is_empty() && n.len() >= d.len() && d[d.len() - 1] != 0);
    // SAFETY: pure function of two sizes.
    let itch = unsafe { gmp::mpn_sec_div_r_itch(n.len() as _, d.len() as _) } as usize;
    let mut scratch = Zeroizing::new(vec![0u64; itch.max(1)]);
    // SAFETY: `n` holds `n.len() >= d.len() >= 1` limbs, `d` has a non-zero top limb (checked
    // above), and `scratch` the size GMP asked for; none overlap.
    unsafe {
        gmp::mpn_sec_div_r(
            n.as_mut_ptr(),
            n.len() as _,
            d.as_ptr(),
            d.len() as _,
            scratch.as_mut_ptr(),
        );
    }
}

/// Whether `a == b`, for values expected in `[0, n)` of which one may be secret (an unreleased
/// result checked against a claimed one): both are compared over all of `n`'s limbs, with no
/// exit at the first difference and no look at their lengths (GMP's comparison stops at the
/// first limb that differs and compares the lengths first, which for a modulus with a short top
/// limb says whether a secret is shorter). A negative value, or one longer than `n` in limbs,
/// is unequal to everything; callers check that values are below `n` (equal values from `n` up
/// to the limbs' capacity compare equal).
pub fn eq_ct(a: &Integer, b: &Integer, n: &Integer) -> bool {
    let len = n.significant_digits::<u64>();
    let fits = |x: &Integer| *x >= 0 && x.significant_digits::<u64>() <= len;
    if !fits(a) || !fits(b) {
        return false;
    }
    let (a, b) = (limbs_ct(a, len), limbs_ct(b, len));
    let diff = a
        .iter()
        .zip(b.iter())
        .fold(0u64, |acc, (x, y)| acc | (x ^ y));
    std::hint::black_box(diff) == 0
}

/// `x` (non-negative, below `2^(64 len)`) as exactly `len` little-endian limbs, wiped on drop.
pub(crate) fn limbs_ct(x: &Integer, len: usize) -> Zeroizing<Vec<u64>> {
    let mut d = Zeroizing::new(vec![0u64; len]);
    x.write_digits(&mut d, Order::Lsf);
    d
}

/// `x R mod m` for `R = 2^(64 L)` and `x` below `m`, both in `m`'s number of limbs `L` (its top
/// limb not zero), the Montgomery form of a secret: GMP's `mpn_sec_div_r`, whose time and memory
/// accesses the lengths set. The copy is wiped.
pub(crate) fn montgomery_limbs_ct(x: &[u64], m: &[u64]) -> Zeroizing<Vec<u64>> {
    let n = m.len();
    assert!(n >= 1 && x.len() == n && m[n - 1] != 0);
    let mut t = Zeroizing::new(vec![0u64; 2 * n]);
    t[n..].copy_from_slice(x);
    reduce_limbs_ct(&t, m)
}

/// `a b R^-1 mod m` (`R = 2^(64 L)`), fully reduced, for `a` and `b` below an odd `m`, all in
/// `m`'s number of limbs `L`; `m0 = -m^-1 mod 2^64`. Any of them may be secret: the product by
/// GMP's `mpn_sec_mul`, then word-by-word Montgomery reduction with its carries added at fixed
/// positions and the final subtraction under a mask, so no branch or address depends on the
/// values. The scratch is wiped.
pub(crate) fn mont_mul_limbs_ct(a: &[u64], b: &[u64], m: &[u64], m0: u64) -> Zeroizing<Vec<u64>> {
    let n = m.len();
    assert!(n >= 1 && a.len() == n && b.len() == n && m[n - 1] != 0);
    let mut t = mul_ct(a, b);
    // t < m^2 < m R: after the n steps, t / R < 2 m, with its top bit in `top`.
    let mut top = 0u64;
    for i in 0..n {
        let q = u128::from(t[i].wrapping_mul(m0));
        let mut carry = 0u64;
        for (tj, &mj) in t[i..i + n].iter_mut().zip(m) {
            let s = q * u128::from(mj) + u128::from(*tj) + u128::from(carry);
            *tj = s as u64;
            carry = (s >> 64) as u64;
        }
        let s = u128::from(t[i + n]) + u128::from(carry) + u128::from(top);
        t[i + n] = s as u64;
        top = (s >> 64) as u64;
    }
    let mut out = Zeroizing::new(t[n..].to_vec());
    let mut diff = out.clone();
    let borrow = sub_in_place_ct(&mut diff, m);
    // Subtract when the top bit is set or no borrow came out (out >= m).
    let take = std::hint::black_box((top | (borrow ^ 1)).wrapping_neg());
    for (o, &d) in out.iter_mut().zip(diff.iter()) {
        *o = (d & take) | (*o & !take);
    }
    out
}

/// The product `a b` in `a.len() + b.len()` limbs, both non-empty, either secret: GMP's
/// `mpn_sec_mul`, whose time and memory accesses the two lengths set. The scratch is wiped.
pub(crate) fn mul_ct(a: &[u64], b: &[u64]) -> Zeroizing<Vec<u64>> {
    // GMP wants the longer operand first.
    let (a, b) = if a.len() >= b.len() { (a, b) } else { (b, a) };
    assert!(!b.is_empty());
    let mut t = Zeroizing::new(vec![0u64; a.len() + b.len()]);
    // SAFETY: pure function of the sizes.
    let itch = unsafe { gmp::mpn_sec_mul_itch(a.len() as _, b.len() as _) } as usize;
    let mut scratch = Zeroizing::new(vec![0u64; itch.max(1)]);
    // SAFETY: `a` holds at least as many limbs as `b`, which holds at least one; `t` holds
    // their sum, `scratch` the size GMP asked for; nothing overlaps.
    unsafe {
        gmp::mpn_sec_mul(
            t.as_mut_ptr(),
            a.as_ptr(),
            a.len() as _,
            b.as_ptr(),
            b.len() as _,
            scratch.as_mut_ptr(),
        );
    }
    t
}

/// `a -= b` over `b.len()` limbs, then the borrow through the rest of `a` (no longer than `a`);
/// returns the borrow out of `a` (0 or 1). No branch or address depends on the values.
pub(crate) fn sub_in_place_ct(a: &mut [u64], b: &[u64]) -> u64 {
    let mut borrow = 0u64;
    for (i, x) in a.iter_mut().enumerate() {
        let y = b.get(i).copied().unwrap_or(0);
        let s = u128::from(*x)
            .wrapping_sub(u128::from(y))
            .wrapping_sub(u128::from(borrow));
        *x = s as u64;
        borrow = ((s >> 64) as u64) & 1;
    }
    borrow
}

/// `a += b & mask` over `b.len()` limbs, then the carry through the rest of `a` (`b` no longer
/// than `a`, `mask` all ones or zero); returns the carry out of `a`. No branch or address
/// depends on the values.
pub(crate) fn add_masked_in_place_ct(a: &mut [u64], b: &[u64], mask: u64) -> u64 {
    // Opaque to the compiler: a mask it can see is 0 or all ones (one made from a borrow bit)
    // lets it skip the additions under a branch.
    let mask = std::hint::black_box(mask);
    let mut carry = 0u64;
    for (i, x) in a.iter_mut().enumerate() {
        let y = b.get(i).copied().unwrap_or(0) & mask;
        let s = u128::from(*x) + u128::from(y) + u128::from(carry);
        *x = s as u64;
        carry = (s >> 64) as u64;
    }
    carry
}

/// `x mod m` in `m`'s number of limbs for `x` given as limbs (any length) and `m` with a
/// non-zero top limb, either secret: [`remainder_in_place`] on a wiped copy.
pub(crate) fn reduce_limbs_ct(x: &[u64], m: &[u64]) -> Zeroizing<Vec<u64>> {
    let mut t = Zeroizing::new(vec![0u64; x.len().max(m.len())]);
    t[..x.len()].copy_from_slice(x);
    remainder_in_place(&mut t, m);
    t.truncate(m.len());
    t
}

/// `a^-1 mod m` for an odd modulus `m > 1`, either secret (a blinding factor, `q^-1 mod p`),
/// with GMP's `mpn_sec_invert`: time and memory accesses set by `m`'s length only
/// (`mpz_invert`'s extended Euclid takes a value-dependent number of steps). Slow: 160 us at
/// 1024 bits and 513 us at 2048 against 4.7 and 9.5 for `mpz_invert` (this Xeon); for inverses
/// needed often, [`crate::modular::CtModulus::inverse`]. `a` is reduced
/// by [`mod_ct`] first (of any sign); the copies and scratch are wiped. Errors when `a` is not invertible.
pub fn inverse_ct(a: &Integer, m: &Integer) -> crate::Result<Integer> {
    if m.is_even() || *m <= 1 {
        return Err(crate::Error::UnsuitableModulus(
            "constant-time inverse needs an odd modulus > 1",
        ));
    }
    // a mod m in constant time (GMP's `modulo` would divide in variable time).
    let md = Zeroizing::new(m.to_digits::<u64>(Order::Lsf));
    let n = md.len();
    let mut ad = residue_limbs_ct(a, &md, 0);
    let mut rd = Zeroizing::new(vec![0u64; n]);
    // SAFETY: pure function of the size.
    let itch = unsafe { gmp::mpn_sec_invert_itch(n as _) } as usize;
    let mut scratch = Zeroizing::new(vec![0u64; itch.max(1)]);
    // SAFETY: `rd`, `ad` and `md` hold `n` limbs each, `m` is odd, `scratch` is the size GMP
    // asked for, nothing overlaps; `2 64 n` bits bound the sum of the operands' sizes.
    let invertible = unsafe {
        gmp::mpn_sec_invert(
            rd.as_mut_ptr(),
            ad.as_mut_ptr(),
            md.as_ptr(),
            n as _,
            (2 * 64 * n) as _,
            scratch.as_mut_ptr(),
        )
    };
    if invertible == 0 {
        return Err(crate::Error::NotInvertible);
    }
    Ok(Integer::from_digits(&rd, Order::Lsf))
}

/// `u^-1 mod m` for an odd `u > 1` and any `m > 1` (an even `phi(n)` or `lambda(n)`), either
/// secret, in constant time: with `k = -m^-1 mod u` (by [`inverse_ct`], modulo the odd `u`),
/// `u^-1 mod m = (1 + k m) / u`, and that exact division is a product by `u^-1 mod 2^(64 L)`
/// (Newton's iteration on `L` limbs, `L` those of `m`), since the quotient is below `m`.
/// GMP's `mpz_invert` (an extended Euclid) and exact division take time that depends on the
/// values. Errors when `u` is even or below 3, `m` below 2, or `gcd(u, m) != 1`.
pub fn inverse_odd_ct(u: &Integer, m: &Integer) -> crate::Result<Integer> {
    if u.is_even() || *u <= 1 || *m <= 1 {
        return Err(crate::Error::InvalidArgument(
            "an inverse modulo m by the odd-unit method needs an odd u > 1 and m > 1",
        ));
    }
    // (-m)^-1 mod u = -(m^-1) mod u; not invertible exactly when gcd(u, m) != 1.
    let neg_m = SecretInt::new(Integer::from(-m));
    let k = SecretInt::new(inverse_ct(neg_m.expose(), u)?);
    let len = m.significant_digits::<u64>();
    let u_len = u.significant_digits::<u64>();
    // 1 + k m < u m, kept modulo 2^(64 L): the quotient is below m, so that is enough.
    let mut n = mul_ct(&limbs_ct(k.expose(), u_len), &limbs_ct(m, len));
    add_masked_in_place_ct(&mut n, &[1], u64::MAX);
    let mut u_low = limbs_ct(u, u_len.max(len));
    u_low.truncate(len);
    let u_inv = inverse_mod_2_limbs(&u_low);
    let q = mul_ct(&n[..len], &u_inv);
    Ok(Integer::from_digits(&q[..len], Order::Lsf))
}

/// `u^-1 mod 2^(64 L)` for an odd `u` of `L` limbs, by Newton's iteration `x (2 - u x)`, which
/// doubles the number of correct low limbs from the one of `mont::inverse::inverse_mod_2_64`; the
/// number of steps depends on `L` only.
fn inverse_mod_2_limbs(u: &[u64]) -> Zeroizing<Vec<u64>> {
    let len = u.len();
    let mut x = Zeroizing::new(vec![0u64; len]);
    x[0] = crate::mont::inverse::inverse_mod_2_64(u[0]);
    let mut correct = 1;
    while correct < len {
        let ux = mul_ct(u, &x);
        let mut two_minus = Zeroizing::new(vec![0u64; len]);
        two_minus[0] = 2;
        sub_in_place_ct(&mut two_minus, &ux[..len]);
        let next = mul_ct(&x, &two_minus);
        x.copy_from_slice(&next[..len]);
        correct *= 2;
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The oracle's `a b R^-1 mod m` and [`mont_mul_limbs_ct`]'s, and the oracle's `a R mod m`
    /// and [`montgomery_limbs_ct`]'s, for `a` and `b` below an odd `m`.
    fn both_ways(a: &Integer, b: &Integer, m: &Integer) -> [(Integer, Integer); 2] {
        let md = m.to_digits::<u64>(Order::Lsf);
        let n = md.len();
        let (ad, bd) = (limbs_ct(a, n), limbs_ct(b, n));
        let m0 = (Integer::from(1) << 64u32)
            - Integer::from(m.invert_ref(&(Integer::from(1) << 64u32)).unwrap());
        let r = Integer::from(1) << (64 * n as u32);
        let r_inv = Integer::from(r.invert_ref(m).unwrap());
        let ours = Integer::from_digits(
            &mont_mul_limbs_ct(&ad, &bd, &md, m0.to_u64().unwrap()),
            Order::Lsf,
        );
        let mont = Integer::from_digits(&montgomery_limbs_ct(&ad, &md), Order::Lsf);
        [
            (ours, Integer::from(a * b) * r_inv % m),
            (mont, Integer::from(a * &r) % m),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(128))]
        /// Against GMP, for odd moduli of any length.
        #[test]
        fn montgomery_limbs_match_gmp(
            m_bytes in prop::collection::vec(any::<u8>(), 1..300),
            a_bytes in prop::collection::vec(any::<u8>(), 0..300),
            b_bytes in prop::collection::vec(any::<u8>(), 0..300),
        ) {
            let m = Integer::from_digits(&m_bytes, Order::Msf) | 1u32;
            prop_assume!(m > 1);
            let a = Integer::from_digits(&a_bytes, Order::Msf) % &m;
            let b = Integer::from_digits(&b_bytes, Order::Msf) % &m;
            for (ours, gmp) in both_ways(&a, &b, &m) {
                prop_assert_eq!(ours, gmp);
            }
        }
    }

    #[test]
    fn montgomery_limbs_edges() {
        // Moduli just below a limb boundary (where t / R comes closest to 2 m and the top bit
        // is set) and just above one.
        for m in [
            Integer::from(3),
            Integer::from(u64::MAX),
            (Integer::from(1) << 128u32) - 159u32,
            (Integer::from(1) << 512u32) - 569u32,
            (Integer::from(1) << 512u32) + 1u32,
            (Integer::from(1) << 2048u32) - 1u32,
        ] {
            let top = Integer::from(&m - 1u32);
            for (a, b) in [
                (Integer::ZERO, top.clone()),
                (top.clone(), top.clone()),
                (Integer::from(1), Integer::from(1)),
            ] {
                for (ours, gmp) in both_ways(&a, &b, &m) {
                    assert_eq!(ours, gmp);
                }
            }
        }
    }

    #[test]
    fn debug_hides_value() {
        let s = SecretInt::new(Integer::from(123456789));
        assert_eq!(format!("{s:?}"), "SecretInt(...)");
        assert_eq!(*s.expose(), 123456789);
    }

    #[test]
    fn wiping_zeroes_a_block_and_moving_one_keeps_its_bytes() {
        let old = allocate(64);
        // SAFETY: `old` is a live 64-byte block; `wipe_block` is checked on a live block (the
        // freed one cannot be read).
        unsafe {
            std::ptr::write_bytes(old.cast::<u8>(), 0xa5, 64);
            // Whole words and a tail of bytes.
            for size in [61, 64] {
                let keep = allocate(size);
                std::ptr::write_bytes(keep.cast::<u8>(), 0x5a, size);
                wipe_block(keep, size);
                let bytes = std::slice::from_raw_parts(keep.cast::<u8>(), size);
                assert!(bytes.iter().all(|&b| b == 0), "{size} bytes");
                free_wiped(keep, size);
            }
            let new = reallocate(old, 64, 200);
            assert!(std::slice::from_raw_parts(new.cast::<u8>(), 64)
                .iter()
                .all(|&b| b == 0xa5));
            free_wiped(new, 200);
        }
    }

    #[test]
    fn wipe_zeroes_the_value_and_limbs() {
        let mut x: Integer = Integer::from(1) << 500;
        x -= 1;
        wipe(&mut x);
        assert_eq!(x, 0);
        // The integer stays usable after wiping.
        x += 5;
        assert_eq!(x, 5);
    }

    proptest! {
        /// The constant-time remainder against GMP's, dividends of both signs, shorter and
        /// longer than the divisor.
        #[test]
        fn mod_ct_matches_gmp(
            x_bits in 0u32..3000,
            m_bits in 1u32..1200,
            negative in any::<bool>(),
            seed in any::<u64>(),
        ) {
            let mut rng = crate::entropy::SeededEntropy::new(&seed.to_le_bytes());
            let mut x = if x_bits == 0 { Integer::new() } else {
                crate::entropy::random_exact_bits(&mut rng, x_bits).unwrap()
            };
            if negative {
                x = -x;
            }
            let m = crate::entropy::random_exact_bits(&mut rng, m_bits).unwrap();
            let want = Integer::from(x.modulo_ref(&m));
            prop_assert_eq!(&mod_ct(&x, &m).unwrap(), &want);
            // Padding the dividend (shorter or longer than it is) changes nothing.
            let pad = (seed % 60) as usize;
            prop_assert_eq!(mod_ct_padded(&x, &m, pad).unwrap(), want);
        }
    }

    proptest! {
        /// The constant-time inverse against GMP's, including non-invertible inputs.
        #[test]
        fn inverse_ct_matches_gmp(m_bits in 2u32..1100, a_bits in 0u32..1200, seed in any::<u64>()) {
            let mut rng = crate::entropy::SeededEntropy::new(&seed.to_le_bytes());
            let m = crate::entropy::random_exact_bits(&mut rng, m_bits).unwrap() | 1u32;
            let a = if a_bits == 0 { Integer::new() } else {
                crate::entropy::random_exact_bits(&mut rng, a_bits).unwrap()
            };
            match a.invert_ref(&m).map(Integer::from) {
                Some(want) => prop_assert_eq!(inverse_ct(&a, &m).unwrap(), want),
                None => prop_assert!(inverse_ct(&a, &m).is_err()),
            }
        }
    }

    #[test]
    fn inverse_ct_edges() {
        let m = Integer::from(1_000_003u32);
        assert_eq!(inverse_ct(&Integer::from(1), &m).unwrap(), 1);
        assert_eq!(
            inverse_ct(&Integer::from(1_000_002u32), &m).unwrap(),
            1_000_002u32
        );
        assert_eq!(inverse_ct(&Integer::from(-1), &m).unwrap(), 1_000_002u32);
        assert!(inverse_ct(&Integer::new(), &m).is_err());
        assert!(inverse_ct(&Integer::from(-1_000_003i64), &m).is_err());
        assert_eq!(inverse_ct(&Integer::from(-2_000_005i64), &m).unwrap(), 1);
        assert!(inverse_ct(&Integer::from(9), &Integer::from(27)).is_err());
        assert!(inverse_ct(&Integer::from(3), &Integer::from(10)).is_err());
        assert!(inverse_ct(&Integer::from(3), &Integer::from(1)).is_err());
    }

    #[test]
    fn eq_ct_compares_values_in_range() {
        let n = (Integer::from(1) << 1025u32) + 1u32; // a short top limb
        let small = Integer::from(5);
        let big = Integer::from(&n - 1u32);
        assert!(eq_ct(&small, &Integer::from(5), &n));
        assert!(eq_ct(&big, &big.clone(), &n));
        assert!(eq_ct(&Integer::ZERO, &Integer::new(), &n));
        assert!(!eq_ct(&small, &big, &n));
        assert!(!eq_ct(&big, &Integer::from(&big - 1u32), &n));
        assert!(!eq_ct(&(Integer::from(1) << 64u32), &Integer::from(1), &n));
        // Out of range: negative or longer than n.
        assert!(!eq_ct(&Integer::from(-5), &Integer::from(-5), &n));
        let long = Integer::from(1) << 1100u32;
        assert!(!eq_ct(&long, &long.clone(), &n));
    }

    proptest! {
        /// The odd-unit inverse against GMP's, for odd and even moduli, including pairs that
        /// share a factor (an error) and units longer than the modulus.
        #[test]
        fn inverse_odd_ct_matches_gmp(
            u_bits in 2u32..1100,
            m_bits in 2u32..1200,
            seed in any::<u64>(),
        ) {
            let mut rng = crate::entropy::SeededEntropy::new(&seed.to_le_bytes());
            let u = crate::entropy::random_exact_bits(&mut rng, u_bits).unwrap() | 1u32;
            let m = crate::entropy::random_exact_bits(&mut rng, m_bits).unwrap();
            prop_assume!(u > 1 && m > 1);
            match u.invert_ref(&m).map(Integer::from) {
                Some(want) => prop_assert_eq!(inverse_odd_ct(&u, &m).unwrap(), want),
                None => prop_assert!(inverse_odd_ct(&u, &m).is_err()),
            }
        }
    }

    #[test]
    fn inverse_odd_ct_edges() {
        let phi = Integer::from(1_000_002u32) * Integer::from(1_000_036u32); // even
        assert_eq!(
            inverse_odd_ct(&Integer::from(65537), &phi).unwrap(),
            Integer::from(Integer::from(65537).invert_ref(&phi).unwrap())
        );
        // Units and moduli on limb boundaries.
        for bits in [64u32, 128, 1024] {
            let m = Integer::from(1) << bits; // 2^bits: every odd u is a unit
            let u = Integer::from(&m - 1u32);
            assert_eq!(inverse_odd_ct(&u, &m).unwrap(), u);
            let m = Integer::from(&m - 2u32);
            assert_eq!(
                inverse_odd_ct(&Integer::from(3), &m).unwrap(),
                Integer::from(Integer::from(3).invert_ref(&m).unwrap())
            );
        }
        assert!(inverse_odd_ct(&Integer::from(3), &Integer::from(6)).is_err());
        assert!(inverse_odd_ct(&Integer::from(4), &Integer::from(7)).is_err());
        assert!(inverse_odd_ct(&Integer::from(1), &Integer::from(7)).is_err());
        assert!(inverse_odd_ct(&Integer::from(3), &Integer::from(1)).is_err());
    }

    #[test]
    fn mod_ct_edges() {
        let big = (Integer::from(1) << 2000) - 1u32;
        for (x, m) in [(0u32, 1u32), (5, 1), (5, 7), (7, 7), (8, 7), (u32::MAX, 2)] {
            let (x, m) = (Integer::from(x), Integer::from(m));
            assert_eq!(mod_ct(&x, &m).unwrap(), Integer::from(&x % &m));
        }
        assert_eq!(mod_ct(&big, &big).unwrap(), 0);
        assert_eq!(
            mod_ct(&Integer::from(&big - 1u32), &big).unwrap(),
            Integer::from(&big - 1u32)
        );
        assert!(mod_ct(&big, &Integer::new()).is_err());
        assert!(mod_ct(&big, &Integer::from(-7)).is_err());
        // Negative dividends give the least non-negative residue.
        assert_eq!(
            mod_ct(&Integer::from(-1), &big).unwrap(),
            Integer::from(&big - 1u32)
        );
        assert_eq!(mod_ct(&Integer::from(&big * -3i32), &big).unwrap(), 0);
        assert_eq!(mod_ct(&Integer::from(-8), &Integer::from(7)).unwrap(), 6);
    }
}

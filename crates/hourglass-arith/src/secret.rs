//! Secret integers that are wiped when dropped.
//!
//! [`SecretInt`] holds p, q, d, phi, CRT exponents and key shares. Dropping it overwrites the
//! GMP limb buffer with zeros; `Debug` prints `SecretInt(...)`. Reading the value is explicit
//! ([`SecretInt::expose`]).
//!
//! Limitation: GMP may copy limbs into temporaries or reallocated buffers during arithmetic,
//! and those copies are freed without being wiped. Wiping the long-lived values is what this
//! type guarantees.

use rug::Integer;
use zeroize::Zeroize;

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
    /// wiped buffer (as far as GMP does not reallocate it while it grows).
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
    // it (GMP keeps `alloc >= 1` with a valid `d` for every initialised integer), and we write
    // within that allocation only, without changing its size or ownership.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_value() {
        let s = SecretInt::new(Integer::from(123456789));
        assert_eq!(format!("{s:?}"), "SecretInt(...)");
        assert_eq!(*s.expose(), 123456789);
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
}

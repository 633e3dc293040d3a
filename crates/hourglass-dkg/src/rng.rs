//! The fast generator for the protocol's many random values.
//!
//! A run draws millions of polynomial coefficients and stream values, so the [`EntropySource`]
//! the user chose (the OS CSPRNG by default) only keys a ChaCha12 keystream (the reduced-round
//! ChaCha that `rand`'s standard generator uses; profiles at 50 parties showed ChaCha20 and
//! the conversion to integers as 40% of the work). The key is replaced by keystream every
//! 2^36 bytes, well inside the 32-bit block counter, and the state is wiped on drop (the
//! cipher zeroizes itself; the scratch buffers are zeroized).

use chacha20::cipher::{KeyIvInit, StreamCipher};
use chacha20::ChaCha12;
use hourglass_arith::entropy::EntropySource;
use hourglass_arith::secret::{mod_ct, SecretInt};
use rug::integer::Order;
use rug::Integer;
use zeroize::{Zeroize, Zeroizing};

use crate::Result;

/// Bytes drawn under one key before rekeying (the counter allows 2^38).
const REKEY_AFTER: u64 = 1 << 36;

/// A ChaCha12 keystream keyed from an entropy source.
pub struct Drbg {
    cipher: ChaCha12,
    used: u64,
    bytes: Vec<u8>,
    limbs: Vec<u64>,
}

impl std::fmt::Debug for Drbg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Drbg(..)")
    }
}

impl Drop for Drbg {
    fn drop(&mut self) {
        self.bytes.zeroize();
        self.limbs.zeroize();
    }
}

impl Drbg {
    /// A generator keyed with 32 bytes from `source`.
    pub fn new(source: &mut dyn EntropySource) -> Result<Self> {
        let mut key = Zeroizing::new([0u8; 32]);
        source.fill(&mut key[..])?;
        Ok(Self::from_key(&key))
    }

    /// A generator from a fixed key (deterministic: tests and derived public coins).
    pub fn from_key(key: &[u8; 32]) -> Self {
        Drbg {
            cipher: ChaCha12::new(key.into(), &[0u8; 12].into()),
            used: 0,
            bytes: Vec::new(),
            limbs: Vec::new(),
        }
    }

    /// Fills `buf` with keystream.
    pub fn fill_bytes(&mut self, buf: &mut [u8]) {
        if self.used + buf.len() as u64 > REKEY_AFTER {
            let mut key = Zeroizing::new([0u8; 32]);
            self.cipher.apply_keystream(&mut key[..]);
            self.cipher = ChaCha12::new((&*key).into(), &[0u8; 12].into());
            self.used = 0;
        }
        self.used += buf.len() as u64;
        buf.fill(0);
        self.cipher.apply_keystream(buf);
    }

    /// A uniform integer in `[0, bound)` (128 extra bits reduced: statistical distance below
    /// 2^-128), for a positive `bound` (0 for any other): [`Drbg::wide`] reduced modulo `bound`.
    pub fn below(&mut self, bound: &Integer) -> Integer {
        let x = self.wide(bound);
        // In constant time: the draw becomes a secret coefficient, share or unit, and GMP's
        // division takes time that depends on it. `mod_ct` refuses only bounds of 0 or less.
        mod_ct(x.expose(), bound).unwrap_or_default()
    }

    /// The draw [`Drbg::below`] reduces, unreduced: `ceil(bits(bound) / 64) + 2` keystream
    /// words as an integer (least significant word first), so `wide(bound) mod bound` is the
    /// value `below(bound)` would return from the same stream. For a value used only modulo
    /// `bound` (a polynomial's coefficient, a share of zero) whose sums are reduced once at
    /// the end, it saves the constant-time division of every draw.
    pub fn wide(&mut self, bound: &Integer) -> SecretInt {
        // Native 64-bit words, least significant first, which GMP imports with a copy.
        let words = (bound.significant_bits() as usize).div_ceil(64) + 2;
        let mut bytes = std::mem::take(&mut self.bytes);
        bytes.resize(words * 8, 0);
        self.fill_bytes(&mut bytes);
        self.limbs.clear();
        self.limbs.extend(
            bytes
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or_default())),
        );
        self.bytes = bytes;
        SecretInt::new(Integer::from_digits(&self.limbs, Order::Lsf))
    }

    /// A uniform integer in `[1, bound)`, for `bound >= 2`, in time that does not depend on the
    /// value drawn (Lemire's multiply-and-shift: the rejection that makes it exact looks at the
    /// low half of a product and only discards draws, and its one division is by the public
    /// `bound`).
    pub fn nonzero_below_u32(&mut self, bound: u32) -> u32 {
        let s = u64::from(bound.max(2) - 1);
        let mut product = u128::from(self.next_u64()) * u128::from(s);
        if (product as u64) < s {
            let threshold = s.wrapping_neg() % s;
            while (product as u64) < threshold {
                product = u128::from(self.next_u64()) * u128::from(s);
            }
        }
        (product >> 64) as u32 + 1
    }

    /// A uniform `u64`.
    pub fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }
}

impl EntropySource for Drbg {
    fn fill(&mut self, buf: &mut [u8]) -> hourglass_arith::Result<()> {
        self.fill_bytes(buf);
        Ok(())
    }

    fn split(&mut self) -> hourglass_arith::Result<Box<dyn EntropySource>> {
        let mut key = Zeroizing::new([0u8; 32]);
        self.fill_bytes(&mut key[..]);
        Ok(Box::new(Drbg::from_key(&key)))
    }

    fn describe(&self) -> String {
        "ChaCha12 keystream".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn below_is_in_range_and_keyed() {
        let bound = Integer::from(1_000_003u32);
        let mut a = Drbg::from_key(&[1; 32]);
        let mut b = Drbg::from_key(&[1; 32]);
        let mut c = Drbg::from_key(&[2; 32]);
        let xs: Vec<Integer> = (0..100).map(|_| a.below(&bound)).collect();
        let ys: Vec<Integer> = (0..100).map(|_| b.below(&bound)).collect();
        let zs: Vec<Integer> = (0..100).map(|_| c.below(&bound)).collect();
        assert_eq!(xs, ys);
        assert_ne!(xs, zs);
        assert!(xs.iter().all(|x| *x >= 0 && *x < bound));
        // The wide draw is the same draw, unreduced.
        let mut d = Drbg::from_key(&[1; 32]);
        let wide: Vec<Integer> = (0..100).map(|_| d.wide(&bound).expose().clone()).collect();
        assert!(wide.iter().any(|w| *w >= bound));
        assert!(wide
            .iter()
            .zip(&xs)
            .all(|(w, x)| Integer::from(w % &bound) == *x));
        // Small draws: every value of [1, bound) comes, and nothing else.
        for bound in [2u32, 3, 7, 65_521] {
            let seen: std::collections::BTreeSet<u32> = (0..20 * bound.min(1000))
                .map(|_| a.nonzero_below_u32(bound))
                .collect();
            assert!(seen.iter().all(|&x| (1..bound).contains(&x)), "{bound}");
            if bound < 1000 {
                assert_eq!(seen.len() as u32, bound - 1, "{bound}");
            }
        }
    }
}

//! The inverse of a word modulo `2^64`: the Montgomery constant `n' = -n^-1 mod 2^64` of every
//! kernel, and the start of the constant-time inverses modulo `2^(64 L)` (`secret.rs`).
//!
//! Its own module, below both the kernels and the constant-time code, so that neither has to
//! import the other for it.

/// `n^-1 mod 2^64` for an odd `n`, by Newton's iteration (correct to 3 bits, doubling each
/// round), with no branch on `n` (it may be the low limb of a secret prime).
pub(crate) fn inverse_mod_2_64(n: u64) -> u64 {
    let mut inv = n;
    for _ in 0..5 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(n.wrapping_mul(inv)));
    }
    inv
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inverts_every_odd_word_tried() {
        for n in [
            1u64,
            3,
            5,
            0xffff_ffff_ffff_ffff,
            0x8000_0000_0000_0001,
            0x1234_5678_9abc_def1,
        ] {
            assert_eq!(n.wrapping_mul(inverse_mod_2_64(n)), 1, "{n:#x}");
        }
    }
}

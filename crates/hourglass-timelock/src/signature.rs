//! Delayed signatures (paper section III-D): signing with a puzzle key is an ordinary RSA
//! private-key operation, but verifying needs the public exponent `2^t + z`, so it takes `t`
//! sequential squarings. The signature is RSASSA-PSS (SHA-256, salt of 32 bytes) over the
//! document, so nothing but the exponent differs from a standard signature.

use std::sync::atomic::AtomicBool;

use hourglass_arith::entropy::EntropySource;
use hourglass_arith::modular::pow_mod_ct;
use hourglass_arith::squaring::Progress;
use hourglass_arith::Integer;
use hourglass_rsa::padding::{os2ip, Pss};
use hourglass_rsa::HashAlg;

use crate::key::{PuzzleKey, PuzzlePublicKey};
use crate::rsw::{SolveOptions, SolveOutcome};
use crate::solve::solve;
use crate::Result;

/// Signs a SHA-256 document digest with the puzzle key (fast). Returns `k` bytes.
pub fn sign_digest(key: &PuzzleKey, digest: &[u8], rng: &mut dyn EntropySource) -> Result<Vec<u8>> {
    Ok(Pss::new(HashAlg::Sha256).sign_digest(key.rsa(), digest, rng)?)
}

/// How a delayed verification ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayedVerdict {
    /// The signature is valid.
    Valid,
    /// The signature is invalid.
    Invalid,
    /// Stopped before the end (resumable from the checkpoint).
    Stopped {
        /// Verified squarings so far.
        done: u64,
    },
}

/// Verifies a delayed signature: `s^(2^t + z) mod n` by `t` squarings (with error checking,
/// checkpoints and resume through `options`), then the PSS check against `digest`.
pub fn verify_digest(
    key: &PuzzlePublicKey,
    digest: &[u8],
    signature: &[u8],
    options: &SolveOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<DelayedVerdict> {
    let k = key.bits().div_ceil(8) as usize;
    if signature.len() != k {
        return Ok(DelayedVerdict::Invalid);
    }
    let s = os2ip(signature);
    if s <= 1 || s >= Integer::from(key.n() - 1u32) {
        return Ok(DelayedVerdict::Invalid);
    }
    match solve(key, &s, options, stop, progress)? {
        SolveOutcome::Stopped { done } => Ok(DelayedVerdict::Stopped { done }),
        SolveOutcome::Solved(m) => {
            let ok = Pss::new(HashAlg::Sha256)
                .verify_opened(key.bits(), digest, &m)
                .is_ok();
            Ok(if ok {
                DelayedVerdict::Valid
            } else {
                DelayedVerdict::Invalid
            })
        }
    }
}

/// Checks a delayed signature instantly with the private key (the issuer's shortcut): `s` must
/// be the PSS signature of `digest` under `d`. A puzzle key's `e` is its trapdoor (`m^e` solves
/// any of its puzzles at once), so `s^e` is a constant-time exponentiation, not the public
/// operation, whose time follows the exponent's bits.
pub fn verify_with_private_key(key: &PuzzleKey, digest: &[u8], signature: &[u8]) -> Result<bool> {
    let k = key.public().bits().div_ceil(8) as usize;
    let s = os2ip(signature);
    let public = key.rsa().public();
    if signature.len() != k || s >= *public.n() {
        return Ok(false);
    }
    let m = pow_mod_ct(&s, public.e(), public.n())?;
    Ok(Pss::new(HashAlg::Sha256)
        .verify_opened(key.public().bits(), digest, &m)
        .is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::PuzzleKeyGen;
    use hourglass_arith::entropy::SeededEntropy;
    use sha2::Digest;

    #[test]
    fn delayed_signature_verifies_after_t_squarings_and_rejects_tampering() {
        let mut rng = SeededEntropy::new(b"delayed");
        let key = PuzzleKeyGen::new(1024, 3000).generate(&mut rng).unwrap();
        let digest = sha2::Sha256::digest(b"contract").to_vec();
        let sig = sign_digest(&key, &digest, &mut rng).unwrap();
        let opts = SolveOptions::default();
        let stop = AtomicBool::new(false);
        assert_eq!(
            verify_digest(key.public(), &digest, &sig, &opts, &stop, &mut |_| {}).unwrap(),
            DelayedVerdict::Valid
        );
        assert!(verify_with_private_key(&key, &digest, &sig).unwrap());
        let other = sha2::Sha256::digest(b"other contract").to_vec();
        assert_eq!(
            verify_digest(key.public(), &other, &sig, &opts, &stop, &mut |_| {}).unwrap(),
            DelayedVerdict::Invalid
        );
        let mut bad = sig.clone();
        bad[10] ^= 4;
        assert_eq!(
            verify_digest(key.public(), &digest, &bad, &opts, &stop, &mut |_| {}).unwrap(),
            DelayedVerdict::Invalid
        );
        assert_eq!(
            verify_digest(key.public(), &digest, &sig[1..], &opts, &stop, &mut |_| {}).unwrap(),
            DelayedVerdict::Invalid
        );
        // The issuer's shortcut refuses the same: another digest, a flipped bit, a short
        // signature, and n itself (of the right length, not below n).
        assert!(!verify_with_private_key(&key, &other, &sig).unwrap());
        assert!(!verify_with_private_key(&key, &digest, &bad).unwrap());
        assert!(!verify_with_private_key(&key, &digest, &sig[1..]).unwrap());
        let n = hourglass_rsa::padding::i2osp(key.public().n(), sig.len()).unwrap();
        assert!(!verify_with_private_key(&key, &digest, &n).unwrap());
    }
}

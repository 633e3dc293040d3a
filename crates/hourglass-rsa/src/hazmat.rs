//! Sharp tools: textbook RSA and raw padding encoders.
//!
//! **Warning.** Textbook RSA (`m^e mod n` without padding) is malleable and deterministic:
//! anyone can multiply ciphertexts, test guesses, and small messages can be recovered by
//! taking roots. It exists to reproduce the RSAtron post and for research. The encoders take
//! the seed or salt explicitly so published known-answer vectors can be checked; using a fixed
//! seed or salt in real use destroys their security.

use hourglass_arith::entropy::EntropySource;

use crate::key::{PrivateKey, PublicKey};
use crate::padding::{i2osp, os2ip, HashAlg, Pkcs1v15Sign};
// The explicit-seed encoders live with the padding schemes that use them.
pub use crate::padding::{oaep_encode, pss_encode};
use crate::{Error, Result};

/// Textbook RSA encryption of a big-endian message `m < n`, as `k` bytes.
pub fn raw_encrypt(key: &PublicKey, msg: &[u8]) -> Result<Vec<u8>> {
    if msg.len() > key.size() {
        return Err(Error::MessageTooLong {
            len: msg.len(),
            max: key.size(),
        });
    }
    let m = os2ip(msg);
    if m >= *key.n() {
        return Err(Error::InputOutOfRange { len: key.size() });
    }
    i2osp(&key.public_op(&m)?, key.size())
}

/// Textbook RSA decryption (the protected private operation, without padding), as `k` bytes:
/// the signing path's private operation, on the input as it is.
pub fn raw_decrypt(key: &PrivateKey, ct: &[u8], rng: &mut dyn EntropySource) -> Result<Vec<u8>> {
    crate::padding::private_op_octets(key, ct, rng)
}

/// EMSA-PKCS1-v1_5 encoding of `digest` (RFC 8017 9.2) as `k` bytes: what is raised to `d`
/// (used by distributed signing, where no single party holds `d`).
pub fn pkcs1v15_encode(hash: HashAlg, digest: &[u8], k: usize) -> Result<Vec<u8>> {
    Pkcs1v15Sign::new(hash).encode(digest, k)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every (modulus size, hash, message length) combination returns a value or an error; none
    /// panics (hourglass 0.1 panicked for a 1024-bit key, SHA-512 and an empty message).
    #[test]
    fn encodings_never_panic_for_any_size_hash_or_length() {
        let hashes = [
            HashAlg::Sha1,
            HashAlg::Sha256,
            HashAlg::Sha384,
            HashAlg::Sha512,
        ];
        for hash in hashes {
            let h = hash.output_len();
            let seed = vec![9u8; h];
            let digest = vec![1u8; h];
            for k in 0..200usize {
                for len in [0usize, 1, k.saturating_sub(2 * h + 2), k, k + 1] {
                    let msg = vec![0x5a; len];
                    match oaep_encode(hash, b"", &msg, &seed, k) {
                        Ok(em) => {
                            assert_eq!(em.len(), k);
                            assert!(k >= 2 * h + 2 + len);
                        }
                        Err(_) => assert!(k < 2 * h + 2 || len > k - 2 * h - 2),
                    }
                }
                let em_bits = (8 * k) as u32;
                for salt_len in [0usize, h, 2 * h] {
                    let salt = vec![3u8; salt_len];
                    if let Ok(em) = pss_encode(hash, &digest, &salt, em_bits.saturating_sub(1)) {
                        assert_eq!(em.len(), (em_bits.saturating_sub(1)).div_ceil(8) as usize);
                    }
                }
                let _ = pkcs1v15_encode(hash, &digest, k);
            }
        }
        // The case from the report, with a clear message.
        let err = oaep_encode(HashAlg::Sha512, b"", b"", &[0u8; 64], 128).unwrap_err();
        assert!(err.to_string().contains("too small for OAEP"), "{err}");
    }
}

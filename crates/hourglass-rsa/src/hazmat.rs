//! Sharp tools: textbook RSA and raw padding encoders.
//!
//! **Warning.** Textbook RSA (`m^e mod n` without padding) is malleable and deterministic:
//! anyone can multiply ciphertexts, test guesses, and small messages can be recovered by
//! taking roots. It exists to reproduce the RSAtron post and for research. The encoders take
//! the seed or salt explicitly so published known-answer vectors can be checked; using a fixed
//! seed or salt in real use destroys their security.

use hourglass_arith::entropy::EntropySource;

use crate::key::{PrivateKey, PublicKey};
use crate::padding::{i2osp, mgf1_xor as mgf1, os2ip, HashAlg, Pkcs1v15Sign};
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

/// Textbook RSA decryption (the protected private operation, without padding), as `k` bytes.
pub fn raw_decrypt(key: &PrivateKey, ct: &[u8], rng: &mut dyn EntropySource) -> Result<Vec<u8>> {
    if ct.len() > key.size() {
        return Err(Error::InputOutOfRange { len: key.size() });
    }
    i2osp(&key.private_op(&os2ip(ct), rng)?, key.size())
}

/// EME-OAEP encoding with an explicit `seed` (RFC 8017 7.1.1 step 2), `k` bytes.
pub fn oaep_encode(
    hash: HashAlg,
    label: &[u8],
    msg: &[u8],
    seed: &[u8],
    k: usize,
) -> Result<Vec<u8>> {
    let h_len = hash.output_len();
    if seed.len() != h_len {
        return Err(Error::InvalidParameters(format!(
            "OAEP seed must be {h_len} bytes"
        )));
    }
    // RFC 8017 7.1.1 step 1b: the modulus must hold two hashes and two bytes.
    if k < 2 * h_len + 2 {
        return Err(Error::InvalidParameters(format!(
            "a {}-bit key is too small for OAEP with a {}-byte hash (it needs at least {} bits); use a smaller hash or a larger key",
            8 * k,
            h_len,
            8 * (2 * h_len + 2)
        )));
    }
    let max = k - (2 * h_len + 2);
    if msg.len() > max {
        return Err(Error::MessageTooLong {
            len: msg.len(),
            max,
        });
    }
    let mut em = vec![0u8; k];
    let (seed_part, db) = em[1..].split_at_mut(h_len);
    db[..h_len].copy_from_slice(&hash.digest(label));
    let one = db.len() - msg.len() - 1;
    db[one] = 1;
    db[one + 1..].copy_from_slice(msg);
    seed_part.copy_from_slice(seed);
    mgf1(hash, seed_part, db);
    mgf1(hash, db, seed_part);
    Ok(em)
}

/// EMSA-PSS encoding of `digest` with an explicit `salt` (RFC 8017 9.1.1), for `em_bits` bits.
pub fn pss_encode(hash: HashAlg, digest: &[u8], salt: &[u8], em_bits: u32) -> Result<Vec<u8>> {
    let h_len = hash.output_len();
    let em_len = em_bits.div_ceil(8) as usize;
    if em_len < h_len + salt.len() + 2 {
        return Err(Error::InvalidParameters(
            "key too small for this hash and salt".into(),
        ));
    }
    let mut hasher = hash.hasher();
    hasher.update(&[0u8; 8]);
    hasher.update(digest);
    hasher.update(salt);
    let h = hasher.finalize();
    let mut em = vec![0u8; em_len];
    let db_len = em_len - h_len - 1;
    let (db, rest) = em.split_at_mut(db_len);
    db[db_len - salt.len() - 1] = 1;
    db[db_len - salt.len()..].copy_from_slice(salt);
    mgf1(hash, &h, db);
    let top_bits = 8 * em_len as u32 - em_bits;
    if top_bits > 0 {
        db[0] &= 0xff >> top_bits;
    }
    rest[..h_len].copy_from_slice(&h);
    rest[h_len] = 0xbc;
    Ok(em)
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

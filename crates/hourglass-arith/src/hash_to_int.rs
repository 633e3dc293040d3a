//! Hashing byte strings onto the whole group `Z_n`.
//!
//! Anything raised to a sequential or secret power must be a full-domain element: a small or
//! structured input (such as a 257-bit digest) lets an attacker precompute `p^(2^t)` for small
//! primes `p` in parallel and combine them for any input that factors over those primes
//! (`m -> m^e mod n` is multiplicative). [`hash_to_residue`] maps a message to an element of
//! `[2, n-2]` that is statistically close to uniform, as RFC 9380's `hash_to_field` does:
//!
//! ```text
//! L = ceil((bits(n) + 128) / 8)
//! m = OS2IP(expand_message_xmd(SHA-256, msg, DST, L)) mod n
//! ```
//!
//! If `m` falls outside `[2, n-2]` (probability about `4/n`), the expansion is repeated with
//! `DST || I2OSP(k, 1)` for `k = 1, 2, ...`. docs/FORMATS.md specifies it byte for byte.
//!
//! ```
//! use hourglass_arith::hash_to_int::hash_to_residue;
//! use hourglass_arith::Integer;
//!
//! let n = Integer::from_str_radix("c5a3d0a3f3b0e9e1a5f1c2d3e4f5a6b7c8d9e0f1a2b3c4d5e6f7a8b9c0d1e2f3", 16).unwrap();
//! let m = hash_to_residue(b"digest bytes", b"EXAMPLE-DST", &n).unwrap();
//! assert!(m >= 2 && m <= Integer::from(&n - 2u32));
//! ```

use rug::integer::Order;
use rug::Integer;
use sha2::{Digest, Sha256};

use crate::{Error, Result};

/// SHA-256's output size (`b_in_bytes`) and block size (`s_in_bytes`).
const B_IN_BYTES: usize = 32;
const S_IN_BYTES: usize = 64;

/// `expand_message_xmd` of RFC 9380 section 5.3.1 with SHA-256: `len` uniform bytes from `msg`
/// under the domain separation tag `dst` (1 to 255 bytes). `len` is at most 8160 bytes.
pub fn expand_message_xmd_sha256(msg: &[u8], dst: &[u8], len: usize) -> Result<Vec<u8>> {
    let ell = len.div_ceil(B_IN_BYTES);
    if dst.is_empty() || dst.len() > 255 {
        return Err(Error::TagLength { max: 255 });
    }
    if len == 0 || ell > 255 || len > u16::MAX as usize {
        return Err(Error::ExpandLength(len));
    }
    let dst_prime = [dst, &[dst.len() as u8]].concat();
    let b0 = Sha256::new()
        .chain_update([0u8; S_IN_BYTES])
        .chain_update(msg)
        .chain_update((len as u16).to_be_bytes())
        .chain_update([0u8])
        .chain_update(&dst_prime)
        .finalize();
    let mut bi = Sha256::new()
        .chain_update(b0)
        .chain_update([1u8])
        .chain_update(&dst_prime)
        .finalize();
    let mut out = Vec::with_capacity(ell * B_IN_BYTES);
    out.extend_from_slice(&bi);
    for i in 2..=ell {
        let mixed: Vec<u8> = b0.iter().zip(bi.iter()).map(|(a, b)| a ^ b).collect();
        bi = Sha256::new()
            .chain_update(&mixed)
            .chain_update([i as u8])
            .chain_update(&dst_prime)
            .finalize();
        out.extend_from_slice(&bi);
    }
    out.truncate(len);
    Ok(out)
}

/// Maps `msg` to an element of `[2, n-2]` (see the module documentation). `n` must be odd and
/// at least 5; `dst` has 1 to 254 bytes (one byte is kept for the retry counter).
pub fn hash_to_residue(msg: &[u8], dst: &[u8], n: &Integer) -> Result<Integer> {
    if *n < 5 || n.is_even() {
        return Err(Error::UnsuitableModulus(
            "hashing into Z_n needs an odd modulus of at least 5",
        ));
    }
    if dst.is_empty() || dst.len() > 254 {
        return Err(Error::TagLength { max: 254 });
    }
    let len = (n.significant_bits() as usize + 128).div_ceil(8);
    let upper = Integer::from(n - 2u32);
    let mut tag = dst.to_vec();
    for k in 0u8..=255 {
        if k > 0 {
            tag.truncate(dst.len());
            tag.push(k);
        }
        let bytes = expand_message_xmd_sha256(msg, &tag, len)?;
        let m = Integer::from_digits(&bytes, Order::Msf) % n;
        if m >= 2 && m <= upper {
            return Ok(m);
        }
    }
    // 256 expansions all landing in {0, 1, n-1}: impossible for any modulus worth the name.
    Err(Error::NoResidue)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RFC_DST: &[u8] = b"QUUX-V01-CS02-with-expander-SHA256-128";

    /// RFC 9380 appendix K.1 (expand_message_xmd with SHA-256).
    #[test]
    fn rfc9380_vectors() {
        let cases: [(&[u8], usize, &str); 3] = [
            (
                b"",
                0x20,
                "68a985b87eb6b46952128911f2a4412bbc302a9d759667f87f7a21d803f07235",
            ),
            (
                b"abc",
                0x20,
                "d8ccab23b5985ccea865c6c97b6e5b8350e794e603b4b97902f53a8a0d605615",
            ),
            (
                b"",
                0x80,
                "af84c27ccfd45d41914fdff5df25293e221afc53d8ad2ac06d5e3e29485dadbe\
                 e0d121587713a3e0dd4d5e69e93eb7cd4f5df4cd103e188cf60cb02edc3edf18\
                 eda8576c412b18ffb658e3dd6ec849469b979d444cf7b26911a08e63cf31f9dc\
                 c541708d3491184472c2c29bb749d4286b004ceb5ee6b9a7fa5b646c993f0ced",
            ),
        ];
        for (msg, len, expected) in cases {
            let out = expand_message_xmd_sha256(msg, RFC_DST, len).unwrap();
            assert_eq!(hex_lower(&out), expected, "msg {msg:?} len {len}");
        }
    }

    fn hex_lower(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn bad_lengths_and_tags_are_refused() {
        assert!(expand_message_xmd_sha256(b"x", b"", 32).is_err());
        assert!(expand_message_xmd_sha256(b"x", &[b'a'; 256], 32).is_err());
        assert!(expand_message_xmd_sha256(b"x", b"D", 0).is_err());
        assert!(expand_message_xmd_sha256(b"x", b"D", 8161).is_err());
        assert_eq!(
            expand_message_xmd_sha256(b"x", b"D", 8160).unwrap().len(),
            8160
        );
        assert!(hash_to_residue(b"x", b"D", &Integer::from(4)).is_err());
        assert!(hash_to_residue(b"x", b"", &Integer::from(1001)).is_err());
    }

    #[test]
    fn residues_are_full_size_and_separated_by_tag() {
        let n = (Integer::from(1) << 2048u32) - 159u32;
        let a = hash_to_residue(b"digest", b"TAG-A", &n).unwrap();
        let b = hash_to_residue(b"digest", b"TAG-B", &n).unwrap();
        let c = hash_to_residue(b"digest2", b"TAG-A", &n).unwrap();
        assert!(a != b && a != c);
        // Full-domain: a handful of samples all come within 16 bits of the modulus size.
        for i in 0..32u32 {
            let m = hash_to_residue(&i.to_be_bytes(), b"TAG-A", &n).unwrap();
            assert!(m.significant_bits() > 2048 - 16);
            assert!(m >= 2 && m < Integer::from(&n - 1u32));
        }
    }

    #[test]
    fn tiny_moduli_retry_with_the_counter() {
        // Modulo 5 only {2, 3} are acceptable, so some messages need the counter; all land.
        let n = Integer::from(5);
        for i in 0..200u32 {
            let m = hash_to_residue(&i.to_be_bytes(), b"T", &n).unwrap();
            assert!(m == 2 || m == 3);
        }
    }
}

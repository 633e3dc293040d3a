//! Padding schemes from PKCS#1 v2.2 (RFC 8017): OAEP for encryption, PSS and PKCS#1 v1.5 for
//! signatures.
//!
//! Decryption and verification errors are deliberately unspecific: every failure after the
//! private operation is [`Error::Decryption`], decided in constant time for OAEP.

use hourglass_arith::entropy::EntropySource;
use hourglass_arith::Integer;
use rug::integer::Order;
use subtle::{ConditionallySelectable, ConstantTimeEq};
use zeroize::Zeroize;

pub use crate::hash::HashAlg;
use crate::key::{PrivateKey, PublicKey};
use crate::{Error, ParamError, Result};

/// I2OSP: `x` as exactly `len` big-endian bytes.
///
/// The same work whatever the number of leading zero bytes (it exported only the significant
/// bytes, then allocated the zero padding: whether an OAEP decryption's first byte is zero, the
/// oracle of Manger's attack, showed in the time). The limb export still depends on the number
/// of significant 64-bit limbs, which changes only when the top eight bytes are all zero.
pub fn i2osp(x: &Integer, len: usize) -> Result<Vec<u8>> {
    if *x < 0 || x.significant_bits() as usize > len * 8 {
        return Err(Error::InputOutOfRange { len });
    }
    let mut limbs = zeroize::Zeroizing::new(vec![0u64; len.div_ceil(8)]);
    x.write_digits(&mut limbs, Order::Lsf);
    let mut out = vec![0u8; len];
    for (i, byte) in out.iter_mut().rev().enumerate() {
        *byte = (limbs[i / 8] >> (8 * (i % 8))) as u8;
    }
    Ok(out)
}

/// OS2IP: big-endian bytes as an integer.
pub fn os2ip(bytes: &[u8]) -> Integer {
    Integer::from_digits(bytes, Order::Msf)
}

/// MGF1 mask generation (RFC 8017 B.2.1), XORed into `out`.
pub(crate) fn mgf1_xor(hash: HashAlg, seed: &[u8], out: &mut [u8]) {
    for (counter, chunk) in (0u32..).zip(out.chunks_mut(hash.output_len())) {
        let mut h = hash.hasher();
        h.update(seed);
        h.update(&counter.to_be_bytes());
        let block = h.finalize();
        for (o, m) in chunk.iter_mut().zip(block.iter()) {
            *o ^= m;
        }
    }
}

/// RSAES-OAEP (RFC 8017 section 7.1) with MGF1 over the same hash.
#[derive(Debug, Clone)]
pub struct Oaep {
    hash: HashAlg,
    label: Vec<u8>,
}

impl Oaep {
    /// OAEP with `hash` for both the label hash and MGF1, and an empty label.
    pub fn new(hash: HashAlg) -> Self {
        Self {
            hash,
            label: Vec::new(),
        }
    }

    /// Sets the label `L`.
    pub fn label(mut self, label: &[u8]) -> Self {
        self.label = label.to_vec();
        self
    }

    /// Longest message for a `k`-byte modulus.
    pub fn max_message_len(&self, k: usize) -> usize {
        k.saturating_sub(2 * self.hash.output_len() + 2)
    }

    /// Encrypts `msg` to `key`.
    pub fn encrypt(
        &self,
        key: &PublicKey,
        msg: &[u8],
        rng: &mut dyn EntropySource,
    ) -> Result<Vec<u8>> {
        let mut seed = vec![0u8; self.hash.output_len()];
        rng.fill(&mut seed)?;
        let em = oaep_encode(self.hash, &self.label, msg, &seed, key.size());
        seed.zeroize();
        let em = em?;
        let c = key.public_op(&os2ip(&em))?;
        i2osp(&c, key.size())
    }

    /// Decrypts `ct` with `key`.
    pub fn decrypt(
        &self,
        key: &PrivateKey,
        ct: &[u8],
        rng: &mut dyn EntropySource,
    ) -> Result<Vec<u8>> {
        let k = key.size();
        if ct.len() != k {
            return Err(Error::InputOutOfRange { len: k });
        }
        let m = key.private_op(&os2ip(ct), rng)?;
        let mut em = i2osp(&m, k)?;
        let out = oaep_decode(self.hash, &self.label, &em);
        em.zeroize();
        out
    }
}

/// Constant-time OAEP decoding: one error for every failure.
fn oaep_decode(hash: HashAlg, label: &[u8], em: &[u8]) -> Result<Vec<u8>> {
    let h_len = hash.output_len();
    let k = em.len();
    if k < 2 * h_len + 2 {
        return Err(Error::Decryption);
    }
    let l_hash = hash.digest(label);
    let mut seed = em[1..1 + h_len].to_vec();
    let mut db = em[1 + h_len..].to_vec();
    mgf1_xor(hash, &db, &mut seed);
    mgf1_xor(hash, &seed, &mut db);
    let mut good = em[0].ct_eq(&0u8);
    good &= db[..h_len].ct_eq(&l_hash);
    // Find the 0x01 after the zero padding without branching on secret data.
    let mut looking = subtle::Choice::from(1u8);
    let mut index: u32 = 0;
    for (i, &b) in db.iter().enumerate().skip(h_len) {
        let is_one = b.ct_eq(&1u8);
        let is_zero = b.ct_eq(&0u8);
        index.conditional_assign(&(i as u32), looking & is_one);
        good &= !looking | is_one | is_zero;
        looking &= !is_one;
    }
    good &= !looking;
    seed.zeroize();
    if bool::from(good) {
        let msg = db[index as usize + 1..].to_vec();
        db.zeroize();
        Ok(msg)
    } else {
        db.zeroize();
        Err(Error::Decryption)
    }
}

/// RSASSA-PSS (RFC 8017 section 8.1) with MGF1 over the same hash.
#[derive(Debug, Clone, Copy)]
pub struct Pss {
    hash: HashAlg,
    salt_len: Option<usize>,
}

impl Pss {
    /// PSS with `hash`; signing uses a salt as long as the hash, verification accepts any salt
    /// length (like OpenSSL's `auto`).
    pub fn new(hash: HashAlg) -> Self {
        Self {
            hash,
            salt_len: None,
        }
    }

    /// Fixes the salt length for signing and requires it when verifying.
    pub fn salt_len(mut self, len: usize) -> Self {
        self.salt_len = Some(len);
        self
    }

    /// Signs `msg`.
    pub fn sign(
        &self,
        key: &PrivateKey,
        msg: &[u8],
        rng: &mut dyn EntropySource,
    ) -> Result<Vec<u8>> {
        sign_message(self, key, msg, rng)
    }

    /// Signs a precomputed digest of the message.
    pub fn sign_digest(
        &self,
        key: &PrivateKey,
        digest: &[u8],
        rng: &mut dyn EntropySource,
    ) -> Result<Vec<u8>> {
        sign_digest(self, key, digest, rng)
    }

    /// Verifies `sig` over `msg`.
    pub fn verify(&self, key: &PublicKey, msg: &[u8], sig: &[u8]) -> Result<()> {
        self.verify_digest(key, &self.hash.digest(msg), sig)
    }

    /// Verifies `sig` over a precomputed digest.
    pub fn verify_digest(&self, key: &PublicKey, digest: &[u8], sig: &[u8]) -> Result<()> {
        let m = open_signature(key, sig)?;
        self.verify_opened(key.bits(), digest, &m)
    }

    /// Verifies an already opened signature `m = s^e mod n` of a `modulus_bits`-bit key: for
    /// keys whose public operation is computed elsewhere (time-lock puzzle keys, whose `e` is
    /// `2^t + z`).
    pub fn verify_opened(&self, modulus_bits: u32, digest: &[u8], m: &Integer) -> Result<()> {
        check_digest_len(self.hash, digest)?;
        let em_bits = modulus_bits - 1;
        let em_len = em_bits.div_ceil(8) as usize;
        let em = i2osp(m, em_len).map_err(|_| Error::Verification)?;
        pss_verify(self.hash, digest, &em, em_bits, self.salt_len)
    }
}

fn check_digest_len(hash: HashAlg, digest: &[u8]) -> Result<()> {
    if digest.len() != hash.output_len() {
        return Err(ParamError::DigestLength {
            hash,
            want: hash.output_len(),
            got: digest.len(),
        }
        .into());
    }
    Ok(())
}

/// What a signature scheme adds to the one signing path ([`sign_digest`]): its hash and its
/// message encoding (EMSA-PSS, EMSA-PKCS1-v1_5). Everything else, the digest's length, the
/// private operation (blinded and fault-checked) and the signature's length, is the path's.
trait SignatureEncoding {
    /// The hash the digest must come from.
    fn hash(&self) -> HashAlg;

    /// The encoded message `EM` for a digest of the right length, for a key of
    /// `modulus_bits` bits.
    fn encode_digest(
        &self,
        digest: &[u8],
        modulus_bits: u32,
        rng: &mut dyn EntropySource,
    ) -> Result<Vec<u8>>;
}

impl SignatureEncoding for Pss {
    fn hash(&self) -> HashAlg {
        self.hash
    }

    /// EMSA-PSS with a fresh salt, for `modulus_bits - 1` bits.
    fn encode_digest(
        &self,
        digest: &[u8],
        modulus_bits: u32,
        rng: &mut dyn EntropySource,
    ) -> Result<Vec<u8>> {
        let mut salt = vec![0u8; self.salt_len.unwrap_or(self.hash.output_len())];
        rng.fill(&mut salt)?;
        pss_encode(self.hash, digest, &salt, modulus_bits - 1)
    }
}

impl SignatureEncoding for Pkcs1v15Sign {
    fn hash(&self) -> HashAlg {
        self.hash
    }

    /// EMSA-PKCS1-v1_5 for `k` bytes.
    fn encode_digest(
        &self,
        digest: &[u8],
        modulus_bits: u32,
        _rng: &mut dyn EntropySource,
    ) -> Result<Vec<u8>> {
        self.encode(digest, modulus_bits.div_ceil(8) as usize)
    }
}

/// Signs `msg` under `scheme`: its digest, then [`sign_digest`].
fn sign_message(
    scheme: &impl SignatureEncoding,
    key: &PrivateKey,
    msg: &[u8],
    rng: &mut dyn EntropySource,
) -> Result<Vec<u8>> {
    sign_digest(scheme, key, &scheme.hash().digest(msg), rng)
}

/// The one signing path of every scheme: the digest's length checked, the scheme's encoding
/// `EM`, then `s = EM^d mod n` by the private operation (constant-time, blinded, and checked
/// against faults before anything is released: [`PrivateKey::private_op`]), as exactly `k`
/// bytes.
fn sign_digest(
    scheme: &impl SignatureEncoding,
    key: &PrivateKey,
    digest: &[u8],
    rng: &mut dyn EntropySource,
) -> Result<Vec<u8>> {
    check_digest_len(scheme.hash(), digest)?;
    let em = scheme.encode_digest(digest, key.public().bits(), rng)?;
    private_op_octets(key, &em, rng)
}

/// The private operation on octet strings: `x^d mod n` for the big-endian `input` (below `n`,
/// at most `k` bytes), blinded and fault-checked, as exactly `k` bytes. Signatures of every
/// scheme (and textbook RSA, [`crate::hazmat::raw_decrypt`]) are made by it.
pub(crate) fn private_op_octets(
    key: &PrivateKey,
    input: &[u8],
    rng: &mut dyn EntropySource,
) -> Result<Vec<u8>> {
    if input.len() > key.size() {
        return Err(Error::InputOutOfRange { len: key.size() });
    }
    let s = key.private_op(&os2ip(input), rng)?;
    i2osp(&s, key.size())
}

/// `m = s^e mod n` after the length and range checks of RSAVP1.
fn open_signature(key: &PublicKey, sig: &[u8]) -> Result<Integer> {
    if sig.len() != key.size() {
        return Err(Error::Verification);
    }
    let s = os2ip(sig);
    key.public_op(&s).map_err(|_| Error::Verification)
}

fn pss_verify(
    hash: HashAlg,
    digest: &[u8],
    em: &[u8],
    em_bits: u32,
    salt_len: Option<usize>,
) -> Result<()> {
    let h_len = hash.output_len();
    let em_len = em.len();
    if em_len < h_len + 2 || em[em_len - 1] != 0xbc {
        return Err(Error::Verification);
    }
    let (masked_db, rest) = em.split_at(em_len - h_len - 1);
    let h = &rest[..h_len];
    let top_bits = 8 * em_len as u32 - em_bits;
    if top_bits > 0 && masked_db[0] >> (8 - top_bits) != 0 {
        return Err(Error::Verification);
    }
    let mut db = masked_db.to_vec();
    mgf1_xor(hash, h, &mut db);
    if top_bits > 0 {
        db[0] &= 0xff >> top_bits;
    }
    let one = db.iter().position(|&b| b != 0).ok_or(Error::Verification)?;
    if db[one] != 0x01 {
        return Err(Error::Verification);
    }
    let salt = &db[one + 1..];
    if let Some(expected) = salt_len {
        if salt.len() != expected {
            return Err(Error::Verification);
        }
    }
    let mut hasher = hash.hasher();
    hasher.update(&[0u8; 8]);
    hasher.update(digest);
    hasher.update(salt);
    let h2 = hasher.finalize();
    if bool::from(h2.as_ref().ct_eq(h)) {
        Ok(())
    } else {
        Err(Error::Verification)
    }
}

/// RSASSA-PKCS1-v1_5 signatures (RFC 8017 section 8.2).
#[derive(Debug, Clone, Copy)]
pub struct Pkcs1v15Sign {
    hash: HashAlg,
}

impl Pkcs1v15Sign {
    /// PKCS#1 v1.5 signatures with `hash`.
    pub fn new(hash: HashAlg) -> Self {
        Self { hash }
    }

    pub(crate) fn encode(&self, digest: &[u8], k: usize) -> Result<Vec<u8>> {
        check_digest_len(self.hash, digest)?;
        let prefix = self.hash.digest_info_prefix();
        let t_len = prefix.len() + digest.len();
        if k < t_len + 11 {
            return Err(Error::MessageTooLong {
                len: t_len,
                max: k.saturating_sub(11),
            });
        }
        let mut em = vec![0xffu8; k];
        em[0] = 0;
        em[1] = 1;
        em[k - t_len - 1] = 0;
        em[k - t_len..k - digest.len()].copy_from_slice(prefix);
        em[k - digest.len()..].copy_from_slice(digest);
        Ok(em)
    }

    /// Signs `msg`.
    pub fn sign(
        &self,
        key: &PrivateKey,
        msg: &[u8],
        rng: &mut dyn EntropySource,
    ) -> Result<Vec<u8>> {
        sign_message(self, key, msg, rng)
    }

    /// Signs a precomputed digest.
    pub fn sign_digest(
        &self,
        key: &PrivateKey,
        digest: &[u8],
        rng: &mut dyn EntropySource,
    ) -> Result<Vec<u8>> {
        sign_digest(self, key, digest, rng)
    }

    /// Verifies `sig` over `msg`.
    pub fn verify(&self, key: &PublicKey, msg: &[u8], sig: &[u8]) -> Result<()> {
        self.verify_digest(key, &self.hash.digest(msg), sig)
    }

    /// Verifies `sig` over a precomputed digest (re-encodes and compares, so no parsing of
    /// the padding can be fooled).
    pub fn verify_digest(&self, key: &PublicKey, digest: &[u8], sig: &[u8]) -> Result<()> {
        let m = open_signature(key, sig)?;
        let em = i2osp(&m, key.size()).map_err(|_| Error::Verification)?;
        let expected = self
            .encode(digest, key.size())
            .map_err(|_| Error::Verification)?;
        if bool::from(em.ct_eq(&expected)) {
            Ok(())
        } else {
            Err(Error::Verification)
        }
    }
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
        return Err(ParamError::OaepSeedLength { want: h_len }.into());
    }
    // RFC 8017 7.1.1 step 1b: the modulus must hold two hashes and two bytes.
    if k < 2 * h_len + 2 {
        return Err(ParamError::KeyTooSmallForOaep {
            bits: 8 * k,
            hash_len: h_len,
            min_bits: 8 * (2 * h_len + 2),
        }
        .into());
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
    mgf1_xor(hash, seed_part, db);
    mgf1_xor(hash, db, seed_part);
    Ok(em)
}

/// EMSA-PSS encoding of `digest` with an explicit `salt` (RFC 8017 9.1.1), for `em_bits` bits.
pub fn pss_encode(hash: HashAlg, digest: &[u8], salt: &[u8], em_bits: u32) -> Result<Vec<u8>> {
    let h_len = hash.output_len();
    let em_len = em_bits.div_ceil(8) as usize;
    if em_len < h_len + salt.len() + 2 {
        return Err(ParamError::KeyTooSmallForPss.into());
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
    mgf1_xor(hash, &h, db);
    let top_bits = 8 * em_len as u32 - em_bits;
    if top_bits > 0 {
        db[0] &= 0xff >> top_bits;
    }
    rest[..h_len].copy_from_slice(&h);
    rest[h_len] = 0xbc;
    Ok(em)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{KeyGenOptions, Variant};
    use hourglass_arith::entropy::SeededEntropy;
    use proptest::prelude::*;
    use std::sync::OnceLock;

    fn small_key() -> &'static PrivateKey {
        static KEY: OnceLock<PrivateKey> = OnceLock::new();
        KEY.get_or_init(|| {
            let mut rng = SeededEntropy::new(b"padding tests");
            KeyGenOptions::new(1024, Variant::Crt)
                .generate(&mut rng)
                .unwrap()
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]
        #[test]
        fn oaep_round_trip_and_tamper(msg in proptest::collection::vec(any::<u8>(), 0..62), flip in 0usize..1024, seed in any::<u64>()) {
            let key = small_key();
            let mut rng = SeededEntropy::new(&seed.to_le_bytes());
            for hash in [HashAlg::Sha1, HashAlg::Sha256] {
                let oaep = Oaep::new(hash).label(b"L");
                let mut ct = oaep.encrypt(&key.public_key(), &msg, &mut rng).unwrap();
                prop_assert_eq!(oaep.decrypt(key, &ct, &mut rng).unwrap(), msg.clone());
                ct[flip / 8] ^= 1 << (flip % 8);
                prop_assert!(oaep.decrypt(key, &ct, &mut rng).is_err());
            }
        }

        #[test]
        fn signatures_round_trip_and_tamper(msg in proptest::collection::vec(any::<u8>(), 0..200), flip in 0usize..1024, seed in any::<u64>()) {
            let key = small_key();
            let public = key.public_key();
            let mut rng = SeededEntropy::new(&seed.to_le_bytes());
            let pss = Pss::new(HashAlg::Sha256);
            let mut sig = pss.sign(key, &msg, &mut rng).unwrap();
            prop_assert!(pss.verify(&public, &msg, &sig).is_ok());
            prop_assert!(pss.verify(&public, b"other message", &sig).is_err());
            sig[flip / 8] ^= 1 << (flip % 8);
            prop_assert!(pss.verify(&public, &msg, &sig).is_err());
            let v15 = Pkcs1v15Sign::new(HashAlg::Sha256);
            let mut sig = v15.sign(key, &msg, &mut rng).unwrap();
            prop_assert!(v15.verify(&public, &msg, &sig).is_ok());
            sig[flip / 8] ^= 1 << (flip % 8);
            prop_assert!(v15.verify(&public, &msg, &sig).is_err());
        }
    }

    proptest! {
        /// I2OSP gives exactly `len` bytes, OS2IP inverts it, whatever the leading zero bytes
        /// (a whole leading word of zeros too), and a value too long is refused.
        #[test]
        fn i2osp_round_trips_at_every_length(
            bytes in proptest::collection::vec(any::<u8>(), 0..80),
            zeros in 0usize..20,
            extra in 0usize..10,
        ) {
            let mut v = vec![0u8; zeros];
            v.extend_from_slice(&bytes);
            let x = os2ip(&v);
            let len = v.len() + extra;
            let out = i2osp(&x, len).unwrap();
            prop_assert_eq!(out.len(), len);
            prop_assert_eq!(os2ip(&out), x.clone());
            prop_assert_eq!(&out[extra..], &v[..]);
            if x.significant_bits() > 0 {
                let short = (x.significant_bits() as usize).div_ceil(8) - 1;
                prop_assert!(i2osp(&x, short).is_err());
            }
        }
    }

    /// PSS, PKCS#1 v1.5 and textbook signatures are made by one path: each is withheld when
    /// the private operation faults, and each is exactly `k` bytes, a signature whose value is
    /// short included.
    #[test]
    fn every_scheme_signs_through_the_one_checked_path() {
        let mut rng = SeededEntropy::new(b"one signing path");
        let key = KeyGenOptions::new(1024, Variant::Crt)
            .generate(&mut rng)
            .unwrap();
        let public = key.public_key();
        let digest = HashAlg::Sha256.digest(b"one path");
        let pss = Pss::new(HashAlg::Sha256);
        let v15 = Pkcs1v15Sign::new(HashAlg::Sha256);
        type Sign<'a> = &'a dyn Fn(&PrivateKey, &mut SeededEntropy) -> Result<Vec<u8>>;
        let schemes: [Sign<'_>; 3] = [
            &|key, rng| pss.sign_digest(key, &digest, rng),
            &|key, rng| v15.sign_digest(key, &digest, rng),
            &|key, rng| crate::hazmat::raw_decrypt(key, &digest, rng),
        ];
        for (i, sign) in schemes.iter().enumerate() {
            // A key of its own (a faulted blinding pair stays faulty until it is refreshed).
            // Its first use stores a blinding pair; the fault hits the pair's next update.
            let key = key.clone();
            assert_eq!(
                sign(&key, &mut rng).unwrap().len(),
                key.size(),
                "scheme {i}"
            );
            crate::key::INJECT_PAIR_FAULT.with(|f| f.set(true));
            assert!(
                matches!(sign(&key, &mut rng), Err(Error::FaultDetected)),
                "scheme {i}: a faulted signature was released"
            );
        }
        // About one signature in 256 starts with a zero byte: still k bytes, and valid.
        let short = (0..4000)
            .map(|_| pss.sign_digest(&key, &digest, &mut rng).unwrap())
            .find(|sig| sig[0] == 0)
            .expect("a signature with a leading zero byte");
        assert_eq!(short.len(), key.size());
        pss.verify_digest(&public, &digest, &short).unwrap();
        // A digest of the wrong length is refused the same way by both schemes.
        for result in [
            pss.sign_digest(&key, &digest[1..], &mut rng),
            v15.sign_digest(&key, &digest[1..], &mut rng),
        ] {
            assert!(matches!(
                result,
                Err(Error::InvalidParameters(ParamError::DigestLength { .. }))
            ));
        }
    }

    #[test]
    fn oaep_rejects_long_messages() {
        let key = small_key();
        let mut rng = SeededEntropy::new(b"long");
        let oaep = Oaep::new(HashAlg::Sha256);
        let max = oaep.max_message_len(key.size());
        assert!(oaep
            .encrypt(&key.public_key(), &vec![0u8; max], &mut rng)
            .is_ok());
        assert!(matches!(
            oaep.encrypt(&key.public_key(), &vec![0u8; max + 1], &mut rng),
            Err(Error::MessageTooLong { .. })
        ));
    }
}

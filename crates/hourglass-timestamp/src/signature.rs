//! The signatures real authorities make, checked with well-kept implementations: RSA PKCS#1
//! v1.5 and RSASSA-PSS (RFC 4056) by hourglass's own RSA, ECDSA over P-256, P-384 and P-521
//! with SHA-256, SHA-384 or SHA-512 in any pairing by RustCrypto's `p256`, `p384` and `p521`,
//! and Ed25519 (RFC 8419) by `ed25519-dalek`. Where ring offers the pairing (P-256 and P-384
//! with SHA-256 or SHA-384), ECDSA is ring's, about three times faster.
//!
//! One [`verify`] serves both the token's signature (a CMS SignerInfo) and every certificate
//! signature of its path, which rustls-webpki asks for through [`CHAIN_ALGORITHMS`].
//!
//! ECDSA is checked on a prehash, so that any hash fits any curve as FIPS 186-5 says: a hash
//! longer than the curve's order is cut to its leftmost bits, a shorter one is read as the
//! integer it is (sigstore signs ecdsa-with-SHA256 with a P-384 key; P-521 with SHA-256 is
//! rare but legal).

use der::asn1::{Any, ObjectIdentifier};
use der::{Sequence, Tag, Tagged};
use ecdsa::signature::hazmat::PrehashVerifier;
use hourglass_rsa::padding::{Pkcs1v15Sign, Pss};
use hourglass_rsa::{HashAlg, PublicKey};
use pki_types::{alg_id, AlgorithmIdentifier, InvalidSignature, SignatureVerificationAlgorithm};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};

use crate::oid::{
    ECDSA_WITH_SHA256, ECDSA_WITH_SHA384, ECDSA_WITH_SHA512, ID_EC_PUBLIC_KEY, ID_ED25519, ID_MGF1,
    ID_RSASSA_PSS, ID_SHA256, ID_SHA384, ID_SHA512, RSA_ENCRYPTION, SECP256R1, SECP384R1,
    SECP521R1, SHA256_WITH_RSA, SHA384_WITH_RSA, SHA512_WITH_RSA,
};

/// The smallest RSA modulus accepted in a timestamp's signature or path, in bits (NIST SP
/// 800-131A has disallowed smaller keys for signatures since 2014; rustls-webpki, browsers and
/// Go refuse them too).
pub const MIN_RSA_BITS: u32 = 2048;
/// The largest RSA modulus accepted, in bits (rustls-webpki's bound): a larger one, with a
/// large exponent, would make one certificate cost seconds to check.
pub const MAX_RSA_BITS: u32 = 8192;
/// The largest RSA public exponent accepted, in bits (authorities use 65537).
pub const MAX_RSA_EXPONENT_BITS: u32 = 64;

/// The NIST curves ECDSA authorities use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    /// P-256 (secp256r1).
    P256,
    /// P-384 (secp384r1).
    P384,
    /// P-521 (secp521r1).
    P521,
}

impl Curve {
    /// `P-256`, `P-384` or `P-521`.
    pub fn name(self) -> &'static str {
        match self {
            Curve::P256 => "P-256",
            Curve::P384 => "P-384",
            Curve::P521 => "P-521",
        }
    }

    fn from_oid(oid: ObjectIdentifier) -> Option<Self> {
        match oid {
            SECP256R1 => Some(Curve::P256),
            SECP384R1 => Some(Curve::P384),
            SECP521R1 => Some(Curve::P521),
            _ => None,
        }
    }
}

/// Why a certificate's key cannot check signatures here.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyProblem {
    /// A key algorithm or curve this verifier does not know.
    #[error("a {0} key, which this verifier does not support (it checks RSA, ECDSA over P-256, P-384 or P-521, and Ed25519)")]
    Unsupported(String),
    /// An RSA modulus below [`MIN_RSA_BITS`].
    #[error("an RSA-{bits} key: keys below {MIN_RSA_BITS} bits are refused (NIST SP 800-131A)")]
    WeakRsa {
        /// The modulus's size.
        bits: u32,
    },
    /// Key bytes that do not decode as the algorithm says.
    #[error("a {what} key that does not decode")]
    Malformed {
        /// The key's algorithm.
        what: &'static str,
    },
}

/// A public key that checks signatures: an authority's, or a CA's in its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VerifyingKey {
    /// An RSA key (`rsaEncryption`), at least [`MIN_RSA_BITS`].
    Rsa(PublicKey),
    /// An ECDSA key: its curve and SEC1 point (checked to be on the curve).
    Ecdsa {
        /// The curve.
        curve: Curve,
        /// The SEC1 encoding of the point.
        point: Vec<u8>,
    },
    /// An Ed25519 key.
    Ed25519([u8; 32]),
}

impl VerifyingKey {
    /// Reads a certificate's SubjectPublicKeyInfo.
    pub fn from_spki(spki: &SubjectPublicKeyInfoOwned) -> Result<Self, KeyProblem> {
        let bits = spki.subject_public_key.as_bytes();
        match spki.algorithm.oid {
            RSA_ENCRYPTION => {
                let (n, e) = hourglass_x509::key::rsa_components(spki)
                    .map_err(|_| KeyProblem::Malformed { what: "RSA" })?;
                Self::rsa(n, e)
            }
            ID_EC_PUBLIC_KEY => {
                let curve = spki
                    .algorithm
                    .parameters
                    .as_ref()
                    .and_then(|p| p.decode_as::<ObjectIdentifier>().ok())
                    .ok_or(KeyProblem::Unsupported(
                        "EC key without a named curve".into(),
                    ))?;
                let curve = Curve::from_oid(curve)
                    .ok_or_else(|| KeyProblem::Unsupported(format!("EC ({curve})")))?;
                let point = bits.ok_or(KeyProblem::Malformed { what: "EC" })?;
                Self::ecdsa(curve, point)
            }
            ID_ED25519 => {
                let key: [u8; 32] = bits
                    .and_then(|b| b.try_into().ok())
                    .ok_or(KeyProblem::Malformed { what: "Ed25519" })?;
                Self::ed25519(key)
            }
            other => Err(KeyProblem::Unsupported(match other {
                ID_RSASSA_PSS => "RSASSA-PSS-only RSA".to_string(),
                _ => format!("{other}"),
            })),
        }
    }

    fn rsa(n: hourglass_arith::Integer, e: hourglass_arith::Integer) -> Result<Self, KeyProblem> {
        let bits = n.significant_bits();
        if bits < MIN_RSA_BITS {
            return Err(KeyProblem::WeakRsa { bits });
        }
        if bits > MAX_RSA_BITS || e.significant_bits() > MAX_RSA_EXPONENT_BITS {
            return Err(KeyProblem::Unsupported(format!(
                "RSA-{bits} with a {}-bit public exponent (at most {MAX_RSA_BITS} bits and a {MAX_RSA_EXPONENT_BITS}-bit exponent are read)",
                e.significant_bits()
            )));
        }
        PublicKey::new(n, e)
            .map(VerifyingKey::Rsa)
            .map_err(|_| KeyProblem::Malformed { what: "RSA" })
    }

    fn ecdsa(curve: Curve, point: &[u8]) -> Result<Self, KeyProblem> {
        let on_curve = match curve {
            Curve::P256 => p256::ecdsa::VerifyingKey::from_sec1_bytes(point).is_ok(),
            Curve::P384 => p384::ecdsa::VerifyingKey::from_sec1_bytes(point).is_ok(),
            Curve::P521 => p521::ecdsa::VerifyingKey::from_sec1_bytes(point).is_ok(),
        };
        if !on_curve {
            return Err(KeyProblem::Malformed { what: curve.name() });
        }
        Ok(VerifyingKey::Ecdsa {
            curve,
            point: point.to_vec(),
        })
    }

    fn ed25519(key: [u8; 32]) -> Result<Self, KeyProblem> {
        ed25519_dalek::VerifyingKey::from_bytes(&key)
            .map_err(|_| KeyProblem::Malformed { what: "Ed25519" })?;
        Ok(VerifyingKey::Ed25519(key))
    }

    /// `RSA-4096`, `ECDSA P-384` or `Ed25519`.
    pub fn describe(&self) -> String {
        match self {
            VerifyingKey::Rsa(k) => format!("RSA-{}", k.bits()),
            VerifyingKey::Ecdsa { curve, .. } => format!("ECDSA {}", curve.name()),
            VerifyingKey::Ed25519(_) => "Ed25519".into(),
        }
    }
}

/// A signature algorithm as a signer names it, with the parameters that matter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignatureAlgorithm {
    /// RSASSA-PKCS1-v1_5 with this hash.
    RsaPkcs1(HashAlg),
    /// RSASSA-PSS with this hash (MGF1 with the same hash) and salt length.
    RsaPss {
        /// The message hash and MGF1's.
        hash: HashAlg,
        /// The salt's length, in bytes.
        salt_len: usize,
    },
    /// ECDSA with this hash.
    Ecdsa(HashAlg),
    /// Ed25519 (pure: the message itself is signed).
    Ed25519,
}

/// Why a signer's algorithm is not one this verifier checks.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AlgorithmProblem {
    /// An algorithm this verifier does not know (or refuses: SHA-1, MD5).
    #[error("unsupported signature algorithm {0} (this verifier checks RSA PKCS#1 v1.5 and PSS, ECDSA and Ed25519 with SHA-256, SHA-384 or SHA-512)")]
    Unsupported(String),
    /// Parameters the algorithm does not take, or that do not decode.
    #[error("the parameters of {0} are not the ones it takes")]
    Parameters(&'static str),
    /// A signature algorithm whose hash is not the signer's digest algorithm.
    #[error("the signature algorithm's hash ({signature}) is not the digest algorithm ({digest})")]
    HashMismatch {
        /// The signature algorithm's hash.
        signature: &'static str,
        /// The digest algorithm.
        digest: &'static str,
    },
}

/// `RSASSA-PSS-params` (RFC 4055 section 3.1).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct PssParams {
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT", optional = "true")]
    hash: Option<AlgorithmIdentifierOwned>,
    #[asn1(context_specific = "1", tag_mode = "EXPLICIT", optional = "true")]
    mask_gen: Option<AlgorithmIdentifierOwned>,
    #[asn1(context_specific = "2", tag_mode = "EXPLICIT", optional = "true")]
    salt_len: Option<u32>,
    #[asn1(context_specific = "3", tag_mode = "EXPLICIT", optional = "true")]
    trailer: Option<u32>,
}

/// The SHA-2 hash of a digest algorithm identifier (parameters absent or NULL), or `None`.
pub fn sha2_of(alg: &AlgorithmIdentifierOwned) -> Option<HashAlg> {
    let hash = match alg.oid {
        ID_SHA256 => HashAlg::Sha256,
        ID_SHA384 => HashAlg::Sha384,
        ID_SHA512 => HashAlg::Sha512,
        _ => return None,
    };
    null_or_absent(alg.parameters.as_ref()).then_some(hash)
}

fn null_or_absent(p: Option<&Any>) -> bool {
    p.is_none_or(|p| p.tag() == Tag::Null && p.value().is_empty())
}

/// `SHA-256`, `SHA-384` or `SHA-512`.
pub fn hash_name(hash: HashAlg) -> &'static str {
    match hash {
        HashAlg::Sha1 => "SHA-1",
        HashAlg::Sha256 => "SHA-256",
        HashAlg::Sha384 => "SHA-384",
        HashAlg::Sha512 => "SHA-512",
    }
}

impl SignatureAlgorithm {
    /// The algorithm of a CMS SignerInfo: its `signatureAlgorithm`, with `digest` (the
    /// `digestAlgorithm`) as the hash of `rsaEncryption` and `id-ecPublicKey`, and required to
    /// be the hash that `sha*WithRSAEncryption` and `ecdsa-with-SHA*` name.
    pub fn of_signer(
        alg: &AlgorithmIdentifierOwned,
        digest: HashAlg,
    ) -> Result<Self, AlgorithmProblem> {
        let named = |hash: HashAlg, what: &'static str| {
            if hash != digest {
                return Err(AlgorithmProblem::HashMismatch {
                    signature: hash_name(hash),
                    digest: hash_name(digest),
                });
            }
            if !null_or_absent(alg.parameters.as_ref()) {
                return Err(AlgorithmProblem::Parameters(what));
            }
            Ok(hash)
        };
        let ecdsa = |hash: HashAlg| {
            if alg.parameters.is_some() {
                return Err(AlgorithmProblem::Parameters("ECDSA"));
            }
            named(hash, "ECDSA").map(SignatureAlgorithm::Ecdsa)
        };
        match alg.oid {
            RSA_ENCRYPTION => named(digest, "rsaEncryption").map(SignatureAlgorithm::RsaPkcs1),
            SHA256_WITH_RSA => {
                named(HashAlg::Sha256, "sha256WithRSAEncryption").map(SignatureAlgorithm::RsaPkcs1)
            }
            SHA384_WITH_RSA => {
                named(HashAlg::Sha384, "sha384WithRSAEncryption").map(SignatureAlgorithm::RsaPkcs1)
            }
            SHA512_WITH_RSA => {
                named(HashAlg::Sha512, "sha512WithRSAEncryption").map(SignatureAlgorithm::RsaPkcs1)
            }
            ECDSA_WITH_SHA256 => ecdsa(HashAlg::Sha256),
            ECDSA_WITH_SHA384 => ecdsa(HashAlg::Sha384),
            ECDSA_WITH_SHA512 => ecdsa(HashAlg::Sha512),
            // Some signers name the key's algorithm and let the digest algorithm say the hash.
            ID_EC_PUBLIC_KEY => {
                if !null_or_absent(alg.parameters.as_ref()) {
                    return Err(AlgorithmProblem::Parameters("id-ecPublicKey"));
                }
                Ok(SignatureAlgorithm::Ecdsa(digest))
            }
            ID_RSASSA_PSS => {
                let (hash, salt_len) = pss_params(alg)?;
                if hash != digest {
                    return Err(AlgorithmProblem::HashMismatch {
                        signature: hash_name(hash),
                        digest: hash_name(digest),
                    });
                }
                Ok(SignatureAlgorithm::RsaPss { hash, salt_len })
            }
            ID_ED25519 => {
                if alg.parameters.is_some() {
                    return Err(AlgorithmProblem::Parameters("Ed25519"));
                }
                Ok(SignatureAlgorithm::Ed25519)
            }
            other => Err(AlgorithmProblem::Unsupported(other.to_string())),
        }
    }

    /// How verdicts name it: `ecdsa-with-SHA256`, `sha512WithRSAEncryption`,
    /// `RSASSA-PSS (SHA-256, MGF1, salt 32)`, `Ed25519`.
    pub fn name(&self) -> String {
        match self {
            SignatureAlgorithm::RsaPkcs1(h) => format!("{}WithRSAEncryption", h.name()),
            SignatureAlgorithm::RsaPss { hash, salt_len } => {
                format!("RSASSA-PSS ({}, MGF1, salt {salt_len})", hash_name(*hash))
            }
            SignatureAlgorithm::Ecdsa(h) => {
                format!("ecdsa-with-{}", hash_name(*h).replace('-', ""))
            }
            SignatureAlgorithm::Ed25519 => "Ed25519".into(),
        }
    }
}

/// The hash and salt length of RSASSA-PSS parameters: SHA-2 with MGF1 over the same hash and
/// the trailer field 1. The parameters must be present (RFC 4056 section 2); the DEFAULT of
/// SHA-1 is refused.
fn pss_params(alg: &AlgorithmIdentifierOwned) -> Result<(HashAlg, usize), AlgorithmProblem> {
    let bad = AlgorithmProblem::Parameters("RSASSA-PSS");
    let params: PssParams = alg
        .parameters
        .as_ref()
        .ok_or(bad.clone())?
        .decode_as()
        .map_err(|_| bad.clone())?;
    let hash = params
        .hash
        .as_ref()
        .and_then(sha2_of)
        .ok_or(AlgorithmProblem::Unsupported(
            "RSASSA-PSS with SHA-1 or another hash".into(),
        ))?;
    let mgf = params.mask_gen.as_ref().ok_or(bad.clone())?;
    let mgf_hash = (mgf.oid == ID_MGF1)
        .then_some(mgf.parameters.as_ref())
        .flatten()
        .and_then(|p| p.decode_as::<AlgorithmIdentifierOwned>().ok())
        .and_then(|a| sha2_of(&a));
    if mgf_hash != Some(hash) {
        return Err(AlgorithmProblem::Unsupported(
            "RSASSA-PSS whose MGF1 hash is not its message hash".into(),
        ));
    }
    if params.trailer.is_some_and(|t| t != 1) {
        return Err(bad);
    }
    let salt_len = params.salt_len.unwrap_or(20) as usize;
    Ok((hash, salt_len))
}

/// Why a signature was not accepted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureProblem {
    /// The algorithm is not one of the key's (an ECDSA signature under an RSA key).
    #[error("a {algorithm} signature cannot come from a {key} key")]
    WrongKey {
        /// The signature's algorithm.
        algorithm: String,
        /// The key.
        key: String,
    },
    /// The signature does not verify.
    #[error("the signature does not verify")]
    Invalid,
}

/// Checks `signature` over `message` with `key` and `alg`.
pub fn verify(
    key: &VerifyingKey,
    alg: SignatureAlgorithm,
    message: &[u8],
    signature: &[u8],
) -> Result<(), SignatureProblem> {
    let ok = match (key, alg) {
        (VerifyingKey::Rsa(k), SignatureAlgorithm::RsaPkcs1(hash)) => Pkcs1v15Sign::new(hash)
            .verify(k, message, signature)
            .is_ok(),
        (VerifyingKey::Rsa(k), SignatureAlgorithm::RsaPss { hash, salt_len }) => Pss::new(hash)
            .salt_len(salt_len)
            .verify(k, message, signature)
            .is_ok(),
        (VerifyingKey::Ecdsa { curve, point }, SignatureAlgorithm::Ecdsa(hash)) => {
            match ring_ecdsa(*curve, hash) {
                Some(alg) => ring::signature::UnparsedPublicKey::new(alg, point)
                    .verify(message, signature)
                    .is_ok(),
                None => ecdsa_verify(*curve, point, &hash.digest(message), signature),
            }
        }
        (VerifyingKey::Ed25519(k), SignatureAlgorithm::Ed25519) => {
            let sig = ed25519_dalek::Signature::from_slice(signature);
            let vk = ed25519_dalek::VerifyingKey::from_bytes(k);
            matches!((vk, sig), (Ok(vk), Ok(sig)) if vk.verify_strict(message, &sig).is_ok())
        }
        (key, alg) => {
            return Err(SignatureProblem::WrongKey {
                algorithm: alg.name(),
                key: key.describe(),
            })
        }
    };
    if ok {
        Ok(())
    } else {
        Err(SignatureProblem::Invalid)
    }
}

/// ring's ECDSA for the pairings it offers (P-256 and P-384 with SHA-256 or SHA-384, ASN.1
/// signatures), about three times faster than RustCrypto's; `None` for the others.
fn ring_ecdsa(
    curve: Curve,
    hash: HashAlg,
) -> Option<&'static ring::signature::EcdsaVerificationAlgorithm> {
    use ring::signature::{
        ECDSA_P256_SHA256_ASN1, ECDSA_P256_SHA384_ASN1, ECDSA_P384_SHA256_ASN1,
        ECDSA_P384_SHA384_ASN1,
    };
    match (curve, hash) {
        (Curve::P256, HashAlg::Sha256) => Some(&ECDSA_P256_SHA256_ASN1),
        (Curve::P256, HashAlg::Sha384) => Some(&ECDSA_P256_SHA384_ASN1),
        (Curve::P384, HashAlg::Sha256) => Some(&ECDSA_P384_SHA256_ASN1),
        (Curve::P384, HashAlg::Sha384) => Some(&ECDSA_P384_SHA384_ASN1),
        _ => None,
    }
}

/// ECDSA on a prehash of any SHA-2 size (RustCrypto's), for the pairings ring does not offer. RustCrypto's `bits2field` reads a prehash shorter than
/// the field as the integer it is but refuses one shorter than half the field (SHA-256 under
/// P-521): a zero byte in front keeps its value and lifts it over that bound.
fn ecdsa_verify(curve: Curve, point: &[u8], prehash: &[u8], signature: &[u8]) -> bool {
    match curve {
        Curve::P256 => {
            let (Ok(vk), Ok(sig)) = (
                p256::ecdsa::VerifyingKey::from_sec1_bytes(point),
                p256::ecdsa::Signature::from_der(signature),
            ) else {
                return false;
            };
            vk.verify_prehash(prehash, &sig).is_ok()
        }
        Curve::P384 => {
            let (Ok(vk), Ok(sig)) = (
                p384::ecdsa::VerifyingKey::from_sec1_bytes(point),
                p384::ecdsa::Signature::from_der(signature),
            ) else {
                return false;
            };
            vk.verify_prehash(prehash, &sig).is_ok()
        }
        Curve::P521 => {
            let (Ok(vk), Ok(sig)) = (
                p521::ecdsa::VerifyingKey::from_sec1_bytes(point),
                p521::ecdsa::Signature::from_der(signature),
            ) else {
                return false;
            };
            let mut padded = vec![0u8; 33usize.saturating_sub(prehash.len())];
            padded.extend_from_slice(prehash);
            vk.verify_prehash(&padded, &sig).is_ok()
        }
    }
}

/// One certificate signature algorithm offered to rustls-webpki: the key's and the signature's
/// AlgorithmIdentifier (as webpki compares them, byte for byte) and how to check it.
#[derive(Debug)]
struct ChainAlgorithm {
    key: AlgorithmIdentifier,
    signature: AlgorithmIdentifier,
    scheme: Scheme,
    alg: SignatureAlgorithm,
}

#[derive(Debug, Clone, Copy)]
enum Scheme {
    Rsa,
    Ecdsa(Curve),
    Ed25519,
}

impl SignatureVerificationAlgorithm for ChainAlgorithm {
    fn verify_signature(
        &self,
        public_key: &[u8],
        message: &[u8],
        signature: &[u8],
    ) -> Result<(), InvalidSignature> {
        let key = match self.scheme {
            Scheme::Rsa => hourglass_x509::key::rsa_public_key(public_key)
                .ok()
                .and_then(|(n, e)| VerifyingKey::rsa(n, e).ok()),
            Scheme::Ecdsa(curve) => VerifyingKey::ecdsa(curve, public_key).ok(),
            Scheme::Ed25519 => public_key
                .try_into()
                .ok()
                .and_then(|k| VerifyingKey::ed25519(k).ok()),
        };
        match key {
            Some(key) if verify(&key, self.alg, message, signature).is_ok() => Ok(()),
            _ => Err(InvalidSignature),
        }
    }

    fn public_key_alg_id(&self) -> AlgorithmIdentifier {
        self.key
    }

    fn signature_alg_id(&self) -> AlgorithmIdentifier {
        self.signature
    }
}

macro_rules! chain_algorithm {
    ($name:ident, $key:expr, $sig:expr, $scheme:expr, $alg:expr) => {
        static $name: ChainAlgorithm = ChainAlgorithm {
            key: $key,
            signature: $sig,
            scheme: $scheme,
            alg: $alg,
        };
    };
}

chain_algorithm!(
    RSA_SHA256,
    alg_id::RSA_ENCRYPTION,
    alg_id::RSA_PKCS1_SHA256,
    Scheme::Rsa,
    SignatureAlgorithm::RsaPkcs1(HashAlg::Sha256)
);
chain_algorithm!(
    RSA_SHA384,
    alg_id::RSA_ENCRYPTION,
    alg_id::RSA_PKCS1_SHA384,
    Scheme::Rsa,
    SignatureAlgorithm::RsaPkcs1(HashAlg::Sha384)
);
chain_algorithm!(
    RSA_SHA512,
    alg_id::RSA_ENCRYPTION,
    alg_id::RSA_PKCS1_SHA512,
    Scheme::Rsa,
    SignatureAlgorithm::RsaPkcs1(HashAlg::Sha512)
);
chain_algorithm!(
    PSS_SHA256,
    alg_id::RSA_ENCRYPTION,
    alg_id::RSA_PSS_SHA256,
    Scheme::Rsa,
    SignatureAlgorithm::RsaPss {
        hash: HashAlg::Sha256,
        salt_len: 32
    }
);
chain_algorithm!(
    PSS_SHA384,
    alg_id::RSA_ENCRYPTION,
    alg_id::RSA_PSS_SHA384,
    Scheme::Rsa,
    SignatureAlgorithm::RsaPss {
        hash: HashAlg::Sha384,
        salt_len: 48
    }
);
chain_algorithm!(
    PSS_SHA512,
    alg_id::RSA_ENCRYPTION,
    alg_id::RSA_PSS_SHA512,
    Scheme::Rsa,
    SignatureAlgorithm::RsaPss {
        hash: HashAlg::Sha512,
        salt_len: 64
    }
);
chain_algorithm!(
    P256_SHA256,
    alg_id::ECDSA_P256,
    alg_id::ECDSA_SHA256,
    Scheme::Ecdsa(Curve::P256),
    SignatureAlgorithm::Ecdsa(HashAlg::Sha256)
);
chain_algorithm!(
    P256_SHA384,
    alg_id::ECDSA_P256,
    alg_id::ECDSA_SHA384,
    Scheme::Ecdsa(Curve::P256),
    SignatureAlgorithm::Ecdsa(HashAlg::Sha384)
);
chain_algorithm!(
    P256_SHA512,
    alg_id::ECDSA_P256,
    alg_id::ECDSA_SHA512,
    Scheme::Ecdsa(Curve::P256),
    SignatureAlgorithm::Ecdsa(HashAlg::Sha512)
);
chain_algorithm!(
    P384_SHA256,
    alg_id::ECDSA_P384,
    alg_id::ECDSA_SHA256,
    Scheme::Ecdsa(Curve::P384),
    SignatureAlgorithm::Ecdsa(HashAlg::Sha256)
);
chain_algorithm!(
    P384_SHA384,
    alg_id::ECDSA_P384,
    alg_id::ECDSA_SHA384,
    Scheme::Ecdsa(Curve::P384),
    SignatureAlgorithm::Ecdsa(HashAlg::Sha384)
);
chain_algorithm!(
    P384_SHA512,
    alg_id::ECDSA_P384,
    alg_id::ECDSA_SHA512,
    Scheme::Ecdsa(Curve::P384),
    SignatureAlgorithm::Ecdsa(HashAlg::Sha512)
);
chain_algorithm!(
    P521_SHA256,
    alg_id::ECDSA_P521,
    alg_id::ECDSA_SHA256,
    Scheme::Ecdsa(Curve::P521),
    SignatureAlgorithm::Ecdsa(HashAlg::Sha256)
);
chain_algorithm!(
    P521_SHA384,
    alg_id::ECDSA_P521,
    alg_id::ECDSA_SHA384,
    Scheme::Ecdsa(Curve::P521),
    SignatureAlgorithm::Ecdsa(HashAlg::Sha384)
);
chain_algorithm!(
    P521_SHA512,
    alg_id::ECDSA_P521,
    alg_id::ECDSA_SHA512,
    Scheme::Ecdsa(Curve::P521),
    SignatureAlgorithm::Ecdsa(HashAlg::Sha512)
);
chain_algorithm!(
    ED25519,
    alg_id::ED25519,
    alg_id::ED25519,
    Scheme::Ed25519,
    SignatureAlgorithm::Ed25519
);

/// The certificate signatures a path may carry, for rustls-webpki: RSA PKCS#1 v1.5 and PSS
/// with SHA-256/384/512 (keys of at least [`MIN_RSA_BITS`]), ECDSA over P-256, P-384 and P-521
/// with each of the three hashes, and Ed25519.
pub static CHAIN_ALGORITHMS: &[&dyn SignatureVerificationAlgorithm] = &[
    &RSA_SHA256,
    &RSA_SHA384,
    &RSA_SHA512,
    &PSS_SHA256,
    &PSS_SHA384,
    &PSS_SHA512,
    &P256_SHA256,
    &P256_SHA384,
    &P256_SHA512,
    &P384_SHA256,
    &P384_SHA384,
    &P384_SHA512,
    &P521_SHA256,
    &P521_SHA384,
    &P521_SHA512,
    &ED25519,
];

#[cfg(test)]
mod tests {
    use super::*;
    use ecdsa::signature::hazmat::{PrehashSigner, RandomizedPrehashSigner};

    /// A predictable "random" source for the one signer that wants one (test only).
    struct Counter(u8);

    impl rand_core::RngCore for Counter {
        fn next_u32(&mut self) -> u32 {
            rand_core::impls::next_u32_via_fill(self)
        }
        fn next_u64(&mut self) -> u64 {
            rand_core::impls::next_u64_via_fill(self)
        }
        fn fill_bytes(&mut self, dest: &mut [u8]) {
            for b in dest {
                self.0 = self.0.wrapping_add(1);
                *b = self.0;
            }
        }
        fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
            self.fill_bytes(dest);
            Ok(())
        }
    }

    impl rand_core::CryptoRng for Counter {}

    /// Every curve beside every hash: a signature RustCrypto makes verifies through [`verify`]
    /// (ring where it offers the pairing) and through RustCrypto's own path, and one bit off in
    /// the message or the signature is refused by both.
    #[test]
    fn ring_and_rustcrypto_agree_on_every_pairing() {
        let msg = b"signed attributes";
        for hash in [HashAlg::Sha256, HashAlg::Sha384, HashAlg::Sha512] {
            let prehash = hash.digest(msg);
            let mut padded = vec![0u8; 33usize.saturating_sub(prehash.len())];
            padded.extend_from_slice(&prehash);
            let cases: [(Curve, Vec<u8>, Vec<u8>); 3] = [
                {
                    let k = p256::ecdsa::SigningKey::from_slice(&[7; 32]).unwrap();
                    let sig: p256::ecdsa::Signature = k.sign_prehash(&prehash).unwrap();
                    let point = k.verifying_key().to_encoded_point(false);
                    (
                        Curve::P256,
                        point.as_bytes().to_vec(),
                        sig.to_der().to_bytes().to_vec(),
                    )
                },
                {
                    let k = p384::ecdsa::SigningKey::from_slice(&[7; 48]).unwrap();
                    let sig: p384::ecdsa::Signature = k.sign_prehash(&prehash).unwrap();
                    let point = k.verifying_key().to_encoded_point(false);
                    (
                        Curve::P384,
                        point.as_bytes().to_vec(),
                        sig.to_der().to_bytes().to_vec(),
                    )
                },
                {
                    let mut seed = [7u8; 66];
                    seed[0] = 1;
                    let k = p521::ecdsa::SigningKey::from_slice(&seed).unwrap();
                    let sig: p521::ecdsa::Signature =
                        k.sign_prehash_with_rng(&mut Counter(0), &padded).unwrap();
                    let point = p521::ecdsa::VerifyingKey::from(&k).to_encoded_point(false);
                    (
                        Curve::P521,
                        point.as_bytes().to_vec(),
                        sig.to_der().to_bytes().to_vec(),
                    )
                },
            ];
            for (curve, point, sig) in cases {
                let key = VerifyingKey::ecdsa(curve, &point).unwrap();
                let alg = SignatureAlgorithm::Ecdsa(hash);
                assert_eq!(verify(&key, alg, msg, &sig), Ok(()), "{curve:?} {hash:?}");
                assert!(
                    ecdsa_verify(curve, &point, &prehash, &sig),
                    "{curve:?} {hash:?}"
                );
                let mut bad = sig.clone();
                let last = bad.len() - 1;
                bad[last] ^= 1;
                assert!(verify(&key, alg, msg, &bad).is_err(), "{curve:?} {hash:?}");
                assert!(!ecdsa_verify(curve, &point, &prehash, &bad));
                assert!(verify(&key, alg, b"other attributes", &sig).is_err());
                assert_eq!(
                    ring_ecdsa(curve, hash).is_some(),
                    curve != Curve::P521 && hash != HashAlg::Sha512
                );
            }
        }
    }

    #[test]
    fn keys_and_algorithms_that_do_not_fit_are_refused() {
        let k = p256::ecdsa::SigningKey::from_slice(&[7; 32]).unwrap();
        let point = k.verifying_key().to_encoded_point(false);
        let key = VerifyingKey::ecdsa(Curve::P256, point.as_bytes()).unwrap();
        assert!(matches!(
            verify(
                &key,
                SignatureAlgorithm::RsaPkcs1(HashAlg::Sha256),
                b"m",
                &[0; 64]
            ),
            Err(SignatureProblem::WrongKey { .. })
        ));
        // A point that is not on the curve is no key.
        let mut off = point.as_bytes().to_vec();
        off[10] ^= 1;
        assert!(VerifyingKey::ecdsa(Curve::P256, &off).is_err());
        assert!(VerifyingKey::ecdsa(Curve::P384, point.as_bytes()).is_err());
    }
}

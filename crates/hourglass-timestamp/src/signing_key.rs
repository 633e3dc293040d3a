//! The key an authority signs tokens with: RSA (hourglass's own: blinded, constant-time,
//! fault-checked) or ECDSA over P-256 or P-384 (RustCrypto's constant-time signers, zeroized on
//! drop; each signature hedged with fresh entropy and checked before it is released).

use der::pem::LineEnding;
use ecdsa::signature::hazmat::RandomizedPrehashSigner;
use hourglass_arith::entropy::EntropySource;
use hourglass_rsa::encoding::{decode_private_key, encode_private_key, KeyFormat};
use hourglass_rsa::padding::Pkcs1v15Sign;
use hourglass_rsa::{HashAlg, KeyGenOptions, PrivateKey, Variant};
use pkcs8::{DecodePrivateKey, EncodePrivateKey, EncodePublicKey};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use zeroize::Zeroizing;

use crate::asn1::null;
use crate::oid::{ECDSA_WITH_SHA256, ECDSA_WITH_SHA384, SHA256_WITH_RSA};
use crate::signature::{verify, Curve, SignatureAlgorithm, VerifyingKey};

/// The kinds of key an authority made here signs with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TsaKeyType {
    /// RSA-3072 with PKCS#1 v1.5 and SHA-256.
    Rsa3072,
    /// ECDSA P-256 with SHA-256: the default. Its security level is RSA-3072's (128 bits), every
    /// common verifier (`openssl ts -verify`, Python `cryptography`) reads it, and a token costs
    /// a small fraction of an RSA-3072 one (`hourglass bench tsa`), which is what lets a service
    /// stamp a deadline rush of uploads as they arrive.
    #[default]
    EcdsaP256,
    /// ECDSA P-384 with SHA-384.
    EcdsaP384,
}

impl TsaKeyType {
    /// Every kind, in the order the command line lists them.
    pub const ALL: [TsaKeyType; 3] = [
        TsaKeyType::Rsa3072,
        TsaKeyType::EcdsaP256,
        TsaKeyType::EcdsaP384,
    ];

    /// `rsa-3072`, `ecdsa-p256` or `ecdsa-p384`, as the command line names them.
    pub fn name(self) -> &'static str {
        match self {
            TsaKeyType::Rsa3072 => "rsa-3072",
            TsaKeyType::EcdsaP256 => "ecdsa-p256",
            TsaKeyType::EcdsaP384 => "ecdsa-p384",
        }
    }

    /// The kind the command line names `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.name() == name)
    }

    /// The names of every kind, joined for a message: `rsa-3072, ecdsa-p256 or ecdsa-p384`.
    pub fn names() -> String {
        let last = Self::ALL.len() - 1;
        let mut text = String::new();
        for (i, kind) in Self::ALL.iter().enumerate() {
            text.push_str(match i {
                0 => "",
                _ if i == last => " or ",
                _ => ", ",
            });
            text.push_str(kind.name());
        }
        text
    }
}

/// Why an authority's key could not be made, read, written or used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// A PEM file that holds no key this authority signs with.
    #[error("not an RSA, P-256 or P-384 private key (PKCS#8 PEM, PKCS#1 or SEC1 PEM)")]
    Unreadable,
    /// The RSA key failed (entropy, the fault check).
    #[error(transparent)]
    Rsa(#[from] hourglass_rsa::Error),
    /// An ECDSA key or signature failed (entropy, the check of the signature made).
    #[error("ECDSA: {0}")]
    Ecdsa(String),
}

/// An authority's private key.
// One key per authority, moved rarely: the RSA variant's size costs nothing worth a box.
#[allow(clippy::large_enum_variant)]
pub enum TsaKey {
    /// RSA.
    Rsa(PrivateKey),
    /// ECDSA over P-256.
    EcdsaP256(Box<p256::ecdsa::SigningKey>),
    /// ECDSA over P-384.
    EcdsaP384(Box<p384::ecdsa::SigningKey>),
}

impl std::fmt::Debug for TsaKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TsaKey({})", self.describe())
    }
}

/// Our entropy source as RustCrypto's random number generator (the hedge of ECDSA nonces).
struct Rng<'a>(&'a mut dyn EntropySource);

impl rand_core::RngCore for Rng<'_> {
    fn next_u32(&mut self) -> u32 {
        let mut b = [0u8; 4];
        self.fill_bytes(&mut b);
        u32::from_le_bytes(b)
    }

    fn next_u64(&mut self) -> u64 {
        let mut b = [0u8; 8];
        self.fill_bytes(&mut b);
        u64::from_le_bytes(b)
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        // The trait cannot fail here; a failing source leaves zeros, which the RFC 6979 nonce
        // derivation (keyed by the secret key) still makes safe, and try_fill_bytes reports.
        if self.0.fill(dest).is_err() {
            dest.fill(0);
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand_core::Error> {
        self.0
            .fill(dest)
            .map_err(|e| rand_core::Error::new(std::io::Error::other(e.to_string())))
    }
}

impl rand_core::CryptoRng for Rng<'_> {}

/// An ECDSA secret scalar of `bytes` bytes, by rejection sampling: a seed that is not a scalar
/// (zero, or at or above the order: about 2^-32 for P-256, 2^-190 for P-384) is drawn again.
fn draw<K>(
    bytes: usize,
    rng: &mut dyn EntropySource,
    key: impl Fn(&[u8]) -> Option<K>,
) -> Result<K, KeyError> {
    let mut seed = Zeroizing::new(vec![0u8; bytes]);
    loop {
        rng.fill(seed.as_mut())
            .map_err(|e| KeyError::Ecdsa(e.to_string()))?;
        if let Some(k) = key(seed.as_ref()) {
            return Ok(k);
        }
    }
}

impl TsaKey {
    /// A new key of `kind`.
    pub fn generate(kind: TsaKeyType, rng: &mut dyn EntropySource) -> Result<Self, KeyError> {
        match kind {
            TsaKeyType::Rsa3072 => Ok(TsaKey::Rsa(
                KeyGenOptions::new(3072, Variant::Crt).generate(rng)?,
            )),
            TsaKeyType::EcdsaP256 => Ok(TsaKey::EcdsaP256(Box::new(draw(32, rng, |seed| {
                p256::ecdsa::SigningKey::from_slice(seed).ok()
            })?))),
            TsaKeyType::EcdsaP384 => Ok(TsaKey::EcdsaP384(Box::new(draw(48, rng, |seed| {
                p384::ecdsa::SigningKey::from_slice(seed).ok()
            })?))),
        }
    }

    /// Reads a private key: RSA (PKCS#8 or PKCS#1 PEM) or EC over P-256 or P-384 (PKCS#8 or
    /// SEC1 PEM, as `openssl genpkey` and `openssl ecparam -genkey` write them).
    pub fn from_pem(pem: &[u8]) -> Result<Self, KeyError> {
        if let Ok(k) = decode_private_key(pem) {
            return Ok(TsaKey::Rsa(k));
        }
        let text = std::str::from_utf8(pem).map_err(|_| KeyError::Unreadable)?;
        if let Ok(k) =
            p384::SecretKey::from_pkcs8_pem(text).or_else(|_| p384::SecretKey::from_sec1_pem(text))
        {
            return Ok(TsaKey::EcdsaP384(Box::new(k.into())));
        }
        if let Ok(k) =
            p256::SecretKey::from_pkcs8_pem(text).or_else(|_| p256::SecretKey::from_sec1_pem(text))
        {
            return Ok(TsaKey::EcdsaP256(Box::new(k.into())));
        }
        Err(KeyError::Unreadable)
    }

    /// The key as unencrypted PKCS#8 PEM (what `openssl genpkey` writes), for a file of mode
    /// 0600.
    pub fn to_pem(&self) -> Result<Zeroizing<String>, KeyError> {
        let ec = |e: pkcs8::Error| KeyError::Ecdsa(e.to_string());
        match self {
            TsaKey::Rsa(k) => {
                let pem = encode_private_key(k, KeyFormat::Pem)?;
                Ok(Zeroizing::new(String::from_utf8_lossy(&pem).into_owned()))
            }
            TsaKey::EcdsaP256(k) => p256::SecretKey::from(k.as_nonzero_scalar())
                .to_pkcs8_pem(LineEnding::LF)
                .map_err(ec),
            TsaKey::EcdsaP384(k) => p384::SecretKey::from(k.as_nonzero_scalar())
                .to_pkcs8_pem(LineEnding::LF)
                .map_err(ec),
        }
    }

    /// The public key's SubjectPublicKeyInfo, for the authority's certificate.
    pub fn spki(&self) -> Result<SubjectPublicKeyInfoOwned, KeyError> {
        let ec = |e: spki::Error| KeyError::Ecdsa(e.to_string());
        let der = match self {
            TsaKey::Rsa(k) => {
                return hourglass_x509::key::rsa_spki(k.public().n(), k.public().e())
                    .map_err(|e| KeyError::Ecdsa(e.to_string()))
            }
            TsaKey::EcdsaP256(k) => k.verifying_key().to_public_key_der().map_err(ec)?,
            TsaKey::EcdsaP384(k) => k.verifying_key().to_public_key_der().map_err(ec)?,
        };
        use der::Decode;
        SubjectPublicKeyInfoOwned::from_der(der.as_bytes())
            .map_err(|e| KeyError::Ecdsa(e.to_string()))
    }

    /// The public key, as a verifier reads it from a certificate.
    pub fn verifying_key(&self) -> Option<VerifyingKey> {
        VerifyingKey::from_spki(&self.spki().ok()?).ok()
    }

    /// The kind of key, if it is one an authority is made with here.
    pub fn kind(&self) -> Option<TsaKeyType> {
        match self {
            TsaKey::Rsa(k) if k.public().bits() == 3072 => Some(TsaKeyType::Rsa3072),
            TsaKey::EcdsaP256(_) => Some(TsaKeyType::EcdsaP256),
            TsaKey::EcdsaP384(_) => Some(TsaKeyType::EcdsaP384),
            TsaKey::Rsa(_) => None,
        }
    }

    /// `RSA-3072`, `ECDSA P-384`.
    pub fn describe(&self) -> String {
        match self {
            TsaKey::Rsa(k) => format!("RSA-{}", k.public().bits()),
            TsaKey::EcdsaP256(_) => format!("ECDSA {}", Curve::P256.name()),
            TsaKey::EcdsaP384(_) => format!("ECDSA {}", Curve::P384.name()),
        }
    }

    /// The digest this key signs with: SHA-256 for RSA and P-256, SHA-384 for P-384.
    pub(crate) fn digest(&self) -> HashAlg {
        match self {
            TsaKey::Rsa(_) | TsaKey::EcdsaP256(_) => HashAlg::Sha256,
            TsaKey::EcdsaP384(_) => HashAlg::Sha384,
        }
    }

    /// The signature algorithm a SignerInfo names.
    pub(crate) fn signature_algorithm(&self) -> AlgorithmIdentifierOwned {
        match self {
            TsaKey::Rsa(_) => AlgorithmIdentifierOwned {
                oid: SHA256_WITH_RSA,
                parameters: Some(null()),
            },
            TsaKey::EcdsaP256(_) => AlgorithmIdentifierOwned {
                oid: ECDSA_WITH_SHA256,
                parameters: None,
            },
            TsaKey::EcdsaP384(_) => AlgorithmIdentifierOwned {
                oid: ECDSA_WITH_SHA384,
                parameters: None,
            },
        }
    }

    /// Signs `message` (the DER of the signed attributes) with [`Self::digest`]: RSA blinded
    /// and fault-checked by hourglass-rsa; ECDSA with a hedged nonce (RFC 6979 plus fresh
    /// entropy), the signature checked under the public key before it is released, so that a
    /// fault never hands out a signature that could leak the key.
    pub(crate) fn sign(
        &self,
        message: &[u8],
        rng: &mut dyn EntropySource,
    ) -> Result<Vec<u8>, KeyError> {
        let digest = self.digest();
        let prehash = digest.digest(message);
        let failed = |e: ecdsa::Error| KeyError::Ecdsa(e.to_string());
        let (der, curve, point) = match self {
            TsaKey::Rsa(k) => return Ok(Pkcs1v15Sign::new(HashAlg::Sha256).sign(k, message, rng)?),
            TsaKey::EcdsaP256(k) => {
                let sig: p256::ecdsa::Signature = k
                    .sign_prehash_with_rng(&mut Rng(rng), &prehash)
                    .map_err(failed)?;
                let point = k.verifying_key().to_encoded_point(false);
                (
                    sig.to_der().to_bytes().to_vec(),
                    Curve::P256,
                    point.as_bytes().to_vec(),
                )
            }
            TsaKey::EcdsaP384(k) => {
                let sig: p384::ecdsa::Signature = k
                    .sign_prehash_with_rng(&mut Rng(rng), &prehash)
                    .map_err(failed)?;
                let point = k.verifying_key().to_encoded_point(false);
                (
                    sig.to_der().to_bytes().to_vec(),
                    Curve::P384,
                    point.as_bytes().to_vec(),
                )
            }
        };
        // The fault check: the signature must verify under the public key, by the verifier's
        // own code, before it leaves.
        verify(
            &VerifyingKey::Ecdsa { curve, point },
            SignatureAlgorithm::Ecdsa(digest),
            message,
            &der,
        )
        .map_err(|e| KeyError::Ecdsa(format!("the signature made does not verify: {e}")))?;
        Ok(der)
    }
}

#[cfg(test)]
mod tests {
    use hourglass_arith::entropy::SeededEntropy;

    use super::*;

    #[test]
    fn kinds_are_named_once_and_read_back() {
        for kind in TsaKeyType::ALL {
            assert_eq!(TsaKeyType::from_name(kind.name()), Some(kind));
        }
        assert_eq!(TsaKeyType::from_name("dsa-1024"), None);
        assert_eq!(TsaKeyType::names(), "rsa-3072, ecdsa-p256 or ecdsa-p384");
        assert_eq!(TsaKeyType::default(), TsaKeyType::EcdsaP256);
    }

    #[test]
    fn ecdsa_keys_are_of_their_kind_and_survive_their_pem() {
        let mut rng = SeededEntropy::new(b"signing_key tests");
        for kind in [TsaKeyType::EcdsaP256, TsaKeyType::EcdsaP384] {
            let key = TsaKey::generate(kind, &mut rng).unwrap();
            assert_eq!(key.kind(), Some(kind));
            let again = TsaKey::from_pem(key.to_pem().unwrap().as_bytes()).unwrap();
            assert_eq!(again.kind(), Some(kind));
            assert_eq!(again.spki().unwrap(), key.spki().unwrap());
            // What it signs verifies under its public key, and nothing else does.
            let sig = key.sign(b"signed attributes", &mut rng).unwrap();
            let public = key.verifying_key().unwrap();
            let algorithm =
                SignatureAlgorithm::of_signer(&key.signature_algorithm(), key.digest()).unwrap();
            assert!(verify(&public, algorithm, b"signed attributes", &sig).is_ok());
            assert!(verify(&public, algorithm, b"other attributes", &sig).is_err());
        }
    }
}

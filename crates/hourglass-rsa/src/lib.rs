//! RSA and its fast variants, for hourglass.
//!
//! - Key generation for five variants ([`Variant`]): standard (no CRT), CRT (Quisquater-Couvreur
//!   with Garner recombination), Wiener's rebalanced CRT (small CRT exponents, large e), and the
//!   short-e rebalanced schemes A (Sun-Wu) and B (Sun-Hinek-Wu). Defaults resist the published
//!   attacks on small CRT exponents ([`params`]); the papers' original sizes need
//!   `allow_insecure`.
//! - Private-key operations that are constant-time (GMP `mpz_powm_sec`), base-blinded and
//!   fault-checked (a Bellcore countermeasure) by default ([`PrivateKey::private_op`]).
//! - Padding: OAEP, PSS and PKCS#1 v1.5 signatures ([`padding`]); textbook RSA lives in
//!   [`hazmat`].
//! - Key files: PKCS#8 / PKCS#1 / SPKI PEM that OpenSSL reads, plus hex and JSON ([`encoding`]).
//! - [`inspect`]: names the variant and judges the safety of any RSA key.
//!
//! ```
//! use hourglass_arith::entropy::SeededEntropy;
//! use hourglass_rsa::{KeyGenOptions, Variant, padding::{Oaep, Pss}, HashAlg};
//!
//! let mut rng = SeededEntropy::new(b"doc: insecure, for the example only");
//! let key = KeyGenOptions::new(1024, Variant::Rebalanced).generate(&mut rng).unwrap();
//! let public = key.public_key();
//!
//! let ct = Oaep::new(HashAlg::Sha256).encrypt(&public, b"hello", &mut rng).unwrap();
//! assert_eq!(Oaep::new(HashAlg::Sha256).decrypt(&key, &ct, &mut rng).unwrap(), b"hello");
//!
//! let sig = Pss::new(HashAlg::Sha256).sign(&key, b"msg", &mut rng).unwrap();
//! assert!(Pss::new(HashAlg::Sha256).verify(&public, b"msg", &sig).is_ok());
//! ```

#![forbid(unsafe_code)]

#[cfg(feature = "clap")]
pub mod cli;
pub mod encoding;
pub mod hazmat;
pub mod inspect;
mod key;
mod keygen;
pub mod padding;
pub mod params;

pub use hourglass_arith::Integer;
pub use key::{Countermeasures, PrivateKey, PublicKey, Variant};
pub use keygen::KeyGenOptions;
pub use padding::HashAlg;

/// Errors from RSA operations.
///
/// Decryption and signature verification failures are deliberately unspecific
/// ([`Error::Decryption`], [`Error::Verification`]) so they cannot serve as padding oracles.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Arithmetic-core failure (entropy, parameters).
    #[error(transparent)]
    Arith(#[from] hourglass_arith::Error),
    /// A key's parameters are inconsistent or out of range.
    #[error("invalid key: {0}")]
    InvalidKey(String),
    /// Requested parameters are broken by published attacks; `allow_insecure` overrides.
    #[error("insecure parameters refused: {0}")]
    Insecure(String),
    /// Parameters that cannot work at all.
    #[error("invalid parameters: {0}")]
    InvalidParameters(String),
    /// The message is too long for the key and padding.
    #[error("message too long: {len} bytes, at most {max} fit this key and padding")]
    MessageTooLong {
        /// Message length in bytes.
        len: usize,
        /// Largest length that fits.
        max: usize,
    },
    /// The input (ciphertext or signature) is not an integer below the modulus.
    #[error("input out of range: it must be {len} bytes and less than the modulus")]
    InputOutOfRange {
        /// The key's modulus length in bytes.
        len: usize,
    },
    /// Decryption failed (wrong key, corrupted ciphertext or wrong padding).
    #[error("decryption failed")]
    Decryption,
    /// The signature does not verify.
    #[error("signature verification failed")]
    Verification,
    /// A fault was detected during a private-key operation; no output was released.
    #[error("fault detected during the private-key operation; result withheld")]
    FaultDetected,
    /// A key file could not be parsed.
    #[error("cannot parse key: {0}")]
    Parse(String),
    /// The private key is encrypted (PKCS#8 PBES2) and no passphrase was given.
    #[error("the private key is encrypted with a passphrase")]
    PassphraseRequired,
    /// The passphrase does not decrypt the key (or the encrypted key is damaged).
    #[error("the passphrase does not decrypt the key (wrong passphrase, or a damaged file)")]
    WrongPassphrase,
    /// The encrypted key uses a scheme this version does not read.
    #[error("unsupported key encryption: {0}")]
    UnsupportedEncryption(String),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

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
mod error;
mod hash;
pub mod hazmat;
pub mod inspect;
mod key;
mod keygen;
mod names;
pub mod padding;
pub mod params;
mod variant;

pub use error::{
    DerItem, EncodeError, EncryptionError, Error, Insecurity, KeyError, KeyField, KeyKind,
    KeygenOption, ParamError, ParseError, Result, WhichPrime,
};
pub use hash::HashAlg;
pub use hourglass_arith::Integer;
pub use key::{Countermeasures, PrivateKey, PublicKey};
pub use keygen::KeyGenOptions;
pub use variant::Variant;

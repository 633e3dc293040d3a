//! RFC 3161 timestamps: queries, an authority that answers them, and a verifier that judges the
//! tokens of any authority the way the world judges them (docs/FORMATS.md section 18).
//!
//! - [`Query`]: a `TimeStampReq`, built ([`Query::for_data`]) or parsed as a TSA parses it
//!   ([`Query::parse`], which names the RFC's failInfo for every refusal).
//! - [`Tsa`]: an authority's key ([`TsaKey`]: RSA, or ECDSA over P-256 or P-384), certificate
//!   and policy; [`Tsa::reply`] answers a query's DER with a `TimeStampResp` (granted, or a
//!   rejection with its failInfo) and never fails.
//! - [`verify_token`] and [`verify_token_for`]: check a token against anchors the verifier
//!   pins ([`TsaAnchor`]): the signed attributes, the signature by RSA PKCS#1 v1.5 or PSS,
//!   ECDSA over P-256, P-384 or P-521 with any SHA-2, or Ed25519 ([`signature`]), the
//!   authority certificate's profile ([`TsaCertificate`]) and its path, validated by
//!   rustls-webpki at `genTime` ([`path`]). The verdict, [`VerifiedToken`], has its own JSON.
//! - [`TokenInfo::latest`]: the latest time a token proves, `genTime + accuracy`.
//! - [`Evidence`]: the tokens that date one file; it provably existed at the earliest of their
//!   latest times.
//!
//! ```
//! use hourglass_arith::entropy::SeededEntropy;
//! use hourglass_rsa::{HashAlg, KeyGenOptions, Variant};
//! use hourglass_timestamp::{
//!     verify_token_for, Covered, PolicyId, Query, Tsa, TsaAnchor, TsaCertificate, TsaKey,
//!     TsaKeyType,
//! };
//! use hourglass_x509::{CaCertificate, CertificateOptions};
//!
//! let mut rng = SeededEntropy::new(b"timestamp doc example, insecure");
//! let ca_key = KeyGenOptions::new(2048, Variant::Crt).generate(&mut rng).unwrap();
//! let ca = CaCertificate::self_signed(&ca_key, &CertificateOptions::days("Example CA", 30), &mut rng)
//!     .unwrap();
//! let key = TsaKey::generate(TsaKeyType::EcdsaP384, &mut rng).unwrap();
//! let cert = TsaCertificate::issue(
//!     key.spki().unwrap(), &ca, &ca_key, &CertificateOptions::days("Example TSA", 30), &mut rng,
//! )
//! .unwrap();
//! let tsa = Tsa::new(key, cert, vec![], PolicyId::hourglass()).unwrap();
//!
//! let query = Query::for_data(HashAlg::Sha256, b"my paper", true, None, &mut rng).unwrap();
//! let reply = tsa.reply(query.to_der(), &[1], std::time::SystemTime::now(), &mut rng);
//! let token = query.token_of_reply(&reply).unwrap();
//! let verified =
//!     verify_token_for(&token, Covered::Data(b"my paper"), &[], &[TsaAnchor::from(ca)]).unwrap();
//! assert_eq!(verified.tsa(), "CN=Example TSA");
//! assert_eq!(verified.path(), ["CN=Example TSA", "CN=Example CA"]);
//! ```

#![forbid(unsafe_code)]

mod anchor;
mod asn1;
mod authority;
mod error;
mod evidence;
mod fail_info;
mod gen_time;
mod inspect;
mod oid;
pub mod path;
mod policy;
mod profile;
mod query;
mod reply;
pub mod signature;
mod signing_key;
mod token;
mod verify;

pub use anchor::{anchors_from_pem, AnchorCertificate, AnchorError, TsaAnchor};
pub use authority::{Tsa, ACCURACY_SECONDS};
pub use error::{NotTsaReason, Result, TimestampError};
pub use evidence::{Evidence, NamedToken, TokenRefused};
pub use fail_info::{FailInfo, Rejection, MAX_NONCE_BYTES};
pub use inspect::Inspection;
pub use policy::{PolicyId, DEFAULT_POLICY};
pub use profile::TsaCertificate;
pub use query::{Query, MAX_QUERY_BYTES};
pub use reply::{granted_reply, token_of, MAX_TOKEN_BYTES};
pub use signing_key::{KeyError, TsaKey, TsaKeyType};
pub use token::{TokenInfo, MAX_SERIAL_BYTES};
pub use verify::{verdict_json, verify_token, verify_token_for, Covered, VerifiedToken};

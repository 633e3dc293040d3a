//! The X.509 certificates hourglass issues and reads.
//!
//! An institution's certificate authority ([`CaCertificate`]) is an RSA key with a self-signed
//! v3 certificate; it issues the certificates of two profiles that live with their schemes:
//! time-lock puzzle certificates (`hourglass-timelock`) and timestamp-authority certificates
//! (`hourglass-timestamp`). This crate holds what both share: a [`Certificate`] read with the
//! exact bytes its signature covers, extensions under object identifiers of any arcs
//! ([`RawExtension`]), the validity and critical-extension checks, names, RSA keys in
//! certificates and PEM files.
//!
//! It does not validate foreign certificate paths: a timestamp's path to an authority someone
//! else runs is judged by rustls-webpki in `hourglass-timestamp`.
//!
//! ```
//! use hourglass_arith::entropy::SeededEntropy;
//! use hourglass_rsa::{KeyGenOptions, Variant};
//! use hourglass_x509::{CaCertificate, CertificateOptions};
//!
//! let mut rng = SeededEntropy::new(b"x509 doc example, insecure");
//! let key = KeyGenOptions::new(1024, Variant::Crt).generate(&mut rng).unwrap();
//! let ca = CaCertificate::self_signed(&key, &CertificateOptions::days("Example U", 3650), &mut rng)
//!     .unwrap();
//! let again = CaCertificate::from_bytes(ca.to_pem().as_bytes()).unwrap();
//! assert_eq!(again.subject(), "CN=Example U");
//! assert_eq!(again.public_key(), key.public());
//! ```

#![forbid(unsafe_code)]

mod ca;
mod certificate;
mod error;
pub mod key;
pub mod name;
pub mod oid;
mod options;
mod pem;

pub use ca::CaCertificate;
pub use certificate::{pem_certificates, Certificate, RawExtension, TbsCertificate};
pub use error::{
    CertRole, CertificateError, EncodedItem, Extension, Malformation, NotCaReason, OptionProblem,
    Result,
};
pub use options::{CertificateOptions, ValidityPeriod, BACKDATE};
pub use pem::{looks_like_certificate, to_pem, MAX_CERTIFICATE_FILE};

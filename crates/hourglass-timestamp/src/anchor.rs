//! What a verifier trusts to vouch for timestamp authorities: a CA certificate of any key type
//! (a root, or an intermediate pinned as the end of the path, as `openssl ts -verify
//! -partial_chain` allows), or a bare public key (an institution's receipt key, which signs the
//! CA of the authority it runs).

use std::time::SystemTime;

use hourglass_rsa::PublicKey;
use hourglass_x509::oid::{CE_BASIC_CONSTRAINTS, CE_EXTENDED_KEY_USAGE, CE_KEY_USAGE};
use hourglass_x509::{pem_certificates, CaCertificate, Certificate, CertificateError, Extension};
use pki_types::CertificateDer;
use x509_cert::ext::pkix::{BasicConstraints, ExtendedKeyUsage, KeyUsage};
use x509_cert::Version;

use crate::oid::{ANY_EXTENDED_KEY_USAGE, KP_TIME_STAMPING};
use crate::signature::{KeyProblem, VerifyingKey};

/// Why a certificate cannot be an anchor.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AnchorError {
    /// Not a readable certificate.
    #[error(transparent)]
    Certificate(#[from] CertificateError),
    /// A certificate that is not a CA's (basicConstraints without CA:TRUE, or none in a version
    /// 3 certificate): it cannot issue an authority's certificate.
    #[error("'{subject}' is not a CA certificate (its basicConstraints does not say CA:TRUE), so it cannot vouch for an authority")]
    NotCa {
        /// The certificate's subject.
        subject: String,
    },
    /// A keyUsage without keyCertSign.
    #[error("'{subject}' may not sign certificates (its keyUsage lacks keyCertSign)")]
    NoKeyCertSign {
        /// The certificate's subject.
        subject: String,
    },
    /// An extendedKeyUsage that does not allow timestamping.
    #[error("'{subject}' is restricted by its extendedKeyUsage to other purposes than timeStamping, so it cannot vouch for an authority")]
    Purpose {
        /// The certificate's subject.
        subject: String,
    },
    /// A key this verifier cannot check signatures with.
    #[error("'{subject}' has {problem}")]
    Key {
        /// The certificate's subject.
        subject: String,
        /// What is wrong with the key.
        problem: KeyProblem,
    },
    /// A certificate rustls-webpki cannot take as a trust anchor.
    #[error("'{subject}' cannot be a trust anchor: {why}")]
    Unusable {
        /// The certificate's subject.
        subject: String,
        /// rustls-webpki's reason.
        why: String,
    },
}

/// A CA certificate pinned as an anchor, with the constraints it places on the paths below it.
#[derive(Debug, Clone)]
pub struct AnchorCertificate {
    cert: Certificate,
    der: CertificateDer<'static>,
    path_len: Option<u8>,
}

impl AnchorCertificate {
    /// Reads a certificate (PEM or DER, any key type) and checks that it can anchor a path: a
    /// CA (basicConstraints CA:TRUE, or a version 1 root), a keyUsage (if any) with
    /// keyCertSign, a key this verifier checks signatures with, and a form rustls-webpki takes.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, AnchorError> {
        Self::from_certificate(Certificate::from_bytes(bytes)?)
    }

    fn from_certificate(cert: Certificate) -> Result<Self, AnchorError> {
        let subject = cert.subject();
        let v1 = cert.tbs().version == Version::V1;
        let bc = cert.decode_extension::<BasicConstraints>(
            CE_BASIC_CONSTRAINTS,
            Extension::BasicConstraints,
        )?;
        let path_len = match bc {
            Some((_, bc)) if bc.ca => bc.path_len_constraint,
            _ if v1 => None,
            _ => return Err(AnchorError::NotCa { subject }),
        };
        if let Some((_, ku)) =
            cert.decode_extension::<KeyUsage>(CE_KEY_USAGE, Extension::KeyUsage)?
        {
            if !ku.key_cert_sign() {
                return Err(AnchorError::NoKeyCertSign { subject });
            }
        }
        // A CA restricted to other purposes vouches for no authority (the rule the path holds
        // every CA on it to, held to the anchor too: webpki knows an anchor by name and key).
        if let Some((_, eku)) = cert.decode_extension::<ExtendedKeyUsage>(
            CE_EXTENDED_KEY_USAGE,
            Extension::ExtendedKeyUsage,
        )? {
            if !eku
                .0
                .iter()
                .any(|p| *p == KP_TIME_STAMPING || *p == ANY_EXTENDED_KEY_USAGE)
            {
                return Err(AnchorError::Purpose { subject });
            }
        }
        VerifyingKey::from_spki(&cert.tbs().subject_public_key_info).map_err(|problem| {
            AnchorError::Key {
                subject: subject.clone(),
                problem,
            }
        })?;
        let der = CertificateDer::from(cert.to_der().to_vec());
        webpki::anchor_from_trusted_cert(&der).map_err(|e| AnchorError::Unusable {
            subject,
            why: format!("{e:?}"),
        })?;
        Ok(Self {
            cert,
            der,
            path_len,
        })
    }

    /// The certificate.
    pub fn certificate(&self) -> &Certificate {
        &self.cert
    }

    /// The DER, as rustls-webpki takes it.
    pub(crate) fn der(&self) -> &CertificateDer<'static> {
        &self.der
    }

    /// Its pathLenConstraint: how many CAs (not self-issued) may stand between it and an
    /// authority's certificate.
    pub fn path_len(&self) -> Option<u8> {
        self.path_len
    }

    /// Whether `at` is within its validity period (as OpenSSL checks an anchor's).
    pub fn valid_at(&self, at: SystemTime) -> bool {
        self.cert.not_before() <= at && at <= self.cert.not_after()
    }
}

/// What a verifier trusts to vouch for a timestamp authority.
#[derive(Debug, Clone)]
pub enum TsaAnchor {
    /// A CA certificate (`--tsa-ca FILE`): a root, or an intermediate pinned as the end of the
    /// path.
    Certificate(Box<AnchorCertificate>),
    /// A bare RSA public key and the name to call it by (`--institution institution.pub`): it
    /// vouches for any certificate it signed, whatever issuer name that certificate gives.
    Key {
        /// The key.
        key: PublicKey,
        /// How verdicts name it (a file name, a fingerprint).
        name: String,
    },
}

impl From<AnchorCertificate> for TsaAnchor {
    fn from(ca: AnchorCertificate) -> Self {
        TsaAnchor::Certificate(Box::new(ca))
    }
}

impl From<CaCertificate> for TsaAnchor {
    fn from(ca: CaCertificate) -> Self {
        // An institution's CA is read with CA:TRUE, keyCertSign (if any) and an RSA key: every
        // anchor check holds, so the path length is all that is left to read.
        let cert = ca.certificate().clone();
        let path_len = cert
            .decode_extension::<BasicConstraints>(CE_BASIC_CONSTRAINTS, Extension::BasicConstraints)
            .ok()
            .flatten()
            .and_then(|(_, bc)| bc.path_len_constraint);
        let der = CertificateDer::from(cert.to_der().to_vec());
        TsaAnchor::Certificate(Box::new(AnchorCertificate {
            cert,
            der,
            path_len,
        }))
    }
}

impl TsaAnchor {
    /// How verdicts name this anchor: the CA's subject, or the key's name.
    pub fn name(&self) -> String {
        match self {
            TsaAnchor::Certificate(ca) => ca.cert.subject(),
            TsaAnchor::Key { name, .. } => name.clone(),
        }
    }
}

/// Every certificate of a file (PEM, several per file, or one DER certificate), each read as an
/// anchor: the anchors a verifier names in one file (`--tsa-ca`).
pub fn anchors_from_pem(bytes: &[u8]) -> Result<Vec<TsaAnchor>, AnchorError> {
    pem_certificates(bytes)?
        .iter()
        .map(|der| {
            AnchorCertificate::from_certificate(Certificate::from_der(der)?).map(TsaAnchor::from)
        })
        .collect()
}

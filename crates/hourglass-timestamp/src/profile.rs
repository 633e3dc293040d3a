//! Timestamp-authority certificates (RFC 3161 section 2.3): what only this crate knows of them,
//! that a path validator does not.
//!
//! A TSA certificate is version 3, not a CA, carries exactly one extendedKeyUsage,
//! `id-kp-timeStamping`, in a critical extension, and a keyUsage (if any) that allows
//! digitalSignature or nonRepudiation. [`TsaCertificate::issue`] makes one under an
//! institution's CA for an RSA or EC key; [`TsaCertificate::from_bytes`] reads one of any key
//! type and refuses any other profile. Who issued it is the path's business
//! ([`crate::path`]).

use std::time::SystemTime;

use der::asn1::OctetString;
use der::Tag;
use hourglass_arith::entropy::EntropySource;
use hourglass_rsa::PrivateKey;
use hourglass_x509::key::key_identifier;
use hourglass_x509::name::{check_common_name, make_name};
use hourglass_x509::oid::{
    AT_COMMON_NAME, CE_AUTHORITY_KEY_IDENTIFIER, CE_BASIC_CONSTRAINTS, CE_EXTENDED_KEY_USAGE,
    CE_KEY_USAGE, CE_SUBJECT_KEY_IDENTIFIER,
};
use hourglass_x509::{
    CaCertificate, Certificate, CertificateError, CertificateOptions, EncodedItem, Extension,
    OptionProblem, RawExtension,
};
use spki::SubjectPublicKeyInfoOwned;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectKeyIdentifier,
};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::Version;

use crate::error::{NotTsaReason, Result, TimestampError};
use crate::oid::KP_TIME_STAMPING;
use crate::signature::VerifyingKey;

/// A timestamp authority's certificate: its key, whose only extended key usage, critical, is
/// `id-kp-timeStamping`.
#[derive(Debug, Clone)]
pub struct TsaCertificate {
    cert: Certificate,
    key: VerifyingKey,
}

impl TsaCertificate {
    /// Certifies the key `spki` (RSA or EC) with the CA: subject `CN=<common name>`,
    /// extendedKeyUsage `id-kp-timeStamping` (critical), keyUsage digitalSignature and
    /// nonRepudiation (critical), basicConstraints `CA:FALSE`, key identifiers, a random serial
    /// number; signed with sha256WithRSAEncryption. Refuses a CA key that is not the CA
    /// certificate's.
    pub fn issue(
        spki: SubjectPublicKeyInfoOwned,
        ca: &CaCertificate,
        ca_key: &PrivateKey,
        options: &CertificateOptions,
        rng: &mut dyn EntropySource,
    ) -> Result<Self> {
        check_common_name(&options.common_name)?;
        let subject = make_name(&[(AT_COMMON_NAME, Tag::Utf8String, &options.common_name)])?;
        let key_id = |id: Vec<u8>| {
            OctetString::new(id).map_err(|source| {
                CertificateError::InvalidOptions(OptionProblem::Encode {
                    what: EncodedItem::KeyId,
                    source,
                })
            })
        };
        let extensions = vec![
            RawExtension::standard(
                CE_BASIC_CONSTRAINTS,
                false,
                &BasicConstraints {
                    ca: false,
                    path_len_constraint: None,
                },
            )?,
            RawExtension::standard(
                CE_KEY_USAGE,
                true,
                &KeyUsage(KeyUsages::DigitalSignature | KeyUsages::NonRepudiation),
            )?,
            RawExtension::standard(
                CE_EXTENDED_KEY_USAGE,
                true,
                &ExtendedKeyUsage(vec![KP_TIME_STAMPING]),
            )?,
            RawExtension::standard(
                CE_SUBJECT_KEY_IDENTIFIER,
                false,
                &SubjectKeyIdentifier(key_id(key_identifier(&spki))?),
            )?,
            RawExtension::standard(
                CE_AUTHORITY_KEY_IDENTIFIER,
                false,
                &AuthorityKeyIdentifier {
                    key_identifier: Some(key_id(ca.key_id()?)?),
                    authority_cert_issuer: None,
                    authority_cert_serial_number: None,
                },
            )?,
        ];
        Self::from_certificate(ca.issue(ca_key, subject, spki, extensions, options, rng)?)
    }

    /// Reads a TSA certificate (PEM or DER, any key type) and checks its profile: version 3,
    /// not a CA, extendedKeyUsage exactly `id-kp-timeStamping` and critical, a keyUsage (if
    /// any) with digitalSignature or nonRepudiation, and a key this verifier checks signatures
    /// with. Who issued it is checked by [`crate::path::validate`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_certificate(Certificate::from_bytes(bytes)?)
    }

    /// [`Self::from_bytes`] for a certificate's DER and nothing else (a token's certificates).
    pub fn from_der(der: &[u8]) -> Result<Self> {
        Self::from_certificate(Certificate::from_der(der)?)
    }

    fn from_certificate(cert: Certificate) -> Result<Self> {
        let subject = cert.subject();
        let not_tsa = |reason| TimestampError::NotTsa {
            subject: subject.clone(),
            reason,
        };
        if cert.tbs().version != Version::V3 {
            return Err(not_tsa(NotTsaReason::NotV3));
        }
        if let Some((_, bc)) = cert.decode_extension::<BasicConstraints>(
            CE_BASIC_CONSTRAINTS,
            Extension::BasicConstraints,
        )? {
            if bc.ca {
                return Err(not_tsa(NotTsaReason::IsCa));
            }
        }
        match cert.decode_extension::<ExtendedKeyUsage>(
            CE_EXTENDED_KEY_USAGE,
            Extension::ExtendedKeyUsage,
        )? {
            None => return Err(not_tsa(NotTsaReason::NoExtendedKeyUsage)),
            Some((false, _)) => return Err(not_tsa(NotTsaReason::NotCritical)),
            Some((true, eku)) if eku.0 != [KP_TIME_STAMPING] => {
                return Err(not_tsa(NotTsaReason::NotOnlyTimeStamping))
            }
            Some(_) => {}
        }
        if let Some((_, ku)) =
            cert.decode_extension::<KeyUsage>(CE_KEY_USAGE, Extension::KeyUsage)?
        {
            if !ku.digital_signature() && !ku.non_repudiation() {
                return Err(not_tsa(NotTsaReason::KeyUsage));
            }
        }
        let key =
            VerifyingKey::from_spki(&cert.tbs().subject_public_key_info).map_err(|problem| {
                TimestampError::SignerKey {
                    subject: subject.clone(),
                    problem,
                }
            })?;
        Ok(Self { cert, key })
    }

    /// A certificate read without the profile checks, for tests that make tokens a real TSA
    /// would refuse to sign (a missing or non-critical extendedKeyUsage).
    #[cfg(test)]
    pub(crate) fn unchecked(bytes: &[u8]) -> Result<Self> {
        let cert = Certificate::from_bytes(bytes)?;
        let key =
            VerifyingKey::from_spki(&cert.tbs().subject_public_key_info).map_err(|problem| {
                TimestampError::SignerKey {
                    subject: cert.subject(),
                    problem,
                }
            })?;
        Ok(Self { cert, key })
    }

    /// The certified key.
    pub fn key(&self) -> &VerifyingKey {
        &self.key
    }

    /// The certificate.
    pub fn certificate(&self) -> &Certificate {
        &self.cert
    }

    /// The subject name as an RFC 4514 string.
    pub fn subject(&self) -> String {
        self.cert.subject()
    }

    /// The issuer name.
    pub fn issuer_name(&self) -> &Name {
        &self.cert.tbs().issuer
    }

    /// The serial number.
    pub fn serial_number(&self) -> &SerialNumber {
        &self.cert.tbs().serial_number
    }

    /// The DER encoding.
    pub fn to_der(&self) -> &[u8] {
        self.cert.to_der()
    }

    /// The PEM encoding (`-----BEGIN CERTIFICATE-----`).
    pub fn to_pem(&self) -> String {
        self.cert.to_pem()
    }

    /// Start of the validity period.
    pub fn not_before(&self) -> SystemTime {
        self.cert.not_before()
    }

    /// End of the validity period.
    pub fn not_after(&self) -> SystemTime {
        self.cert.not_after()
    }
}

//! Timestamp-authority certificates (RFC 3161 section 2.3) and the path from one to an anchor
//! the verifier pins.
//!
//! A TSA certificate carries exactly one extendedKeyUsage, `id-kp-timeStamping`, and the
//! extension is critical. [`TsaCertificate::issue`] makes one under an institution's CA;
//! [`TsaCertificate::from_der`] reads one and refuses any other profile;
//! [`TsaCertificate::path_to`] finds a chain from it to one of the verifier's anchors (a CA
//! certificate, or a bare key such as an institution's receipt key), every certificate of the
//! chain valid at the time being checked (a token's `genTime`).

use std::time::SystemTime;

use der::asn1::OctetString;
use der::oid::ObjectIdentifier;
use der::Tag;
use hourglass_arith::entropy::EntropySource;
use hourglass_rsa::{PrivateKey, PublicKey};
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, ExtendedKeyUsage, KeyUsage, KeyUsages,
    SubjectKeyIdentifier,
};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::Version;

use super::{
    check_common_name, common_name, encoding, issue_under, key_identifier, make_name,
    rsa_components, rsa_spki, to_pem, CaCertificate, CertRole, CertificateError,
    CertificateOptions, EncodedItem, Extension, Parsed, RawExtension, Result, AT_COMMON_NAME,
    CE_AUTHORITY_KEY_IDENTIFIER, CE_BASIC_CONSTRAINTS, CE_KEY_USAGE, CE_SUBJECT_KEY_IDENTIFIER,
};

/// `id-ce-extKeyUsage`.
const CE_EXTENDED_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.37");
/// `id-kp-timeStamping` (RFC 3161 section 2.3).
pub const KP_TIME_STAMPING: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.6.1.5.5.7.3.8");

/// The longest chain from a TSA certificate to an anchor: the TSA certificate and up to three
/// intermediate CAs.
pub const MAX_INTERMEDIATES: usize = 3;

/// Why a well-formed certificate may not sign timestamps.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NotTsaReason {
    /// No extendedKeyUsage extension.
    #[error("it has no extendedKeyUsage; a TSA certificate must carry id-kp-timeStamping (RFC 3161 section 2.3)")]
    NoExtendedKeyUsage,
    /// The extension is not critical.
    #[error("its extendedKeyUsage is not critical, as RFC 3161 section 2.3 requires")]
    NotCritical,
    /// The extension lists other purposes, or not timeStamping.
    #[error("its extendedKeyUsage must be exactly id-kp-timeStamping (RFC 3161 section 2.3)")]
    NotOnlyTimeStamping,
    /// A keyUsage that allows neither digitalSignature nor nonRepudiation.
    #[error("its keyUsage allows neither digitalSignature nor nonRepudiation")]
    KeyUsage,
    /// A CA certificate.
    #[error("it is a CA certificate")]
    IsCa,
    /// Not X.509 version 3.
    #[error("it is not an X.509 version 3 certificate")]
    NotV3,
}

/// What a verifier trusts to vouch for a timestamp authority: a CA certificate, or a bare public
/// key (an institution's receipt key, which signs the CA of the TSA certificates it makes).
#[derive(Debug, Clone)]
pub enum TsaAnchor {
    /// A CA certificate (`--tsa-ca FILE`).
    Ca(Box<CaCertificate>),
    /// A public key and the name to call it by (`--institution institution.pub`).
    Key {
        /// The key.
        key: PublicKey,
        /// How verdicts name it (a file name, a fingerprint).
        name: String,
    },
}

impl From<CaCertificate> for TsaAnchor {
    fn from(ca: CaCertificate) -> Self {
        TsaAnchor::Ca(Box::new(ca))
    }
}

impl TsaAnchor {
    fn key(&self) -> &PublicKey {
        match self {
            TsaAnchor::Ca(ca) => ca.public_key(),
            TsaAnchor::Key { key, .. } => key,
        }
    }

    /// How verdicts name this anchor: the CA's subject, or the key's name.
    pub fn name(&self) -> String {
        match self {
            TsaAnchor::Ca(ca) => ca.subject(),
            TsaAnchor::Key { name, .. } => name.clone(),
        }
    }

    /// Whether `cert` is signed by this anchor (and, for a CA, names it as issuer); the CA's own
    /// validity at `at` is checked when it signed.
    fn signed(&self, cert: &Parsed, at: SystemTime) -> Result<bool> {
        if let TsaAnchor::Ca(ca) = self {
            if cert.tbs().issuer != ca.parsed.tbs().subject {
                return Ok(false);
            }
        }
        if cert
            .check_signature(self.key(), CertRole::Certificate)
            .is_err()
        {
            return Ok(false);
        }
        if let TsaAnchor::Ca(ca) = self {
            ca.parsed.check_validity(at, CertRole::CaCertificate)?;
        }
        Ok(true)
    }
}

/// A timestamp authority's certificate: an RSA key whose only extended key usage, critical, is
/// `id-kp-timeStamping`.
#[derive(Debug, Clone)]
pub struct TsaCertificate {
    parsed: Parsed,
    public: PublicKey,
}

impl TsaCertificate {
    /// Certifies `tsa_key` with the CA: subject `CN=<common name>`, extendedKeyUsage
    /// `id-kp-timeStamping` (critical), keyUsage digitalSignature and nonRepudiation (critical),
    /// basicConstraints `CA:FALSE`, key identifiers, a random serial number; signed with
    /// sha256WithRSAEncryption. Refuses a CA key that is not the CA certificate's.
    pub fn issue(
        tsa_key: &PublicKey,
        ca: &CaCertificate,
        ca_key: &PrivateKey,
        options: &CertificateOptions,
        rng: &mut dyn EntropySource,
    ) -> Result<Self> {
        if ca_key.public() != ca.public_key() {
            return Err(CertificateError::KeyMismatch);
        }
        check_common_name(&options.common_name)?;
        let subject = make_name(&[(AT_COMMON_NAME, Tag::Utf8String, &options.common_name)])?;
        let spki = rsa_spki(tsa_key.n(), tsa_key.e())?;
        let key_id = |id: Vec<u8>| OctetString::new(id).map_err(encoding(EncodedItem::KeyId));
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
        Self::from_parsed(issue_under(
            ca, ca_key, subject, spki, extensions, options, rng,
        )?)
    }

    /// Reads a TSA certificate (PEM or DER) and checks its profile: version 3, not a CA, an RSA
    /// key, extendedKeyUsage exactly `id-kp-timeStamping` and critical, a keyUsage (if any)
    /// with digitalSignature or nonRepudiation, no unknown critical extension. Who issued it is
    /// checked by [`Self::path_to`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_parsed(Parsed::from_bytes(bytes)?)
    }

    /// A certificate read without the profile checks, for tests that make tokens a real TSA
    /// would refuse to sign (a missing or non-critical extendedKeyUsage).
    #[cfg(test)]
    pub(crate) fn unchecked(bytes: &[u8]) -> Result<Self> {
        let parsed = Parsed::from_bytes(bytes)?;
        let (n, e) = rsa_components(&parsed.tbs().subject_public_key_info)?;
        let public = PublicKey::new(n, e)?;
        Ok(Self { parsed, public })
    }

    fn from_parsed(parsed: Parsed) -> Result<Self> {
        let not_tsa = CertificateError::NotTsa;
        if parsed.tbs().version != Version::V3 {
            return Err(not_tsa(NotTsaReason::NotV3));
        }
        parsed.check_critical(&[CE_EXTENDED_KEY_USAGE.as_bytes()])?;
        if let Some((_, bc)) = parsed.decode_extension::<BasicConstraints>(
            CE_BASIC_CONSTRAINTS,
            Extension::BasicConstraints,
        )? {
            if bc.ca {
                return Err(not_tsa(NotTsaReason::IsCa));
            }
        }
        match parsed.decode_extension::<ExtendedKeyUsage>(
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
            parsed.decode_extension::<KeyUsage>(CE_KEY_USAGE, Extension::KeyUsage)?
        {
            if !ku.digital_signature() && !ku.non_repudiation() {
                return Err(not_tsa(NotTsaReason::KeyUsage));
            }
        }
        let (n, e) = rsa_components(&parsed.tbs().subject_public_key_info)?;
        let public = PublicKey::new(n, e)?;
        Ok(Self { parsed, public })
    }

    /// Finds a chain from this certificate to one of `anchors`, through the CA certificates of
    /// `pool` (DER, untrusted: a token's certificates), every certificate of it valid at `at`.
    /// Returns the index of the anchor reached.
    pub fn path_to(
        &self,
        pool: &[Vec<u8>],
        anchors: &[TsaAnchor],
        at: SystemTime,
    ) -> Result<usize> {
        self.parsed.check_validity(at, CertRole::Certificate)?;
        let intermediates: Vec<CaCertificate> = pool
            .iter()
            .filter_map(|der| CaCertificate::from_bytes(der).ok())
            .collect();
        let mut current = &self.parsed;
        for _ in 0..=MAX_INTERMEDIATES {
            for (i, anchor) in anchors.iter().enumerate() {
                if anchor.signed(current, at)? {
                    return Ok(i);
                }
            }
            let issuer = intermediates.iter().find(|ca| {
                current.tbs().issuer == ca.parsed.tbs().subject
                    && current
                        .check_signature(ca.public_key(), CertRole::Certificate)
                        .is_ok()
            });
            match issuer {
                Some(ca) => {
                    ca.parsed.check_validity(at, CertRole::CaCertificate)?;
                    current = &ca.parsed;
                }
                None => break,
            }
        }
        Err(CertificateError::NoPathToAnchor {
            subject: self.subject(),
            issuer: self.parsed.tbs().issuer.to_string(),
            anchors: anchors.iter().map(TsaAnchor::name).collect(),
        })
    }

    /// The certified key.
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// The subject name as an RFC 4514 string.
    pub fn subject(&self) -> String {
        self.parsed.tbs().subject.to_string()
    }

    /// The subject's common name, if any.
    pub fn common_name(&self) -> Option<String> {
        common_name(&self.parsed.tbs().subject)
    }

    /// The issuer name.
    pub fn issuer_name(&self) -> &Name {
        &self.parsed.tbs().issuer
    }

    /// The serial number.
    pub fn serial_number(&self) -> &SerialNumber {
        &self.parsed.tbs().serial_number
    }

    /// The DER encoding.
    pub fn to_der(&self) -> &[u8] {
        &self.parsed.der
    }

    /// The PEM encoding (`-----BEGIN CERTIFICATE-----`).
    pub fn to_pem(&self) -> String {
        to_pem(&self.parsed.der)
    }

    /// Start of the validity period.
    pub fn not_before(&self) -> SystemTime {
        self.parsed.tbs().validity.not_before.to_system_time()
    }

    /// End of the validity period.
    pub fn not_after(&self) -> SystemTime {
        self.parsed.tbs().validity.not_after.to_system_time()
    }
}

//! An institution's certificate authority: a CA certificate with an RSA key, and the
//! certificates it issues.

use std::time::SystemTime;

use der::asn1::{BitString, OctetString};
use der::{Encode, Tag};
use hourglass_arith::entropy::EntropySource;
use hourglass_rsa::padding::Pkcs1v15Sign;
use hourglass_rsa::{HashAlg, PrivateKey, PublicKey};
use spki::SubjectPublicKeyInfoOwned;
use x509_cert::ext::pkix::{
    AuthorityKeyIdentifier, BasicConstraints, KeyUsage, KeyUsages, SubjectKeyIdentifier,
};
use x509_cert::name::Name;
use x509_cert::Version;

use crate::certificate::{
    sha256_with_rsa, Certificate, CertificateAsn1, RawExtension, TbsCertificate,
};
use crate::error::{
    encoding, CertRole, CertificateError, EncodedItem, Extension, NotCaReason, Result,
};
use crate::key::{key_identifier, random_serial, rsa_components, rsa_spki};
use crate::name::{check_common_name, make_name};
use crate::oid::{
    AT_COMMON_NAME, CE_AUTHORITY_KEY_IDENTIFIER, CE_BASIC_CONSTRAINTS, CE_KEY_USAGE,
    CE_SUBJECT_KEY_IDENTIFIER,
};
use crate::options::CertificateOptions;

/// Signs a TBSCertificate with the CA key (sha256WithRSAEncryption, PKCS#1 v1.5).
fn sign(tbs: TbsCertificate, key: &PrivateKey, rng: &mut dyn EntropySource) -> Result<Certificate> {
    let tbs_der = tbs
        .to_der()
        .map_err(encoding(EncodedItem::TbsCertificate))?;
    let sig = Pkcs1v15Sign::new(HashAlg::Sha256).sign(key, &tbs_der, rng)?;
    let cert = CertificateAsn1 {
        tbs_certificate: tbs,
        signature_algorithm: sha256_with_rsa(),
        signature: BitString::from_bytes(&sig).map_err(encoding(EncodedItem::Signature))?,
    };
    let der = cert.to_der().map_err(encoding(EncodedItem::Certificate))?;
    Ok(Certificate { der, tbs_der, cert })
}

/// An institution's certificate authority: a CA certificate with an RSA key.
#[derive(Debug, Clone)]
pub struct CaCertificate {
    cert: Certificate,
    public: PublicKey,
}

impl CaCertificate {
    /// Makes a self-signed CA certificate for `key`: subject and issuer `CN=<common name>`,
    /// basicConstraints `CA:TRUE` (critical), keyUsage keyCertSign and cRLSign (critical),
    /// subjectKeyIdentifier, a random serial number, signed with sha256WithRSAEncryption.
    pub fn self_signed(
        key: &PrivateKey,
        options: &CertificateOptions,
        rng: &mut dyn EntropySource,
    ) -> Result<Self> {
        check_common_name(&options.common_name)?;
        let name = make_name(&[(AT_COMMON_NAME, Tag::Utf8String, &options.common_name)])?;
        let spki = rsa_spki(key.public().n(), key.public().e())?;
        let ski = key_identifier(&spki);
        let extensions = vec![
            RawExtension::standard(
                CE_BASIC_CONSTRAINTS,
                true,
                &BasicConstraints {
                    ca: true,
                    path_len_constraint: None,
                },
            )?,
            RawExtension::standard(
                CE_KEY_USAGE,
                true,
                &KeyUsage(KeyUsages::KeyCertSign | KeyUsages::CRLSign),
            )?,
            RawExtension::standard(
                CE_SUBJECT_KEY_IDENTIFIER,
                false,
                &SubjectKeyIdentifier(OctetString::new(ski).map_err(encoding(EncodedItem::KeyId))?),
            )?,
        ];
        let tbs = TbsCertificate {
            version: Version::V3,
            serial_number: random_serial(rng)?,
            signature: sha256_with_rsa(),
            issuer: name.clone(),
            validity: options.validity.to_asn1()?,
            subject: name,
            subject_public_key_info: spki,
            issuer_unique_id: None,
            subject_unique_id: None,
            extensions: Some(extensions),
        };
        Self::from_certificate(sign(tbs, key, rng)?)
    }

    /// Reads a CA certificate (PEM or DER) and checks that it is one: version 3,
    /// basicConstraints `CA:TRUE`, keyUsage (if present) with keyCertSign, an RSA key, and a
    /// valid signature if it is self-issued. Its validity period is checked when it is used.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_certificate(Certificate::from_bytes(bytes)?)
    }

    fn from_certificate(cert: Certificate) -> Result<Self> {
        if cert.tbs().version != Version::V3 {
            return Err(CertificateError::NotCa(NotCaReason::NotV3));
        }
        cert.check_critical(&[])?;
        match cert.decode_extension::<BasicConstraints>(
            CE_BASIC_CONSTRAINTS,
            Extension::BasicConstraints,
        )? {
            Some((_, bc)) if bc.ca => {}
            _ => return Err(CertificateError::NotCa(NotCaReason::NotCaTrue)),
        }
        if let Some((_, ku)) =
            cert.decode_extension::<KeyUsage>(CE_KEY_USAGE, Extension::KeyUsage)?
        {
            if !ku.key_cert_sign() {
                return Err(CertificateError::NotCa(NotCaReason::NoKeyCertSign));
            }
        }
        let (n, e) = rsa_components(&cert.tbs().subject_public_key_info)?;
        let public =
            PublicKey::new(n, e).map_err(|err| CertificateError::NotCa(NotCaReason::Key(err)))?;
        if cert.tbs().issuer == cert.tbs().subject {
            cert.check_signature(&public, CertRole::CaCertificate)?;
        }
        Ok(Self { cert, public })
    }

    /// Signs, with the CA's key, a version 3 certificate that this CA issues to `subject` for
    /// `spki` with `extensions`, valid as `options` says, under a random serial number.
    /// Refuses a key that is not this CA's, and a CA certificate that is not valid now.
    pub fn issue(
        &self,
        ca_key: &PrivateKey,
        subject: Name,
        spki: SubjectPublicKeyInfoOwned,
        extensions: Vec<RawExtension>,
        options: &CertificateOptions,
        rng: &mut dyn EntropySource,
    ) -> Result<Certificate> {
        if ca_key.public() != self.public_key() {
            return Err(CertificateError::KeyMismatch);
        }
        self.cert
            .check_validity(SystemTime::now(), CertRole::CaCertificate)?;
        let tbs = TbsCertificate {
            version: Version::V3,
            serial_number: random_serial(rng)?,
            signature: sha256_with_rsa(),
            issuer: self.cert.tbs().subject.clone(),
            validity: options.validity.to_asn1()?,
            subject,
            subject_public_key_info: spki,
            issuer_unique_id: None,
            subject_unique_id: None,
            extensions: Some(extensions),
        };
        sign(tbs, ca_key, rng)
    }

    /// Certifies `key` as an intermediate CA under this one: subject `CN=<common name>`,
    /// basicConstraints `CA:TRUE` (critical, with `path_len` when given), keyUsage keyCertSign
    /// and cRLSign (critical), key identifiers.
    pub fn issue_intermediate(
        &self,
        ca_key: &PrivateKey,
        key: &PublicKey,
        path_len: Option<u8>,
        options: &CertificateOptions,
        rng: &mut dyn EntropySource,
    ) -> Result<CaCertificate> {
        check_common_name(&options.common_name)?;
        let subject = make_name(&[(AT_COMMON_NAME, Tag::Utf8String, &options.common_name)])?;
        let spki = rsa_spki(key.n(), key.e())?;
        let key_id = |id: Vec<u8>| OctetString::new(id).map_err(encoding(EncodedItem::KeyId));
        let extensions = vec![
            RawExtension::standard(
                CE_BASIC_CONSTRAINTS,
                true,
                &BasicConstraints {
                    ca: true,
                    path_len_constraint: path_len,
                },
            )?,
            RawExtension::standard(
                CE_KEY_USAGE,
                true,
                &KeyUsage(KeyUsages::KeyCertSign | KeyUsages::CRLSign),
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
                    key_identifier: Some(key_id(self.key_id()?)?),
                    authority_cert_issuer: None,
                    authority_cert_serial_number: None,
                },
            )?,
        ];
        let cert = self.issue(ca_key, subject, spki, extensions, options, rng)?;
        Self::from_certificate(cert)
    }

    /// The certificate.
    pub fn certificate(&self) -> &Certificate {
        &self.cert
    }

    /// The CA's public key.
    pub fn public_key(&self) -> &PublicKey {
        &self.public
    }

    /// The subject name as an RFC 4514 string (`CN=Example University`).
    pub fn subject(&self) -> String {
        self.cert.subject()
    }

    /// The subject's common name, if any.
    pub fn common_name(&self) -> Option<String> {
        self.cert.common_name()
    }

    /// End of the validity period.
    pub fn not_after(&self) -> SystemTime {
        self.cert.not_after()
    }

    /// The serial number in hex.
    pub fn serial_hex(&self) -> String {
        self.cert.serial_hex()
    }

    /// SHA-256 of the DER certificate, in hex (what `openssl x509 -fingerprint -sha256` shows).
    pub fn sha256_hex(&self) -> String {
        self.cert.sha256_hex()
    }

    /// The DER encoding.
    pub fn to_der(&self) -> &[u8] {
        self.cert.to_der()
    }

    /// The PEM encoding (`-----BEGIN CERTIFICATE-----`).
    pub fn to_pem(&self) -> String {
        self.cert.to_pem()
    }

    /// The key identifier to name this CA in certificates it issues: its subjectKeyIdentifier,
    /// or the SHA-1 of its key when it has none.
    pub fn key_id(&self) -> Result<Vec<u8>> {
        Ok(
            match self.cert.decode_extension::<SubjectKeyIdentifier>(
                CE_SUBJECT_KEY_IDENTIFIER,
                Extension::SubjectKeyIdentifier,
            )? {
                Some((_, ski)) => ski.0.as_bytes().to_vec(),
                None => key_identifier(&self.cert.tbs().subject_public_key_info),
            },
        )
    }
}

//! A certificate read as hourglass reads the certificates it issues: the exact bytes its
//! signature covers, its extensions by raw object identifier, and the checks every profile
//! shares (critical extensions, validity, an RSA signature by an institution's key).
//!
//! TBSCertificate and Extension are modelled here rather than taken from x509-cert, because
//! x509-cert's `ObjectIdentifier` (const-oid 0.9) only holds 32-bit arcs and so cannot decode an
//! extension under a UUID arc (the time-lock parameters); extension IDs are kept as raw OID
//! values.

use std::time::SystemTime;

use der::asn1::{Any, BitString, OctetString};
use der::oid::ObjectIdentifier;
use der::{Decode, Encode, Reader, Sequence, SliceReader, Tag, Tagged};
use hourglass_rsa::padding::Pkcs1v15Sign;
use hourglass_rsa::{HashAlg, PublicKey};
use sha2::{Digest, Sha256};
use spki::{AlgorithmIdentifierOwned, SubjectPublicKeyInfoOwned};
use x509_cert::name::Name;
use x509_cert::serial_number::SerialNumber;
use x509_cert::time::Validity;
use x509_cert::Version;

use crate::error::{
    encoding, malformed, CertRole, CertificateError, EncodedItem, Extension, Malformation, Result,
};
use crate::name::common_name;
use crate::oid::{
    oid_text, CE_AUTHORITY_KEY_IDENTIFIER, CE_BASIC_CONSTRAINTS, CE_KEY_USAGE, CE_SUBJECT_ALT_NAME,
    CE_SUBJECT_KEY_IDENTIFIER, SHA256_WITH_RSA, SHA384_WITH_RSA, SHA512_WITH_RSA,
};
use crate::pem::{find, pem_certificate, to_pem, MAX_CERTIFICATE_FILE};

/// `Extension ::= SEQUENCE { extnID OBJECT IDENTIFIER, critical BOOLEAN DEFAULT FALSE,
/// extnValue OCTET STRING }`, with the OID kept as an `Any`.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub struct RawExtension {
    extn_id: Any,
    #[asn1(default = "Default::default")]
    critical: bool,
    extn_value: OctetString,
}

impl RawExtension {
    /// An extension of any OID (its DER content octets), criticality and value.
    pub fn new(oid_der: &[u8], critical: bool, value: Vec<u8>) -> Result<Self> {
        Ok(Self {
            extn_id: Any::new(Tag::ObjectIdentifier, oid_der)
                .map_err(encoding(EncodedItem::Extension))?,
            critical,
            extn_value: OctetString::new(value).map_err(encoding(EncodedItem::Extension))?,
        })
    }

    /// An extension whose OID const-oid can hold, with `value` DER-encoded.
    pub fn standard<T: Encode>(oid: ObjectIdentifier, critical: bool, value: &T) -> Result<Self> {
        Self::new(
            oid.as_bytes(),
            critical,
            value.to_der().map_err(encoding(EncodedItem::Extension))?,
        )
    }

    /// Whether this extension's OID has these DER content octets.
    pub fn is(&self, oid_der: &[u8]) -> bool {
        self.extn_id.tag() == Tag::ObjectIdentifier && self.extn_id.value() == oid_der
    }

    /// The OID, dotted.
    pub fn oid_text(&self) -> String {
        oid_text(self.extn_id.value())
    }

    /// Whether the extension is critical.
    pub fn critical(&self) -> bool {
        self.critical
    }

    /// The extension's value (the content of extnValue).
    pub fn value(&self) -> &[u8] {
        self.extn_value.as_bytes()
    }
}

/// `TBSCertificate` (RFC 5280 section 4.1).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
#[allow(missing_docs)] // The fields are RFC 5280's.
pub struct TbsCertificate {
    #[asn1(context_specific = "0", default = "Default::default")]
    pub version: Version,
    pub serial_number: SerialNumber,
    pub signature: AlgorithmIdentifierOwned,
    pub issuer: Name,
    pub validity: Validity,
    pub subject: Name,
    pub subject_public_key_info: SubjectPublicKeyInfoOwned,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    pub issuer_unique_id: Option<BitString>,
    #[asn1(context_specific = "2", tag_mode = "IMPLICIT", optional = "true")]
    pub subject_unique_id: Option<BitString>,
    #[asn1(context_specific = "3", tag_mode = "EXPLICIT", optional = "true")]
    pub extensions: Option<Vec<RawExtension>>,
}

/// `Certificate ::= SEQUENCE { tbsCertificate, signatureAlgorithm, signature BIT STRING }`.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct CertificateAsn1 {
    pub(crate) tbs_certificate: TbsCertificate,
    pub(crate) signature_algorithm: AlgorithmIdentifierOwned,
    pub(crate) signature: BitString,
}

/// A parsed certificate with the exact bytes its signature covers.
#[derive(Clone, Debug)]
pub struct Certificate {
    pub(crate) der: Vec<u8>,
    pub(crate) tbs_der: Vec<u8>,
    pub(crate) cert: CertificateAsn1,
}

impl Certificate {
    /// Reads a certificate, PEM (the first `CERTIFICATE` block of a file, text around it
    /// allowed) or DER, and checks its form as [`Self::from_der`] does. Input that starts (after
    /// whitespace) with a DER SEQUENCE is DER and nothing else: no PEM is looked for inside it,
    /// so bytes a CA copied into a certificate can never stand for another certificate.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        if bytes.len() > MAX_CERTIFICATE_FILE {
            return Err(malformed(Malformation::TooLarge {
                max: MAX_CERTIFICATE_FILE,
            }));
        }
        let start = bytes
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .ok_or(malformed(Malformation::Empty))?;
        if bytes[start] == 0x30 {
            return Self::from_der(&bytes[start..]);
        }
        match find(bytes, b"-----BEGIN ") {
            Some(at) => Self::from_der(&pem_certificate(&bytes[at..])?),
            None => Err(malformed(Malformation::NotPemOrDer)),
        }
    }

    /// Reads a certificate's DER (exactly one, nothing after it) and checks its form: no
    /// extensions before version 3, the same signature algorithm inside and outside the signed
    /// part, no extension twice.
    pub fn from_der(der: &[u8]) -> Result<Self> {
        if der.len() > MAX_CERTIFICATE_FILE {
            return Err(malformed(Malformation::TooLarge {
                max: MAX_CERTIFICATE_FILE,
            }));
        }
        let der = der.to_vec();
        let cert =
            CertificateAsn1::from_der(&der).map_err(|e| malformed(Malformation::NotX509(e)))?;
        let tbs_der = raw_tbs(&der)?.to_vec();
        let tbs = &cert.tbs_certificate;
        if tbs.extensions.is_some() && tbs.version != Version::V3 {
            return Err(malformed(Malformation::ExtensionsBeforeV3));
        }
        if tbs.signature != cert.signature_algorithm {
            return Err(malformed(Malformation::AlgorithmMismatch));
        }
        let exts = tbs.extensions.as_deref().unwrap_or(&[]);
        for (i, a) in exts.iter().enumerate() {
            if exts[..i].iter().any(|b| b.extn_id == a.extn_id) {
                return Err(malformed(Malformation::DuplicateExtension {
                    oid: a.oid_text(),
                }));
            }
        }
        Ok(Self { der, tbs_der, cert })
    }

    /// The signed part.
    pub fn tbs(&self) -> &TbsCertificate {
        &self.cert.tbs_certificate
    }

    /// The extension with this OID (DER content octets), if any.
    pub fn extension(&self, oid_der: &[u8]) -> Option<&RawExtension> {
        self.tbs()
            .extensions
            .as_deref()
            .unwrap_or(&[])
            .iter()
            .find(|e| e.is(oid_der))
    }

    /// The extension with this OID decoded as `T`, with its criticality; a value that does not
    /// decode is a malformed certificate.
    pub fn decode_extension<'a, T: Decode<'a>>(
        &'a self,
        oid: ObjectIdentifier,
        extension: Extension,
    ) -> Result<Option<(bool, T)>> {
        match self.extension(oid.as_bytes()) {
            None => Ok(None),
            Some(e) => T::from_der(e.extn_value.as_bytes())
                .map(|v| Some((e.critical, v)))
                .map_err(|source| malformed(Malformation::Extension { extension, source })),
        }
    }

    /// Refuses critical extensions this module does not process (RFC 5280 section 4.2), the
    /// ones in `also` aside (processed by the caller).
    pub fn check_critical(&self, also: &[&[u8]]) -> Result<()> {
        let known: [&[u8]; 5] = [
            CE_BASIC_CONSTRAINTS.as_bytes(),
            CE_KEY_USAGE.as_bytes(),
            CE_SUBJECT_ALT_NAME.as_bytes(),
            CE_SUBJECT_KEY_IDENTIFIER.as_bytes(),
            CE_AUTHORITY_KEY_IDENTIFIER.as_bytes(),
        ];
        for e in self.tbs().extensions.as_deref().unwrap_or(&[]) {
            if e.critical && !known.iter().chain(also).any(|k| e.is(k)) {
                return Err(malformed(Malformation::UnsupportedCritical {
                    oid: e.oid_text(),
                }));
            }
        }
        Ok(())
    }

    /// Whether `now` is within the validity period (both ends inclusive).
    pub fn check_validity(&self, now: SystemTime, what: CertRole) -> Result<()> {
        let v = &self.tbs().validity;
        let (not_before, not_after) = (v.not_before.to_system_time(), v.not_after.to_system_time());
        if now < not_before {
            return Err(CertificateError::NotYetValid {
                what,
                not_before,
                now,
            });
        }
        if now > not_after {
            return Err(CertificateError::Expired {
                what,
                not_after,
                now,
            });
        }
        Ok(())
    }

    /// Checks the signature with `key` over the exact bytes of the TBSCertificate.
    pub fn check_signature(&self, key: &PublicKey, what: CertRole) -> Result<()> {
        let hash = signature_hash(&self.cert.signature_algorithm)?;
        let sig = self
            .cert
            .signature
            .as_bytes()
            .ok_or(CertificateError::BadSignature { what })?;
        Pkcs1v15Sign::new(hash)
            .verify(key, &self.tbs_der, sig)
            .map_err(|_| CertificateError::BadSignature { what })
    }

    /// The DER encoding.
    pub fn to_der(&self) -> &[u8] {
        &self.der
    }

    /// The PEM encoding (`-----BEGIN CERTIFICATE-----`).
    pub fn to_pem(&self) -> String {
        to_pem(&self.der)
    }

    /// The subject name as an RFC 4514 string.
    pub fn subject(&self) -> String {
        self.tbs().subject.to_string()
    }

    /// The subject's common name, if any.
    pub fn common_name(&self) -> Option<String> {
        common_name(&self.tbs().subject)
    }

    /// The issuer name as an RFC 4514 string.
    pub fn issuer(&self) -> String {
        self.tbs().issuer.to_string()
    }

    /// Start of the validity period.
    pub fn not_before(&self) -> SystemTime {
        self.tbs().validity.not_before.to_system_time()
    }

    /// End of the validity period.
    pub fn not_after(&self) -> SystemTime {
        self.tbs().validity.not_after.to_system_time()
    }

    /// The serial number in hex.
    pub fn serial_hex(&self) -> String {
        hex::encode(self.tbs().serial_number.as_bytes())
    }

    /// SHA-256 of the DER certificate, in hex (what `openssl x509 -fingerprint -sha256` shows).
    pub fn sha256_hex(&self) -> String {
        hex::encode(Sha256::digest(&self.der))
    }

    /// The bytes of the subjectPublicKey bit string.
    pub fn subject_key_bits(&self) -> &[u8] {
        self.tbs()
            .subject_public_key_info
            .subject_public_key
            .raw_bytes()
    }
}

/// The DER of every certificate of a file: each `CERTIFICATE` block of PEM, in order, or the
/// one certificate of a DER file (a file that starts, after whitespace, with a DER SEQUENCE:
/// no PEM is looked for inside it). A file larger than [`MAX_CERTIFICATE_FILE`] is refused.
pub fn pem_certificates(bytes: &[u8]) -> Result<Vec<Vec<u8>>> {
    if bytes.len() > MAX_CERTIFICATE_FILE {
        return Err(malformed(Malformation::TooLarge {
            max: MAX_CERTIFICATE_FILE,
        }));
    }
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&0x30) {
        return Ok(vec![Certificate::from_bytes(bytes)?.der]);
    }
    let mut rest = bytes;
    let mut ders = Vec::new();
    while let Some(start) = find(rest, b"-----BEGIN ") {
        let der = pem_certificate(&rest[start..])?;
        let end = find(&rest[start..], b"-----END CERTIFICATE-----").map_or(rest.len(), |e| {
            start + e + b"-----END CERTIFICATE-----".len()
        });
        ders.push(der);
        rest = &rest[end..];
    }
    if ders.is_empty() {
        ders.push(Certificate::from_bytes(bytes)?.der);
    }
    Ok(ders)
}

/// The raw TBSCertificate (tag, length and content) inside a certificate's DER.
fn raw_tbs(der: &[u8]) -> Result<&[u8]> {
    let mut reader = SliceReader::new(der).map_err(|e| malformed(Malformation::Structure(e)))?;
    let tbs = reader
        .sequence(|r| {
            let tbs = r.tlv_bytes()?;
            r.tlv_bytes()?;
            r.tlv_bytes()?;
            Ok(tbs)
        })
        .map_err(|e| malformed(Malformation::Structure(e)))?;
    reader
        .finish(tbs)
        .map_err(|e| malformed(Malformation::Structure(e)))
}

fn signature_hash(alg: &AlgorithmIdentifierOwned) -> Result<HashAlg> {
    let hash = match alg.oid {
        SHA256_WITH_RSA => HashAlg::Sha256,
        SHA384_WITH_RSA => HashAlg::Sha384,
        SHA512_WITH_RSA => HashAlg::Sha512,
        other => return Err(CertificateError::UnsupportedAlgorithm(other)),
    };
    match &alg.parameters {
        None => {}
        Some(p) if p.tag() == Tag::Null && p.value().is_empty() => {}
        Some(_) => return Err(malformed(Malformation::SignatureParameters)),
    }
    Ok(hash)
}

pub(crate) fn null() -> Any {
    Any::from(der::asn1::Null)
}

pub(crate) fn sha256_with_rsa() -> AlgorithmIdentifierOwned {
    AlgorithmIdentifierOwned {
        oid: SHA256_WITH_RSA,
        parameters: Some(null()),
    }
}

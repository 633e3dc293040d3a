//! A timestamp authority: answers queries with tokens signed by its RSA or ECDSA key, or with
//! a rejection that names RFC 3161's failInfo.

use std::time::SystemTime;

use cms::cert::{CertificateChoices, IssuerAndSerialNumber};
use cms::content_info::{CmsVersion, ContentInfo};
use cms::signed_data::{
    CertificateSet, EncapsulatedContentInfo, SignedData, SignerIdentifier, SignerInfo, SignerInfos,
};
use der::asn1::{Any, Int, OctetString, SetOfVec};
use der::{Decode, Encode};
use hourglass_arith::entropy::EntropySource;
use hourglass_x509::{Certificate, CertificateError};
use sha2::{Digest, Sha256};
use spki::AlgorithmIdentifierOwned;
use x509_cert::attr::Attribute;
use x509_tsp::{Accuracy, MessageImprint};

use crate::asn1::{null, positive_int, EssCertIdV2, SigningCertificateV2, TstInfoAsn1};
use crate::error::{malformed, not_der, Result, TimestampError};
use crate::fail_info::{FailInfo, Rejection};
use crate::gen_time::GenTime;
use crate::oid::{
    ID_CONTENT_TYPE, ID_CT_TST_INFO, ID_MESSAGE_DIGEST, ID_SIGNED_DATA, ID_SIGNING_CERTIFICATE_V2,
};
use crate::policy::PolicyId;
use crate::profile::TsaCertificate;
use crate::query::{hash_oid, Query};
use crate::reply::granted_reply;
use crate::signing_key::TsaKey;

/// The accuracy every token of ours states: `genTime` is within one second.
pub const ACCURACY_SECONDS: u64 = 1;

/// A timestamp authority: its key (RSA or ECDSA), its TSA certificate, the certificates to
/// send with it and the policy it stamps under.
#[derive(Debug)]
pub struct Tsa {
    key: TsaKey,
    cert: TsaCertificate,
    chain: Vec<Vec<u8>>,
    policy: PolicyId,
    signing_certificate: Any,
    sid: SignerIdentifier,
}

impl Tsa {
    /// An authority signing with `key` under `cert`, sending `cert` and `chain` (its CA
    /// certificates) when a query asks for certificates. Refuses a key that is not the
    /// certificate's.
    pub fn new(
        key: TsaKey,
        cert: TsaCertificate,
        chain: Vec<Certificate>,
        policy: PolicyId,
    ) -> Result<Self> {
        if key.verifying_key().as_ref() != Some(cert.key()) {
            return Err(TimestampError::Certificate(CertificateError::KeyMismatch));
        }
        let ess = SigningCertificateV2 {
            certs: vec![EssCertIdV2 {
                hash_algorithm: None,
                cert_hash: OctetString::new(Sha256::digest(cert.to_der()).to_vec())
                    .map_err(not_der("signing certificate"))?,
                issuer_serial: None,
            }],
            policies: None,
        };
        let signing_certificate = Any::encode_from(&ess).map_err(not_der("signing certificate"))?;
        let sid = SignerIdentifier::IssuerAndSerialNumber(IssuerAndSerialNumber {
            issuer: cert.issuer_name().clone(),
            serial_number: cert.serial_number().clone(),
        });
        Ok(Self {
            key,
            chain: chain.iter().map(|c| c.to_der().to_vec()).collect(),
            cert,
            policy,
            signing_certificate,
            sid,
        })
    }

    /// The TSA certificate.
    pub fn certificate(&self) -> &TsaCertificate {
        &self.cert
    }

    /// The policy stamped under.
    pub fn policy(&self) -> &PolicyId {
        &self.policy
    }

    /// Answers the DER of a query with a `TimeStampResp`: a token with serial number `serial`
    /// (unsigned big-endian, at most 20 bytes) and `genTime` `now` in whole seconds, or a
    /// rejection naming its failInfo. Never fails: a failure to sign is a `systemFailure`.
    pub fn reply(
        &self,
        query: &[u8],
        serial: &[u8],
        now: SystemTime,
        rng: &mut dyn EntropySource,
    ) -> Vec<u8> {
        match self.token(query, serial, now, rng) {
            Ok(token) => granted_reply(&token).unwrap_or_else(|_| {
                Rejection::new(FailInfo::SystemFailure, "the reply could not be encoded").to_reply()
            }),
            Err(r) => r.to_reply(),
        }
    }

    /// The token for the DER of a query, or the rejection to answer (see [`Self::reply`]).
    pub fn token(
        &self,
        query: &[u8],
        serial: &[u8],
        now: SystemTime,
        rng: &mut dyn EntropySource,
    ) -> std::result::Result<Vec<u8>, Rejection> {
        let query = Query::parse(query)?;
        if query.policy().is_some_and(|p| *p != self.policy) {
            return Err(Rejection::new(
                FailInfo::UnacceptedPolicy,
                "this TSA does not stamp under the policy asked for",
            ));
        }
        self.stamp(&query, serial, now, rng).map_err(|_| {
            Rejection::new(FailInfo::SystemFailure, "the TSA could not sign the token")
        })
    }

    /// Signs a token for a parsed query (its policy is not checked here).
    pub fn stamp(
        &self,
        query: &Query,
        serial: &[u8],
        now: SystemTime,
        rng: &mut dyn EntropySource,
    ) -> Result<Vec<u8>> {
        if serial.len() > 20 {
            return Err(malformed("serial number", "over 160 bits"));
        }
        let enc = not_der("token");
        let tst = TstInfoAsn1 {
            version: 1,
            policy: self.policy.clone(),
            message_imprint: MessageImprint {
                hash_algorithm: AlgorithmIdentifierOwned {
                    oid: hash_oid(query.hash()),
                    parameters: Some(null()),
                },
                hashed_message: OctetString::new(query.imprint()).map_err(&enc)?,
            },
            serial_number: positive_int(serial).map_err(&enc)?,
            gen_time: GenTime::of(now).map_err(&enc)?,
            accuracy: Some(Accuracy {
                seconds: Some(ACCURACY_SECONDS),
                millis: None,
                micros: None,
            }),
            ordering: false,
            nonce: query.nonce().map(Int::new).transpose().map_err(&enc)?,
            tsa: None,
            extensions: None,
        };
        let tst_der = tst.to_der().map_err(&enc)?;
        let attribute = |oid, value: Any| -> Result<Attribute> {
            Ok(Attribute {
                oid,
                values: SetOfVec::try_from(vec![value]).map_err(&enc)?,
            })
        };
        let attrs = SetOfVec::try_from(vec![
            attribute(
                ID_CONTENT_TYPE,
                Any::encode_from(&ID_CT_TST_INFO).map_err(&enc)?,
            )?,
            attribute(
                ID_MESSAGE_DIGEST,
                Any::encode_from(
                    &OctetString::new(self.key.digest().digest(&tst_der)).map_err(&enc)?,
                )
                .map_err(&enc)?,
            )?,
            attribute(ID_SIGNING_CERTIFICATE_V2, self.signing_certificate.clone())?,
        ])
        .map_err(&enc)?;
        let signature = self
            .key
            .sign(&attrs.to_der().map_err(&enc)?, rng)
            .map_err(|e| TimestampError::Sign(e.to_string()))?;
        let digest_alg = AlgorithmIdentifierOwned {
            oid: hash_oid(self.key.digest()),
            parameters: None,
        };
        let signer = SignerInfo {
            version: CmsVersion::V1,
            sid: self.sid.clone(),
            digest_alg: digest_alg.clone(),
            signed_attrs: Some(attrs),
            signature_algorithm: self.key.signature_algorithm(),
            signature: OctetString::new(signature).map_err(&enc)?,
            unsigned_attrs: None,
        };
        let certificates = if query.cert_req() {
            let mut set = Vec::with_capacity(1 + self.chain.len());
            for der in
                std::iter::once(self.cert.to_der()).chain(self.chain.iter().map(Vec::as_slice))
            {
                set.push(CertificateChoices::Certificate(
                    x509_cert::Certificate::from_der(der).map_err(&enc)?,
                ));
            }
            Some(CertificateSet(SetOfVec::try_from(set).map_err(&enc)?))
        } else {
            None
        };
        let sd = SignedData {
            version: CmsVersion::V3,
            digest_algorithms: SetOfVec::try_from(vec![digest_alg]).map_err(&enc)?,
            encap_content_info: EncapsulatedContentInfo {
                econtent_type: ID_CT_TST_INFO,
                econtent: Some(
                    Any::encode_from(&OctetString::new(tst_der).map_err(&enc)?).map_err(&enc)?,
                ),
            },
            certificates,
            crls: None,
            signer_infos: SignerInfos(SetOfVec::try_from(vec![signer]).map_err(&enc)?),
        };
        ContentInfo {
            content_type: ID_SIGNED_DATA,
            content: Any::encode_from(&sd).map_err(&enc)?,
        }
        .to_der()
        .map_err(enc)
    }
}

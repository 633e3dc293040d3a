//! What a token or reply says, read without trusting it (as `openssl ts -reply -text` prints
//! it): the reply's status, the TSTInfo, the certificates the token carries and how its signer
//! says it signed. Nothing here is verified; [`crate::verify_token`] judges.

use cms::cert::CertificateChoices;
use cms::signed_data::SignerIdentifier;
use der::Decode;
use serde::ser::SerializeStruct;

use crate::error::Result;
use crate::reply::{token_of, MAX_TOKEN_BYTES};
use crate::signature::{hash_name, sha2_of, SignatureAlgorithm};
use crate::token::{signed_data, TokenInfo};

/// A token or reply, read without trusting it.
#[derive(Debug, Clone)]
pub struct Inspection {
    reply: bool,
    info: TokenInfo,
    certificates: Vec<String>,
    signer: String,
    digest: String,
    signature: String,
}

impl Inspection {
    /// Reads a bare token or a granted reply (a refused reply is an error naming its status and
    /// failInfo).
    pub fn of(bytes: &[u8]) -> Result<Self> {
        let reply = bytes.len() <= MAX_TOKEN_BYTES
            && cms::content_info::ContentInfo::from_der(bytes).is_err();
        let token = token_of(bytes)?;
        let parsed = signed_data(&token)?;
        let info = TokenInfo::from_tst(&parsed.tst_info)?;
        let sd = &parsed.signed_data;
        let certificates = sd
            .certificates
            .iter()
            .flat_map(|c| c.0.iter())
            .filter_map(|c| match c {
                CertificateChoices::Certificate(c) => Some(c.tbs_certificate.subject.to_string()),
                _ => None,
            })
            .collect();
        let (signer, digest, signature) = match sd.signer_infos.0.as_slice().first() {
            Some(si) => {
                let signer = match &si.sid {
                    SignerIdentifier::IssuerAndSerialNumber(ias) => format!(
                        "issuer {}, serial {}",
                        ias.issuer,
                        hex::encode(ias.serial_number.as_bytes())
                    ),
                    SignerIdentifier::SubjectKeyIdentifier(ski) => {
                        format!("subject key identifier {}", hex::encode(ski.0.as_bytes()))
                    }
                };
                let digest = sha2_of(&si.digest_alg);
                let signature = digest
                    .and_then(|d| SignatureAlgorithm::of_signer(&si.signature_algorithm, d).ok())
                    .map_or_else(|| si.signature_algorithm.oid.to_string(), |a| a.name());
                (
                    signer,
                    digest.map_or_else(|| si.digest_alg.oid.to_string(), |d| hash_name(d).into()),
                    signature,
                )
            }
            None => ("none".into(), "none".into(), "none".into()),
        };
        Ok(Self {
            reply,
            info,
            certificates,
            signer,
            digest,
            signature,
        })
    }

    /// Whether the bytes were a reply (`TimeStampResp`, status granted) rather than a bare
    /// token.
    pub fn is_reply(&self) -> bool {
        self.reply
    }

    /// What the TSTInfo states.
    pub fn info(&self) -> &TokenInfo {
        &self.info
    }

    /// The subjects of the certificates the token carries.
    pub fn certificates(&self) -> &[String] {
        &self.certificates
    }

    /// How the signer is identified (issuer and serial, or key identifier).
    pub fn signer(&self) -> &str {
        &self.signer
    }

    /// The signer's digest algorithm.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The signer's signature algorithm, as it names it.
    pub fn signature(&self) -> &str {
        &self.signature
    }
}

impl serde::Serialize for Inspection {
    /// `form` (`reply` or `token`), `version`, `policy`, `hash`, `imprint`, `serial`,
    /// `gen_time`, `accuracy` (seconds or `null`), `latest`, `ordering`, `nonce`, `tsa_name`,
    /// `certificates`, `signer`, `digest`, `signature`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let i = &self.info;
        let mut st = s.serialize_struct("Inspection", 16)?;
        st.serialize_field("form", if self.reply { "reply" } else { "token" })?;
        st.serialize_field("version", &1)?;
        st.serialize_field("policy", i.policy())?;
        st.serialize_field("hash", hash_name(i.hash()))?;
        st.serialize_field("imprint", &hex::encode(i.imprint()))?;
        st.serialize_field("serial", i.serial_hex())?;
        st.serialize_field("gen_time", &i.gen_time_rfc3339())?;
        st.serialize_field(
            "accuracy",
            &i.accuracy_micros().map(|m| m as f64 / 1_000_000.0),
        )?;
        st.serialize_field(
            "latest",
            &humantime::format_rfc3339_seconds(i.latest()).to_string(),
        )?;
        st.serialize_field("ordering", &i.ordering())?;
        st.serialize_field("nonce", &i.nonce().map(hex::encode))?;
        st.serialize_field("tsa_name", &i.tsa_name())?;
        st.serialize_field("certificates", &self.certificates)?;
        st.serialize_field("signer", &self.signer)?;
        st.serialize_field("digest", &self.digest)?;
        st.serialize_field("signature", &self.signature)?;
        st.end()
    }
}

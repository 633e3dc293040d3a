//! Verifying a token the way the world verifies it, against anchors the verifier pins.
//!
//! [`verify_token`] checks, in order: the SignedData's form (one signer, versions); the signed
//! attributes (content type, the message digest of the TSTInfo, the ESS signing certificate
//! naming the signer's certificate); the signer's certificate and its timestamping profile; the
//! signature over the signed attributes as encoded in the token, by the algorithm the signer
//! names (RSA PKCS#1 v1.5 or PSS, ECDSA, Ed25519) under the certificate's key; and the path from
//! that certificate to an anchor, validated by rustls-webpki at `genTime` through the token's
//! certificates and the verifier's untrusted ones. [`verify_token_for`] also checks that the
//! token covers the verifier's data.

use cms::cert::CertificateChoices;
use cms::content_info::CmsVersion;
use cms::signed_data::SignerIdentifier;
use der::asn1::{Any, ObjectIdentifier, OctetString};
use der::{Decode, Encode};
use serde::ser::SerializeStruct;
use sha1::Sha1;
use sha2::Digest;

use crate::anchor::TsaAnchor;
use crate::asn1::{SigningCertificate, SigningCertificateV2};
use crate::error::{malformed, not_der, Result, TimestampError};
use crate::oid::{
    ID_CONTENT_TYPE, ID_CT_TST_INFO, ID_MESSAGE_DIGEST, ID_SIGNING_CERTIFICATE,
    ID_SIGNING_CERTIFICATE_V2,
};
use crate::path::validate;
use crate::profile::TsaCertificate;
use crate::reply::token_of;
use crate::signature::{hash_name, sha2_of, verify, SignatureAlgorithm};
use crate::token::{signed_data, TokenInfo};

/// A token verified against the verifier's anchors: what it states, who signed it and how, and
/// the path that vouches for the signer. Built only by [`verify_token`]; its JSON is the one
/// every surface prints.
#[derive(Clone, Debug)]
pub struct VerifiedToken {
    info: TokenInfo,
    tsa: String,
    signature: String,
    path: Vec<String>,
    anchor: String,
}

impl VerifiedToken {
    /// What the token states.
    pub fn info(&self) -> &TokenInfo {
        &self.info
    }

    /// The authority's certificate subject (RFC 4514).
    pub fn tsa(&self) -> &str {
        &self.tsa
    }

    /// The signature, as `ecdsa-with-SHA256 (ECDSA P-384)`.
    pub fn signature(&self) -> &str {
        &self.signature
    }

    /// The subjects of the path, the authority's first and the anchor's last.
    pub fn path(&self) -> &[String] {
        &self.path
    }

    /// The anchor the path reached.
    pub fn anchor(&self) -> &str {
        &self.anchor
    }
}

impl serde::Serialize for VerifiedToken {
    /// `gen_time` (RFC 3339 with the token's fraction), `gen_time_text` (as the token writes
    /// it), `accuracy` (seconds, `null` if absent), `latest` (RFC 3339: the latest time the token
    /// proves), `tsa`, `tsa_name` (the token's own `tsa` field), `serial` (hex), `policy`,
    /// `hash` (the imprint's), `imprint` (hex), `nonce` (hex or `null`), `signature`, `path`
    /// (subjects, signer to anchor) and `anchor`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let i = &self.info;
        let mut st = s.serialize_struct("VerifiedToken", 14)?;
        st.serialize_field("gen_time", &i.gen_time_rfc3339())?;
        st.serialize_field("gen_time_text", &i.gen_time_text())?;
        st.serialize_field(
            "accuracy",
            &i.accuracy_micros().map(|m| m as f64 / 1_000_000.0),
        )?;
        st.serialize_field(
            "latest",
            &humantime::format_rfc3339_seconds(i.latest()).to_string(),
        )?;
        st.serialize_field("tsa", &self.tsa)?;
        st.serialize_field("tsa_name", &i.tsa_name())?;
        st.serialize_field("serial", i.serial_hex())?;
        st.serialize_field("policy", i.policy())?;
        st.serialize_field("hash", hash_name(i.hash()))?;
        st.serialize_field("imprint", &hex::encode(i.imprint()))?;
        st.serialize_field("nonce", &i.nonce().map(hex::encode))?;
        st.serialize_field("signature", &self.signature)?;
        st.serialize_field("path", &self.path)?;
        st.serialize_field("anchor", &self.anchor)?;
        st.end()
    }
}

/// The verdict on a token as every surface prints it: `{"valid": true, ...}` with the verified
/// token's fields, or `{"valid": false, "reason": ...}` for a negative verdict. `None` for an
/// error (input that could not be read or checked): that is no verdict.
pub fn verdict_json(result: &Result<VerifiedToken>) -> Option<serde_json::Value> {
    match result {
        Ok(v) => {
            let mut json = serde_json::json!({ "valid": true });
            if let (Some(out), Ok(serde_json::Value::Object(fields))) =
                (json.as_object_mut(), serde_json::to_value(v))
            {
                out.extend(fields);
            }
            Some(json)
        }
        Err(e) if e.is_verdict() => {
            Some(serde_json::json!({ "valid": false, "reason": e.to_string() }))
        }
        Err(_) => None,
    }
}

/// The most untrusted certificates a verifier may give.
pub const MAX_UNTRUSTED: usize = 64;

/// What a token must cover: the data, or its digest (under the token's imprint hash).
#[derive(Debug, Clone, Copy)]
pub enum Covered<'a> {
    /// The data itself.
    Data(&'a [u8]),
    /// Its digest, made with the hash the token's imprint names.
    Digest(&'a [u8]),
}

/// [`verify_token`], then checks that the token covers `covered`.
pub fn verify_token_for(
    token: &[u8],
    covered: Covered<'_>,
    untrusted: &[Vec<u8>],
    anchors: &[TsaAnchor],
) -> Result<VerifiedToken> {
    let v = verify_token(token, untrusted, anchors)?;
    let digest = match covered {
        Covered::Data(data) => v.info.hash().digest(data),
        Covered::Digest(d) => d.to_vec(),
    };
    if !v.info.covers_digest(&digest) {
        return Err(TimestampError::ImprintMismatch {
            alg: hash_name(v.info.hash()),
            token: hex::encode(v.info.imprint()),
            data: hex::encode(&digest),
        });
    }
    Ok(v)
}

/// Checks a token (a bare token or a granted reply) against the verifier's anchors, with
/// `untrusted` certificates (DER) to build the path from; returns what it states, signed by
/// whom, and the path. See the module's documentation for the checks.
pub fn verify_token(
    token: &[u8],
    untrusted: &[Vec<u8>],
    anchors: &[TsaAnchor],
) -> Result<VerifiedToken> {
    if anchors.is_empty() {
        return Err(TimestampError::NoAnchor);
    }
    if untrusted.len() > MAX_UNTRUSTED {
        return Err(malformed(
            "untrusted certificates",
            "more than any path needs (at most 64)",
        ));
    }
    let token = token_of(token)?;
    let parsed = signed_data(&token)?;
    let (sd, tst_der) = (&parsed.signed_data, &parsed.tst_info);
    let info = TokenInfo::from_tst(tst_der)?;
    let [signer] = sd.signer_infos.0.as_slice() else {
        return Err(malformed("token", "it must have exactly one signer"));
    };
    if sd.version != CmsVersion::V3 {
        return Err(malformed(
            "token",
            "its SignedData version is not 3 (RFC 5652 5.1)",
        ));
    }
    let signer_version = match signer.sid {
        SignerIdentifier::IssuerAndSerialNumber(_) => CmsVersion::V1,
        SignerIdentifier::SubjectKeyIdentifier(_) => CmsVersion::V3,
    };
    if signer.version != signer_version {
        return Err(malformed(
            "token",
            "its SignerInfo version does not match its signer identifier (RFC 5652 5.3)",
        ));
    }
    if !sd
        .digest_algorithms
        .iter()
        .any(|a| a.oid == signer.digest_alg.oid)
    {
        return Err(malformed(
            "token",
            "its digest algorithms do not list the signer's",
        ));
    }
    let digest =
        sha2_of(&signer.digest_alg).ok_or_else(|| TimestampError::UnsupportedAlgorithm {
            what: "digest",
            oid: signer.digest_alg.oid.to_string(),
        })?;
    let algorithm = SignatureAlgorithm::of_signer(&signer.signature_algorithm, digest)
        .map_err(TimestampError::SignatureAlgorithm)?;
    let attrs = signer
        .signed_attrs
        .as_ref()
        .ok_or(TimestampError::SignedAttributes {
            why: "there are none (RFC 3161 requires the signing certificate among them)",
        })?;
    let attr = |oid: ObjectIdentifier| -> Result<Option<&Any>> {
        let mut found = attrs.iter().filter(|a| a.oid == oid);
        match (found.next(), found.next()) {
            (None, _) => Ok(None),
            (Some(a), None) => match a.values.as_slice() {
                [v] => Ok(Some(v)),
                _ => Err(TimestampError::SignedAttributes {
                    why: "an attribute must have exactly one value",
                }),
            },
            (Some(_), Some(_)) => Err(TimestampError::SignedAttributes {
                why: "an attribute appears twice",
            }),
        }
    };
    let bad_attr = |why| TimestampError::SignedAttributes { why };
    let content_type = attr(ID_CONTENT_TYPE)?
        .ok_or(bad_attr("no content-type attribute"))?
        .decode_as::<ObjectIdentifier>()
        .map_err(|_| bad_attr("the content-type attribute is not an OID"))?;
    if content_type != ID_CT_TST_INFO {
        return Err(bad_attr("the content-type attribute is not id-ct-TSTInfo"));
    }
    let message_digest = attr(ID_MESSAGE_DIGEST)?
        .ok_or(bad_attr("no message-digest attribute"))?
        .decode_as::<OctetString>()
        .map_err(|_| bad_attr("the message-digest attribute is not an OCTET STRING"))?;
    if message_digest.as_bytes() != digest.digest(tst_der).as_slice() {
        return Err(bad_attr(
            "the message digest is not the TSTInfo's: the token was altered",
        ));
    }

    // The signer's certificate: in the token, or given.
    let mut pool: Vec<Vec<u8>> = Vec::new();
    for choice in sd.certificates.iter().flat_map(|c| c.0.iter()) {
        if let CertificateChoices::Certificate(c) = choice {
            pool.push(c.to_der().map_err(not_der("certificate"))?);
        }
    }
    pool.extend(untrusted.iter().cloned());
    let signer_der = pool
        .iter()
        .find(|der| {
            x509_cert::Certificate::from_der(der).is_ok_and(|c| match &signer.sid {
                SignerIdentifier::IssuerAndSerialNumber(ias) => {
                    c.tbs_certificate.issuer == ias.issuer
                        && c.tbs_certificate.serial_number == ias.serial_number
                }
                SignerIdentifier::SubjectKeyIdentifier(ski) => c
                    .tbs_certificate
                    .get::<x509_cert::ext::pkix::SubjectKeyIdentifier>()
                    .ok()
                    .flatten()
                    .is_some_and(|(_, s)| s == *ski),
            })
        })
        .ok_or(TimestampError::NoSignerCertificate)?
        .clone();

    // The ESS signing certificate binds the signature to that certificate.
    let ess_ok = if let Some(v2) = attr(ID_SIGNING_CERTIFICATE_V2)? {
        let sc: SigningCertificateV2 = v2
            .decode_as()
            .map_err(|_| bad_attr("the signing-certificate-v2 attribute does not decode"))?;
        let first = sc
            .certs
            .first()
            .ok_or(bad_attr("the signing-certificate-v2 attribute is empty"))?;
        // Absent: SHA-256, the DEFAULT.
        let hash = match &first.hash_algorithm {
            None => hourglass_rsa::HashAlg::Sha256,
            Some(a) => sha2_of(a).ok_or_else(|| TimestampError::UnsupportedAlgorithm {
                what: "ESSCertIDv2 hash",
                oid: a.oid.to_string(),
            })?,
        };
        first.cert_hash.as_bytes() == hash.digest(&signer_der).as_slice()
    } else if let Some(v1) = attr(ID_SIGNING_CERTIFICATE)? {
        let sc: SigningCertificate = v1
            .decode_as()
            .map_err(|_| bad_attr("the signing-certificate attribute does not decode"))?;
        let first = sc
            .certs
            .first()
            .ok_or(bad_attr("the signing-certificate attribute is empty"))?;
        first.cert_hash.as_bytes() == Sha1::digest(&signer_der).as_slice()
    } else {
        return Err(bad_attr(
            "no signing-certificate attribute (RFC 3161 section 2.4.2 requires one)",
        ));
    };
    if !ess_ok {
        return Err(bad_attr(
            "the signing-certificate attribute names another certificate than the signer's",
        ));
    }

    // The certificate as DER and nothing else, so that the bytes whose hash the ESS attribute
    // names, the path webpki validates and the key that checks the signature are one
    // certificate.
    let cert = TsaCertificate::from_der(&signer_der)?;
    // The path first: a certificate no anchor vouches for never has its key used (an
    // attacker's key could be made costly to use).
    let path = validate(&signer_der, &pool, anchors, info.gen_time_whole()).map_err(|problem| {
        TimestampError::Path {
            subject: cert.subject(),
            problem,
        }
    })?;
    // The signature covers the signed attributes as the token encodes them (a SET OF whose
    // order a re-encoding could change), under the SET tag (RFC 5652 section 5.4).
    let signed = parsed
        .signed_attrs
        .as_deref()
        .ok_or(malformed("token", "its signed attributes cannot be read"))?;
    verify(cert.key(), algorithm, signed, signer.signature.as_bytes()).map_err(|problem| {
        TimestampError::BadSignature {
            subject: cert.subject(),
            problem,
        }
    })?;
    Ok(VerifiedToken {
        tsa: cert.subject(),
        signature: format!("{} ({})", algorithm.name(), cert.key().describe()),
        anchor: anchors[path.anchor].name(),
        path: path.subjects,
        info,
    })
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use hourglass_rsa::HashAlg;
    use hourglass_x509::CaCertificate;

    use super::*;
    use crate::authority::Tsa;
    use crate::error::NotTsaReason;
    use crate::policy::PolicyId;
    use crate::query::Query;
    use crate::signing_key::TsaKey;

    fn unix(t: SystemTime) -> u64 {
        t.duration_since(UNIX_EPOCH).unwrap().as_secs()
    }

    /// Tokens signed under certificates a TSA must not use (OpenSSL's TSA refuses to sign with
    /// them, so they are made here): no extendedKeyUsage, a non-critical one, one with another
    /// purpose beside timeStamping, a CA certificate. Each is refused, naming why.
    #[test]
    fn tokens_under_certificates_without_the_critical_time_stamping_purpose_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let run = |args: &[&str]| {
            let out = std::process::Command::new("openssl")
                .args(args)
                .current_dir(d)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{args:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        run(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-subj",
            "/CN=Root",
            "-days",
            "30",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign",
        ]);
        run(&[
            "req",
            "-new",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "k.pem",
            "-out",
            "k.csr",
            "-subj",
            "/CN=Not a TSA",
        ]);
        let ca = CaCertificate::from_bytes(&std::fs::read(d.join("ca.pem")).unwrap()).unwrap();
        let anchors = [TsaAnchor::from(ca)];
        let cases: [(&str, NotTsaReason); 4] = [
            (
                "keyUsage=critical,digitalSignature",
                NotTsaReason::NoExtendedKeyUsage,
            ),
            ("extendedKeyUsage=timeStamping", NotTsaReason::NotCritical),
            (
                "extendedKeyUsage=critical,timeStamping,serverAuth",
                NotTsaReason::NotOnlyTimeStamping,
            ),
            (
                "basicConstraints=critical,CA:TRUE\nextendedKeyUsage=critical,timeStamping",
                NotTsaReason::IsCa,
            ),
        ];
        let mut rng = hourglass_arith::entropy::SeededEntropy::new(b"bad TSA certificates");
        for (i, (ext, why)) in cases.into_iter().enumerate() {
            std::fs::write(d.join("x.ext"), format!("{ext}\n")).unwrap();
            let out = format!("c{i}.pem");
            run(&[
                "x509",
                "-req",
                "-in",
                "k.csr",
                "-CA",
                "ca.pem",
                "-CAkey",
                "ca.key",
                "-CAcreateserial",
                "-days",
                "30",
                "-extfile",
                "x.ext",
                "-out",
                &out,
            ]);
            let cert = TsaCertificate::unchecked(&std::fs::read(d.join(&out)).unwrap()).unwrap();
            let key = TsaKey::from_pem(&std::fs::read(d.join("k.pem")).unwrap()).unwrap();
            let tsa = Tsa::new(key, cert, vec![], PolicyId::hourglass()).unwrap();
            let q = Query::for_digest(HashAlg::Sha256, &[7; 32], None, None).unwrap();
            let now = UNIX_EPOCH + Duration::from_secs(unix(SystemTime::now()));
            let token = tsa.stamp(&q, &[1], now, &mut rng).unwrap();
            match verify_token(&token, &[], &anchors) {
                Err(e @ TimestampError::NotTsa { .. }) => {
                    assert!(e.is_verdict());
                    let TimestampError::NotTsa { reason, .. } = e else {
                        unreachable!()
                    };
                    assert_eq!(reason, why, "{ext}");
                }
                other => panic!("{ext}: {other:?}"),
            }
        }
    }
}

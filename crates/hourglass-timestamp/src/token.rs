//! Tokens (a CMS SignedData over a TSTInfo): what one states, read without trusting it.

use std::time::{SystemTime, UNIX_EPOCH};

use cms::content_info::ContentInfo;
use cms::signed_data::SignedData;
use der::asn1::OctetString;
use der::{Decode, Encode, Header, Length, Reader, SliceReader, Tag};
use hourglass_rsa::HashAlg;
use x509_cert::ext::pkix::name::GeneralName;
use x509_tsp::Accuracy;

use crate::asn1::TstInfoAsn1;
use crate::error::{malformed, not_der, Result, TimestampError};
use crate::fail_info::{imprint_hash, MAX_NONCE_BYTES};
use crate::gen_time::{latest, within_years, GenTime};
use crate::oid::{ID_CT_TST_INFO, ID_MD5, ID_SHA1, ID_SIGNED_DATA};
use crate::reply::{token_of, MAX_TOKEN_BYTES};

/// The longest serial number read, in bytes (RFC 3161 asks for 160 bits; some use more).
pub const MAX_SERIAL_BYTES: usize = 32;
/// The most digest algorithms a token may list (one is used).
pub const MAX_DIGEST_ALGORITHMS: usize = 8;
/// The most certificates (and CRLs) a token may carry, repeats included (real authorities send
/// up to four).
pub const MAX_TOKEN_CERTIFICATES: usize = 32;
/// The largest certificate (or CRL) a token may carry, in bytes.
pub const MAX_TOKEN_CERTIFICATE_BYTES: usize = 16 * 1024;
/// The most signed (or unsigned) attributes a signer may have, and values per attribute.
pub const MAX_ATTRIBUTES: usize = 32;
/// The largest TSTInfo read, in bytes (real ones are a few hundred).
pub const MAX_TST_INFO_BYTES: usize = 16 * 1024;

/// What a token states, read without trusting it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenInfo {
    policy: String,
    hash: HashAlg,
    imprint: Vec<u8>,
    serial_hex: String,
    gen_time: GenTime,
    accuracy_micros: Option<u64>,
    ordering: bool,
    nonce: Option<Vec<u8>>,
    tsa_name: Option<String>,
}

impl TokenInfo {
    /// Reads the TSTInfo of a token (or of a granted reply), unverified, refusing SHA-1 and MD5
    /// imprints.
    pub fn of_token(token: &[u8]) -> Result<Self> {
        let token = token_of(token)?;
        Self::from_tst(&signed_data(&token)?.tst_info)
    }

    pub(crate) fn from_tst(der: &[u8]) -> Result<Self> {
        if der.len() > MAX_TST_INFO_BYTES {
            return Err(malformed("TSTInfo", "larger than any TSTInfo"));
        }
        let tst = TstInfoAsn1::from_der(der).map_err(not_der("TSTInfo"))?;
        if tst.version != 1 {
            return Err(malformed("TSTInfo", "its version is not 1"));
        }
        let hash = match imprint_hash(&tst.message_imprint.hash_algorithm) {
            Ok(h) => h,
            Err(_) if tst.message_imprint.hash_algorithm.oid == ID_SHA1 => {
                return Err(TimestampError::WeakImprint { alg: "SHA-1" })
            }
            Err(_) if tst.message_imprint.hash_algorithm.oid == ID_MD5 => {
                return Err(TimestampError::WeakImprint { alg: "MD5" })
            }
            Err(_) => {
                return Err(TimestampError::UnsupportedAlgorithm {
                    what: "imprint",
                    oid: tst.message_imprint.hash_algorithm.oid.to_string(),
                })
            }
        };
        let imprint = tst.message_imprint.hashed_message.as_bytes().to_vec();
        if imprint.len() != hash.output_len() {
            return Err(malformed(
                "TSTInfo",
                "the imprint's length is not its hash's",
            ));
        }
        if tst.serial_number.as_bytes().len() > MAX_SERIAL_BYTES {
            return Err(malformed("TSTInfo", "the serial number is over 32 bytes"));
        }
        if tst
            .nonce
            .as_ref()
            .is_some_and(|n| n.as_bytes().len() > MAX_NONCE_BYTES)
        {
            return Err(malformed("TSTInfo", "the nonce is over 64 bytes"));
        }
        let accuracy_micros = tst.accuracy.map(accuracy_micros).transpose()?;
        // Every date is written in RFC 3339, which ends with the year 9999: a token whose time
        // could reach past it proves nothing a verdict can state (and a date clamped there could
        // fall before genTime).
        if !within_years(&tst.gen_time, accuracy_micros) {
            return Err(malformed(
                "TSTInfo",
                "its genTime plus its accuracy passes the year 9999",
            ));
        }
        Ok(Self {
            policy: tst.policy.to_string(),
            hash,
            imprint,
            serial_hex: hex::encode(tst.serial_number.as_bytes()),
            gen_time: tst.gen_time,
            accuracy_micros,
            ordering: tst.ordering,
            nonce: tst.nonce.map(|n| n.as_bytes().to_vec()),
            tsa_name: tst.tsa.as_ref().map(general_name_text),
        })
    }

    /// Whether the token covers `data` (its imprint is `data`'s hash).
    pub fn covers(&self, data: &[u8]) -> bool {
        self.hash.digest(data) == self.imprint
    }

    /// Whether the token's imprint is `digest`.
    pub fn covers_digest(&self, digest: &[u8]) -> bool {
        self.imprint == digest
    }

    /// The policy, dotted.
    pub fn policy(&self) -> &str {
        &self.policy
    }

    /// The imprint's hash.
    pub fn hash(&self) -> HashAlg {
        self.hash
    }

    /// The imprint.
    pub fn imprint(&self) -> &[u8] {
        &self.imprint
    }

    /// The serial number, hex.
    pub fn serial_hex(&self) -> &str {
        &self.serial_hex
    }

    /// `genTime`, to the nanosecond the token states.
    pub fn gen_time(&self) -> SystemTime {
        self.gen_time.exact()
    }

    /// `genTime` cut to its whole second: the time certificates are checked at.
    pub fn gen_time_whole(&self) -> SystemTime {
        self.gen_time.whole()
    }

    /// `genTime` as the token writes it (`YYYYMMDDHHMMSS[.f]Z`).
    pub fn gen_time_text(&self) -> String {
        self.gen_time.text()
    }

    /// `genTime` in RFC 3339, with the token's fraction (`2024-06-21T07:12:05.884Z`).
    pub fn gen_time_rfc3339(&self) -> String {
        self.gen_time.rfc3339()
    }

    /// The stated accuracy, in microseconds, if any.
    pub fn accuracy_micros(&self) -> Option<u64> {
        self.accuracy_micros
    }

    /// The latest time the token proves its data existed: `genTime + accuracy`, rounded up to
    /// a whole second, or the end of the `genTime` second when the token states no accuracy
    /// (RFC 3161 section 2.4.2: the time lies within `genTime ± accuracy`).
    pub fn latest(&self) -> SystemTime {
        latest(&self.gen_time, self.accuracy_micros)
    }

    /// [`Self::latest`] in whole seconds since the Unix epoch.
    pub fn latest_unix(&self) -> u64 {
        self.latest()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs())
    }

    /// The nonce's content octets, if any.
    pub fn nonce(&self) -> Option<&[u8]> {
        self.nonce.as_deref()
    }

    /// The ordering flag.
    pub fn ordering(&self) -> bool {
        self.ordering
    }

    /// The authority's name as the token states it (its `tsa` field), if any.
    pub fn tsa_name(&self) -> Option<&str> {
        self.tsa_name.as_deref()
    }
}

/// An accuracy in microseconds: `seconds`, `millis` and `micros` (RFC 3161: each of the last
/// two within 1..999; 0 is read as absent, anything else refused, so that no accuracy can move
/// [`TokenInfo::latest`] back).
fn accuracy_micros(a: Accuracy) -> Result<u64> {
    let part = |v: Option<i16>| match v {
        None => Ok(0u64),
        Some(v @ 0..=999) => Ok(v as u64),
        Some(_) => Err(malformed(
            "TSTInfo",
            "its accuracy has millis or micros outside 1..999",
        )),
    };
    Ok(a.seconds
        .unwrap_or(0)
        .saturating_mul(1_000_000)
        .saturating_add(part(a.millis)? * 1000 + part(a.micros)?))
}

/// A GeneralName as text: a directory name in RFC 4514, others by kind.
fn general_name_text(name: &GeneralName) -> String {
    match name {
        GeneralName::DirectoryName(n) => n.to_string(),
        GeneralName::DnsName(d) => format!("DNS:{}", d.as_str()),
        GeneralName::UniformResourceIdentifier(u) => format!("URI:{}", u.as_str()),
        GeneralName::Rfc822Name(e) => format!("email:{}", e.as_str()),
        _ => "(a name of another kind)".into(),
    }
}

/// A token's SignedData, the TSTInfo DER it encapsulates, and its signer's signed attributes
/// as encoded (under the SET tag, as they are signed).
pub(crate) struct ParsedToken {
    pub(crate) signed_data: SignedData,
    pub(crate) tst_info: Vec<u8>,
    pub(crate) signed_attrs: Option<Vec<u8>>,
}

/// Reads a token's SignedData.
pub(crate) fn signed_data(token: &[u8]) -> Result<ParsedToken> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(TimestampError::TooLarge {
            max: MAX_TOKEN_BYTES,
        });
    }
    let ci = ContentInfo::from_der(token).map_err(not_der("token"))?;
    if ci.content_type != ID_SIGNED_DATA {
        return Err(malformed("token", "its content is not SignedData"));
    }
    let sd_der = ci.content.to_der().map_err(not_der("SignedData"))?;
    // Counted and measured before anything is decoded: a SET OF is sorted when it is decoded
    // (quadratic in its elements), so a token of many small elements could cost seconds.
    check_shape(&sd_der)?;
    let sd_der = without_duplicate_certificates(&sd_der).map_err(not_der("SignedData"))?;
    let sd = SignedData::from_der(&sd_der).map_err(not_der("SignedData"))?;
    if sd.encap_content_info.econtent_type != ID_CT_TST_INFO {
        return Err(malformed("token", "the signed content is not a TSTInfo"));
    }
    let content = sd
        .encap_content_info
        .econtent
        .as_ref()
        .ok_or(malformed("token", "the TSTInfo is missing"))?
        .decode_as::<OctetString>()
        .map_err(not_der("TSTInfo"))?;
    let tst_info = content.as_bytes().to_vec();
    let signed_attrs = raw_signed_attrs(&sd_der).map_err(not_der("SignedData"))?;
    Ok(ParsedToken {
        signed_data: sd,
        tst_info,
        signed_attrs,
    })
}

/// The SignedData's sets counted and its certificates measured, before it is decoded: at most
/// [`MAX_DIGEST_ALGORITHMS`] digest algorithms, [`MAX_TOKEN_CERTIFICATES`] certificates and as
/// many CRLs, each at most [`MAX_TOKEN_CERTIFICATE_BYTES`], exactly one signer, at most
/// [`MAX_ATTRIBUTES`] signed and unsigned attributes of at most as many values each.
fn check_shape(sd: &[u8]) -> Result<()> {
    let over = |why| Err(malformed("token", why));
    let items = children(sd).map_err(not_der("SignedData"))?;
    let count = |tlv: &[u8]| {
        children(tlv)
            .map(|c| c.len())
            .map_err(not_der("SignedData"))
    };
    if let Some(algs) = items.get(1) {
        if count(algs)? > MAX_DIGEST_ALGORITHMS {
            return over("it lists more digest algorithms than any token needs");
        }
    }
    for item in items.iter().skip(3).take(items.len().saturating_sub(4)) {
        // [0] certificates, [1] CRLs.
        let set = children(item).map_err(not_der("SignedData"))?;
        if set.len() > MAX_TOKEN_CERTIFICATES {
            return over("it carries more certificates than any token needs");
        }
        if set.iter().any(|c| c.len() > MAX_TOKEN_CERTIFICATE_BYTES) {
            return over("it carries a certificate larger than any authority's");
        }
    }
    let Some(infos) = items.last() else {
        return over("it has no signer");
    };
    let signers = children(infos).map_err(not_der("SignedData"))?;
    let [signer] = signers.as_slice() else {
        return over("it must have exactly one signer");
    };
    for part in children(signer).map_err(not_der("SignerInfo"))? {
        // [0] signed attributes, [1] unsigned attributes.
        if matches!(part.first(), Some(0xa0 | 0xa1)) {
            let attrs = children(part).map_err(not_der("SignerInfo"))?;
            if attrs.len() > MAX_ATTRIBUTES {
                return over("its signer has more attributes than any token needs");
            }
            for a in attrs {
                let values = children(a)
                    .ok()
                    .and_then(|fields| fields.get(1).copied())
                    .map(children)
                    .transpose()
                    .map_err(not_der("SignerInfo"))?;
                if values.is_some_and(|v| v.len() > MAX_ATTRIBUTES) {
                    return over("an attribute of its signer has more values than any needs");
                }
            }
        }
    }
    Ok(())
}

/// The TLVs inside a TLV's content.
fn children(tlv: &[u8]) -> der::Result<Vec<&[u8]>> {
    let mut r = SliceReader::new(tlv)?;
    let header = Header::decode(&mut r)?;
    let mut inner = SliceReader::new(r.read_slice(header.length)?)?;
    let mut out = Vec::new();
    while !inner.is_finished() {
        out.push(inner.tlv_bytes()?);
    }
    Ok(out)
}

/// The signed attributes of the first SignerInfo of `sd` (a SignedData's DER) as encoded, with
/// their `[0] IMPLICIT` tag replaced by SET's (RFC 5652 section 5.4): the bytes the signature
/// covers, whatever order the signer put the attributes in.
fn raw_signed_attrs(sd: &[u8]) -> der::Result<Option<Vec<u8>>> {
    let items = children(sd)?;
    let Some(infos) = items.last() else {
        return Ok(None);
    };
    let Some(first) = children(infos)?.first().copied() else {
        return Ok(None);
    };
    // version, sid, digestAlgorithm, then [0] signedAttrs if present.
    Ok(children(first)?.get(3).and_then(|attrs| {
        (attrs.first() == Some(&0xa0)).then(|| {
            let mut set = attrs.to_vec();
            set[0] = 0x31;
            set
        })
    }))
}

/// `sd` (a SignedData's DER) with each certificate of its `certificates` set once. OpenSSL's
/// TSA writes the signer's certificate twice when its `certs` file holds it too, which DER's
/// SET OF forbids and `openssl ts -verify` accepts; the set is not signed, so dropping the
/// repeats changes nothing that is checked.
pub(crate) fn without_duplicate_certificates(sd: &[u8]) -> der::Result<Vec<u8>> {
    let mut outer = SliceReader::new(sd)?;
    let header = Header::decode(&mut outer)?;
    if header.tag != Tag::Sequence {
        return Ok(sd.to_vec());
    }
    let mut body = Vec::new();
    let mut changed = false;
    outer.read_nested(header.length, |r| {
        while !r.is_finished() {
            let tlv = r.tlv_bytes()?;
            let mut inner = SliceReader::new(tlv)?;
            let h = Header::decode(&mut inner)?;
            let is_certificates = h.tag
                == (Tag::ContextSpecific {
                    constructed: true,
                    number: der::TagNumber::N0,
                });
            if !is_certificates {
                body.extend_from_slice(tlv);
                continue;
            }
            let mut certs: Vec<&[u8]> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            inner.read_nested(h.length, |c| {
                while !c.is_finished() {
                    let cert = c.tlv_bytes()?;
                    if seen.insert(cert) {
                        certs.push(cert);
                    } else {
                        changed = true;
                    }
                }
                Ok(())
            })?;
            let content: Vec<u8> = certs.concat();
            Header::new(h.tag, Length::try_from(content.len())?)?.encode_to_vec(&mut body)?;
            body.extend_from_slice(&content);
        }
        Ok(())
    })?;
    outer.finish(())?;
    if !changed {
        return Ok(sd.to_vec());
    }
    let mut out = Vec::with_capacity(body.len() + 8);
    Header::new(Tag::Sequence, Length::try_from(body.len())?)?.encode_to_vec(&mut out)?;
    out.extend_from_slice(&body);
    Ok(out)
}

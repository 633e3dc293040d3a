//! RFC 3161 timestamps: queries, the authority that answers them, and the verifier that checks a
//! token against anchors it pins (docs/FORMATS.md section 18).
//!
//! - [`Query`]: a `TimeStampReq`, built ([`Query::for_data`]) or parsed as a TSA parses it
//!   ([`Query::parse`], which names the RFC's failInfo for every refusal).
//! - [`Tsa`]: an authority's key, certificate and policy; [`Tsa::reply`] answers a query's DER
//!   with a `TimeStampResp` (granted, or a rejection with its failInfo) and never fails.
//! - [`verify_token`]: checks a token (CMS SignedData over a TSTInfo) the way a relying party
//!   must: the signed attributes (content type, message digest, the ESS signing-certificate
//!   hash), the RSA signature, the TSA certificate's profile (a critical extendedKeyUsage that is
//!   exactly id-kp-timeStamping) and a path to an anchor the verifier gave, every certificate
//!   valid at `genTime`; SHA-1 and MD5 imprints are refused.
//! - [`Evidence`]: the tokens that date one bundle, each verified and covering the bundle's
//!   bytes; `received` is the earliest `genTime`.
//!
//! The structures come from RustCrypto's `x509-tsp` (MessageImprint, Accuracy) and `cms`
//! (ContentInfo, SignedData, SignerInfo). Three are declared here with the same derive macros:
//! `TimeStampReq` and `TSTInfo`, because x509-tsp's use `const-oid` 0.9 object identifiers,
//! whose arcs are 32-bit, so they cannot hold a policy under a UUID arc (`2.25.<uuid>`, the arc
//! of this project's own policy) and they refuse the fractional seconds RFC 3161 allows in
//! `genTime`; and `TimeStampResp`, because `cmpv2` 0.2's `PKIFailureInfo` takes the bit
//! numbers of RFC 4210 for bit masks (badDataFormat, bit 5, encodes as bits 0 and 2).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use cms::cert::{CertificateChoices, IssuerAndSerialNumber};
use cms::content_info::{CmsVersion, ContentInfo};
use cms::signed_data::{
    CertificateSet, EncapsulatedContentInfo, SignedData, SignerIdentifier, SignerInfo, SignerInfos,
};
use der::asn1::{Any, BitString, GeneralizedTime, Int, OctetString, SetOfVec, Utf8StringRef};
use der::oid::ObjectIdentifier;
use der::{
    Decode, DecodeValue, Encode, EncodeValue, FixedTag, Header, Length, Reader, Sequence,
    SliceReader, Tag, Tagged, Writer,
};
use hourglass_arith::entropy::EntropySource;
use hourglass_arith::Integer;
use hourglass_rsa::padding::Pkcs1v15Sign;
use hourglass_rsa::{HashAlg, PrivateKey};
use sha1::Sha1;
use sha2::{Digest, Sha256};
use spki::AlgorithmIdentifierOwned;
use x509_cert::attr::Attribute;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::Extensions;
use x509_tsp::{Accuracy, MessageImprint};

use crate::certificate::{CaCertificate, CertificateError, TsaAnchor, TsaCertificate};

/// The largest query a TSA reads (RFC 3161 queries are a few hundred bytes).
pub const MAX_QUERY_BYTES: usize = 16 * 1024;
/// The largest token or reply read (a token with a chain of certificates is a few kilobytes).
pub const MAX_TOKEN_BYTES: usize = 256 * 1024;
/// The longest nonce a TSA echoes, in bytes.
pub const MAX_NONCE_BYTES: usize = 64;
/// The longest serial number read, in bytes (RFC 3161 asks for 160 bits; some use more).
pub const MAX_SERIAL_BYTES: usize = 32;
/// The project's own TSA policy: [`crate::certificate::HOURGLASS_OID_ARC`]`.2` (docs/FORMATS.md section 18).
pub const DEFAULT_POLICY: &str = "2.25.306263111566275780816363928834165067171.2";
/// The accuracy every token of ours states: `genTime` is within one second.
pub const ACCURACY_SECONDS: u64 = 1;

const ID_SHA256: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.1");
const ID_SHA384: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.2");
const ID_SHA512: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.16.840.1.101.3.4.2.3");
const ID_SHA1: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.3.14.3.2.26");
const ID_MD5: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.2.5");
const ID_SIGNED_DATA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.2");
const ID_CT_TST_INFO: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.1.4");
const ID_CONTENT_TYPE: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.3");
const ID_MESSAGE_DIGEST: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.4");
const ID_SIGNING_CERTIFICATE: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.2.12");
const ID_SIGNING_CERTIFICATE_V2: ObjectIdentifier =
    ObjectIdentifier::new_unwrap("1.2.840.113549.1.9.16.2.47");
const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
const SHA256_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");
const SHA384_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.12");
const SHA512_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.13");

/// The failInfo of a rejected query (RFC 3161 section 2.4.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailInfo {
    /// An unrecognized or unsupported algorithm (SHA-1, MD5, ...).
    BadAlg,
    /// A transaction not permitted or supported (a version other than 1, a huge nonce).
    BadRequest,
    /// Data submitted in the wrong format (not DER, an imprint of the wrong length).
    BadDataFormat,
    /// A policy this TSA does not serve.
    UnacceptedPolicy,
    /// An extension this TSA does not support.
    UnacceptedExtension,
    /// The TSA could not sign (its key failed a check).
    SystemFailure,
}

impl FailInfo {
    /// The RFC's name (`badAlg`, ...).
    pub fn name(self) -> &'static str {
        match self {
            FailInfo::BadAlg => "badAlg",
            FailInfo::BadRequest => "badRequest",
            FailInfo::BadDataFormat => "badDataFormat",
            FailInfo::UnacceptedPolicy => "unacceptedPolicy",
            FailInfo::UnacceptedExtension => "unacceptedExtension",
            FailInfo::SystemFailure => "systemFailure",
        }
    }

    /// The bit of `PKIFailureInfo` (RFC 3161 section 2.4.2).
    fn bit(self) -> usize {
        match self {
            FailInfo::BadAlg => 0,
            FailInfo::BadRequest => 2,
            FailInfo::BadDataFormat => 5,
            FailInfo::UnacceptedPolicy => 15,
            FailInfo::UnacceptedExtension => 16,
            FailInfo::SystemFailure => 25,
        }
    }

    /// The DER named-bit-list BIT STRING with only this bit set (trailing zero bits removed).
    fn bits(self) -> BitString {
        let bit = self.bit();
        let mut bytes = vec![0u8; bit / 8 + 1];
        bytes[bit / 8] = 0x80 >> (bit % 8);
        BitString::new(7 - (bit % 8) as u8, bytes)
            .unwrap_or_else(|_| unreachable!("unused bits below 8"))
    }
}

/// The names of the failInfo bits RFC 3161 defines, by bit.
const FAIL_INFO_NAMES: [(usize, &str); 7] = [
    (0, "badAlg"),
    (2, "badRequest"),
    (5, "badDataFormat"),
    (14, "timeNotAvailable"),
    (15, "unacceptedPolicy"),
    (16, "unacceptedExtension"),
    (25, "systemFailure"),
];

/// The names of the bits set in a failInfo (`bit N` for those RFC 3161 does not name); `None`
/// when no bit is set.
fn fail_info_names(bits: &BitString) -> Option<String> {
    let names: Vec<String> = bits
        .bits()
        .enumerate()
        .filter(|(_, set)| *set)
        .map(|(i, _)| {
            FAIL_INFO_NAMES
                .iter()
                .find(|(b, _)| *b == i)
                .map_or_else(|| format!("bit {i}"), |(_, n)| (*n).to_string())
        })
        .collect();
    (!names.is_empty()).then(|| names.join("+"))
}

/// `PKIStatusInfo` (RFC 3161 section 2.4.2, from RFC 4210).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct PkiStatusInfoAsn1<'a> {
    status: u8,
    #[asn1(optional = "true")]
    status_string: Option<Vec<Utf8StringRef<'a>>>,
    #[asn1(optional = "true")]
    fail_info: Option<BitString>,
}

/// `TimeStampResp` (RFC 3161 section 2.4.2).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct TimeStampRespAsn1<'a> {
    status: PkiStatusInfoAsn1<'a>,
    #[asn1(optional = "true")]
    time_stamp_token: Option<ContentInfo>,
}

/// `granted` and `grantedWithMods`: the statuses that carry a token.
const GRANTED: [u8; 2] = [0, 1];

fn status_name(status: u8) -> String {
    match status {
        0 => "granted".into(),
        1 => "grantedWithMods".into(),
        2 => "rejection".into(),
        3 => "waiting".into(),
        4 => "revocationWarning".into(),
        5 => "revocationNotification".into(),
        other => format!("{other}"),
    }
}

/// Why a TSA refuses a query: the failInfo it answers and a text for the statusString.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{text} ({})", fail.name())]
pub struct Rejection {
    /// The failInfo.
    pub fail: FailInfo,
    /// Why, in words.
    pub text: &'static str,
}

impl Rejection {
    const fn new(fail: FailInfo, text: &'static str) -> Self {
        Self { fail, text }
    }

    /// The `TimeStampResp` that rejects the query (status `rejection`, this failInfo and text).
    pub fn to_reply(&self) -> Vec<u8> {
        let text = Utf8StringRef::new(self.text).ok();
        let status = PkiStatusInfoAsn1 {
            status: 2,
            status_string: text.map(|t| vec![t]),
            fail_info: Some(self.fail.bits()),
        };
        TimeStampRespAsn1 {
            status,
            time_stamp_token: None,
        }
        .to_der()
        .unwrap_or_else(|_| unreachable!("a rejection of fixed parts encodes"))
    }
}

/// Why a token, reply or query could not be made, read or trusted.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TimestampError {
    /// Larger than any token, reply or query.
    #[error("larger than {max} bytes")]
    TooLarge {
        /// The limit.
        max: usize,
    },
    /// Not the DER structure expected.
    #[error("not an RFC 3161 {what}: {source}")]
    NotDer {
        /// What was expected.
        what: &'static str,
        /// The decoder's error.
        #[source]
        source: der::Error,
    },
    /// A structure that decodes but breaks the RFC's rules.
    #[error("malformed {what}: {why}")]
    Malformed {
        /// Which structure.
        what: &'static str,
        /// What is wrong.
        why: &'static str,
    },
    /// A reply whose status grants nothing.
    #[error("the TSA refused: status {status}{}{}", fail_info.as_deref().map(|f| format!(", {f}")).unwrap_or_default(), text.as_deref().map(|t| format!(", \"{t}\"")).unwrap_or_default())]
    Refused {
        /// The status.
        status: String,
        /// The failInfo names (RFC 4210's: `badAlg`, ...), joined by `+`.
        fail_info: Option<String>,
        /// The statusString.
        text: Option<String>,
    },
    /// A reply that says granted but carries no token.
    #[error("the reply says granted but carries no token")]
    NoToken,
    /// A signature or digest algorithm this verifier does not accept.
    #[error("unsupported {what} algorithm {oid} (this verifier accepts RSA with SHA-256, SHA-384 or SHA-512)")]
    UnsupportedAlgorithm {
        /// Which algorithm.
        what: &'static str,
        /// Its OID.
        oid: String,
    },
    /// An imprint made with SHA-1 or MD5 (collisions can be made for both).
    #[error("the token's message imprint uses {alg}, which collisions break; only SHA-256, SHA-384 and SHA-512 imprints are accepted")]
    WeakImprint {
        /// `SHA-1` or `MD5`.
        alg: &'static str,
    },
    /// A signed attribute that disagrees with the token.
    #[error("the token's signed attributes are wrong: {why}")]
    SignedAttributes {
        /// What is wrong.
        why: &'static str,
    },
    /// The signer's certificate is not in the token (nor given).
    #[error("the token does not carry its signer's certificate (ask the TSA with certReq)")]
    NoSignerCertificate,
    /// The signature does not verify under the signer's certificate.
    #[error("the token's signature does not verify under its TSA certificate: altered, or signed by another key")]
    BadSignature,
    /// The signer's certificate is not a TSA certificate, or does not chain to an anchor.
    #[error("the token's TSA certificate is not trusted: {0}")]
    Certificate(#[source] CertificateError),
    /// The token covers other data.
    #[error("the token covers other data (its {alg} imprint is {token}, the data's is {data})")]
    ImprintMismatch {
        /// The imprint's hash.
        alg: &'static str,
        /// The token's imprint, hex.
        token: String,
        /// The data's, hex.
        data: String,
    },
    /// The reply answers another query.
    #[error("the reply does not answer this query: {why}")]
    WrongReply {
        /// What differs.
        why: &'static str,
    },
    /// The TSA's key failed while signing (entropy, fault check).
    #[error("the TSA could not sign: {0}")]
    Sign(#[source] hourglass_rsa::Error),
    /// A policy that is not a dotted object identifier.
    #[error("'{0}' is not an object identifier (dotted decimal, at least two arcs, the first 0, 1 or 2)")]
    BadPolicy(String),
    /// No anchor to verify against.
    #[error("no TSA anchor given: a token is only trusted against a CA or key the verifier names")]
    NoAnchor,
}

impl TimestampError {
    /// Whether this is a negative verdict on a readable token (it does not verify, covers other
    /// data, or does not chain to an anchor), rather than input that could not be read or
    /// checked at all.
    pub fn is_verdict(&self) -> bool {
        matches!(
            self,
            TimestampError::WeakImprint { .. }
                | TimestampError::SignedAttributes { .. }
                | TimestampError::NoSignerCertificate
                | TimestampError::BadSignature
                | TimestampError::Certificate(_)
                | TimestampError::ImprintMismatch { .. }
                | TimestampError::WrongReply { .. }
        )
    }
}

type Result<T> = std::result::Result<T, TimestampError>;

fn not_der(what: &'static str) -> impl Fn(der::Error) -> TimestampError {
    move |source| TimestampError::NotDer { what, source }
}

fn malformed(what: &'static str, why: &'static str) -> TimestampError {
    TimestampError::Malformed { what, why }
}

/// An OBJECT IDENTIFIER of any arcs, kept as its DER content octets (a policy).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyId(Vec<u8>);

impl PolicyId {
    /// Parses dotted decimal (`1.2.3`, `2.25.<uuid>`).
    pub fn parse(text: &str) -> Result<Self> {
        let bad = || TimestampError::BadPolicy(text.to_string());
        let arcs: Vec<Integer> = text
            .split('.')
            .map(|a| {
                if a.is_empty() || !a.bytes().all(|b| b.is_ascii_digit()) || a.len() > 60 {
                    return Err(bad());
                }
                Integer::from_str_radix(a, 10).map_err(|_| bad())
            })
            .collect::<Result<_>>()?;
        if arcs.len() < 2 || arcs[0] > 2 || (arcs[0] < 2 && arcs[1] >= 40) {
            return Err(bad());
        }
        let mut der = Vec::new();
        let first = Integer::from(&arcs[0] * 40u32) + &arcs[1];
        for arc in std::iter::once(&first).chain(&arcs[2..]) {
            let mut groups = Vec::new();
            let mut v = arc.clone();
            loop {
                groups.push((v.mod_u(128)) as u8);
                v >>= 7;
                if v == 0 {
                    break;
                }
            }
            for (i, g) in groups.iter().enumerate().rev() {
                der.push(if i == 0 { *g } else { g | 0x80 });
            }
        }
        Ok(Self(der))
    }

    /// The project's own policy, [`DEFAULT_POLICY`].
    pub fn hourglass() -> Self {
        Self::parse(DEFAULT_POLICY).unwrap_or_else(|_| unreachable!("a valid constant"))
    }

    fn check(content: &[u8]) -> bool {
        // Every arc ends in a byte below 0x80 and none starts with the padding byte 0x80.
        !content.is_empty()
            && content.last().is_some_and(|b| b & 0x80 == 0)
            && content
                .iter()
                .enumerate()
                .all(|(i, &b)| b != 0x80 || (i > 0 && content[i - 1] & 0x80 != 0))
    }
}

impl std::fmt::Display for PolicyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut arcs = Vec::new();
        let mut v = Integer::new();
        for &b in &self.0 {
            v <<= 7;
            v += u32::from(b & 0x7f);
            if b & 0x80 == 0 {
                arcs.push(std::mem::take(&mut v));
            }
        }
        let Some(first) = arcs.first() else {
            return f.write_str("(empty OID)");
        };
        let (a, b) = if *first < 40 {
            (0u32, first.clone())
        } else if *first < 80 {
            (1, Integer::from(first - 40u32))
        } else {
            (2, Integer::from(first - 80u32))
        };
        write!(f, "{a}.{b}")?;
        for arc in &arcs[1..] {
            write!(f, ".{arc}")?;
        }
        Ok(())
    }
}

impl<'a> DecodeValue<'a> for PolicyId {
    fn decode_value<R: Reader<'a>>(reader: &mut R, header: Header) -> der::Result<Self> {
        let content = reader.read_vec(header.length)?;
        if !Self::check(&content) {
            return Err(Tag::ObjectIdentifier.value_error());
        }
        Ok(Self(content))
    }
}

impl EncodeValue for PolicyId {
    fn value_len(&self) -> der::Result<Length> {
        Length::try_from(self.0.len())
    }

    fn encode_value(&self, writer: &mut impl Writer) -> der::Result<()> {
        writer.write(&self.0)
    }
}

impl FixedTag for PolicyId {
    const TAG: Tag = Tag::ObjectIdentifier;
}

/// `genTime`: a GeneralizedTime that may carry fractional seconds (RFC 3161 section 2.4.2),
/// kept as its text; [`GenTime::not_before`] rounds a fraction up, so a document is never said
/// to exist earlier than the token shows.
#[derive(Clone, Debug, PartialEq, Eq)]
struct GenTime {
    text: Vec<u8>,
    whole: SystemTime,
    fraction: bool,
}

impl GenTime {
    fn of(t: SystemTime) -> der::Result<Self> {
        let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let g = GeneralizedTime::from_unix_duration(Duration::from_secs(secs))?;
        let der = g.to_der()?;
        Ok(Self {
            text: der[2..].to_vec(),
            whole: g.to_system_time(),
            fraction: false,
        })
    }

    /// The earliest whole second the token's time is not before.
    fn not_before(&self) -> SystemTime {
        if self.fraction {
            self.whole + Duration::from_secs(1)
        } else {
            self.whole
        }
    }
}

impl<'a> DecodeValue<'a> for GenTime {
    fn decode_value<R: Reader<'a>>(reader: &mut R, header: Header) -> der::Result<Self> {
        let text = reader.read_vec(header.length)?;
        let bad = || Tag::GeneralizedTime.value_error();
        // YYYYMMDDHHMMSS[.f]Z: the fraction without trailing zeros (DER), at most 9 digits.
        let (whole, fraction) = match text.iter().position(|&b| b == b'.') {
            None => (text.clone(), false),
            Some(14) => {
                let digits = &text[15..text.len().saturating_sub(1).max(15)];
                if digits.is_empty()
                    || digits.len() > 9
                    || !digits.iter().all(u8::is_ascii_digit)
                    || digits.last() == Some(&b'0')
                    || text.last() != Some(&b'Z')
                {
                    return Err(bad());
                }
                let mut w = text[..14].to_vec();
                w.push(b'Z');
                (w, true)
            }
            Some(_) => return Err(bad()),
        };
        let mut tlv = vec![0x18, u8::try_from(whole.len()).map_err(|_| bad())?];
        tlv.extend_from_slice(&whole);
        let g = GeneralizedTime::from_der(&tlv)?;
        Ok(Self {
            text,
            whole: g.to_system_time(),
            fraction,
        })
    }
}

impl EncodeValue for GenTime {
    fn value_len(&self) -> der::Result<Length> {
        Length::try_from(self.text.len())
    }

    fn encode_value(&self, writer: &mut impl Writer) -> der::Result<()> {
        writer.write(&self.text)
    }
}

impl FixedTag for GenTime {
    const TAG: Tag = Tag::GeneralizedTime;
}

/// `TimeStampReq` (RFC 3161 section 2.4.1), with a policy of any arcs.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct TimeStampReqAsn1 {
    version: u8,
    message_imprint: MessageImprint,
    #[asn1(optional = "true")]
    req_policy: Option<PolicyId>,
    #[asn1(optional = "true")]
    nonce: Option<Int>,
    #[asn1(default = "Default::default")]
    cert_req: bool,
    #[asn1(context_specific = "0", tag_mode = "IMPLICIT", optional = "true")]
    extensions: Option<Extensions>,
}

/// `TSTInfo` (RFC 3161 section 2.4.2), with a policy of any arcs and a `genTime` that may
/// carry a fraction.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct TstInfoAsn1 {
    version: u8,
    policy: PolicyId,
    message_imprint: MessageImprint,
    serial_number: Int,
    gen_time: GenTime,
    #[asn1(optional = "true")]
    accuracy: Option<Accuracy>,
    #[asn1(default = "Default::default")]
    ordering: bool,
    #[asn1(optional = "true")]
    nonce: Option<Int>,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT", optional = "true")]
    tsa: Option<GeneralName>,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    extensions: Option<Extensions>,
}

fn sha256_id() -> AlgorithmIdentifierOwned {
    AlgorithmIdentifierOwned {
        oid: ID_SHA256,
        parameters: None,
    }
}

/// `ESSCertIDv2` (RFC 5035): the hash of the signer's certificate.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct EssCertIdV2 {
    /// Absent: SHA-256, the DEFAULT (DER omits it).
    #[asn1(optional = "true")]
    hash_algorithm: Option<AlgorithmIdentifierOwned>,
    cert_hash: OctetString,
    #[asn1(optional = "true")]
    issuer_serial: Option<Any>,
}

/// `SigningCertificateV2` (RFC 5035).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct SigningCertificateV2 {
    certs: Vec<EssCertIdV2>,
    #[asn1(optional = "true")]
    policies: Option<Any>,
}

/// `ESSCertID` (RFC 2634): the SHA-1 hash of the signer's certificate, as OpenSSL's TSA writes
/// by default (RFC 5816 allows it).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct EssCertId {
    cert_hash: OctetString,
    #[asn1(optional = "true")]
    issuer_serial: Option<Any>,
}

/// `SigningCertificate` (RFC 2634).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
struct SigningCertificate {
    certs: Vec<EssCertId>,
    #[asn1(optional = "true")]
    policies: Option<Any>,
}

/// The imprint hashes accepted, by OID; SHA-1 and MD5 named to be refused.
fn imprint_hash(alg: &AlgorithmIdentifierOwned) -> std::result::Result<HashAlg, Rejection> {
    let hash = match alg.oid {
        ID_SHA256 => HashAlg::Sha256,
        ID_SHA384 => HashAlg::Sha384,
        ID_SHA512 => HashAlg::Sha512,
        ID_SHA1 => {
            return Err(Rejection::new(
                FailInfo::BadAlg,
                "SHA-1 imprints are refused: collisions can be made",
            ))
        }
        ID_MD5 => {
            return Err(Rejection::new(
                FailInfo::BadAlg,
                "MD5 imprints are refused: collisions can be made",
            ))
        }
        _ => {
            return Err(Rejection::new(
                FailInfo::BadAlg,
                "unsupported imprint hash: use SHA-256, SHA-384 or SHA-512",
            ))
        }
    };
    match &alg.parameters {
        None => Ok(hash),
        Some(p) if p.tag() == Tag::Null && p.value().is_empty() => Ok(hash),
        Some(_) => Err(Rejection::new(
            FailInfo::BadAlg,
            "the imprint hash has parameters other than NULL",
        )),
    }
}

/// Whether an algorithm's parameters are absent or NULL (SHA-2 and PKCS#1 v1.5 take none).
fn null_or_absent(alg: &AlgorithmIdentifierOwned) -> bool {
    alg.parameters
        .as_ref()
        .is_none_or(|p| p.tag() == Tag::Null && p.value().is_empty())
}

fn hash_oid(hash: HashAlg) -> ObjectIdentifier {
    match hash {
        HashAlg::Sha384 => ID_SHA384,
        HashAlg::Sha512 => ID_SHA512,
        _ => ID_SHA256,
    }
}

fn hash_name(hash: HashAlg) -> &'static str {
    match hash {
        HashAlg::Sha384 => "SHA-384",
        HashAlg::Sha512 => "SHA-512",
        _ => "SHA-256",
    }
}

fn null() -> Any {
    Any::from(der::asn1::Null)
}

/// A positive INTEGER from unsigned big-endian bytes.
fn positive_int(bytes: &[u8]) -> der::Result<Int> {
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    let mut v = Vec::with_capacity(bytes.len() - start + 1);
    if bytes.get(start).is_none_or(|&b| b & 0x80 != 0) {
        v.push(0);
    }
    v.extend_from_slice(&bytes[start..]);
    Int::new(&v)
}

/// A timestamp query (`TimeStampReq`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Query {
    der: Vec<u8>,
    hash: HashAlg,
    imprint: Vec<u8>,
    policy: Option<PolicyId>,
    nonce: Option<Vec<u8>>,
    cert_req: bool,
}

impl Query {
    /// A query for `data` hashed with SHA-256 (SHA-256/384/512 accepted), asking for the TSA's
    /// certificate, with a fresh 64-bit nonce unless `nonce` is false: the query `openssl ts
    /// -query -data FILE -sha256 -cert` makes.
    pub fn for_data(
        hash: HashAlg,
        data: &[u8],
        nonce: bool,
        policy: Option<PolicyId>,
        rng: &mut dyn EntropySource,
    ) -> Result<Self> {
        let nonce = if nonce {
            let mut n = [0u8; 8];
            rng.fill(&mut n)
                .map_err(|e| TimestampError::Sign(hourglass_rsa::Error::from(e)))?;
            // A positive INTEGER, as OpenSSL's nonces.
            Some(
                positive_int(&n)
                    .map_err(not_der("query"))?
                    .as_bytes()
                    .to_vec(),
            )
        } else {
            None
        };
        Self::for_digest(hash, &hash.digest(data), nonce, policy)
    }

    /// A query for a digest already made, asking for the TSA's certificate. `nonce` is the
    /// INTEGER's content octets (big-endian two's complement, minimal), as [`Self::nonce`]
    /// returns them, so that a parsed query's parts make the same query again.
    pub fn for_digest(
        hash: HashAlg,
        digest: &[u8],
        nonce: Option<Vec<u8>>,
        policy: Option<PolicyId>,
    ) -> Result<Self> {
        if !matches!(hash, HashAlg::Sha256 | HashAlg::Sha384 | HashAlg::Sha512)
            || digest.len() != hash.output_len()
        {
            return Err(malformed(
                "query",
                "the imprint must be a SHA-256, SHA-384 or SHA-512 digest",
            ));
        }
        let asn1 = TimeStampReqAsn1 {
            version: 1,
            message_imprint: MessageImprint {
                hash_algorithm: AlgorithmIdentifierOwned {
                    oid: hash_oid(hash),
                    parameters: Some(null()),
                },
                hashed_message: OctetString::new(digest).map_err(not_der("query"))?,
            },
            req_policy: policy.clone(),
            nonce: nonce
                .as_deref()
                .map(Int::new)
                .transpose()
                .map_err(not_der("query"))?,
            cert_req: true,
            extensions: None,
        };
        let der = asn1.to_der().map_err(not_der("query"))?;
        Self::parse(&der).map_err(|_| malformed("query", "the query does not read back"))
    }

    /// Parses a query as a TSA must, naming the failInfo of every refusal: not DER
    /// (badDataFormat), a version other than 1 (badRequest), a SHA-1, MD5 or unknown imprint
    /// hash (badAlg), an imprint of the wrong length (badDataFormat), a nonce over 64 bytes
    /// (badRequest), any extension (unacceptedExtension). The policy is checked by
    /// [`Tsa::reply`].
    pub fn parse(der: &[u8]) -> std::result::Result<Self, Rejection> {
        if der.len() > MAX_QUERY_BYTES {
            return Err(Rejection::new(
                FailInfo::BadDataFormat,
                "the query is larger than any TimeStampReq",
            ));
        }
        let asn1 = TimeStampReqAsn1::from_der(der).map_err(|_| {
            Rejection::new(
                FailInfo::BadDataFormat,
                "the query is not a DER TimeStampReq",
            )
        })?;
        if asn1.version != 1 {
            return Err(Rejection::new(
                FailInfo::BadRequest,
                "only version 1 queries are served",
            ));
        }
        let hash = imprint_hash(&asn1.message_imprint.hash_algorithm)?;
        let imprint = asn1.message_imprint.hashed_message.as_bytes();
        if imprint.len() != hash.output_len() {
            return Err(Rejection::new(
                FailInfo::BadDataFormat,
                "the imprint's length is not its hash's",
            ));
        }
        let nonce = asn1.nonce.map(|n| n.as_bytes().to_vec());
        if nonce.as_ref().is_some_and(|n| n.len() > MAX_NONCE_BYTES) {
            return Err(Rejection::new(
                FailInfo::BadRequest,
                "the nonce is longer than 64 bytes",
            ));
        }
        if asn1.extensions.is_some() {
            return Err(Rejection::new(
                FailInfo::UnacceptedExtension,
                "no query extension is supported",
            ));
        }
        Ok(Self {
            der: der.to_vec(),
            hash,
            imprint: imprint.to_vec(),
            policy: asn1.req_policy,
            nonce,
            cert_req: asn1.cert_req,
        })
    }

    /// The DER encoding (what `openssl ts -query` writes to a `.tsq` file).
    pub fn to_der(&self) -> &[u8] {
        &self.der
    }

    /// The imprint's hash.
    pub fn hash(&self) -> HashAlg {
        self.hash
    }

    /// The imprint.
    pub fn imprint(&self) -> &[u8] {
        &self.imprint
    }

    /// The nonce's INTEGER content octets, if any.
    pub fn nonce(&self) -> Option<&[u8]> {
        self.nonce.as_deref()
    }

    /// Whether the query asks for the TSA's certificate.
    pub fn cert_req(&self) -> bool {
        self.cert_req
    }

    /// The policy asked for, if any.
    pub fn policy(&self) -> Option<&PolicyId> {
        self.policy.as_ref()
    }

    /// Reads the reply a TSA gave to this query and checks that it answers it: status granted,
    /// a token whose imprint and nonce are this query's and whose policy is the one asked for.
    /// The token's signature and certificate are checked by [`verify_token`].
    pub fn token_of_reply(&self, reply: &[u8]) -> Result<Vec<u8>> {
        let token = token_of(reply)?;
        let info = TokenInfo::of_token(&token)?;
        if info.hash != self.hash || info.imprint != self.imprint {
            return Err(TimestampError::WrongReply {
                why: "its imprint is not the query's",
            });
        }
        if info.nonce.as_deref() != self.nonce.as_deref() {
            return Err(TimestampError::WrongReply {
                why: "its nonce is not the query's",
            });
        }
        if let Some(p) = &self.policy {
            if info.policy != p.to_string() {
                return Err(TimestampError::WrongReply {
                    why: "its policy is not the one asked for",
                });
            }
        }
        Ok(token)
    }
}

/// The token in a `TimeStampResp` with status granted, or `bytes` itself when they are a bare
/// token (a CMS ContentInfo, as `openssl ts -reply -token_out` writes). Either way the token's
/// content is SignedData, so that a token read from a reply reads again as a bare token.
pub fn token_of(bytes: &[u8]) -> Result<Vec<u8>> {
    if bytes.len() > MAX_TOKEN_BYTES {
        return Err(TimestampError::TooLarge {
            max: MAX_TOKEN_BYTES,
        });
    }
    let signed_data = |ci: &ContentInfo| {
        if ci.content_type == ID_SIGNED_DATA {
            Ok(())
        } else {
            Err(malformed("token", "its content is not SignedData"))
        }
    };
    if let Ok(ci) = ContentInfo::from_der(bytes) {
        return signed_data(&ci).map(|()| bytes.to_vec());
    }
    let resp = TimeStampRespAsn1::from_der(bytes).map_err(not_der("reply or token"))?;
    match resp.status.status {
        s if GRANTED.contains(&s) => {}
        other => {
            let fail_info = resp.status.fail_info.as_ref().and_then(fail_info_names);
            let text = resp.status.status_string.map(|s| {
                s.iter()
                    .map(|t| t.as_str().to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            });
            return Err(TimestampError::Refused {
                status: status_name(other),
                fail_info,
                text,
            });
        }
    }
    let token = resp.time_stamp_token.ok_or(TimestampError::NoToken)?;
    signed_data(&token)?;
    token.to_der().map_err(not_der("token"))
}

/// A `TimeStampResp` with status granted around `token`.
pub fn granted_reply(token: &[u8]) -> Result<Vec<u8>> {
    let token = ContentInfo::from_der(token).map_err(not_der("token"))?;
    TimeStampRespAsn1 {
        status: PkiStatusInfoAsn1 {
            status: 0,
            status_string: None,
            fail_info: None,
        },
        time_stamp_token: Some(token),
    }
    .to_der()
    .map_err(not_der("reply"))
}

/// What a token states, read without trusting it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenInfo {
    /// The policy, dotted.
    pub policy: String,
    /// The imprint's hash.
    pub hash: HashAlg,
    /// The imprint.
    pub imprint: Vec<u8>,
    /// The serial number, hex.
    pub serial_hex: String,
    /// `genTime` rounded up to a whole second.
    pub gen_time: SystemTime,
    /// `genTime` as the token writes it (`YYYYMMDDHHMMSS[.f]Z`).
    pub gen_time_text: String,
    /// The stated accuracy, in microseconds, if any.
    pub accuracy_micros: Option<u64>,
    /// The nonce's content octets, if any.
    pub nonce: Option<Vec<u8>>,
}

impl TokenInfo {
    /// Reads the TSTInfo of a token (or of a granted reply), unverified, refusing SHA-1 and MD5
    /// imprints.
    pub fn of_token(token: &[u8]) -> Result<Self> {
        let token = token_of(token)?;
        let (_, tst_der) = signed_data(&token)?;
        Self::from_tst(&tst_der)
    }

    fn from_tst(der: &[u8]) -> Result<Self> {
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
        let accuracy_micros = tst.accuracy.map(|a| {
            a.seconds.unwrap_or(0).saturating_mul(1_000_000)
                + u64::try_from(a.millis.unwrap_or(0).max(0)).unwrap_or(0) * 1000
                + u64::try_from(a.micros.unwrap_or(0).max(0)).unwrap_or(0)
        });
        Ok(Self {
            policy: tst.policy.to_string(),
            hash,
            imprint,
            serial_hex: hex::encode(tst.serial_number.as_bytes()),
            gen_time: tst.gen_time.not_before(),
            gen_time_text: String::from_utf8_lossy(&tst.gen_time.text).into_owned(),
            accuracy_micros,
            nonce: tst.nonce.map(|n| n.as_bytes().to_vec()),
        })
    }

    /// Whether the token covers `data` (its imprint is `data`'s hash).
    pub fn covers(&self, data: &[u8]) -> bool {
        self.hash.digest(data) == self.imprint
    }
}

/// The SignedData of a token and the TSTInfo DER it encapsulates.
fn signed_data(token: &[u8]) -> Result<(SignedData, Vec<u8>)> {
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
    let tst = content.as_bytes().to_vec();
    Ok((sd, tst))
}

/// A token verified against an anchor: what it states, and who vouched for it.
#[derive(Clone, Debug)]
pub struct VerifiedToken {
    /// What the token states.
    pub info: TokenInfo,
    /// The TSA certificate's subject (RFC 4514).
    pub tsa: String,
    /// The anchor its certificate chains to.
    pub anchor: String,
}

/// Checks a token (a bare token or a granted reply) against the verifier's anchors: the
/// signature over the signed attributes with the TSA certificate's RSA key, the content-type
/// and message-digest attributes, the ESS signing-certificate hash of that certificate, the
/// certificate's TSA profile and a path to an anchor through the token's certificates (and
/// `extra`, untrusted), every certificate valid at `genTime`. Returns what it states.
pub fn verify_token(
    token: &[u8],
    extra: &[Vec<u8>],
    anchors: &[TsaAnchor],
) -> Result<VerifiedToken> {
    if anchors.is_empty() {
        return Err(TimestampError::NoAnchor);
    }
    let token = token_of(token)?;
    let (sd, tst_der) = signed_data(&token)?;
    let info = TokenInfo::from_tst(&tst_der)?;
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
    if !null_or_absent(&signer.digest_alg) || !null_or_absent(&signer.signature_algorithm) {
        return Err(malformed(
            "token",
            "its digest or signature algorithm has parameters other than NULL",
        ));
    }
    let digest = match signer.digest_alg.oid {
        ID_SHA256 => HashAlg::Sha256,
        ID_SHA384 => HashAlg::Sha384,
        ID_SHA512 => HashAlg::Sha512,
        other => {
            return Err(TimestampError::UnsupportedAlgorithm {
                what: "digest",
                oid: other.to_string(),
            })
        }
    };
    match signer.signature_algorithm.oid {
        RSA_ENCRYPTION => {}
        SHA256_WITH_RSA if digest == HashAlg::Sha256 => {}
        SHA384_WITH_RSA if digest == HashAlg::Sha384 => {}
        SHA512_WITH_RSA if digest == HashAlg::Sha512 => {}
        other => {
            return Err(TimestampError::UnsupportedAlgorithm {
                what: "signature",
                oid: other.to_string(),
            })
        }
    }
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
    if message_digest.as_bytes() != digest.digest(&tst_der).as_slice() {
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
    pool.extend(extra.iter().cloned());
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
        let hash_oid = first.hash_algorithm.as_ref().map_or(ID_SHA256, |a| a.oid);
        let hash = match hash_oid {
            ID_SHA256 => HashAlg::Sha256,
            ID_SHA384 => HashAlg::Sha384,
            ID_SHA512 => HashAlg::Sha512,
            other => {
                return Err(TimestampError::UnsupportedAlgorithm {
                    what: "ESSCertIDv2 hash",
                    oid: other.to_string(),
                })
            }
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

    let cert = TsaCertificate::from_bytes(&signer_der).map_err(TimestampError::Certificate)?;
    let signed = attrs.to_der().map_err(not_der("signed attributes"))?;
    Pkcs1v15Sign::new(digest)
        .verify(cert.public_key(), &signed, signer.signature.as_bytes())
        .map_err(|_| TimestampError::BadSignature)?;
    let anchor = cert
        .path_to(&pool, anchors, info.gen_time)
        .map_err(TimestampError::Certificate)?;
    Ok(VerifiedToken {
        info,
        tsa: cert.subject(),
        anchor: anchors[anchor].name(),
    })
}

/// A timestamp authority: an RSA key, its TSA certificate, the certificates to send with it
/// and the policy it stamps under.
#[derive(Debug)]
pub struct Tsa {
    key: PrivateKey,
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
        key: PrivateKey,
        cert: TsaCertificate,
        chain: Vec<CaCertificate>,
        policy: PolicyId,
    ) -> Result<Self> {
        if key.public() != cert.public_key() {
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
        if query.policy.as_ref().is_some_and(|p| *p != self.policy) {
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
                    oid: hash_oid(query.hash),
                    parameters: Some(null()),
                },
                hashed_message: OctetString::new(query.imprint.clone()).map_err(&enc)?,
            },
            serial_number: positive_int(serial).map_err(&enc)?,
            gen_time: GenTime::of(now).map_err(&enc)?,
            accuracy: Some(Accuracy {
                seconds: Some(ACCURACY_SECONDS),
                millis: None,
                micros: None,
            }),
            ordering: false,
            nonce: query
                .nonce
                .as_deref()
                .map(Int::new)
                .transpose()
                .map_err(&enc)?,
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
                    &OctetString::new(Sha256::digest(&tst_der).to_vec()).map_err(&enc)?,
                )
                .map_err(&enc)?,
            )?,
            attribute(ID_SIGNING_CERTIFICATE_V2, self.signing_certificate.clone())?,
        ])
        .map_err(&enc)?;
        let signature = Pkcs1v15Sign::new(HashAlg::Sha256)
            .sign(&self.key, &attrs.to_der().map_err(&enc)?, rng)
            .map_err(TimestampError::Sign)?;
        let signer = SignerInfo {
            version: CmsVersion::V1,
            sid: self.sid.clone(),
            digest_alg: sha256_id(),
            signed_attrs: Some(attrs),
            signature_algorithm: AlgorithmIdentifierOwned {
                oid: SHA256_WITH_RSA,
                parameters: Some(null()),
            },
            signature: OctetString::new(signature).map_err(&enc)?,
            unsigned_attrs: None,
        };
        let certificates = if query.cert_req {
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
            digest_algorithms: SetOfVec::try_from(vec![sha256_id()]).map_err(&enc)?,
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

/// `sd` (a SignedData's DER) with each certificate of its `certificates` set once. OpenSSL's
/// TSA writes the signer's certificate twice when its `certs` file holds it too, which DER's
/// SET OF forbids and `openssl ts -verify` accepts; the set is not signed, so dropping the
/// repeats changes nothing that is checked.
fn without_duplicate_certificates(sd: &[u8]) -> der::Result<Vec<u8>> {
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
            inner.read_nested(h.length, |c| {
                while !c.is_finished() {
                    let cert = c.tlv_bytes()?;
                    if certs.contains(&cert) {
                        changed = true;
                    } else {
                        certs.push(cert);
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

/// A verified token and the name it was given by (its file).
#[derive(Clone, Debug)]
pub struct NamedToken {
    /// The token's name.
    pub name: String,
    /// The token, verified.
    pub token: VerifiedToken,
}

impl serde::Serialize for NamedToken {
    /// `name`, `tsa`, `anchor`, `gen_time` (RFC 3339, rounded up to a second), `gen_time_text`
    /// (as the token writes it), `policy`, `serial` (hex) and `imprint_hash`.
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let t = &self.token;
        let mut st = s.serialize_struct("NamedToken", 8)?;
        st.serialize_field("name", &self.name)?;
        st.serialize_field("tsa", &t.tsa)?;
        st.serialize_field("anchor", &t.anchor)?;
        st.serialize_field("gen_time", &crate::verdict::rfc3339(t.info.gen_time))?;
        st.serialize_field("gen_time_text", &t.info.gen_time_text)?;
        st.serialize_field("policy", &t.info.policy)?;
        st.serialize_field("serial", &t.info.serial_hex)?;
        st.serialize_field("imprint_hash", hash_name(t.info.hash))?;
        st.end()
    }
}

/// The tokens that date one bundle: every one verified against the verifier's anchors and
/// covering the bundle's bytes.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(transparent)]
pub struct Evidence {
    /// The tokens, in the order given.
    pub tokens: Vec<NamedToken>,
}

/// Why a token does not date a bundle: which token, and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("timestamp {name}: {error}")]
pub struct TokenRefused {
    /// The token's name (its file).
    pub name: String,
    /// What is wrong.
    #[source]
    pub error: Box<TimestampError>,
}

impl Evidence {
    /// Verifies every `(name, token)` against `anchors` and checks that each covers `bundle`.
    /// The first token that fails is named. At least one token is needed.
    pub fn check(
        bundle: &[u8],
        tokens: &[(String, Vec<u8>)],
        anchors: &[TsaAnchor],
    ) -> std::result::Result<Self, TokenRefused> {
        let mut verified = Vec::with_capacity(tokens.len());
        for (name, token) in tokens {
            let refused = |error| TokenRefused {
                name: name.clone(),
                error: Box::new(error),
            };
            let v = verify_token(token, &[], anchors).map_err(refused)?;
            if !v.info.covers(bundle) {
                return Err(refused(TimestampError::ImprintMismatch {
                    alg: hash_name(v.info.hash),
                    token: hex::encode(&v.info.imprint),
                    data: hex::encode(v.info.hash.digest(bundle)),
                }));
            }
            verified.push(NamedToken {
                name: name.clone(),
                token: v,
            });
        }
        Ok(Self { tokens: verified })
    }

    /// The earliest `genTime` (whole seconds since the epoch, a fraction rounded up): when the
    /// bundle provably existed. `None` without tokens.
    pub fn received_unix(&self) -> Option<u64> {
        self.tokens
            .iter()
            .map(|t| crate::verdict::unix_secs(t.token.info.gen_time))
            .min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The largest query a TSA accepts: a SHA-512 imprint, a 64-byte nonce, a policy of
    /// 60-digit arcs, certReq. It parses back to itself and is far below the 16 KiB limit; one
    /// nonce byte more is refused.
    #[test]
    fn the_largest_legitimate_query_fits_its_limit_and_is_granted() {
        let arcs = vec!["9".repeat(60); 8].join(".");
        let policy = PolicyId::parse(&format!("2.{arcs}")).unwrap();
        let mut nonce = vec![0x7f; MAX_NONCE_BYTES];
        let q = Query::for_digest(HashAlg::Sha512, &[5; 64], Some(nonce.clone()), Some(policy))
            .unwrap();
        assert!(
            q.to_der().len() < MAX_QUERY_BYTES / 8,
            "{}",
            q.to_der().len()
        );
        assert_eq!(Query::parse(q.to_der()).unwrap(), q);
        nonce.push(0);
        let over = Query::for_digest(HashAlg::Sha512, &[5; 64], Some(nonce), None);
        assert!(over.is_err());
    }

    #[test]
    fn policy_ids_of_any_arcs_round_trip() {
        for text in [
            DEFAULT_POLICY,
            "1.2.3.4.1",
            "2.999.3",
            "0.39",
            "1.3.6.1.4.1.311.3.2.1",
        ] {
            let p = PolicyId::parse(text).unwrap();
            assert_eq!(p.to_string(), text);
            let der = p.to_der().unwrap();
            assert_eq!(PolicyId::from_der(&der).unwrap(), p);
        }
        assert!(DEFAULT_POLICY.starts_with(crate::certificate::HOURGLASS_OID_ARC));
        // const-oid agrees where it can hold the arcs.
        let small = PolicyId::parse("1.3.6.1.4.1.311.3.2.1").unwrap();
        assert_eq!(
            small.0,
            ObjectIdentifier::new_unwrap("1.3.6.1.4.1.311.3.2.1").as_bytes()
        );
        for bad in ["", "1", "3.1", "1.40", "1..2", "1.2.x", "-1.2"] {
            assert!(PolicyId::parse(bad).is_err(), "{bad}");
        }
        for bad in [&[][..], &[0x80, 0x01], &[0x2a, 0x81]] {
            let mut der = vec![0x06, bad.len() as u8];
            der.extend_from_slice(bad);
            assert!(PolicyId::from_der(&der).is_err());
        }
    }

    #[test]
    fn gen_time_fractions_round_up() {
        let parse = |t: &str| {
            let mut der = vec![0x18, t.len() as u8];
            der.extend_from_slice(t.as_bytes());
            GenTime::from_der(&der)
        };
        let whole = parse("20261127120000Z").unwrap();
        assert_eq!(unix(whole.not_before()), 1_795_780_800);
        let frac = parse("20261127120000.25Z").unwrap();
        assert_eq!(unix(frac.not_before()), 1_795_780_801);
        for bad in [
            "20261127120000.Z",
            "20261127120000.250Z",
            "20261127120000.5",
            "2026112712000Z",
            "20261127120000+0100",
            "20261327120000Z",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn a_parsed_querys_parts_make_the_same_query() {
        // The fuzz target timestamp_query found a negative nonce (content dc 00 9e ...) that
        // for_digest read as unsigned and re-encoded as 00 dc 00 9e ...
        let crash = "MFQCAQEwQTANBglghkgBZQMEAgIFAAQweVKtKJ3Oco7akl4Wlir9KHiGZuuLxVotAsWYAlT5BeFB1NZShXDHBk2dpHJEo0cIAgncAJ4TYDPnBgMBAf8=";
        use base64::Engine;
        let der = base64::engine::general_purpose::STANDARD
            .decode(crash)
            .unwrap();
        let mut queries = vec![Query::parse(&der).unwrap()];
        for nonce in [
            &[0x00, 0x80][..],
            &[0x7f],
            &[0x00],
            &[0xff],
            &[0x80, 0x00, 0x01],
        ] {
            queries.push(
                Query::for_digest(HashAlg::Sha256, &[7; 32], Some(nonce.to_vec()), None).unwrap(),
            );
        }
        assert_eq!(queries[0].nonce().map(|n| n[0]), Some(0xdc));
        for q in queries {
            let again = Query::for_digest(
                q.hash(),
                q.imprint(),
                q.nonce().map(<[u8]>::to_vec),
                q.policy().cloned(),
            )
            .unwrap();
            assert_eq!(again.nonce(), q.nonce());
            assert_eq!(again.imprint(), q.imprint());
            assert_eq!(again.policy(), q.policy());
        }
        // Not minimal: refused, not re-encoded as another number.
        assert!(Query::for_digest(HashAlg::Sha256, &[7; 32], Some(vec![0, 1]), None).is_err());
        // for_data's nonces are positive 64-bit numbers.
        let mut rng = hourglass_arith::entropy::SeededEntropy::new(b"nonces");
        for _ in 0..32 {
            let q = Query::for_data(HashAlg::Sha256, b"x", true, None, &mut rng).unwrap();
            let n = q.nonce().unwrap();
            assert!(n[0] & 0x80 == 0 && n.len() <= 9, "{n:?}");
        }
    }

    #[test]
    fn a_replys_token_must_be_signed_data_as_a_bare_one() {
        // The fuzz target timestamp_token found a granted reply whose token was a ContentInfo of
        // another type: token_of returned it, and refused it when given it back.
        let data = ContentInfo {
            content_type: ObjectIdentifier::new_unwrap("1.2.840.113549.1.7.1"),
            content: Any::encode_from(&OctetString::new(vec![1, 2, 3]).unwrap()).unwrap(),
        };
        let bare = data.to_der().unwrap();
        let reply = TimeStampRespAsn1 {
            status: PkiStatusInfoAsn1 {
                status: 0,
                status_string: None,
                fail_info: None,
            },
            time_stamp_token: Some(data),
        }
        .to_der()
        .unwrap();
        for bytes in [&bare, &reply] {
            assert!(matches!(
                token_of(bytes),
                Err(TimestampError::Malformed { what: "token", .. })
            ));
        }
    }

    #[test]
    fn fail_info_is_written_and_read_by_the_rfcs_bit_positions() {
        // What OpenSSL 3.0's TSA (`openssl ts -reply`) answers a SHA-1 query it does not
        // serve: failInfo badAlg, bit 0 (`03 02 07 80`); and ours for every failInfo, bit for
        // bit. (cmpv2 0.2's flags read OpenSSL's as badAlg+badMessageCheck, and wrote badAlg
        // as no bit at all.)
        let text = b"Message digest algorithm is not supported.";
        let mut openssl_bad_alg = vec![0x30, 0x37, 0x30, 0x35, 0x02, 0x01, 0x02, 0x30, 0x2c];
        openssl_bad_alg.extend_from_slice(&[0x0c, 0x2a]);
        openssl_bad_alg.extend_from_slice(text);
        openssl_bad_alg.extend_from_slice(&[0x03, 0x02, 0x07, 0x80]);
        match token_of(&openssl_bad_alg) {
            Err(TimestampError::Refused {
                status,
                fail_info,
                text,
            }) => {
                assert_eq!(status, "rejection");
                assert_eq!(fail_info.as_deref(), Some("badAlg"));
                assert_eq!(
                    text.as_deref(),
                    Some("Message digest algorithm is not supported.")
                );
            }
            other => panic!("{other:?}"),
        }
        for (fail, der) in [
            (FailInfo::BadAlg, &[0x03, 0x02, 0x07, 0x80][..]),
            (FailInfo::BadRequest, &[0x03, 0x02, 0x05, 0x20]),
            (FailInfo::BadDataFormat, &[0x03, 0x02, 0x02, 0x04]),
            (FailInfo::UnacceptedPolicy, &[0x03, 0x03, 0x00, 0x00, 0x01]),
            (
                FailInfo::UnacceptedExtension,
                &[0x03, 0x04, 0x07, 0x00, 0x00, 0x80],
            ),
            (
                FailInfo::SystemFailure,
                &[0x03, 0x05, 0x06, 0x00, 0x00, 0x00, 0x40],
            ),
        ] {
            let reply = Rejection::new(fail, "no").to_reply();
            assert!(
                reply.ends_with(der),
                "{}: {}",
                fail.name(),
                hex::encode(&reply)
            );
            match token_of(&reply) {
                Err(TimestampError::Refused {
                    status,
                    fail_info,
                    text,
                }) => {
                    assert_eq!(status, "rejection");
                    assert_eq!(fail_info.as_deref(), Some(fail.name()));
                    assert_eq!(text.as_deref(), Some("no"));
                }
                other => panic!("{}: {other:?}", fail.name()),
            }
        }
        // Several bits, and one no RFC names.
        let bits = BitString::new(0, vec![0xa0, 0x00, 0x00, 0x00, 0x01]).unwrap();
        assert_eq!(
            fail_info_names(&bits).as_deref(),
            Some("badAlg+badRequest+bit 39")
        );
        assert_eq!(fail_info_names(&BitString::new(0, vec![0]).unwrap()), None);
    }

    fn unix(t: SystemTime) -> u64 {
        t.duration_since(UNIX_EPOCH).unwrap().as_secs()
    }

    /// Tokens signed under certificates a TSA must not use (OpenSSL's TSA refuses to sign with
    /// them, so they are made here): no extendedKeyUsage, a non-critical one, one with another
    /// purpose beside timeStamping, a CA certificate. Each is refused, naming why.
    #[test]
    fn tokens_under_certificates_without_the_critical_time_stamping_purpose_are_refused() {
        use crate::certificate::NotTsaReason;
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
            "rsa:1024",
            "-nodes",
            "-keyout",
            "k.pem",
            "-out",
            "k.csr",
            "-subj",
            "/CN=Not a TSA",
        ]);
        let key =
            hourglass_rsa::encoding::decode_private_key(&std::fs::read(d.join("k.pem")).unwrap())
                .unwrap();
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
            let tsa = Tsa::new(key.clone(), cert, vec![], PolicyId::hourglass()).unwrap();
            let q = Query::for_digest(HashAlg::Sha256, &[7; 32], None, None).unwrap();
            let now = UNIX_EPOCH + Duration::from_secs(unix(SystemTime::now()));
            let token = tsa.stamp(&q, &[1], now, &mut rng).unwrap();
            match verify_token(&token, &[], &anchors) {
                Err(e @ TimestampError::Certificate(CertificateError::NotTsa(_))) => {
                    assert!(e.is_verdict());
                    let TimestampError::Certificate(CertificateError::NotTsa(got)) = e else {
                        unreachable!()
                    };
                    assert_eq!(got, why, "{ext}");
                }
                other => panic!("{ext}: {other:?}"),
            }
        }
    }
}

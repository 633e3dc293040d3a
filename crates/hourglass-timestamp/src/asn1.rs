//! The ASN.1 of RFC 3161 and of the ESS signing-certificate attributes (RFC 2634, RFC 5035).
//!
//! `TimeStampReq` and `TSTInfo` are declared here rather than taken from x509-tsp, because
//! x509-tsp's use `const-oid` 0.9 object identifiers, whose arcs are 32-bit, so they cannot
//! hold a policy under a UUID arc (`2.25.<uuid>`, the arc of this project's own policy), and they
//! refuse the fractional seconds RFC 3161 allows in `genTime`; and `TimeStampResp`, because
//! `cmpv2` 0.2's `PKIFailureInfo` takes the bit numbers of RFC 4210 for bit masks (badDataFormat,
//! bit 5, encodes as bits 0 and 2). The smaller structures (MessageImprint, Accuracy) are
//! x509-tsp's, and CMS is RustCrypto's `cms`.

use cms::content_info::ContentInfo;
use der::asn1::{Any, BitString, Int, OctetString, Utf8StringRef};
use der::Sequence;
use spki::AlgorithmIdentifierOwned;
use x509_cert::ext::pkix::name::GeneralName;
use x509_cert::ext::Extensions;
use x509_tsp::{Accuracy, MessageImprint};

use crate::gen_time::GenTime;
use crate::policy::PolicyId;

/// `PKIStatusInfo` (RFC 3161 section 2.4.2, from RFC 4210).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct PkiStatusInfoAsn1<'a> {
    pub(crate) status: u8,
    #[asn1(optional = "true")]
    pub(crate) status_string: Option<Vec<Utf8StringRef<'a>>>,
    #[asn1(optional = "true")]
    pub(crate) fail_info: Option<BitString>,
}

/// `TimeStampResp` (RFC 3161 section 2.4.2).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct TimeStampRespAsn1<'a> {
    pub(crate) status: PkiStatusInfoAsn1<'a>,
    #[asn1(optional = "true")]
    pub(crate) time_stamp_token: Option<ContentInfo>,
}

/// `TimeStampReq` (RFC 3161 section 2.4.1), with a policy of any arcs.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct TimeStampReqAsn1 {
    pub(crate) version: u8,
    pub(crate) message_imprint: MessageImprint,
    #[asn1(optional = "true")]
    pub(crate) req_policy: Option<PolicyId>,
    #[asn1(optional = "true")]
    pub(crate) nonce: Option<Int>,
    #[asn1(default = "Default::default")]
    pub(crate) cert_req: bool,
    #[asn1(context_specific = "0", tag_mode = "IMPLICIT", optional = "true")]
    pub(crate) extensions: Option<Extensions>,
}

/// `TSTInfo` (RFC 3161 section 2.4.2), with a policy of any arcs and a `genTime` that may
/// carry a fraction.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct TstInfoAsn1 {
    pub(crate) version: u8,
    pub(crate) policy: PolicyId,
    pub(crate) message_imprint: MessageImprint,
    pub(crate) serial_number: Int,
    pub(crate) gen_time: GenTime,
    #[asn1(optional = "true")]
    pub(crate) accuracy: Option<Accuracy>,
    #[asn1(default = "Default::default")]
    pub(crate) ordering: bool,
    #[asn1(optional = "true")]
    pub(crate) nonce: Option<Int>,
    #[asn1(context_specific = "0", tag_mode = "EXPLICIT", optional = "true")]
    pub(crate) tsa: Option<GeneralName>,
    #[asn1(context_specific = "1", tag_mode = "IMPLICIT", optional = "true")]
    pub(crate) extensions: Option<Extensions>,
}

/// `ESSCertIDv2` (RFC 5035): the hash of the signer's certificate.
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct EssCertIdV2 {
    /// Absent: SHA-256, the DEFAULT (DER omits it).
    #[asn1(optional = "true")]
    pub(crate) hash_algorithm: Option<AlgorithmIdentifierOwned>,
    pub(crate) cert_hash: OctetString,
    #[asn1(optional = "true")]
    pub(crate) issuer_serial: Option<Any>,
}

/// `SigningCertificateV2` (RFC 5035).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct SigningCertificateV2 {
    pub(crate) certs: Vec<EssCertIdV2>,
    #[asn1(optional = "true")]
    pub(crate) policies: Option<Any>,
}

/// `ESSCertID` (RFC 2634): the SHA-1 hash of the signer's certificate, as OpenSSL's TSA writes
/// by default (RFC 5816 allows it).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct EssCertId {
    pub(crate) cert_hash: OctetString,
    #[asn1(optional = "true")]
    pub(crate) issuer_serial: Option<Any>,
}

/// `SigningCertificate` (RFC 2634).
#[derive(Clone, Debug, PartialEq, Eq, Sequence)]
pub(crate) struct SigningCertificate {
    pub(crate) certs: Vec<EssCertId>,
    #[asn1(optional = "true")]
    pub(crate) policies: Option<Any>,
}

pub(crate) fn null() -> Any {
    Any::from(der::asn1::Null)
}

/// A positive INTEGER from unsigned big-endian bytes.
pub(crate) fn positive_int(bytes: &[u8]) -> der::Result<Int> {
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(bytes.len());
    let mut v = Vec::with_capacity(bytes.len() - start + 1);
    if bytes.get(start).is_none_or(|&b| b & 0x80 != 0) {
        v.push(0);
    }
    v.extend_from_slice(&bytes[start..]);
    Int::new(&v)
}

//! What an authority refuses, and how it says so: RFC 3161's failInfo, a rejection reply, and
//! the imprints and nonces accepted.

use der::asn1::{BitString, Utf8StringRef};
use der::Encode;
use hourglass_rsa::HashAlg;
use spki::AlgorithmIdentifierOwned;

use crate::asn1::{PkiStatusInfoAsn1, TimeStampRespAsn1};
use crate::oid::{ID_MD5, ID_SHA1, ID_SHA256, ID_SHA384, ID_SHA512};
use crate::signature::sha2_of;

/// The longest nonce a TSA echoes, in bytes.
pub const MAX_NONCE_BYTES: usize = 64;

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
    pub(crate) const fn new(fail: FailInfo, text: &'static str) -> Self {
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

/// The imprint hashes accepted, by OID; SHA-1 and MD5 named to be refused.
pub(crate) fn imprint_hash(
    alg: &AlgorithmIdentifierOwned,
) -> std::result::Result<HashAlg, Rejection> {
    if let Some(hash) = sha2_of(alg) {
        return Ok(hash);
    }
    let why = match alg.oid {
        ID_SHA1 => "SHA-1 imprints are refused: collisions can be made",
        ID_MD5 => "MD5 imprints are refused: collisions can be made",
        ID_SHA256 | ID_SHA384 | ID_SHA512 => "the imprint hash has parameters other than NULL",
        _ => "unsupported imprint hash: use SHA-256, SHA-384 or SHA-512",
    };
    Err(Rejection::new(FailInfo::BadAlg, why))
}

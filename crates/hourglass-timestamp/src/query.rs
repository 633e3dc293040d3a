//! Queries (`TimeStampReq`): built as `openssl ts -query` builds them, and parsed as an
//! authority must, naming RFC 3161's failInfo for every refusal.

use der::asn1::{Int, OctetString};
use der::{Decode, Encode};
use hourglass_arith::entropy::EntropySource;
use hourglass_rsa::HashAlg;
use spki::AlgorithmIdentifierOwned;
use x509_tsp::MessageImprint;

use crate::asn1::{null, positive_int, TimeStampReqAsn1};
use crate::error::{malformed, not_der, Result, TimestampError};
use crate::fail_info::{imprint_hash, FailInfo, Rejection, MAX_NONCE_BYTES};
use crate::oid::{ID_SHA256, ID_SHA384, ID_SHA512};
use crate::policy::PolicyId;
use crate::reply::token_of;
use crate::token::TokenInfo;

/// The largest query a TSA reads (RFC 3161 queries are a few hundred bytes).
pub const MAX_QUERY_BYTES: usize = 16 * 1024;

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
    /// A query for `data` hashed with `hash` (SHA-256/384/512), asking for the TSA's
    /// certificate, with a fresh 64-bit nonce unless `nonce` is false: the query `openssl ts
    /// -query -data FILE -sha256 -cert` makes.
    pub fn for_data(
        hash: HashAlg,
        data: &[u8],
        nonce: bool,
        policy: Option<PolicyId>,
        rng: &mut dyn EntropySource,
    ) -> Result<Self> {
        Self::new(hash, &hash.digest(data), nonce, policy, rng)
    }

    /// A query for a digest made with `hash` (a file hashed as it streams), asking for the
    /// TSA's certificate, with a fresh 64-bit nonce unless `nonce` is false.
    pub fn new(
        hash: HashAlg,
        digest: &[u8],
        nonce: bool,
        policy: Option<PolicyId>,
        rng: &mut dyn EntropySource,
    ) -> Result<Self> {
        let nonce = if nonce {
            let mut n = [0u8; 8];
            rng.fill(&mut n)
                .map_err(|e| TimestampError::Sign(e.to_string()))?;
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
        Self::for_digest(hash, digest, nonce, policy)
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
    /// [`crate::Tsa::reply`].
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
    /// The token's signature and certificate are checked by [`crate::verify_token`].
    pub fn token_of_reply(&self, reply: &[u8]) -> Result<Vec<u8>> {
        let token = token_of(reply)?;
        let info = TokenInfo::of_token(&token)?;
        if info.hash() != self.hash || info.imprint() != self.imprint {
            return Err(TimestampError::WrongReply {
                why: "its imprint is not the query's",
            });
        }
        if info.nonce() != self.nonce.as_deref() {
            return Err(TimestampError::WrongReply {
                why: "its nonce is not the query's",
            });
        }
        if let Some(p) = &self.policy {
            if info.policy() != p.to_string() {
                return Err(TimestampError::WrongReply {
                    why: "its policy is not the one asked for",
                });
            }
        }
        Ok(token)
    }
}

/// The OID of a SHA-2 hash.
pub(crate) fn hash_oid(hash: HashAlg) -> der::oid::ObjectIdentifier {
    match hash {
        HashAlg::Sha384 => ID_SHA384,
        HashAlg::Sha512 => ID_SHA512,
        _ => ID_SHA256,
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
}

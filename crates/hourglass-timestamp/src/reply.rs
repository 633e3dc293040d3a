//! Replies (`TimeStampResp`): the token inside a granted one, the status and failInfo of a
//! refused one, and a granted reply around a token.

use cms::content_info::ContentInfo;
use der::asn1::BitString;
use der::{Decode, Encode};

use crate::asn1::{PkiStatusInfoAsn1, TimeStampRespAsn1};
use crate::error::{malformed, not_der, Result, TimestampError};
use crate::oid::ID_SIGNED_DATA;

/// The largest token or reply read (a token with a chain of certificates is a few kilobytes).
pub const MAX_TOKEN_BYTES: usize = 256 * 1024;

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
pub(crate) fn fail_info_names(bits: &BitString) -> Option<String> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fail_info::{FailInfo, Rejection};
    use der::asn1::{Any, ObjectIdentifier, OctetString};

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
}

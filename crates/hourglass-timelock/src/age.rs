//! Time-lock encryption for age: the recipient and stanza formats of `age-plugin-hourglass`
//! (docs/FORMATS.md, section 14.1).
//!
//! A recipient `age1hourglass1...` encodes only the delay. Wrapping an age file key makes a
//! fresh modulus, seals the 16-byte key in a time-lock file (section 14) and forgets the
//! factors, as Rivest-Shamir-Wagner's construction does; the stanza's body is that file.
//! Unwrapping needs the `t` sequential squarings. Everything about the key's protection is the
//! `.tlock` format's: a random full-domain base, the header as the AEAD's associated data, the
//! trailer that finds damage before the squarings.

use hourglass_arith::entropy::EntropySource;

use crate::tlock::{seal, HeaderProblem, SealParams, StanzaProblem, TlockError, TlockHeader};
use crate::{ParamError, RecipientError, Result};

/// The human-readable part of recipients (Bech32), as age's plugin convention requires.
pub const RECIPIENT_HRP: &str = "age1hourglass";
/// The tag of hourglass's age stanzas.
pub const STANZA_TAG: &str = "hourglass-tlock";
/// The stanza format this code writes and reads (its first argument).
pub const STANZA_VERSION: &str = "v1";
/// The version byte of the recipient encoding.
const RECIPIENT_VERSION: u8 = 1;
/// Bytes of an age file key.
pub const FILE_KEY_BYTES: usize = 16;
/// The largest stanza body accepted (a `.tlock` file of a 16-byte key on an 8192-bit modulus
/// is under 3.2 KB).
const MAX_BODY: usize = 4096;

/// What a recipient says: the delay, and the modulus size to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgeRecipient {
    /// Sequential squarings to open.
    pub t: u64,
    /// Modulus bits of each file's fresh modulus.
    pub bits: u32,
    /// The reference rate (squarings per second) `t` was computed with, if it came from a
    /// duration (only for display: the delay is `t`).
    pub rate: Option<u32>,
}

impl AgeRecipient {
    /// The recipient's bytes: `0x01 || u16 bits || u64 t || u32 rate (0: none)`, big-endian.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = vec![RECIPIENT_VERSION];
        out.extend_from_slice(&(self.bits as u16).to_be_bytes());
        out.extend_from_slice(&self.t.to_be_bytes());
        out.extend_from_slice(&self.rate.unwrap_or(0).to_be_bytes());
        out
    }

    /// Reads a recipient's bytes (as the age plugin protocol delivers them).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let bad = |why: RecipientError| ParamError::Recipient(why);
        let bytes: &[u8; 15] = bytes
            .try_into()
            .map_err(|_| bad(RecipientError::Length { len: bytes.len() }))?;
        let [version, b0, b1, t0, t1, t2, t3, t4, t5, t6, t7, r0, r1, r2, r3] = *bytes;
        if version != RECIPIENT_VERSION {
            return Err(bad(RecipientError::UnknownVersion { found: version }).into());
        }
        let bits = u32::from(u16::from_be_bytes([b0, b1]));
        let t = u64::from_be_bytes([t0, t1, t2, t3, t4, t5, t6, t7]);
        let rate = u32::from_be_bytes([r0, r1, r2, r3]);
        let r = Self {
            t,
            bits,
            rate: (rate != 0).then_some(rate),
        };
        r.check()?;
        Ok(r)
    }

    fn check(&self) -> Result<()> {
        crate::rsw::check_squarings(self.t)?;
        if !(crate::tlock::MIN_MODULUS_BITS..=crate::tlock::MAX_MODULUS_BITS).contains(&self.bits) {
            return Err(ParamError::TlockModulusBits {
                bits: self.bits,
                min: crate::tlock::MIN_MODULUS_BITS,
                max: crate::tlock::MAX_MODULUS_BITS,
            }
            .into());
        }
        Ok(())
    }

    /// The recipient string, `age1hourglass1...` (Bech32).
    pub fn to_bech32(&self) -> Result<String> {
        use bech32::ToBase32;
        self.check()?;
        bech32::encode(
            RECIPIENT_HRP,
            self.to_bytes().to_base32(),
            bech32::Variant::Bech32,
        )
        .map_err(|e| ParamError::Recipient(RecipientError::Encode(e)).into())
    }

    /// Reads a recipient string.
    pub fn from_bech32(s: &str) -> Result<Self> {
        use bech32::FromBase32;
        let bad = |why: RecipientError| ParamError::Recipient(why);
        let (hrp, data, variant) = bech32::decode(s).map_err(|e| bad(RecipientError::Bech32(e)))?;
        if hrp != RECIPIENT_HRP || variant != bech32::Variant::Bech32 {
            return Err(bad(RecipientError::OtherKind { prefix: hrp }).into());
        }
        let bytes = Vec::<u8>::from_base32(&data).map_err(|e| bad(RecipientError::Bech32(e)))?;
        Self::from_bytes(&bytes)
    }
}

/// A wrapped file key: the stanza's arguments and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrappedKey {
    /// `["v1", t, bits]`.
    pub args: Vec<String>,
    /// A `.tlock` file (section 14) whose content is the 16-byte file key.
    pub body: Vec<u8>,
}

/// Wraps an age file key for `recipient`: a fresh modulus of `recipient.bits` bits, the key
/// sealed behind `recipient.t` squarings, the factors forgotten.
pub fn wrap(
    file_key: &[u8; FILE_KEY_BYTES],
    recipient: &AgeRecipient,
    rng: &mut dyn EntropySource,
) -> std::result::Result<WrappedKey, TlockError> {
    recipient.check()?;
    let mut params = SealParams::new(recipient.bits, recipient.t);
    params.content_len = Some(FILE_KEY_BYTES as u64);
    let mut body = Vec::new();
    seal(&mut &file_key[..], &mut body, &params, rng)?;
    Ok(WrappedKey {
        args: vec![
            STANZA_VERSION.into(),
            recipient.t.to_string(),
            recipient.bits.to_string(),
        ],
        body,
    })
}

/// Reads a stanza's arguments and body and checks them before any squaring: the version, the
/// arguments against the header they describe, the length of the body and its trailer.
/// Returns the header; the body after it is where [`crate::tlock::decrypt_body`] reads.
pub fn parse_stanza(args: &[String], body: &[u8]) -> std::result::Result<TlockHeader, TlockError> {
    let bad = |why: StanzaProblem| TlockError::CorruptHeader(HeaderProblem::Stanza(why));
    match args {
        [v, t, bits] if v == STANZA_VERSION => {
            if body.len() > MAX_BODY {
                return Err(bad(StanzaProblem::BodyTooLong));
            }
            let mut reader = body;
            let header = TlockHeader::read_from(&mut reader)?;
            if t.parse::<u64>().ok() != Some(header.t())
                || bits.parse::<u32>().ok() != Some(header.modulus_bits())
            {
                return Err(bad(StanzaProblem::ArgumentsMismatch));
            }
            if header.content_len() != Some(FILE_KEY_BYTES as u64)
                || header.expected_file_len() != Some(body.len() as u64)
            {
                return Err(bad(StanzaProblem::NotFileKey));
            }
            crate::tlock::check_body(&header, &mut reader)?;
            Ok(header)
        }
        [v, ..] if v != STANZA_VERSION => Err(bad(StanzaProblem::Version {
            found: v.clone(),
            supported: STANZA_VERSION,
        })),
        _ => Err(bad(StanzaProblem::Arguments { found: args.len() })),
    }
}

/// A file's hourglass stanza that passed [`parse_stanza`]: where it is among the file's stanzas
/// and what opening it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckedStanza {
    /// Its index among all of the file's stanzas (age's numbering, for errors).
    pub index: usize,
    /// Its header: `t`, the modulus; the body after it is the sealed file key.
    pub header: TlockHeader,
}

/// The hourglass stanzas among a file's stanzas (`(tag, args, body)` in the file's order),
/// checked and in the order to try them: fewest squarings first, the file's order among equals.
/// Any one of them opens the file key (a file sealed to several hourglass recipients carries
/// one each), so the one that needs the least work is opened, wherever it stands in the file.
/// Stanzas of other tags are left out; those that fail their checks come back apart, with
/// their index and why, so that the caller can report them if none opens.
pub fn stanzas_by_work<'a>(
    stanzas: impl IntoIterator<Item = (&'a str, &'a [String], &'a [u8])>,
) -> (Vec<CheckedStanza>, Vec<(usize, TlockError)>) {
    let mut checked = Vec::new();
    let mut refused = Vec::new();
    for (index, (tag, args, body)) in stanzas.into_iter().enumerate() {
        if tag != STANZA_TAG {
            continue;
        }
        match parse_stanza(args, body) {
            Ok(header) => checked.push(CheckedStanza { index, header }),
            Err(e) => refused.push((index, e)),
        }
    }
    // A stable sort: equal work keeps the file's order.
    checked.sort_by_key(|c| c.header.t());
    (checked, refused)
}

#[cfg(test)]
mod tests {
    use super::*;
    use hourglass_arith::entropy::SeededEntropy;
    use sha2::{Digest, Sha256};

    #[test]
    fn recipients_round_trip_and_refuse_others() {
        let r = AgeRecipient {
            t: 3_600_000_000,
            bits: 2048,
            rate: Some(1_000_000),
        };
        let s = r.to_bech32().unwrap();
        assert!(s.starts_with("age1hourglass1"), "{s}");
        assert_eq!(AgeRecipient::from_bech32(&s).unwrap(), r);
        assert_eq!(AgeRecipient::from_bytes(&r.to_bytes()).unwrap(), r);
        let x25519 = "age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p";
        assert!(AgeRecipient::from_bech32(x25519).is_err());
        let err = AgeRecipient::from_bech32(x25519).unwrap_err();
        assert!(
            matches!(&err, crate::Error::InvalidParameters(ParamError::Recipient(RecipientError::OtherKind { prefix })) if prefix == "age"),
            "{err:?}"
        );
        let mut bytes = r.to_bytes();
        bytes[0] = 2;
        assert!(matches!(
            AgeRecipient::from_bytes(&bytes),
            Err(crate::Error::InvalidParameters(ParamError::Recipient(
                RecipientError::UnknownVersion { found: 2 }
            )))
        ));
        let err = AgeRecipient::from_bytes(&bytes[..10]).unwrap_err();
        assert!(
            matches!(
                err,
                crate::Error::InvalidParameters(ParamError::Recipient(RecipientError::Length {
                    len: 10
                }))
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "invalid parameters: not an hourglass recipient: wrong length"
        );
        let zero = AgeRecipient { t: 0, ..r };
        assert!(matches!(
            zero.to_bech32(),
            Err(crate::Error::InvalidParameters(ParamError::ZeroSquarings))
        ));
        let small = AgeRecipient { bits: 512, ..r };
        assert!(matches!(
            small.to_bech32(),
            Err(crate::Error::InvalidParameters(
                ParamError::TlockModulusBits { bits: 512, .. }
            ))
        ));
    }

    /// The vector of docs/FORMATS.md section 14.1: a fixed file key wrapped with seeded
    /// (insecure, reproducible) randomness.
    #[test]
    fn the_documented_vector() {
        let r = AgeRecipient {
            t: 1000,
            bits: 1024,
            rate: None,
        };
        assert_eq!(
            r.to_bech32().unwrap(),
            "age1hourglass1qyzqqqqqqqqqqqqraqqqqqqqvgvtyh"
        );
        let key = [0x42u8; FILE_KEY_BYTES];
        let mut rng = SeededEntropy::new(b"hourglass age stanza vector");
        let w = wrap(&key, &r, &mut rng).unwrap();
        assert_eq!(w.args, ["v1", "1000", "1024"]);
        assert_eq!(w.body.len(), 463 + 16 + 16 + 32);
        assert_eq!(
            hex::encode(Sha256::digest(&w.body)),
            "11cb20c95f09e3770e262b013de251aa287ee1722a6ba31be933d4544e25a513",
            "the stanza encoding changed"
        );
        let header = parse_stanza(&w.args, &w.body).unwrap();
        let b = hourglass_arith::squaring::square_k_times(header.base(), 1000, header.n());
        let content = header.recover_key(&b).unwrap();
        let mut out = Vec::new();
        crate::tlock::decrypt_body(&header, &content, &mut &w.body[463..], &mut out).unwrap();
        assert_eq!(out, key);
    }

    /// Several hourglass stanzas in one file: the cheapest comes first wherever it stands,
    /// equals keep their order, other tags are skipped and damaged ones set apart.
    #[test]
    fn the_stanza_with_the_fewest_squarings_comes_first() {
        let mut rng = SeededEntropy::new(b"several stanzas");
        let key = [9u8; FILE_KEY_BYTES];
        let wrapped: Vec<WrappedKey> = [1_000_000_000_000u64, 2000, 50_000, 2000, 7]
            .iter()
            .map(|&t| {
                let r = AgeRecipient {
                    t,
                    bits: 1024,
                    rate: None,
                };
                wrap(&key, &r, &mut rng).unwrap()
            })
            .collect();
        let mut damaged = wrapped[4].body.clone();
        damaged[300] ^= 1;
        let x25519_args = ["someone".to_string()];
        let mut stanzas: Vec<(&str, &[String], &[u8])> = wrapped[..4]
            .iter()
            .map(|w| (STANZA_TAG, &w.args[..], &w.body[..]))
            .collect();
        stanzas.insert(1, ("X25519", &x25519_args[..], b"not ours"));
        stanzas.push((STANZA_TAG, &wrapped[4].args[..], &damaged[..]));
        let (order, refused) = stanzas_by_work(stanzas);
        let got: Vec<(usize, u64)> = order.iter().map(|c| (c.index, c.header.t())).collect();
        assert_eq!(
            got,
            [(2, 2000), (4, 2000), (3, 50_000), (0, 1_000_000_000_000)]
        );
        assert_eq!(refused.len(), 1);
        assert_eq!(refused[0].0, 5);
        // The cheapest one opens the key.
        let first = &order[0];
        let body = &wrapped[1].body;
        let b =
            hourglass_arith::squaring::square_k_times(first.header.base(), 2000, first.header.n());
        let content = first.header.recover_key(&b).unwrap();
        let mut out = Vec::new();
        crate::tlock::decrypt_body(
            &first.header,
            &content,
            &mut &body[first.header.as_bytes().len()..],
            &mut out,
        )
        .unwrap();
        assert_eq!(out, key);
    }

    #[test]
    fn tampered_stanzas_are_refused_before_the_squarings() {
        let r = AgeRecipient {
            t: 1_000_000_000_000,
            bits: 1024,
            rate: None,
        };
        let mut rng = SeededEntropy::new(b"tamper");
        let w = wrap(&[7u8; FILE_KEY_BYTES], &r, &mut rng).unwrap();
        assert!(parse_stanza(&w.args, &w.body).is_ok());
        for pos in [20, 300, w.body.len() - 40, w.body.len() - 1] {
            let mut body = w.body.clone();
            body[pos] ^= 1;
            assert!(parse_stanza(&w.args, &body).is_err(), "byte {pos}");
        }
        let mut args = w.args.clone();
        args[1] = "1000".into();
        assert!(parse_stanza(&args, &w.body).is_err());
        assert!(parse_stanza(&["v2".into(), "1".into(), "1024".into()], &w.body).is_err());
        assert!(parse_stanza(&[], &w.body).is_err());
        assert!(parse_stanza(&w.args, &w.body[..w.body.len() - 1]).is_err());
    }
}

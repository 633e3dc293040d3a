//! `genTime` and `accuracy`: when a token says it was made, and how far that may be off.
//!
//! RFC 3161 section 2.4.2: "accuracy represents the time deviation around the UTC time
//! contained in GeneralizedTime", so the time lies within `genTime ± accuracy`; a token proves
//! that its data existed no later than [`latest`]`(genTime, accuracy)`. Without an accuracy
//! field, the end of the second `genTime` names.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use der::asn1::GeneralizedTime;
use der::{
    Decode, DecodeValue, Encode, EncodeValue, FixedTag, Header, Length, Reader, Tag, Writer,
};

/// The latest time RFC 3339 can write (9999-12-31T23:59:59Z): every time here saturates there.
const LAST: Duration = Duration::from_secs(253_402_300_799);

/// `genTime`: a GeneralizedTime that may carry fractional seconds (RFC 3161 section 2.4.2),
/// kept as its text, to the nanosecond.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GenTime {
    text: Vec<u8>,
    /// The whole second (the fraction cut off).
    whole: SystemTime,
    /// The fraction, in nanoseconds.
    nanos: u32,
}

impl GenTime {
    /// A whole-second `genTime` (what this crate's authority writes).
    pub(crate) fn of(t: SystemTime) -> der::Result<Self> {
        let secs = t.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let g = GeneralizedTime::from_unix_duration(Duration::from_secs(secs))?;
        let der = g.to_der()?;
        Ok(Self {
            text: der[2..].to_vec(),
            whole: g.to_system_time(),
            nanos: 0,
        })
    }

    /// The time, to the nanosecond.
    pub(crate) fn exact(&self) -> SystemTime {
        self.whole + Duration::from_nanos(u64::from(self.nanos))
    }

    /// The whole second (a fraction cut off): what certificate validity is checked at.
    pub(crate) fn whole(&self) -> SystemTime {
        self.whole
    }

    /// RFC 3339, with the token's fraction as written (`2024-06-21T07:12:05.884Z`).
    pub(crate) fn rfc3339(&self) -> String {
        let t = &self.text;
        let s = |r: std::ops::Range<usize>| String::from_utf8_lossy(&t[r]).into_owned();
        let fraction = if t.len() > 15 {
            s(14..t.len() - 1)
        } else {
            String::new()
        };
        format!(
            "{}-{}-{}T{}:{}:{}{fraction}Z",
            s(0..4),
            s(4..6),
            s(6..8),
            s(8..10),
            s(10..12),
            s(12..14)
        )
    }

    /// As the token writes it (`YYYYMMDDHHMMSS[.f]Z`).
    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.text).into_owned()
    }
}

/// The latest time a token proves its data existed: `genTime + accuracy` rounded up to a whole
/// second, or without an accuracy the end of the `genTime` second; saturating at year 9999.
pub(crate) fn latest(gen_time: &GenTime, accuracy_micros: Option<u64>) -> SystemTime {
    let since = gen_time
        .exact()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let end = match accuracy_micros {
        Some(micros) => since.saturating_add(Duration::from_micros(micros)),
        None => Duration::from_secs(since.as_secs() + 1),
    };
    let secs = end.as_secs() + u64::from(end.subsec_nanos() > 0);
    UNIX_EPOCH + Duration::from_secs(secs).min(LAST)
}

/// Whether `genTime + accuracy` (or the end of the `genTime` second without one) is at most
/// 9999-12-31T23:59:59Z, the last time RFC 3339 writes: only then is [`latest`] exact.
pub(crate) fn within_years(gen_time: &GenTime, accuracy_micros: Option<u64>) -> bool {
    let since = gen_time
        .exact()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let end = match accuracy_micros {
        Some(micros) => since.checked_add(Duration::from_micros(micros)),
        None => Some(Duration::from_secs(since.as_secs() + 1)),
    };
    end.is_some_and(|e| e.as_secs() + u64::from(e.subsec_nanos() > 0) <= LAST.as_secs())
}

impl<'a> DecodeValue<'a> for GenTime {
    fn decode_value<R: Reader<'a>>(reader: &mut R, header: Header) -> der::Result<Self> {
        let text = reader.read_vec(header.length)?;
        let bad = || Tag::GeneralizedTime.value_error();
        // YYYYMMDDHHMMSS[.f]Z: the fraction without trailing zeros (DER), at most 9 digits.
        let (whole, nanos) = match text.iter().position(|&b| b == b'.') {
            None => (text.clone(), 0),
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
                let nanos = digits
                    .iter()
                    .chain(std::iter::repeat(&b'0'))
                    .take(9)
                    .fold(0u32, |n, d| n * 10 + u32::from(d - b'0'));
                (w, nanos)
            }
            Some(_) => return Err(bad()),
        };
        let mut tlv = vec![0x18, u8::try_from(whole.len()).map_err(|_| bad())?];
        tlv.extend_from_slice(&whole);
        let g = GeneralizedTime::from_der(&tlv)?;
        Ok(Self {
            text,
            whole: g.to_system_time(),
            nanos,
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(t: &str) -> der::Result<GenTime> {
        let mut der = vec![0x18, t.len() as u8];
        der.extend_from_slice(t.as_bytes());
        GenTime::from_der(&der)
    }

    fn unix(t: SystemTime) -> u64 {
        t.duration_since(UNIX_EPOCH).unwrap().as_secs()
    }

    #[test]
    fn gen_time_keeps_its_fraction_and_refuses_what_der_does_not_allow() {
        let whole = parse("20261127120000Z").unwrap();
        assert_eq!(unix(whole.exact()), 1_795_780_800);
        assert_eq!(whole.rfc3339(), "2026-11-27T12:00:00Z");
        let frac = parse("20261127120000.25Z").unwrap();
        assert_eq!(frac.nanos, 250_000_000);
        assert_eq!(unix(frac.whole()), 1_795_780_800);
        assert_eq!(frac.rfc3339(), "2026-11-27T12:00:00.25Z");
        assert_eq!(parse("20261127120000.000000001Z").unwrap().nanos, 1);
        for bad in [
            "20261127120000.Z",
            "20261127120000.250Z",
            "20261127120000.5",
            "20261127120000.1234567891Z",
            "2026112712000Z",
            "20261127120000+0100",
            "20261327120000Z",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn latest_is_gen_time_plus_accuracy_rounded_up() {
        let whole = parse("20261127120000Z").unwrap();
        let frac = parse("20240621071205.884Z").unwrap();
        let t0 = 1_795_780_800;
        // No accuracy: the end of the genTime second, fraction or not.
        assert_eq!(unix(latest(&whole, None)), t0 + 1);
        assert_eq!(unix(latest(&frac, None)), 1_718_953_926);
        // An accuracy: genTime plus it, rounded up to the second.
        assert_eq!(unix(latest(&whole, Some(600_000_000))), t0 + 600);
        assert_eq!(unix(latest(&whole, Some(0))), t0);
        assert_eq!(unix(latest(&whole, Some(1))), t0 + 1);
        assert_eq!(unix(latest(&whole, Some(86_400_000_000))), t0 + 86_400);
        // Microsoft: 07:12:05.884 with 500 ms is 07:12:06.384, proved by 07:12:07.
        assert_eq!(unix(latest(&frac, Some(500_000))), 1_718_953_927);
        // An absurd accuracy saturates at year 9999 rather than overflowing.
        assert_eq!(unix(latest(&whole, Some(u64::MAX))), LAST.as_secs());
    }
}

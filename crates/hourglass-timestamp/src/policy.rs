//! Policies: object identifiers of any arcs (a UUID arc needs 128 bits, more than const-oid's
//! 32-bit arcs hold).

use der::{DecodeValue, EncodeValue, FixedTag, Header, Length, Reader, Tag, Writer};
use hourglass_arith::Integer;
use hourglass_x509::oid::{oid_text, well_formed};

use crate::error::{Result, TimestampError};

/// The project's own TSA policy: [`hourglass_x509::oid::HOURGLASS_OID_ARC`]`.2` (docs/FORMATS.md section 18).
pub const DEFAULT_POLICY: &str = "2.25.306263111566275780816363928834165067171.2";

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
}

impl std::fmt::Display for PolicyId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&oid_text(&self.0))
    }
}

impl<'a> DecodeValue<'a> for PolicyId {
    fn decode_value<R: Reader<'a>>(reader: &mut R, header: Header) -> der::Result<Self> {
        let content = reader.read_vec(header.length)?;
        if !well_formed(&content) {
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
#[cfg(test)]
mod tests {
    use super::*;
    use der::oid::ObjectIdentifier;
    use der::{Decode, Encode};
    use hourglass_x509::oid::HOURGLASS_OID_ARC;

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
        assert_eq!(DEFAULT_POLICY, format!("{HOURGLASS_OID_ARC}.2"));
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
}

//! Object identifiers: the X.509 ones hourglass reads and writes, the project's own arc, and
//! the dotted text of an OID of any arcs.

use der::oid::ObjectIdentifier;
use hourglass_arith::Integer;

/// The hourglass OID arc: `2.25.<UUID e6682136-d0cc-4163-85ae-3dc5352e4da3 as an integer>`
/// (ITU-T X.667: a UUID-based OID needs no registration).
pub const HOURGLASS_OID_ARC: &str = "2.25.306263111566275780816363928834165067171";

/// `rsaEncryption`.
pub const RSA_ENCRYPTION: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.1");
/// `sha256WithRSAEncryption`.
pub const SHA256_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.11");
/// `sha384WithRSAEncryption`.
pub const SHA384_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.12");
/// `sha512WithRSAEncryption`.
pub const SHA512_WITH_RSA: ObjectIdentifier = ObjectIdentifier::new_unwrap("1.2.840.113549.1.1.13");
/// `id-at-commonName`.
pub const AT_COMMON_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.3");
/// `id-at-serialNumber`.
pub const AT_SERIAL_NUMBER: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.4.5");
/// `id-ce-subjectKeyIdentifier`.
pub const CE_SUBJECT_KEY_IDENTIFIER: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.14");
/// `id-ce-keyUsage`.
pub const CE_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.15");
/// `id-ce-subjectAltName`.
pub const CE_SUBJECT_ALT_NAME: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.17");
/// `id-ce-basicConstraints`.
pub const CE_BASIC_CONSTRAINTS: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.19");
/// `id-ce-authorityKeyIdentifier`.
pub const CE_AUTHORITY_KEY_IDENTIFIER: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.35");
/// `id-ce-extKeyUsage`.
pub const CE_EXTENDED_KEY_USAGE: ObjectIdentifier = ObjectIdentifier::new_unwrap("2.5.29.37");

/// The dotted text of an OBJECT IDENTIFIER's DER content octets, whatever the size of its
/// arcs (a UUID arc needs 128 bits); `(OID <hex>)` for octets that are not a well-formed OID.
pub fn oid_text(content: &[u8]) -> String {
    if !well_formed(content) {
        return format!("(OID {})", hex::encode(content));
    }
    let mut arcs = Vec::new();
    let mut v = Integer::new();
    for &b in content {
        v <<= 7;
        v += u32::from(b & 0x7f);
        if b & 0x80 == 0 {
            arcs.push(std::mem::take(&mut v));
        }
    }
    let first = &arcs[0];
    let (a, b) = if *first < 40 {
        (0u32, first.clone())
    } else if *first < 80 {
        (1, Integer::from(first - 40u32))
    } else {
        (2, Integer::from(first - 80u32))
    };
    let mut text = format!("{a}.{b}");
    for arc in &arcs[1..] {
        text.push_str(&format!(".{arc}"));
    }
    text
}

/// Whether `content` is a well-formed OID's content octets: not empty, every arc ends in a byte
/// below 0x80, and no arc starts with the padding byte 0x80.
pub fn well_formed(content: &[u8]) -> bool {
    !content.is_empty()
        && content.last().is_some_and(|b| b & 0x80 == 0)
        && content
            .iter()
            .enumerate()
            .all(|(i, &b)| b != 0x80 || (i > 0 && content[i - 1] & 0x80 != 0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oids_of_any_arcs_print_as_const_oid_prints_the_small_ones() {
        for text in [
            "1.3.6.1.4.1.311.3.2.1",
            "2.5.29.37",
            "1.2.840.113549.1.1.11",
        ] {
            let oid = ObjectIdentifier::new_unwrap(text);
            assert_eq!(oid_text(oid.as_bytes()), text);
        }
        // The hourglass arc: 2*40+25 = 105, then the UUID in base 128, then 1.
        let mut n = Integer::from_str_radix(&HOURGLASS_OID_ARC[5..], 10).unwrap();
        let mut digits = Vec::new();
        while n > 0 {
            digits.push((n.to_u32_wrapping() & 0x7f) as u8);
            n >>= 7u32;
        }
        let mut der = vec![105];
        for (i, d) in digits.iter().rev().enumerate() {
            der.push(if i + 1 < digits.len() { d | 0x80 } else { *d });
        }
        der.push(1);
        assert_eq!(oid_text(&der), format!("{HOURGLASS_OID_ARC}.1"));
        for bad in [&[][..], &[0x80, 0x01], &[0x2a, 0x81]] {
            assert!(!well_formed(bad));
            assert!(oid_text(bad).starts_with("(OID "));
        }
    }
}

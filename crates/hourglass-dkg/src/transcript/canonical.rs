//! The canonical form of an ECDSA signature: `s` in the lower half of the group order.
//!
//! `(r, s)` and `(r, n - s)` both verify (ECDSA is malleable), so anyone who sees a member's
//! signature can make a second one without its key. The echo of the transcript signatures
//! compares signatures, and would take such a copy for the member signing twice; comparing and
//! storing the low-`s` form makes the copy the same signature. Verifiers accept either form.

use rug::integer::Order;
use rug::Integer;

/// The order of the P-256 group.
pub(crate) const P256_ORDER: &str =
    "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551";
/// The order of the P-384 group.
pub(crate) const P384_ORDER: &str = "ffffffffffffffffffffffffffffffffffffffffffffffffc7634d81f4372ddf581a0db248b0a77aecec196accc52973";

/// Reads a DER `INTEGER` of at most 127 content bytes at the start of `der`: its value and
/// what follows it.
fn read_integer(der: &[u8]) -> Option<(Integer, &[u8])> {
    let (&[tag, len], rest) = der.split_first_chunk::<2>()?;
    let len = usize::from(len);
    if tag != 0x02 || len == 0 || len > 127 || rest.len() < len {
        return None;
    }
    let (content, rest) = rest.split_at(len);
    Some((Integer::from_digits(content, Order::Msf), rest))
}

/// A DER `INTEGER` for a non-negative value: minimal, with a zero byte when its top bit is set.
fn write_integer(out: &mut Vec<u8>, value: &Integer) {
    let mut content = value.to_digits::<u8>(Order::Msf);
    if content.first().is_none_or(|b| b & 0x80 != 0) {
        content.insert(0, 0);
    }
    out.push(0x02);
    out.push(content.len() as u8);
    out.extend_from_slice(&content);
}

/// `der` (an `ECDSA-Sig-Value`, `SEQUENCE { r INTEGER, s INTEGER }`) with `s` replaced by
/// `order - s` when `s > order / 2`; anything that is not such a sequence is returned as it
/// is (it does not verify anyway).
pub(crate) fn ecdsa_low_s(der: &[u8], order_hex: &str) -> Vec<u8> {
    let Ok(order) = Integer::from_str_radix(order_hex, 16) else {
        return der.to_vec();
    };
    let parsed = (|| {
        let (&[tag, len], body) = der.split_first_chunk::<2>()?;
        if tag != 0x30 || usize::from(len) != body.len() || len > 127 {
            return None;
        }
        let (r, rest) = read_integer(body)?;
        let (s, rest) = read_integer(rest)?;
        rest.is_empty().then_some((r, s))
    })();
    let Some((r, s)) = parsed else {
        return der.to_vec();
    };
    let half = Integer::from(&order >> 1u32);
    if s <= half || s >= order {
        return der.to_vec();
    }
    let s = order - s;
    let mut body = Vec::with_capacity(der.len());
    write_integer(&mut body, &r);
    write_integer(&mut body, &s);
    let mut out = vec![0x30, body.len() as u8];
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn der(r: &Integer, s: &Integer) -> Vec<u8> {
        let mut body = Vec::new();
        write_integer(&mut body, r);
        write_integer(&mut body, s);
        let mut out = vec![0x30, body.len() as u8];
        out.extend_from_slice(&body);
        out
    }

    #[test]
    fn high_s_becomes_low_s_and_low_s_stays() {
        let n = Integer::from_str_radix(P256_ORDER, 16).unwrap();
        let r = Integer::from(0x1234_5678u32) << 200u32;
        let low = Integer::from(12345u32);
        let high = Integer::from(&n - &low);
        let canonical = der(&r, &low);
        assert_eq!(ecdsa_low_s(&der(&r, &high), P256_ORDER), canonical);
        assert_eq!(ecdsa_low_s(&canonical, P256_ORDER), canonical);
        // Not a signature: unchanged, and no panic on any prefix.
        let sig = der(&r, &high);
        for cut in 0..sig.len() {
            assert_eq!(ecdsa_low_s(&sig[..cut], P256_ORDER), &sig[..cut]);
        }
        assert_eq!(ecdsa_low_s(b"\x30\x00", P384_ORDER), b"\x30\x00");
    }
}

//! Integers and bytes written in hexadecimal, the form every hourglass file uses.

use rug::Integer;

/// Parses a non-negative integer written as 1 to 8192 hexadecimal digits (no prefix, no sign,
/// no spaces): the form every hourglass file uses. `None` for anything else.
pub fn integer_from_hex(s: &str) -> Option<Integer> {
    if s.is_empty() || s.len() > 8192 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Integer::from_str_radix(s, 16).ok()
}

/// Parses a non-negative integer in the canonical hex form the time-certifying files require
/// (bundles, sets, proofs, receipts, transcripts): 1 to 8192 lowercase hexadecimal digits with
/// no leading zero (zero is `0`). `None` for anything else, so one value has one spelling.
pub fn integer_from_canonical_hex(s: &str) -> Option<Integer> {
    let canonical = s == "0" || !s.starts_with('0');
    if !canonical || !is_lower_hex(s) || s.len() > 8192 {
        return None;
    }
    Integer::from_str_radix(s, 16).ok()
}

/// Parses exactly `N` bytes written as `2 N` lowercase hexadecimal digits (digests,
/// fingerprints, session ids). `None` for anything else.
pub fn bytes_from_canonical_hex<const N: usize>(s: &str) -> Option<[u8; N]> {
    if s.len() != 2 * N || !is_lower_hex(s) {
        return None;
    }
    let mut out = [0u8; N];
    for (byte, pair) in out.iter_mut().zip(s.as_bytes().chunks_exact(2)) {
        *byte = (hex_digit(pair[0]) << 4) | hex_digit(pair[1]);
    }
    Some(out)
}

/// The value of a lowercase hexadecimal digit (already checked).
fn hex_digit(b: u8) -> u8 {
    match b {
        b'0'..=b'9' => b - b'0',
        _ => b - b'a' + 10,
    }
}

/// Whether `s` is non-empty and only `0-9a-f`.
fn is_lower_hex(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_hex_has_one_spelling_per_value() {
        assert_eq!(integer_from_canonical_hex("0"), Some(Integer::ZERO));
        assert_eq!(integer_from_canonical_hex("1f"), Some(Integer::from(31)));
        for bad in ["", "00", "01f", "1F", "0x1f", " 1f", "1f ", "-1", "g"] {
            assert_eq!(integer_from_canonical_hex(bad), None, "{bad:?}");
            if bad != "00" {
                assert_eq!(bytes_from_canonical_hex::<1>(bad), None, "{bad:?}");
            }
        }
        // Fixed-width bytes keep their leading zeros: "00" is the one spelling of [0].
        assert_eq!(bytes_from_canonical_hex::<1>("00"), Some([0]));
        assert_eq!(integer_from_canonical_hex(&"f".repeat(8193)), None);
        assert!(integer_from_canonical_hex(&"f".repeat(8192)).is_some());
        assert_eq!(bytes_from_canonical_hex::<2>("00af"), Some([0x00, 0xaf]));
        assert_eq!(bytes_from_canonical_hex::<2>("00AF"), None);
        assert_eq!(bytes_from_canonical_hex::<2>("0af"), None);
        assert_eq!(bytes_from_canonical_hex::<2>("00af00"), None);
    }
}

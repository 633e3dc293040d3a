//! Certificate files: PEM (one or several `CERTIFICATE` blocks) or DER.

use der::pem::LineEnding;

use crate::error::{malformed, Malformation, Result};

/// Largest certificate file read (PEM or DER).
pub const MAX_CERTIFICATE_FILE: usize = 1 << 20;

/// Whether `bytes` look like a certificate (PEM `CERTIFICATE` or DER) rather than a JSON key.
pub fn looks_like_certificate(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(1 << 16)];
    if find(head, b"-----BEGIN CERTIFICATE-----").is_some() {
        return true;
    }
    head.iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|&b| b == 0x30)
}

pub(crate) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The DER of the first `CERTIFICATE` PEM block in `text` (which starts at a `-----BEGIN`).
pub(crate) fn pem_certificate(text: &[u8]) -> Result<Vec<u8>> {
    const END: &[u8] = b"-----END CERTIFICATE-----";
    let end = find(text, END).ok_or(malformed(Malformation::PemNoEnd))?;
    let block = &text[..end + END.len()];
    let (label, der) = der::pem::decode_vec(block).map_err(|e| malformed(Malformation::Pem(e)))?;
    if label != "CERTIFICATE" {
        return Err(malformed(Malformation::PemLabel {
            label: label.to_string(),
        }));
    }
    Ok(der)
}

/// The PEM encoding of a certificate's DER (`-----BEGIN CERTIFICATE-----`).
pub fn to_pem(der: &[u8]) -> String {
    der::pem::encode_string("CERTIFICATE", LineEnding::LF, der)
        .unwrap_or_else(|_| unreachable!("a certificate of at most 1 MiB encodes as PEM"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_certificates_by_content() {
        assert!(looks_like_certificate(b"\n-----BEGIN CERTIFICATE-----\n"));
        assert!(looks_like_certificate(&[0x30, 0x82, 0x01]));
        assert!(!looks_like_certificate(b"{\"type\": \"x\"}"));
        assert!(!looks_like_certificate(b""));
    }
}

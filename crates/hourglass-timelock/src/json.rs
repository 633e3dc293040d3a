//! The common shape of hourglass's JSON files: a `"type"` naming the file, a `"version"`, and
//! big integers as hexadecimal strings.

use hourglass_arith::Integer;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::{Error, Field, FileKind, ParseError, Result};

/// Parses `text` as the JSON of `what`.
pub(crate) fn parse<T: DeserializeOwned>(what: FileKind, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::parse(what, ParseError::Json(e)))
}

/// Why version-1 files are refused (the same change touched every time-certifying file).
const V1_REFUSED: &str = "version 1 mapped documents to small puzzle inputs that can be forged from parallel precomputation, and its key fingerprints did not cover the metadata; ask the issuer for a version-2 set or key, and seal again";

/// Checks the `"type"` and `"version"` fields.
pub(crate) fn check_header(
    what: FileKind,
    kind: &str,
    version: u32,
    expected: &'static str,
    expected_version: u32,
) -> Result<()> {
    if kind != expected {
        return Err(Error::parse(
            what,
            ParseError::Type {
                found: kind.to_string(),
                expected,
            },
        ));
    }
    if version == 1 && expected_version == 2 {
        return Err(Error::OldVersion {
            what,
            found: 1,
            expected: 2,
            why: V1_REFUSED,
        });
    }
    if version != expected_version {
        return Err(Error::parse(
            what,
            ParseError::UnsupportedVersion {
                found: version,
                supported: expected_version,
            },
        ));
    }
    Ok(())
}

#[derive(serde::Deserialize)]
struct Header {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
}

/// The `"type"` field of a file (what it claims to be), before anything else is parsed.
pub(crate) fn file_type(what: FileKind, text: &str) -> Result<String> {
    #[derive(serde::Deserialize)]
    struct Type {
        #[serde(rename = "type")]
        kind: String,
    }
    parse::<Type>(what, text).map(|t| t.kind)
}

/// Parses `text` as the JSON of `what`, checking `"type"` and `"version"` first, so a file of
/// another version is named as such rather than reported as a field mismatch.
pub(crate) fn parse_versioned<T: DeserializeOwned>(
    what: FileKind,
    text: &str,
    expected: &'static str,
    expected_version: u32,
) -> Result<T> {
    let header: Header = parse(what, text)?;
    check_header(
        what,
        &header.kind,
        header.version,
        expected,
        expected_version,
    )?;
    parse(what, text)
}

/// A big integer field, strictly canonical (lowercase, no leading zero): every value has one
/// spelling in hourglass's time-certifying files.
pub(crate) fn hex_integer(what: FileKind, field: Field, s: &str) -> Result<Integer> {
    hourglass_arith::integer_from_canonical_hex(s)
        .ok_or_else(|| Error::parse(what, ParseError::NotCanonicalHex { field }))
}

/// Pretty JSON with a final newline, for files holding secrets: written into one buffer large
/// enough not to reallocate (no stray copies), returned in a wiping wrapper.
pub(crate) fn to_secret_text<T: Serialize>(value: &T) -> zeroize::Zeroizing<String> {
    let mut buf = zeroize::Zeroizing::new(Vec::with_capacity(64 * 1024));
    if serde_json::to_writer_pretty(&mut *buf, value).is_err() {
        buf.clear();
    }
    buf.push(b'\n');
    let text = std::str::from_utf8(&buf).unwrap_or_default().to_string();
    zeroize::Zeroizing::new(text)
}

/// Pretty JSON with a final newline.
pub(crate) fn to_text<T: Serialize>(value: &T) -> String {
    format!(
        "{}\n",
        serde_json::to_string_pretty(value).unwrap_or_default()
    )
}

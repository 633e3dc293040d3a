//! The common shape of hourglass's JSON files: a `"type"` naming the file, a `"version"`, and
//! big integers as hexadecimal strings.

use hourglass_arith::Integer;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::{Error, Result};

/// Parses `text` as the JSON of `what`.
pub(crate) fn parse<T: DeserializeOwned>(what: &'static str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|e| Error::Parse {
        what,
        why: e.to_string(),
    })
}

/// Checks the `"type"` and `"version"` fields.
pub(crate) fn check_header(
    what: &'static str,
    kind: &str,
    version: u32,
    expected: &str,
) -> Result<()> {
    if kind != expected {
        return Err(Error::Parse {
            what,
            why: format!("\"type\" is '{kind}', expected '{expected}'"),
        });
    }
    if version != 1 {
        return Err(Error::Parse {
            what,
            why: format!("unsupported version {version}"),
        });
    }
    Ok(())
}

/// A big integer field.
pub(crate) fn hex_integer(what: &'static str, field: &str, s: &str) -> Result<Integer> {
    hourglass_arith::integer_from_hex(s).ok_or_else(|| Error::Parse {
        what,
        why: format!("field {field}: expected hexadecimal digits"),
    })
}

/// Pretty JSON with a final newline.
pub(crate) fn to_text<T: Serialize>(value: &T) -> String {
    format!(
        "{}\n",
        serde_json::to_string_pretty(value).unwrap_or_default()
    )
}

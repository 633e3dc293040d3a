//! Receipt files and log entries as JSON: the fields, their order, and base64.

use serde::{Deserialize, Serialize};

/// The `type` of every receipt.
pub(crate) const RECEIPT_TYPE: &str = "hourglass-receipt";

/// A receipt file: the signed receipt (what the log holds) and, in version 3, where the log
/// holds it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReceiptJson {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) version: u32,
    pub(crate) statement: String,
    pub(crate) signature: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) log: Option<LogJson>,
}

/// The log evidence of a receipt: its entry's index, the inclusion proof and the checkpoint it
/// leads to.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct LogJson {
    pub(crate) index: u64,
    pub(crate) proof: Vec<String>,
    pub(crate) checkpoint: String,
}

/// The signed receipt alone, as the log holds it: compact JSON of these fields in this order.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct EntryJson {
    #[serde(rename = "type")]
    pub(crate) kind: String,
    pub(crate) version: u32,
    pub(crate) statement: String,
    pub(crate) signature: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) timestamp: Option<String>,
}

impl ReceiptJson {
    /// The entry the log holds for this receipt.
    pub(crate) fn entry(&self) -> Vec<u8> {
        entry_bytes(&EntryJson {
            kind: self.kind.clone(),
            version: self.version,
            statement: self.statement.clone(),
            signature: self.signature.clone(),
            timestamp: self.timestamp.clone(),
        })
    }
}

pub(crate) fn entry_bytes(entry: &EntryJson) -> Vec<u8> {
    serde_json::to_vec(entry).unwrap_or_default()
}

pub(crate) fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

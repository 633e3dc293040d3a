//! What a receipt states: the canonical text the institution signs, one text per statement.

use std::time::SystemTime;

use hourglass_rsa::encoding::{encode_public_key, KeyFormat};
use hourglass_rsa::PublicKey;
use hourglass_timelock::verdict::{rfc3339, Dating};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::ReceiptError;

/// The first line of a version 1 statement.
const STATEMENT_HEADER_V1: &str = "hourglass-receipt v1";
/// The first line of a version 2 statement.
const STATEMENT_HEADER_V2: &str = "hourglass-receipt v2";
/// The first line of a version 3 statement.
const STATEMENT_HEADER_V3: &str = "hourglass-receipt v3";
/// The longest reason a statement carries (longer ones are cut).
const MAX_REASON_CHARS: usize = 500;

/// The verdict a receipt states: `valid` or `invalid`, in its statement and in JSON alike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReceiptVerdict {
    /// The bundle verified for the document.
    Valid,
    /// It did not.
    Invalid,
}

impl ReceiptVerdict {
    /// `valid` or `invalid`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReceiptVerdict::Valid => "valid",
            ReceiptVerdict::Invalid => "invalid",
        }
    }
}

/// What a receipt states, in signing order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Statement {
    /// SHA-256 fingerprint (hex) of the institution's public key (its SPKI DER).
    pub institution: String,
    /// The submission's id at the institution.
    pub submission: String,
    /// The set's name.
    pub set: String,
    /// SHA-256 (hex) of the set file as published.
    pub set_sha256: String,
    /// SHA-256 (hex) of the document.
    pub document_sha256: String,
    /// SHA-256 (hex) of the bundle file.
    pub bundle_sha256: String,
    /// When the institution received the submission (whole seconds since the Unix epoch): in
    /// version 2, the `genTime` of the timestamp token.
    pub received_unix: u64,
    /// SHA-256 (hex) of the timestamp token (DER); `None` in version 1 receipts.
    pub timestamp_sha256: Option<String>,
    /// The origin of the transparency log the receipt is published in (version 3; `None`
    /// before).
    pub log: Option<String>,
    /// The verdict.
    pub verdict: ReceiptVerdict,
    /// Time credited, in milliseconds (0 unless valid).
    pub credited_ms: u64,
    /// Why the bundle is invalid (empty when valid).
    pub reason: String,
}

/// The line a version 2 statement adds after `received`.
const TIMESTAMP_KEY: &str = "timestamp-sha256";
/// The line a version 3 statement adds after `timestamp-sha256`.
const LOG_KEY: &str = "log";

const KEYS: [&str; 11] = [
    "institution",
    "submission",
    "set",
    "set-sha256",
    "document-sha256",
    "bundle-sha256",
    "received",
    "verdict",
    "credited-ms",
    "predated-to",
    "reason",
];

impl Statement {
    /// The statement's verdict placed in time (the one rule every surface dates with).
    pub fn dating(&self, deadline_unix: Option<u64>) -> Dating {
        Dating::of_credit(
            self.verdict == ReceiptVerdict::Valid,
            self.credited_ms,
            self.received_unix,
            deadline_unix,
        )
    }

    /// When the document provably existed: received minus the credited time, not before the
    /// epoch.
    pub fn predated_to(&self) -> SystemTime {
        self.dating(None).predated_to()
    }

    /// When the submission was received.
    pub fn received(&self) -> SystemTime {
        self.dating(None).received()
    }

    /// Whether `document` is the one the statement names (its SHA-256), streaming.
    pub fn document_matches(&self, mut document: impl std::io::Read) -> std::io::Result<bool> {
        let mut h = Sha256::new();
        std::io::copy(&mut document, &mut h)?;
        Ok(hex::encode(h.finalize()) == self.document_sha256)
    }

    /// The statement's version: 3 when it names a log (and a token), 2 when it names a token,
    /// 1 otherwise.
    pub fn version(&self) -> u32 {
        match (&self.timestamp_sha256, &self.log) {
            (Some(_), Some(_)) => 3,
            (Some(_), None) => 2,
            (None, _) => 1,
        }
    }

    /// The canonical text that is signed: version 3 (a `log` line after `timestamp-sha256`)
    /// when the statement names a log, version 2 (with the `timestamp-sha256` line after
    /// `received`) when it names a token, version 1 otherwise. A log without a token is not a
    /// statement (signing refuses it).
    pub fn canonical(&self) -> String {
        let predated = self.predated_to();
        let values: [String; 11] = [
            self.institution.clone(),
            self.submission.clone(),
            one_line(&self.set),
            self.set_sha256.clone(),
            self.document_sha256.clone(),
            self.bundle_sha256.clone(),
            rfc3339(self.received()),
            self.verdict.as_str().into(),
            self.credited_ms.to_string(),
            rfc3339(predated),
            one_line(&self.reason),
        ];
        let mut text = String::from(match self.version() {
            3 => STATEMENT_HEADER_V3,
            2 => STATEMENT_HEADER_V2,
            _ => STATEMENT_HEADER_V1,
        });
        text.push('\n');
        let mut line = |k: &str, v: &str| {
            text.push_str(k);
            text.push_str(": ");
            text.push_str(v);
            text.push('\n');
        };
        for (k, v) in KEYS.iter().zip(values) {
            line(k, &v);
            if *k == "received" {
                if let Some(t) = &self.timestamp_sha256 {
                    line(TIMESTAMP_KEY, t);
                    if let Some(log) = &self.log {
                        line(LOG_KEY, log);
                    }
                }
            }
        }
        text
    }

    /// Parses canonical text of `version`: every line in order, and the text must re-encode to
    /// itself.
    pub(crate) fn parse(text: &str, version: u32) -> Result<Self, ReceiptError> {
        let mut lines = text.split('\n');
        let header = match version {
            1 => STATEMENT_HEADER_V1,
            2 => STATEMENT_HEADER_V2,
            _ => STATEMENT_HEADER_V3,
        };
        if lines.next() != Some(header) {
            return Err(ReceiptError::NotCanonical {
                line: 1,
                expected: header,
            });
        }
        let mut keys: Vec<&'static str> = KEYS.to_vec();
        if version >= 2 {
            keys.insert(7, TIMESTAMP_KEY);
        }
        if version == 3 {
            keys.insert(8, LOG_KEY);
        }
        let mut values = Vec::with_capacity(keys.len());
        for (i, key) in keys.iter().enumerate() {
            let bad = ReceiptError::NotCanonical {
                line: i + 2,
                expected: key,
            };
            let line = lines.next().ok_or(bad)?;
            let value = line
                .strip_prefix(key)
                .and_then(|r| r.strip_prefix(": "))
                .ok_or(ReceiptError::NotCanonical {
                    line: i + 2,
                    expected: key,
                })?;
            values.push(value);
        }
        // Taken out in reverse order, so the common lines keep their places.
        let log = (version == 3).then(|| values.remove(8));
        let timestamp_sha256 = (version >= 2).then(|| values.remove(7));
        if lines.next() != Some("") || lines.next().is_some() {
            return Err(ReceiptError::Malformed {
                why: "the statement has lines after the reason",
            });
        }
        let hex64 = |field: &'static str, v: &str| {
            if v.len() == 64
                && v.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            {
                Ok(v.to_string())
            } else {
                Err(ReceiptError::BadField { field })
            }
        };
        let received = humantime::parse_rfc3339(values[6])
            .map_err(|_| ReceiptError::BadField { field: "received" })?;
        let received_unix = received
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_err(|_| ReceiptError::BadField { field: "received" })?
            .as_secs();
        let verdict = match values[7] {
            "valid" => ReceiptVerdict::Valid,
            "invalid" => ReceiptVerdict::Invalid,
            _ => return Err(ReceiptError::BadField { field: "verdict" }),
        };
        let credited_ms: u64 = values[8].parse().map_err(|_| ReceiptError::BadField {
            field: "credited-ms",
        })?;
        let statement = Statement {
            institution: hex64("institution", values[0])?,
            submission: values[1].to_string(),
            set: values[2].to_string(),
            set_sha256: hex64("set-sha256", values[3])?,
            document_sha256: hex64("document-sha256", values[4])?,
            bundle_sha256: hex64("bundle-sha256", values[5])?,
            received_unix,
            timestamp_sha256: timestamp_sha256
                .map(|t| hex64("timestamp-sha256", t))
                .transpose()?,
            log: log
                .map(|l| {
                    if hourglass_log::keys::valid_key_name(l) {
                        Ok(l.to_string())
                    } else {
                        Err(ReceiptError::BadField { field: "log" })
                    }
                })
                .transpose()?,
            verdict,
            credited_ms,
            reason: values[10].to_string(),
        };
        // One text per statement: anything that would not re-encode byte for byte (a leading
        // zero, another time zone spelling, a predated time that does not follow) is refused.
        if statement.canonical() != text {
            return Err(ReceiptError::Malformed {
                why: "the statement does not re-encode to the signed text",
            });
        }
        Ok(statement)
    }
}

/// Newlines and control characters become spaces; long text is cut.
pub(crate) fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_REASON_CHARS)
        .collect()
}

/// SHA-256 (hex) of a public key's SPKI DER: the fingerprint receipts name.
pub fn institution_fingerprint(key: &PublicKey) -> Result<String, ReceiptError> {
    let der = encode_public_key(key, KeyFormat::Der)?;
    Ok(hex::encode(Sha256::digest(&der)))
}

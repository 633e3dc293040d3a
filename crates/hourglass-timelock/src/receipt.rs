//! Signed receipts: an institution's RSA-PSS signature over a canonical statement of its verdict
//! on a submission (docs/FORMATS.md section 17).
//!
//! A receipt is JSON `{"type": "hourglass-receipt", "version": 2, "statement": TEXT,
//! "signature": BASE64, "timestamp": BASE64}`. `TEXT` is the canonical statement: fixed lines
//! `key: value` in a fixed order, ending in a newline, and the signature is RSASSA-PSS with
//! SHA-256 (MGF1-SHA-256, any salt length) over exactly those bytes. The verifier fixes the
//! algorithm and supplies the institution's public key; it reads every fact from the signed text
//! and nothing from the JSON around it, so nothing outside the signature can change what a
//! receipt says.
//!
//! Version 2 carries the RFC 3161 token (DER) of the institution's TSA over the bundle file:
//! `received` is that token's `genTime`, the statement names the token's SHA-256, and
//! [`check_receipt`] verifies the token (imprint, time, the chain to the institution's key or a
//! TSA CA the verifier names), so `openssl ts -verify` can check the same time on its own.
//! Version 1 (no token) is still read.
//!
//! Version 3 adds the service's transparency log (docs/FORMATS.md section 19): the statement
//! names the log (`log: <origin>`), so the institution's signature commits to the receipt being
//! public, and the file carries the receipt's entry index, its inclusion proof and the log's
//! checkpoint (signed by the log, cosigned by witnesses). The **entry** the log holds is the
//! receipt without its `log` member, as compact JSON ([`SignedReceipt::entry`]); a receipt that
//! claims a log is checked only against a log key the verifier pins ([`LogPins`]).

use std::time::SystemTime;

use hourglass_arith::entropy::EntropySource;
use hourglass_rsa::encoding::{encode_public_key, KeyFormat};
use hourglass_rsa::padding::Pss;
use hourglass_rsa::{HashAlg, PrivateKey, PublicKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use hourglass_log::checkpoint::VerifiedCheckpoint;
use hourglass_log::checkpoint::{hash_from_base64, hash_to_base64, LogPins, SignedCheckpoint};
use hourglass_log::tree::InclusionProof;
use hourglass_log::LogError;

use crate::certificate::{CaCertificate, TsaAnchor};
use crate::timestamp::{verify_token, TimestampError, TokenInfo, VerifiedToken};
use crate::verdict::{rfc3339, unix_secs, Dating};

const RECEIPT_TYPE: &str = "hourglass-receipt";
/// The first line of a version 1 statement.
const STATEMENT_HEADER_V1: &str = "hourglass-receipt v1";
/// The first line of a version 2 statement.
const STATEMENT_HEADER_V2: &str = "hourglass-receipt v2";
/// The first line of a version 3 statement.
const STATEMENT_HEADER_V3: &str = "hourglass-receipt v3";
/// The largest receipt file we parse: the largest entry a log holds (64 KiB), the largest
/// checkpoint (64 KiB), each escaped once more in JSON, and the longest proof.
pub const MAX_RECEIPT_BYTES: usize = 320 * 1024;
/// The longest reason a statement carries (longer ones are cut).
const MAX_REASON_CHARS: usize = 500;

/// Why a receipt was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReceiptError {
    /// The file is not a receipt (not JSON of the receipt's shape, or too large).
    #[error("not a receipt: {why}")]
    Malformed {
        /// What is wrong.
        why: &'static str,
    },
    /// The receipt names a version this build does not read.
    #[error("receipt version {found} is not supported (this build reads versions 1 and 2)")]
    UnsupportedVersion {
        /// The version found.
        found: u32,
    },
    /// The statement is not in canonical form.
    #[error("the receipt's statement is not canonical: line {line} should be `{expected}: ...`")]
    NotCanonical {
        /// The 1-based line that is wrong.
        line: usize,
        /// The key expected there.
        expected: &'static str,
    },
    /// A field of the statement has a value outside its form.
    #[error("the receipt's statement has an invalid {field}")]
    BadField {
        /// The field.
        field: &'static str,
    },
    /// The signature does not verify under the institution's key (forged or altered receipt,
    /// or another institution's).
    #[error("the receipt's signature does not verify under this institution key")]
    BadSignature,
    /// The statement names another institution key than the one given.
    #[error("the receipt was signed for institution key {named}, not the one given ({given})")]
    OtherInstitution {
        /// The fingerprint the statement names.
        named: String,
        /// The fingerprint of the key given.
        given: String,
    },
    /// The receipt's timestamp token is not the one its statement names, does not verify,
    /// does not chain to the institution's key or a given TSA CA, or states another time or
    /// bundle than the statement.
    #[error("the receipt's timestamp: {0}")]
    Timestamp(#[source] TimestampError),
    /// The token verifies but disagrees with the statement.
    #[error("the receipt's timestamp disagrees with its statement: {why}")]
    TimestampMismatch {
        /// What differs.
        why: &'static str,
    },
    /// The receipt claims to be in a transparency log, and no log key was given to check it.
    #[error("the receipt claims to be in the transparency log '{origin}'; it is checked only against that log's key, pinned by the verifier")]
    LogNotPinned {
        /// The log the receipt names.
        origin: String,
    },
    /// A log key was pinned, and the receipt is not in any log (the institution handed out a
    /// receipt that nobody else can see).
    #[error("the receipt is not in a transparency log: nobody but its holder has seen it")]
    NotLogged,
    /// The receipt's log evidence does not check out (its checkpoint's signatures or quorum,
    /// or its inclusion proof), or it names another log than the pinned one.
    #[error("the receipt's log entry: {0}")]
    Log(#[source] LogError),
    /// The log evidence is for another log or entry than the statement says.
    #[error("the receipt's log entry disagrees with its statement: {why}")]
    LogMismatch {
        /// What differs.
        why: &'static str,
    },
    /// Signing failed.
    #[error(transparent)]
    Rsa(#[from] hourglass_rsa::Error),
}

impl ReceiptError {
    /// Whether this is a negative verdict on a readable receipt (forged, altered, another
    /// institution's, a token that does not check out), rather than input that could not be
    /// read at all.
    pub fn is_verdict(&self) -> bool {
        match self {
            ReceiptError::BadSignature
            | ReceiptError::OtherInstitution { .. }
            | ReceiptError::TimestampMismatch { .. }
            | ReceiptError::NotLogged
            | ReceiptError::LogMismatch { .. } => true,
            ReceiptError::Timestamp(e) => e.is_verdict(),
            ReceiptError::Log(e) => e.is_verdict(),
            _ => false,
        }
    }
}

/// The verdict a receipt states.
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
    fn parse(text: &str, version: u32) -> Result<Self, ReceiptError> {
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
fn one_line(s: &str) -> String {
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

/// A receipt file: the signed receipt (what the log holds) and, in version 3, where the log
/// holds it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReceiptJson {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    statement: String,
    signature: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    log: Option<LogJson>,
}

/// The log evidence of a receipt: its entry's index, the inclusion proof and the checkpoint it
/// leads to.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LogJson {
    index: u64,
    proof: Vec<String>,
    checkpoint: String,
}

/// The signed receipt alone, as the log holds it: compact JSON of these fields in this order.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct EntryJson {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    statement: String,
    signature: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timestamp: Option<String>,
}

impl ReceiptJson {
    /// The entry the log holds for this receipt.
    fn entry(&self) -> Vec<u8> {
        entry_bytes(&EntryJson {
            kind: self.kind.clone(),
            version: self.version,
            statement: self.statement.clone(),
            signature: self.signature.clone(),
            timestamp: self.timestamp.clone(),
        })
    }
}

fn entry_bytes(entry: &EntryJson) -> Vec<u8> {
    serde_json::to_vec(entry).unwrap_or_default()
}

/// A signed receipt: the entry its log holds, ready to become a receipt file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedReceipt {
    entry: Vec<u8>,
    version: u32,
}

impl SignedReceipt {
    /// Reads an entry (as the log holds it, or as [`Self::entry`] made it).
    pub fn from_entry(entry: &[u8]) -> Result<Self, ReceiptError> {
        let parsed: EntryJson =
            serde_json::from_slice(entry).map_err(|_| ReceiptError::Malformed {
                why: "a log entry is not a signed receipt",
            })?;
        if entry_bytes(&parsed) != entry {
            return Err(ReceiptError::Malformed {
                why: "a log entry is not in the canonical form of a signed receipt",
            });
        }
        Ok(Self {
            entry: entry.to_vec(),
            version: parsed.version,
        })
    }

    /// The entry the transparency log holds: the receipt without its log evidence, compact
    /// JSON.
    pub fn entry(&self) -> &[u8] {
        &self.entry
    }

    /// The statement's version (3: it names a log).
    pub fn version(&self) -> u32 {
        self.version
    }

    /// The receipt file of a version 1 or 2 receipt (one that names no log).
    pub fn unlogged(&self) -> Result<String, ReceiptError> {
        self.file(None)
    }

    /// The receipt file with its log evidence: entry `index` of the log whose `checkpoint`
    /// `proof` leads to. The proof is checked against the checkpoint's root first: a receipt
    /// whose evidence does not verify is never handed out.
    pub fn logged(
        &self,
        index: u64,
        proof: &InclusionProof,
        checkpoint: &SignedCheckpoint,
    ) -> Result<String, ReceiptError> {
        if proof.index != index || proof.size != checkpoint.size() {
            return Err(ReceiptError::LogMismatch {
                why: "the proof is not of this entry in this checkpoint",
            });
        }
        proof
            .verify(&self.entry, &checkpoint.root())
            .map_err(ReceiptError::Log)?;
        self.file(Some(LogJson {
            index,
            proof: proof.path.iter().map(hash_to_base64).collect(),
            checkpoint: String::from_utf8_lossy(&checkpoint.to_bytes()).into_owned(),
        }))
    }

    fn file(&self, log: Option<LogJson>) -> Result<String, ReceiptError> {
        let e: EntryJson =
            serde_json::from_slice(&self.entry).map_err(|_| ReceiptError::Malformed {
                why: "not a signed receipt",
            })?;
        if (e.version == 3) != log.is_some() {
            return Err(ReceiptError::Malformed {
                why: "a version 3 receipt, and only one, is handed out with its log entry",
            });
        }
        let json = ReceiptJson {
            kind: e.kind,
            version: e.version,
            statement: e.statement,
            signature: e.signature,
            timestamp: e.timestamp,
            log,
        };
        Ok(serde_json::to_string_pretty(&json).unwrap_or_default() + "\n")
    }
}

/// Signs `statement` with the timestamp `token` of the bundle (its `institution`, `received`
/// and `timestamp-sha256` fields are set from `key` and the token): version 3 when the
/// statement names a log, version 2 otherwise. Refuses a token that is not over the
/// statement's bundle with SHA-256.
pub fn sign_receipt(
    statement: &Statement,
    token: &[u8],
    key: &PrivateKey,
    rng: &mut dyn EntropySource,
) -> Result<SignedReceipt, ReceiptError> {
    let info = TokenInfo::of_token(token).map_err(ReceiptError::Timestamp)?;
    let mut statement = statement.clone();
    if info.hash != HashAlg::Sha256 || hex::encode(&info.imprint) != statement.bundle_sha256 {
        return Err(ReceiptError::TimestampMismatch {
            why: "the token is not over the bundle's SHA-256",
        });
    }
    statement.received_unix = unix_secs(info.gen_time);
    statement.timestamp_sha256 = Some(hex::encode(Sha256::digest(token)));
    sign_entry(statement, Some(token), key, rng)
}

/// Signs a version 1 receipt (no token, `received` is the institution's word, no log line):
/// only for submissions stored before the institution stamped them.
pub fn sign_receipt_v1(
    statement: &Statement,
    key: &PrivateKey,
    rng: &mut dyn EntropySource,
) -> Result<SignedReceipt, ReceiptError> {
    let mut statement = statement.clone();
    statement.timestamp_sha256 = None;
    statement.log = None;
    sign_entry(statement, None, key, rng)
}

fn sign_entry(
    mut statement: Statement,
    token: Option<&[u8]>,
    key: &PrivateKey,
    rng: &mut dyn EntropySource,
) -> Result<SignedReceipt, ReceiptError> {
    statement.institution = institution_fingerprint(key.public())?;
    statement.reason = one_line(&statement.reason);
    statement.set = one_line(&statement.set);
    if statement
        .log
        .as_deref()
        .is_some_and(|l| !hourglass_log::keys::valid_key_name(l))
    {
        return Err(ReceiptError::BadField { field: "log" });
    }
    let text = statement.canonical();
    let signature = Pss::new(HashAlg::Sha256).sign(key, text.as_bytes(), rng)?;
    let entry = EntryJson {
        kind: RECEIPT_TYPE.into(),
        version: statement.version(),
        statement: text,
        signature: base64_encode(&signature),
        timestamp: token.map(base64_encode),
    };
    Ok(SignedReceipt {
        version: entry.version,
        entry: entry_bytes(&entry),
    })
}

/// A receipt's place in a transparency log, verified.
#[derive(Debug, Clone)]
pub struct LoggedReceipt {
    /// The entry's index in the log.
    pub index: u64,
    /// The checkpoint its inclusion proof leads to, verified under the pinned keys.
    pub checkpoint: VerifiedCheckpoint,
    /// Whom the log evidence is trusted on (the pinned log key, and the witnesses).
    pub trust: String,
}

/// A checked receipt: what it states and, in version 2 and 3, its verified timestamp token;
/// in version 3, its verified place in the log.
#[derive(Debug, Clone)]
pub struct CheckedReceipt {
    /// The statement.
    pub statement: Statement,
    /// The token (DER) and what it states, verified (version 2).
    pub timestamp: Option<(Vec<u8>, VerifiedToken)>,
    /// Its entry in the log, verified (when the receipt carries log evidence).
    pub log: Option<LoggedReceipt>,
}

impl CheckedReceipt {
    /// What every surface reports of a checked receipt (the command line's `--json`), with
    /// whether it is for the document given (`None`: none given).
    pub fn summary(&self, document_matches: Option<bool>) -> serde_json::Value {
        let dating = self.statement.dating(None);
        serde_json::json!({
            "authentic": true,
            "statement": self.statement,
            "received": rfc3339(dating.received()),
            "predated_to": rfc3339(dating.predated_to()),
            "document_matches": document_matches,
            "timestamp": self.timestamp.as_ref().map(|(_, t)| serde_json::json!({
                "tsa": t.tsa,
                "anchor": t.anchor,
                "gen_time": rfc3339(t.info.gen_time),
                "serial": t.info.serial_hex,
                "policy": t.info.policy,
            })),
            "log": self.log.as_ref().map(|l| serde_json::json!({
                "origin": l.checkpoint.origin,
                "index": l.index,
                "checkpoint": l.checkpoint.summary(),
                "trust": l.trust,
            })),
        })
    }
}

/// Checks a receipt against the institution's public key and returns what it states. A version
/// 2 or 3 receipt's token must be the one the statement names, chain to the institution's key
/// (the service's TSA CA is made with it) or to one of `tsa_cas`, cover the statement's bundle
/// hash, and state the statement's `received` as its `genTime`.
///
/// `log` pins a transparency log (its key, and witnesses with a quorum). A receipt that carries
/// log evidence is checked only against pins ([`ReceiptError::LogNotPinned`] without them): its
/// checkpoint must verify under them, name the log the statement names, and the inclusion
/// proof must lead from the receipt's entry to the checkpoint's root. With pins, a receipt that
/// carries no log evidence is refused ([`ReceiptError::NotLogged`]).
pub fn check_receipt(
    receipt: &[u8],
    institution: &PublicKey,
    tsa_cas: &[CaCertificate],
    log: Option<&LogPins>,
) -> Result<CheckedReceipt, ReceiptError> {
    if receipt.len() > MAX_RECEIPT_BYTES {
        return Err(ReceiptError::Malformed {
            why: "larger than any receipt",
        });
    }
    let json: ReceiptJson =
        serde_json::from_slice(receipt).map_err(|_| ReceiptError::Malformed {
            why: "not JSON with exactly the fields type, version, statement, signature (and timestamp, log)",
        })?;
    let (statement, timestamp) = check_signed(&json, institution, tsa_cas)?;
    if (json.version == 3) != json.log.is_some() {
        return Err(ReceiptError::Malformed {
            why: "a version 3 receipt, and only one, carries its log entry",
        });
    }
    let logged = match (&json.log, log) {
        (Some(evidence), None) => {
            let origin = statement.log.clone().unwrap_or_else(|| {
                SignedCheckpoint::parse(evidence.checkpoint.as_bytes())
                    .map(|c| c.origin().to_string())
                    .unwrap_or_default()
            });
            return Err(ReceiptError::LogNotPinned { origin });
        }
        (None, Some(_)) => return Err(ReceiptError::NotLogged),
        (None, None) => None,
        (Some(evidence), Some(pins)) => Some(check_log(&json, evidence, &statement, pins)?),
    };
    Ok(CheckedReceipt {
        statement,
        timestamp,
        log: logged,
    })
}

/// The receipt's signature, statement, institution and token.
#[allow(clippy::type_complexity)]
fn check_signed(
    json: &ReceiptJson,
    institution: &PublicKey,
    tsa_cas: &[CaCertificate],
) -> Result<(Statement, Option<(Vec<u8>, VerifiedToken)>), ReceiptError> {
    if json.kind != RECEIPT_TYPE {
        return Err(ReceiptError::Malformed {
            why: "its type is not hourglass-receipt",
        });
    }
    if !(1..=3).contains(&json.version) {
        return Err(ReceiptError::UnsupportedVersion {
            found: json.version,
        });
    }
    if (json.version >= 2) != json.timestamp.is_some() {
        return Err(ReceiptError::Malformed {
            why: "a receipt of version 2 or 3, and only one, carries a timestamp",
        });
    }
    let signature = base64_decode(&json.signature).ok_or(ReceiptError::Malformed {
        why: "the signature is not base64",
    })?;
    // The verifier's algorithm, over the exact signed bytes, before anything is believed.
    Pss::new(HashAlg::Sha256)
        .verify(institution, json.statement.as_bytes(), &signature)
        .map_err(|_| ReceiptError::BadSignature)?;
    let statement = Statement::parse(&json.statement, json.version)?;
    let given = institution_fingerprint(institution)?;
    if statement.institution != given {
        return Err(ReceiptError::OtherInstitution {
            named: statement.institution,
            given,
        });
    }
    let timestamp = match (&json.timestamp, &statement.timestamp_sha256) {
        (Some(b64), Some(named)) => {
            let token = base64_decode(b64).ok_or(ReceiptError::Malformed {
                why: "the timestamp is not base64",
            })?;
            if hex::encode(Sha256::digest(&token)) != *named {
                return Err(ReceiptError::TimestampMismatch {
                    why: "the token is not the one the statement names",
                });
            }
            let mut anchors = vec![TsaAnchor::Key {
                key: institution.clone(),
                name: format!("institution key {}", &given[..16]),
            }];
            anchors.extend(tsa_cas.iter().cloned().map(TsaAnchor::from));
            let verified = verify_token(&token, &[], &anchors).map_err(ReceiptError::Timestamp)?;
            if verified.info.hash != HashAlg::Sha256
                || hex::encode(&verified.info.imprint) != statement.bundle_sha256
            {
                return Err(ReceiptError::TimestampMismatch {
                    why: "the token covers another bundle than the statement's",
                });
            }
            if unix_secs(verified.info.gen_time) != statement.received_unix {
                return Err(ReceiptError::TimestampMismatch {
                    why: "the token's genTime is not the statement's received time",
                });
            }
            Some((token, verified))
        }
        _ => None,
    };
    Ok((statement, timestamp))
}

/// The receipt's log evidence under the pinned keys.
fn check_log(
    json: &ReceiptJson,
    evidence: &LogJson,
    statement: &Statement,
    pins: &LogPins,
) -> Result<LoggedReceipt, ReceiptError> {
    let checkpoint = SignedCheckpoint::parse(evidence.checkpoint.as_bytes())
        .map_err(ReceiptError::Log)?
        .verify(pins)
        .map_err(ReceiptError::Log)?;
    if let Some(named) = &statement.log {
        if *named != checkpoint.origin {
            return Err(ReceiptError::LogMismatch {
                why: "the statement names another log than the checkpoint's",
            });
        }
    }
    let path = evidence
        .proof
        .iter()
        .map(|h| hash_from_base64(h, "inclusion proof"))
        .collect::<Result<Vec<_>, _>>()
        .map_err(ReceiptError::Log)?;
    let proof = InclusionProof {
        index: evidence.index,
        size: checkpoint.size,
        path,
    };
    proof
        .verify(&json.entry(), &checkpoint.root)
        .map_err(ReceiptError::Log)?;
    Ok(LoggedReceipt {
        index: evidence.index,
        checkpoint,
        trust: pins.trust(),
    })
}

/// An entry of the log read back as a receipt: its statement, and whether its signature is the
/// institution's (when the institution's key was given).
#[derive(Debug, Clone)]
pub struct ReceiptEntry {
    /// What the receipt states.
    pub statement: Statement,
    /// `Some(true)`: signed by the institution key given; `Some(false)`: not; `None`: no key
    /// given, not checked.
    pub signed: Option<bool>,
}

impl ReceiptEntry {
    /// Reads a log entry as a signed receipt; with `institution`, checks its signature.
    pub fn read(entry: &[u8], institution: Option<&PublicKey>) -> Result<Self, ReceiptError> {
        let signed = SignedReceipt::from_entry(entry)?;
        let e: EntryJson =
            serde_json::from_slice(signed.entry()).map_err(|_| ReceiptError::Malformed {
                why: "a log entry is not a signed receipt",
            })?;
        if e.kind != RECEIPT_TYPE || !(1..=3).contains(&e.version) {
            return Err(ReceiptError::Malformed {
                why: "a log entry is not an hourglass receipt",
            });
        }
        let statement = Statement::parse(&e.statement, e.version)?;
        let signed = institution.map(|key| {
            base64_decode(&e.signature).is_some_and(|sig| {
                Pss::new(HashAlg::Sha256)
                    .verify(key, e.statement.as_bytes(), &sig)
                    .is_ok()
                    && institution_fingerprint(key).is_ok_and(|f| f == statement.institution)
            })
        });
        Ok(Self { statement, signed })
    }
}

/// What an auditor is told of one entry of a log: the receipt's facts, or why it is not one.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum EntrySummary {
    /// A receipt.
    Receipt {
        /// The entry's index.
        index: u64,
        /// The submission's id.
        submission: String,
        /// The set's name.
        set: String,
        /// `valid` or `invalid`.
        verdict: ReceiptVerdict,
        /// The document's SHA-256.
        document_sha256: String,
        /// When the institution received it (RFC 3339).
        received: String,
        /// When the document provably existed (RFC 3339).
        predated_to: String,
        /// Time credited, in milliseconds.
        credited_ms: u64,
        /// The institution key's fingerprint the statement names.
        institution: String,
        /// Whether the institution key given signed it (`None`: no key given).
        signed_by_institution: Option<bool>,
    },
    /// Not an hourglass receipt.
    Unknown {
        /// The entry's index.
        index: u64,
        /// Why it does not read as a receipt.
        problem: String,
        /// Its length.
        bytes: usize,
    },
}

impl EntrySummary {
    /// Entry `index` of a log read as a receipt (with `institution`, its signature checked).
    pub fn of(index: u64, entry: &[u8], institution: Option<&PublicKey>) -> Self {
        match ReceiptEntry::read(entry, institution) {
            Ok(r) => {
                let s = r.statement;
                let dating = s.dating(None);
                EntrySummary::Receipt {
                    index,
                    received: rfc3339(dating.received()),
                    predated_to: rfc3339(dating.predated_to()),
                    submission: s.submission,
                    set: s.set,
                    verdict: s.verdict,
                    document_sha256: s.document_sha256,
                    credited_ms: s.credited_ms,
                    institution: s.institution,
                    signed_by_institution: r.signed,
                }
            }
            Err(e) => EntrySummary::Unknown {
                index,
                problem: e.to_string(),
                bytes: entry.len(),
            },
        }
    }

    /// Whether it is a receipt that the institution key given did not sign, or no receipt.
    pub fn unsigned(&self) -> bool {
        !matches!(
            self,
            EntrySummary::Receipt {
                signed_by_institution: Some(true) | None,
                ..
            }
        )
    }
}

/// Which receipts of a log an auditor asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryFilter {
    /// Receipts for the document with this SHA-256 (lowercase hex).
    Document(String),
    /// Receipts for submissions to the set of this name.
    Set(String),
}

impl EntryFilter {
    /// Whether `statement` is one of the receipts asked for.
    pub fn matches(&self, statement: &Statement) -> bool {
        match self {
            EntryFilter::Document(sha256) => statement.document_sha256 == *sha256,
            EntryFilter::Set(name) => statement.set == one_line(name),
        }
    }

    /// Receipts for `document` (its SHA-256, streaming).
    pub fn document(mut document: impl std::io::Read) -> std::io::Result<Self> {
        let mut h = Sha256::new();
        std::io::copy(&mut document, &mut h)?;
        Ok(EntryFilter::Document(hex::encode(h.finalize())))
    }
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::certificate::{CertificateOptions, TsaCertificate};
    use crate::timestamp::{PolicyId, Query, Tsa};
    use hourglass_arith::entropy::SeededEntropy;
    use hourglass_log::keys::{KeyRole, SigningKey as LogSigningKey};
    use hourglass_log::tree::{append, leaf_hash, prove_inclusion, root, HashMemo};
    use hourglass_rsa::{KeyGenOptions, Variant};

    /// A token of a TSA whose CA is made with `institution`, over `bundle_sha256` at `at`.
    fn token(institution: &PrivateKey, bundle_sha256: &str, at: u64) -> Vec<u8> {
        let mut rng = SeededEntropy::new(&[7; 32]);
        let ca = CaCertificate::self_signed(
            institution,
            &CertificateOptions::days("Receipt test TSA CA", 3650),
            &mut rng,
        )
        .unwrap();
        let tsa_key = KeyGenOptions::new(1024, Variant::Crt)
            .generate(&mut rng)
            .unwrap();
        let cert = TsaCertificate::issue(
            tsa_key.public(),
            &ca,
            institution,
            &CertificateOptions::days("Receipt test TSA", 3650),
            &mut rng,
        )
        .unwrap();
        let tsa = Tsa::new(tsa_key, cert, vec![ca], PolicyId::hourglass()).unwrap();
        let query = Query::for_digest(
            HashAlg::Sha256,
            &hex::decode(bundle_sha256).unwrap(),
            None,
            None,
        )
        .unwrap();
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(at);
        tsa.stamp(&query, &[1], at, &mut rng).unwrap()
    }

    fn signed(s: &Statement, k: &PrivateKey) -> SignedReceipt {
        let mut rng = SeededEntropy::new(&[9; 32]);
        sign_receipt(s, &token(k, &s.bundle_sha256, s.received_unix), k, &mut rng).unwrap()
    }

    fn sign(s: &Statement, k: &PrivateKey) -> String {
        signed(s, k).unlogged().unwrap()
    }

    fn check(r: &str, k: &PublicKey) -> Result<Statement, ReceiptError> {
        check_receipt(r.as_bytes(), k, &[], None).map(|c| c.statement)
    }

    fn key(seed: u8) -> PrivateKey {
        let mut rng = SeededEntropy::new(&[seed; 32]);
        KeyGenOptions::new(2048, Variant::Crt)
            .generate(&mut rng)
            .unwrap()
    }

    fn statement() -> Statement {
        Statement {
            institution: String::new(),
            submission: "0123abcd".into(),
            set: "Conf 2027".into(),
            set_sha256: "11".repeat(32),
            document_sha256: "22".repeat(32),
            bundle_sha256: "33".repeat(32),
            received_unix: 1_800_000_000,
            timestamp_sha256: None,
            log: None,
            verdict: ReceiptVerdict::Valid,
            credited_ms: 14_400_000,
            reason: String::new(),
        }
    }

    #[test]
    fn a_signed_receipt_checks_and_states_what_was_signed() {
        let k = key(1);
        let r = sign(&statement(), &k);
        let s = check(&r, k.public()).unwrap();
        assert_eq!(s.submission, "0123abcd");
        assert_eq!(s.verdict, ReceiptVerdict::Valid);
        assert_eq!(s.credited_ms, 14_400_000);
        assert_eq!(rfc3339(s.predated_to()), "2027-01-15T04:00:00Z");
    }

    #[test]
    fn another_institution_key_or_any_edit_is_refused() {
        let k = key(1);
        let r = sign(&statement(), &k);
        assert!(matches!(
            check(&r, key(2).public()),
            Err(ReceiptError::BadSignature)
        ));
        let edited = r.replace("verdict: valid", "verdict: invalid");
        assert_ne!(edited, r);
        assert!(matches!(
            check(&edited, k.public()),
            Err(ReceiptError::BadSignature)
        ));
        let edited = r.replace("credited-ms: 14400000", "credited-ms: 94400000");
        assert!(check(&edited, k.public()).is_err());
    }

    #[test]
    fn a_signed_but_non_canonical_statement_is_refused() {
        // Even a statement the institution's key signed is refused unless canonical, so one
        // verdict has one text.
        let k = key(1);
        let mut rng = SeededEntropy::new(&[9; 32]);
        let mut s = statement();
        s.institution = institution_fingerprint(k.public()).unwrap();
        let text = s
            .canonical()
            .replace("credited-ms: 14400000", "credited-ms: 014400000");
        assert!(text.starts_with("hourglass-receipt v1\n"));
        let sig = Pss::new(HashAlg::Sha256)
            .sign(&k, text.as_bytes(), &mut rng)
            .unwrap();
        let json = serde_json::json!({
            "type": RECEIPT_TYPE, "version": 1, "statement": text, "signature": base64_encode(&sig),
        })
        .to_string();
        assert!(matches!(
            check(&json, k.public()),
            Err(ReceiptError::Malformed { .. })
        ));
    }

    #[test]
    fn reasons_stay_on_one_line() {
        let k = key(1);
        let mut s = statement();
        s.verdict = ReceiptVerdict::Invalid;
        s.credited_ms = 0;
        s.reason = "link 2\nverdict: valid".into();
        let r = sign(&s, &k);
        let back = check(&r, k.public()).unwrap();
        assert_eq!(back.verdict, ReceiptVerdict::Invalid);
        assert_eq!(back.reason, "link 2 verdict: valid");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let k = key(1);
        for input in [
            &b""[..],
            b"{}",
            b"[1]",
            &[0xff; 10],
            b"{\"type\":\"hourglass-receipt\",\"version\":2,\"statement\":\"\",\"signature\":\"\"}",
            b"{\"type\":\"hourglass-receipt\",\"version\":3,\"statement\":\"\",\"signature\":\"\"}",
        ] {
            assert!(check_receipt(input, k.public(), &[], None).is_err());
        }
    }

    #[test]
    fn a_version_2_receipt_carries_the_token_of_its_received_time() {
        let k = key(1);
        let r = sign(&statement(), &k);
        let checked = check_receipt(r.as_bytes(), k.public(), &[], None).unwrap();
        let (token, verified) = checked.timestamp.unwrap();
        assert_eq!(unix_secs(verified.info.gen_time), 1_800_000_000);
        assert_eq!(
            checked.statement.timestamp_sha256.unwrap(),
            hex::encode(Sha256::digest(&token))
        );
        assert!(r.contains("hourglass-receipt v2"));
    }

    #[test]
    fn a_token_that_disagrees_with_the_statement_is_refused_when_signing() {
        let k = key(1);
        let mut rng = SeededEntropy::new(&[9; 32]);
        let s = statement();
        // A token over another bundle.
        let other = token(&k, &"44".repeat(32), s.received_unix);
        assert!(matches!(
            sign_receipt(&s, &other, &k, &mut rng),
            Err(ReceiptError::TimestampMismatch { .. })
        ));
    }

    #[test]
    fn a_swapped_or_foreign_token_makes_the_receipt_invalid() {
        let k = key(1);
        let r = sign(&statement(), &k);
        let json: serde_json::Value = serde_json::from_str(&r).unwrap();
        // Another token of the same TSA, for the same bundle an hour earlier: not the one the
        // signed statement names.
        let earlier = token(&k, &statement().bundle_sha256, 1_800_000_000 - 3600);
        let mut swapped = json.clone();
        swapped["timestamp"] = base64_encode(&earlier).into();
        let err = check_receipt(swapped.to_string().as_bytes(), k.public(), &[], None).unwrap_err();
        assert!(
            matches!(err, ReceiptError::TimestampMismatch { .. }),
            "{err}"
        );
        assert!(err.is_verdict());
        // A receipt whose token's TSA CA was made with another key than the institution's:
        // signed by the institution, but its clock is not anchored to it.
        let other = key(2);
        let foreign = token(&other, &statement().bundle_sha256, 1_800_000_000);
        let mut s = statement();
        s.institution = institution_fingerprint(k.public()).unwrap();
        s.timestamp_sha256 = Some(hex::encode(Sha256::digest(&foreign)));
        let text = s.canonical();
        let mut rng = SeededEntropy::new(&[9; 32]);
        let sig = Pss::new(HashAlg::Sha256)
            .sign(&k, text.as_bytes(), &mut rng)
            .unwrap();
        let forged = serde_json::json!({
            "type": RECEIPT_TYPE, "version": 2, "statement": text,
            "signature": base64_encode(&sig), "timestamp": base64_encode(&foreign),
        })
        .to_string();
        let err = check_receipt(forged.as_bytes(), k.public(), &[], None).unwrap_err();
        assert!(matches!(err, ReceiptError::Timestamp(_)), "{err}");
        assert!(err.is_verdict());
    }

    /// A log of `entries`, its checkpoint signed by `log` and the receipt files of each entry.
    fn log_of(entries: &[SignedReceipt], log: &LogSigningKey) -> Vec<String> {
        let mut memo = HashMemo::new();
        let leaves: Vec<_> = entries.iter().map(|e| leaf_hash(e.entry())).collect();
        append(&mut memo, 0, &leaves).unwrap();
        let n = entries.len() as u64;
        let cp = SignedCheckpoint::sign(log.name(), n, root(&memo, n).unwrap(), log).unwrap();
        entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let proof = prove_inclusion(&memo, n, i as u64).unwrap();
                e.logged(i as u64, &proof, &cp).unwrap()
            })
            .collect()
    }

    fn log_key(name: &str) -> LogSigningKey {
        LogSigningKey::generate(name, KeyRole::Log, &mut SeededEntropy::new(name.as_bytes()))
            .unwrap()
    }

    fn logged_statement(n: u8) -> Statement {
        let mut s = statement();
        s.submission = format!("sub{n}");
        s.log = Some("log.example/receipts".into());
        s
    }

    #[test]
    fn a_version_3_receipt_is_checked_in_its_log() {
        let k = key(1);
        let log = log_key("log.example/receipts");
        let entries: Vec<_> = (0..3).map(|n| signed(&logged_statement(n), &k)).collect();
        assert_eq!(entries[0].version(), 3);
        let files = log_of(&entries, &log);
        let pins = LogPins::log_only(log.verifier()).unwrap();
        let checked = check_receipt(files[1].as_bytes(), k.public(), &[], Some(&pins)).unwrap();
        assert_eq!(checked.statement.submission, "sub1");
        assert_eq!(
            checked.statement.log.as_deref(),
            Some("log.example/receipts")
        );
        let logged = checked.log.unwrap();
        assert_eq!((logged.index, logged.checkpoint.size), (1, 3));
        // Without the log's key, the receipt is not believed.
        let err = check_receipt(files[1].as_bytes(), k.public(), &[], None).unwrap_err();
        assert!(matches!(err, ReceiptError::LogNotPinned { .. }), "{err}");
        assert!(!err.is_verdict());
        // Another log's key: a negative verdict.
        let other = LogPins::log_only(log_key("other.example/log").verifier()).unwrap();
        let err = check_receipt(files[1].as_bytes(), k.public(), &[], Some(&other)).unwrap_err();
        assert!(err.is_verdict(), "{err}");
        // The entry read back from the log.
        let read = ReceiptEntry::read(entries[2].entry(), Some(k.public())).unwrap();
        assert_eq!(read.signed, Some(true));
        assert_eq!(
            ReceiptEntry::read(entries[2].entry(), Some(key(2).public()))
                .unwrap()
                .signed,
            Some(false)
        );
        assert!(EntryFilter::Set("Conf 2027".into()).matches(&read.statement));
        assert!(
            EntryFilter::document(&b"x"[..]).unwrap()
                != EntryFilter::Document(read.statement.document_sha256.clone())
        );
    }

    #[test]
    fn log_evidence_that_does_not_verify_is_a_negative_verdict() {
        let k = key(1);
        let log = log_key("log.example/receipts");
        let pins = LogPins::log_only(log.verifier()).unwrap();
        let entries: Vec<_> = (0..4).map(|n| signed(&logged_statement(n), &k)).collect();
        let files = log_of(&entries, &log);
        let json: serde_json::Value = serde_json::from_str(&files[2]).unwrap();
        // Another entry's index or proof, or a shorter proof.
        for edit in [
            |j: &mut serde_json::Value| j["log"]["index"] = 3.into(),
            |j: &mut serde_json::Value| {
                j["log"]["proof"][0] = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=".into()
            },
            |j: &mut serde_json::Value| {
                j["log"]["proof"].as_array_mut().unwrap().pop();
            },
        ] {
            let mut j = json.clone();
            edit(&mut j);
            let err =
                check_receipt(j.to_string().as_bytes(), k.public(), &[], Some(&pins)).unwrap_err();
            assert!(err.is_verdict(), "{err}");
        }
        // A receipt signed for one log, shown with another log's (valid) evidence.
        let other = log_key("other.example/log");
        let mut s = logged_statement(9);
        s.log = Some("log.example/receipts".into());
        let theirs = log_of(&[signed(&s, &k)], &other);
        let pins_other = LogPins::log_only(other.verifier()).unwrap();
        let err =
            check_receipt(theirs[0].as_bytes(), k.public(), &[], Some(&pins_other)).unwrap_err();
        assert!(matches!(err, ReceiptError::LogMismatch { .. }), "{err}");
        // The log evidence stripped from a version 3 receipt.
        let mut stripped = json.clone();
        stripped.as_object_mut().unwrap().remove("log");
        assert!(check_receipt(
            stripped.to_string().as_bytes(),
            k.public(),
            &[],
            Some(&pins)
        )
        .is_err());
        // A version 2 receipt (no log at all) when a log is pinned.
        let v2 = sign(&statement(), &k);
        let err = check_receipt(v2.as_bytes(), k.public(), &[], Some(&pins)).unwrap_err();
        assert!(matches!(err, ReceiptError::NotLogged), "{err}");
        assert!(err.is_verdict());
        // A version 3 receipt cannot be handed out without its evidence.
        assert!(entries[0].unlogged().is_err());
    }
}

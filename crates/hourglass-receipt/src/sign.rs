//! Signing receipts: the statement's canonical text under the institution's key, with the
//! bundle's token, and the log evidence added once the log holds the entry.

use hourglass_arith::entropy::EntropySource;
use hourglass_log::checkpoint::{hash_to_base64, SignedCheckpoint};
use hourglass_log::tree::InclusionProof;
use hourglass_rsa::padding::Pss;
use hourglass_rsa::{HashAlg, PrivateKey};
use hourglass_timestamp::TokenInfo;
use sha2::{Digest, Sha256};

use crate::error::ReceiptError;
use crate::json::{base64_encode, entry_bytes, EntryJson, LogJson, ReceiptJson, RECEIPT_TYPE};
use crate::statement::{institution_fingerprint, one_line, Statement};

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
    if info.hash() != HashAlg::Sha256 || hex::encode(info.imprint()) != statement.bundle_sha256 {
        return Err(ReceiptError::TimestampMismatch {
            why: "the token is not over the bundle's SHA-256",
        });
    }
    // Received: the latest time the token proves (genTime + accuracy), never earlier.
    statement.received_unix = info.latest_unix();
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

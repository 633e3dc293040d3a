//! Log entries read back as receipts, as an auditor sees them.

use hourglass_rsa::padding::Pss;
use hourglass_rsa::{HashAlg, PublicKey};
use hourglass_timelock::verdict::rfc3339;
use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::error::ReceiptError;
use crate::json::{base64_decode, EntryJson, RECEIPT_TYPE};
use crate::sign::SignedReceipt;
use crate::statement::{institution_fingerprint, one_line, ReceiptVerdict, Statement};

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

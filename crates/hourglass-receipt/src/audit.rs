//! Auditing a log of receipts, decided here once for every surface: the log verifies under the
//! auditor's pins and extends what the auditor saw last, and, when the auditor gives the
//! institution's key, every new entry is a receipt that key signed. Only then does the saved
//! state advance.

use hourglass_log::checkpoint::{hash_to_base64, LogPins, VerifiedCheckpoint};
use hourglass_log::client::{verify_log, TileSource};
use hourglass_log::witness::KnownCheckpoint;
use hourglass_log::LogError;
use hourglass_rsa::PublicKey;
use serde::Serialize;

use crate::entry::{EntryFilter, EntrySummary, ReceiptEntry};

/// The verdict of an audit of a log of receipts: what `log verify --json` prints and Python's
/// `log.verify` returns. Its fields are private: only this crate decides them.
///
/// JSON: `{"valid", "checkpoint", "previous", "new_entries", "trust"}` with `"reason"` when
/// entries are not the institution's receipts; a log that does not verify, forks or rewrote
/// what the auditor saw is `{"valid": false, "reason"}`.
#[derive(Debug, Serialize)]
pub struct LogAudit {
    valid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    details: Option<AuditDetails>,
    #[serde(skip)]
    outcome: Result<VerifiedCheckpoint, LogError>,
}

/// What an audit of a log that verifies reports.
#[derive(Debug, Serialize)]
struct AuditDetails {
    checkpoint: serde_json::Value,
    previous: Option<Previous>,
    new_entries: Vec<EntrySummary>,
    trust: String,
}

/// The checkpoint the auditor saw last.
#[derive(Debug, Serialize)]
struct Previous {
    size: u64,
    root: String,
}

/// Audits the log behind `source` under `pins` from `previous` (what the last audit saw; `None`:
/// the whole log), reading each new entry as a receipt and, with `institution`, checking that
/// it signed each. A log that does not verify is an audit that says why (a negative verdict);
/// an error (the log could not be read, the settings do not fit it) stays an error.
pub fn audit_log(
    source: &dyn TileSource,
    pins: &LogPins,
    previous: Option<&KnownCheckpoint>,
    institution: Option<&PublicKey>,
) -> Result<LogAudit, LogError> {
    let mut entries = Vec::new();
    let verified = verify_log(source, pins, previous, &mut |index, entry| {
        entries.push(EntrySummary::of(index, entry, institution));
        Ok(())
    });
    let checkpoint = match verified {
        Ok(v) => v.checkpoint,
        Err(e) if e.is_verdict() => {
            return Ok(LogAudit {
                valid: false,
                reason: Some(e.to_string()),
                details: None,
                outcome: Err(e),
            })
        }
        Err(e) => return Err(e),
    };
    let unsigned = entries.iter().filter(|e| e.unsigned()).count();
    let reason = (institution.is_some() && unsigned > 0).then(|| {
        format!("{unsigned} new entries of the log are not receipts signed by the institution key given")
    });
    Ok(LogAudit {
        valid: reason.is_none(),
        reason,
        details: Some(AuditDetails {
            checkpoint: checkpoint.summary(),
            previous: previous.map(|p| Previous {
                size: p.size,
                root: hash_to_base64(&p.root),
            }),
            new_entries: entries,
            trust: pins.trust(),
        }),
        outcome: Ok(checkpoint),
    })
}

impl LogAudit {
    /// Whether the log passed: it verifies, extends what the auditor saw, and (with the
    /// institution's key) holds only receipts the institution signed.
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Why it did not pass (`None` when it did).
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The entries read since the last audit (empty for a log that does not verify).
    pub fn new_entries(&self) -> &[EntrySummary] {
        self.details.as_ref().map_or(&[], |d| &d.new_entries)
    }

    /// The state to save for the next audit: the verified checkpoint, only when the audit
    /// passed (a log that fails leaves the state as it was).
    pub fn state_to_save(&self) -> Option<KnownCheckpoint> {
        match (&self.outcome, self.valid) {
            (Ok(c), true) => Some(KnownCheckpoint::of(c)),
            _ => None,
        }
    }

    /// The log's checkpoint verified under the pins, even when its entries did not pass, or
    /// why the log does not verify: the error [`verify_log`] gave.
    pub fn into_checkpoint(self) -> Result<VerifiedCheckpoint, LogError> {
        self.outcome
    }
}

/// What a search of a log of receipts found: `log search --json`'s document and Python's
/// `log.search`.
#[derive(Debug, Serialize)]
pub struct LogSearch {
    checkpoint: serde_json::Value,
    entries_read: u64,
    found: Vec<EntrySummary>,
    trust: String,
    #[serde(skip)]
    verified: VerifiedCheckpoint,
}

/// The receipts of the log behind `source` that `filter` asks for, the whole log verified
/// under `pins` first (with `institution`, each found receipt's signature checked). A log that
/// does not verify is an error here: a search reports nothing from a log it cannot trust.
pub fn search_log(
    source: &dyn TileSource,
    pins: &LogPins,
    filter: &EntryFilter,
    institution: Option<&PublicKey>,
) -> Result<LogSearch, LogError> {
    let mut found = Vec::new();
    let verified = verify_log(source, pins, None, &mut |index, entry| {
        if ReceiptEntry::read(entry, None).is_ok_and(|r| filter.matches(&r.statement)) {
            found.push(EntrySummary::of(index, entry, institution));
        }
        Ok(())
    })?;
    Ok(LogSearch {
        checkpoint: verified.checkpoint.summary(),
        entries_read: verified.entries_read,
        found,
        trust: pins.trust(),
        verified: verified.checkpoint,
    })
}

impl LogSearch {
    /// The receipts found.
    pub fn found(&self) -> &[EntrySummary] {
        &self.found
    }

    /// How many entries were read.
    pub fn entries_read(&self) -> u64 {
        self.entries_read
    }

    /// The log's checkpoint, verified under the pins.
    pub fn checkpoint(&self) -> &VerifiedCheckpoint {
        &self.verified
    }
}

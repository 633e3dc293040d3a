//! The verdict on a receipt, decided here once for every surface: a receipt is valid when it
//! is authentic (the institution's signature, its token, its log evidence under the verifier's
//! pins), the submission it states is valid, and, when the verifier gives the document, it is
//! the receipt's document.

use serde::Serialize;

use crate::check::CheckedReceipt;
use crate::error::ReceiptError;
use crate::statement::ReceiptVerdict;

/// Why a receipt is not valid.
const OTHER_DOCUMENT: &str = "the receipt is authentic but for another document";

/// The verdict on a receipt: what `check-receipt --json` prints and Python's
/// `submit.check_receipt` returns. Its fields are private: only this crate decides them.
///
/// JSON: `{"valid": true, "authentic": true, "statement", "received", "predated_to",
/// "document_matches", "timestamp", "log"}`; a receipt that is authentic but not valid adds
/// `"reason"`; one that is not authentic is `{"valid": false, "authentic": false, "reason"}`.
#[derive(Debug, Serialize)]
pub struct ReceiptReport {
    valid: bool,
    authentic: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    details: Option<Details>,
    #[serde(skip)]
    checked: Result<CheckedReceipt, ReceiptError>,
}

/// What an authentic receipt states and proves, as every surface reports it.
#[derive(Debug, Clone, Serialize)]
struct Details {
    statement: crate::statement::Statement,
    received: String,
    predated_to: String,
    document_matches: Option<bool>,
    timestamp: Option<hourglass_timestamp::VerifiedToken>,
    log: Option<LogDetails>,
}

/// A logged receipt's place in the log.
#[derive(Debug, Clone, Serialize)]
struct LogDetails {
    origin: String,
    index: u64,
    checkpoint: serde_json::Value,
    trust: String,
}

impl ReceiptReport {
    /// The verdict on a checked (authentic) receipt, with whether it is for the document the
    /// verifier gave (`None`: none given).
    pub fn of(checked: CheckedReceipt, document_matches: Option<bool>) -> Self {
        let reason = if document_matches == Some(false) {
            Some(OTHER_DOCUMENT.to_string())
        } else if checked.statement.verdict != ReceiptVerdict::Valid {
            Some(format!(
                "the receipt is authentic, and its verdict is invalid: {}",
                checked.statement.reason
            ))
        } else {
            None
        };
        let dating = checked.dating(None);
        let details = Details {
            statement: checked.statement.clone(),
            received: hourglass_timelock::verdict::rfc3339(dating.received()),
            predated_to: hourglass_timelock::verdict::rfc3339(dating.predated_to()),
            document_matches,
            timestamp: checked.timestamp.as_ref().map(|(_, t)| t.clone()),
            log: checked.log.as_ref().map(|l| LogDetails {
                origin: l.checkpoint.origin.clone(),
                index: l.index,
                checkpoint: l.checkpoint.summary(),
                trust: l.trust.clone(),
            }),
        };
        ReceiptReport {
            valid: reason.is_none(),
            authentic: true,
            reason,
            details: Some(details),
            checked: Ok(checked),
        }
    }

    /// The verdict on what [`check_receipt`](crate::check_receipt) returned: a receipt that is
    /// not authentic (a negative verdict: forged, another institution's, outside the pinned
    /// log) is a report that says why; an error (input that could not be read or checked) stays
    /// an error.
    pub fn judge(
        checked: Result<CheckedReceipt, ReceiptError>,
        document_matches: impl FnOnce(&CheckedReceipt) -> Option<bool>,
    ) -> Result<Self, ReceiptError> {
        match checked {
            Ok(c) => {
                let matches = document_matches(&c);
                Ok(ReceiptReport::of(c, matches))
            }
            Err(e) if e.is_verdict() => Ok(ReceiptReport {
                valid: false,
                authentic: false,
                reason: Some(e.to_string()),
                details: None,
                checked: Err(e),
            }),
            Err(e) => Err(e),
        }
    }

    /// Whether the receipt is valid: authentic, its submission valid, for the document given.
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Whether the receipt is authentic (signed by the institution, its token and log
    /// evidence checked), whatever it states.
    pub fn is_authentic(&self) -> bool {
        self.authentic
    }

    /// Why it is not valid (`None` when it is).
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// Whether it is for the document given (`None`: none given, or not authentic).
    pub fn document_matches(&self) -> Option<bool> {
        self.details.as_ref().and_then(|d| d.document_matches)
    }

    /// The checked receipt when it is authentic, else why not: the error
    /// [`check_receipt`](crate::check_receipt) gave.
    pub fn into_checked(self) -> Result<CheckedReceipt, ReceiptError> {
        self.checked
    }
}

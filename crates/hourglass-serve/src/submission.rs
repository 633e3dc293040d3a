//! A submission, the service's one state machine: queued; verified, with the library's verdict
//! (its receipt waiting for the transparency log); receipted, with its receipt (logged, or a
//! version 1 receipt of a row stored before schema 3); or failed, with the reason. The store
//! reads a row into a [`Submission`] here ([`Submission::from_stored`]), and the API, the pages
//! and the metrics read the state from it: no surface works a state out of columns.

use hourglass_timelock::verdict::{Dating, Verdict};

use crate::error::Error;

/// The word a submission's state is stored under and shown by (the API's `status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// Waiting for a worker.
    Queued,
    /// Verified: valid.
    Valid,
    /// Verified: invalid (the reason says why).
    Invalid,
    /// Could not be verified after every try (the reason says why); final.
    Error,
}

impl Status {
    /// Every status, in the order the metrics list them.
    pub(crate) const ALL: [Status; 4] = [
        Status::Queued,
        Status::Valid,
        Status::Invalid,
        Status::Error,
    ];

    /// The word stored in the database and shown by the API and pages.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Status::Queued => "queued",
            Status::Valid => "valid",
            Status::Invalid => "invalid",
            Status::Error => "error",
        }
    }

    /// The status of a stored word.
    pub(crate) fn parse(word: &str) -> Result<Self, Error> {
        Status::ALL
            .into_iter()
            .find(|s| s.as_str() == word)
            .ok_or_else(|| Error::Corrupt {
                what: format!("submission status '{word}'"),
            })
    }

    /// The status a verdict gives.
    pub(crate) fn of(verdict: &Verdict) -> Self {
        if verdict.is_valid() {
            Status::Valid
        } else {
            Status::Invalid
        }
    }
}

/// What a verification found.
#[derive(Debug, Clone)]
pub(crate) enum Verified {
    /// The library's verdict (rows verified since schema 2).
    Verdict(Box<Verdict>),
    /// A row verified before schema 2, which kept only these facts of its verdict.
    Schema1 {
        /// Whether it was valid.
        valid: bool,
        /// The time credited, in milliseconds.
        credited_ms: u64,
        /// Why it was invalid.
        reason: Option<String>,
    },
}

impl Verified {
    /// Whether the bundle is valid.
    pub(crate) fn valid(&self) -> bool {
        match self {
            Verified::Verdict(v) => v.is_valid(),
            Verified::Schema1 { valid, .. } => *valid,
        }
    }

    /// Why it is invalid.
    pub(crate) fn reason(&self) -> Option<&str> {
        match self {
            Verified::Verdict(v) => v.reason(),
            Verified::Schema1 { reason, .. } => reason.as_deref(),
        }
    }

    /// The verdict placed in time: received at `received_ms`, against the set's deadline.
    fn dating(&self, received_ms: i64, deadline_ms: Option<i64>) -> Dating {
        let secs = |ms: i64| u64::try_from(ms / 1000).unwrap_or(0);
        match self {
            Verified::Verdict(v) => Dating::new(v, secs(received_ms), deadline_ms.map(secs)),
            Verified::Schema1 {
                valid, credited_ms, ..
            } => Dating::of_credit(
                *valid,
                *credited_ms,
                secs(received_ms),
                deadline_ms.map(secs),
            ),
        }
    }
}

/// Where a submission stands.
#[derive(Debug, Clone)]
pub(crate) enum State {
    /// Waiting for a worker.
    Queued,
    /// Verified; its receipt waits for the transparency log's next published checkpoint.
    Verified(Verified),
    /// Verified, and its receipt handed out.
    Receipted {
        /// What the verification found.
        verified: Verified,
        /// The receipt file.
        receipt: String,
    },
    /// Could not be verified after every try; final.
    Failed {
        /// Why.
        reason: String,
    },
}

/// A stored submission.
#[derive(Debug, Clone)]
pub(crate) struct Submission {
    pub id: String,
    pub set_name: String,
    pub received_ms: i64,
    pub document_bytes: i64,
    pub state: State,
}

/// A submission's columns as the store reads them.
pub(crate) struct StoredSubmission {
    pub id: String,
    pub set_name: String,
    pub received_ms: i64,
    pub document_bytes: i64,
    pub status: String,
    /// The verdict's JSON (schema 2 on).
    pub verdict: Option<String>,
    /// The credit of a row verified before schema 2.
    pub credited_ms: Option<i64>,
    /// A failure's reason, or an invalid verdict's of a row verified before schema 2.
    pub reason: Option<String>,
    pub receipt: Option<String>,
}

impl Submission {
    /// Decides a stored row's state: the one place that reads a state out of columns. A row
    /// whose columns contradict each other (a verdict of the other status, a receipt of a
    /// queued row) is refused as corrupt.
    pub(crate) fn from_stored(row: StoredSubmission) -> Result<Self, Error> {
        let corrupt = |what: &str| Error::Corrupt {
            what: format!("submission {}: {what}", row.id),
        };
        let status = Status::parse(&row.status)?;
        let verified = match (status, row.verdict) {
            (Status::Queued | Status::Error, None) => None,
            (Status::Queued | Status::Error, Some(_)) => {
                return Err(corrupt("a verdict without a verified status"))
            }
            (_, Some(text)) => {
                let verdict: Verdict = serde_json::from_str(&text)
                    .map_err(|e| corrupt(&format!("stored verdict: {e}")))?;
                if Status::of(&verdict) != status {
                    return Err(corrupt("a status that is not its verdict's"));
                }
                Some(Verified::Verdict(Box::new(verdict)))
            }
            (valid_or_not, None) => Some(Verified::Schema1 {
                valid: valid_or_not == Status::Valid,
                credited_ms: u64::try_from(row.credited_ms.unwrap_or(0)).unwrap_or(0),
                reason: row.reason.clone(),
            }),
        };
        let state = match (status, verified, row.receipt) {
            (Status::Queued, _, None) => State::Queued,
            (Status::Error, _, None) => State::Failed {
                reason: row.reason.unwrap_or_default(),
            },
            (Status::Queued | Status::Error, _, Some(_)) => {
                return Err(corrupt("a receipt of an unverified submission"))
            }
            (_, Some(verified), None) => State::Verified(verified),
            (_, Some(verified), Some(receipt)) => State::Receipted { verified, receipt },
            (_, None, _) => return Err(corrupt("a verified status without a verdict")),
        };
        Ok(Self {
            id: row.id,
            set_name: row.set_name,
            received_ms: row.received_ms,
            document_bytes: row.document_bytes,
            state,
        })
    }

    /// The word of its state.
    pub(crate) fn status(&self) -> Status {
        match &self.state {
            State::Queued => Status::Queued,
            State::Failed { .. } => Status::Error,
            State::Verified(v) | State::Receipted { verified: v, .. } => {
                if v.valid() {
                    Status::Valid
                } else {
                    Status::Invalid
                }
            }
        }
    }

    /// What its verification found, once verified.
    pub(crate) fn verified(&self) -> Option<&Verified> {
        match &self.state {
            State::Verified(v) | State::Receipted { verified: v, .. } => Some(v),
            State::Queued | State::Failed { .. } => None,
        }
    }

    /// The library's verdict (none while queued, after a failure, or for rows verified before
    /// schema 2).
    pub(crate) fn verdict(&self) -> Option<&Verdict> {
        match self.verified() {
            Some(Verified::Verdict(v)) => Some(v),
            _ => None,
        }
    }

    /// Why it is invalid or failed.
    pub(crate) fn reason(&self) -> Option<&str> {
        match &self.state {
            State::Failed { reason } => Some(reason),
            _ => self.verified().and_then(Verified::reason),
        }
    }

    /// Its receipt file, once handed out.
    pub(crate) fn receipt(&self) -> Option<&str> {
        match &self.state {
            State::Receipted { receipt, .. } => Some(receipt),
            _ => None,
        }
    }

    /// Whether it is verified and its receipt waits for the log's next checkpoint.
    pub(crate) fn receipt_waits(&self) -> bool {
        matches!(self.state, State::Verified(_))
    }

    /// Its verdict placed in time against the set's deadline (none until verified).
    pub(crate) fn dating(&self, deadline_ms: Option<i64>) -> Option<Dating> {
        self.verified()
            .map(|v| v.dating(self.received_ms, deadline_ms))
    }

    /// Why there is no receipt to hand out (none when there is one).
    pub(crate) fn no_receipt_why(&self) -> Option<&'static str> {
        match &self.state {
            State::Receipted { .. } => None,
            State::Queued => Some("no receipt yet: the submission is still queued"),
            State::Failed { .. } => Some("no receipt: the submission could not be verified"),
            // Handed out only once its entry is in a published checkpoint.
            State::Verified(_) => Some(
                "no receipt yet: it is verified, and waits for the transparency log's next \
                 checkpoint (cosigned by its witnesses)",
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stored(status: &str, verdict: Option<&str>, receipt: Option<&str>) -> StoredSubmission {
        StoredSubmission {
            id: "s".into(),
            set_name: "set".into(),
            received_ms: 2_000_000,
            document_bytes: 1,
            status: status.into(),
            verdict: verdict.map(str::to_string),
            credited_ms: Some(1_500_000),
            reason: Some("link 1: wrong".into()),
            receipt: receipt.map(str::to_string),
        }
    }

    #[test]
    fn a_schema_1_row_keeps_its_facts() {
        let s = Submission::from_stored(stored("invalid", None, Some("{}"))).unwrap();
        assert_eq!(s.status(), Status::Invalid);
        assert_eq!(s.reason(), Some("link 1: wrong"));
        assert_eq!(s.receipt(), Some("{}"));
        assert!(s.verdict().is_none() && !s.receipt_waits());
        let d = s.dating(None).unwrap();
        assert_eq!(d.credited_ms, 0, "an invalid verdict credits nothing");
        let s = Submission::from_stored(stored("valid", None, None)).unwrap();
        assert!(s.receipt_waits());
        assert_eq!(s.dating(None).unwrap().credited_ms, 1_500_000);
    }

    #[test]
    fn the_states_are_decided_from_the_row() {
        let q = Submission::from_stored(stored("queued", None, None)).unwrap();
        assert!(matches!(q.state, State::Queued));
        assert!(q.dating(None).is_none() && q.no_receipt_why().is_some());
        let e = Submission::from_stored(stored("error", None, None)).unwrap();
        assert_eq!(e.reason(), Some("link 1: wrong"));
        assert_eq!(e.status(), Status::Error);
        // Contradictions are refused, never shown.
        for (status, verdict, receipt) in [
            ("queued", None, Some("{}")),
            ("error", Some("{}"), None),
            ("valid", Some("not json"), None),
            ("finished", None, None),
        ] {
            assert!(Submission::from_stored(stored(status, verdict, receipt)).is_err());
        }
    }
}

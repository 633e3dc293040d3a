//! The verdict on a bundle placed in time, decided once for every surface: when the bundle was
//! received (the earliest time verified RFC 3161 timestamps prove, else the time the verifier
//! gives, else this machine's clock), what that dates the document to, and whether it beat the
//! deadline. A timestamp that does not date the bundle leaves no trusted time: the verdict is
//! then invalid and undated, whatever the bundle's links say.

use std::time::SystemTime;

use hourglass_timestamp::{Evidence, TokenRefused};
use serde::Serialize;

use crate::verdict::{rfc3339, unix_secs, Dating, Verdict};

/// Where a verdict's received time came from. The rule every surface dates with: the earliest
/// verified RFC 3161 timestamp, else the time the verifier gives (the institution's clock),
/// else this machine's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceivedFrom {
    /// The earliest of the latest times the verified timestamps prove (`genTime + accuracy`).
    Timestamps,
    /// The time the verifier gave.
    Given,
    /// This machine's clock.
    Clock,
}

impl ReceivedFrom {
    /// `timestamps`, `received` or `this machine's clock`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReceivedFrom::Timestamps => "timestamps",
            ReceivedFrom::Given => "received",
            ReceivedFrom::Clock => "this machine's clock",
        }
    }
}

impl Serialize for ReceivedFrom {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

/// What the verifier knows of when the bundle was received.
#[derive(Debug)]
pub enum Reception {
    /// RFC 3161 timestamps over the bundle's bytes, checked by [`Evidence::check`]: a token
    /// refused as a negative verdict (it does not verify, covers other bytes, or does not chain
    /// to an anchor the verifier gave) leaves the verdict invalid and undated.
    Timestamps(Result<Evidence, TokenRefused>),
    /// No timestamps: the time the verifier gives (the institution's clock), if any, else
    /// `now`, this machine's clock.
    Stated {
        /// The time the verifier gives.
        given: Option<SystemTime>,
        /// This machine's clock.
        now: SystemTime,
    },
}

/// A bundle's verdict placed in time: what `submit verify --json` prints and Python's
/// `submit.verify` returns. Its fields are private: only this crate decides them.
///
/// JSON: the [`Verdict`]'s fields, then `received`, `credited_ms`, `predated_to`, `deadline`,
/// `before_deadline` (the [`Dating`]), `received_from` and `timestamps` (the tokens' evidence,
/// `null` without tokens). When a token is refused, `received`, `predated_to` and
/// `received_from` are `null`, `valid` is false and `reason` names the token.
#[derive(Debug)]
pub struct DatedVerdict {
    verdict: Verdict,
    dating: Dating,
    received_from: Option<ReceivedFrom>,
    evidence: Option<Evidence>,
}

impl DatedVerdict {
    /// Dates `verdict` by `reception`, against `deadline` (seconds since the epoch).
    pub fn new(mut verdict: Verdict, reception: Reception, deadline_unix: Option<u64>) -> Self {
        let (received_unix, received_from, evidence) = match reception {
            Reception::Timestamps(Ok(evidence)) => match evidence.received_unix() {
                Some(t) => (t, Some(ReceivedFrom::Timestamps), Some(evidence)),
                // No token at all: nothing dates the bundle.
                None => (0, None, None),
            },
            Reception::Timestamps(Err(refused)) => {
                verdict.valid = false;
                verdict.credited_secs = 0.0;
                verdict.reason = Some(refused.to_string());
                (0, None, None)
            }
            Reception::Stated { given: Some(t), .. } => {
                (unix_secs(t), Some(ReceivedFrom::Given), None)
            }
            Reception::Stated { given: None, now } => {
                (unix_secs(now), Some(ReceivedFrom::Clock), None)
            }
        };
        if received_from.is_none() && verdict.valid {
            verdict.valid = false;
            verdict.credited_secs = 0.0;
            verdict.reason = Some("no timestamp dates the bundle".into());
        }
        let dating = Dating::new(&verdict, received_unix, deadline_unix);
        Self {
            verdict,
            dating,
            received_from,
            evidence,
        }
    }

    /// The bundle's verdict (invalid when a timestamp was refused).
    pub fn verdict(&self) -> &Verdict {
        &self.verdict
    }

    /// Whether the bundle is valid and dated.
    pub fn is_valid(&self) -> bool {
        self.verdict.valid
    }

    /// Whether the document is proven to predate the deadline (`None` without one).
    pub fn before_deadline(&self) -> Option<bool> {
        self.dating.before_deadline
    }

    /// Its dating, when a trusted time dates it (`None` when a timestamp was refused).
    pub fn dating(&self) -> Option<&Dating> {
        self.received_from.map(|_| &self.dating)
    }

    /// Where the received time came from (`None` when a timestamp was refused).
    pub fn received_from(&self) -> Option<ReceivedFrom> {
        self.received_from
    }

    /// The timestamps that date it, verified.
    pub fn evidence(&self) -> Option<&Evidence> {
        self.evidence.as_ref()
    }
}

/// The JSON of a [`DatedVerdict`].
#[derive(Serialize)]
struct DatedJson<'a> {
    #[serde(flatten)]
    verdict: &'a Verdict,
    received: Option<String>,
    credited_ms: u64,
    predated_to: Option<String>,
    deadline: Option<String>,
    before_deadline: Option<bool>,
    received_from: Option<ReceivedFrom>,
    timestamps: Option<&'a Evidence>,
}

impl Serialize for DatedVerdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let dated = self.dating();
        DatedJson {
            verdict: &self.verdict,
            received: dated.map(|d| rfc3339(d.received())),
            credited_ms: self.dating.credited_ms,
            predated_to: dated.map(|d| rfc3339(d.predated_to())),
            deadline: self.dating.deadline().map(rfc3339),
            before_deadline: self.dating.before_deadline,
            received_from: self.received_from,
            timestamps: self.evidence.as_ref(),
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use hourglass_timestamp::TimestampError;

    use super::*;
    use crate::verdict::Trust;
    use crate::SetKind;

    /// A valid verdict crediting 1 s, with one valid link's findings.
    fn valid_verdict() -> Verdict {
        Verdict {
            valid: true,
            set: SetKind::Private,
            trust: Trust::InstitutionKeys,
            document_matches: true,
            credited_secs: 1.0,
            reason: None,
            links: Vec::new(),
        }
    }

    #[test]
    fn a_refused_token_leaves_the_verdict_invalid_and_undated() {
        let refused = TokenRefused {
            name: "t.tsr".into(),
            error: Box::new(TimestampError::ImprintMismatch {
                alg: "sha256",
                token: "00".into(),
                data: "11".into(),
            }),
        };
        let dated = DatedVerdict::new(
            valid_verdict(),
            Reception::Timestamps(Err(refused)),
            Some(2_000_000_000),
        );
        assert!(!dated.is_valid());
        assert!(dated.dating().is_none() && dated.received_from().is_none());
        assert_eq!(dated.before_deadline(), Some(false));
        let json = serde_json::to_value(&dated).unwrap();
        assert_eq!(json["valid"], false);
        assert_eq!(json["credited_ms"], 0);
        assert!(
            json["received"].is_null() && json["predated_to"].is_null(),
            "{json}"
        );
        assert!(json["received_from"].is_null() && json["timestamps"].is_null());
        assert!(json["reason"]
            .as_str()
            .unwrap()
            .starts_with("timestamp t.tsr: "));
        // The bundle's own findings are kept.
        assert_eq!(json["document_matches"], true);
    }

    #[test]
    fn no_token_dates_nothing() {
        let none = Evidence::check(b"bundle", &[], &[], &[]).unwrap();
        let dated = DatedVerdict::new(valid_verdict(), Reception::Timestamps(Ok(none)), None);
        assert!(!dated.is_valid() && dated.dating().is_none());
    }

    #[test]
    fn a_stated_time_or_the_clock_dates_the_verdict() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000);
        let later = at + Duration::from_secs(3600);
        let given = DatedVerdict::new(
            valid_verdict(),
            Reception::Stated {
                given: Some(at),
                now: later,
            },
            Some(1_800_000_000),
        );
        assert!(given.is_valid());
        assert_eq!(given.received_from(), Some(ReceivedFrom::Given));
        assert_eq!(given.before_deadline(), Some(true));
        let json = serde_json::to_value(&given).unwrap();
        assert_eq!(json["received"], "2027-01-15T08:00:00Z");
        assert_eq!(json["received_from"], "received");
        assert!(json["timestamps"].is_null());
        let clock = DatedVerdict::new(
            valid_verdict(),
            Reception::Stated {
                given: None,
                now: later,
            },
            Some(1_800_000_000),
        );
        assert_eq!(clock.received_from(), Some(ReceivedFrom::Clock));
        assert_eq!(clock.dating().unwrap().received(), later);
        // Received an hour late, 1 s credited: not before the deadline.
        assert_eq!(clock.before_deadline(), Some(false));
    }
}

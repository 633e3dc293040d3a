//! What a new certificate says: its subject's common name and validity period.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use der::asn1::{GeneralizedTime, UtcTime};
use x509_cert::time::{Time, Validity};

use crate::error::{CertificateError, OptionProblem, Result};

/// How far `notBefore` is set before the time of issue, so that a certificate is valid at once
/// on machines whose clock is slightly behind.
pub const BACKDATE: Duration = Duration::from_secs(3600);

/// The validity period of a certificate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ValidityPeriod {
    /// Start (inclusive), whole seconds.
    pub not_before: SystemTime,
    /// End (inclusive), whole seconds.
    pub not_after: SystemTime,
}

impl ValidityPeriod {
    /// From `now - BACKDATE` to `now + days` days (`days = 0` expires at once).
    pub fn days_from(now: SystemTime, days: u32) -> Self {
        Self {
            not_before: now.checked_sub(BACKDATE).unwrap_or(now),
            not_after: now + Duration::from_secs(u64::from(days) * 86_400),
        }
    }

    /// [`Self::days_from`] the current time.
    pub fn days_from_now(days: u32) -> Self {
        Self::days_from(SystemTime::now(), days)
    }

    pub(crate) fn to_asn1(self) -> Result<Validity> {
        if self.not_after < self.not_before {
            return Err(CertificateError::InvalidOptions(
                OptionProblem::ValidityReversed,
            ));
        }
        Ok(Validity {
            not_before: to_time(self.not_before)?,
            not_after: to_time(self.not_after)?,
        })
    }
}

/// UTCTime through 2049, GeneralizedTime after (RFC 5280 section 4.1.2.5), whole seconds.
fn to_time(t: SystemTime) -> Result<Time> {
    let secs = t
        .duration_since(UNIX_EPOCH)
        .map_err(|_| CertificateError::InvalidOptions(OptionProblem::Before1970))?
        .as_secs();
    let d = Duration::from_secs(secs);
    match UtcTime::from_unix_duration(d) {
        Ok(u) => Ok(Time::UtcTime(u)),
        Err(_) => GeneralizedTime::from_unix_duration(d)
            .map(Time::GeneralTime)
            .map_err(|e| CertificateError::InvalidOptions(OptionProblem::TimeOutOfRange(e))),
    }
}

/// What to put into a new certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateOptions {
    /// The subject's common name (1 to 64 characters).
    pub common_name: String,
    /// When the certificate is valid.
    pub validity: ValidityPeriod,
}

impl CertificateOptions {
    /// A certificate for `common_name`, valid from now (less [`BACKDATE`]) for `days` days.
    pub fn days(common_name: &str, days: u32) -> Self {
        Self {
            common_name: common_name.to_string(),
            validity: ValidityPeriod::days_from_now(days),
        }
    }
}

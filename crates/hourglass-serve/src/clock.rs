//! The service's clock: times as the database stores them (Unix milliseconds) and as the API
//! and pages show them (RFC 3339).

use std::time::{Duration, SystemTime};

use hourglass_timelock::verdict::rfc3339;

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// RFC 3339 (whole seconds) of Unix milliseconds.
pub(crate) fn rfc3339_ms(ms: i64) -> String {
    rfc3339(SystemTime::UNIX_EPOCH + Duration::from_millis(u64::try_from(ms).unwrap_or(0)))
}

//! The hourly quota of bytes each client address may have stored (`--upload-quota`), so that
//! anonymous uploads cannot fill the disk: a client past it gets 429 with `Retry-After`, and
//! nothing is stored.

use std::net::IpAddr;
use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};

/// The quota is counted in KiB, so that a u32 of them covers any quota a disk holds.
const UNIT: u64 = 1024;

/// Bytes stored per client address per hour, refilled continuously (a client that used its
/// quota may store a tenth of it again after six minutes).
pub(crate) struct UploadQuota {
    limiter: DefaultKeyedRateLimiter<IpAddr>,
}

impl UploadQuota {
    /// A quota of `bytes_per_hour` (at least 1 KiB).
    pub(crate) fn new(bytes_per_hour: u64) -> Self {
        let units = units(bytes_per_hour);
        let period = Duration::from_secs(3600) / units.get();
        let quota = Quota::with_period(period.max(Duration::from_nanos(1)))
            .unwrap_or_else(|| Quota::per_hour(units))
            .allow_burst(units);
        Self {
            limiter: RateLimiter::keyed(quota),
        }
    }

    /// Counts `bytes` stored for `client`, or says how long until the client's quota holds
    /// them (nothing is counted then).
    pub(crate) fn charge(&self, client: IpAddr, bytes: u64) -> Result<(), Duration> {
        match self.limiter.check_key_n(&client, units(bytes)) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(not_until)) => Err(not_until.wait_time_from(DefaultClock::default().now())),
            // More than the whole quota: the start-up check makes the quota hold the largest
            // upload, so this is only a quota lowered below it.
            Err(_) => Err(Duration::from_secs(3600)),
        }
    }

    /// Forgets clients whose quota is full again (memory stays bounded by recent clients).
    pub(crate) fn retain_recent(&self) {
        self.limiter.retain_recent();
    }
}

/// `bytes` in KiB, rounded up, at least one.
fn units(bytes: u64) -> NonZeroU32 {
    let units = bytes.div_ceil(UNIT).clamp(1, u64::from(u32::MAX));
    NonZeroU32::new(u32::try_from(units).unwrap_or(u32::MAX)).unwrap_or(NonZeroU32::MIN)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_stores_its_quota_and_then_waits() {
        let quota = UploadQuota::new(10 << 20);
        let a: IpAddr = "192.0.2.1".parse().unwrap();
        let b: IpAddr = "192.0.2.2".parse().unwrap();
        assert!(quota.charge(a, 6 << 20).is_ok());
        assert!(quota.charge(a, 3 << 20).is_ok());
        let wait = quota.charge(a, 2 << 20).unwrap_err();
        // 1 MiB more is refilled in a tenth of the hour (6 minutes).
        assert!(wait > Duration::from_secs(300) && wait <= Duration::from_secs(6 * 60 + 1));
        // A refused upload counts nothing; another client is not affected.
        assert!(quota.charge(a, 1 << 20).is_ok());
        assert!(quota.charge(b, 10 << 20).is_ok());
        assert!(quota.charge(b, 1).is_err());
    }
}

//! What happened during a generation, for reports and benchmarks.

use std::time::Duration;

use crate::{Failure, PartyId};

/// What happened during a generation, for reports and benchmarks.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Candidate pairs tried (moduli `N` computed) in the successful epoch.
    pub candidates: u64,
    /// Candidate pairs tried in all epochs.
    pub candidates_all_epochs: u64,
    /// Batches (iterations of steps 1-4).
    pub batches: u64,
    /// Moduli that survived trial division and entered the biprimality test.
    pub biprimality_tests: u64,
    /// Bytes this party sent (frames, without TLS overhead).
    pub bytes_sent: u64,
    /// Wall time of the whole generation.
    pub elapsed: Duration,
    /// Wall time of the successful epoch.
    pub epoch_elapsed: Duration,
    /// Parties that took part in the successful epoch.
    pub parties: usize,
    /// Parties removed after failures, with the reason.
    pub removed: Vec<(PartyId, Failure)>,
    /// The sieving bound used.
    pub sieve_bound: u32,
    /// Expected candidate pairs (prime number theorem with sieving).
    pub expected_candidates: f64,
    /// Expected biprimality tests: the expected pairs whose `N` has no prime factor below the
    /// trial bound ([`crate::trial::trial_bound`]).
    pub expected_tests: f64,
    /// The trial bound used.
    pub trial_bound: u32,
}

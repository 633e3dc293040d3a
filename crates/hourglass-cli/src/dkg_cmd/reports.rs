//! What the party processes print for their coordinator (`--json`).

use serde::{Deserialize, Serialize};

use hourglass_dkg::PartyId;

use crate::cli_error::CliError;

/// What `party-reshare`, `party-refresh` and `party-sign --json` print.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct ThresholdReport {
    pub(super) party: PartyId,
    pub(super) threshold: usize,
    pub(super) epoch: u32,
    #[serde(default)]
    pub(super) used: Vec<PartyId>,
    #[serde(default)]
    pub(super) excluded: Vec<PartyId>,
    pub(super) seconds: f64,
}

/// What `dkg party --json` prints.
#[derive(Debug, Serialize, Deserialize)]
pub(super) struct PartyReport {
    pub(super) party: PartyId,
    pub(super) members: Vec<PartyId>,
    pub(super) bits: u32,
    pub(super) n_sha256: String,
    pub(super) candidates: u64,
    pub(super) candidates_all_epochs: u64,
    pub(super) expected_candidates: f64,
    pub(super) biprimality_tests: u64,
    /// Expected biprimality tests: the expected pairs sieved to the trial bound.
    #[serde(default)]
    pub(super) expected_tests: f64,
    /// The bound of the trial division of every `N`.
    #[serde(default)]
    pub(super) trial_bound: u32,
    pub(super) batches: u64,
    pub(super) bytes_sent: u64,
    pub(super) seconds: f64,
    /// This process's peak resident memory in bytes (absent where the system does not say).
    #[serde(default)]
    pub(super) peak_rss_bytes: Option<u64>,
    pub(super) sieve_bound: u32,
    pub(super) removed: Vec<(PartyId, String)>,
    pub(super) public_key: String,
    pub(super) share: String,
}

/// Prints `value` as one line of JSON on standard output.
pub(super) fn print_json(value: &impl Serialize) -> Result<(), CliError> {
    println!("{}", serde_json::to_string(value).map_err(CliError::Json)?);
    Ok(())
}

//! What every party must agree on before a generation starts.

use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// Generation settings, from the `[generation]` table of the cluster configuration.
///
/// All parties must use identical settings; the first round of every session compares a digest
/// of them and aborts on a mismatch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// Size of the modulus `N` in bits (each prime has half).
    pub bits: u32,
    /// Candidate pairs tried per round trip (hides latency; the paper's threads).
    #[serde(default = "default_batch")]
    pub batch: usize,
    /// Largest prime used in distributed sieving; `None` picks the measured default.
    #[serde(default)]
    pub sieve_bound: Option<u32>,
    /// Repetitions of the biprimality test with fresh `g`.
    #[serde(default = "default_rounds")]
    pub biprimality_rounds: u32,
    /// Fewest parties a generation may continue with after failures.
    #[serde(default = "default_min_parties")]
    pub min_parties: usize,
    /// How long to wait for a party before declaring it failed, in milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_batch() -> usize {
    32
}
fn default_rounds() -> u32 {
    64
}
fn default_min_parties() -> usize {
    3
}
fn default_timeout_ms() -> u64 {
    30_000
}

impl Settings {
    /// Default settings for a `bits`-bit modulus.
    pub fn new(bits: u32) -> Self {
        Settings {
            bits,
            batch: default_batch(),
            sieve_bound: None,
            biprimality_rounds: default_rounds(),
            min_parties: default_min_parties(),
            timeout_ms: default_timeout_ms(),
        }
    }

    /// Checks the settings on their own (the party count is checked when a session starts).
    pub fn validate(&self) -> Result<()> {
        if !(512..=8192).contains(&self.bits) || !self.bits.is_multiple_of(16) {
            return Err(Error::InvalidParameters(format!(
                "modulus size {} bits: use a multiple of 16 from 512 to 8192",
                self.bits
            )));
        }
        if self.batch == 0 || self.batch > 4096 {
            return Err(Error::InvalidParameters(format!(
                "batch {}: use 1 to 4096 candidate pairs per round",
                self.batch
            )));
        }
        if self.biprimality_rounds == 0 || self.biprimality_rounds > 1024 {
            return Err(Error::InvalidParameters(format!(
                "{} biprimality rounds: use 1 to 1024",
                self.biprimality_rounds
            )));
        }
        if self.min_parties < 3 {
            return Err(Error::InvalidParameters(
                "at least 3 parties are needed (with 2, BGW shares reveal the secrets)".into(),
            ));
        }
        if self.timeout_ms == 0 {
            return Err(Error::InvalidParameters("timeout must be positive".into()));
        }
        Ok(())
    }
}

//! What every party must agree on before a generation starts.

use serde::{Deserialize, Serialize};

use crate::{ParamError, Result};

pub(crate) mod error;

/// The public exponent of generated keys.
pub const PUBLIC_EXPONENT: u32 = 65537;

/// Candidate pairs per batch when the settings name none. A batch shares each round's frames,
/// so at 50 parties a pair costs less in larger ones (1024 bits, every party a process on 2
/// cores: about 63 ms per pair at 32, 50 at 64, 45 at 128, 43 at 256; docs/PERFORMANCE.md),
/// while the last batch's unneeded pairs (half a batch on average: 6% of the 1,125 expected at
/// 1024 bits, 2% at 2048) and the frames (linear in the batch) grow with it.
pub const DEFAULT_BATCH: usize = 128;

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
    /// Fewest parties a generation may continue with after failures (at least `2t + 1` is
    /// always required, whatever this says).
    #[serde(default = "default_min_parties")]
    pub min_parties: usize,
    /// The privacy threshold `t`: how many colluding parties the generation tolerates. Fixed
    /// when the cluster is made (`None` there means `floor((k - 1) / 2)` for `k` parties) and
    /// never recomputed from the survivors: a generation that would continue with fewer than
    /// `2t + 1` parties aborts instead.
    #[serde(default)]
    pub threshold: Option<usize>,
    /// How long to wait for a party before declaring it failed, in milliseconds.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

fn default_batch() -> usize {
    DEFAULT_BATCH
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
            threshold: None,
            timeout_ms: default_timeout_ms(),
        }
    }

    /// The threshold `t` for a cluster of `parties` parties: the fixed one, or
    /// `floor((parties - 1) / 2)`.
    pub fn threshold_for(&self, parties: usize) -> usize {
        self.threshold.unwrap_or(parties.saturating_sub(1) / 2)
    }

    /// The fewest parties a generation of a `parties`-party cluster continues with:
    /// `max(min_parties, 2t + 1)`.
    pub fn minimum_for(&self, parties: usize) -> usize {
        self.min_parties.max(2 * self.threshold_for(parties) + 1)
    }

    /// Checks the threshold against a cluster of `parties` parties: `1 <= t` and
    /// `2t + 1 <= parties` (BGW multiplies degree-`t` sharings, which needs `2t + 1` shares).
    pub fn check_threshold(&self, parties: usize) -> Result<()> {
        let t = self.threshold_for(parties);
        if t == 0 || 2 * t + 1 > parties {
            return Err(ParamError::Threshold {
                threshold: t,
                parties,
                max: parties.saturating_sub(1) / 2,
            }
            .into());
        }
        Ok(())
    }

    /// Checks the settings on their own (the party count is checked when a session starts).
    pub fn validate(&self) -> Result<()> {
        if !(512..=8192).contains(&self.bits) || !self.bits.is_multiple_of(16) {
            return Err(ParamError::Bits { bits: self.bits }.into());
        }
        if self.batch == 0 || self.batch > 4096 {
            return Err(ParamError::Batch { batch: self.batch }.into());
        }
        if self.biprimality_rounds == 0 || self.biprimality_rounds > 1024 {
            return Err(ParamError::BiprimalityRounds {
                rounds: self.biprimality_rounds,
            }
            .into());
        }
        if self.min_parties < 3 {
            return Err(ParamError::MinParties.into());
        }
        if self.timeout_ms == 0 {
            return Err(ParamError::Timeout.into());
        }
        Ok(())
    }
}

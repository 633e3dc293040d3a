//! `--entropy PATH` and `--seed TEXT`: where random bits come from.

use std::path::PathBuf;

use clap::Args;
use hourglass_arith::entropy::{EntropySource, FileEntropy, OsEntropy, SeededEntropy};

use crate::cli_error::CliError;

/// Entropy options shared by every command that needs randomness.
#[derive(Args, Debug, Clone, Default)]
pub struct EntropyArgs {
    /// Read random bytes from this file or device (e.g. /dev/hwrng) and nothing else; running
    /// out is an error. Default: the operating system's CSPRNG.
    #[arg(long, value_name = "PATH", conflicts_with = "seed")]
    pub entropy: Option<PathBuf>,
    /// INSECURE: derive every random value from this text (reproducible tests and benchmarks
    /// only).
    #[arg(long, value_name = "TEXT")]
    pub seed: Option<String>,
}

impl EntropyArgs {
    /// The selected source, with a warning on stderr for `--seed`.
    pub fn source(&self) -> Result<Box<dyn EntropySource>, CliError> {
        if let Some(seed) = &self.seed {
            eprintln!(
                "hourglass: warning: --seed makes every random value predictable: INSECURE, for tests and benchmarks only"
            );
            return Ok(Box::new(SeededEntropy::new(seed.as_bytes())));
        }
        if let Some(path) = &self.entropy {
            let src = FileEntropy::open(path)
                .map_err(|e| CliError::from(e).hint("--entropy takes a readable file or device"))?;
            return Ok(Box::new(src));
        }
        Ok(Box::new(OsEntropy))
    }
}

//! The transparency log's key files as the commands read them: a verifier key of a role, and
//! the pins (`--log-key`, `--witness-key`, `--witness-quorum`) of the checking commands.

use std::path::{Path, PathBuf};

use hourglass_log::checkpoint::LogPins;
use hourglass_log::keys::{KeyRole, VerifierKey, MAX_KEY_TEXT_BYTES};

use crate::cli_error::{CliError, Usage};
use crate::files::read_input_limited;

/// Reads a verifier key file of `role`.
pub fn load_verifier_key(path: &Path, role: KeyRole) -> Result<VerifierKey, CliError> {
    let bytes = read_input_limited(path, "verifier key", MAX_KEY_TEXT_BYTES as u64 + 2)?;
    let key = std::str::from_utf8(&bytes)
        .map_err(|_| hourglass_log::LogError::Malformed {
            what: "verifier key",
            why: "not text".into(),
        })
        .and_then(VerifierKey::parse)
        .map_err(|e| CliError::from(e).with_path(path))?;
    key.expect_role(role)
        .map_err(|e| CliError::from(e).with_path(path))?;
    Ok(key)
}

/// The log pins of `--log-key`, `--witness-key` and `--witness-quorum` (the default quorum:
/// every witness given).
pub fn load_pins(
    log_key: &Path,
    witness_keys: &[PathBuf],
    quorum: Option<usize>,
) -> Result<LogPins, CliError> {
    let log = load_verifier_key(log_key, KeyRole::Log)?;
    let witnesses = witness_keys
        .iter()
        .map(|p| load_verifier_key(p, KeyRole::Witness))
        .collect::<Result<Vec<_>, _>>()?;
    let quorum = quorum.unwrap_or(witnesses.len());
    if quorum > witnesses.len() {
        return Err(Usage::Range {
            flag: "--witness-quorum",
            must: format!(
                "be at most the number of --witness-key given ({})",
                witnesses.len()
            )
            .into(),
        }
        .into());
    }
    Ok(LogPins::new(log, witnesses, quorum)?)
}

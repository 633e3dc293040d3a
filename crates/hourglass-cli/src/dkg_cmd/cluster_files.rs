//! The files of a cluster directory: configurations and share files, found by party id.

use std::path::{Path, PathBuf};

use clap::Args;
use hourglass_dkg::cluster::ClusterConfig;
use hourglass_dkg::keyshare::AnyShare;
use hourglass_dkg::PartyId;

use crate::cli_error::{CliError, InputProblem, IoOp};

/// The party and its share, as `party-sign`, `party-reshare` and `party-refresh` name them.
#[derive(Args, Debug)]
pub(super) struct PartyShareArgs {
    /// This party's cluster configuration.
    #[arg(long)]
    pub(super) config: PathBuf,
    /// This party's id.
    #[arg(long)]
    pub(super) id: PartyId,
    /// This party's share (default: party-I.share.json beside the configuration; `party-reshare`
    /// and `party-refresh` rewrite it in place).
    #[arg(long)]
    share: Option<PathBuf>,
}

impl PartyShareArgs {
    /// The configuration, the share file's path and the share.
    pub(super) fn load(&self) -> Result<(ClusterConfig, PathBuf, AnyShare), CliError> {
        let config = ClusterConfig::load(&self.config).map_err(CliError::from)?;
        let file = self
            .share
            .clone()
            .unwrap_or_else(|| share_path(&config_dir(&config), self.id));
        let share = AnyShare::load(&file).map_err(CliError::from)?;
        Ok((config, file, share))
    }
}

pub(super) fn share_path(dir: &Path, id: PartyId) -> PathBuf {
    dir.join(format!("party-{id}.share.json"))
}

pub(super) fn config_dir(config: &ClusterConfig) -> PathBuf {
    config
        .path()
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// The ids of the share files (`party-I.share.json`) in a cluster directory, sorted.
pub(super) fn held_shares(cluster: &Path) -> Result<Vec<PartyId>, CliError> {
    let mut ids: Vec<PartyId> = Vec::new();
    let entries =
        std::fs::read_dir(cluster).map_err(|e| CliError::io(IoOp::List("cluster"), cluster, e))?;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if let Some(id) = name
            .strip_prefix("party-")
            .and_then(|r| r.strip_suffix(".share.json"))
            .and_then(|r| r.parse::<PartyId>().ok())
        {
            ids.push(id);
        }
    }
    ids.sort_unstable();
    if ids.is_empty() {
        return Err(CliError::input(cluster, InputProblem::NoShares));
    }
    Ok(ids)
}

/// Loads the share files of `ids` in `cluster` and checks, before any process starts, that
/// they sign or reshare together: every one against the first (the library's rule), naming
/// the file that differs.
pub(super) fn shares_together(cluster: &Path, ids: &[PartyId]) -> Result<Vec<AnyShare>, CliError> {
    let shares = ids
        .iter()
        .map(|&id| AnyShare::load(&share_path(cluster, id)).map_err(CliError::from))
        .collect::<Result<Vec<_>, _>>()?;
    let first = shares[0].claim();
    for share in &shares[1..] {
        first
            .check(share.party(), &share.claim())
            .map_err(|e| CliError::from(e).with_path(share_path(cluster, share.party())))?;
    }
    Ok(shares)
}

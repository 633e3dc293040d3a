//! `hourglass dkg reshare`: turns a cluster directory's n-of-n shares into t-of-k shares.

use std::path::PathBuf;

use clap::Args;

use super::resharing;
use crate::cli_error::CliError;
use crate::progress::ReportArgs;

#[derive(Args, Debug)]
pub(super) struct ReshareArgs {
    /// Cluster directory (party-I.toml and party-I.share.json files: every party's).
    #[arg(long)]
    cluster: PathBuf,
    /// The threshold t: any t + 1 parties sign, any t learn nothing (1 <= t, 2t + 1 <= parties).
    #[arg(long, value_name = "T")]
    threshold: usize,
    /// Seconds each party waits for the others.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    #[command(flatten)]
    report: ReportArgs,
}

/// Runs `hourglass dkg reshare`.
pub(super) fn run(args: ReshareArgs) -> Result<(), CliError> {
    resharing::run(
        &args.cluster,
        Some(args.threshold),
        args.timeout,
        &args.report,
    )
}

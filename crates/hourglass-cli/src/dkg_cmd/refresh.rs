//! `hourglass dkg refresh`: refreshes a cluster directory's threshold shares to a new epoch.

use std::path::PathBuf;

use clap::Args;

use super::resharing;
use crate::cli_error::CliError;
use crate::progress::ReportArgs;

#[derive(Args, Debug)]
pub(super) struct RefreshArgs {
    /// Cluster directory (party-I.toml and party-I.share.json files: every party's).
    #[arg(long)]
    cluster: PathBuf,
    /// Seconds each party waits for the others.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    #[command(flatten)]
    report: ReportArgs,
}

/// Runs `hourglass dkg refresh`.
pub(super) fn run(args: RefreshArgs) -> Result<(), CliError> {
    resharing::run(&args.cluster, None, args.timeout, &args.report)
}

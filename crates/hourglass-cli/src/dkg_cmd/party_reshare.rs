//! `hourglass dkg party-reshare`: one party's part of a reshare.

use clap::Args;

use super::party_resharing::{self, PartyResharingArgs};
use crate::cli_error::CliError;

#[derive(Args, Debug)]
pub(super) struct PartyReshareArgs {
    #[command(flatten)]
    party: PartyResharingArgs,
    /// The threshold t (every party gives the same).
    #[arg(long, value_name = "T")]
    threshold: usize,
}

/// Runs `hourglass dkg party-reshare`.
pub(super) fn run(args: PartyReshareArgs) -> Result<(), CliError> {
    party_resharing::run(args.party, Some(args.threshold))
}

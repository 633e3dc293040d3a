//! `hourglass dkg party-refresh`: one party's part of a refresh.

use clap::Args;

use super::party_resharing::{self, PartyResharingArgs};
use crate::cli_error::CliError;

#[derive(Args, Debug)]
pub(super) struct PartyRefreshArgs {
    #[command(flatten)]
    party: PartyResharingArgs,
}

/// Runs `hourglass dkg party-refresh`.
pub(super) fn run(args: PartyRefreshArgs) -> Result<(), CliError> {
    party_resharing::run(args.party, None)
}

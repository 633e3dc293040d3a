//! One party's part of a reshare or a refresh (`dkg party-reshare`, `dkg party-refresh`): its
//! share file is rewritten in place once every party has checked the new sharing.

use std::time::Instant;

use clap::Args;
use hourglass_arith::entropy::{EntropyArgs, EntropySource};
use hourglass_dkg::bounds::FrameBounds;
use hourglass_dkg::keyshare::AnyShare;
use hourglass_dkg::reshare::{refresh, reshare};
use hourglass_dkg::threshold::{Sizes, ThresholdShare};
use hourglass_dkg::tls::TlsOptions;

use super::cluster_files::PartyShareArgs;
use super::options::{connect_session, seconds};
use super::reports::{print_json, ThresholdReport};
use crate::cli_error::CliError;
use crate::files::{write_output_replacing, Sensitivity};

/// What `party-reshare` and `party-refresh` share.
#[derive(Args, Debug)]
pub(super) struct PartyResharingArgs {
    #[command(flatten)]
    party: PartyShareArgs,
    /// Seconds to wait for the other parties.
    #[arg(long, default_value_t = 60.0)]
    timeout: f64,
    /// Print what was done as JSON on standard output.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    entropy: EntropyArgs,
}

/// Reshares this party's n-of-n share to `threshold` (`Some`), or refreshes its threshold share
/// (`None`).
pub(super) fn run(args: PartyResharingArgs, threshold: Option<usize>) -> Result<(), CliError> {
    let (config, share_file, held) = args.party.load()?;
    let timeout = seconds(args.timeout, "--timeout")?;
    let mut entropy = args.entropy.source()?;
    let start = Instant::now();
    // Every member of the key, each to each or through the star's relay.
    let among = config.among(held.members()).map_err(CliError::from)?;
    let connect = |sizes: &Sizes, refreshing: bool, entropy: &mut dyn EntropySource| {
        let options = TlsOptions {
            connect_timeout: timeout,
            ..TlsOptions::new(FrameBounds::resharing(sizes, refreshing))
        };
        connect_session(&among, args.party.id, &options, entropy, None)
    };
    // The transport is kept until the new share is written: closing it waits for the peers,
    // and a share that others hold the new epoch of must not wait on that.
    let (new, transport): (Result<ThresholdShare, _>, _) = match (&held, threshold) {
        (AnyShare::Additive(share), Some(t)) => {
            let sizes =
                Sizes::new(share.public.bits(), share.members.len(), t).map_err(CliError::from)?;
            let mut transport = connect(&sizes, false, entropy.as_mut())?;
            let new = reshare(&mut *transport, share, t, timeout, entropy.as_mut());
            (new, Some(transport))
        }
        (AnyShare::Threshold(share), None) => {
            let sizes = share.public.sizes().map_err(CliError::from)?;
            let mut transport = connect(&sizes, true, entropy.as_mut())?;
            let new = refresh(&mut *transport, share, timeout, entropy.as_mut());
            (new, Some(transport))
        }
        (share, _) => (
            Err(hourglass_dkg::ThresholdError::OtherKind {
                party: args.party.id,
                threshold: matches!(share, AnyShare::Threshold(_)),
            }
            .into()),
            None,
        ),
    };
    let new = new.map_err(CliError::from)?;
    // The same party's share moving to a new epoch: replaced in place, atomically.
    write_output_replacing(&share_file, new.to_json().as_bytes(), Sensitivity::Secret)?;
    drop(transport);
    let report = ThresholdReport {
        party: args.party.id,
        threshold: new.public.threshold,
        epoch: new.public.epoch,
        used: new.public.members.clone(),
        excluded: Vec::new(),
        seconds: start.elapsed().as_secs_f64(),
    };
    if args.json {
        print_json(&report)?;
    } else {
        eprintln!(
            "party {}: share of epoch {} (threshold t = {}) written to {} (mode 0600)",
            args.party.id,
            report.epoch,
            report.threshold,
            share_file.display()
        );
    }
    Ok(())
}

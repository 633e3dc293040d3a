//! `hourglass dkg party-sign`: one party's part of a joint or threshold signature.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use hourglass_arith::entropy::EntropyArgs;
use hourglass_dkg::bounds::FrameBounds;
use hourglass_dkg::keyshare::AnyShare;
use hourglass_dkg::sign::{sign_jointly, sign_threshold};
use hourglass_dkg::tls::TlsOptions;
use hourglass_dkg::PartyId;

use super::cluster_files::PartyShareArgs;
use super::options::{connect_session, deviation, seconds, SchemeArgs, NOT_THRESHOLD_SHARES};
use super::reports::{print_json, ThresholdReport};
use crate::cli_error::{CliError, Usage};
use crate::files::{read_input, write_output, Sensitivity};

#[derive(Args, Debug)]
pub(super) struct PartySignArgs {
    #[command(flatten)]
    party: PartyShareArgs,
    /// File to sign.
    #[arg(short, long)]
    input: PathBuf,
    /// Write the signature here (any party may; all compute the same signature).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// The parties that sign, with a threshold share (at least t + 1, this one among them;
    /// every signer gives the same list).
    #[arg(long, value_delimiter = ',', value_name = "ID,ID,...")]
    signers: Option<Vec<PartyId>>,
    #[command(flatten)]
    scheme: SchemeArgs,
    /// Seconds to wait for the other parties.
    #[arg(long, default_value_t = 30.0)]
    timeout: f64,
    /// Print what was done as JSON on standard output (the signers used and left out).
    #[arg(long)]
    json: bool,
    /// TESTING ONLY: deviate from the protocol (what `dkg sign --adversary` runs).
    #[arg(long, value_name = "BEHAVIOUR", hide = true)]
    deviate: Option<String>,
    #[command(flatten)]
    entropy: EntropyArgs,
}

/// Runs `hourglass dkg party-sign`.
pub(super) fn run(args: PartySignArgs) -> Result<(), CliError> {
    let (scheme, hash) = args.scheme.parse()?;
    let how = deviation(args.deviate.as_deref())?;
    let (config, _, share) = args.party.load()?;
    let data = read_input(&args.input, "input")?;
    let digest = hash.digest(&data);
    let timeout = seconds(args.timeout, "--timeout")?;
    let mut entropy = args.entropy.source()?;
    let start = Instant::now();
    // The transport is kept until the signature is written: closing it waits for the peers.
    let (sig, report, transport) = match &share {
        AnyShare::Additive(share) => {
            if args.signers.as_ref().is_some_and(|s| *s != share.members) {
                return Err(Usage::Conflict(NOT_THRESHOLD_SHARES).into());
            }
            let options = TlsOptions {
                connect_timeout: timeout,
                ..TlsOptions::new(FrameBounds::signing(
                    share.public.bits(),
                    share.members.len(),
                    hash,
                ))
            };
            // Only the key's members: a party the generation left out (killed, removed) is
            // still in the cluster's config, and waiting for it would cost the whole timeout.
            let among = config.among(&share.members).map_err(CliError::from)?;
            let mut transport =
                connect_session(&among, args.party.id, &options, entropy.as_mut(), how)?;
            let sig = sign_jointly(
                &mut *transport,
                share,
                scheme,
                hash,
                &digest,
                timeout,
                entropy.as_mut(),
            )
            .map_err(CliError::from)?;
            let report = ThresholdReport {
                party: args.party.id,
                threshold: share.members.len() - 1,
                epoch: 0,
                used: share.members.clone(),
                excluded: Vec::new(),
                seconds: start.elapsed().as_secs_f64(),
            };
            (sig, report, transport)
        }
        AnyShare::Threshold(share) => {
            let signers = args.signers.clone().ok_or(Usage::Conflict(
                "a threshold share signs with the parties named in --signers (the same list at every signer)",
            ))?;
            share
                .public
                .check_signers(&signers)
                .map_err(CliError::from)?;
            let sizes = share.public.sizes().map_err(CliError::from)?;
            let options = TlsOptions {
                connect_timeout: timeout,
                ..TlsOptions::new(FrameBounds::threshold_signing(&sizes, signers.len(), hash))
            };
            let among = config.among(&signers).map_err(CliError::from)?;
            let mut transport =
                connect_session(&among, args.party.id, &options, entropy.as_mut(), how)?;
            let signed = sign_threshold(
                &mut *transport,
                share,
                &signers,
                scheme,
                hash,
                &digest,
                timeout,
                entropy.as_mut(),
            )
            .map_err(CliError::from)?;
            for party in &signed.excluded {
                eprintln!(
                    "hourglass: warning: party {party}'s partial signature is wrong (its proof of correctness does not verify); it was left out and parties {:?} signed",
                    signed.used
                );
            }
            let report = ThresholdReport {
                party: args.party.id,
                threshold: share.public.threshold,
                epoch: share.public.epoch,
                used: signed.used.clone(),
                excluded: signed.excluded.clone(),
                seconds: start.elapsed().as_secs_f64(),
            };
            (signed.signature, report, transport)
        }
    };
    if let Some(out) = &args.out {
        write_output(out, &sig, Sensitivity::Public)?;
    }
    drop(transport);
    if args.json {
        print_json(&report)?;
    }
    Ok(())
}

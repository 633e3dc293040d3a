//! `hourglass dkg sign`: signs a file with the shares in a cluster directory, running every
//! signer's `dkg party-sign` as a process.

use std::path::{Path, PathBuf};

use clap::Args;
use hourglass_dkg::adversary::parse_adversary;
use hourglass_dkg::cluster::RELAY_ID;
use hourglass_dkg::keyshare::AnyShare;
use hourglass_dkg::PartyId;

use super::cluster_files::{held_shares, share_path, shares_together};
use super::options::{SchemeArgs, NOT_THRESHOLD_SHARES};
use super::processes::{run_parties, Links};
use super::reports::ThresholdReport;
use crate::cli_error::{CliError, InputProblem, IoOp, LocalRun, Usage};
use crate::files::{check_output, read_input, write_output, Sensitivity};
use crate::progress::ReportArgs;

#[derive(Args, Debug)]
pub(super) struct SignArgs {
    /// Cluster directory (party-I.toml and party-I.share.json files).
    #[arg(long)]
    cluster: PathBuf,
    /// The parties that sign, with threshold shares (at least t + 1; default: every share in
    /// the directory).
    #[arg(long, value_delimiter = ',', value_name = "ID,ID,...")]
    signers: Option<Vec<PartyId>>,
    /// Run signer ID deviating from the protocol, for tests and demonstrations (repeatable,
    /// one signer each): wrong-partial (a wrong partial signature: every one is named and left
    /// out while t + 1 valid ones remain), or any behaviour of dkg local --adversary.
    #[arg(long, value_name = "ID:BEHAVIOUR")]
    adversary: Vec<String>,
    /// File to sign.
    #[arg(short, long)]
    input: PathBuf,
    /// Signature output.
    #[arg(short, long)]
    out: PathBuf,
    #[command(flatten)]
    scheme: SchemeArgs,
    #[command(flatten)]
    report: ReportArgs,
}

/// Runs `hourglass dkg sign`.
pub(super) fn run(args: SignArgs) -> Result<(), CliError> {
    args.scheme.parse()?;
    check_output(&args.out)?;
    let ids = held_shares(&args.cluster)?;
    let first = AnyShare::load(&share_path(&args.cluster, ids[0])).map_err(CliError::from)?;
    let (signers, threshold) = match &first {
        AnyShare::Additive(share) => {
            // Every party with a share in the directory signs.
            if share.members != ids {
                return Err(CliError::input(
                    &args.cluster,
                    InputProblem::OtherShares {
                        members: share.members.clone(),
                        held: ids,
                    },
                ));
            }
            if args.signers.as_ref().is_some_and(|s| *s != share.members) {
                return Err(Usage::Conflict(NOT_THRESHOLD_SHARES).into());
            }
            (ids.clone(), None)
        }
        AnyShare::Threshold(share) => {
            let signers = args.signers.clone().unwrap_or_else(|| ids.clone());
            share
                .public
                .check_signers(&signers)
                .map_err(CliError::from)?;
            if let Some(&party) = signers.iter().find(|s| !ids.contains(s)) {
                return Err(CliError::input(
                    &args.cluster,
                    InputProblem::NoShareOf { party },
                ));
            }
            (signers, Some(share.public.threshold))
        }
    };
    let mut sorted = signers.clone();
    sorted.sort_unstable();
    // Check the shares belong together before starting any process.
    shares_together(&args.cluster, &sorted)?;
    let mut adversary = Vec::with_capacity(args.adversary.len());
    for spec in &args.adversary {
        let (id, how) = parse_adversary(spec)?;
        if !sorted.contains(&id) {
            return Err(
                Usage::value("--adversary", spec, format!("party {id} is not a signer")).into(),
            );
        }
        if adversary.iter().any(|(a, _)| *a == id) {
            return Err(
                Usage::value("--adversary", spec, format!("party {id} is named twice")).into(),
            );
        }
        adversary.push((id, how));
    }
    let ignore: Vec<PartyId> = adversary.iter().map(|(id, _)| *id).collect();
    let writer = *sorted
        .iter()
        .find(|id| !ignore.contains(id))
        .unwrap_or(&sorted[0]);
    let tmp = tempfile::Builder::new()
        .prefix(".dkg-sign.")
        .tempdir_in(
            args.out
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new(".")),
        )
        .map_err(|e| CliError::io(IoOp::WriteBeside, &args.out, e))?;
    let sig_tmp = tmp.path().join("sig");
    let list = sorted
        .iter()
        .map(PartyId::to_string)
        .collect::<Vec<_>>()
        .join(",");
    let outputs = run_parties(
        &args.cluster,
        &sorted,
        &Links::of_cluster(&args.cluster),
        "joint signing",
        |id| {
            let mut a = vec![
                "party-sign".to_string(),
                "-i".into(),
                args.input.display().to_string(),
                "--json".into(),
            ];
            a.extend(args.scheme.to_args());
            if threshold.is_some() {
                a.extend(["--signers".into(), list.clone()]);
            }
            if id == writer {
                a.extend(["-o".into(), sig_tmp.display().to_string()]);
            }
            if let Some((_, how)) = adversary.iter().find(|(a, _)| *a == id) {
                a.extend(["--deviate".into(), how.name().into()]);
            }
            a
        },
        &ignore,
    )?;
    let sig = read_input(&sig_tmp, "signature")?;
    let signed: ThresholdReport = outputs
        .iter()
        .find(|(id, _)| *id == writer)
        .map(|(id, out)| {
            serde_json::from_slice(out).map_err(|source| LocalRun::Report { party: *id, source })
        })
        .ok_or(LocalRun::NoneFinished)??;
    // In a star, what the relay forwarded (it ran among the signers).
    let relay = outputs
        .iter()
        .find(|(id, _)| *id == RELAY_ID)
        .and_then(|(_, out)| serde_json::from_slice::<serde_json::Value>(out).ok());
    write_output(&args.out, &sig, Sensitivity::Public)?;
    for party in &signed.excluded {
        eprintln!(
            "hourglass: warning: party {party}'s partial signature was wrong (its proof of correctness does not verify): it was left out, and parties {:?} signed",
            signed.used
        );
    }
    args.report.result(serde_json::json!({
        "signature": args.out, "input": args.input, "parties": sorted, "bytes": sig.len(),
        "scheme": if args.scheme.pss { "pss" } else { "pkcs1v15" },
        "threshold": threshold, "used": signed.used, "excluded": signed.excluded,
        "topology": if relay.is_some() { "star" } else { "mesh" }, "relay": relay,
    }));
    args.report.info(format_args!(
        "{} parties signed {} ({} bytes) -> {}",
        signed.used.len(),
        args.input.display(),
        sig.len(),
        args.out.display()
    ));
    Ok(())
}

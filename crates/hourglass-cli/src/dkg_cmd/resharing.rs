//! The coordinator of `dkg reshare` and `dkg refresh`: checks that the cluster directory's shares
//! go together, then runs every party's `dkg party-reshare` or `dkg party-refresh` as a process.

use std::path::Path;
use std::time::Instant;

use hourglass_dkg::cluster::RELAY_ID;
use hourglass_dkg::keyshare::AnyShare;
use hourglass_dkg::threshold::Sizes;

use super::cluster_files::{held_shares, shares_together};
use super::options::seconds;
use super::processes::{run_parties, Links};
use super::reports::ThresholdReport;
use crate::cli_error::{CliError, InputProblem, LocalRun};
use crate::progress::ReportArgs;

/// Reshares (`threshold`: the new t) or refreshes (`None`) the shares in `cluster`.
pub(super) fn run(
    cluster: &Path,
    threshold: Option<usize>,
    timeout: f64,
    report: &ReportArgs,
) -> Result<(), CliError> {
    seconds(timeout, "--timeout")?;
    let ids = held_shares(cluster)?;
    let shares = shares_together(cluster, &ids)?;
    let members = shares[0].members().to_vec();
    if members != ids {
        return Err(CliError::input(
            cluster,
            InputProblem::OtherShares { members, held: ids },
        ));
    }
    // The library's rules, before any process starts: the kind of share, and the threshold.
    let me = ids[0];
    let t = match (&shares[0], threshold) {
        (AnyShare::Additive(s), Some(t)) => {
            Sizes::new(s.public.bits(), s.members.len(), t).map_err(CliError::from)?;
            t
        }
        (AnyShare::Threshold(s), None) => s.public.threshold,
        (share, _) => {
            return Err(CliError::from(hourglass_dkg::Error::from(
                hourglass_dkg::ThresholdError::OtherKind {
                    party: me,
                    threshold: matches!(share, AnyShare::Threshold(_)),
                },
            )))
        }
    };
    let (what, command) = match threshold {
        Some(_) => ("the reshare", "party-reshare"),
        None => ("the refresh", "party-refresh"),
    };
    let start = Instant::now();
    let outputs = run_parties(
        cluster,
        &ids,
        &Links::of_cluster(cluster),
        what,
        |_| {
            let mut a = vec![
                command.to_string(),
                "--json".into(),
                "--timeout".into(),
                timeout.to_string(),
            ];
            if let Some(t) = threshold {
                a.extend(["--threshold".into(), t.to_string()]);
            }
            a
        },
        &[],
    )?;
    // In a star, what the relay forwarded (it ran among every member).
    let relay = outputs
        .iter()
        .find(|(id, _)| *id == RELAY_ID)
        .and_then(|(_, out)| serde_json::from_slice::<serde_json::Value>(out).ok());
    let first: ThresholdReport = outputs
        .iter()
        .find(|(id, _)| *id != RELAY_ID)
        .map(|(id, out)| {
            serde_json::from_slice(out).map_err(|source| LocalRun::Report { party: *id, source })
        })
        .ok_or(LocalRun::NoneFinished)??;
    let elapsed = start.elapsed().as_secs_f64();
    report.result(serde_json::json!({
        "cluster": cluster, "parties": ids, "threshold": t, "epoch": first.epoch,
        "seconds": elapsed, "topology": if relay.is_some() { "star" } else { "mesh" },
        "relay": relay,
    }));
    report.info(format_args!(
        "{} parties {} the key to threshold t = {t} (epoch {}) in {elapsed:.1} s: any {} of them sign, any {t} learn nothing",
        ids.len(),
        if threshold.is_some() { "reshared" } else { "refreshed" },
        first.epoch,
        t + 1
    ));
    report.info(format_args!(
        "  shares: {}/party-I.share.json (version 2, rewritten in place, mode 0600)",
        cluster.display()
    ));
    Ok(())
}

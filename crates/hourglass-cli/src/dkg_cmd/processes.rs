//! The party processes a coordinator (`dkg local`, `dkg sign`, `dkg reshare`, `dkg refresh`)
//! runs: this executable again, one process per party.

use std::path::{Path, PathBuf};
use std::process::{Child, Command as Process, Stdio};

use hourglass_dkg::cluster::RELAY_ID;
use hourglass_dkg::limits::{ensure_open_files, PROCESS_OPEN_FILES};
use hourglass_dkg::PartyId;

use crate::cli_error::{CliError, LocalRun};

/// Open files a coordinator of `parties` party processes (`dkg local`, `dkg sign`) needs: the
/// standard output and error pipes of every party, kept until it ends, and the margin of any
/// process (the cluster's files while they are written, the pipe of a process being started).
pub(super) fn coordinator_open_files(parties: usize) -> u64 {
    2 * parties as u64 + PROCESS_OPEN_FILES
}

pub(super) fn spawn_self(args: &[String]) -> Result<Child, CliError> {
    let exe = std::env::current_exe().map_err(|source| LocalRun::Start {
        action: "find the hourglass executable",
        source,
    })?;
    Process::new(exe)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|source| {
            LocalRun::Start {
                action: "start a party process",
                source,
            }
            .into()
        })
}

/// The party processes of a local run, killed if the coordinator stops early.
pub(super) struct Parties(pub(super) Vec<(PartyId, Option<Child>)>);

impl Parties {
    /// Waits for every process; the standard output of each that succeeded (except
    /// `ignore`, a party killed on purpose), or an error with every failure's message.
    pub(super) fn wait_all(
        &mut self,
        what: &'static str,
        ignore: &[PartyId],
    ) -> Result<Vec<(PartyId, Vec<u8>)>, CliError> {
        let mut outputs = Vec::new();
        let mut failures = Vec::new();
        for (id, child) in &mut self.0 {
            let Some(child) = child.take() else { continue };
            let output = child
                .wait_with_output()
                .map_err(|source| LocalRun::Wait { party: *id, source })?;
            if ignore.contains(id) {
                continue;
            }
            if output.status.success() {
                outputs.push((*id, output.stdout));
            } else {
                failures.push((
                    *id,
                    output.status.code(),
                    String::from_utf8_lossy(&output.stderr).trim().to_string(),
                ));
            }
        }
        if failures.is_empty() {
            Ok(outputs)
        } else {
            Err(LocalRun::Failed { what, failures }.into())
        }
    }
}

impl Drop for Parties {
    fn drop(&mut self) {
        for (_, child) in &mut self.0 {
            if let Some(c) = child {
                let _ = c.kill();
                let _ = c.wait();
            }
        }
    }
}

/// How the parties of a session run by [`run_parties`] connect.
pub(super) enum Links {
    /// Each to each, or as their configurations say without a relay process of this
    /// coordinator's.
    AsConfigured,
    /// Through a relay this coordinator runs first (`dkg relay` with this configuration,
    /// among the session's parties): a star cluster's directory holds its `relay.toml`.
    Relay(PathBuf),
}

impl Links {
    /// A relay for a session of the cluster in `dir` when it is a star: when the directory
    /// holds a `relay.toml` (written by `dkg init` and `dkg local` with `--topology star`).
    pub(super) fn of_cluster(dir: &Path) -> Links {
        let relay = dir.join("relay.toml");
        if relay.is_file() {
            Links::Relay(relay)
        } else {
            Links::AsConfigured
        }
    }
}

/// Runs `dkg party-ARGS` for each party of `ids` in the cluster directory, after the relay
/// of `links` if there is one, and returns the standard output of each party, and of the relay
/// as [`RELAY_ID`] (`ignore`: a deviating party, whose outcome does not count).
pub(super) fn run_parties(
    cluster: &Path,
    ids: &[PartyId],
    links: &Links,
    what: &'static str,
    args_of: impl Fn(PartyId) -> Vec<String>,
    ignore: &[PartyId],
) -> Result<Vec<(PartyId, Vec<u8>)>, CliError> {
    ensure_open_files(coordinator_open_files(ids.len() + 1)).map_err(hourglass_dkg::Error::from)?;
    let mut parties = Parties(Vec::new());
    if let Links::Relay(config) = links {
        let members = ids
            .iter()
            .map(PartyId::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let a = [
            "dkg",
            "relay",
            "--config",
            &config.display().to_string(),
            "--members",
            &members,
            "--json",
        ]
        .map(String::from);
        parties.0.push((RELAY_ID, Some(spawn_self(&a)?)));
    }
    for &id in ids {
        let mut a = vec![
            "dkg".to_string(),
            String::new(),
            "--config".into(),
            cluster
                .join(format!("party-{id}.toml"))
                .display()
                .to_string(),
            "--id".into(),
            id.to_string(),
        ];
        let extra = args_of(id);
        a[1] = extra[0].clone();
        a.extend(extra.into_iter().skip(1));
        parties.0.push((id, Some(spawn_self(&a)?)));
    }
    parties.wait_all(what, ignore)
}

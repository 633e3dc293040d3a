//! `hourglass dkg relay`: the relay of a star cluster, which forwards the members' sealed
//! frames and holds no secret.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use hourglass_dkg::bounds::FrameBounds;
use hourglass_dkg::cluster::ClusterConfig;
use hourglass_dkg::tls::TlsOptions;
use hourglass_dkg::PartyId;

use super::options::{seconds, NetSimArgs};
use crate::cli_error::CliError;
use crate::progress::ReportArgs;

#[derive(Args, Debug)]
pub(super) struct RelayArgs {
    /// The relay's configuration (`relay.toml` of `dkg init --topology star`: its key is the
    /// `[relay]` certificate's).
    #[arg(long)]
    config: PathBuf,
    /// The members of the session it relays (default: every party of the cluster, as a
    /// generation needs; `dkg sign` names the signers).
    #[arg(long, value_delimiter = ',', value_name = "ID,ID,...")]
    members: Option<Vec<PartyId>>,
    /// Seconds to wait for every member to connect.
    #[arg(long, default_value_t = 30.0)]
    connect_timeout: f64,
    #[command(flatten)]
    net: NetSimArgs,
    #[command(flatten)]
    report: ReportArgs,
}

/// Runs `hourglass dkg relay`.
pub(super) fn run(args: RelayArgs) -> Result<(), CliError> {
    let config = ClusterConfig::load(&args.config).map_err(CliError::from)?;
    let members = args.members.clone().unwrap_or_else(|| config.ids());
    // Refused before anything is announced: too few members, one named twice or a stranger.
    config.relay_hub(&members).map_err(CliError::from)?;
    // The relay sees sealed frames only: their lengths are bounded by the longest of every
    // session of the cluster (a generation's, a signature's, a reshare's).
    let bounds =
        FrameBounds::any_session(&config.generation, config.ids().len()).map_err(CliError::from)?;
    let connect_timeout = seconds(args.connect_timeout, "--connect-timeout")?;
    let options = TlsOptions {
        connect_timeout,
        sim: args.net.sim()?,
        ..TlsOptions::new(bounds)
    };
    // A generation sends a frame at least every round timeout while it runs: silence for two
    // of them (after the connection time) means it is over or stalled.
    let idle = connect_timeout + Duration::from_millis(config.generation.timeout_ms) * 2;
    args.report.info(format_args!(
        "relay of cluster {:?}: waiting for {} members",
        config.name,
        members.len()
    ));
    let start = Instant::now();
    let report =
        hourglass_dkg::star::serve(&config, &members, &options, idle).map_err(CliError::from)?;
    let seconds = start.elapsed().as_secs_f64();
    args.report.result(serde_json::json!({
        "members": members, "frames": report.frames, "bytes": report.bytes,
        "dropped": report.dropped, "seconds": seconds,
    }));
    args.report.info(format_args!(
        "relay: forwarded {} frames ({} bytes) among {} members in {seconds:.1} s, dropped {}",
        report.frames,
        report.bytes,
        members.len(),
        report.dropped
    ));
    Ok(())
}

//! `hourglass dkg init`: writes a ready cluster for testing on one machine.

use std::path::PathBuf;

use clap::Args;
use hourglass_dkg::cluster::{free_loopback_base_port, init_cluster_with, Topology};

use super::options::{GenerationArgs, TopologyArgs};
use crate::cli_error::{CliError, Usage};
use crate::files::DirOutput;

#[derive(Args, Debug)]
pub(super) struct InitArgs {
    /// Number of parties.
    #[arg(long)]
    parties: usize,
    #[command(flatten)]
    generation: GenerationArgs,
    /// Output directory (must not exist or be empty).
    #[arg(short, long)]
    out: PathBuf,
    /// First loopback port (default: a free range).
    #[arg(long)]
    base_port: Option<u16>,
    /// Cluster name (mixed into the session identifier).
    #[arg(long, default_value = "test-cluster")]
    name: String,
    #[command(flatten)]
    topology: TopologyArgs,
}

/// Runs `hourglass dkg init`.
pub(super) fn run(args: InitArgs) -> Result<(), CliError> {
    let settings = args.generation.settings()?;
    if args.parties < 3 || args.parties > 256 {
        return Err(Usage::range("--parties", "be between 3 and 256").into());
    }
    let topology = args.topology.topology(args.parties);
    let ports = args.parties + usize::from(topology == Topology::Star);
    let base = match args.base_port {
        Some(p) => p,
        None => free_loopback_base_port(ports).map_err(CliError::from)?,
    };
    let dir = DirOutput::create(&args.out)?;
    let staged = init_cluster_with(
        dir.path(),
        args.parties,
        &settings,
        base,
        &args.name,
        topology,
    )
    .map_err(CliError::from)?;
    dir.commit()?;
    let configs = staged
        .iter()
        .map(|c| args.out.join(c.file_name().unwrap_or_default()));
    println!(
        "wrote a {}-party cluster in {} (ports {}-{}):",
        args.parties,
        args.out.display(),
        base,
        u32::from(base) + ports as u32 - 1
    );
    if topology == Topology::Star {
        println!(
            "  hourglass dkg relay --config {}",
            args.out.join("relay.toml").display()
        );
    }
    for (i, c) in configs.enumerate() {
        println!(
            "  hourglass dkg party --config {} --id {}",
            c.display(),
            i + 1
        );
    }
    Ok(())
}

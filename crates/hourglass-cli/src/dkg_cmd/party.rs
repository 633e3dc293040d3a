//! `hourglass dkg party`: one party of a generation.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use hourglass_arith::entropy::EntropyArgs;
use hourglass_dkg::bounds::FrameBounds;
use hourglass_dkg::cluster::ClusterConfig;
use hourglass_dkg::protocol::{generate_signed, Progress, Report, SignedGeneration};
use hourglass_dkg::tls::{TlsOptions, TlsTransport};
use hourglass_dkg::PartyId;
use hourglass_rsa::encoding::{encode_public_key, KeyFormat};

use super::cluster_files::{config_dir, share_path};
use super::options::{deviating_signer, deviation, seconds, NetSimArgs};
use super::reports::{print_json, PartyReport};
use crate::cli_error::{CliError, OutputProblem};
use crate::files::{check_output, write_output, write_shared_output, Sensitivity};

#[derive(Args, Debug)]
pub(super) struct PartyArgs {
    /// This party's cluster configuration.
    #[arg(long)]
    config: PathBuf,
    /// This party's id (must match the key in the configuration).
    #[arg(long)]
    id: PartyId,
    /// Directory for public.pem, transcript.json (signed by every member) and the share file
    /// (default: the configuration's directory).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Seconds to wait for all parties to connect (also the time each TLS handshake has).
    #[arg(long, default_value_t = 30.0)]
    connect_timeout: f64,
    #[command(flatten)]
    net: NetSimArgs,
    /// Print the report as JSON on standard output.
    #[arg(long)]
    json: bool,
    /// No progress on standard error.
    #[arg(short, long)]
    quiet: bool,
    /// TESTING ONLY: deviate from the protocol (what `dkg local --adversary` runs).
    #[arg(long, value_name = "BEHAVIOUR", hide = true)]
    deviate: Option<String>,
    #[command(flatten)]
    entropy: EntropyArgs,
}

fn sha256_hex(data: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(data))
}

/// This process's peak resident memory so far, in bytes: `getrusage(RUSAGE_SELF)`'s
/// `ru_maxrss` (KiB on Linux and the BSDs, bytes on macOS); `None` where it is not available.
fn peak_rss_bytes() -> Option<u64> {
    #[cfg(unix)]
    {
        // SAFETY: an all-zero `rusage` is a valid value (integers and timevals), and
        // getrusage writes one `rusage` through the pointer, which points to this local.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; RUSAGE_SELF is a valid `who`.
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut usage) } != 0 {
            return None;
        }
        let max = u64::try_from(usage.ru_maxrss).ok()?;
        let unit = if cfg!(target_os = "macos") { 1 } else { 1024 };
        Some(max.saturating_mul(unit))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Runs `hourglass dkg party`.
pub(super) fn run(args: PartyArgs) -> Result<(), CliError> {
    let config = ClusterConfig::load(&args.config).map_err(CliError::from)?;
    let out_dir = args.out.clone().unwrap_or_else(|| config_dir(&config));
    if !out_dir.is_dir() {
        return Err(CliError::output(out_dir, OutputProblem::NoDirectory));
    }
    // Before the generation: a share already there is never overwritten (unless --force).
    check_output(&share_path(&out_dir, args.id))?;
    let bounds =
        FrameBounds::generation(&config.generation, config.ids().len()).map_err(CliError::from)?;
    let options = TlsOptions {
        connect_timeout: seconds(args.connect_timeout, "--connect-timeout")?,
        sim: args.net.sim()?,
        ..TlsOptions::new(bounds)
    };
    let mut entropy = args.entropy.source()?;
    let quiet = args.quiet;
    let me = args.id;
    let how = deviation(args.deviate.as_deref())?;
    let signer = config.transcript_signer().map_err(CliError::from)?;
    let (mut transport, missing) = match &config.relay {
        None => {
            if !quiet {
                eprintln!(
                    "party {me}: connecting to {} parties of cluster {:?}",
                    config.parties.len() - 1,
                    config.name
                );
            }
            let tls = TlsTransport::connect(&config, me, &options).map_err(CliError::from)?;
            let missing = tls.missing();
            (deviating_signer(tls, how, &signer), missing)
        }
        Some(relay) => {
            if !quiet {
                eprintln!(
                    "party {me}: connecting to the relay at {} of cluster {:?} ({} parties, frames sealed end to end)",
                    relay.address,
                    config.name,
                    config.parties.len()
                );
            }
            let star = hourglass_dkg::star::join(&config, me, &options, &signer, entropy.as_mut())
                .map_err(CliError::from)?;
            let missing = star.missing();
            (deviating_signer(star, how, &signer), missing)
        }
    };
    if !missing.is_empty() && !quiet {
        eprintln!("party {me}: parties {missing:?} did not connect; continuing without them");
    }
    let mut last = Instant::now();
    let mut progress = |p: &Progress| {
        if quiet {
            return;
        }
        match p {
            Progress::Started {
                epoch,
                members,
                sieve_bound,
                expected,
            } => eprintln!(
                "party {me}: generation {epoch} with parties {members:?}, sieving to {sieve_bound}, ~{expected:.0} candidate pairs expected"
            ),
            Progress::Batch { candidates, tests } => {
                if last.elapsed() >= Duration::from_secs(2) {
                    last = Instant::now();
                    eprintln!("party {me}: {candidates} candidate pairs, {tests} biprimality tests");
                }
            }
            Progress::Restart { removed } => {
                for (party, reason) in removed {
                    eprintln!("party {me}: party {party} failed ({reason})");
                }
                eprintln!("party {me}: restarting without them");
            }
        }
    };
    let SignedGeneration {
        generated,
        transcript,
    } = generate_signed(
        &mut *transport,
        &config.ids(),
        &config.generation,
        &config.name,
        &signer,
        entropy.as_mut(),
        &mut progress,
    )
    .map_err(CliError::from)?;
    let share = &generated.share;
    let public_pem = encode_public_key(&share.public, KeyFormat::Pem)?;
    let public_path = out_dir.join("public.pem");
    let share_file = share_path(&out_dir, me);
    write_output(&share_file, share.to_json().as_bytes(), Sensitivity::Secret)?;
    // Every party of a local cluster writes the same public files into one directory.
    write_shared_output(&public_path, &public_pem)?;
    // The public record anyone can check the modulus against (e.g. for a public puzzle set),
    // with every member's signature (each checked above); the same bytes at every member.
    write_shared_output(
        &out_dir.join("transcript.json"),
        transcript.to_json().as_bytes(),
    )?;
    // The outputs are safe; closing delivers this party's last frames, which may wait for a
    // busy relay (up to the transport's close limit).
    drop(transport);
    let report: &Report = &generated.report;
    let summary = PartyReport {
        party: me,
        members: share.members.clone(),
        bits: share.public.bits(),
        n_sha256: sha256_hex(&share.public.n().to_digits::<u8>(rug::integer::Order::Msf)),
        candidates: report.candidates,
        candidates_all_epochs: report.candidates_all_epochs,
        expected_candidates: report.expected_candidates,
        biprimality_tests: report.biprimality_tests,
        expected_tests: report.expected_tests,
        trial_bound: report.trial_bound,
        batches: report.batches,
        bytes_sent: report.bytes_sent,
        seconds: report.elapsed.as_secs_f64(),
        peak_rss_bytes: peak_rss_bytes(),
        sieve_bound: report.sieve_bound,
        removed: report
            .removed
            .iter()
            .map(|(party, why)| (*party, why.to_string()))
            .collect(),
        public_key: public_path.display().to_string(),
        share: share_file.display().to_string(),
    };
    if args.json {
        print_json(&summary)?;
    } else {
        println!(
            "party {me}: {}-bit modulus with parties {:?} in {:.1} s ({} candidate pairs in {} batches, {} biprimality tests, {:.1} MB sent, peak memory {})",
            summary.bits,
            summary.members,
            summary.seconds,
            summary.candidates,
            summary.batches,
            summary.biprimality_tests,
            summary.bytes_sent as f64 / 1e6,
            summary
                .peak_rss_bytes
                .map_or("unknown".to_string(), |b| format!("{:.1} MB", b as f64 / 1e6))
        );
        println!("  public key: {}", summary.public_key);
        println!(
            "  share:      {} (mode 0600; keep it secret)",
            summary.share
        );
    }
    Ok(())
}

//! `hourglass dkg local`: every party of a fresh loopback cluster as separate processes, and
//! a summary of the run.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Args;
use hourglass_dkg::adversary::parse_adversary;
use hourglass_dkg::cluster::{free_loopback_base_port, init_cluster_with, Topology, RELAY_ID};
use hourglass_dkg::limits::ensure_open_files;
use hourglass_dkg::transcript::{read_certificates, SignedTranscript};
use hourglass_dkg::PartyId;
use serde::Serialize;

use super::options::{seconds, GenerationArgs, NetSimArgs, TopologyArgs};
use super::processes::{coordinator_open_files, spawn_self, Parties};
use super::reports::PartyReport;
use crate::cli_error::{CliError, LocalRun, Usage};
use crate::files::DirOutput;
use crate::progress::ReportArgs;

#[derive(Args, Debug)]
pub(super) struct LocalArgs {
    /// Number of parties.
    #[arg(long, default_value_t = 3)]
    parties: usize,
    #[command(flatten)]
    generation: GenerationArgs,
    /// Cluster directory to create (configs, keys, certs, shares, public.pem, transcript.json).
    #[arg(short, long)]
    out: PathBuf,
    /// Seconds each party waits for the others to connect (its `dkg party --connect-timeout`;
    /// raise it for large clusters on a loaded machine).
    #[arg(long, default_value_t = 30.0)]
    connect_timeout: f64,
    #[command(flatten)]
    net: NetSimArgs,
    /// Kill this party's process during the generation (failure-tolerance demonstration).
    #[arg(long)]
    kill: Option<PartyId>,
    /// When to kill it, in milliseconds after start.
    #[arg(long, default_value_t = 1000)]
    kill_after_ms: u64,
    /// Run party ID deviating from the protocol, for tests and demonstrations (repeatable):
    /// false-abort (accuses every other party), garbage (malformed frames), silent (stops
    /// answering mid-run), wrong-share (a wrong share of d in the final test), wrong-signature
    /// (a damaged signature of the transcript), withhold-transcript-signature (its signature
    /// to the lowest other member only), equivocate-transcript-signature (a second valid
    /// signature to the others), wrong-partial (a wrong partial power of the final test
    /// message: as wrong-share here; in dkg sign with threshold shares, the liar is named and
    /// left out). The others finish without it, or stop (naming it where they can tell); they
    /// never remove an honest party, never produce a wrong key, and never finish with
    /// transcript signatures the other honest members do not hold.
    #[arg(long, value_name = "ID:BEHAVIOUR")]
    adversary: Vec<String>,
    #[command(flatten)]
    topology: TopologyArgs,
    #[command(flatten)]
    report: ReportArgs,
    /// INSECURE: derive each party's randomness from this text and its id (reproducible tests
    /// only; anyone who knows the text knows the factors).
    #[arg(long, value_name = "TEXT")]
    seed: Option<String>,
}

/// The median and the largest of some per-party figures (the lower median for an even count,
/// so that it is one party's figure).
#[derive(Debug, Clone, Copy, Serialize)]
struct Spread {
    median: u64,
    max: u64,
}

impl Spread {
    fn of(values: impl IntoIterator<Item = u64>) -> Option<Spread> {
        let mut v: Vec<u64> = values.into_iter().collect();
        v.sort_unstable();
        Some(Spread {
            median: *v.get((v.len().checked_sub(1)?) / 2)?,
            max: *v.last()?,
        })
    }
}

/// Runs `hourglass dkg local`.
pub(super) fn run(args: LocalArgs) -> Result<(), CliError> {
    let settings = args.generation.settings()?;
    if args.parties < 3 || args.parties > 256 {
        return Err(Usage::range("--parties", "be between 3 and 256").into());
    }
    if let Some(k) = args.kill {
        if k == 0 || k as usize > args.parties {
            return Err(Usage::value("--kill", k, "no such party").into());
        }
    }
    let mut adversaries = Vec::new();
    for spec in &args.adversary {
        let (id, how) = parse_adversary(spec)?;
        if id == 0 || id as usize > args.parties || adversaries.iter().any(|(a, _)| *a == id) {
            return Err(Usage::value(
                "--adversary",
                spec,
                format!("party {id} does not exist or is named twice"),
            )
            .into());
        }
        adversaries.push((id, how));
    }
    args.net.sim()?;
    seconds(args.connect_timeout, "--connect-timeout")?;
    // Children inherit the raised limit, which covers each party's own need too.
    ensure_open_files(coordinator_open_files(args.parties)).map_err(hourglass_dkg::Error::from)?;
    let topology = args.topology.topology(args.parties);
    let star = topology == Topology::Star;
    let base = free_loopback_base_port(args.parties + usize::from(star)).map_err(CliError::from)?;
    let dir = DirOutput::create(&args.out)?;
    let configs = init_cluster_with(dir.path(), args.parties, &settings, base, "local", topology)
        .map_err(CliError::from)?;
    let start = Instant::now();
    let mut parties = Parties(Vec::new());
    if star {
        let mut a = vec![
            "dkg".to_string(),
            "relay".into(),
            "--config".into(),
            dir.path().join("relay.toml").display().to_string(),
            "--json".into(),
            "--connect-timeout".into(),
            args.connect_timeout.to_string(),
        ];
        a.extend(args.net.to_args());
        parties.0.push((RELAY_ID, Some(spawn_self(&a)?)));
    }
    for (i, config) in configs.iter().enumerate() {
        let id = i as PartyId + 1;
        let mut a = vec![
            "dkg".to_string(),
            "party".into(),
            "--config".into(),
            config.display().to_string(),
            "--id".into(),
            id.to_string(),
            "--json".into(),
            "--quiet".into(),
            "--connect-timeout".into(),
            args.connect_timeout.to_string(),
        ];
        a.extend(args.net.to_args());
        if let Some(seed) = &args.seed {
            a.push("--seed".into());
            a.push(format!("{seed}-{id}"));
        }
        if let Some((_, how)) = adversaries.iter().find(|(a, _)| *a == id) {
            a.push("--deviate".into());
            a.push(how.name().into());
        }
        parties.0.push((id, Some(spawn_self(&a)?)));
    }
    if let Some(victim) = args.kill {
        std::thread::sleep(Duration::from_millis(args.kill_after_ms));
        if let Some((_, Some(child))) = parties.0.iter_mut().find(|(id, _)| *id == victim) {
            let _ = child.kill();
            if !args.report.json && !args.report.quiet {
                eprintln!(
                    "killed party {victim} after {} ms",
                    start.elapsed().as_millis()
                );
            }
        }
    }
    let mut reports = Vec::new();
    let mut ignore: Vec<PartyId> = adversaries.iter().map(|(id, _)| *id).collect();
    ignore.extend(args.kill);
    let mut relay_report = None;
    for (id, stdout) in parties.wait_all("the generation", &ignore)? {
        if star && id == RELAY_ID {
            relay_report = serde_json::from_slice::<serde_json::Value>(&stdout).ok();
            continue;
        }
        let text = String::from_utf8_lossy(&stdout);
        let report: PartyReport = serde_json::from_str(text.trim())
            .map_err(|source| LocalRun::Report { party: id, source })?;
        reports.push(report);
    }
    let first = reports.first().ok_or(LocalRun::NoneFinished)?;
    if reports.iter().any(|r| r.n_sha256 != first.n_sha256) {
        return Err(LocalRun::Disagree.into());
    }
    let elapsed = start.elapsed().as_secs_f64();
    // Every party checked the others' signatures; check the published file once more, as a
    // verifier would, against the cluster's certificates.
    let transcript_path = dir.path().join("transcript.json");
    let text = std::fs::read_to_string(&transcript_path).map_err(LocalRun::Transcript)?;
    let committee = SignedTranscript::from_json(&text)
        .and_then(|t| t.verify(&read_certificates(&dir.path().join("certs"))?))
        .map_err(|e| CliError::from(e).with_path("transcript.json"))?;
    if committee.members != first.members {
        return Err(LocalRun::OtherMembers.into());
    }
    dir.commit()?;
    let public_key = args.out.join("public.pem").display().to_string();
    let max_bytes = reports.iter().map(|r| r.bytes_sent).max().unwrap_or(0);
    let bytes = Spread::of(reports.iter().map(|r| r.bytes_sent));
    let memory = Spread::of(reports.iter().filter_map(|r| r.peak_rss_bytes));
    let party_seconds = {
        let mut v: Vec<f64> = reports.iter().map(|r| r.seconds).collect();
        v.sort_by(f64::total_cmp);
        (v[(v.len() - 1) / 2], v[v.len() - 1])
    };
    if args.report.json {
        let per_party: Vec<_> = reports
            .iter()
            .map(|r| {
                serde_json::json!({"party": r.party, "seconds": r.seconds,
                    "bytes_sent": r.bytes_sent, "peak_rss_bytes": r.peak_rss_bytes})
            })
            .collect();
        let summary = serde_json::json!({
            "parties": args.parties,
            "members": first.members,
            "bits": first.bits,
            "seconds": elapsed,
            "candidates": first.candidates,
            "candidates_all_epochs": first.candidates_all_epochs,
            "expected_candidates": first.expected_candidates,
            "batches": first.batches,
            "biprimality_tests": first.biprimality_tests,
            "expected_tests": first.expected_tests,
            "trial_bound": first.trial_bound,
            "seconds_per_party": {"median": party_seconds.0, "max": party_seconds.1},
            "bytes_sent_per_party": bytes,
            "peak_rss_bytes_per_party": memory,
            "per_party": per_party,
            "max_bytes_sent_per_party": max_bytes,
            "removed": first.removed,
            "public_key": public_key,
            "transcript": args.out.join("transcript.json").display().to_string(),
            "transcript_fingerprint": hex::encode(committee.fingerprint),
            "threshold": committee.threshold,
            "topology": if star { "star" } else { "mesh" },
            "relay": relay_report,
        });
        println!("{summary}");
    } else if !args.report.quiet {
        println!(
            "{} parties generated a {}-bit key in {elapsed:.1} s",
            first.members.len(),
            first.bits
        );
        println!(
            "  candidate pairs: {} (expected ~{:.0}) in {} batches, biprimality tests: {} (expected ~{:.0}: the pairs sieved to the trial bound {})",
            first.candidates,
            first.expected_candidates,
            first.batches,
            first.biprimality_tests,
            first.expected_tests,
            power_of_two(first.trial_bound),
        );
        let mb = |b: u64| format!("{:.1} MB", b as f64 / 1e6);
        let spread = |s: Option<Spread>| {
            s.map_or("unknown".to_string(), |s| {
                format!("median {}, max {}", mb(s.median), mb(s.max))
            })
        };
        println!(
            "  per party ({} finished): time median {:.1} s, max {:.1} s; sent {}; peak memory {}",
            reports.len(),
            party_seconds.0,
            party_seconds.1,
            spread(bytes),
            spread(memory)
        );
        if let Some(relay) = &relay_report {
            println!(
                "  star: one relay forwarded {} frames ({}), sealed end to end",
                relay["frames"],
                mb(relay["bytes"].as_u64().unwrap_or(0))
            );
        }
        for (party, reason) in &first.removed {
            println!("  party {party} failed ({reason}) and was left out");
        }
        println!("  public key: {public_key}");
        println!(
            "  transcript: {}/transcript.json, signed by every member (fingerprint {}; publish it with public.pem and certs/: a public puzzle set names its fingerprint)",
            args.out.display(),
            &hex::encode(committee.fingerprint)[..16]
        );
        println!("  shares:     {}/party-I.share.json", args.out.display());
        println!(
            "next: hourglass dkg sign --cluster {} -i FILE -o FILE.sig",
            args.out.display()
        );
    }
    Ok(())
}

/// `2^e` for a power of two, else the number.
fn power_of_two(n: u32) -> String {
    if n.is_power_of_two() {
        format!("2^{}", n.trailing_zeros())
    } else {
        n.to_string()
    }
}

//! `hourglass bench dkg`: the tables of the distributed key generation paper (Congos and
//! Lesueur, paper 001) on this machine, every party a thread with its own TLS endpoint on
//! loopback, with the paper's figures beside ours and the targets.
//!
//! Tables 2-4 use the paper's own method: the time per iteration (candidate pair) is measured
//! over a fixed number of batches and multiplied by the expected number of iterations
//! ("normalized total time"). Wide-area latency is simulated by the transport's shaper.

use std::thread;
use std::time::Duration;

use clap::Args;
use hourglass_arith::entropy::OsEntropy;
use hourglass_dkg::bounds::FrameBounds;
use hourglass_dkg::cluster::{free_loopback_base_port, init_cluster, ClusterConfig};
use hourglass_dkg::params::Settings;
use hourglass_dkg::protocol::{generate_limited, Report};
use hourglass_dkg::sieve::Sieve;
use hourglass_dkg::tls::{TlsOptions, TlsTransport};
use hourglass_dkg::transport::{memory_mesh, NetSim, Transport};
use hourglass_dkg::PartyId;
use serde_json::json;

use crate::stats::Summary;
use crate::{Error, Result};

/// Arguments of `hourglass bench dkg`.
#[derive(Args, Debug)]
pub struct DkgBenchArgs {
    /// Tables to run: 1 (modulus sizes), 2 (LAN vs WAN), 3 (batch size), 4 (party counts),
    /// sieve (sieving bounds), targets (the four full-run targets), keytime (time to key, 3 parties at 2048 and 4096 bits: median and p95).
    #[arg(long, value_delimiter = ',', default_value = "1,2,3,4,sieve")]
    tables: Vec<String>,
    /// Full generations per configuration of Table 1 and the targets (medians are reported).
    #[arg(long, default_value_t = 3)]
    runs: usize,
    /// Modulus sizes of Table 1.
    #[arg(long, value_delimiter = ',', default_value = "1024,2048")]
    bits: Vec<u32>,
    /// Party counts of Table 4 (1024-bit moduli).
    #[arg(long, value_delimiter = ',', default_value = "3,10,21,37,50")]
    parties: Vec<usize>,
    /// Batches per time-per-iteration measurement (tables 2-4 and sieve).
    #[arg(long, default_value_t = 6)]
    batches: u64,
    /// Candidate pairs per round trip in tables 1, 4 and the targets.
    #[arg(long, default_value_t = 32)]
    batch: usize,
    /// Simulated wide-area round-trip time in milliseconds (tables 2 and 3).
    #[arg(long, default_value_t = 150.0)]
    rtt_ms: f64,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// No progress messages on standard error (the tables still print).
    #[arg(long, conflicts_with = "json")]
    quiet: bool,
}

/// One measured generation (or a fixed number of its batches).
#[derive(Debug, Clone)]
struct Measured {
    seconds: f64,
    candidates: u64,
    tests: u64,
    bytes_max: u64,
    expected: f64,
    sieve_bound: u32,
}

impl Measured {
    fn per_iteration(&self) -> f64 {
        self.seconds / self.candidates.max(1) as f64
    }
    fn bytes_per_iteration(&self) -> f64 {
        self.bytes_max as f64 / self.candidates.max(1) as f64
    }
}

/// Runs `k` parties over loopback TLS (threads), until a key or `max_batches`.
fn measure(
    k: usize,
    settings: &Settings,
    sim: NetSim,
    max_batches: Option<u64>,
) -> Result<Measured> {
    let dir = tempfile::tempdir().map_err(Error::TempDir)?;
    let cluster = dir.path().join("cluster");
    let base = free_loopback_base_port(k)?;
    let configs = init_cluster(&cluster, k, settings, base, "bench")?;
    let handles: Vec<_> = configs
        .into_iter()
        .enumerate()
        .map(|(i, path)| {
            thread::spawn(move || {
                let config = ClusterConfig::load(&path)?;
                let bounds = FrameBounds::generation(&config.generation, config.ids().len())?;
                let options = TlsOptions {
                    sim,
                    ..TlsOptions::new(bounds)
                };
                let mut transport = TlsTransport::connect(&config, i as PartyId + 1, &options)?;
                party(
                    &mut transport,
                    &config.ids(),
                    &config.generation,
                    max_batches,
                )
            })
        })
        .collect();
    collect(handles)
}

/// The same over the in-memory mesh: the protocol's arithmetic without TLS and sockets.
fn measure_in_memory(k: usize, settings: &Settings, max_batches: Option<u64>) -> Result<Measured> {
    let ids: Vec<PartyId> = (1..=k as PartyId).collect();
    let handles: Vec<_> = memory_mesh(&ids, NetSim::default())
        .into_iter()
        .map(|mut transport| {
            let (ids, settings) = (ids.clone(), settings.clone());
            thread::spawn(move || party(&mut transport, &ids, &settings, max_batches))
        })
        .collect();
    collect(handles)
}

fn collect(handles: Vec<thread::JoinHandle<Result<Report>>>) -> Result<Measured> {
    let mut reports = Vec::new();
    for h in handles {
        let r = h.join().map_err(|_| Error::PartyPanicked)??;
        reports.push(r);
    }
    let first = reports.first().cloned().ok_or(Error::NoParties)?;
    Ok(Measured {
        seconds: reports
            .iter()
            .map(|r| r.elapsed.as_secs_f64())
            .fold(0.0, f64::max),
        candidates: first.candidates,
        tests: first.biprimality_tests,
        bytes_max: reports.iter().map(|r| r.bytes_sent).max().unwrap_or(0),
        expected: first.expected_candidates,
        sieve_bound: first.sieve_bound,
    })
}

/// One party's generation; a run stopped after `max_batches` reports what it did.
fn party(
    transport: &mut dyn Transport,
    ids: &[PartyId],
    settings: &Settings,
    max_batches: Option<u64>,
) -> Result<Report> {
    match generate_limited(
        transport,
        ids,
        settings,
        "bench",
        &mut OsEntropy,
        &mut |_| {},
        max_batches,
    ) {
        Ok(g) => Ok(g.report.clone()),
        Err(hourglass_dkg::Error::Stopped(report)) => Ok(*report),
        Err(e) => Err(e.into()),
    }
}

/// `args.runs` full generations of `k` parties on the LAN.
fn full_runs(k: usize, bits: u32, args: &DkgBenchArgs) -> Result<Vec<Measured>> {
    (0..args.runs)
        .map(|_| measure(k, &settings(bits, args.batch), NetSim::default(), None))
        .collect()
}

fn summary(runs: &[Measured], pick: impl Fn(&Measured) -> f64) -> Summary {
    Summary::of(&runs.iter().map(pick).collect::<Vec<_>>())
}

fn settings(bits: u32, batch: usize) -> Settings {
    let mut s = Settings::new(bits);
    s.batch = batch;
    s.timeout_ms = 600_000;
    s
}

fn wan(rtt_ms: f64) -> NetSim {
    NetSim {
        rtt: Duration::from_secs_f64(rtt_ms / 1000.0),
        ..NetSim::default()
    }
}

fn fmt_duration(secs: f64) -> String {
    if secs < 60.0 {
        format!("{secs:.1} s")
    } else if secs < 3600.0 {
        format!("{}min {:02}s", (secs / 60.0) as u64, (secs % 60.0) as u64)
    } else {
        format!("{:.1} h", secs / 3600.0)
    }
}

fn mb(bytes: f64) -> String {
    format!("{:.1} MB", bytes / 1e6)
}

/// Rounds per batch: the sieving tree, two for N, one biprimality round.
fn rounds_per_batch(k: usize) -> u32 {
    let contributors = (k - 1) / 2 + 1;
    usize::BITS - (contributors - 1).leading_zeros() + 3
}

/// Runs `hourglass bench dkg`.
pub fn run(args: DkgBenchArgs) -> Result<()> {
    if args.runs == 0 || args.batches == 0 {
        return Err(Error::NotPositive {
            options: "--runs and --batches",
        });
    }
    if args.parties.iter().any(|&k| !(3..=128).contains(&k)) {
        return Err(Error::PartiesOutOfRange);
    }
    let bits = args.bits.clone();
    let mut out = serde_json::Map::new();
    let want = |t: &str| args.tables.iter().any(|x| x == t);
    let limit = Some(args.batches);
    let say = |s: String| {
        if !args.json {
            println!("{s}");
        }
    };
    say("Distributed RSA key generation (paper 001): every party a thread with its own TLS 1.3 endpoint on loopback; 2 cores shared by all parties.".into());
    say("Iteration = one candidate pair (one N computed). Paper: 2005 LAN machines and PlanetLab, OpenSSL, threads.".into());

    if want("1") {
        let paper = [
            (1024u32, "1099", "3.1 MB", "0.02 s", "25 s"),
            (2048, "4213", "22.2 MB", "0.05 s", "3min 43s"),
            (4096, "16227", "166.5 MB", "4.82 s", "56min 06s"),
        ];
        say(format!(
            "\nTable 1: modulus size, 3 parties, LAN (median of {} full generations)",
            args.runs
        ));
        say(format!(
            "{:>6} | {:>22} | {:>10} | {:>18} | {:>20} | {:>20}",
            "bits",
            "iterations (expected)",
            "bipr. tests",
            "data sent/party",
            "time per iteration",
            "total time"
        ));
        let mut rows = Vec::new();
        for &b in &bits {
            let runs = full_runs(3, b, &args)?;
            let total = summary(&runs, |m| m.seconds);
            let iters = summary(&runs, |m| m.candidates as f64);
            let data = summary(&runs, |m| m.bytes_max as f64);
            let tpi = summary(&runs, Measured::per_iteration);
            let tests = summary(&runs, |m| m.tests as f64);
            let p = paper.iter().find(|p| p.0 == b);
            say(format!(
                "{:>6} | {:>10.0} ({:>7.0}) | {:>10.0} | {:>18} | {:>20} | {:>20}",
                b,
                iters.mean,
                runs[0].expected,
                tests.mean,
                mb(data.median),
                format!("{:.2} ms", tpi.median * 1e3),
                fmt_duration(total.median)
            ));
            if let Some(p) = p {
                say(format!(
                    "{:>6} | {:>22} | {:>10} | {:>18} | {:>20} | {:>20}",
                    "paper", p.1, "", p.2, p.3, p.4
                ));
            }
            rows.push(json!({"bits": b, "runs": args.runs, "iterations_mean": iters.mean,
                "iterations_expected": runs[0].expected, "biprimality_tests_mean": tests.mean,
                "bytes_per_party_median": data.median, "seconds_per_iteration_median": tpi.median,
                "total_seconds_median": total.median, "total_seconds": runs.iter().map(|m| m.seconds).collect::<Vec<_>>(),
                "sieve_bound": runs[0].sieve_bound}));
        }
        out.insert("table1".into(), json!(rows));
    }

    if want("2") {
        say(format!(
            "\nTable 2: LAN vs simulated WAN ({} ms round trip), 10 parties, 1024 bits, batch 32 (paper: 30 threads)",
            args.rtt_ms
        ));
        say(format!(
            "{:>10} | {:>20} | {:>22} | {:>26}",
            "network", "time per iteration", "normalized total time", "paper (per iter., total)"
        ));
        let mut rows = Vec::new();
        for (name, sim, paper) in [
            ("LAN", NetSim::default(), "0.07 s, 1min 18s"),
            ("WAN", wan(args.rtt_ms), "2.27 s, 50min (PlanetLab)"),
        ] {
            let m = measure(10, &settings(1024, 32), sim, limit)?;
            say(format!(
                "{:>10} | {:>20} | {:>22} | {:>26}",
                name,
                format!("{:.2} ms", m.per_iteration() * 1e3),
                fmt_duration(m.per_iteration() * m.expected),
                paper
            ));
            rows.push(json!({"network": name, "rtt_ms": if name == "LAN" { 0.0 } else { args.rtt_ms },
                "seconds_per_iteration": m.per_iteration(), "normalized_total_seconds": m.per_iteration() * m.expected}));
        }
        out.insert("table2".into(), json!(rows));
    }

    if want("3") {
        say(format!(
            "\nTable 3: batch size (the paper's threads), 3 parties, 1024 bits, {} ms round trip",
            args.rtt_ms
        ));
        say(format!(
            "{:>6} | {:>20} | {:>22} | {:>24}",
            "batch", "time per iteration", "normalized total time", "paper (per iter., total)"
        ));
        let mut rows = Vec::new();
        for (batch, paper) in [
            (1usize, "-"),
            (11, "0.44 s, 8min 03s"),
            (50, "0.20 s, 3min 40s"),
            (100, "0.15 s, 2min 45s"),
        ] {
            let m = measure(3, &settings(1024, batch), wan(args.rtt_ms), limit)?;
            say(format!(
                "{:>6} | {:>20} | {:>22} | {:>24}",
                batch,
                format!("{:.2} ms", m.per_iteration() * 1e3),
                fmt_duration(m.per_iteration() * m.expected),
                paper
            ));
            rows.push(
                json!({"batch": batch, "seconds_per_iteration": m.per_iteration(),
                "normalized_total_seconds": m.per_iteration() * m.expected}),
            );
        }
        out.insert("table3".into(), json!(rows));
    }

    if want("4") {
        say(format!("\nTable 4: party counts, 1024 bits, batch {}, LAN (WAN column: + rounds x RTT per batch)", args.batch));
        say(format!(
            "{:>7} | {:>16} | {:>14} | {:>14} | {:>14} | {:>16} | {:>28}",
            "parties",
            "norm. data sent",
            "time per iter.",
            "without TLS",
            "norm. total",
            "WAN est. total",
            "paper (PlanetLab)"
        ));
        let paper = [
            (10usize, "39 MB, 2.72 s, 50min"),
            (21, "181 MB, 6.44 s, 118min"),
            (37, "572 MB, 11.79 s, 215min"),
        ];
        let mut rows = Vec::new();
        let mut fit = Vec::new();
        for &k in &args.parties {
            let m = measure(k, &settings(1024, args.batch), NetSim::default(), limit)?;
            let bare = measure_in_memory(k, &settings(1024, args.batch), limit)?;
            let data = m.bytes_per_iteration() * m.expected;
            let wan_tpi = m.per_iteration()
                + f64::from(rounds_per_batch(k)) * args.rtt_ms / 1e3 / args.batch as f64;
            say(format!(
                "{:>7} | {:>16} | {:>14} | {:>14} | {:>14} | {:>16} | {:>28}",
                k,
                mb(data),
                format!("{:.1} ms", m.per_iteration() * 1e3),
                format!("{:.1} ms", bare.per_iteration() * 1e3),
                fmt_duration(m.per_iteration() * m.expected),
                fmt_duration(wan_tpi * m.expected),
                paper.iter().find(|p| p.0 == k).map_or("", |p| p.1)
            ));
            fit.push((
                k as f64,
                m.bytes_per_iteration(),
                m.per_iteration(),
                m.expected,
            ));
            rows.push(json!({"parties": k, "bytes_per_iteration_per_party": m.bytes_per_iteration(),
                "normalized_bytes_per_party": data, "seconds_per_iteration": m.per_iteration(),
                "seconds_per_iteration_in_memory": bare.per_iteration(),
                "normalized_total_seconds": m.per_iteration() * m.expected, "wan_estimate_seconds": wan_tpi * m.expected}));
        }
        // Extrapolation to 100 parties, one machine each: per party and iteration, bytes and
        // CPU (here 2 cores shared by k parties: 2 * time / k) grow as a power of k, with the
        // exponent measured between the two largest party counts.
        if let [.., (k1, b1, t1, _), (k2, b2, t2, expected)] = fit[..] {
            let grow = |y1: f64, y2: f64| y2 * (100.0 / k2).powf((y2 / y1).ln() / (k2 / k1).ln());
            let bytes100 = grow(b1, b2);
            let cpu100 = grow(2.0 * t1 / k1, 2.0 * t2 / k2);
            let wan100 =
                cpu100 + f64::from(rounds_per_batch(100)) * args.rtt_ms / 1e3 / args.batch as f64;
            say(format!(
                "{:>7} | {:>16} | {:>14} | {:>14} | {:>14} | {:>16} | {:>28}",
                "100 est",
                mb(bytes100 * expected),
                format!("{:.1} ms", cpu100 * 1e3),
                "",
                fmt_duration(cpu100 * expected),
                fmt_duration(wan100 * expected),
                "(100 machines, extrapolated)"
            ));
            out.insert(
                "extrapolation_100".into(),
                json!({"bytes_per_party": bytes100 * expected, "seconds_per_iteration_lan": cpu100,
                    "wan_total_seconds": wan100 * expected}),
            );
        }
        out.insert("table4".into(), json!(rows));
    }

    if want("sieve") {
        say(
            "\nSieving bound (3 parties, 2048 bits, LAN): time per iteration x expected iterations"
                .into(),
        );
        say(format!(
            "{:>7} | {:>10} | {:>14} | {:>16}",
            "bound", "expected", "time per iter.", "expected total"
        ));
        let max = Sieve::default_bound(1024, 3)?;
        let mut rows = Vec::new();
        for bound in [31, 101, 307, max] {
            let mut s = settings(2048, 32);
            s.sieve_bound = Some(bound);
            let m = measure(3, &s, NetSim::default(), limit)?;
            say(format!(
                "{:>7} | {:>10.0} | {:>14} | {:>16}{}",
                bound,
                m.expected,
                format!("{:.2} ms", m.per_iteration() * 1e3),
                fmt_duration(m.per_iteration() * m.expected),
                if bound == max { "  (default)" } else { "" }
            ));
            rows.push(json!({"bound": bound, "expected": m.expected, "seconds_per_iteration": m.per_iteration()}));
        }
        out.insert("sieve".into(), json!(rows));
    }

    if want("targets") {
        say(format!(
            "\nTargets (median of {} full generations over loopback TLS)",
            args.runs
        ));
        let mut rows = Vec::new();
        for (k, b, limit_s) in [
            (3usize, 2048u32, 20.0),
            (3, 4096, 300.0),
            (10, 2048, 60.0),
            (50, 1024, 600.0),
        ] {
            let runs = full_runs(k, b, &args)?;
            let total = summary(&runs, |m| m.seconds);
            let data = summary(&runs, |m| m.bytes_max as f64);
            say(format!(
                "{k:>3} parties, {b} bits: median {} (runs: {}), data per party {}; target under {}: {}",
                fmt_duration(total.median),
                runs.iter().map(|m| format!("{:.1}", m.seconds)).collect::<Vec<_>>().join(", "),
                mb(data.median),
                fmt_duration(limit_s),
                if total.median < limit_s { "met" } else { "NOT met" }
            ));
            rows.push(json!({"parties": k, "bits": b, "seconds": runs.iter().map(|m| m.seconds).collect::<Vec<_>>(),
                "median_seconds": total.median, "target_seconds": limit_s, "met": total.median < limit_s,
                "bytes_per_party_median": data.median}));
        }
        out.insert("targets".into(), json!(rows));
    }
    if want("keytime") {
        say(format!(
            "\nTime to key, 3 parties over loopback TLS ({} full generations each)",
            args.runs
        ));
        let mut rows = Vec::new();
        // The private-operations issue's targets: median at 2048 bits, 95th percentile at 4096.
        for (b, target_median, target_p95) in [(2048u32, Some(3.0), None), (4096, None, Some(90.0))]
        {
            let runs = full_runs(3, b, &args)?;
            let mut secs: Vec<f64> = runs.iter().map(|m| m.seconds).collect();
            secs.sort_by(f64::total_cmp);
            let median = summary(&runs, |m| m.seconds).median;
            // Nearest rank: the smallest sample with at least 95% of the samples at or below it.
            let p95 = secs[((secs.len() as f64 * 0.95).ceil() as usize).clamp(1, secs.len()) - 1];
            let verdict = |value: f64, target: Option<f64>, what: &str| match target {
                Some(t) => format!(
                    "; target {what} at most {}: {}",
                    fmt_duration(t),
                    if value <= t { "met" } else { "NOT met" }
                ),
                None => String::new(),
            };
            say(format!(
                "3 parties, {b} bits: median {}, p95 {}, min {}, max {}{}{} (runs: {})",
                fmt_duration(median),
                fmt_duration(p95),
                fmt_duration(secs[0]),
                fmt_duration(secs[secs.len() - 1]),
                verdict(median, target_median, "median"),
                verdict(p95, target_p95, "p95"),
                secs.iter()
                    .map(|x| format!("{x:.1}"))
                    .collect::<Vec<_>>()
                    .join(", "),
            ));
            rows.push(json!({"parties": 3, "bits": b, "seconds": secs, "median_seconds": median,
                "p95_seconds": p95, "target_median_seconds": target_median, "target_p95_seconds": target_p95}));
        }
        out.insert("keytime".into(), json!(rows));
    }
    if args.json {
        println!("{}", serde_json::Value::Object(out));
    }
    Ok(())
}

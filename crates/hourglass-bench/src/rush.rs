//! `hourglass bench serve`: the deadline rush. N uploads (distinct 3 KB documents, each with
//! its own valid bundle) sent by C concurrent clients to a real `hourglass serve` (this
//! executable, a child process on loopback) on SQLite and on PostgreSQL, each upload on a fresh
//! connection as a student's browser sends it; reports the uploads acknowledged per second, the
//! latency of the 202 (p50, p90, p99, max) and the time from the first upload until the last
//! receipt is handed out (verified, signed and in a published checkpoint of the transparency
//! log), beside the targets of issue #39.
//!
//! The bundles are sealed before the clock starts (against a set of 10 ms puzzles the service
//! makes); the clients run on the same cores as the server, as in the measurement.
//! After the run every submission is read back: each must be valid and have its receipt, or the
//! run is an error, not a figure.

use std::io::Read;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Barrier;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use hourglass_arith::checkpoint::{CheckpointFile, CheckpointKey};
use hourglass_timelock::anyset::AnySet;
use hourglass_timelock::bundle::SealOptions;
use serde::Serialize;

use crate::postgres::Cluster;
use crate::{Error, Result};

/// Issue #39's targets on a 2-core machine, SQLite: uploads acknowledged per second.
const TARGET_PER_SECOND: f64 = 800.0;
/// ... the 99th percentile of the 202's latency, in milliseconds.
const TARGET_P99_MS: f64 = 500.0;
/// ... seconds from the first upload until the last receipt.
const TARGET_LAST_RECEIPT_SECS: f64 = 30.0;
/// The puzzles of the benchmark's set, at [`RATE`] squarings per second.
const PUZZLE: &str = "10ms";
/// [`PUZZLE`] in seconds: what each bundle is sealed to.
const PUZZLE_SECS: f64 = 0.01;
/// The set's squarings per second.
const RATE: f64 = 100_000.0;
/// How often the service's metrics are read while receipts are awaited.
const POLL: Duration = Duration::from_millis(20);
/// The multipart boundary of the uploads (the documents are the benchmark's own text).
const BOUNDARY: &str = "hourglass-bench-serve-boundary-5b1d7c";

/// Which database the service runs on.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum DatabaseChoice {
    /// SQLite in the service's data directory (the default deployment).
    Sqlite,
    /// A throwaway PostgreSQL cluster on loopback (durable settings).
    Postgres,
    /// SQLite, then PostgreSQL.
    Both,
}

/// Options of `hourglass bench serve`.
#[derive(Args, Debug)]
pub struct ServeBenchArgs {
    /// Uploads sent: distinct documents, each with its own valid bundle.
    #[arg(long, default_value_t = 5000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    uploads: u32,
    /// Concurrent clients, each sending one upload at a time on a fresh connection.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..=4096))]
    clients: u32,
    /// Bytes of each document.
    #[arg(long, default_value_t = 3072, value_parser = clap::value_parser!(u32).range(1..=(8 << 20)))]
    document_bytes: u32,
    /// The service's database.
    #[arg(long, value_enum, default_value = "both")]
    database: DatabaseChoice,
    /// Seconds to wait for the last receipt after the last upload before the run fails.
    #[arg(long, default_value_t = 300, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    receipt_timeout: u64,
    /// An argument passed on to `hourglass serve` (repeat for more), to measure other settings:
    /// `--serve-arg=--workers=8`.
    #[arg(long, value_name = "ARG", allow_hyphen_values = true)]
    serve_arg: Vec<String>,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
    /// No progress messages on standard error (the table still prints).
    #[arg(long, conflicts_with = "json")]
    quiet: bool,
}

/// Latency percentiles of the 202, in milliseconds.
#[derive(Serialize, Debug, Clone, Copy)]
struct Latency {
    p50: f64,
    p90: f64,
    p99: f64,
    max: f64,
}

impl Latency {
    fn of(samples: &mut [f64]) -> Self {
        samples.sort_by(f64::total_cmp);
        let pick = |q: f64| {
            let i = ((samples.len() as f64 * q).ceil() as usize).clamp(1, samples.len()) - 1;
            samples[i]
        };
        Self {
            p50: pick(0.50),
            p90: pick(0.90),
            p99: pick(0.99),
            max: pick(1.0),
        }
    }
}

/// One run on one database.
#[derive(Serialize)]
struct RushReport {
    database: &'static str,
    uploads: u32,
    clients: u32,
    document_bytes: u32,
    /// Mean bytes of a bundle sent.
    bundle_bytes: usize,
    /// Seconds from the first upload sent until the last 202 received.
    upload_seconds: f64,
    uploads_per_second: f64,
    latency_ms: Latency,
    /// Seconds from the first upload sent until every receipt was handed out (every
    /// submission was then read back valid with its receipt, or there is no report).
    last_receipt_seconds: f64,
}

#[derive(Serialize)]
struct Report {
    cpu: String,
    targets_sqlite: Targets,
    runs: Vec<RushReport>,
}

#[derive(Serialize)]
struct Targets {
    uploads_per_second: f64,
    p99_ms: f64,
    last_receipt_seconds: f64,
}

fn rush_error(why: impl Into<String>) -> Error {
    Error::Service(why.into())
}

/// The most bytes of upload bodies prepared before the clock starts: every body is sealed and
/// held in memory first, so that sealing is not timed.
const MAX_PREPARED_BYTES: u64 = 4 << 30;
/// What one upload's body holds beside its document (its bundle and the multipart framing),
/// at most, for [`MAX_PREPARED_BYTES`].
const BODY_ALLOWANCE: u64 = 8 << 10;

/// Runs `hourglass bench serve`.
pub fn run(a: ServeBenchArgs) -> Result<()> {
    let prepared = u64::from(a.uploads) * (u64::from(a.document_bytes) + BODY_ALLOWANCE);
    if prepared > MAX_PREPARED_BYTES {
        return Err(rush_error(format!(
            "{} uploads of {} bytes would hold about {} MiB of bodies in memory before the clock \
             starts (at most {} MiB): send fewer uploads or smaller documents",
            a.uploads,
            a.document_bytes,
            prepared >> 20,
            MAX_PREPARED_BYTES >> 20
        )));
    }
    let say = |m: &str| {
        if !a.json && !a.quiet {
            eprintln!("hourglass: {m}");
        }
    };
    let databases: &[DatabaseChoice] = match a.database {
        DatabaseChoice::Both => &[DatabaseChoice::Sqlite, DatabaseChoice::Postgres],
        DatabaseChoice::Sqlite => &[DatabaseChoice::Sqlite],
        DatabaseChoice::Postgres => &[DatabaseChoice::Postgres],
    };
    let mut runs = Vec::new();
    for &db in databases {
        runs.push(rush(&a, db, &say)?);
    }
    let report = Report {
        cpu: crate::machine::describe(),
        targets_sqlite: Targets {
            uploads_per_second: TARGET_PER_SECOND,
            p99_ms: TARGET_P99_MS,
            last_receipt_seconds: TARGET_LAST_RECEIPT_SECS,
        },
        runs,
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_table(&report);
    }
    Ok(())
}

fn print_table(r: &Report) {
    crate::machine::print_line();
    println!(
        "The deadline rush: distinct documents with valid bundles, each upload on a fresh \
         connection, clients on the same cores"
    );
    println!(
        "{:<11} {:>7} {:>7} {:>9} {:>9} {:>8} {:>8} {:>8} {:>8} {:>13}",
        "database",
        "uploads",
        "clients",
        "doc B",
        "upload/s",
        "p50 ms",
        "p90 ms",
        "p99 ms",
        "max ms",
        "last receipt"
    );
    for run in &r.runs {
        println!(
            "{:<11} {:>7} {:>7} {:>9} {:>9.0} {:>8.1} {:>8.1} {:>8.1} {:>8.1} {:>11.1} s",
            run.database,
            run.uploads,
            run.clients,
            run.document_bytes,
            run.uploads_per_second,
            run.latency_ms.p50,
            run.latency_ms.p90,
            run.latency_ms.p99,
            run.latency_ms.max,
            run.last_receipt_seconds
        );
    }
    let t = &r.targets_sqlite;
    println!(
        "targets (issue #39, SQLite, 2 cores): >= {:.0} uploads/s, p99 < {:.0} ms, last receipt \
         within {:.0} s",
        t.uploads_per_second, t.p99_ms, t.last_receipt_seconds
    );
    for run in r.runs.iter().filter(|run| run.database == "sqlite") {
        let met = |ok: bool| if ok { "met" } else { "NOT met" };
        println!(
            "SQLite: {:.0} uploads/s ({:.2}x the target: {}), p99 {:.0} ms ({}), last receipt \
             {:.1} s ({})",
            run.uploads_per_second,
            run.uploads_per_second / t.uploads_per_second,
            met(run.uploads_per_second >= t.uploads_per_second),
            run.latency_ms.p99,
            met(run.latency_ms.p99 < t.p99_ms),
            run.last_receipt_seconds,
            met(run.last_receipt_seconds <= t.last_receipt_seconds)
        );
    }
}

/// The `i`-th document: a line naming it, then filler, `bytes` long.
fn document(i: usize, bytes: usize) -> Vec<u8> {
    let mut doc = format!("hourglass bench serve: document {i}\n").into_bytes();
    let filler = b"The quick brown fox jumps over the lazy dog before the deadline. ";
    while doc.len() < bytes {
        let take = filler.len().min(bytes - doc.len());
        doc.extend_from_slice(&filler[..take]);
    }
    doc.truncate(bytes);
    doc
}

/// A multipart body with fields `bundle` and `document`.
fn multipart(bundle: &str, document: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(bundle.len() + document.len() + 400);
    body.extend_from_slice(
        format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"bundle\"; \
             filename=\"upload.bundle\"\r\nContent-Type: application/json\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(bundle.as_bytes());
    body.extend_from_slice(
        format!(
            "\r\n--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"document\"; \
             filename=\"document.txt\"\r\nContent-Type: application/octet-stream\r\n\r\n"
        )
        .as_bytes(),
    );
    body.extend_from_slice(document);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

/// Reads a response's body (at most 1 MiB) as text.
fn text(response: ureq::Response) -> Result<String> {
    let mut body = String::new();
    response
        .into_reader()
        .take(1 << 20)
        .read_to_string(&mut body)
        .map_err(|e| rush_error(format!("reading an answer: {e}")))?;
    Ok(body)
}

/// `GET url` as text.
fn get(agent: &ureq::Agent, url: &str) -> Result<String> {
    text(
        agent
            .get(url)
            .call()
            .map_err(|e| rush_error(format!("GET {url}: {e}")))?,
    )
}

/// Makes the benchmark's set on the served service and returns it as authors read it.
fn make_set(agent: &ureq::Agent, base: &str, token: &str) -> Result<AnySet> {
    let url = format!("{base}/api/v1/sets");
    agent
        .post(&url)
        .set("Authorization", &format!("Bearer {token}"))
        .set("Content-Type", "application/json")
        .send_string(
            &serde_json::json!({
                "name": "rush",
                "durations": [PUZZLE],
                "rate": RATE,
                "deadline": "2099-01-01T00:00:00Z",
            })
            .to_string(),
        )
        .map_err(|e| rush_error(format!("POST {url}: {e}")))?;
    let set = get(agent, &format!("{base}/api/v1/sets/rush"))?;
    Ok(AnySet::from_json(&set)?)
}

/// Seals `count` documents of `bytes` against `set` on every core: (bundle JSON, document).
fn seal_all(set: &AnySet, count: usize, bytes: usize) -> Result<Vec<(String, Vec<u8>)>> {
    let dir = tempfile::tempdir().map_err(Error::TempDir)?;
    let key = CheckpointKey::ephemeral()?;
    let threads = crate::machine::cores().min(count);
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let sealed: Vec<Vec<(usize, String, Vec<u8>)>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (next, stop, key, dir) = (&next, &stop, key.clone(), dir.path());
                s.spawn(move || -> Result<Vec<(usize, String, Vec<u8>)>> {
                    let options = SealOptions {
                        expect_secs: None,
                        until_credited_secs: Some(PUZZLE_SECS),
                        open_ended: false,
                        checkpoint: CheckpointFile::new(dir.join(format!("seal-{t}.ckpt")), key),
                        checkpoint_every: Duration::from_secs(3600),
                    };
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        if i >= count {
                            return Ok(out);
                        }
                        let doc = document(i, bytes);
                        let mut bundle = set.new_bundle(&set.hash().digest(&doc));
                        set.seal(&mut bundle, &options, stop, &mut |_, _, _| {}, &mut |_| {
                            Ok(())
                        })?;
                        out.push((i, bundle.to_json(), doc));
                    }
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| rush_error("a sealing thread panicked"))?
            })
            .collect::<Result<_>>()
    })?;
    let mut all: Vec<_> = sealed.into_iter().flatten().collect();
    all.sort_by_key(|(i, _, _)| *i);
    Ok(all.into_iter().map(|(_, b, d)| (b, d)).collect())
}

/// One upload's outcome: its submission id, when it was sent and answered (seconds from the
/// start).
type Sent = (String, f64, f64);

/// Sends every upload with `clients` threads, each on a fresh connection per upload, all
/// starting together. Returns each upload's outcome (in no order) and the instant they started.
fn send_all(url: &str, uploads: &[Vec<u8>], clients: usize) -> Result<(Vec<Sent>, Instant)> {
    let next = AtomicUsize::new(0);
    let barrier = Barrier::new(clients + 1);
    let start_cell = std::sync::OnceLock::new();
    let results: Vec<Result<Vec<Sent>>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|_| {
                let (next, barrier, start_cell) = (&next, &barrier, &start_cell);
                s.spawn(move || -> Result<Vec<Sent>> {
                    // No idle connection is kept: every upload opens its own.
                    let agent = ureq::AgentBuilder::new()
                        .max_idle_connections(0)
                        .timeout(Duration::from_secs(120))
                        .build();
                    barrier.wait();
                    let start: Instant = *start_cell.get_or_init(Instant::now);
                    let mut out = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(body) = uploads.get(i) else {
                            return Ok(out);
                        };
                        let sent = start.elapsed().as_secs_f64();
                        let answer = agent
                            .post(url)
                            .set(
                                "Content-Type",
                                &format!("multipart/form-data; boundary={BOUNDARY}"),
                            )
                            .send_bytes(body);
                        let response = match answer {
                            Ok(r) if r.status() == 202 => r,
                            Ok(r) => {
                                let status = r.status();
                                return Err(rush_error(format!(
                                    "upload {i}: {status} {}",
                                    text(r)?.trim()
                                )));
                            }
                            Err(ureq::Error::Status(status, r)) => {
                                return Err(rush_error(format!(
                                    "upload {i}: {status} {}",
                                    text(r)?.trim()
                                )))
                            }
                            Err(e) => return Err(rush_error(format!("upload {i}: {e}"))),
                        };
                        let body: serde_json::Value = serde_json::from_str(&text(response)?)?;
                        let answered = start.elapsed().as_secs_f64();
                        let id = body["id"]
                            .as_str()
                            .ok_or_else(|| rush_error(format!("upload {i}: no id in {body}")))?;
                        out.push((id.to_string(), sent, answered));
                    }
                })
            })
            .collect();
        barrier.wait();
        let _ = start_cell.get_or_init(Instant::now);
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(rush_error("a client thread panicked")))
            })
            .collect()
    });
    let mut sent = Vec::with_capacity(uploads.len());
    for r in results {
        sent.extend(r?);
    }
    let start = *start_cell
        .get()
        .ok_or_else(|| rush_error("no client started"))?;
    Ok((sent, start))
}

/// The value of the metric line that starts with `prefix ` in an exposition.
fn metric(exposition: &str, prefix: &str) -> Option<f64> {
    exposition.lines().find_map(|l| {
        l.strip_prefix(prefix)?
            .strip_prefix(' ')?
            .trim()
            .parse()
            .ok()
    })
}

/// Waits until the service has verified every one of `count` submissions and handed out every
/// receipt; returns when (it polls the service's metrics every [`POLL`]).
fn await_receipts(
    agent: &ureq::Agent,
    base: &str,
    count: usize,
    timeout: Duration,
) -> Result<Instant> {
    let deadline = Instant::now() + timeout;
    let url = format!("{base}/metrics");
    loop {
        let m = get(agent, &url)?;
        let value = |name: &str| metric(&m, name).unwrap_or(f64::NAN);
        let queued = value("hourglass_submissions{status=\"queued\"}");
        let waiting = value("hourglass_receipts_waiting");
        let done = ["valid", "invalid", "error"]
            .iter()
            .map(|s| value(&format!("hourglass_submissions{{status=\"{s}\"}}")))
            .sum::<f64>();
        if queued == 0.0 && waiting == 0.0 && done >= count as f64 {
            return Ok(Instant::now());
        }
        if Instant::now() > deadline {
            return Err(rush_error(format!(
                "after {} s, {queued} submissions still queued and {waiting} receipts waiting",
                timeout.as_secs()
            )));
        }
        std::thread::sleep(POLL);
    }
}

/// Reads every submission back: each must be valid and carry its receipt.
fn check_all(base: &str, ids: &[String]) -> Result<()> {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|_| {
                let next = &next;
                s.spawn(move || -> Result<()> {
                    let agent = ureq::AgentBuilder::new().build();
                    while let Some(id) = ids.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let body: serde_json::Value = serde_json::from_str(&get(
                            &agent,
                            &format!("{base}/api/v1/submissions/{id}"),
                        )?)?;
                        if body["status"] != "valid" || !body["receipt"].is_object() {
                            return Err(rush_error(format!(
                                "submission {id} of a valid bundle reads back as {body}"
                            )));
                        }
                    }
                    Ok(())
                })
            })
            .collect();
        handles.into_iter().try_for_each(|h| {
            h.join()
                .unwrap_or_else(|_| Err(rush_error("a reader panicked")))
        })
    })
}

/// The rush on one database.
fn rush(a: &ServeBenchArgs, db: DatabaseChoice, say: &dyn Fn(&str)) -> Result<RushReport> {
    let (name, cluster) = match db {
        DatabaseChoice::Postgres => {
            say("serve: starting a throwaway PostgreSQL cluster on loopback...");
            ("postgresql", Some(Cluster::start(100)?))
        }
        _ => ("sqlite", None),
    };
    let url = cluster.as_ref().map(Cluster::url);
    // Every client of the bench shares one address, and a connection its client has closed
    // still counts against the server's per-address cap until the server has read the close:
    // room for the clients' connections and three times as many closing.
    let per_address = (a.clients as usize * 4 + 16).max(256).to_string();
    let mut extra = vec![
        "--upload-quota",
        "0",
        "--max-connections-per-address",
        per_address.as_str(),
    ];
    if let Some(url) = &url {
        extra.extend(["--database", url.as_str()]);
    }
    extra.extend(a.serve_arg.iter().map(String::as_str));
    say(&format!("serve: starting `hourglass serve` on {name}..."));
    let served = crate::served::serve(None, &extra)?;
    let token = std::fs::read_to_string(served.data.join("admin.token"))
        .map_err(|e| rush_error(format!("reading the admin token: {e}")))?;
    let agent = ureq::AgentBuilder::new().build();
    let set = make_set(&agent, &served.base, token.trim())?;
    let count = a.uploads as usize;
    say(&format!(
        "serve: sealing {count} documents of {} bytes against {PUZZLE} puzzles (not timed)...",
        a.document_bytes
    ));
    let sealed = seal_all(&set, count, a.document_bytes as usize)?;
    let bundle_bytes = sealed.iter().map(|(b, _)| b.len()).sum::<usize>() / count;
    let bodies: Vec<Vec<u8>> = sealed.iter().map(|(b, d)| multipart(b, d)).collect();
    drop(sealed);
    say(&format!(
        "serve: {count} uploads from {} clients to {}...",
        a.clients, served.base
    ));
    let (sent, start) = send_all(
        &format!("{}/api/v1/submissions", served.base),
        &bodies,
        a.clients as usize,
    )?;
    let upload_seconds = sent.iter().map(|s| s.2).fold(0.0, f64::max);
    say(&format!(
        "serve: {count} uploads acknowledged in {upload_seconds:.2} s ({:.0} per second); \
         waiting for the last receipt...",
        count as f64 / upload_seconds
    ));
    let done = await_receipts(
        &agent,
        &served.base,
        count,
        Duration::from_secs(a.receipt_timeout),
    )?;
    let last_receipt_seconds = done.duration_since(start).as_secs_f64();
    let mut latencies: Vec<f64> = sent.iter().map(|s| (s.2 - s.1) * 1e3).collect();
    let ids: Vec<String> = sent.into_iter().map(|s| s.0).collect();
    say("serve: reading every submission back...");
    check_all(&served.base, &ids)?;
    drop(served);
    drop(cluster);
    Ok(RushReport {
        database: name,
        uploads: a.uploads,
        clients: a.clients,
        document_bytes: a.document_bytes,
        bundle_bytes,
        upload_seconds,
        uploads_per_second: count as f64 / upload_seconds,
        latency_ms: Latency::of(&mut latencies),
        last_receipt_seconds,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_are_distinct_and_of_the_asked_size() {
        assert_eq!(document(7, 3072).len(), 3072);
        assert_eq!(document(7, 5).len(), 5);
        assert_ne!(document(1, 3072), document(2, 3072));
    }

    #[test]
    fn percentiles_pick_the_sample_at_or_above_the_rank() {
        let mut s: Vec<f64> = (1..=100).map(f64::from).collect();
        let l = Latency::of(&mut s);
        assert_eq!((l.p50, l.p90, l.p99, l.max), (50.0, 90.0, 99.0, 100.0));
        let l = Latency::of(&mut [3.0]);
        assert_eq!((l.p50, l.p99), (3.0, 3.0));
    }

    #[test]
    fn a_metric_is_read_by_its_whole_name() {
        let m = "hourglass_submissions{status=\"queued\"} 3\nhourglass_receipts_waiting 0\n";
        assert_eq!(
            metric(m, "hourglass_submissions{status=\"queued\"}"),
            Some(3.0)
        );
        assert_eq!(metric(m, "hourglass_receipts_waiting"), Some(0.0));
        assert_eq!(metric(m, "hourglass_receipts"), None);
    }
}

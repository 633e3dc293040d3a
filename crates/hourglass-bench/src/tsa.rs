//! `hourglass bench tsa`: tokens per second through `POST /tsa` of a real `hourglass serve`
//! (this executable, a child process on loopback, SQLite, a 3072-bit TSA key made at its first
//! start), with keep-alive clients on the same machine, beside OpenSSL's RSA-3072 PKCS#1 v1.5
//! signatures per second in the same run, on as many threads as there are cores (one signature
//! is the one private-key operation a token costs, so it is what a TSA built on OpenSSL's RSA
//! could at most issue).

use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::Args;
use hourglass_rsa::HashAlg;
use hourglass_timelock::certificate::{ca_certificates, TsaAnchor};
use hourglass_timelock::timestamp::{verify_token, Query};
use serde::Serialize;

use crate::stats::Summary;
use crate::{Error, Result};

/// The target of issue #29: tokens per second with a 3072-bit TSA key on this 2-core machine.
const TARGET_PER_SECOND: f64 = 1000.0;

/// Options of `hourglass bench tsa`.
#[derive(Args, Debug)]
pub struct TsaBenchArgs {
    /// Seconds of load (after one second of warm-up).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Client threads, each one keep-alive connection.
    #[arg(long, default_value_t = 4)]
    clients: usize,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
    /// No progress messages on standard error (the tables still print).
    #[arg(long, conflicts_with = "json")]
    quiet: bool,
}

#[derive(Serialize)]
struct Report {
    tsa_key_bits: u32,
    clients: usize,
    seconds: f64,
    tokens: u64,
    tokens_per_second: f64,
    latency_ms: Summary,
    sample_verified: usize,
    openssl_signatures_per_second: f64,
    openssl_threads: usize,
    ratio_to_openssl_signatures: f64,
    target_per_second: f64,
    target_met: bool,
}

fn tsa_error(why: impl Into<String>) -> Error {
    Error::Tsa(why.into())
}

fn get(agent: &ureq::Agent, url: &str) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    agent
        .get(url)
        .call()
        .map_err(|e| tsa_error(format!("GET {url}: {e}")))?
        .into_reader()
        .take(1 << 20)
        .read_to_end(&mut body)
        .map_err(|e| tsa_error(format!("GET {url}: {e}")))?;
    Ok(body)
}

/// One query for the `i`-th token of client `c` (a distinct imprint each time).
fn query(c: usize, i: u64) -> Result<Query> {
    let data = format!("bench tsa client {c} token {i}");
    Ok(Query::for_digest(
        HashAlg::Sha256,
        &HashAlg::Sha256.digest(data.as_bytes()),
        Some(i.to_be_bytes().to_vec()),
        None,
    )?)
}

/// Sends a query and returns the reply's body, checked to be a granted reply to it.
fn stamp(agent: &ureq::Agent, url: &str, q: &Query) -> Result<Vec<u8>> {
    let response = agent
        .post(url)
        .set("Content-Type", "application/timestamp-query")
        .send_bytes(q.to_der())
        .map_err(|e| tsa_error(format!("POST {url}: {e}")))?;
    let mut body = Vec::new();
    response
        .into_reader()
        .take(1 << 20)
        .read_to_end(&mut body)
        .map_err(|e| tsa_error(format!("POST {url}: {e}")))?;
    q.token_of_reply(&body)?;
    Ok(body)
}

/// Per client: tokens, latencies (ms) and the first reply (verified after the run).
type ClientResult = (u64, Vec<f64>, Option<Vec<u8>>);

/// Runs `clients` keep-alive clients against `url` for `seconds` after a second of warm-up.
fn load(url: &str, clients: usize, seconds: f64) -> Result<(f64, Vec<ClientResult>)> {
    let warm = Arc::new(AtomicBool::new(true));
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..clients)
        .map(|c| {
            let (url, warm, stop) = (url.to_string(), warm.clone(), stop.clone());
            std::thread::spawn(move || -> Result<ClientResult> {
                let agent = ureq::AgentBuilder::new().max_idle_connections(1).build();
                let (mut n, mut lat, mut first) = (0u64, Vec::new(), None);
                let mut i = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let q = query(c, i)?;
                    i += 1;
                    let t = Instant::now();
                    let reply = stamp(&agent, &url, &q)?;
                    if !warm.load(Ordering::Relaxed) {
                        lat.push(t.elapsed().as_secs_f64() * 1e3);
                        n += 1;
                        if first.is_none() {
                            first = Some(reply);
                        }
                    }
                }
                Ok((n, lat, first))
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs(1));
    warm.store(false, Ordering::Relaxed);
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    let elapsed = start.elapsed().as_secs_f64();
    let mut results = Vec::with_capacity(clients);
    for h in handles {
        results.push(
            h.join()
                .map_err(|_| tsa_error("a client thread panicked"))??,
        );
    }
    Ok((elapsed, results))
}

/// OpenSSL's RSA-3072 PKCS#1 v1.5 SHA-256 signatures per second on `threads` threads.
fn openssl_signatures_per_second(threads: usize, seconds: f64) -> Result<f64> {
    let rsa = openssl::rsa::Rsa::generate(3072)?;
    let key = openssl::pkey::PKey::from_rsa(rsa)?;
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (key, stop) = (key.clone(), stop.clone());
            std::thread::spawn(move || -> Result<u64> {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let mut signer =
                        openssl::sign::Signer::new(openssl::hash::MessageDigest::sha256(), &key)?;
                    signer.update(&[t as u8; 200])?;
                    signer.sign_to_vec()?;
                    n += 1;
                }
                Ok(n)
            })
        })
        .collect();
    let start = Instant::now();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    let elapsed = start.elapsed().as_secs_f64();
    let mut total = 0;
    for h in handles {
        total += h
            .join()
            .map_err(|_| tsa_error("an OpenSSL thread panicked"))??;
    }
    Ok(total as f64 / elapsed)
}

/// Runs `hourglass bench tsa`.
pub fn run(a: TsaBenchArgs) -> Result<()> {
    if a.clients == 0 {
        return Err(Error::ZeroCount {
            option: "--clients",
        });
    }
    if !(1.0..=3600.0).contains(&a.seconds) {
        return Err(Error::SecondsOutOfRange {
            min: 1.0,
            max: 3600.0,
        });
    }
    let say = |m: &str| {
        if !a.quiet && !a.json {
            eprintln!("{m}");
        }
    };
    say("tsa: starting `hourglass serve` (a 3072-bit TSA key is made at its first start)...");
    let served = crate::served::serve(None)?;
    let url = format!("{}/tsa", served.base);
    let agent = ureq::AgentBuilder::new().build();
    let ca_pem = get(&agent, &format!("{}/tsa-ca.pem", served.base))?;
    let tsa_pem = get(&agent, &format!("{}/tsa.pem", served.base))?;
    let anchors: Vec<TsaAnchor> = ca_certificates(&ca_pem)
        .map_err(|e| tsa_error(e.to_string()))?
        .into_iter()
        .map(TsaAnchor::from)
        .collect();
    let tsa_key_bits = hourglass_timelock::certificate::TsaCertificate::from_bytes(&tsa_pem)
        .map_err(|e| tsa_error(e.to_string()))?
        .public_key()
        .bits();
    say(&format!(
        "tsa: {} keep-alive clients for {} s against {url}...",
        a.clients, a.seconds
    ));
    let (elapsed, results) = load(&url, a.clients, a.seconds)?;
    drop(served);
    // Every client's first token verifies (signature, chain to the served CA, imprint).
    let mut sample_verified = 0;
    for (_, _, first) in &results {
        if let Some(reply) = first {
            verify_token(reply, &[], &anchors)?;
            sample_verified += 1;
        }
    }
    let tokens: u64 = results.iter().map(|r| r.0).sum();
    let latencies: Vec<f64> = results.iter().flat_map(|r| r.1.iter().copied()).collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    say(&format!(
        "tsa: OpenSSL RSA-3072 signatures on {threads} threads for {} s...",
        a.seconds.min(5.0)
    ));
    let openssl_rate = openssl_signatures_per_second(threads, a.seconds.min(5.0))?;
    let per_second = tokens as f64 / elapsed;
    let report = Report {
        tsa_key_bits,
        clients: a.clients,
        seconds: elapsed,
        tokens,
        tokens_per_second: per_second,
        latency_ms: Summary::of(&latencies),
        sample_verified,
        openssl_signatures_per_second: openssl_rate,
        openssl_threads: threads,
        ratio_to_openssl_signatures: per_second / openssl_rate,
        target_per_second: TARGET_PER_SECOND,
        target_met: per_second >= TARGET_PER_SECOND,
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
        return Ok(());
    }
    println!(
        "RFC 3161 through POST /tsa of `hourglass serve` on loopback ({}-bit TSA key, {} keep-alive clients on the same machine, {:.1} s):",
        report.tsa_key_bits, report.clients, report.seconds
    );
    println!(
        "  tokens: {} -> {:.0} per second; latency median {:.2} ms, p90 {:.2} ms, max {:.2} ms",
        report.tokens,
        report.tokens_per_second,
        report.latency_ms.median,
        report.latency_ms.p90,
        report.latency_ms.max
    );
    println!(
        "  baseline (same run): {}, {:.0} RSA-3072 signatures per second on {} threads (a token's one private-key operation)",
        openssl::version::version(),
        report.openssl_signatures_per_second,
        threads
    );
    println!(
        "  tokens per second / OpenSSL's signatures per second: {:.2}x",
        report.ratio_to_openssl_signatures
    );
    println!(
        "  sample: {} tokens (each client's first) verified against the served TSA CA",
        report.sample_verified
    );
    println!(
        "  target (issue #29): at least {:.0} tokens per second: {}",
        TARGET_PER_SECOND,
        if report.target_met { "met" } else { "NOT met" }
    );
    Ok(())
}

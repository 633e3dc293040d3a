//! `hourglass bench tsa`: RFC 3161 both ways.
//!
//! - Issuing: tokens per second through `POST /tsa` of a real `hourglass serve` (this
//!   executable, a child process on loopback, SQLite, its TSA key made at first start: RSA-3072,
//!   ECDSA P-256 or ECDSA P-384), with keep-alive clients on the same machine, beside OpenSSL's signatures
//!   per second with the same kind of key in the same run, on as many threads as there are
//!   cores (one signature is the one private-key operation a token costs, so it is what a TSA
//!   built on OpenSSL could at most issue).
//! - Verifying (`--verify`): one token verified by `hourglass_timestamp::verify_token_for`,
//!   RSA-4096 and ECDSA P-384 signers on paths of three (signer, intermediate CA, root; the CAs
//!   RSA-3072), median of many rounds, beside `openssl ts -verify` of the same token as a
//!   process (what a user who checks a token runs today), in the same run.

use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use clap::{Args, ValueEnum};
use hourglass_arith::entropy::SeededEntropy;
use hourglass_rsa::{HashAlg, KeyGenOptions, Variant};
use hourglass_timestamp::{
    anchors_from_pem, verify_token, verify_token_for, Covered, PolicyId, Query, Tsa, TsaAnchor,
    TsaCertificate, TsaKey, TsaKeyType,
};
use hourglass_x509::{CaCertificate, CertificateOptions};
use serde::Serialize;

use crate::stats::Summary;
use crate::{Error, Result};

/// The target of issue #29: tokens per second with a 3072-bit TSA key, on a 2-core machine.
const TARGET_PER_SECOND: f64 = 1000.0;
/// The target of issue #37: one token verified within this many milliseconds.
const TARGET_VERIFY_MS: f64 = 1.0;

/// Which key the served authority signs with.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyChoice {
    /// RSA-3072 (PKCS#1 v1.5, SHA-256).
    #[value(name = "rsa-3072")]
    Rsa3072,
    /// ECDSA P-256 (SHA-256), the service's default.
    #[value(name = "ecdsa-p256")]
    EcdsaP256,
    /// ECDSA P-384 (SHA-384).
    #[value(name = "ecdsa-p384")]
    EcdsaP384,
    /// Every kind, one after the other.
    #[value(name = "all", alias = "both")]
    All,
}

/// Options of `hourglass bench tsa`.
#[derive(Args, Debug)]
pub struct TsaBenchArgs {
    /// Seconds of load per key (after one second of warm-up).
    #[arg(long, default_value_t = 10.0)]
    seconds: f64,
    /// Client threads, each one keep-alive connection.
    #[arg(long, default_value_t = 4)]
    clients: usize,
    /// The served authority's key.
    #[arg(long, value_enum, default_value = "all")]
    key: KeyChoice,
    /// Measure verification instead: one token (RSA-4096 and P-384 signers, paths of three)
    /// beside `openssl ts -verify` of the same token.
    #[arg(long, conflicts_with_all = ["clients", "key", "seconds"])]
    verify: bool,
    /// With --verify: verifications timed per signer (hourglass; OpenSSL runs at most 50).
    #[arg(long, default_value_t = 500, requires = "verify")]
    rounds: usize,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
    /// No progress messages on standard error (the tables still print).
    #[arg(long, conflicts_with = "json")]
    quiet: bool,
}

#[derive(Serialize)]
struct IssueReport {
    tsa_key: String,
    clients: usize,
    seconds: f64,
    tokens: u64,
    tokens_per_second: f64,
    latency_ms: Summary,
    sample_verified: usize,
    openssl_signatures_per_second: f64,
    openssl_threads: usize,
    ratio_to_openssl_signatures: f64,
}

#[derive(Serialize)]
struct VerifyReport {
    signer: String,
    path: Vec<String>,
    token_bytes: usize,
    hourglass_us: Summary,
    openssl_process_ms: Summary,
    ratio_openssl_to_hourglass: f64,
    /// The issue's target, for the benchmark's own chains of three; none for the real tokens,
    /// which are a reference (their paths and signers are the authorities').
    target_ms: Option<f64>,
    target_met: Option<bool>,
}

#[derive(Serialize)]
struct Report {
    cpu: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    issuing: Vec<IssueReport>,
    #[serde(skip_serializing_if = "Option::is_none")]
    issuing_target_per_second: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    verifying: Vec<VerifyReport>,
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

/// One query for the `i`-th token of client `c` (a distinct imprint each time, a fresh nonce).
fn query(c: usize, i: u64) -> Result<Query> {
    let data = format!("bench tsa client {c} token {i}");
    Ok(Query::for_data(
        HashAlg::Sha256,
        data.as_bytes(),
        true,
        None,
        &mut hourglass_arith::entropy::OsEntropy,
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

/// OpenSSL's signatures per second with a key of `kind` (RSA-3072 PKCS#1 v1.5 SHA-256,
/// ECDSA P-256 SHA-256 or ECDSA P-384 SHA-384) on `threads` threads.
fn openssl_signatures_per_second(kind: TsaKeyType, threads: usize, seconds: f64) -> Result<f64> {
    let (key, md) = match kind {
        TsaKeyType::Rsa3072 => (
            openssl::pkey::PKey::from_rsa(openssl::rsa::Rsa::generate(3072)?)?,
            openssl::hash::MessageDigest::sha256(),
        ),
        TsaKeyType::EcdsaP256 => {
            let group = openssl::ec::EcGroup::from_curve_name(openssl::nid::Nid::X9_62_PRIME256V1)?;
            (
                openssl::pkey::PKey::from_ec_key(openssl::ec::EcKey::generate(&group)?)?,
                openssl::hash::MessageDigest::sha256(),
            )
        }
        TsaKeyType::EcdsaP384 => {
            let group = openssl::ec::EcGroup::from_curve_name(openssl::nid::Nid::SECP384R1)?;
            (
                openssl::pkey::PKey::from_ec_key(openssl::ec::EcKey::generate(&group)?)?,
                openssl::hash::MessageDigest::sha384(),
            )
        }
    };
    let stop = Arc::new(AtomicBool::new(false));
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (key, stop) = (key.clone(), stop.clone());
            std::thread::spawn(move || -> Result<u64> {
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let mut signer = openssl::sign::Signer::new(md, &key)?;
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

/// Issuing with a served authority whose key is of `kind`.
fn issue(a: &TsaBenchArgs, kind: TsaKeyType, say: &dyn Fn(&str)) -> Result<IssueReport> {
    say(&format!(
        "tsa: starting `hourglass serve --tsa-key {}` (its key is made at first start)...",
        kind.name()
    ));
    let served = crate::served::serve(None, &["--tsa-key", kind.name()])?;
    let url = format!("{}/tsa", served.base);
    let agent = ureq::AgentBuilder::new().build();
    let ca_pem = get(&agent, &format!("{}/tsa-ca.pem", served.base))?;
    let tsa_pem = get(&agent, &format!("{}/tsa.pem", served.base))?;
    let anchors: Vec<TsaAnchor> =
        anchors_from_pem(&ca_pem).map_err(|e| tsa_error(e.to_string()))?;
    let tsa_key = TsaCertificate::from_bytes(&tsa_pem)?.key().describe();
    say(&format!(
        "tsa: {} keep-alive clients for {} s against {url} ({tsa_key})...",
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
    let threads = crate::machine::cores();
    say(&format!(
        "tsa: OpenSSL {tsa_key} signatures on {threads} threads for {} s...",
        a.seconds.min(5.0)
    ));
    let openssl_rate = openssl_signatures_per_second(kind, threads, a.seconds.min(5.0))?;
    let per_second = tokens as f64 / elapsed;
    Ok(IssueReport {
        tsa_key,
        clients: a.clients,
        seconds: elapsed,
        tokens,
        tokens_per_second: per_second,
        latency_ms: Summary::of(&latencies),
        sample_verified,
        openssl_signatures_per_second: openssl_rate,
        openssl_threads: threads,
        ratio_to_openssl_signatures: per_second / openssl_rate,
    })
}

/// A token for `data` from an authority of `key` on a path of three: root and intermediate CAs
/// (RSA-3072, from fixed seeds), the authority's certificate; the token carries the
/// authority's and the intermediate's certificates. Returns the token and the root (PEM).
fn token_on_a_path_of_three(key: TsaKey, data: &[u8]) -> Result<(Vec<u8>, String)> {
    let fail = |e: &dyn std::fmt::Display| tsa_error(e.to_string());
    let mut rng = SeededEntropy::new(b"hourglass bench tsa --verify");
    let root_key = KeyGenOptions::new(3072, Variant::Crt).generate(&mut rng)?;
    let ca_key = KeyGenOptions::new(3072, Variant::Crt).generate(&mut rng)?;
    let root = CaCertificate::self_signed(
        &root_key,
        &CertificateOptions::days("bench TSA root", 3650),
        &mut rng,
    )
    .map_err(|e| fail(&e))?;
    let ca = root
        .issue_intermediate(
            &root_key,
            ca_key.public(),
            Some(0),
            &CertificateOptions::days("bench TSA issuing CA", 3650),
            &mut rng,
        )
        .map_err(|e| fail(&e))?;
    let cert = TsaCertificate::issue(
        key.spki().map_err(|e| fail(&e))?,
        &ca,
        &ca_key,
        &CertificateOptions::days("bench TSA", 365),
        &mut rng,
    )?;
    let tsa = Tsa::new(
        key,
        cert,
        vec![ca.certificate().clone()],
        PolicyId::hourglass(),
    )?;
    let query = Query::for_data(HashAlg::Sha256, data, true, None, &mut rng)?;
    let token = tsa.stamp(&query, &[1], SystemTime::now(), &mut rng)?;
    Ok((token, root.to_pem()))
}

/// `openssl ts -verify` of `token` over `data` against `root` (with `chain` as `-untrusted`
/// unless empty), as a process, `runs` times: the wall time of each, in milliseconds. The
/// certificates are checked at the token's genTime (`-attime`), as ours are: a real token's
/// may have expired since.
fn openssl_verify_ms(
    dir: &Path,
    token: &[u8],
    data: &[u8],
    root: &str,
    chain: &str,
    runs: usize,
) -> Result<Vec<f64>> {
    let io = |e: std::io::Error| tsa_error(format!("{}: {e}", dir.display()));
    std::fs::write(dir.join("token.der"), token).map_err(io)?;
    std::fs::write(dir.join("data.bin"), data).map_err(io)?;
    std::fs::write(dir.join("root.pem"), root).map_err(io)?;
    std::fs::write(dir.join("chain.pem"), chain).map_err(io)?;
    let gen_time = hourglass_timestamp::TokenInfo::of_token(token)?
        .gen_time_whole()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
        .to_string();
    let mut args = vec![
        "ts",
        "-verify",
        "-token_in",
        "-in",
        "token.der",
        "-data",
        "data.bin",
        "-CAfile",
        "root.pem",
        "-attime",
        &gen_time,
    ];
    if !chain.is_empty() {
        args.extend(["-untrusted", "chain.pem"]);
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let out = std::process::Command::new("openssl")
            .args(&args)
            .current_dir(dir)
            .output()
            .map_err(|e| tsa_error(format!("cannot run openssl: {e}")))?;
        times.push(t.elapsed().as_secs_f64() * 1e3);
        if !String::from_utf8_lossy(&out.stdout).contains("Verification: OK") {
            return Err(tsa_error(format!(
                "openssl ts -verify refuses the benchmark's token: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
    }
    Ok(times)
}

/// Two real authorities' tokens (crates/hourglass-timestamp/tests/data/tsa, their `source.txt`
/// says where from): sigstore's production TSA (ECDSA P-384 signer and root, a path of two,
/// the signer's certificate given apart) and DigiCert's (RSA-4096, a path of three).
struct RealToken {
    name: &'static str,
    token: &'static [u8],
    data: &'static [u8],
    root: &'static str,
    chain: &'static str,
}

macro_rules! real_token {
    ($dir:literal, $chain:expr) => {
        RealToken {
            name: $dir,
            token: include_bytes!(concat!(
                "../../hourglass-timestamp/tests/data/tsa/",
                $dir,
                "/token.der"
            )),
            data: include_bytes!(concat!(
                "../../hourglass-timestamp/tests/data/tsa/",
                $dir,
                "/data.bin"
            )),
            root: include_str!(concat!(
                "../../hourglass-timestamp/tests/data/tsa/",
                $dir,
                "/ca.pem"
            )),
            chain: $chain,
        }
    };
}

fn real_tokens() -> [RealToken; 2] {
    [
        real_token!(
            "sigstore-prod-2026-ecdsa-p384-nocert",
            include_str!(
                "../../hourglass-timestamp/tests/data/tsa/sigstore-prod-2026-ecdsa-p384-nocert/chain.pem"
            )
        ),
        real_token!("digicert-2025-rsa4096-sha512", ""),
    ]
}

/// One token's verification timed, ours in process and `openssl ts -verify` as a process.
#[allow(clippy::too_many_arguments)]
fn time_one(
    a: &TsaBenchArgs,
    dir: &Path,
    signer: String,
    token: &[u8],
    data: &[u8],
    root: &str,
    chain: &str,
    target_ms: Option<f64>,
    say: &dyn Fn(&str),
) -> Result<VerifyReport> {
    let anchors = anchors_from_pem(root.as_bytes()).map_err(|e| tsa_error(e.to_string()))?;
    let untrusted = if chain.is_empty() {
        Vec::new()
    } else {
        hourglass_x509::pem_certificates(chain.as_bytes()).map_err(|e| tsa_error(e.to_string()))?
    };
    let path = verify_token_for(token, Covered::Data(data), &untrusted, &anchors)?
        .path()
        .to_vec();
    let mut ours = Vec::with_capacity(a.rounds);
    for _ in 0..a.rounds {
        let t = Instant::now();
        let v = verify_token_for(token, Covered::Data(data), &untrusted, &anchors)?;
        ours.push(t.elapsed().as_secs_f64() * 1e6);
        std::hint::black_box(v);
    }
    let runs = a.rounds.clamp(5, 50);
    say(&format!(
        "tsa --verify: openssl ts -verify, {runs} processes..."
    ));
    let theirs = openssl_verify_ms(dir, token, data, root, chain, runs)?;
    let (ours, theirs) = (Summary::of(&ours), Summary::of(&theirs));
    Ok(VerifyReport {
        signer,
        path,
        token_bytes: token.len(),
        ratio_openssl_to_hourglass: theirs.median * 1e3 / ours.median,
        target_met: target_ms.map(|t| ours.median / 1e3 <= t),
        hourglass_us: ours,
        openssl_process_ms: theirs,
        target_ms,
    })
}

/// Verifying one token of each signer, ours and OpenSSL's: the issue's two shapes, then two
/// real authorities' tokens.
fn verifying(a: &TsaBenchArgs, say: &dyn Fn(&str)) -> Result<Vec<VerifyReport>> {
    let data = b"a document timestamped for the verification benchmark";
    let dir = tempfile::tempdir().map_err(Error::TempDir)?;
    let mut reports = Vec::new();
    let mut rng = SeededEntropy::new(b"hourglass bench tsa --verify signers");
    let signers = [
        TsaKey::Rsa(KeyGenOptions::new(4096, Variant::Crt).generate(&mut rng)?),
        TsaKey::generate(TsaKeyType::EcdsaP384, &mut rng).map_err(|e| tsa_error(e.to_string()))?,
    ];
    for key in signers {
        let signer = key.describe();
        say(&format!(
            "tsa --verify: a {signer} token on a path of three..."
        ));
        let (token, root) = token_on_a_path_of_three(key, data)?;
        reports.push(time_one(
            a,
            dir.path(),
            signer,
            &token,
            data,
            &root,
            "",
            Some(TARGET_VERIFY_MS),
            say,
        )?);
    }
    for real in real_tokens() {
        say(&format!("tsa --verify: the real token {}...", real.name));
        let signer = format!("{} (real)", real.name);
        reports.push(time_one(
            a,
            dir.path(),
            signer,
            real.token,
            real.data,
            real.root,
            real.chain,
            None,
            say,
        )?);
    }
    Ok(reports)
}

/// Runs `hourglass bench tsa`.
pub fn run(a: TsaBenchArgs) -> Result<()> {
    if !a.json {
        crate::machine::print_line();
    }
    if a.clients == 0 {
        return Err(Error::ZeroCount {
            option: "--clients",
        });
    }
    if a.rounds == 0 {
        return Err(Error::ZeroCount { option: "--rounds" });
    }
    if !(1.0..=3600.0).contains(&a.seconds) {
        return Err(Error::SecondsOutOfRange {
            min: 1.0,
            max: 3600.0,
        });
    }
    let quiet = a.quiet || a.json;
    let say = |m: &str| {
        if !quiet {
            eprintln!("{m}");
        }
    };
    let mut report = Report {
        cpu: crate::machine::describe(),
        issuing: Vec::new(),
        issuing_target_per_second: None,
        verifying: Vec::new(),
    };
    if a.verify {
        report.verifying = verifying(&a, &say)?;
    } else {
        let kinds: &[TsaKeyType] = match a.key {
            KeyChoice::Rsa3072 => &[TsaKeyType::Rsa3072],
            KeyChoice::EcdsaP256 => &[TsaKeyType::EcdsaP256],
            KeyChoice::EcdsaP384 => &[TsaKeyType::EcdsaP384],
            KeyChoice::All => &TsaKeyType::ALL,
        };
        for &kind in kinds {
            report.issuing.push(issue(&a, kind, &say)?);
        }
        report.issuing_target_per_second = Some(TARGET_PER_SECOND);
    }
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
        return Ok(());
    }
    for r in &report.issuing {
        println!(
            "RFC 3161 through POST /tsa of `hourglass serve` on loopback ({} TSA key, {} keep-alive clients on the same machine, {:.1} s):",
            r.tsa_key, r.clients, r.seconds
        );
        println!(
            "  tokens: {} -> {:.0} per second; latency median {:.2} ms, p90 {:.2} ms, max {:.2} ms",
            r.tokens, r.tokens_per_second, r.latency_ms.median, r.latency_ms.p90, r.latency_ms.max
        );
        println!(
            "  baseline (same run): {}, {:.0} {} signatures per second on {} threads (a token's one private-key operation)",
            openssl::version::version(),
            r.openssl_signatures_per_second,
            r.tsa_key,
            r.openssl_threads
        );
        println!(
            "  tokens per second / OpenSSL's signatures per second: {:.2}x",
            r.ratio_to_openssl_signatures
        );
        println!(
            "  sample: {} tokens (each client's first) verified against the served TSA CA",
            r.sample_verified
        );
        if r.tsa_key == "RSA-3072" {
            println!(
                "  target: at least {TARGET_PER_SECOND:.0} tokens per second with RSA-3072: {}",
                if r.tokens_per_second >= TARGET_PER_SECOND {
                    "met"
                } else {
                    "NOT met"
                }
            );
        }
    }
    for r in &report.verifying {
        println!(
            "One token verified ({} signer, path of {}: {}; {} bytes):",
            r.signer,
            r.path.len(),
            r.path.join(" <- "),
            r.token_bytes
        );
        println!(
            "  hourglass (verify_token_for, in process): median {:.0} us, p90 {:.0} us over {} rounds",
            r.hourglass_us.median, r.hourglass_us.p90, r.hourglass_us.n
        );
        println!(
            "  baseline (same run): openssl ts -verify as a process ({}): median {:.2} ms over {} runs -> {:.0}x hourglass",
            openssl::version::version(),
            r.openssl_process_ms.median,
            r.openssl_process_ms.n,
            r.ratio_openssl_to_hourglass
        );
        match r.target_met {
            Some(met) => println!(
                "  target: within {TARGET_VERIFY_MS} ms: {}",
                if met { "met" } else { "NOT met" }
            ),
            None => println!(
                "  target: none (a real authority's token, for reference; the {TARGET_VERIFY_MS} ms target is for the chains of three above)"
            ),
        }
    }
    Ok(())
}

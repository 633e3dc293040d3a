//! `hourglass serve`: the institution's submission service (the `hourglass-serve` crate).

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;

use clap::Args;
use hourglass_timestamp::TsaKeyType;

use crate::cli_error::{CliError, Usage};

/// Arguments of `hourglass serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// Data directory: the receipt-signing key, the vault key that seals the sets' private keys,
    /// the admin token and (by default) the SQLite database. Created if missing; keep it private.
    #[arg(long, value_name = "DIR")]
    data: PathBuf,
    /// Address to listen on (port 0: any free port, printed at start).
    #[arg(long, value_name = "ADDR:PORT", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// Database: `postgres://USER@HOST/DB` (several servers may share it) or `sqlite://PATH`
    /// (default: DIR/hourglass.db, one server).
    #[arg(long, value_name = "URL")]
    database: Option<String>,
    /// The admin token file (default DIR/admin.token, made with a random token if missing).
    #[arg(long, value_name = "FILE")]
    admin_token_file: Option<PathBuf>,
    /// Largest document accepted, in bytes (bundles: 1 MiB).
    #[arg(long, value_name = "BYTES", default_value_t = hourglass_serve::DEFAULT_MAX_DOCUMENT_BYTES)]
    max_document_bytes: u64,
    /// Bytes of uploads held in memory at once over all requests (documents wait in memory
    /// until stored); an upload that would exceed it gets 503 and is not stored. At least the
    /// largest document plus 1 MiB.
    #[arg(long, value_name = "BYTES", default_value_t = hourglass_serve::DEFAULT_UPLOAD_MEMORY)]
    upload_memory: u64,
    /// Requests per second allowed per client address (0: no limit).
    #[arg(long, value_name = "N", default_value_t = 20)]
    rate_limit: u32,
    /// Requests a client may send at once before the rate applies.
    #[arg(long, value_name = "N", default_value_t = 60)]
    burst: u32,
    /// Bytes of documents and bundles one client address may have stored per hour; an upload
    /// past it gets 429 with Retry-After and is not stored (0: no quota). A document that does
    /// not match its bundle's digest is not stored and does not count.
    #[arg(long, value_name = "BYTES", default_value_t = hourglass_serve::DEFAULT_UPLOAD_QUOTA)]
    upload_quota: u64,
    /// Seconds allowed for a request's header, from the connection or the previous answer; a
    /// connection that sends none in time is closed.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = humantime::parse_duration)]
    header_timeout: std::time::Duration,
    /// The lowest rate of a request body, in bytes per second, after a grace of
    /// --header-timeout: a slower upload is cut off (0: no minimum).
    #[arg(long, value_name = "BYTES", default_value_t = hourglass_serve::DEFAULT_BODY_MIN_RATE)]
    body_min_rate: u64,
    /// Connections at once from one client address (a trusted proxy's are not capped); more
    /// are closed at once.
    #[arg(long, value_name = "N", default_value_t = hourglass_serve::DEFAULT_CONNECTIONS_PER_ADDRESS)]
    max_connections_per_address: usize,
    /// Connections at once in all. Default: as many as the limit of open files (raised to its
    /// hard limit at start) leaves room for beside the database's; more is refused at start.
    /// At the cap, the oldest connection that has sent no request is closed for a new one.
    #[arg(long, value_name = "N")]
    max_connections: Option<usize>,
    /// A reverse proxy or load balancer in front of this server (an address or a range such as
    /// 10.0.0.0/8; repeat for several): for connections from it, the rate limit takes the
    /// client's address from X-Forwarded-For. Without it the header is ignored, and behind a
    /// proxy every client would share the proxy's limit.
    #[arg(long = "trusted-proxy", value_name = "CIDR", value_parser = hourglass_serve::parse_trusted_proxy)]
    trusted_proxies: Vec<hourglass_serve::IpNet>,
    /// Verification workers (default: one per core).
    #[arg(long, value_name = "N")]
    workers: Option<usize>,
    /// The policy OID the RFC 3161 TSA (POST /tsa) stamps under (default: the project's own,
    /// 2.25.306263111566275780816363928834165067171.2; see docs/FORMATS.md).
    #[arg(long, value_name = "OID")]
    tsa_policy: Option<String>,
    /// The institution's own TSA certificate (PEM: the TSA's, with the critical
    /// extendedKeyUsage timeStamping, then its CAs). Default: DIR/tsa.pem, issued at first start
    /// by DIR/tsa-ca.pem, a CA made with the receipt key.
    #[arg(long, value_name = "FILE", requires = "tsa_key")]
    tsa_cert: Option<PathBuf>,
    /// With --tsa-cert: its private key FILE (unencrypted PEM: RSA, or EC over P-256 or
    /// P-384). Without it: the kind of key the data directory's own TSA is made with at first
    /// start, ecdsa-p256 (the default: RSA-3072's security at a fraction of its cost per
    /// token), rsa-3072 or ecdsa-p384; a data directory whose DIR/tsa.key is of another kind is
    /// refused (move tsa.key and tsa.pem aside to make a new one).
    #[arg(long, value_name = "KIND|FILE")]
    tsa_key: Option<String>,
    /// The transparency log's origin (its checkpoints' first line, and its key's name), fixed
    /// when DIR/log.key is made at first start: name it after the log's public URL without the
    /// scheme (e.g. receipts.example.org/log). Default at first start: LISTEN/log.
    #[arg(long, value_name = "ORIGIN")]
    log_origin: Option<String>,
    /// A witness that cosigns the log's checkpoints: its URL (it serves POST URL/add-checkpoint)
    /// and its verifier key file, as URL=KEYFILE (repeat for several). Receipts are handed out
    /// once a quorum of them cosigned a checkpoint holding them.
    #[arg(long = "witness", value_name = "URL=KEYFILE", value_parser = parse_witness)]
    witnesses: Vec<(String, PathBuf)>,
    /// How many of the --witness witnesses must cosign a checkpoint before it is published
    /// (default: all of them).
    #[arg(long, value_name = "N", requires = "witnesses")]
    witness_quorum: Option<usize>,
    /// How often the log publishes when nothing wakes it, and retries a checkpoint that waits
    /// for witnesses.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = humantime::parse_duration)]
    log_interval: std::time::Duration,
}

/// A `--witness URL=KEYFILE` value: the URL is what precedes the first `=`.
fn parse_witness(text: &str) -> Result<(String, PathBuf), String> {
    let (url, key) = text
        .split_once('=')
        .filter(|(u, k)| !u.is_empty() && !k.is_empty())
        .ok_or_else(|| format!("{text:?} is not URL=KEYFILE"))?;
    let url = hourglass_log::http::normalize_url(url).map_err(|e| e.to_string())?;
    Ok((url, PathBuf::from(key)))
}

/// Runs `hourglass serve` until Ctrl-C or SIGTERM.
pub fn run(a: ServeArgs) -> Result<(), CliError> {
    let mut config = hourglass_serve::Config::new(a.data);
    config.listen = a.listen;
    config.database = a.database;
    config.admin_token_file = a.admin_token_file;
    config.max_document_bytes = a.max_document_bytes;
    config.upload_memory = a.upload_memory;
    config.rate_limit = match (NonZeroU32::new(a.rate_limit), NonZeroU32::new(a.burst)) {
        (Some(rate), Some(burst)) => Some((rate, burst)),
        (Some(rate), None) => Some((rate, rate)),
        (None, _) => None,
    };
    config.trusted_proxies = a.trusted_proxies;
    config.upload_quota = (a.upload_quota > 0).then_some(a.upload_quota);
    if a.header_timeout.is_zero() {
        return Err(Usage::range("--header-timeout", "be longer than 0").into());
    }
    config.header_timeout = a.header_timeout;
    config.body_min_rate = a.body_min_rate;
    if a.max_connections_per_address == 0 {
        return Err(Usage::range("--max-connections-per-address", "be at least 1").into());
    }
    config.max_connections_per_address = a.max_connections_per_address;
    if let Some(n) = a.max_connections {
        if n < hourglass_serve::MIN_CONNECTIONS {
            return Err(Usage::range(
                "--max-connections",
                format!("be at least {}", hourglass_serve::MIN_CONNECTIONS),
            )
            .into());
        }
    }
    config.max_connections = a.max_connections;
    if let Some(w) = a.workers {
        if w == 0 {
            return Err(Usage::range("--workers", "be at least 1").into());
        }
        config.workers = w;
    }
    if let Some(p) = &a.tsa_policy {
        config.tsa_policy = hourglass_timestamp::PolicyId::parse(p).map_err(|e| Usage::Value {
            flag: "--tsa-policy",
            value: p.clone(),
            problem: e.to_string().into(),
        })?;
    }
    config.tsa = match (a.tsa_cert, a.tsa_key) {
        (Some(cert), Some(key)) => hourglass_serve::TsaSource::Given(hourglass_serve::TsaFiles {
            cert,
            key: PathBuf::from(key),
        }),
        (None, Some(kind)) => hourglass_serve::TsaSource::Own(Some(
            TsaKeyType::from_name(&kind).ok_or_else(|| Usage::Value {
                flag: "--tsa-key",
                value: kind,
                problem: format!(
                    "without --tsa-cert, --tsa-key names the kind of the data directory's own TSA key: {} (to use a key file, give its certificate with --tsa-cert)",
                    TsaKeyType::names()
                )
                .into(),
            })?,
        )),
        _ => hourglass_serve::TsaSource::Own(None),
    };
    if let Some(origin) = &a.log_origin {
        if !hourglass_log::keys::valid_key_name(origin) {
            return Err(Usage::Value {
                flag: "--log-origin",
                value: origin.clone(),
                problem: "an origin is 1 to 256 bytes without spaces or '+' (e.g. receipts.example.org/log)".into(),
            }
            .into());
        }
    }
    config.log_origin = a.log_origin;
    for (url, key) in &a.witnesses {
        config.witnesses.push(hourglass_serve::WitnessEndpoint {
            url: url.clone(),
            key: crate::log_keys::load_verifier_key(key, hourglass_log::keys::KeyRole::Witness)?,
        });
    }
    if let Some(q) = a.witness_quorum {
        if q == 0 || q > config.witnesses.len() {
            return Err(Usage::range(
                "--witness-quorum",
                "be at least 1 and at most the number of --witness given",
            )
            .into());
        }
    }
    config.witness_quorum = a.witness_quorum;
    if a.log_interval.is_zero() {
        return Err(Usage::range("--log-interval", "be longer than 0").into());
    }
    config.log_interval = a.log_interval;
    init_tracing();
    hourglass_serve::run(config, |started| {
        eprintln!(
            "hourglass serve: listening on http://{} ({}); admin token in {}",
            started.addr,
            started.database,
            started.admin_token_file.display()
        );
    })
    .map_err(CliError::from)
}

/// Logs to standard error; `RUST_LOG` chooses what (default: this service's info lines and
/// every warning).
pub(crate) fn init_tracing() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn,hourglass_serve=info"));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .try_init();
}

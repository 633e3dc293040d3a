//! `hourglass serve`: the institution's submission service.
//!
//! An institution publishes puzzle sets, authors who come back online upload the bundle they
//! sealed offline with the document, a background worker verifies it (with the institution's
//! trapdoor for private sets, publicly for public sets) and signs a receipt, and a web page and
//! a JSON API (docs/API.md) show it all.
//!
//! - Storage: SQLite in the data directory by default (WAL, `synchronous = FULL`: a 202 means
//!   the submission is on disk), or PostgreSQL (`--database postgres://...`), with the same
//!   migrations. Several servers share one PostgreSQL: the queue is claimed with
//!   `FOR UPDATE SKIP LOCKED`.
//! - Secrets stay in the data directory ([`Config::data`]): the receipt-signing key, the vault
//!   key that seals the sets' private keys in the database, the admin token.
//! - Limits: per-field upload sizes (413), a per-client request rate (429), JSON errors that name
//!   the field (400), the admin token compared in constant time (401).

#![forbid(unsafe_code)]

mod api;
pub mod bench;
mod datadir;
mod error;
mod metrics;
mod pages;
mod store;
mod tlog;
mod tsa;
mod witness;
mod worker;

use std::net::{IpAddr, SocketAddr};
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use tokio::sync::Notify;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

pub use error::Error;

pub use datadir::TsaFiles;
pub use ipnet::IpNet;
pub use tlog::WitnessSpec;
pub use witness::{run_witness, WitnessConfig};

use crate::api::ApiError;
use crate::datadir::DataDir;
use crate::metrics::Metrics;
use crate::store::{Backend, Store};

/// Default largest document (64 MiB).
pub const DEFAULT_MAX_DOCUMENT_BYTES: u64 = 64 << 20;
/// Largest bundle: the bundle format's limit (1 MiB), which every surface shares.
pub const DEFAULT_MAX_BUNDLE_BYTES: u64 = hourglass_timelock::bundle::MAX_BUNDLE_BYTES;
/// Default memory for uploads being received at once (documents are held in memory until they
/// are stored): eight of the largest.
pub const DEFAULT_UPLOAD_MEMORY: u64 = 8 * (DEFAULT_MAX_DOCUMENT_BYTES + DEFAULT_MAX_BUNDLE_BYTES);

/// How the service runs.
#[derive(Debug, Clone)]
pub struct Config {
    /// The data directory (secrets, and the SQLite database unless `database` is set).
    pub data: PathBuf,
    /// Where to listen (port 0: any free port, printed at start).
    pub listen: SocketAddr,
    /// `sqlite://PATH` or `postgres://...`; default: SQLite in `data`.
    pub database: Option<String>,
    /// The admin token file (default `data/admin.token`, made with a random token).
    pub admin_token_file: Option<PathBuf>,
    /// Largest document accepted.
    pub max_document_bytes: u64,
    /// Largest bundle accepted.
    pub max_bundle_bytes: u64,
    /// Bytes of uploads held in memory at once, over all requests; an upload that would exceed
    /// it gets 503 with `Retry-After` instead of the server running out of memory. At least one
    /// largest document and bundle.
    pub upload_memory: u64,
    /// Requests per second allowed per client address (and the burst); `None`: no limit.
    pub rate_limit: Option<(NonZeroU32, NonZeroU32)>,
    /// Reverse proxies (load balancers) in front of this server: for a connection from one of
    /// these ranges, the client address is taken from `X-Forwarded-For` ([`client_address`]).
    /// Empty (the default): the header is ignored and the peer is the client.
    pub trusted_proxies: Vec<IpNet>,
    /// Verification workers in this process.
    pub workers: usize,
    /// The policy the TSA stamps under (default: the project's own,
    /// [`hourglass_timelock::timestamp::DEFAULT_POLICY`]).
    pub tsa_policy: hourglass_timelock::timestamp::PolicyId,
    /// An institution's own TSA certificate and key; `None`: the data directory's, made at
    /// first start.
    pub tsa_files: Option<TsaFiles>,
    /// The transparency log's origin, fixed when its key (`DIR/log.key`) is made at first
    /// start; `None`: `<listen address>/log` then, and the key's own afterwards.
    pub log_origin: Option<String>,
    /// The witnesses asked to cosign each checkpoint.
    pub witnesses: Vec<WitnessSpec>,
    /// How many of them must cosign before a checkpoint is published (`None`: all).
    pub witness_quorum: Option<usize>,
    /// How often the log looks for receipts to sequence when not woken (and retries a
    /// checkpoint that waits for witnesses).
    pub log_interval: Duration,
}

impl Config {
    /// Defaults for a data directory: loopback port 8080, SQLite, 64 MiB documents, 20
    /// requests per second per client with bursts of 60, one worker per core.
    pub fn new(data: PathBuf) -> Self {
        Self {
            data,
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            database: None,
            admin_token_file: None,
            max_document_bytes: DEFAULT_MAX_DOCUMENT_BYTES,
            max_bundle_bytes: DEFAULT_MAX_BUNDLE_BYTES,
            upload_memory: DEFAULT_UPLOAD_MEMORY,
            rate_limit: Some((
                NonZeroU32::new(20).unwrap_or(NonZeroU32::MIN),
                NonZeroU32::new(60).unwrap_or(NonZeroU32::MIN),
            )),
            workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            trusted_proxies: Vec::new(),
            tsa_policy: hourglass_timelock::timestamp::PolicyId::hourglass(),
            tsa_files: None,
            log_origin: None,
            witnesses: Vec::new(),
            witness_quorum: None,
            log_interval: Duration::from_secs(1),
        }
    }
}

/// Upload limits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_document_bytes: u64,
    pub max_bundle_bytes: u64,
}

/// What every handler and worker shares.
pub(crate) struct AppState {
    pub store: Store,
    pub data: DataDir,
    pub limits: Limits,
    /// The bytes of uploads that may be held in memory at once ([`Config::upload_memory`]).
    pub upload_budget: Arc<tokio::sync::Semaphore>,
    pub metrics: Metrics,
    /// Woken when a submission is queued.
    pub queued: Notify,
    /// This server's name in the verifications it records.
    pub server_id: String,
    /// Each set's verifier (a private set's parsed keys), made at its first verification and
    /// kept, by set name and digest (sets are never changed in place).
    pub verifiers: worker::VerifierCache,
    /// The TSA's serial numbers.
    pub serials: tsa::Serials,
    /// The transparency log.
    pub log: tlog::LogService,
    limiter: Option<DefaultKeyedRateLimiter<IpAddr>>,
    trusted_proxies: Vec<IpNet>,
}

/// Runs the service until SIGINT or SIGTERM. `ready` is called with the bound address (the
/// port chosen when the configuration asked for port 0) before any request is served.
pub fn run(config: Config, ready: impl FnOnce(&Started)) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Error::Serve)?;
    runtime.block_on(serve(config, ready))
}

/// What a started server reports.
#[derive(Debug, Clone)]
pub struct Started {
    /// The address it listens on.
    pub addr: SocketAddr,
    /// `SQLite (PATH)` or `PostgreSQL`.
    pub database: String,
    /// The admin token file.
    pub admin_token_file: PathBuf,
}

async fn serve(config: Config, ready: impl FnOnce(&Started)) -> Result<(), Error> {
    let sqlite_path = config.data.join("hourglass.db");
    let url = config
        .database
        .clone()
        .unwrap_or_else(|| format!("sqlite://{}?mode=rwc", sqlite_path.display()));
    let is_sqlite = url.starts_with("sqlite:");
    let largest = config.max_document_bytes + config.max_bundle_bytes;
    if config.upload_memory < largest {
        return Err(Error::UploadMemory {
            memory: config.upload_memory,
            largest,
        });
    }
    let upload_permits = usize::try_from(config.upload_memory)
        .unwrap_or(usize::MAX)
        .min(tokio::sync::Semaphore::MAX_PERMITS);
    let log = tlog::LogService::new(
        config.witnesses.clone(),
        config.witness_quorum.unwrap_or(config.witnesses.len()),
        config.log_interval,
    )?;
    let listener = tokio::net::TcpListener::bind(config.listen)
        .await
        .map_err(|source| Error::Bind {
            addr: config.listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(Error::Serve)?;
    let data = DataDir::open(
        &config.data,
        config.admin_token_file.as_deref(),
        is_sqlite,
        config.tsa_files.as_ref(),
        config.tsa_policy.clone(),
        (config.log_origin.as_deref(), &format!("{addr}/log")),
    )?;
    let store = Store::open(&url, (config.workers as u32 + 8).max(10)).await?;
    store
        .open_log(data.log_key().name(), &data.log_key().verifier().encode())
        .await?;
    let limiter = config.rate_limit.map(|(per_second, burst)| {
        RateLimiter::keyed(Quota::per_second(per_second).allow_burst(burst))
    });
    let server_id = format!("{addr}/{}", std::process::id());
    let instance = store.tsa_instance(&server_id, worker::now_ms()).await?;
    let state = Arc::new(AppState {
        store,
        data,
        limits: Limits {
            max_document_bytes: config.max_document_bytes,
            max_bundle_bytes: config.max_bundle_bytes,
        },
        upload_budget: Arc::new(tokio::sync::Semaphore::new(upload_permits)),
        metrics: Metrics::new(),
        queued: Notify::new(),
        server_id,
        verifiers: worker::VerifierCache::default(),
        serials: tsa::Serials::new(instance),
        log,
        limiter,
        trusted_proxies: config.trusted_proxies.clone(),
    });
    for _ in 0..config.workers.max(1) {
        tokio::spawn(worker::run(state.clone()));
    }
    tokio::spawn(tlog::run(state.clone()));
    let sweeper = state.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(60)).await;
            if let Some(l) = &sweeper.limiter {
                l.retain_recent();
            }
        }
    });
    let app = router(state.clone(), &config);
    ready(&Started {
        addr,
        database: match state.store.backend() {
            Backend::Sqlite => format!("SQLite ({})", sqlite_path.display()),
            Backend::Postgres => "PostgreSQL".into(),
        },
        admin_token_file: config
            .admin_token_file
            .clone()
            .unwrap_or_else(|| state.data.path().join("admin.token")),
    });
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(shutdown_signal())
    .await
    .map_err(Error::Serve)
}

fn router(state: Arc<AppState>, config: &Config) -> Router {
    use axum::routing::post;
    // The multipart reader enforces the per-field limits; this bounds the whole body.
    let upload_limit = DefaultBodyLimit::max(
        (config.max_document_bytes + config.max_bundle_bytes + (64 << 10)) as usize,
    );
    let routes = Router::new()
        .route("/", get(pages::index))
        .route("/submissions", post(pages::upload).layer(upload_limit))
        .route("/submissions/{id}", get(pages::submission))
        .route("/institution.pub", get(api::institution_pub))
        .route(
            "/tsa",
            post(tsa::post_tsa).layer(DefaultBodyLimit::max(
                hourglass_timelock::timestamp::MAX_QUERY_BYTES,
            )),
        )
        .route("/tsa.pem", get(tsa::tsa_pem))
        .route("/log/checkpoint", get(tlog::get_checkpoint))
        .route("/log/key", get(tlog::get_key))
        .route("/log/tile/{*rest}", get(tlog::get_tile))
        .route("/tsa-ca.pem", get(tsa::tsa_ca_pem))
        .route("/api/v1/sets", get(api::list_sets).post(api::create_set))
        .route("/api/v1/sets/import", post(api::import_set))
        .route("/api/v1/sets/{name}", get(api::get_set))
        .route(
            "/api/v1/submissions",
            post(api::post_submission).layer(upload_limit),
        )
        .route("/api/v1/submissions/{id}", get(api::get_submission))
        .route("/api/v1/submissions/{id}/receipt", get(api::get_receipt))
        .route(
            "/api/v1/submissions/{id}/timestamp",
            get(tsa::get_timestamp),
        )
        .route("/healthz", get(api::healthz))
        .route("/metrics", get(api::metrics))
        .route_layer(axum::middleware::from_fn_with_state(state.clone(), count))
        .fallback(api::not_found)
        .layer(axum::middleware::from_fn_with_state(
            state.clone(),
            rate_limit,
        ));
    with_security_headers(routes)
        .layer(TraceLayer::new_for_http())
        .with_state(state)
}

/// Headers on every answer: no script, frame, plugin or foreign resource may run in the pages
/// (they need none: the core flow works without JavaScript), content types are not sniffed,
/// the pages are not framed and send no referrer.
fn with_security_headers<S: Clone + Send + Sync + 'static>(router: Router<S>) -> Router<S> {
    use axum::http::header;
    router
        .layer(SetResponseHeaderLayer::if_not_present(
            header::CONTENT_SECURITY_POLICY,
            HeaderValue::from_static(
                "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_CONTENT_TYPE_OPTIONS,
            HeaderValue::from_static("nosniff"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::X_FRAME_OPTIONS,
            HeaderValue::from_static("DENY"),
        ))
        .layer(SetResponseHeaderLayer::if_not_present(
            header::REFERRER_POLICY,
            HeaderValue::from_static("no-referrer"),
        ))
}

/// Counts requests by method, route template and status (labels from fixed sets: see
/// [`Metrics::request`]).
async fn count(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = request.method().to_string();
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_string());
    let response = next.run(request).await;
    state.metrics.request(
        &method,
        route.as_deref(),
        response.status().as_u16(),
        start.elapsed(),
    );
    response
}

/// Refuses a client over its request rate with 429. Health checks (a database ping, probed
/// often by load balancers) are exempt, and so is the transparency log (`/log/...`): an
/// auditor reading a log from scratch makes a request per 256 entries, each a bounded range
/// read of immutable rows (a cache in front serves them at scale). `/metrics` is not, since
/// each scrape counts the stored submissions in the database (a scraper every few seconds is
/// far below any useful limit).
async fn rate_limit(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    if path == "/healthz" || path.starts_with("/log/") {
        return next.run(request).await;
    }
    if let Some(limiter) = &state.limiter {
        let client = client_address(peer.ip(), request.headers(), &state.trusted_proxies);
        if let Err(not_until) = limiter.check_key(&client) {
            let wait = not_until.wait_time_from(governor::clock::Clock::now(
                &governor::clock::DefaultClock::default(),
            ));
            let mut r = ApiError::new(
                StatusCode::TOO_MANY_REQUESTS,
                "too many requests from this address; slow down",
            )
            .into_response();
            if let Ok(v) = HeaderValue::from_str(&wait.as_secs().max(1).to_string()) {
                r.headers_mut().insert(axum::http::header::RETRY_AFTER, v);
            }
            return r;
        }
    }
    next.run(request).await
}

/// The address a request comes from, for the per-client rate limit. A connection from a trusted
/// proxy (`trusted`) carries the client's address in `X-Forwarded-For`, which each proxy
/// appends to: the client is the rightmost entry that is not itself a trusted proxy, read from
/// the right, so that entries a client wrote into the header (left of what the proxies added)
/// are never believed. A connection from anywhere else is the client itself, whatever its
/// headers say. When every entry is a trusted proxy, or one does not parse, the last trusted hop
/// read stands for the client (as without the header).
pub fn client_address(peer: IpAddr, headers: &HeaderMap, trusted: &[IpNet]) -> IpAddr {
    let is_trusted = |ip: &IpAddr| trusted.iter().any(|net| net.contains(ip));
    let mut client = peer.to_canonical();
    if !is_trusted(&client) {
        return client;
    }
    let hops: Vec<&str> = headers
        .get_all("x-forwarded-for")
        .iter()
        .flat_map(|v| v.to_str().unwrap_or("").split(','))
        .collect();
    for hop in hops.iter().rev() {
        let Ok(ip) = hop.trim().parse::<IpAddr>() else {
            break;
        };
        client = ip.to_canonical();
        if !is_trusted(&client) {
            break;
        }
    }
    client
}

/// A `--trusted-proxy` value: an address range (`10.0.0.0/8`, `fd00::/8`) or one address.
pub fn parse_trusted_proxy(text: &str) -> Result<IpNet, String> {
    text.parse::<IpNet>()
        .or_else(|_| text.parse::<IpAddr>().map(IpNet::from))
        .map(|net| net.trunc())
        .map_err(|_| format!("{text:?} is neither an address nor an address/prefix range"))
}

pub(crate) async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
        {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = term => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append("x-forwarded-for", HeaderValue::from_str(v).unwrap());
        }
        h
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn only_a_trusted_proxy_is_believed_about_the_client() {
        let trusted = [
            parse_trusted_proxy("10.0.0.0/8").unwrap(),
            parse_trusted_proxy("::1").unwrap(),
        ];
        let from = |peer: &str, xff: &[&str]| client_address(ip(peer), &headers(xff), &trusted);
        // No trusted proxy: the peer, whatever the header says.
        assert_eq!(from("203.0.113.9", &["198.51.100.1"]), ip("203.0.113.9"));
        assert_eq!(
            client_address(ip("10.0.0.1"), &headers(&["198.51.100.1"]), &[]),
            ip("10.0.0.1")
        );
        // Behind the proxy: the address it appended.
        assert_eq!(from("10.0.0.1", &["198.51.100.1"]), ip("198.51.100.1"));
        assert_eq!(from("::1", &["198.51.100.1"]), ip("198.51.100.1"));
        // A client writing its own header cannot choose its bucket: the proxy's entry is last.
        assert_eq!(
            from("10.0.0.1", &["1.2.3.4, 5.6.7.8", "198.51.100.1"]),
            ip("198.51.100.1")
        );
        assert_eq!(
            from("10.0.0.1", &["1.2.3.4, 198.51.100.1"]),
            ip("198.51.100.1")
        );
        // Chains of trusted proxies are walked through.
        assert_eq!(
            from("10.0.0.1", &["198.51.100.1, 10.1.2.3, 10.9.9.9"]),
            ip("198.51.100.1")
        );
        // Junk or an all-proxy chain: the last trusted hop, never an address the client chose.
        assert_eq!(from("10.0.0.1", &["198.51.100.1, junk"]), ip("10.0.0.1"));
        assert_eq!(
            from("10.0.0.1", &["1.2.3.4, junk, 10.2.2.2"]),
            ip("10.2.2.2")
        );
        assert_eq!(from("10.0.0.1", &["10.3.3.3"]), ip("10.3.3.3"));
        assert_eq!(from("10.0.0.1", &[]), ip("10.0.0.1"));
        // IPv4 peers seen through an IPv6 socket count as IPv4.
        assert_eq!(
            from("::ffff:10.0.0.1", &["198.51.100.1"]),
            ip("198.51.100.1")
        );
    }

    #[test]
    fn trusted_proxy_values_parse_or_are_refused() {
        assert_eq!(
            parse_trusted_proxy("10.1.2.3/8").unwrap().to_string(),
            "10.0.0.0/8"
        );
        assert_eq!(parse_trusted_proxy("::1").unwrap().to_string(), "::1/128");
        assert_eq!(
            parse_trusted_proxy("192.0.2.7").unwrap().to_string(),
            "192.0.2.7/32"
        );
        for bad in ["", "10.0.0.0/33", "proxy.example", "10.0.0"] {
            assert!(parse_trusted_proxy(bad).is_err(), "{bad}");
        }
    }
}

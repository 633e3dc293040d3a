//! Starting the service: the database, the data directory, the workers, the sequencer, and the
//! HTTP routes with their limits.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, DefaultBodyLimit, MatchedPath, Request, State};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use governor::{Quota, RateLimiter};
use tokio::sync::Notify;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;

use crate::api_error::ApiError;
use crate::clock::now_ms;
use crate::commit::Committer;
use crate::config::Config;
use crate::connections::{self, open_file_budget, ConnectionLimits, Gate, MIN_CONNECTIONS};
use crate::datadir::DataDir;
use crate::error::Error;
use crate::metrics::Metrics;
use crate::proxy::{client_address, ClientAddress};
use crate::quota::UploadQuota;
use crate::sequencer::{LogCtx, Sequencer};
use crate::serials::Serials;
use crate::signal::{listen, shutdown_signal};
use crate::state::{AppState, Limits};
use crate::store::{Backend, Store};
use crate::verifiers::VerifierCache;
use crate::{api, pages, sequencer, tlog, tsa, worker};

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
    if let Some(quota) = config.upload_quota.filter(|q| *q < largest) {
        return Err(Error::UploadQuota { quota, largest });
    }
    let upload_permits = usize::try_from(config.upload_memory)
        .unwrap_or(usize::MAX)
        .min(tokio::sync::Semaphore::MAX_PERMITS);
    let log = Sequencer::new(
        config.witnesses.clone(),
        config.witness_quorum.unwrap_or(config.witnesses.len()),
        config.log_interval,
    )?;
    let (listener, addr) = listen(config.listen).await?;
    let data = DataDir::open(
        &config.data,
        config.admin_token_file.as_deref(),
        is_sqlite,
        &config.tsa,
        config.tsa_policy.clone(),
        (config.log_origin.as_deref(), &format!("{addr}/log")),
    )?;
    let pool = (config.workers as u32 + 8).max(10);
    let (file_limit, room) = open_file_budget(pool).map_err(Error::Serve)?;
    let room = room.unwrap_or(0);
    let max_connections = config.max_connections.unwrap_or(room);
    if max_connections > room || max_connections < MIN_CONNECTIONS {
        return Err(Error::OpenFiles {
            limit: file_limit,
            room,
            wanted: max_connections.max(MIN_CONNECTIONS),
        });
    }
    let store = Store::open(&url, pool).await?;
    store
        .open_log(data.log_key().name(), &data.log_key().verifier().encode())
        .await?;
    let limiter = config.rate_limit.map(|(per_second, burst)| {
        RateLimiter::keyed(Quota::per_second(per_second).allow_burst(burst))
    });
    let server_id = format!("{addr}/{}", std::process::id());
    let instance = store.tsa_instance(&server_id, now_ms()).await?;
    let state = Arc::new(AppState {
        committer: Committer::start(store.clone()),
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
        verifiers: VerifierCache::default(),
        serials: Serials::new(instance),
        log,
        limiter,
        upload_quota: config.upload_quota.map(UploadQuota::new),
        trusted_proxies: config.trusted_proxies.clone(),
    });
    for _ in 0..config.workers.max(1) {
        tokio::spawn(worker::run(state.clone()));
    }
    let log_state = state.clone();
    tokio::spawn(async move {
        sequencer::run(LogCtx {
            store: &log_state.store,
            key: log_state.data.log_key(),
            sequencer: &log_state.log,
            metrics: &log_state.metrics,
        })
        .await;
    });
    let sweeper = state.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(Duration::from_secs(60)).await;
            if let Some(l) = &sweeper.limiter {
                l.retain_recent();
            }
            if let Some(q) = &sweeper.upload_quota {
                q.retain_recent();
            }
        }
    });
    let app = router(state.clone(), &config);
    let gate = Arc::new(Gate::new(
        ConnectionLimits {
            header_timeout: config.header_timeout,
            body_min_rate: config.body_min_rate,
            per_address: config.max_connections_per_address,
            total: max_connections,
            trusted_proxies: config.trusted_proxies.clone(),
        },
        state.metrics.connections.clone(),
    ));
    tracing::info!(
        max_connections,
        per_address = config.max_connections_per_address,
        open_files = file_limit,
        "connection limits"
    );
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
    connections::serve(listener, app, gate, shutdown_signal()).await;
    Ok(())
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
            post(tsa::post_tsa).layer(DefaultBodyLimit::max(hourglass_timestamp::MAX_QUERY_BYTES)),
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
    let client = client_address(peer.ip(), request.headers(), &state.trusted_proxies);
    if let Some(limiter) = &state.limiter {
        if let Err(not_until) = limiter.check_key(&client) {
            let wait = not_until.wait_time_from(governor::clock::Clock::now(
                &governor::clock::DefaultClock::default(),
            ));
            return ApiError::too_many("too many requests from this address; slow down", wait)
                .into_response();
        }
    }
    let mut request = request;
    request.extensions_mut().insert(ClientAddress(client));
    next.run(request).await
}

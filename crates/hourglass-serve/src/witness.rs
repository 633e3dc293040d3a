//! `hourglass log witness`: a C2SP tlog-witness. `POST /add-checkpoint` cosigns a checkpoint of
//! a log it was given the key of, only after checking the log's signature and a consistency
//! proof from the last checkpoint it cosigned for that log, which it persists (fsync, rename)
//! before answering; requests are handled one at a time, so a check and its persisting are
//! never interleaved with another request's (the spec's rollback race). `GET /<origin
//! hash>/checkpoint` serves the latest checkpoint it cosigned for a log (the spec's monitor
//! retrieval; submission and monitoring prefixes are the same, the witness's root).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::SystemTime;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use hourglass_log::keys::{SigningKey, VerifierKey};
use hourglass_log::witness::{AddCheckpoint, Refusal, StateDir, Witness, MAX_REQUEST_BYTES};
use tokio::sync::Mutex;

use crate::error::{io, Error};
use crate::signal::{listen, shutdown_signal};

/// How a witness runs.
#[derive(Debug)]
pub struct WitnessConfig {
    /// Where to listen (port 0: any free port, reported at start).
    pub listen: SocketAddr,
    /// The witness's cosigning key.
    pub key: SigningKey,
    /// The keys of the logs it witnesses.
    pub logs: Vec<VerifierKey>,
    /// The directory of what it remembers (one file per log).
    pub state: PathBuf,
}

struct WitnessState {
    witness: Witness,
    /// Held from reading a log's state to persisting the new one.
    memory: Mutex<StateDir>,
}

/// Runs the witness until SIGINT or SIGTERM; `ready` is called with the bound address.
pub fn run_witness(config: WitnessConfig, ready: impl FnOnce(SocketAddr)) -> Result<(), Error> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Error::Serve)?;
    runtime.block_on(async move {
        let memory = StateDir::open(&config.state).map_err(io(&config.state))?;
        let witness =
            Witness::new(config.key, config.logs).map_err(|e| Error::Log(e.to_string()))?;
        // What it remembers must be readable now, not at the first request.
        for log in witness.logs() {
            memory
                .load(log)
                .map_err(|e| Error::Log(format!("{}: {e}", memory.path(log.name()).display())))?;
        }
        let (listener, addr) = listen(config.listen).await?;
        let state = Arc::new(WitnessState {
            witness,
            memory: Mutex::new(memory),
        });
        let app = Router::new()
            .route(
                "/add-checkpoint",
                post(add_checkpoint).layer(DefaultBodyLimit::max(MAX_REQUEST_BYTES)),
            )
            .route("/{origin_hash}/checkpoint", get(latest_checkpoint))
            .route("/", get(about))
            .with_state(state);
        ready(addr);
        axum::serve(listener, app)
            .with_graceful_shutdown(shutdown_signal())
            .await
            .map_err(Error::Serve)
    })
}

fn text(status: StatusCode, body: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        body,
    )
        .into_response()
}

/// `GET /`: the witness's key and the logs it witnesses.
async fn about(State(state): State<Arc<WitnessState>>) -> Response {
    let mut body = format!(
        "hourglass witness (C2SP tlog-witness)\nkey: {}\nlogs:\n",
        state.witness.verifier().encode()
    );
    for log in state.witness.logs() {
        body.push_str(&format!("  {}\n", log.encode()));
    }
    text(StatusCode::OK, body)
}

/// `GET /<origin hash>/checkpoint` (tlog-witness's monitor retrieval): the latest checkpoint
/// this witness cosigned for the log whose origin hashes to `origin_hash`, with the log's
/// signature it verified and its own cosignature; 404 for a log it does not witness or never
/// cosigned.
async fn latest_checkpoint(
    State(state): State<Arc<WitnessState>>,
    Path(origin_hash): Path<String>,
) -> Response {
    let Some(log) = state.witness.log_by_origin_hash(&origin_hash) else {
        return text(
            StatusCode::NOT_FOUND,
            "this witness does not witness a log of that origin hash\n".into(),
        );
    };
    let memory = state.memory.lock().await.clone();
    match memory.load(log) {
        Ok(Some(known)) => (
            StatusCode::OK,
            [
                (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                (header::CACHE_CONTROL, "no-cache"),
            ],
            known.note,
        )
            .into_response(),
        Ok(None) => text(
            StatusCode::NOT_FOUND,
            format!(
                "this witness has not cosigned a checkpoint of '{}' yet\n",
                log.name()
            ),
        ),
        Err(e) => {
            tracing::error!(log = %log.name(), error = %e, "cannot read the witness's state");
            text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the witness's state is unreadable\n".into(),
            )
        }
    }
}

/// `POST /add-checkpoint`.
async fn add_checkpoint(State(state): State<Arc<WitnessState>>, body: Bytes) -> Response {
    let request = match AddCheckpoint::parse(&body) {
        Ok(r) => r,
        Err(e) => return text(StatusCode::BAD_REQUEST, format!("{e}\n")),
    };
    let origin = request.checkpoint.origin().to_string();
    let memory = state.memory.lock().await;
    let Some(log) = state.witness.logs().iter().find(|l| l.name() == origin) else {
        return text(
            StatusCode::NOT_FOUND,
            format!("this witness does not witness the log '{origin}'\n"),
        );
    };
    let known = match memory.load(log) {
        Ok(k) => k,
        Err(e) => {
            tracing::error!(log = %origin, error = %e, "cannot read the witness's state");
            return text(
                StatusCode::INTERNAL_SERVER_ERROR,
                "the witness's state is unreadable\n".into(),
            );
        }
    };
    let now = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    match state.witness.add_checkpoint(&request, known.as_ref(), now) {
        Ok((remembered, line)) => {
            let dir = memory.clone();
            let stored = tokio::task::spawn_blocking(move || dir.store(&remembered)).await;
            if !matches!(stored, Ok(Ok(()))) {
                tracing::error!(log = %origin, "cannot persist the witness's state; not cosigning");
                return text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    "the witness cannot persist its state\n".into(),
                );
            }
            tracing::info!(log = %origin, size = request.checkpoint.size(), "cosigned");
            (
                StatusCode::OK,
                [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                line,
            )
                .into_response()
        }
        Err(Refusal::Conflict { size, why }) => {
            tracing::warn!(log = %origin, "409: {why}");
            (
                StatusCode::CONFLICT,
                [(header::CONTENT_TYPE, "text/x.tlog.size")],
                format!("{size}\n"),
            )
                .into_response()
        }
        Err(refusal) => {
            let status = StatusCode::from_u16(refusal.status()).unwrap_or(StatusCode::BAD_REQUEST);
            tracing::warn!(log = %origin, status = refusal.status(), "{}", refusal.message());
            text(status, format!("{}\n", refusal.message()))
        }
    }
}

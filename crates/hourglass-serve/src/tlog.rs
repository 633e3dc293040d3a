//! The service's transparency log: every receipt the workers sign is sequenced into a C2SP
//! tiled log, a checkpoint of the log is signed with `log.key` and cosigned by the configured
//! witnesses, and only once a checkpoint holding a receipt's entry is published is the receipt
//! (with its inclusion proof and that checkpoint) handed out.
//!
//! One task per server runs the three steps in turn; every step is a database transaction, so a
//! server killed at any point loses nothing and repeats nothing, and the servers of one
//! PostgreSQL share one log (sequencing takes the log's state row first, which orders them).
//! A witness that is down or refuses holds back the checkpoint, never an upload: uploads are
//! still accepted, and receipts wait until a quorum of witnesses cosigns.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use hourglass_log::checkpoint::{LogPins, SignedCheckpoint};
use hourglass_log::http::{WitnessAnswer, WitnessClient};
use hourglass_log::keys::VerifierKey;
use hourglass_log::tiles::{encode_bundle, parse_path, Resource, TileKind};
use hourglass_log::tree::{
    consistency_needs, inclusion_needs, prove_consistency, prove_inclusion, root, root_needs,
};
use hourglass_log::witness::AddCheckpoint;
use hourglass_timelock::receipt::SignedReceipt;
use tokio::sync::Notify;

use crate::api::ApiError;
use crate::error::Error;
use crate::metrics::Metrics;
use crate::store::Store;
use crate::worker::now_ms;
use crate::AppState;
use hourglass_log::keys::SigningKey;

/// Entries sequenced per transaction.
const SEQUENCE_BATCH: usize = 1000;
/// Receipts written per transaction.
const RECEIPT_BATCH: usize = 1000;
/// How long the log waits after being woken, so that receipts signed together share a
/// checkpoint.
const GATHER: Duration = Duration::from_millis(20);
/// How long one witness request may take.
const WITNESS_TIMEOUT: Duration = Duration::from_secs(10);

/// A witness the log asks for cosignatures (`--witness URL=KEYFILE`).
#[derive(Debug, Clone)]
pub struct WitnessSpec {
    /// Its submission prefix (`POST <url>/add-checkpoint`).
    pub url: String,
    /// Its cosigning key.
    pub key: VerifierKey,
}

/// The log's settings and the state its task shares with the workers.
pub(crate) struct LogService {
    witnesses: Vec<WitnessSpec>,
    quorum: usize,
    interval: Duration,
    client: WitnessClient,
    /// Woken when a receipt waits for the log.
    pub wake: Notify,
}

impl LogService {
    /// A log asking `witnesses`, `quorum` of which must cosign, and checking for work at least
    /// every `interval`.
    pub(crate) fn new(
        witnesses: Vec<WitnessSpec>,
        quorum: usize,
        interval: Duration,
    ) -> Result<Self, Error> {
        if quorum > witnesses.len() {
            return Err(Error::Log(format!(
                "--witness-quorum {quorum} needs at least {quorum} --witness ({} given)",
                witnesses.len()
            )));
        }
        let most = hourglass_log::checkpoint::MAX_WITNESSES;
        if witnesses.len() > most {
            return Err(Error::Log(format!(
                "at most {most} --witness (a checkpoint carries at most {} signatures)",
                most + 1
            )));
        }
        for (i, w) in witnesses.iter().enumerate() {
            w.key
                .expect_role(hourglass_log::keys::KeyRole::Witness)
                .map_err(|e| Error::Log(e.to_string()))?;
            if witnesses[..i].iter().any(|o| o.key.name() == w.key.name()) {
                return Err(Error::Log(format!(
                    "the witness {} is given twice",
                    w.key.name()
                )));
            }
        }
        Ok(Self {
            witnesses,
            quorum,
            interval,
            client: WitnessClient::new(WITNESS_TIMEOUT),
            wake: Notify::new(),
        })
    }
}

/// Runs the log's task until the process ends.
pub(crate) async fn run(state: Arc<AppState>) {
    let cx = LogCtx {
        store: &state.store,
        key: state.data.log_key(),
        service: &state.log,
        metrics: &state.metrics,
    };
    loop {
        if tokio::time::timeout(cx.service.interval, cx.service.wake.notified())
            .await
            .is_ok()
        {
            tokio::time::sleep(GATHER).await;
        }
        if let Err(e) = step(&cx).await {
            tracing::error!(error = %e, "transparency log");
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
    }
}

/// What the log's steps work with: the database, the log's key, its settings, the metrics.
pub(crate) struct LogCtx<'a> {
    pub store: &'a Store,
    pub key: &'a SigningKey,
    pub service: &'a LogService,
    pub metrics: &'a Metrics,
}

/// One round: sequence what waits, publish a checkpoint of the grown tree, write the receipts
/// it covers.
pub(crate) async fn step(cx: &LogCtx<'_>) -> Result<(), Error> {
    sequence_all(cx.store).await?;
    publish(cx).await?;
    while write_receipts(cx).await? > 0 {}
    Ok(())
}

/// Sequences every receipt that waits, a batch per transaction; returns how many.
pub(crate) async fn sequence_all(store: &Store) -> Result<u64, Error> {
    let mut total = 0;
    loop {
        let n = store.sequence(SEQUENCE_BATCH).await?;
        if n == 0 {
            return Ok(total);
        }
        total += n;
    }
}

/// Signs a checkpoint of the tree as it is, gathers the witnesses' cosignatures, and publishes
/// it when a quorum cosigned (or there are no witnesses). Nothing to do when the newest
/// published checkpoint has the tree's size.
pub(crate) async fn publish(cx: &LogCtx<'_>) -> Result<(), Error> {
    let log = cx.store.log_state().await?;
    let latest = cx.store.latest_checkpoint().await?;
    if latest.is_some() && log.tree_size <= log.published_size {
        return Ok(());
    }
    let size = log.tree_size;
    let key = cx.key;
    let memo = cx.store.hashes(&root_needs(size)).await?;
    let root = root(&memo, size).map_err(|e| Error::Log(e.to_string()))?;
    let checkpoint = SignedCheckpoint::sign(key.name(), size, root, key)
        .map_err(|e| Error::Log(e.to_string()))?;
    let known = cx.store.witness_sizes().await?;
    let asks = cx.service.witnesses.iter().map(|w| {
        let old = known.get(w.key.name()).copied().unwrap_or(0);
        cosign(cx, w, &checkpoint, old)
    });
    let mut lines = Vec::new();
    let mut cosigned = Vec::new();
    for (w, answer) in cx
        .service
        .witnesses
        .iter()
        .zip(futures_util::future::join_all(asks).await)
    {
        match answer {
            Ok(line) => {
                lines.extend_from_slice(&line);
                cosigned.push(w.key.name());
            }
            Err(why) => {
                cx.metrics.witness_refusal();
                tracing::warn!(witness = %w.key.name(), size, "{why}");
            }
        }
    }
    if cosigned.len() < cx.service.quorum {
        cx.metrics.checkpoint_waiting();
        tracing::warn!(
            size,
            cosigned = cosigned.len(),
            quorum = cx.service.quorum,
            "the checkpoint waits for a quorum of witnesses; receipts wait with it"
        );
        return Ok(());
    }
    let published = checkpoint
        .with_signature_lines(&lines)
        .map_err(|e| Error::Log(e.to_string()))?;
    let note = String::from_utf8_lossy(&published.to_bytes()).into_owned();
    cx.store.publish_checkpoint(size, &note, now_ms()).await?;
    cx.metrics.log_published(size);
    tracing::info!(size, witnesses = ?cosigned, "checkpoint published");
    Ok(())
}

/// Asks witness `w` to cosign `checkpoint`, from the size it last cosigned (`old`, corrected by
/// its 409 answer). Returns its verified cosignature line, or why not.
async fn cosign(
    cx: &LogCtx<'_>,
    w: &WitnessSpec,
    checkpoint: &SignedCheckpoint,
    mut old: u64,
) -> Result<Vec<u8>, String> {
    let size = checkpoint.size();
    for _ in 0..3 {
        if old > size {
            return Err(format!(
                "the witness cosigned a checkpoint of size {old}, larger than this log's {size}: \
                 the log lost entries it had published, or another log signs with its key"
            ));
        }
        let memo = cx
            .store
            .hashes(&consistency_needs(old, size))
            .await
            .map_err(|e| e.to_string())?;
        let proof = prove_consistency(&memo, old, size).map_err(|e| e.to_string())?;
        let body = AddCheckpoint::encode(old, &proof, checkpoint);
        let client = cx.service.client.clone();
        let url = w.url.clone();
        let answer = tokio::task::spawn_blocking(move || client.add_checkpoint(&url, &body))
            .await
            .map_err(|e| e.to_string())?
            .map_err(|e| e.to_string())?;
        match answer {
            WitnessAnswer::Cosigned(body) => {
                let line = own_line(checkpoint, cx, w, &body)?;
                cx.store
                    .set_witness_size(w.key.name(), size)
                    .await
                    .map_err(|e| e.to_string())?;
                return Ok(line);
            }
            WitnessAnswer::Conflict(theirs) => {
                let _ = cx.store.set_witness_size(w.key.name(), theirs).await;
                old = theirs;
            }
            WitnessAnswer::Refused { status, message } => {
                return Err(format!(
                    "the witness refused the checkpoint of size {size}: HTTP {status} {message}"
                ))
            }
        }
    }
    Err("the witness kept answering 409 Conflict".into())
}

/// The line of witness `w` in its answer `body`, if it is a valid cosignature of `checkpoint`
/// by `w`'s pinned key (other lines are ignored, as the spec says).
fn own_line(
    checkpoint: &SignedCheckpoint,
    cx: &LogCtx<'_>,
    w: &WitnessSpec,
    body: &[u8],
) -> Result<Vec<u8>, String> {
    let prefix = format!("— {} ", w.key.name());
    let pins =
        LogPins::new(cx.key.verifier(), vec![w.key.clone()], 1).map_err(|e| e.to_string())?;
    for line in body.split_inclusive(|&b| b == b'\n') {
        if !line.starts_with(prefix.as_bytes()) || !line.ends_with(b"\n") {
            continue;
        }
        if let Ok(c) = checkpoint.with_signature_lines(line) {
            if c.verify(&pins).is_ok() {
                return Ok(line.to_vec());
            }
        }
    }
    Err("the witness answered without a valid cosignature by its pinned key".into())
}

/// Writes the receipts of up to [`RECEIPT_BATCH`] entries covered by the newest published
/// checkpoint; returns how many.
pub(crate) async fn write_receipts(cx: &LogCtx<'_>) -> Result<usize, Error> {
    let log = cx.store.log_state().await?;
    let Some((_, note)) = cx.store.latest_checkpoint().await? else {
        return Ok(0);
    };
    let checkpoint =
        SignedCheckpoint::parse(note.as_bytes()).map_err(|e| Error::Log(e.to_string()))?;
    let size = checkpoint.size();
    if log.receipts_size >= size {
        return Ok(0);
    }
    let rows = cx
        .store
        .entries_to_receipt(log.receipts_size, size, RECEIPT_BATCH)
        .await?;
    let Some(last) = rows.last().map(|r| r.index) else {
        return Ok(0);
    };
    let needs: Vec<_> = rows
        .iter()
        .flat_map(|r| inclusion_needs(size, r.index))
        .collect();
    let memo = cx.store.hashes(&needs).await?;
    let mut receipts = Vec::with_capacity(rows.len());
    for r in &rows {
        let proof = prove_inclusion(&memo, size, r.index).map_err(|e| Error::Log(e.to_string()))?;
        let receipt = SignedReceipt::from_entry(&r.entry)?.logged(r.index, &proof, &checkpoint)?;
        receipts.push((r.submission.clone(), receipt));
    }
    cx.store.write_receipts(&receipts, last + 1).await?;
    Ok(rows.len())
}

/// `GET /log/checkpoint`: the newest published checkpoint (not cacheable).
pub(crate) async fn get_checkpoint(
    State(state): State<Arc<AppState>>,
) -> Result<Response, ApiError> {
    let Some((_, note)) = state.store.latest_checkpoint().await? else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "no checkpoint published yet (the witnesses have not cosigned one)",
        ));
    };
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        note,
    )
        .into_response())
}

/// `GET /log/key`: the log's verifier key.
pub(crate) async fn get_key(State(state): State<Arc<AppState>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{}\n", state.data.log_key().verifier().encode()),
    )
        .into_response()
}

/// `GET /log/tile/...`: a hash tile or an entry bundle within the published tree (immutable).
pub(crate) async fn get_tile(
    State(state): State<Arc<AppState>>,
    Path(rest): Path<String>,
) -> Result<Response, ApiError> {
    let not_found = || ApiError::new(StatusCode::NOT_FOUND, "no such tile in the published log");
    let Ok(Resource::Tile(tile)) = parse_path(&format!("tile/{rest}")) else {
        return Err(not_found());
    };
    let published = state.store.log_state().await?.published_size;
    if !tile.within(published) {
        return Err(not_found());
    }
    let body = match tile.kind {
        TileKind::Hashes(_) => {
            state
                .store
                .hash_run(tile.tree_level(), tile.first(), tile.width)
                .await?
        }
        TileKind::Entries => match state.store.entry_run(tile.first(), tile.width).await? {
            Some(entries) => Some(
                encode_bundle(entries.iter().map(Vec::as_slice))
                    .map_err(|e| Error::Log(e.to_string()))?,
            ),
            None => None,
        },
    };
    let body = body.ok_or_else(not_found)?;
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=31536000, immutable"),
            ),
        ],
        body,
    )
        .into_response())
}

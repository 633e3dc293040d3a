//! The service's transparency log sequencer: every receipt the workers sign is sequenced into
//! a C2SP tiled log, a checkpoint of the log is signed with `log.key` and cosigned by the
//! configured witnesses, and only once a checkpoint holding a receipt's entry is published is
//! the receipt (with its inclusion proof and that checkpoint) handed out.
//!
//! One task per server runs the three steps in turn; every step is a database transaction, so a
//! server killed at any point loses nothing and repeats nothing, and the servers of one
//! PostgreSQL share one log (sequencing takes the log's state row first, which orders them).
//! A witness that is down or refuses holds back the checkpoint, never an upload: uploads are
//! still accepted, and receipts wait until a quorum of witnesses cosigns. The witness protocol
//! itself (the request, a 409's retry, the witness's cosignature line) is `hourglass-log`'s
//! ([`WitnessClient::cosign`]); the sequencer only schedules it.

use std::sync::Arc;
use std::time::Duration;

use hourglass_log::checkpoint::SignedCheckpoint;
use hourglass_log::cosign::{WitnessEndpoint, WitnessQuorum};
use hourglass_log::http::WitnessClient;
use hourglass_log::keys::SigningKey;
use hourglass_log::tree::{inclusion_needs, prove_inclusion, root, root_needs};
use hourglass_receipt::SignedReceipt;
use tokio::sync::Notify;

use crate::clock::now_ms;
use crate::error::Error;
use crate::metrics::Metrics;
use crate::store::Store;

/// Entries sequenced per transaction.
const SEQUENCE_BATCH: usize = 1000;
/// Receipts written per transaction.
const RECEIPT_BATCH: usize = 1000;
/// How long the log waits after being woken, so that receipts signed together share a
/// checkpoint.
const GATHER: Duration = Duration::from_millis(20);
/// How long one witness request may take.
const WITNESS_TIMEOUT: Duration = Duration::from_secs(10);

/// The sequencer's settings and the signal the workers wake it with.
pub(crate) struct Sequencer {
    witnesses: WitnessQuorum,
    interval: Duration,
    client: WitnessClient,
    /// Woken when a receipt waits for the log.
    pub wake: Notify,
}

impl Sequencer {
    /// A log asking `witnesses`, `quorum` of which must cosign, and checking for work at least
    /// every `interval`.
    pub(crate) fn new(
        witnesses: Vec<WitnessEndpoint>,
        quorum: usize,
        interval: Duration,
    ) -> Result<Self, Error> {
        Ok(Self {
            witnesses: WitnessQuorum::new(witnesses, quorum)?,
            interval,
            client: WitnessClient::new(WITNESS_TIMEOUT),
            wake: Notify::new(),
        })
    }
}

/// What the log's steps work with: the database, the log's key, its settings, the metrics.
pub(crate) struct LogCtx<'a> {
    pub store: &'a Store,
    pub key: &'a SigningKey,
    pub sequencer: &'a Sequencer,
    pub metrics: &'a Metrics,
}

/// Runs the log's task until the process ends.
pub(crate) async fn run(cx: LogCtx<'_>) {
    loop {
        if tokio::time::timeout(cx.sequencer.interval, cx.sequencer.wake.notified())
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
    let checkpoint = Arc::new(SignedCheckpoint::sign(
        key.name(),
        size,
        root(&memo, size)?,
        key,
    )?);
    let known = cx.store.witness_sizes().await?;
    let witnesses = cx.sequencer.witnesses.witnesses();
    let asks = witnesses.iter().map(|w| {
        let old = known.get(w.key.name()).copied().unwrap_or(0);
        cosign(cx, w, &checkpoint, old)
    });
    let mut lines = Vec::new();
    let mut cosigned = Vec::new();
    for (w, answer) in witnesses
        .iter()
        .zip(futures_util::future::join_all(asks).await)
    {
        match answer {
            Ok(line) => {
                cx.store.set_witness_size(w.key.name(), size).await?;
                lines.extend_from_slice(&line);
                cosigned.push(w.key.name());
            }
            Err(why) => {
                cx.metrics.witness_refusal();
                tracing::warn!(witness = %w.key.name(), size, "{why}");
            }
        }
    }
    let quorum = cx.sequencer.witnesses.quorum();
    if cosigned.len() < quorum {
        cx.metrics.checkpoint_waiting();
        tracing::warn!(
            size,
            cosigned = cosigned.len(),
            quorum,
            "the checkpoint waits for a quorum of witnesses; receipts wait with it"
        );
        return Ok(());
    }
    let published = checkpoint.with_signature_lines(&lines)?;
    let note = String::from_utf8_lossy(&published.to_bytes()).into_owned();
    cx.store.publish_checkpoint(size, &note, now_ms()).await?;
    cx.metrics.log_published(size);
    tracing::info!(size, witnesses = ?cosigned, "checkpoint published");
    Ok(())
}

/// Has `hourglass-log`'s witness client ask `w` to cosign `checkpoint` from the size it last
/// cosigned (`old`), on a blocking thread, reading the stored hashes its proofs need from the
/// database and remembering the size a 409 names (a hint for the next checkpoint: losing it
/// costs one more round trip). Returns its verified cosignature line, or why not.
async fn cosign(
    cx: &LogCtx<'_>,
    w: &WitnessEndpoint,
    checkpoint: &Arc<SignedCheckpoint>,
    old: u64,
) -> Result<Vec<u8>, Error> {
    let client = cx.sequencer.client.clone();
    let store = cx.store.clone();
    let log = cx.key.verifier();
    let (w, checkpoint) = (w.clone(), checkpoint.clone());
    let database = tokio::runtime::Handle::current();
    tokio::task::spawn_blocking(move || {
        client.cosign(
            &w,
            &log,
            &checkpoint,
            old,
            |needs| database.block_on(store.hashes(needs)),
            |theirs| {
                let _ = database.block_on(store.set_witness_size(w.key.name(), theirs));
            },
        )
    })
    .await
    .map_err(|e| Error::Log(format!("asking the witness stopped: {e}")))?
}

/// Writes the receipts of up to [`RECEIPT_BATCH`] entries covered by the newest published
/// checkpoint; returns how many.
pub(crate) async fn write_receipts(cx: &LogCtx<'_>) -> Result<usize, Error> {
    let log = cx.store.log_state().await?;
    let Some((_, note)) = cx.store.latest_checkpoint().await? else {
        return Ok(0);
    };
    let checkpoint = SignedCheckpoint::parse(note.as_bytes())?;
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
        let proof = prove_inclusion(&memo, size, r.index)?;
        let receipt = SignedReceipt::from_entry(&r.entry)?.logged(r.index, &proof, &checkpoint)?;
        receipts.push((r.submission.clone(), receipt));
    }
    cx.store.write_receipts(&receipts, last + 1).await?;
    Ok(rows.len())
}

//! What `hourglass bench log` measures of the service's transparency log (feature `bench`: a
//! production build has none of it): the sequencer (the very code `hourglass serve` runs, on a
//! SQLite database in a data directory), the publication of a checkpoint, and the writing of the
//! receipts with their inclusion proofs.

use std::path::Path;
use std::time::{Duration, Instant};

use hourglass_arith::atomic::{write_atomic, Existing};
use hourglass_arith::entropy::OsEntropy;
use hourglass_log::keys::{KeyRole, SigningKey};

use crate::error::{io, Error};
use crate::metrics::Metrics;
use crate::sequencer::{self, LogCtx, Sequencer};
use crate::store::Store;

/// The times of one run of the log's steps over a number of entries.
#[derive(Debug, Clone)]
pub struct SequencerTimes {
    /// Entries sequenced.
    pub entries: u64,
    /// Sequencing them: indexes, entries and stored hashes, in transactions of 1,000.
    pub sequence: Duration,
    /// Signing and publishing the checkpoint of the grown tree (no witness).
    pub publish: Duration,
    /// Writing every receipt, each with its inclusion proof and the checkpoint.
    pub receipts: Duration,
    /// The baseline: the same entries inserted into a table, 1,000 per transaction, without
    /// hashing or proofs.
    pub insert_only: Duration,
}

/// Makes `data` a data directory whose log (origin `origin`, a new `log.key`) holds `entries`
/// copies of `entry` (a signed receipt entry), sequenced, published and with their receipts
/// written, timing each step. `hourglass serve --data DATA` then serves that log.
pub fn log_sequencer(
    data: &Path,
    origin: &str,
    entries: u64,
    entry: &[u8],
) -> Result<SequencerTimes, Error> {
    std::fs::create_dir_all(data).map_err(io(data))?;
    let key = SigningKey::generate(origin, KeyRole::Log, &mut OsEntropy)
        .map_err(|e| Error::Log(e.to_string()))?;
    let key_path = data.join("log.key");
    write_atomic(
        &key_path,
        format!("{}\n", &*key.encode()).as_bytes(),
        0o600,
        Existing::Refuse,
    )
    .map_err(io(&key_path))?;
    let url = format!("sqlite://{}?mode=rwc", data.join("hourglass.db").display());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(Error::Serve)?;
    runtime.block_on(async {
        let store = Store::open(&url, 4).await?;
        store.open_log(key.name(), &key.verifier().encode()).await?;
        store.fill_pending(entries, entry).await?;
        let service = Sequencer::new(Vec::new(), 0, Duration::from_secs(1))?;
        let metrics = Metrics::new();
        let cx = LogCtx {
            store: &store,
            key: &key,
            sequencer: &service,
            metrics: &metrics,
        };
        let t = Instant::now();
        let sequenced = sequencer::sequence_all(&store).await?;
        let sequence = t.elapsed();
        let t = Instant::now();
        sequencer::publish(&cx).await?;
        let publish = t.elapsed();
        let t = Instant::now();
        while sequencer::write_receipts(&cx).await? > 0 {}
        let receipts = t.elapsed();
        let t = Instant::now();
        store.insert_only(entries, entry, 1000).await?;
        let insert_only = t.elapsed();
        Ok(SequencerTimes {
            entries: sequenced,
            sequence,
            publish,
            receipts,
            insert_only,
        })
    })
}

//! What every handler, worker and the sequencer share.

use std::net::IpAddr;
use std::sync::Arc;

use governor::DefaultKeyedRateLimiter;
use ipnet::IpNet;
use tokio::sync::Notify;

use crate::commit::Committer;
use crate::datadir::DataDir;
use crate::metrics::Metrics;
use crate::quota::UploadQuota;
use crate::sequencer::Sequencer;
use crate::serials::Serials;
use crate::store::Store;
use crate::verifiers::VerifierCache;

/// Upload limits.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub max_document_bytes: u64,
    pub max_bundle_bytes: u64,
}

/// What every handler and worker shares.
pub(crate) struct AppState {
    pub store: Store,
    /// Stores uploads, those that arrive together in one transaction.
    pub committer: Committer,
    pub data: DataDir,
    pub limits: Limits,
    /// The bytes of uploads that may be held in memory at once ([`crate::Config::upload_memory`]).
    pub upload_budget: Arc<tokio::sync::Semaphore>,
    pub metrics: Metrics,
    /// Woken when a submission is queued.
    pub queued: Notify,
    /// This server's name in the verifications it records.
    pub server_id: String,
    /// Each set's verifier (a private set's parsed keys), made at its first verification and
    /// kept, by set name and digest (sets are never changed in place).
    pub verifiers: VerifierCache,
    /// The TSA's serial numbers.
    pub serials: Serials,
    /// The transparency log's sequencer.
    pub log: Sequencer,
    /// The per-client request rate limit.
    pub limiter: Option<DefaultKeyedRateLimiter<IpAddr>>,
    /// The per-client hourly quota of bytes stored.
    pub upload_quota: Option<UploadQuota>,
    /// The proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<IpNet>,
}

//! How the service runs: its settings and their defaults.

use std::net::SocketAddr;
use std::num::NonZeroU32;
use std::path::PathBuf;
use std::time::Duration;

use hourglass_log::cosign::WitnessEndpoint;
use ipnet::IpNet;

use crate::datadir::TsaSource;

/// Default largest document (64 MiB).
pub const DEFAULT_MAX_DOCUMENT_BYTES: u64 = 64 << 20;
/// Largest bundle: the bundle format's limit (1 MiB), which every surface shares.
pub const DEFAULT_MAX_BUNDLE_BYTES: u64 = hourglass_timelock::bundle::MAX_BUNDLE_BYTES;
/// Default memory for uploads being received at once (documents are held in memory until they
/// are stored): eight of the largest.
pub const DEFAULT_UPLOAD_MEMORY: u64 = 8 * (DEFAULT_MAX_DOCUMENT_BYTES + DEFAULT_MAX_BUNDLE_BYTES);

/// Default time allowed for a request's header (and for a body to start keeping its rate).
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Default lowest rate of a request body, bytes per second (a slow mobile link sends a hundred
/// times more; a client that trickles a byte at a time is cut off).
pub const DEFAULT_BODY_MIN_RATE: u64 = 4096;
/// Default connections at once from one client address: a campus behind one NAT address
/// uploads with hundreds of clients at a deadline.
pub const DEFAULT_CONNECTIONS_PER_ADDRESS: usize = 256;
/// Default bytes one client address may have stored per hour (1 GiB).
pub const DEFAULT_UPLOAD_QUOTA: u64 = 1 << 30;

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
    /// Time allowed for a request's header, from the connection (or the previous answer).
    pub header_timeout: Duration,
    /// The lowest rate at which a request body must arrive, in bytes per second, after a grace
    /// of `header_timeout` (0: none).
    pub body_min_rate: u64,
    /// Connections at once from one client address (trusted proxies are exempt).
    pub max_connections_per_address: usize,
    /// Connections at once in all; `None`: as many as the open-file limit (raised to its hard
    /// limit at start) leaves room for. More than that is refused at start.
    pub max_connections: Option<usize>,
    /// Bytes of documents and bundles one client address may have stored per hour (an upload
    /// past it gets 429 with `Retry-After`); `None`: no quota.
    pub upload_quota: Option<u64>,
    /// Reverse proxies (load balancers) in front of this server: for a connection from one of
    /// these ranges, the client address is taken from `X-Forwarded-For` ([`crate::client_address`]).
    /// Empty (the default): the header is ignored and the peer is the client.
    pub trusted_proxies: Vec<IpNet>,
    /// Verification workers in this process.
    pub workers: usize,
    /// The policy the TSA stamps under (default: the project's own,
    /// [`hourglass_timestamp::DEFAULT_POLICY`]).
    pub tsa_policy: hourglass_timestamp::PolicyId,
    /// The TSA: the data directory's own (made at first start, ECDSA P-256 unless a kind is
    /// given), or an institution's own certificate and key.
    pub tsa: TsaSource,
    /// The transparency log's origin, fixed when its key (`DIR/log.key`) is made at first
    /// start; `None`: `<listen address>/log` then, and the key's own afterwards.
    pub log_origin: Option<String>,
    /// The witnesses asked to cosign each checkpoint.
    pub witnesses: Vec<WitnessEndpoint>,
    /// How many of them must cosign before a checkpoint is published (`None`: all).
    pub witness_quorum: Option<usize>,
    /// How often the log looks for receipts to sequence when not woken (and retries a
    /// checkpoint that waits for witnesses).
    pub log_interval: Duration,
}

impl Config {
    /// Defaults for a data directory: loopback port 8080, SQLite, 64 MiB documents, 20
    /// requests per second per client with bursts of 60, 1 GiB stored per client per hour, 256
    /// connections per client, headers within 10 s and bodies at 4 KiB/s at least, one worker
    /// per core.
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
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_min_rate: DEFAULT_BODY_MIN_RATE,
            max_connections_per_address: DEFAULT_CONNECTIONS_PER_ADDRESS,
            max_connections: None,
            upload_quota: Some(DEFAULT_UPLOAD_QUOTA),
            workers: std::thread::available_parallelism().map_or(2, |n| n.get()),
            trusted_proxies: Vec::new(),
            tsa_policy: hourglass_timestamp::PolicyId::hourglass(),
            tsa: TsaSource::Own(None),
            log_origin: None,
            witnesses: Vec::new(),
            witness_quorum: None,
            log_interval: Duration::from_secs(1),
        }
    }
}

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
//! - Limits: per-field upload sizes (413), a per-client request rate (429) and hourly upload
//!   quota (429), JSON errors that name the field (400), the admin token compared in constant
//!   time (401); connections capped per client and in all below the open-file limit, headers
//!   and bodies under timeouts (`connections`).
//! - Layout: `server` starts it all; the routes (`api`, `pages`, `tsa`, `tlog`) only parse,
//!   store, schedule and show; `submission` decides where a submission stands (queued,
//!   verified, receipted, failed) from the row `store` reads; `worker` verifies; `sequencer`
//!   runs the transparency log (the witness protocol itself is `hourglass-log`'s). This file
//!   only declares and re-exports.

#![forbid(unsafe_code)]

mod api;
mod api_error;
#[cfg(feature = "bench")]
pub mod bench;
mod clock;
mod commit;
mod config;
mod connections;
mod datadir;
mod error;
mod metrics;
mod pages;
mod proxy;
mod quota;
mod sequencer;
mod serials;
mod server;
mod signal;
mod stamp;
mod state;
mod store;
mod submission;
mod tlog;
mod tsa;
mod verifiers;
mod witness;
mod worker;

pub use config::{
    Config, DEFAULT_BODY_MIN_RATE, DEFAULT_CONNECTIONS_PER_ADDRESS, DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_BUNDLE_BYTES, DEFAULT_MAX_DOCUMENT_BYTES, DEFAULT_UPLOAD_MEMORY,
    DEFAULT_UPLOAD_QUOTA,
};
pub use connections::{MIN_CONNECTIONS, OPEN_FILES_PER_DATABASE_CONNECTION, SERVICE_OPEN_FILES};
pub use datadir::{TsaFiles, TsaSource};
pub use error::Error;
pub use hourglass_log::cosign::WitnessEndpoint;
pub use ipnet::IpNet;
pub use proxy::{client_address, parse_trusted_proxy};
pub use server::{run, Started};
pub use witness::{run_witness, WitnessConfig};

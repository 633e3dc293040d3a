//! `/metrics`: Prometheus text format (requests by route and status, request latency,
//! verifications and their times, the queue's depth read from the database at scrape time).
//!
//! Every label value comes from a fixed set, so that no request can add series (each one is
//! memory kept for the life of the server): the method is one of [`COUNTED_METHODS`] or
//! `other`, the route is the router's template that matched (`/api/v1/submissions/{id}`, never
//! the path asked for) or `unmatched`, the status is a status code.

use std::sync::Mutex;
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::store::Counts;
use crate::submission::Status;

/// The methods counted by name; any other (clients may send any token) is counted as `other`.
pub(crate) const COUNTED_METHODS: [&str; 7] =
    ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"];

/// The route label of a request that matched no route.
const UNMATCHED: &str = "unmatched";

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: String,
    status: u16,
}

/// The label of `method`: itself if it is one of [`COUNTED_METHODS`], else `other`.
fn method_label(method: &str) -> &'static str {
    COUNTED_METHODS
        .iter()
        .find(|m| **m == method)
        .copied()
        .unwrap_or("other")
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerdictLabels {
    verdict: &'static str,
}

/// Why a connection was closed by the service before it was served.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub(crate) enum CloseReason {
    /// Its address had as many connections open as allowed.
    PerAddress,
    /// The server had as many connections open as allowed, none of them silent.
    Total,
    /// It had sent no request, and a newer connection needed its slot.
    Evicted,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct CloseLabels {
    reason: &'static str,
}

/// The connection caps' counters (`crate::connections`).
#[derive(Clone, Debug, Default)]
pub(crate) struct ConnectionMetrics {
    /// Connections open now.
    pub open: Gauge,
    closed: Family<CloseLabels, Counter>,
}

impl ConnectionMetrics {
    /// Counts a connection closed at once (or evicted).
    pub(crate) fn closed(&self, reason: CloseReason) {
        self.closed.get_or_create(&Self::labels(reason)).inc();
    }

    /// Connections closed for `reason` so far.
    #[cfg(test)]
    pub(crate) fn closed_count(&self, reason: CloseReason) -> u64 {
        self.closed.get_or_create(&Self::labels(reason)).get()
    }

    fn labels(reason: CloseReason) -> CloseLabels {
        CloseLabels {
            reason: match reason {
                CloseReason::PerAddress => "per_address",
                CloseReason::Total => "total",
                CloseReason::Evicted => "evicted",
            },
        }
    }
}

/// The service's metrics.
pub(crate) struct Metrics {
    /// The connection caps' counters.
    pub connections: ConnectionMetrics,
    stored_bytes: Gauge,
    receipts_waiting: Gauge,
    registry: Mutex<Registry>,
    requests: Family<RequestLabels, Counter>,
    latency: Histogram,
    verifications: Family<VerdictLabels, Counter>,
    verify_seconds: Histogram,
    queue_depth: Gauge,
    stored: Family<StatusLabels, Gauge>,
    log_published_size: Gauge,
    checkpoints_waiting: Counter,
    witness_refusals: Counter,
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let mut registry = Registry::with_prefix("hourglass");
        let requests = Family::<RequestLabels, Counter>::default();
        registry.register("http_requests", "HTTP requests served", requests.clone());
        let latency = Histogram::new(exponential_buckets(0.0005, 2.0, 16));
        registry.register(
            "http_request_duration_seconds",
            "Time to answer an HTTP request",
            latency.clone(),
        );
        let verifications = Family::<VerdictLabels, Counter>::default();
        registry.register(
            "verifications",
            "Submissions verified by this server",
            verifications.clone(),
        );
        let verify_seconds = Histogram::new(exponential_buckets(0.0005, 2.0, 16));
        registry.register(
            "verification_duration_seconds",
            "Time to verify one bundle",
            verify_seconds.clone(),
        );
        let queue_depth = Gauge::default();
        registry.register(
            "queue_depth",
            "Submissions waiting for verification (all servers)",
            queue_depth.clone(),
        );
        let stored = Family::<StatusLabels, Gauge>::default();
        registry.register(
            "submissions",
            "Submissions stored, by status (all servers)",
            stored.clone(),
        );
        let log_published_size = Gauge::default();
        registry.register(
            "log_published_size",
            "Entries in the newest checkpoint of the transparency log this server published",
            log_published_size.clone(),
        );
        let checkpoints_waiting = Counter::default();
        registry.register(
            "log_checkpoints_waiting",
            "Checkpoints held back for want of a quorum of witnesses",
            checkpoints_waiting.clone(),
        );
        let witness_refusals = Counter::default();
        registry.register(
            "log_witness_failures",
            "Requests to witnesses that did not return a valid cosignature",
            witness_refusals.clone(),
        );
        let connections = ConnectionMetrics::default();
        registry.register(
            "connections_open",
            "HTTP connections open now",
            connections.open.clone(),
        );
        registry.register(
            "connections_closed_at_once",
            "Connections closed before being served: their address's cap (per_address), the \
             server's (total), or a newer connection needed the slot of one that had sent \
             nothing (evicted)",
            connections.closed.clone(),
        );
        let stored_bytes = Gauge::default();
        registry.register(
            "stored_bytes",
            "Bytes of documents and bundles stored (all servers)",
            stored_bytes.clone(),
        );
        let receipts_waiting = Gauge::default();
        registry.register(
            "receipts_waiting",
            "Verified submissions whose receipt waits for a published checkpoint of the \
             transparency log (all servers)",
            receipts_waiting.clone(),
        );
        Self {
            connections,
            stored_bytes,
            receipts_waiting,
            log_published_size,
            checkpoints_waiting,
            witness_refusals,
            stored,
            registry: Mutex::new(registry),
            requests,
            latency,
            verifications,
            verify_seconds,
            queue_depth,
        }
    }

    /// Counts one answered request. `route` is the router's template that matched it (from
    /// axum's `MatchedPath`, one of the routes the router was built with), `None` for a request
    /// that matched none (labelled `unmatched`); `method` is counted by name only if it is one
    /// of [`COUNTED_METHODS`].
    pub(crate) fn request(&self, method: &str, route: Option<&str>, status: u16, took: Duration) {
        self.requests
            .get_or_create(&RequestLabels {
                method: method_label(method),
                route: route.unwrap_or(UNMATCHED).into(),
                status,
            })
            .inc();
        self.latency.observe(took.as_secs_f64());
    }

    /// Counts one verification.
    pub(crate) fn verified(&self, took: Duration, valid: bool) {
        self.verifications
            .get_or_create(&VerdictLabels {
                verdict: if valid { "valid" } else { "invalid" },
            })
            .inc();
        self.verify_seconds.observe(took.as_secs_f64());
    }

    /// Records a published checkpoint of `size` entries.
    pub(crate) fn log_published(&self, size: u64) {
        self.log_published_size
            .set(i64::try_from(size).unwrap_or(i64::MAX));
    }

    /// Counts a checkpoint held back for want of a quorum.
    pub(crate) fn checkpoint_waiting(&self) {
        self.checkpoints_waiting.inc();
    }

    /// Counts a witness request without a valid cosignature.
    pub(crate) fn witness_refusal(&self) {
        self.witness_refusals.inc();
    }

    /// The text exposition, with the stored submissions just counted by status, the bytes
    /// they hold and the receipts that wait for the log.
    pub(crate) fn render(&self, counts: &Counts) -> String {
        self.stored_bytes.set(counts.stored_bytes);
        self.receipts_waiting.set(counts.receipts_waiting);
        let counts = &counts.by_status;
        let count = |status| counts.iter().find(|(s, _)| *s == status).map_or(0, |c| c.1);
        self.queue_depth.set(count(Status::Queued));
        for status in Status::ALL {
            self.stored
                .get_or_create(&StatusLabels {
                    status: status.as_str(),
                })
                .set(count(status));
        }
        let mut out = String::new();
        if let Ok(registry) = self.registry.lock() {
            let _ = encode(&mut out, &registry);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_usual_methods_are_labels_of_their_own() {
        let metrics = Metrics::new();
        for method in COUNTED_METHODS {
            assert_eq!(method_label(method), method);
        }
        for method in ["get", "PROPFIND", "BREW", "X".repeat(1000).as_str()] {
            assert_eq!(method_label(method), "other", "{method}");
        }
        for i in 0..500 {
            metrics.request(&format!("M{i}"), Some("/healthz"), 405, Duration::ZERO);
        }
        metrics.request("GET", None, 404, Duration::ZERO);
        for i in 0..10 {
            metrics.request("GET", Some("/healthz"), 200 + i, Duration::ZERO);
        }
        let text = metrics.render(&Counts {
            by_status: Vec::new(),
            stored_bytes: 0,
            receipts_waiting: 0,
        });
        let series: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("hourglass_http_requests_total{"))
            .collect();
        assert!(series.contains(
            &"hourglass_http_requests_total{method=\"other\",route=\"/healthz\",status=\"405\"} 500"
        ));
        assert!(series.contains(
            &"hourglass_http_requests_total{method=\"GET\",route=\"unmatched\",status=\"404\"} 1"
        ));
        assert_eq!(series.len(), 1 + 1 + 10, "{series:#?}");
    }
}

//! `/metrics`: Prometheus text format (requests by route and status, request latency,
//! verifications and their times, the queue's depth read from the database at scrape time).

use std::sync::Mutex;
use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

use crate::store::Status;

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabels {
    status: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct VerdictLabels {
    verdict: &'static str,
}

/// The service's metrics.
pub(crate) struct Metrics {
    registry: Mutex<Registry>,
    requests: Family<RequestLabels, Counter>,
    latency: Histogram,
    verifications: Family<VerdictLabels, Counter>,
    verify_seconds: Histogram,
    queue_depth: Gauge,
    stored: Family<StatusLabels, Gauge>,
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
        Self {
            stored,
            registry: Mutex::new(registry),
            requests,
            latency,
            verifications,
            verify_seconds,
            queue_depth,
        }
    }

    /// Counts one answered request.
    pub(crate) fn request(&self, method: &str, route: &str, status: u16, took: Duration) {
        self.requests
            .get_or_create(&RequestLabels {
                method: method.into(),
                route: route.into(),
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

    /// The text exposition, with the stored submissions just counted by status.
    pub(crate) fn render(&self, counts: &[(Status, i64)]) -> String {
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

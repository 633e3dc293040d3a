//! Connections under limits, so that clients that open connections and send nothing (or a
//! header, or a body, a byte at a time) cannot hold the service.
//!
//! - **Caps.** At most [`ConnectionLimits::per_address`] connections from one client address
//!   (addresses of trusted proxies are exempt: every client behind them shares the address),
//!   and at most [`ConnectionLimits::total`] in all, which [`open_file_budget`] keeps below the
//!   open-file limit with room for the database and the log. A connection past a cap is closed
//!   at once, so the listen queue never fills with them. At the total cap, a new connection
//!   first evicts the oldest one that has not yet sent a request's header: half-open
//!   connections cannot crowd out a client that sends its request.
//! - **Timeouts.** A request's header must arrive within [`ConnectionLimits::header_timeout`]
//!   of the connection (or of the previous answer on a kept-alive one); its body must keep up
//!   [`ConnectionLimits::body_min_rate`] bytes per second after a grace of the same timeout.
//! - **Accept errors** (out of file descriptors, a connection reset before it was accepted)
//!   are logged and retried after a pause; they never stop the service.
//!
//! Connections speak HTTP/1.1 (what browsers speak without TLS, and what reverse proxies speak
//! to their upstreams): its header timeout also bounds a connection that sends nothing.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::net::{IpAddr, SocketAddr};
use std::pin::Pin;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::Router;
use bytes::Bytes;
use http_body::{Frame, SizeHint};
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use ipnet::IpNet;
use tokio::net::TcpListener;
use tokio::sync::Notify;
use tokio::time::{Instant, Sleep};

use crate::metrics::{CloseReason, ConnectionMetrics};

/// How long a stopping server waits for requests in progress before it closes their
/// connections.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// How long accepting pauses after an error (most often: out of file descriptors).
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);

/// Open files the service needs beside its connections, besides the database's: standard
/// streams, the runtime's (epoll, its wake-up), the listener, the data directory's files while
/// they are read, the log's, a witness request in flight, the connections being evicted
/// (at most 16 at once), and a margin.
pub const SERVICE_OPEN_FILES: u64 = 64;

/// Connections told to make room that may still be closing while new ones are admitted in
/// their place (counted in [`SERVICE_OPEN_FILES`]); past it, a new connection waits for one to
/// close.
const MAX_EVICTING: usize = 16;

/// Open files each database connection may hold (SQLite: the database, its write-ahead log and
/// its shared-memory index; PostgreSQL: one socket).
pub const OPEN_FILES_PER_DATABASE_CONNECTION: u64 = 3;

/// The smallest total cap a server starts with: below it, the open-file limit leaves no room
/// to serve.
pub const MIN_CONNECTIONS: usize = 16;

/// The limits every connection is held to.
#[derive(Debug, Clone)]
pub(crate) struct ConnectionLimits {
    /// Time allowed for a request's header.
    pub header_timeout: Duration,
    /// The lowest rate, in bytes per second, at which a request body must arrive after a grace
    /// of `header_timeout` (0: no minimum).
    pub body_min_rate: u64,
    /// Connections at once from one client address (trusted proxies are exempt).
    pub per_address: usize,
    /// Connections at once in all.
    pub total: usize,
    /// Proxies whose connections carry many clients.
    pub trusted_proxies: Vec<IpNet>,
}

/// Raises this process's soft limit of open files to its hard limit, and returns the
/// connections it leaves room for beside `database_connections` database connections and
/// [`SERVICE_OPEN_FILES`]; `None` when that is fewer than [`MIN_CONNECTIONS`].
pub(crate) fn open_file_budget(database_connections: u32) -> std::io::Result<(u64, Option<usize>)> {
    let (soft, hard) = rlimit::Resource::NOFILE.get()?;
    let limit = if soft < hard {
        rlimit::Resource::NOFILE.set(hard, hard).map(|()| hard)?
    } else {
        soft
    };
    let reserved =
        SERVICE_OPEN_FILES + u64::from(database_connections) * OPEN_FILES_PER_DATABASE_CONNECTION;
    let room = usize::try_from(limit.saturating_sub(reserved)).unwrap_or(usize::MAX);
    Ok((limit, (room >= MIN_CONNECTIONS).then_some(room)))
}

/// Who holds a connection slot.
#[derive(Default)]
struct GateState {
    by_address: HashMap<IpAddr, usize>,
    /// Connections that have sent no request yet, oldest first, with what evicts them.
    waiting: BTreeMap<u64, Arc<Notify>>,
    next: u64,
    open: usize,
    /// Connections told to make room that have not closed yet.
    evicting: std::collections::HashSet<u64>,
}

/// The connection caps.
pub(crate) struct Gate {
    limits: ConnectionLimits,
    state: Mutex<GateState>,
    metrics: ConnectionMetrics,
    /// Woken when a connection closes.
    freed: Notify,
}

/// Why a connection was closed at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Refused {
    PerAddress,
    Total,
    /// Full, and as many silent connections as may be are closing to make room: ask again
    /// when one has.
    Evicting,
}

impl Gate {
    pub(crate) fn new(limits: ConnectionLimits, metrics: ConnectionMetrics) -> Self {
        Self {
            limits,
            state: Mutex::new(GateState::default()),
            metrics,
            freed: Notify::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, GateState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// A slot for a connection from `ip`, or why there is none.
    fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Slot, Refused> {
        let ip = ip.to_canonical();
        let exempt = self.limits.trusted_proxies.iter().any(|n| n.contains(&ip));
        let mut s = self.lock();
        if !exempt && s.by_address.get(&ip).copied().unwrap_or(0) >= self.limits.per_address {
            self.metrics.closed(CloseReason::PerAddress);
            return Err(Refused::PerAddress);
        }
        if s.open >= self.limits.total {
            // The oldest connection that never sent a request makes room; its slot (and its
            // file) is free when its task has closed it, so that at most MAX_EVICTING are
            // closing at once: the open files never pass the cap by more.
            if s.evicting.len() >= MAX_EVICTING {
                return Err(Refused::Evicting);
            }
            let Some((victim, evict)) = s.waiting.pop_first() else {
                self.metrics.closed(CloseReason::Total);
                return Err(Refused::Total);
            };
            evict.notify_one();
            s.evicting.insert(victim);
            self.metrics.closed(CloseReason::Evicted);
        }
        s.open += 1;
        self.metrics.open.inc();
        *s.by_address.entry(ip).or_insert(0) += 1;
        let seq = s.next;
        s.next += 1;
        let evict = Arc::new(Notify::new());
        s.waiting.insert(seq, evict.clone());
        Ok(Slot {
            gate: self.clone(),
            ip,
            seq,
            evict,
        })
    }
}

/// A connection's place under the caps, given back when dropped.
struct Slot {
    gate: Arc<Gate>,
    ip: IpAddr,
    seq: u64,
    evict: Arc<Notify>,
}

impl Slot {
    /// The connection sent a request: it may no longer be evicted for a newer one.
    fn started(&self) {
        self.gate.lock().waiting.remove(&self.seq);
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut s = self.gate.lock();
        s.waiting.remove(&self.seq);
        s.evicting.remove(&self.seq);
        s.open = s.open.saturating_sub(1);
        self.gate.metrics.open.dec();
        if let Some(n) = s.by_address.get_mut(&self.ip) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                s.by_address.remove(&self.ip);
            }
        }
        drop(s);
        // A newcomer waiting for an evicted connection to close may now take its place.
        self.gate.freed.notify_waiters();
    }
}

/// Serves `app` on `listener` under `gate`'s caps and limits until `shutdown` completes; then
/// stops accepting, and waits up to [`SHUTDOWN_GRACE`] for requests in progress.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    gate: Arc<Gate>,
    shutdown: impl Future<Output = ()>,
) {
    let limits = gate.limits.clone();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed; pausing");
                    tokio::time::sleep(ACCEPT_PAUSE).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let Some(slot) = admit(&gate, peer).await else {
            continue;
        };
        let slot = Arc::new(slot);
        let _ = stream.set_nodelay(true);
        let service = RequestService {
            app: app.clone(),
            peer,
            slot: slot.clone(),
            header_timeout: limits.header_timeout,
            body_min_rate: limits.body_min_rate,
        };
        let connection = graceful.watch(http.serve_connection(
            TokioIo::new(stream),
            hyper_util::service::TowerToHyperService::new(service),
        ));
        tokio::spawn(async move {
            tokio::select! {
                _ = connection => {}
                () = slot.evict.notified() => {}
            }
            drop(slot);
        });
    }
    drop(listener);
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_GRACE) => {
            tracing::warn!("requests still in progress after {SHUTDOWN_GRACE:?}: closing them");
        }
    }
}

/// A slot for a connection from `peer`, waiting (at most a second) for a silent connection
/// told to make room to close; `None` when the connection is to be closed at once.
async fn admit(gate: &Arc<Gate>, peer: SocketAddr) -> Option<Slot> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(1);
    loop {
        let freed = gate.freed.notified();
        tokio::pin!(freed);
        freed.as_mut().enable();
        match gate.admit(peer.ip()) {
            Ok(slot) => return Some(slot),
            Err(Refused::Evicting) => {
                if tokio::time::timeout_at(deadline, freed).await.is_err() {
                    return None;
                }
            }
            Err(why) => {
                tracing::debug!(%peer, ?why, "connection closed at once");
                return None;
            }
        }
    }
}

/// One connection's service: the router, with the peer's address and the body's minimum rate.
#[derive(Clone)]
struct RequestService {
    app: Router,
    peer: SocketAddr,
    slot: Arc<Slot>,
    header_timeout: Duration,
    body_min_rate: u64,
}

impl tower::Service<hyper::Request<Incoming>> for RequestService {
    type Response = axum::response::Response;
    type Error = std::convert::Infallible;
    type Future = <Router as tower::Service<hyper::Request<Body>>>::Future;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: hyper::Request<Incoming>) -> Self::Future {
        self.slot.started();
        let (mut parts, body) = request.into_parts();
        parts.extensions.insert(ConnectInfo(self.peer));
        let body = if self.body_min_rate == 0 {
            Body::new(body)
        } else {
            Body::new(MinRate::new(body, self.body_min_rate, self.header_timeout))
        };
        tower::Service::call(&mut self.app, hyper::Request::from_parts(parts, body))
    }
}

/// A request body that must keep up a minimum rate: by `grace + received / rate` after the
/// request started, at least `received` bytes must have arrived.
struct MinRate {
    inner: Incoming,
    rate: u64,
    grace: Duration,
    start: Instant,
    received: u64,
    deadline: Pin<Box<Sleep>>,
}

/// The error a body gives when it falls below the minimum rate.
#[derive(Debug, thiserror::Error)]
#[error("the request body arrived slower than the minimum rate; the connection is closed")]
pub(crate) struct BodyTooSlow;

impl MinRate {
    fn new(inner: Incoming, rate: u64, grace: Duration) -> Self {
        let start = Instant::now();
        Self {
            inner,
            rate,
            grace,
            start,
            received: 0,
            deadline: Box::pin(tokio::time::sleep_until(start + grace)),
        }
    }

    fn deadline(&self) -> Instant {
        let allowed = Duration::from_secs_f64(self.received as f64 / self.rate as f64);
        self.start + self.grace + allowed
    }
}

impl http_body::Body for MinRate {
    type Data = Bytes;
    type Error = Box<dyn std::error::Error + Send + Sync>;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        match Pin::new(&mut this.inner).poll_frame(cx) {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(data) = frame.data_ref() {
                    this.received = this.received.saturating_add(data.len() as u64);
                    let deadline = this.deadline();
                    this.deadline.as_mut().reset(deadline);
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Poll::Ready(Some(Err(e))) => Poll::Ready(Some(Err(e.into()))),
            Poll::Ready(None) => Poll::Ready(None),
            Poll::Pending => match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => Poll::Ready(Some(Err(BodyTooSlow.into()))),
                Poll::Pending => Poll::Pending,
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(per_address: usize, total: usize, trusted: &[&str]) -> Arc<Gate> {
        Arc::new(Gate::new(
            ConnectionLimits {
                header_timeout: Duration::from_secs(1),
                body_min_rate: 0,
                per_address,
                total,
                trusted_proxies: trusted.iter().map(|t| t.parse().unwrap()).collect(),
            },
            ConnectionMetrics::default(),
        ))
    }

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn one_address_gets_its_cap_and_no_more() {
        let g = gate(2, 100, &[]);
        let a = g.admit(ip("192.0.2.1")).unwrap();
        let _b = g.admit(ip("192.0.2.1")).unwrap();
        assert_eq!(g.admit(ip("192.0.2.1")).err(), Some(Refused::PerAddress));
        // IPv4 through an IPv6 socket is the same address.
        assert_eq!(
            g.admit(ip("::ffff:192.0.2.1")).err(),
            Some(Refused::PerAddress)
        );
        // Others are not affected, and a closed connection frees its slot.
        let _c = g.admit(ip("192.0.2.2")).unwrap();
        drop(a);
        let _d = g.admit(ip("192.0.2.1")).unwrap();
        assert_eq!(g.metrics.closed_count(CloseReason::PerAddress), 2);
        assert_eq!(g.metrics.open.get(), 3);
    }

    #[test]
    fn evictions_in_progress_are_bounded() {
        let g = gate(1000, 4, &[]);
        let mut held: Vec<Slot> = (0..4)
            .map(|i| g.admit(ip(&format!("192.0.2.{i}"))).unwrap())
            .collect();
        // Each newcomer evicts one silent connection; while MAX_EVICTING of them have not
        // closed yet, the next newcomer waits.
        for i in 0..MAX_EVICTING {
            held.push(g.admit(ip(&format!("198.51.100.{i}"))).unwrap());
        }
        assert_eq!(g.admit(ip("203.0.113.1")).err(), Some(Refused::Evicting));
        // One of the evicted closes: room for one more.
        held.remove(0);
        assert!(g.admit(ip("203.0.113.1")).is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn a_newcomer_waiting_for_an_eviction_is_admitted_when_it_closes() {
        let start = tokio::time::Instant::now();
        let g = gate(1000, 4, &[]);
        let peer = |i: usize| SocketAddr::new(ip(&format!("198.51.100.{i}")), 1);
        let mut held: Vec<Slot> = Vec::new();
        for i in 0..4 + MAX_EVICTING {
            held.push(admit(&g, peer(i)).await.unwrap());
        }
        // Full, with as many evictions in progress as may be: the newcomer waits (on a paused
        // clock its one-second deadline would pass at once, were nothing to wake it).
        let waiting = tokio::spawn({
            let g = g.clone();
            async move { admit(&g, peer(200)).await.is_some() }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished());
        // An evicted connection closes: the newcomer takes its place, before its deadline.
        held.remove(0);
        assert!(waiting.await.unwrap());
        assert!(start.elapsed() < Duration::from_secs(1));
    }

    #[test]
    fn trusted_proxies_are_exempt_from_the_per_address_cap() {
        let g = gate(1, 100, &["10.0.0.0/8"]);
        let _held: Vec<Slot> = (0..10).map(|_| g.admit(ip("10.1.1.1")).unwrap()).collect();
        assert!(g.admit(ip("192.0.2.1")).is_ok());
    }

    #[test]
    fn at_the_total_cap_the_oldest_silent_connection_makes_room() {
        let g = gate(10, 3, &[]);
        let old = g.admit(ip("192.0.2.1")).unwrap();
        let busy = g.admit(ip("192.0.2.2")).unwrap();
        busy.started();
        let newer = g.admit(ip("192.0.2.3")).unwrap();
        // Full: the oldest connection that sent nothing (not the busy one) is told to go.
        let newest = g.admit(ip("192.0.2.4")).unwrap();
        assert_eq!(g.metrics.closed_count(CloseReason::Evicted), 1);
        let evicted = old.evict.clone();
        assert!(futures_util::FutureExt::now_or_never(evicted.notified()).is_some());
        assert!(futures_util::FutureExt::now_or_never(newer.evict.notified()).is_none());
        drop(old);
        // Only connections that sent requests: the next one is refused.
        newer.started();
        newest.started();
        assert_eq!(g.admit(ip("192.0.2.5")).err(), Some(Refused::Total));
        assert_eq!(g.metrics.closed_count(CloseReason::Total), 1);
        drop(busy);
        assert!(g.admit(ip("192.0.2.5")).is_ok());
    }
}

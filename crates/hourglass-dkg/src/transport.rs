//! The message layer under the protocol.
//!
//! A [`Transport`] moves whole frames (opaque byte strings) between authenticated parties:
//! sending only queues (the writes happen asynchronously), and receiving returns frames in
//! arrival order together with the authenticated sender. The protocol above adds the versioned
//! header (session, round, sender) and handles out-of-order arrival.
//!
//! Two implementations exist: [`MemoryTransport`] (threads in one process, for tests and
//! simulations) and [`crate::tls::TlsTransport`] (one process per party over mutually
//! authenticated TLS). Both can run through a [`Shaper`] that injects a round-trip delay, jitter
//! and loss, to reproduce wide-area behaviour on one machine.

use std::collections::{BinaryHeap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::{Error, LinkLoss, LinkRejection, ParamError, Result};

pub(crate) mod error;
pub use crate::party::PartyId;

/// What a transport delivers.
#[derive(Debug)]
pub enum Event {
    /// A whole frame from an authenticated peer.
    Frame {
        /// The sender, as authenticated by the transport.
        from: PartyId,
        /// The frame.
        bytes: Vec<u8>,
    },
    /// The link to `party` failed: closed or reset.
    Lost {
        /// The peer.
        party: PartyId,
        /// What happened.
        reason: LinkLoss,
    },
    /// `party` broke the framing (an oversized frame); its link was dropped.
    Rejected {
        /// The peer.
        party: PartyId,
        /// What it sent.
        reason: LinkRejection,
    },
}

/// Counters of what a transport sent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrafficStats {
    /// Frame bytes handed to the network (without TLS and length-prefix overhead).
    pub bytes_sent: u64,
    /// Frames sent.
    pub frames_sent: u64,
}

/// A mesh of authenticated links from one party to all others.
pub trait Transport: Send {
    /// This party.
    fn me(&self) -> PartyId;

    /// The peers this transport has links to (not including [`Transport::me`]).
    fn peers(&self) -> Vec<PartyId>;

    /// Queues `frame` for `to`. Fails only if the link is known to be gone.
    fn send(&self, to: PartyId, frame: Vec<u8>) -> Result<()>;

    /// Queues the same `frame` for every party of `to`, as [`Transport::send`] to each would.
    /// Fails, naming a party, if a link is known to be gone (the frame may then be queued
    /// for some of the others). A transport whose links share a hop sends the frame over it
    /// once ([`crate::star::StarTransport`]).
    fn send_to_all(&self, to: &[PartyId], frame: Vec<u8>) -> Result<()> {
        for &p in to {
            self.send(p, frame.clone())?;
        }
        Ok(())
    }

    /// The next event, waiting until `deadline`; `None` when the deadline passed first.
    fn recv_until(&mut self, deadline: Instant) -> Option<Event>;

    /// What was sent so far.
    fn stats(&self) -> TrafficStats;
}

/// Simulated wide-area network conditions, applied to every link.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct NetSim {
    /// Round-trip time to add (each frame is held for half of it).
    pub rtt: Duration,
    /// Uniform extra one-way delay in `[0, jitter)`.
    pub jitter: Duration,
    /// Probability that a frame is "lost" and delivered only after a retransmission timeout
    /// (three round trips, at least 200 ms, as TCP would); later frames on the link wait
    /// behind it, as they do in TCP.
    pub loss: f64,
}

impl NetSim {
    /// No added delay.
    pub fn is_none(&self) -> bool {
        self.rtt.is_zero() && self.jitter.is_zero() && self.loss <= 0.0
    }
}

/// Delivery times for one link under a [`NetSim`], in order (a frame is never delivered
/// before one sent earlier on the same link).
#[derive(Debug, Clone)]
pub struct Shaper {
    sim: NetSim,
    last: Option<Instant>,
    state: u64,
}

impl Shaper {
    /// A shaper for one link; `seed` makes the jitter and loss of each link differ.
    pub fn new(sim: NetSim, seed: u64) -> Self {
        Shaper {
            sim,
            last: None,
            state: seed ^ 0x9e37_79b9_7f4a_7c15,
        }
    }

    fn next_unit(&mut self) -> f64 {
        // splitmix64: simulation noise only, never used for secrets.
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        (z >> 11) as f64 / (1u64 << 53) as f64
    }

    /// When a frame sent at `now` is delivered.
    pub fn schedule(&mut self, now: Instant) -> Instant {
        if self.sim.is_none() {
            return now;
        }
        let mut delay = self.sim.rtt / 2 + self.sim.jitter.mul_f64(self.next_unit());
        if self.sim.loss > 0.0 && self.next_unit() < self.sim.loss {
            delay += (self.sim.rtt * 3).max(Duration::from_millis(200));
        }
        let at = now + delay;
        let at = match self.last {
            Some(last) if last > at => last,
            _ => at,
        };
        self.last = Some(at);
        at
    }
}

struct Pending {
    at: Instant,
    seq: u64,
    event: Event,
}

impl PartialEq for Pending {
    fn eq(&self, other: &Self) -> bool {
        (self.at, self.seq) == (other.at, other.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Pending {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        // A max-heap: the earliest delivery first.
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

struct Delivery {
    at: Instant,
    event: Event,
}

/// One party's end of an in-process mesh (see [`memory_mesh`]).
///
/// Dropping it tells every peer that this party is lost, as a closed TLS connection would.
pub struct MemoryTransport {
    me: PartyId,
    links: HashMap<PartyId, (Sender<Delivery>, std::sync::Mutex<Shaper>)>,
    inbox: Receiver<Delivery>,
    pending: BinaryHeap<Pending>,
    seq: u64,
    sent: Arc<(AtomicU64, AtomicU64)>,
}

/// An in-process mesh of `ids.len()` parties, every link shaped by `sim`.
pub fn memory_mesh(ids: &[PartyId], sim: NetSim) -> Vec<MemoryTransport> {
    let channels: Vec<(Sender<Delivery>, Receiver<Delivery>)> =
        ids.iter().map(|_| mpsc::channel()).collect();
    let senders: Vec<Sender<Delivery>> = channels.iter().map(|(s, _)| s.clone()).collect();
    channels
        .into_iter()
        .enumerate()
        .map(|(i, (_, inbox))| {
            let links = ids
                .iter()
                .enumerate()
                .filter(|&(j, _)| j != i)
                .map(|(j, &id)| {
                    let seed = (u64::from(ids[i]) << 32) | u64::from(id);
                    (
                        id,
                        (
                            senders[j].clone(),
                            std::sync::Mutex::new(Shaper::new(sim, seed)),
                        ),
                    )
                })
                .collect();
            MemoryTransport {
                me: ids[i],
                links,
                inbox,
                pending: BinaryHeap::new(),
                seq: 0,
                sent: Arc::new((AtomicU64::new(0), AtomicU64::new(0))),
            }
        })
        .collect()
}

impl MemoryTransport {
    fn deliver(&self, to: PartyId, event: Event) -> Result<()> {
        let (link, shaper) = self.links.get(&to).ok_or(Error::PartyFailed {
            party: to,
            reason: LinkLoss::NotAPeer.into(),
        })?;
        let at = shaper
            .lock()
            .map_err(|_| Error::from(ParamError::ShaperPoisoned))?
            .schedule(Instant::now());
        link.send(Delivery { at, event })
            .map_err(|_| Error::PartyFailed {
                party: to,
                reason: LinkLoss::Closed.into(),
            })
    }

    fn push(&mut self, delivery: Delivery) {
        self.seq += 1;
        self.pending.push(Pending {
            at: delivery.at,
            seq: self.seq,
            event: delivery.event,
        });
    }
}

impl Drop for MemoryTransport {
    fn drop(&mut self) {
        for &peer in self.links.keys() {
            let _ = self.deliver(
                peer,
                Event::Lost {
                    party: self.me,
                    reason: LinkLoss::Closed,
                },
            );
        }
    }
}

impl Transport for MemoryTransport {
    fn me(&self) -> PartyId {
        self.me
    }

    fn peers(&self) -> Vec<PartyId> {
        let mut peers: Vec<PartyId> = self.links.keys().copied().collect();
        peers.sort_unstable();
        peers
    }

    fn send(&self, to: PartyId, frame: Vec<u8>) -> Result<()> {
        self.sent.0.fetch_add(frame.len() as u64, Ordering::Relaxed);
        self.sent.1.fetch_add(1, Ordering::Relaxed);
        self.deliver(
            to,
            Event::Frame {
                from: self.me,
                bytes: frame,
            },
        )
    }

    fn recv_until(&mut self, deadline: Instant) -> Option<Event> {
        loop {
            while let Ok(delivery) = self.inbox.try_recv() {
                self.push(delivery);
            }
            let now = Instant::now();
            if let Some(first) = self.pending.peek() {
                if first.at <= now {
                    return self.pending.pop().map(|p| p.event);
                }
            }
            let wake = match self.pending.peek() {
                Some(first) => first.at.min(deadline),
                None => deadline,
            };
            if wake <= now {
                return None;
            }
            match self.inbox.recv_timeout(wake - now) {
                Ok(delivery) => self.push(delivery),
                Err(RecvTimeoutError::Timeout) => {
                    if Instant::now() >= deadline
                        && self.pending.peek().is_none_or(|p| p.at > deadline)
                    {
                        return None;
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    if self.pending.is_empty() {
                        std::thread::sleep(wake.saturating_duration_since(Instant::now()));
                        if Instant::now() >= deadline {
                            return None;
                        }
                    }
                }
            }
        }
    }

    fn stats(&self) -> TrafficStats {
        TrafficStats {
            bytes_sent: self.sent.0.load(Ordering::Relaxed),
            frames_sent: self.sent.1.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_mesh_delivers_in_order_with_sender() {
        let mut mesh = memory_mesh(&[1, 2, 3], NetSim::default());
        let c = mesh.pop().unwrap();
        let b = mesh.pop().unwrap();
        let mut a = mesh.pop().unwrap();
        b.send(1, vec![1]).unwrap();
        c.send(1, vec![2]).unwrap();
        b.send(1, vec![3]).unwrap();
        let deadline = Instant::now() + Duration::from_secs(1);
        let mut got = Vec::new();
        for _ in 0..3 {
            match a.recv_until(deadline).unwrap() {
                Event::Frame { from, bytes } => got.push((from, bytes[0])),
                other => panic!("unexpected {other:?}"),
            }
        }
        let from_b: Vec<u8> = got.iter().filter(|g| g.0 == 2).map(|g| g.1).collect();
        assert_eq!(from_b, vec![1, 3]);
        assert!(got.contains(&(3, 2)));
        assert_eq!(b.stats().frames_sent, 2);
        drop(c);
        match a.recv_until(deadline).unwrap() {
            Event::Lost { party, .. } => assert_eq!(party, 3),
            other => panic!("expected a loss, got {other:?}"),
        }
        assert!(a
            .recv_until(Instant::now() + Duration::from_millis(20))
            .is_none());
    }

    #[test]
    fn shaper_delays_by_half_the_rtt_and_keeps_order() {
        let sim = NetSim {
            rtt: Duration::from_millis(100),
            jitter: Duration::from_millis(30),
            loss: 0.2,
        };
        let mut shaper = Shaper::new(sim, 7);
        let now = Instant::now();
        let mut last = now;
        let mut lost = 0;
        for _ in 0..1000 {
            let at = shaper.schedule(now);
            assert!(at >= now + Duration::from_millis(50));
            assert!(at >= last);
            if at >= now + Duration::from_millis(280) {
                lost += 1;
            }
            last = at;
        }
        assert!(lost > 0);
        let mut plain = Shaper::new(NetSim::default(), 1);
        assert_eq!(plain.schedule(now), now);
    }

    #[test]
    fn memory_mesh_applies_the_delay() {
        let sim = NetSim {
            rtt: Duration::from_millis(60),
            ..NetSim::default()
        };
        let mut mesh = memory_mesh(&[1, 2], sim);
        let b = mesh.pop().unwrap();
        let mut a = mesh.pop().unwrap();
        let start = Instant::now();
        b.send(1, vec![9]).unwrap();
        assert!(a.recv_until(start + Duration::from_millis(10)).is_none());
        assert!(a.recv_until(start + Duration::from_secs(2)).is_some());
        assert!(start.elapsed() >= Duration::from_millis(30));
    }
}

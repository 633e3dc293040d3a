//! A star: every member's one link goes to a relay that forwards frames sealed end to end
//! (hourglass_dkg::star). The members generate one key and sign one transcript through it;
//! the relay sees no frame in the clear; a relay that alters, drops, repeats or forges is
//! caught, and nobody finishes with what it did; a relay cannot put its own key in a member's
//! place.

mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use hourglass_arith::entropy::SeededEntropy;
use hourglass_dkg::bounds::FrameBounds;
use hourglass_dkg::params::Settings;
use hourglass_dkg::protocol::{generate_signed, SignedGeneration};
use hourglass_dkg::star::{relay, RelayReport, StarTransport};
use hourglass_dkg::transport::{
    memory_mesh, Event, MemoryTransport, NetSim, PartyId, TrafficStats, Transport,
};
use hourglass_dkg::wire::{Frame, MAGIC};

use common::{members, Filtered, Incoming, KeyKind};

/// One generation at a time (the parties of concurrent tests would compete for two cores).
static SERIAL: Mutex<()> = Mutex::new(());

/// The relay's id on the in-memory network (members are 1..=k).
const RELAY: PartyId = 1000;

fn settings() -> Settings {
    let mut s = Settings::new(512);
    s.batch = 4;
    s.timeout_ms = 4_000;
    s
}

/// What a relay does to what it forwards (the honest relay does nothing).
#[derive(Clone, Copy, Debug, PartialEq)]
enum Meddling {
    None,
    /// Flips a bit in the n-th frame it forwards.
    Alter(usize),
    /// Drops the n-th frame.
    Drop(usize),
    /// Forwards the n-th frame twice.
    Repeat(usize),
    /// Sends the n-th frame's recipient a frame it made up, as from the sender.
    Forge(usize),
    /// Flips a bit in the sealed frame of the n-th broadcast (one upload, every recipient's).
    AlterBroadcast(usize),
    /// Hands the recipients of the n-th broadcast another broadcast's sealed frame.
    SwapBroadcast(usize),
    /// Replaces member 2's key announcement to member 1 with a key of its own (keeping member
    /// 2's signature).
    SwapKey,
}

/// The relay's transport: records every frame body it forwards and meddles as told.
struct Relayed {
    inner: MemoryTransport,
    how: Meddling,
    frames: usize,
    seen: Arc<Mutex<Vec<Vec<u8>>>>,
    /// A frame to hand the relay again.
    again: Option<Event>,
    /// Broadcasts received from the members (each once, whatever its recipients).
    broadcasts: Arc<std::sync::atomic::AtomicUsize>,
    /// The sealed frame of the last broadcast received.
    last_broadcast: Option<Vec<u8>>,
}

impl Transport for Relayed {
    fn me(&self) -> PartyId {
        self.inner.me()
    }
    fn peers(&self) -> Vec<PartyId> {
        self.inner.peers()
    }
    fn send(&self, to: PartyId, mut bytes: Vec<u8>) -> hourglass_dkg::Result<()> {
        // The relay's messages: kind (0 frame, 1 announcement, 2 gone, 3 broadcast), sender,
        // body.
        if bytes[0] == 1
            && self.how == Meddling::SwapKey
            && to == 1
            && bytes[1..5] == 2u32.to_be_bytes()
        {
            let own = p256::SecretKey::from_slice(&[7u8; 32]).unwrap();
            let point = p256::elliptic_curve::sec1::ToEncodedPoint::to_encoded_point(
                &own.public_key(),
                false,
            );
            bytes[5..70].copy_from_slice(point.as_bytes());
        }
        self.inner.send(to, bytes)
    }
    fn recv_until(&mut self, deadline: Instant) -> Option<Event> {
        if let Some(e) = self.again.take() {
            return Some(e);
        }
        let event = self.inner.recv_until(deadline)?;
        let Event::Frame { from, mut bytes } = event else {
            return Some(event);
        };
        // Frames and broadcasts are meddled with (a broadcast's last byte is its sealed
        // frame's).
        if !matches!(bytes.first(), Some(&0 | &3)) {
            return Some(Event::Frame { from, bytes });
        }
        let broadcast = if bytes[0] == 3 {
            self.broadcasts
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                + 1
        } else {
            0
        };
        self.frames += 1;
        self.seen.lock().unwrap().push(bytes[5..].to_vec());
        let n = self.frames;
        match self.how {
            Meddling::Alter(k) if k == n => {
                let last = bytes.len() - 1;
                bytes[last] ^= 1;
            }
            Meddling::Drop(k) if k == n => return self.recv_until(deadline),
            // The relay's loop forwards what it receives: received twice, it goes twice.
            Meddling::Repeat(k) if k == n => {
                self.again = Some(Event::Frame {
                    from,
                    bytes: bytes.clone(),
                })
            }
            Meddling::AlterBroadcast(k) if k == broadcast => {
                let last = bytes.len() - 1;
                bytes[last] ^= 1;
            }
            // The sealed frame follows the count and each recipient's id and opening.
            Meddling::SwapBroadcast(k) if k == broadcast => {
                let count = u32::from_be_bytes(bytes[5..9].try_into().unwrap()) as usize;
                let at = 9 + count * (4 + 80);
                match self.last_broadcast.take() {
                    Some(other) => {
                        bytes.truncate(at);
                        bytes.extend_from_slice(&other);
                    }
                    None => self.last_broadcast = Some(bytes[at..].to_vec()),
                }
            }
            Meddling::SwapBroadcast(_) if broadcast > 0 => {
                let count = u32::from_be_bytes(bytes[5..9].try_into().unwrap()) as usize;
                self.last_broadcast = Some(bytes[9 + count * (4 + 80)..].to_vec());
            }
            Meddling::Forge(k) if k == n => {
                let len = bytes.len();
                bytes.truncate(5);
                bytes.extend(std::iter::repeat_n(0x5a, len - 5));
            }
            _ => {}
        }
        Some(Event::Frame { from, bytes })
    }
    fn stats(&self) -> TrafficStats {
        self.inner.stats()
    }
}

/// What a party's star transport sent in the clear (every frame before sealing).
struct Clear {
    inner: Box<dyn Transport>,
    sent: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Transport for Clear {
    fn me(&self) -> PartyId {
        self.inner.me()
    }
    fn peers(&self) -> Vec<PartyId> {
        self.inner.peers()
    }
    fn send(&self, to: PartyId, bytes: Vec<u8>) -> hourglass_dkg::Result<()> {
        self.sent.lock().unwrap().push(bytes.clone());
        self.inner.send(to, bytes)
    }
    fn send_to_all(&self, to: &[PartyId], bytes: Vec<u8>) -> hourglass_dkg::Result<()> {
        self.sent.lock().unwrap().push(bytes.clone());
        self.inner.send_to_all(to, bytes)
    }
    fn recv_until(&mut self, deadline: Instant) -> Option<Event> {
        self.inner.recv_until(deadline)
    }
    fn stats(&self) -> TrafficStats {
        self.inner.stats()
    }
}

struct Run {
    outcomes: Vec<(PartyId, hourglass_dkg::Result<SignedGeneration>)>,
    /// What the relay forwarded: every frame body.
    relayed: Vec<Vec<u8>>,
    /// What member 1 sent, before sealing.
    clear: Vec<Vec<u8>>,
    report: RelayReport,
    /// Broadcasts the relay received.
    broadcasts: usize,
}

/// A signed generation of members with keys of `kinds`, through a relay that meddles as
/// `how`.
fn run(kinds: &[KeyKind], how: Meddling, seed: u8) -> Run {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let m = members(kinds, "star");
    let ids: Vec<PartyId> = (1..=kinds.len() as PartyId).collect();
    let mut all = ids.clone();
    all.push(RELAY);
    let mut mesh = memory_mesh(&all, NetSim::default());
    let seen = Arc::new(Mutex::new(Vec::new()));
    let broadcasts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut relayed = Relayed {
        inner: mesh.pop().unwrap(),
        how,
        frames: 0,
        seen: Arc::clone(&seen),
        again: None,
        broadcasts: Arc::clone(&broadcasts),
        last_broadcast: None,
    };
    let members_of_relay = ids.clone();
    let relay_thread =
        thread::spawn(move || relay(&mut relayed, &members_of_relay, Duration::from_secs(20)));
    let clear = Arc::new(Mutex::new(Vec::new()));
    let handles: Vec<_> = mesh
        .into_iter()
        .zip(m.signers)
        .map(|(inner, signer)| {
            let ids = ids.clone();
            let clear = Arc::clone(&clear);
            thread::spawn(move || {
                let me = inner.me();
                let mut entropy = SeededEntropy::new(&[seed, me as u8]);
                let deadline = Instant::now() + Duration::from_secs(10);
                let bounds = FrameBounds::generation(&settings(), ids.len())?;
                let star = StarTransport::connect(
                    inner,
                    RELAY,
                    bounds,
                    &ids,
                    b"star test",
                    &signer,
                    &mut entropy,
                    deadline,
                )?;
                let mut transport: Box<dyn Transport> = Box::new(star);
                if me == 1 {
                    transport = Box::new(Clear {
                        inner: transport,
                        sent: clear,
                    });
                }
                generate_signed(
                    &mut *transport,
                    &ids,
                    &settings(),
                    "star",
                    &signer,
                    &mut entropy,
                    &mut |_| {},
                )
            })
        })
        .collect();
    let outcomes = handles
        .into_iter()
        .enumerate()
        .map(|(i, h)| (i as PartyId + 1, h.join().unwrap()))
        .collect();
    let report = relay_thread.join().unwrap();
    let relayed = seen.lock().unwrap().clone();
    let clear = clear.lock().unwrap().clone();
    Run {
        outcomes,
        relayed,
        clear,
        report,
        broadcasts: broadcasts.load(std::sync::atomic::Ordering::Relaxed),
    }
}

#[test]
fn members_generate_one_key_through_a_relay_that_sees_no_frame_in_the_clear() {
    let run = run(
        &[KeyKind::P256, KeyKind::Ed25519, KeyKind::P384],
        Meddling::None,
        1,
    );
    let mut moduli = HashSet::new();
    let mut transcripts = HashSet::new();
    for (id, out) in &run.outcomes {
        let out = out.as_ref().unwrap_or_else(|e| panic!("party {id}: {e}"));
        moduli.insert(out.generated.share.public.n().to_string());
        transcripts.insert(out.transcript.to_json());
    }
    assert_eq!(moduli.len(), 1);
    assert_eq!(transcripts.len(), 1);
    assert!(
        run.report.frames > 100 && run.report.dropped == 0,
        "{:?}",
        run.report
    );
    // Broadcasts went to the relay once (each member's transcript signature and echo at
    // least), and the relay handed each to both other members.
    assert!(run.broadcasts >= 6, "{}", run.broadcasts);
    // Every body the relay forwarded is sealed: none is a protocol frame, and no 16 bytes of
    // what member 1 sent in the clear appear in what the relay saw.
    assert!(!run.clear.is_empty());
    let windows: HashSet<&[u8]> = run.relayed.iter().flat_map(|b| b.windows(16)).collect();
    for body in &run.relayed {
        assert!(Frame::decode(body).is_err());
        assert!(!body.starts_with(MAGIC));
    }
    for frame in &run.clear {
        assert!(Frame::decode(frame).is_ok());
        for piece in frame.chunks_exact(16) {
            assert!(
                !windows.contains(piece),
                "a clear frame's bytes reached the relay"
            );
        }
    }
}

#[test]
fn a_relay_that_alters_drops_repeats_forges_or_swaps_a_frame_leaves_nobody_finished() {
    for (i, how) in [
        Meddling::Alter(40),
        Meddling::Drop(40),
        Meddling::Repeat(40),
        Meddling::Forge(40),
        Meddling::AlterBroadcast(5),
        Meddling::SwapBroadcast(6),
    ]
    .into_iter()
    .enumerate()
    {
        let run = run(&[KeyKind::P256; 3], how, 10 + i as u8);
        for (id, out) in &run.outcomes {
            assert!(out.is_err(), "{how:?}: party {id} finished");
        }
        let said: Vec<String> = run
            .outcomes
            .iter()
            .filter_map(|(_, o)| o.as_ref().err().map(|e| e.to_string()))
            .collect();
        // An altered frame fails one recipient's authentication, which the other survivor
        // disputes; an altered broadcast fails every recipient's, and they remove its sender
        // together, leaving too few members to go on.
        let broadcast = matches!(
            how,
            Meddling::AlterBroadcast(_) | Meddling::SwapBroadcast(_)
        );
        assert!(
            said.iter().any(|e| e.contains("failed its authentication")
                || (broadcast && e.contains("fewer than the 3 needed"))),
            "{how:?}: {said:?}"
        );
    }
}

#[test]
fn a_relay_cannot_put_its_own_key_in_a_members_place() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let m = members(&[KeyKind::P256; 3], "star-key");
    let ids: Vec<PartyId> = vec![1, 2, 3];
    let mut mesh = memory_mesh(&[1, 2, 3, RELAY], NetSim::default());
    let mut relayed = Relayed {
        inner: mesh.pop().unwrap(),
        how: Meddling::SwapKey,
        frames: 0,
        seen: Arc::default(),
        again: None,
        broadcasts: Arc::default(),
        last_broadcast: None,
    };
    let members_of_relay = ids.clone();
    let relay_thread =
        thread::spawn(move || relay(&mut relayed, &members_of_relay, Duration::from_secs(5)));
    let handles: Vec<_> = mesh
        .into_iter()
        .zip(m.signers)
        .map(|(inner, signer)| {
            let ids = ids.clone();
            thread::spawn(move || {
                let mut entropy = SeededEntropy::new(&[3, inner.me() as u8]);
                let deadline = Instant::now() + Duration::from_secs(3);
                let star = StarTransport::connect(
                    inner,
                    RELAY,
                    FrameBounds::opaque(1 << 20),
                    &ids,
                    b"k",
                    &signer,
                    &mut entropy,
                    deadline,
                )
                .unwrap();
                (star.missing(), star.peers())
            })
        })
        .collect();
    let seen: Vec<_> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert_eq!(
        seen[0],
        (vec![2], vec![3]),
        "member 1 refuses the swapped key"
    );
    assert_eq!(seen[1], (vec![], vec![1, 3]));
    assert_eq!(seen[2], (vec![], vec![1, 2]));
    relay_thread.join().unwrap();
}

/// An encoded data frame of session `[1; 16]` from `sender` at `round` and `step` (epoch 0).
fn data_frame(sender: PartyId, round: u64, step: u16, payload: Vec<u8>) -> Vec<u8> {
    use hourglass_dkg::wire::{Kind, Tag};
    Frame {
        kind: Kind::Data,
        session: [1; 16],
        tag: Tag {
            epoch: 0,
            round,
            step,
        },
        sender,
        payload,
    }
    .encode()
}

/// Members 1, 2 and 3 of a cluster named `name` joined through an honest relay on a memory
/// mesh (each transport `wrap`ped under its star), in id order, and the relay's thread, which
/// ends when nothing came for `idle`.
fn three_stars<T: Transport + Send>(
    name: &str,
    seed: u8,
    idle: Duration,
    wrap: impl Fn(MemoryTransport) -> T + Sync,
) -> (Vec<StarTransport<T>>, thread::JoinHandle<RelayReport>) {
    three_stars_then(name, seed, idle, wrap, |_| {})
}

/// [`three_stars`], each member running `after` in its own thread as soon as it has joined
/// (while the others may still be joining).
fn three_stars_then<T: Transport + Send>(
    name: &str,
    seed: u8,
    idle: Duration,
    wrap: impl Fn(MemoryTransport) -> T + Sync,
    after: impl Fn(&StarTransport<T>) + Sync,
) -> (Vec<StarTransport<T>>, thread::JoinHandle<RelayReport>) {
    let m = members(&[KeyKind::P256; 3], name);
    let ids: Vec<PartyId> = vec![1, 2, 3];
    let bounds = FrameBounds::generation(&settings(), 3).unwrap();
    let mut mesh = memory_mesh(&[1, 2, 3, RELAY], NetSim::default());
    let mut relay_transport = mesh.pop().unwrap();
    let members_of_relay = ids.clone();
    let relay_thread = thread::spawn(move || relay(&mut relay_transport, &members_of_relay, idle));
    let stars = thread::scope(|s| {
        let handles: Vec<_> = mesh
            .into_iter()
            .zip(&m.signers)
            .map(|(inner, signer)| {
                let (ids, bounds, wrap, after) = (&ids, &bounds, &wrap, &after);
                s.spawn(move || {
                    let mut entropy = SeededEntropy::new(&[seed, inner.me() as u8]);
                    let star = StarTransport::connect(
                        wrap(inner),
                        RELAY,
                        bounds.clone(),
                        ids,
                        name.as_bytes(),
                        signer,
                        &mut entropy,
                        Instant::now() + Duration::from_secs(3),
                    )
                    .unwrap();
                    after(&star);
                    star
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    (stars, relay_thread)
}

/// A member that sends a frame past its type's bound through the relay is refused by the
/// recipient, which names that member (the relay only sees a sealed frame's length), and the
/// recipient still hears the others.
#[test]
fn an_oversized_frame_through_the_relay_is_refused_naming_its_sender() {
    use hourglass_dkg::LinkRejection;
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let bounds = FrameBounds::generation(&settings(), 3).unwrap();
    let (mut stars, relay_thread) = three_stars("star-big", 4, Duration::from_secs(5), |t| t);
    let frame = |sender: u32, payload: usize| data_frame(sender, 0, 1, vec![0; payload]);
    let third = stars.pop().unwrap();
    let second = stars.pop().unwrap();
    let mut first = stars.pop().unwrap();
    second.send(1, frame(2, bounds.largest() + 1)).unwrap();
    third.send(1, frame(3, 10)).unwrap();
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut events = vec![first.recv_until(deadline), first.recv_until(deadline)];
    events.sort_by_key(|e| matches!(e, Some(Event::Frame { .. })));
    assert!(
        matches!(
            &events[0],
            Some(Event::Rejected {
                party: 2,
                reason: LinkRejection::OversizedFrame { .. }
            })
        ),
        "{events:?}"
    );
    assert!(
        matches!(&events[1], Some(Event::Frame { from: 3, .. })),
        "{events:?}"
    );
    // Nothing more is taken from member 2.
    second.send(1, frame(2, 10)).unwrap();
    assert!(first
        .recv_until(Instant::now() + Duration::from_millis(300))
        .is_none());
    drop((first, second, third));
    relay_thread.join().unwrap();
}

/// A member that floods another through the relay (frames far ahead of the protocol, each
/// within its type's bound) uses up only its own share of the recipient's budget on the
/// relay link, over real TLS: the recipient refuses it as flooding (its frames all opened as
/// its own, so it sent them) and drops what else it sends, and still hears the relay and the
/// other member. (With one budget for every sender,
/// the flood cut the recipient off from the relay, and the others saw the recipient fail.)
#[test]
fn a_member_flooding_another_through_the_relay_uses_up_only_its_own_share() {
    use hourglass_dkg::cluster::{
        free_loopback_base_port, init_cluster_with, ClusterConfig, Topology,
    };
    use hourglass_dkg::star::{join, serve};
    use hourglass_dkg::tls::TlsOptions;
    use hourglass_dkg::wire::{step, Kind};
    use hourglass_dkg::LinkRejection;
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let base = free_loopback_base_port(4).unwrap();
    let configs =
        init_cluster_with(dir.path(), 3, &settings(), base, "flood", Topology::Star).unwrap();
    let bounds = FrameBounds::generation(&settings(), 3).unwrap();
    let options = TlsOptions {
        connect_timeout: Duration::from_secs(20),
        ..TlsOptions::new(bounds.clone())
    };
    let hub = ClusterConfig::load(&dir.path().join("relay.toml")).unwrap();
    let relay_options = options.clone();
    let relay_thread = thread::spawn(move || {
        serve(&hub, &[1, 2, 3], &relay_options, Duration::from_secs(5)).unwrap()
    });
    let mut stars: Vec<_> = configs
        .iter()
        .enumerate()
        .map(|(i, path)| {
            let (path, options) = (path.clone(), options.clone());
            thread::spawn(move || {
                let config = ClusterConfig::load(&path).unwrap();
                let me = i as PartyId + 1;
                let mut entropy = SeededEntropy::new(&[5, me as u8]);
                join(
                    &config,
                    me,
                    &options,
                    &config.transcript_signer().unwrap(),
                    &mut entropy,
                )
                .unwrap()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|h| h.join().unwrap())
        .collect();
    // The largest data frame of a step: the flood's frames each pass its bound.
    let (flood_step, payload) = [step::SIEVE, step::N_SHARES, step::N_POINTS]
        .into_iter()
        .map(|s| (s, bounds.payload_limit(Kind::Data, s)))
        .max_by_key(|&(_, p)| p)
        .unwrap();
    let frame = |sender: PartyId, round: u64, payload: usize| {
        data_frame(sender, round, flood_step, vec![0; payload])
    };
    // Member 3 sends one and a half times its share ahead of the protocol, member 2 more than
    // half of its own: past what the two may have pending together, so that one budget for
    // both would have run out, while each link to the relay stays within its own.
    let link = bounds.relayed(3).stamped();
    let share = link.max_pending_per_origin();
    assert_eq!(share * 2, link.max_pending());
    let on_link = (frame(3, 0, payload).len() + hourglass_dkg::bounds::RELAY_OVERHEAD) as u64;
    let flood = (3 * share).div_ceil(2 * on_link);
    let ahead = (6 * share).div_ceil(10 * on_link);
    let third = stars.pop().unwrap();
    let second = stars.pop().unwrap();
    let mut first = stars.pop().unwrap();
    for round in 0..flood {
        third.send(1, frame(3, round, payload)).unwrap();
    }
    for round in 0..ahead {
        second.send(1, frame(2, round, payload)).unwrap();
    }
    // Member 1 takes nothing while they arrive.
    thread::sleep(Duration::from_secs(3));
    let (mut from_third, mut from_second, mut third_lost) = (0, 0, None);
    let deadline = Instant::now() + Duration::from_secs(10);
    while from_second < ahead || third_lost.is_none() {
        match first.recv_until(deadline) {
            Some(Event::Frame { from: 3, .. }) => from_third += 1,
            Some(Event::Frame { from: 2, .. }) => from_second += 1,
            Some(Event::Rejected {
                party: 3,
                reason: LinkRejection::Flooded { queued, limit },
            }) => {
                assert_eq!(limit, share);
                assert!(queued > share);
                third_lost = Some(queued);
            }
            other => panic!("after {from_third} frames from member 3 and {from_second} from member 2: {other:?}"),
        }
    }
    // What was taken of the flood is member 3's share and the frame that ran past it.
    assert!(
        from_third > 0 && (from_third - 1) * on_link <= share,
        "{from_third} of {flood} flood frames taken"
    );
    // Nothing more is taken from member 3; member 2 is still heard.
    third.send(1, frame(3, flood, 10)).unwrap();
    second.send(1, frame(2, ahead, 10)).unwrap();
    match first.recv_until(Instant::now() + Duration::from_secs(10)) {
        Some(Event::Frame { from: 2, .. }) => {}
        other => panic!("expected member 2's next frame, got {other:?}"),
    }
    drop((first, second, third));
    relay_thread.join().unwrap();
}

/// A member's transport under its star that also hands up the events a test queues (what a
/// relay link would deliver).
struct Injecting {
    queued: Arc<Mutex<std::collections::VecDeque<Event>>>,
}

impl Incoming for Injecting {
    fn next(&mut self, inner: &mut MemoryTransport, deadline: Instant) -> Option<Event> {
        if let Some(e) = self.queued.lock().unwrap().pop_front() {
            return Some(e);
        }
        inner.recv_until(deadline)
    }
}

/// A member whose share of the relay link ran out is refused as flooding only if every
/// message stamped with its id opened as its frame; once the relay stamped it on something
/// that was not (here a second announcement), the same overflow is a failure, which the
/// relay could have caused, not a verdict on that member.
#[test]
fn a_flood_is_a_verdict_only_when_every_byte_of_it_was_the_members_own() {
    use hourglass_dkg::{LinkLoss, LinkRejection};
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let queued = Arc::new(Mutex::new(std::collections::VecDeque::new()));
    // Only member 1's events are queued by the test.
    let (mut stars, relay_thread) = three_stars("star-flood", 6, Duration::from_secs(3), |inner| {
        let queued = if inner.me() == 1 {
            queued.clone()
        } else {
            Arc::default()
        };
        Filtered {
            inner,
            filter: Injecting { queued },
        }
    });
    let third = stars.pop().unwrap();
    let second = stars.pop().unwrap();
    let mut first = stars.pop().unwrap();
    // Member 3's frame opens as its own; its share then runs out.
    third.send(1, data_frame(3, 0, 1, vec![0; 10])).unwrap();
    match first.recv_until(Instant::now() + Duration::from_secs(3)) {
        Some(Event::Frame { from: 3, .. }) => {}
        other => panic!("expected member 3's frame, got {other:?}"),
    }
    let overflow = |party| Event::Lost {
        party,
        reason: LinkLoss::FloodedThroughRelay {
            queued: 100,
            limit: 99,
        },
    };
    queued.lock().unwrap().push_back(overflow(3));
    match first.recv_until(Instant::now() + Duration::from_secs(3)) {
        Some(Event::Rejected {
            party: 3,
            reason:
                LinkRejection::Flooded {
                    queued: 100,
                    limit: 99,
                },
        }) => {}
        other => panic!("expected member 3 refused as flooding, got {other:?}"),
    }
    // The relay stamps member 2's id on a second announcement: member 2's share may now hold
    // bytes that are not its own.
    let mut stamped = vec![1u8];
    stamped.extend_from_slice(&2u32.to_be_bytes());
    stamped.extend_from_slice(&[0; 70]);
    queued.lock().unwrap().push_back(Event::Frame {
        from: RELAY,
        bytes: stamped,
    });
    queued.lock().unwrap().push_back(overflow(2));
    match first.recv_until(Instant::now() + Duration::from_secs(3)) {
        Some(Event::Lost {
            party: 2,
            reason: LinkLoss::FloodedThroughRelay { .. },
        }) => {}
        other => panic!("expected member 2 seen failing, got {other:?}"),
    }
    drop((first, second, third));
    relay_thread.join().unwrap();
}

/// Member 2's link to the relay with member 3's key announcement held back until a
/// broadcast has come past it (the relay interleaves different members' messages as it
/// likes): member 2 is still joining when member 1's first broadcast arrives.
struct HoldingAnnouncement {
    held: Option<Event>,
    /// Set when a broadcast was handed up while the announcement was held.
    overtaken: Arc<AtomicBool>,
}

impl HoldingAnnouncement {
    /// The relay's kinds of message (`hourglass_dkg::star`): an announcement, a broadcast.
    const ANNOUNCE: u8 = 1;
    const BROADCAST: u8 = 3;

    fn is(kind: u8, origin: PartyId, event: &Event) -> bool {
        matches!(event, Event::Frame { from: RELAY, bytes }
            if bytes.first() == Some(&kind)
                && (kind == Self::BROADCAST || bytes.get(1..5) == Some(&origin.to_be_bytes()[..])))
    }
}

impl Incoming for HoldingAnnouncement {
    fn next(&mut self, inner: &mut MemoryTransport, deadline: Instant) -> Option<Event> {
        if self.overtaken.load(Ordering::SeqCst) {
            if let Some(held) = self.held.take() {
                return Some(held);
            }
        }
        loop {
            let Some(event) = inner.recv_until(deadline) else {
                return self.held.take();
            };
            if inner.me() == 2 && Self::is(Self::ANNOUNCE, 3, &event) {
                self.held = Some(event);
                continue;
            }
            if self.held.is_some() && Self::is(Self::BROADCAST, 1, &event) {
                self.overtaken.store(true, Ordering::SeqCst);
            }
            return Some(event);
        }
    }
}

/// A broadcast that reaches a member before it has finished joining (here member 1's, sent
/// as soon as member 1 has joined, while member 2 still waits for member 3's announcement)
/// is opened and kept for after the join, in order with that sender's later frames: it is
/// not dropped, and the sender is not taken for one whose messages do not open.
#[test]
fn a_broadcast_that_arrives_while_a_member_is_joining_is_kept() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let overtaken = Arc::new(AtomicBool::new(false));
    let frame = |step: u16, payload: u8| data_frame(1, 1, step, vec![payload; 40]);
    let (mut stars, relay_thread) = three_stars_then(
        "star-early",
        7,
        Duration::from_secs(3),
        |inner| Filtered {
            inner,
            filter: HoldingAnnouncement {
                held: None,
                overtaken: overtaken.clone(),
            },
        },
        |star| {
            if star.me() == 1 {
                star.send_to_all(&[2, 3], frame(1, 0xb1)).unwrap();
                star.send(2, frame(2, 0xf2)).unwrap();
            }
        },
    );
    assert!(
        overtaken.load(Ordering::SeqCst),
        "member 1's broadcast did not overtake member 3's announcement"
    );
    let third = stars.pop().unwrap();
    let mut second = stars.pop().unwrap();
    let first = stars.pop().unwrap();
    assert!(second.missing().is_empty(), "{:?}", second.missing());
    let deadline = Instant::now() + Duration::from_secs(3);
    for expected in [frame(1, 0xb1), frame(2, 0xf2)] {
        match second.recv_until(deadline) {
            Some(Event::Frame { from: 1, bytes }) => assert_eq!(bytes, expected),
            other => panic!("expected member 1's frame, got {other:?}"),
        }
    }
    drop((first, second, third));
    relay_thread.join().unwrap();
}

//! The frame bounds: the largest legitimate frame of every type passes and one byte more is
//! refused (at the scale: 100 parties, 4096 bits, the default batch of 128), and a real
//! generation's frames reach their bounds (so the bounds are the protocol's, not guesses).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Instant;

use hourglass_arith::entropy::SeededEntropy;
use hourglass_dkg::bounds::FrameBounds;
use hourglass_dkg::params::Settings;
use hourglass_dkg::protocol::generate;
use hourglass_dkg::sieve::{Sieve, SieveMethod};
use hourglass_dkg::transport::{memory_mesh, Event, NetSim, TrafficStats, Transport};
use hourglass_dkg::wire::{step, Frame, Kind, Writer, MAX_REASON, MAX_SIGNATURE_BYTES};
use hourglass_dkg::{Integer, LinkRejection, PartyId, Result};

/// A payload of `count` copies of `value`.
fn ints(count: usize, value: &Integer) -> Writer {
    let mut w = Writer::new();
    for _ in 0..count {
        w.int(value);
    }
    w
}

#[test]
fn the_largest_frame_of_every_type_passes_and_one_byte_more_does_not() {
    let (k, bits) = (100usize, 4096u32);
    let settings = Settings::new(bits);
    assert_eq!(settings.batch, hourglass_dkg::params::DEFAULT_BATCH);
    let bounds = FrameBounds::generation(&settings, k).unwrap();
    let batch = settings.batch;
    let rounds = settings.biprimality_rounds as usize;

    // The largest value below each modulus a frame's values are reduced by.
    let below = |m: &Integer| Integer::from(m - 1u32);
    let big_p = (Integer::from(1) << bits).next_prime();
    let n = (Integer::from(1) << bits) - 1u32;
    let e = Integer::from(65537);
    let witness_bound = Integer::from(1) << 64u32;
    // t = 49: a committee of 100 (or of 99, the fewest a restart may leave: 2t + 1) tests
    // random sharings ([`SieveMethod::Tested`]), each with its own sieving modulus. Among k'
    // members each deals ceil(2A / (k' - 49)) random sharings for A attempts (two sharings
    // each), and the A attempts are spread over k' kings.
    let sieve_frames: Vec<(u16, usize, Integer)> = [99usize, 100]
        .into_iter()
        .flat_map(|parties| {
            let sieve = Sieve::new(bits / 2, parties, None).unwrap();
            assert_eq!(sieve.method(49), SieveMethod::Tested, "{parties} members");
            let attempts = sieve.attempts(batch);
            let dealt = (2 * attempts).div_ceil(parties - 49);
            let per_king = attempts.div_ceil(parties);
            let m = sieve.modulus().clone();
            vec![
                (step::SIEVE, dealt, m.clone()),
                (step::sieve_to_king(0), per_king, m.clone()),
                (step::sieve_from_king(0), per_king, m),
            ]
        })
        .collect();

    let mut frames: Vec<(Kind, u16, Vec<u8>)> = Vec::new();
    let mut hello = Writer::new();
    hello.bytes(&[0xff; 32]).bytes(&[0xff; 16]);
    for id in 1..=k as u32 {
        hello.bytes(&id.to_be_bytes());
    }
    hello.bytes(&[0xff; 32]);
    frames.push((Kind::Hello, step::HELLO, hello.finish()));
    for s in sieve_frames
        .iter()
        .map(|f| f.0)
        .collect::<std::collections::BTreeSet<_>>()
    {
        // The longest of this step's frames among 99 and among 100 members.
        let payload = sieve_frames
            .iter()
            .filter(|f| f.0 == s)
            .map(|(_, count, m)| ints(*count, &below(m)).finish())
            .max_by_key(Vec::len)
            .unwrap();
        frames.push((Kind::Data, s, payload));
    }
    let data = [
        // A member holds the pairs whose lead is among the t + 1 positions up to its own:
        // 50 * floor(128 / k') + min(50, 128 mod k') of a batch, 79 among 99 (78 among 100).
        (step::N_SHARES, 2 * 79, &big_p),
        (step::N_POINTS, batch, &big_p),
        // A trial division witness for every modulus, each as long as one can be (2^64 - 1).
        (step::TRIAL, batch, &witness_bound),
        (step::BIPRIMALITY, batch, &n),
        (step::GCD_SHARES, rounds - 1 + 2, &n),
        (step::GCD_POINT, 1, &n),
        (step::PHI_PARTS, 1, &e),
        (step::PHI_SUM, 1, &e),
        (step::ROUNDING, 1, &n),
    ];
    for (s, count, modulus) in data {
        frames.push((Kind::Data, s, ints(count, &below(modulus)).finish()));
    }
    let mut report = Writer::new();
    report.bytes(&[b'x'; MAX_REASON]);
    for id in 1..=k as u32 {
        report.bytes(&id.to_be_bytes());
    }
    let report = report.finish();
    frames.push((Kind::Abort, step::ABORT, report.clone()));
    frames.push((Kind::Abort, step::CONFIRM, report.clone()));
    frames.push((Kind::Fatal, step::FATAL, report));
    let mut signature = Writer::new();
    signature
        .bytes(&[0xff; 32])
        .bytes(&[0x08, 0x06])
        .bytes(&[0xff; MAX_SIGNATURE_BYTES]);
    frames.push((Kind::Signature, step::HELLO, signature.finish()));
    let mut echo = Writer::new();
    echo.bytes(&[0xff; 32]).bytes(&[0xff; 32]);
    frames.push((Kind::Signature, step::TRANSCRIPT_ECHO, echo.finish()));
    let mut set = Writer::new();
    set.bytes(&[0xff; 32]);
    for id in 1..=k as u32 {
        set.bytes(&id.to_be_bytes())
            .bytes(&[0x08, 0x06])
            .bytes(&[0xff; MAX_SIGNATURE_BYTES]);
    }
    let mut shown = Writer::new();
    shown.bytes(&set.finish());
    frames.push((Kind::Signature, step::TRANSCRIPT_SETS, shown.finish()));

    for (kind, s, payload) in &frames {
        let len = payload.len();
        assert_eq!(
            bounds.payload_limit(*kind, *s),
            len,
            "{kind:?} step {s}: the bound is the largest legitimate payload"
        );
        bounds.check(*kind, *s, len).unwrap();
        assert!(matches!(
            bounds.check(*kind, *s, len + 1),
            Err(LinkRejection::OversizedFrame { .. })
        ));
    }
    let largest = frames.iter().map(|f| f.2.len()).max().unwrap();
    assert_eq!(bounds.largest(), hourglass_dkg::wire::HEADER + largest);
    // A set of the transcript signatures is the largest (104 KB: 100 signatures of the
    // longest kind; shown only between members whose echoed digests differ), then the shares
    // of the pairs a member holds (82 KB).
    assert_eq!(
        bounds.payload_limit(Kind::Signature, step::TRANSCRIPT_SETS),
        largest,
        "a set is the largest frame"
    );
    assert!(largest > 100_000);
    assert!(bounds.payload_limit(Kind::Data, step::N_SHARES) > 80_000);

    // A star's relay link carries that largest frame sealed (a 5-byte header and a 16-byte
    // tag more) as a broadcast (a count, and each other member's id and sealed key and
    // digest) and not a byte more; it may hold the pending frames of all k - 1 senders.
    let relayed = bounds.relayed(k);
    let sealed = bounds.largest()
        + hourglass_dkg::bounds::RELAY_OVERHEAD
        + 4
        + (k - 1) * hourglass_dkg::bounds::BROADCAST_PER_RECIPIENT;
    assert_eq!(hourglass_dkg::bounds::RELAY_OVERHEAD, 5 + 16);
    assert_eq!(hourglass_dkg::bounds::BROADCAST_PER_RECIPIENT, 4 + 80);
    relayed.admit_length(sealed as u64).unwrap();
    assert!(matches!(
        relayed.admit_length(sealed as u64 + 1),
        Err(LinkRejection::OversizedFrame { .. })
    ));
    assert_eq!(relayed.max_pending(), sealed as u64 * 8 * (k as u64 - 1));

    // A signature's session through a relay: its frames are a few hundred bytes, but its links
    // still carry the key announcements, of up to 1,096 bytes (an RSA-8192 transcript key's
    // signature is 1,024).
    let signing = FrameBounds::signing(1024, 2, hourglass_rsa::HashAlg::Sha256).relayed(2);
    assert_eq!(hourglass_dkg::bounds::ANNOUNCEMENT_BYTES, 5 + 65 + 2 + 1024);
    signing
        .admit_length(hourglass_dkg::bounds::ANNOUNCEMENT_BYTES as u64)
        .unwrap();
    assert!(signing
        .admit_length(hourglass_dkg::bounds::ANNOUNCEMENT_BYTES as u64 + 1)
        .is_err());

    // A relay serving every session of a cluster admits the longest frame of each.
    let settings = Settings::new(2048);
    let any = FrameBounds::any_session(&settings, 7).unwrap();
    let mut parts = vec![
        FrameBounds::generation(&settings, 7).unwrap(),
        FrameBounds::signing(2048, 7, hourglass_rsa::HashAlg::Sha512),
    ];
    for t in 1..=3 {
        let sizes = hourglass_dkg::threshold::Sizes::new(2048, 7, t).unwrap();
        parts.push(FrameBounds::threshold_signing(
            &sizes,
            7,
            hourglass_rsa::HashAlg::Sha512,
        ));
        parts.push(FrameBounds::resharing(&sizes, false));
        parts.push(FrameBounds::resharing(&sizes, true));
    }
    let longest = parts.iter().map(FrameBounds::largest).max().unwrap();
    assert_eq!(any.largest(), longest);
    // The largest committee with threshold shares (256 parties, t up to 127) at 4096 bits.
    let big = Settings::new(4096);
    let any = FrameBounds::any_session(&big, 256).unwrap();
    let sizes = hourglass_dkg::threshold::Sizes::new(4096, 256, 127).unwrap();
    for part in [
        FrameBounds::generation(&big, 256).unwrap(),
        FrameBounds::threshold_signing(&sizes, 256, hourglass_rsa::HashAlg::Sha512),
        FrameBounds::resharing(&sizes, true),
    ] {
        assert!(part.largest() <= any.largest());
    }
    // Beyond 256 parties there are no threshold shares: the generation's bound alone.
    let many = FrameBounds::any_session(&settings, 300).unwrap();
    assert_eq!(
        many.largest(),
        FrameBounds::generation(&settings, 300).unwrap().largest()
    );
}

/// A transport that records the largest payload it sent of each kind and step.
struct Recording {
    inner: Box<dyn Transport>,
    largest: Arc<Mutex<BTreeMap<(Kind, u16), usize>>>,
}

impl Transport for Recording {
    fn me(&self) -> PartyId {
        self.inner.me()
    }
    fn peers(&self) -> Vec<PartyId> {
        self.inner.peers()
    }
    fn send(&self, to: PartyId, frame: Vec<u8>) -> Result<()> {
        let decoded = Frame::decode(&frame).unwrap();
        let mut largest = self.largest.lock().unwrap();
        let slot = largest.entry((decoded.kind, decoded.tag.step)).or_insert(0);
        *slot = (*slot).max(decoded.payload.len());
        drop(largest);
        self.inner.send(to, frame)
    }
    fn recv_until(&mut self, deadline: Instant) -> Option<Event> {
        self.inner.recv_until(deadline)
    }
    fn stats(&self) -> TrafficStats {
        self.inner.stats()
    }
}

#[test]
fn a_generations_frames_reach_their_bounds() {
    // 5 parties, t = 2: three units per candidate, two levels of products (the tree).
    frames_reach_their_bounds(5, 2, SieveMethod::Tree, &[0, 1]);
    // 21 parties, t = 10: attempts tested, one exchange with the kings.
    frames_reach_their_bounds(21, 10, SieveMethod::Tested, &[0]);
}

/// A generation among `k` members with threshold `t = (k - 1) / 2`, so that no restart can
/// leave fewer than `2t + 1 = k` and every bound is this membership's.
fn frames_reach_their_bounds(k: usize, t: usize, method: SieveMethod, levels: &[usize]) {
    assert_eq!(2 * t + 1, k);
    let mut settings = Settings::new(512);
    settings.batch = 4;
    settings.biprimality_rounds = 8;
    settings.threshold = Some(t);
    assert_eq!(Sieve::new(256, k, None).unwrap().method(t), method);
    let ids: Vec<PartyId> = (1..=k as PartyId).collect();
    let largest = Arc::new(Mutex::new(BTreeMap::new()));
    let handles: Vec<_> = memory_mesh(&ids, NetSim::default())
        .into_iter()
        .map(|t| {
            let (ids, settings, largest) = (ids.clone(), settings.clone(), largest.clone());
            thread::spawn(move || {
                let me = t.me();
                let mut t = Recording {
                    inner: Box::new(t),
                    largest,
                };
                let mut entropy = SeededEntropy::new(&[me as u8; 32]);
                generate(&mut t, &ids, &settings, "bounds", &mut entropy, &mut |_| {}).unwrap()
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let bounds = FrameBounds::generation(&settings, k).unwrap();
    let largest = largest.lock().unwrap();
    // Every frame within its bound (the session refuses the others), and the frames whose
    // size does not depend on chance fill it: values are at most a byte shorter than the
    // longest (a value below M, P or N may start with a zero byte). (A tested batch with fewer
    // passing attempts than candidates has fewer pairs: its N frames are not counted full.)
    let mut full = vec![(Kind::Hello, step::HELLO), (Kind::Data, step::SIEVE)];
    for &level in levels {
        full.push((Kind::Data, step::sieve_to_king(level)));
        full.push((Kind::Data, step::sieve_from_king(level)));
    }
    full.extend([
        (Kind::Data, step::N_SHARES),
        (Kind::Data, step::N_POINTS),
        (Kind::Data, step::GCD_SHARES),
        (Kind::Data, step::GCD_POINT),
        (Kind::Data, step::ROUNDING),
    ]);
    for (&(kind, s), &sent) in largest.iter() {
        let limit = bounds.payload_limit(kind, s);
        assert!(sent <= limit, "{k}: {kind:?} step {s}: {sent} > {limit}");
        if full.contains(&(kind, s)) {
            assert!(
                sent * 100 >= limit * 95,
                "{k}: {kind:?} step {s}: sent {sent}, bound {limit}"
            );
        }
    }
    for &(kind, s) in &full {
        assert!(
            largest.contains_key(&(kind, s)),
            "{k}: {kind:?} step {s} sent"
        );
    }
    assert!(!largest.contains_key(&(Kind::Data, step::sieve_to_king(levels.len()))));
    assert_eq!(
        largest[&(Kind::Hello, step::HELLO)],
        bounds.payload_limit(Kind::Hello, step::HELLO)
    );
}

/// The reshare's, refresh's and threshold signature's frames: the largest legitimate one of
/// each step passes, one byte more is refused (100 parties, t = 49, 4096 bits, SHA-512).
#[test]
fn the_largest_threshold_frames_pass_and_one_byte_more_does_not() {
    use hourglass_dkg::threshold::{Sizes, CHALLENGE_BITS};
    use hourglass_rsa::HashAlg;
    let sizes = Sizes::new(4096, 100, 49).unwrap();
    let n = (Integer::from(1) << 4096u32) - 1u32;
    let below_bits = |bits: u32| (Integer::from(1) << bits) - 1u32;
    let agreement = || {
        let mut w = Writer::new();
        w.bytes(&[0xff; 32])
            .bytes(&[0xff; 16])
            .bytes(&[0xff; 32])
            .bytes(&[0xff; 8])
            .bytes(&[0xff; 4])
            .bytes(&[1])
            .bytes(&[0xff; 32]);
        w.finish()
    };
    let deal = |refresh: bool| {
        let mut w = Writer::new();
        if refresh {
            w.bytes(&[1])
                .int(&below_bits(sizes.quotient_bits()))
                .int(&Integer::from(&sizes.delta - 1u32));
        }
        for _ in 0..=sizes.threshold {
            w.int(&n);
        }
        w.int(&below_bits(sizes.sub_share_bits()));
        w.finish()
    };
    let mut confirm = Writer::new();
    confirm.bytes(&[0xff; 32]);
    let confirm = confirm.finish();
    for refresh in [false, true] {
        let bounds = FrameBounds::resharing(&sizes, refresh);
        for (s, payload) in [
            (step::RESHARE_AGREE, agreement()),
            (step::RESHARE_DEAL, deal(refresh)),
            (step::RESHARE_CONFIRM, confirm.clone()),
        ] {
            assert_eq!(
                bounds.payload_limit(Kind::Data, s),
                payload.len(),
                "step {s}"
            );
            bounds.check(Kind::Data, s, payload.len()).unwrap();
            assert!(bounds.check(Kind::Data, s, payload.len() + 1).is_err());
        }
    }
    let bounds = FrameBounds::threshold_signing(&sizes, 50, HashAlg::Sha512);
    let mut request = Writer::new();
    request
        .bytes(&[0xff; 32])
        .bytes(&[0xff; 64])
        .bytes(&[0xff; 32])
        .bytes(&[0xff; 16])
        .bytes(&[0xff; 32])
        .bytes(&[0xff; 8])
        .bytes(&[0xff; 4])
        .bytes(&[1])
        .bytes(&[0xff; 32]);
    let mut partial = Writer::new();
    partial.int(&n);
    let mut proof = Writer::new();
    proof
        .int(&below_bits(CHALLENGE_BITS))
        .int(&below_bits(sizes.response_bits()));
    for (s, payload) in [
        (step::THRESHOLD_REQUEST, request.finish()),
        (step::THRESHOLD_PARTIAL, partial.finish()),
        (step::THRESHOLD_STATUS, vec![1]),
        (step::THRESHOLD_PROOF, proof.finish()),
    ] {
        assert_eq!(
            bounds.payload_limit(Kind::Data, s),
            payload.len(),
            "step {s}"
        );
        bounds.check(Kind::Data, s, payload.len()).unwrap();
        assert!(bounds.check(Kind::Data, s, payload.len() + 1).is_err());
    }
}

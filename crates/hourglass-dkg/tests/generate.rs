//! End-to-end generations over the in-memory mesh: the key is correct, nobody holds it.

use std::thread;

use hourglass_arith::entropy::SeededEntropy;
use hourglass_dkg::params::Settings;
use hourglass_dkg::protocol::{generate, generate_limited, partial_power, Generated, Progress};
use hourglass_dkg::sieve::SieveMethod;
use hourglass_dkg::transport::{
    memory_mesh, Event, MemoryTransport, NetSim, PartyId, TrafficStats, Transport,
};
use hourglass_dkg::wire::{Frame, Kind, Writer};
use hourglass_dkg::Integer;

fn run_cluster(k: usize, settings: &Settings, seed: u8) -> Vec<hourglass_dkg::Result<Generated>> {
    run_cluster_on(k, settings, seed, NetSim::default())
}

fn run_cluster_on(
    k: usize,
    settings: &Settings,
    seed: u8,
    sim: NetSim,
) -> Vec<hourglass_dkg::Result<Generated>> {
    let ids: Vec<PartyId> = (1..=k as u32).collect();
    let mesh = memory_mesh(&ids, sim);
    let handles: Vec<_> = mesh
        .into_iter()
        .map(|mut transport| {
            let ids = ids.clone();
            let settings = settings.clone();
            thread::spawn(move || {
                let me = transport.me();
                let mut entropy = SeededEntropy::new(&[seed, me as u8]);
                generate(
                    &mut transport,
                    &ids,
                    &settings,
                    "test",
                    &mut entropy,
                    &mut |_: &Progress| {},
                )
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn check_key(results: &[Generated]) {
    let n = results[0].share.public.n().clone();
    for g in results {
        assert_eq!(g.share.public.n(), &n, "all parties agree on N");
        assert_eq!(g.share.members.len(), results.len());
    }
    let p: Integer = results
        .iter()
        .map(|g| g.prime_shares_for_testing().0.clone())
        .sum();
    let q: Integer = results
        .iter()
        .map(|g| g.prime_shares_for_testing().1.clone())
        .sum();
    assert_eq!(Integer::from(&p * &q), n);
    assert!(hourglass_arith::prime::gmp_is_prime(&p));
    assert!(hourglass_arith::prime::gmp_is_prime(&q));
    assert_eq!(p.mod_u(4), 3);
    assert_eq!(q.mod_u(4), 3);
    let e = Integer::from(65537);
    let d: Integer = results.iter().map(|g| g.share.d_share().clone()).sum();
    let phi = Integer::from(&p - 1u32) * Integer::from(&q - 1u32);
    assert_eq!(
        Integer::from(&d * &e) % &phi,
        1,
        "d is the inverse of e mod phi"
    );
    // No single party's state determines the secrets: its shares are far from p, q and d, and
    // its own exponentiation of a message is not the signature.
    let m = Integer::from(0x1234_5678u32);
    let sig = partial_power(&m, &d, &n).unwrap();
    for g in results {
        let (pj, qj) = g.prime_shares_for_testing();
        for (share, secret) in [(pj, &p), (qj, &q)] {
            let gap = Integer::from(secret - share).abs();
            assert!(
                gap.significant_bits() > 16,
                "a party's share is too close to a prime"
            );
            assert_ne!(Integer::from(n.gcd_ref(share)), *secret);
        }
        let gap = Integer::from(&d - g.share.d_share()).abs();
        assert!(gap.significant_bits() > 64);
        assert_ne!(partial_power(&m, g.share.d_share(), &n).unwrap(), sig);
    }
}

#[test]
fn three_parties_generate_a_working_512_bit_key() {
    let settings = Settings::new(512);
    let results: Vec<Generated> = run_cluster(3, &settings, 1)
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(results[0].share.public.bits(), 512);
    check_key(&results);
    assert!(results[0].report.candidates >= 1);
}

#[test]
fn five_and_six_parties_with_small_batches() {
    for k in [5, 6] {
        let mut settings = Settings::new(512);
        settings.batch = 4;
        let results: Vec<Generated> = run_cluster(k, &settings, k as u8)
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        check_key(&results);
    }
}

#[test]
fn frames_arriving_out_of_order_under_jitter_and_loss_are_buffered() {
    // Jitter reorders frames across links, so fast parties' frames of later rounds arrive
    // before slow parties' frames of earlier ones.
    let sim = NetSim {
        rtt: std::time::Duration::from_millis(2),
        jitter: std::time::Duration::from_millis(15),
        loss: 0.02,
    };
    let mut settings = Settings::new(512);
    settings.batch = 8;
    let results: Vec<Generated> = run_cluster_on(4, &settings, 11, sim)
        .into_iter()
        .map(|r| r.unwrap())
        .collect();
    check_key(&results);
}

#[test]
fn a_party_that_dies_is_dropped_and_the_rest_finish() {
    let k = 4usize;
    let ids: Vec<PartyId> = (1..=k as u32).collect();
    let mesh = memory_mesh(&ids, NetSim::default());
    let mut settings = Settings::new(512);
    settings.batch = 2;
    settings.timeout_ms = 5_000;
    let handles: Vec<_> = mesh
        .into_iter()
        .map(|mut transport| {
            let ids = ids.clone();
            let settings = settings.clone();
            thread::spawn(move || {
                let me = transport.me();
                let mut entropy = SeededEntropy::new(&[9, me as u8]);
                if me == 3 {
                    // Stops after its first batch (deterministic with these seeds: no key is
                    // found in it) and dies: dropping the transport closes its links.
                    let out = generate_limited(
                        &mut transport,
                        &ids,
                        &settings,
                        "test",
                        &mut entropy,
                        &mut |_| {},
                        Some(1),
                    );
                    assert!(
                        matches!(out, Err(hourglass_dkg::Error::Stopped(_))),
                        "{out:?}"
                    );
                    return None;
                }
                let mut restarts = Vec::new();
                let out = generate(
                    &mut transport,
                    &ids,
                    &settings,
                    "test",
                    &mut entropy,
                    &mut |p| {
                        if let Progress::Restart { removed } = p {
                            restarts.push(removed.iter().map(|r| r.0).collect::<Vec<_>>());
                        }
                    },
                );
                Some((out, restarts))
            })
        })
        .collect();
    let mut results = Vec::new();
    for h in handles {
        if let Some((out, restarts)) = h.join().unwrap() {
            let g = out.unwrap();
            assert_eq!(g.share.members, vec![1, 2, 4]);
            assert_eq!(restarts, vec![vec![3]]);
            assert_eq!(g.report.removed.len(), 1);
            results.push(g);
        }
    }
    check_key(&results);
}

#[test]
fn a_silent_party_is_noticed_within_the_timeout_and_left_out() {
    let ids: Vec<PartyId> = (1..=4).collect();
    let mut settings = Settings::new(512);
    settings.timeout_ms = 1_000;
    let handles: Vec<_> = memory_mesh(&ids, NetSim::default())
        .into_iter()
        .map(|mut transport| {
            let ids = ids.clone();
            let settings = settings.clone();
            thread::spawn(move || {
                let me = transport.me();
                if me == 2 {
                    // Hangs: its links stay open but it never answers.
                    thread::sleep(std::time::Duration::from_secs(4));
                    drop(transport);
                    return None;
                }
                let mut entropy = SeededEntropy::new(&[5, me as u8]);
                let start = std::time::Instant::now();
                let mut reasons = Vec::new();
                let out = generate(
                    &mut transport,
                    &ids,
                    &settings,
                    "t",
                    &mut entropy,
                    &mut |p| {
                        if let Progress::Restart { removed } = p {
                            for (party, reason) in removed {
                                reasons.push((*party, reason.clone(), start.elapsed()));
                            }
                        }
                    },
                );
                Some((out, reasons))
            })
        })
        .collect();
    let mut results = Vec::new();
    for h in handles {
        if let Some((out, reasons)) = h.join().unwrap() {
            let g = out.unwrap();
            assert_eq!(g.share.members, vec![1, 3, 4]);
            assert_eq!(reasons.len(), 1);
            assert_eq!(reasons[0].0, 2);
            // Seen by this party itself: in the round, or while the survivors compared notes.
            let reason = &reasons[0].1;
            assert!(
                matches!(
                    reason,
                    hourglass_dkg::Failure::NoAnswer { timeout_ms: 1000 }
                        | hourglass_dkg::Failure::NoAnswerDuringRestart
                ),
                "{reason}"
            );
            assert!(reasons[0].2 < std::time::Duration::from_millis(3_500));
            results.push(g);
        }
    }
    check_key(&results);
}

/// How a party misbehaves on the wire.
#[derive(Debug, Clone, Copy)]
enum Tampering {
    Garbage,
    OutOfRange,
    Truncated,
    WrongSender,
    Duplicate,
    /// As king of the tested sieve, says that every attempt it opened is the unit 1, so that
    /// every member keeps those attempts, units or not (other frames go as they are).
    PassEverything,
    /// In the trial division, claims the divisor 3 of every modulus (none has it: 3 is sieved).
    FalseWitness,
}

/// Each value of a payload (a 4-byte length and the bytes) replaced with `value`; returns the
/// new payload and how many values it held.
fn every_value(payload: &[u8], value: u32) -> (Vec<u8>, usize) {
    let (mut at, mut w, mut count) = (0, Writer::new(), 0);
    while at + 4 <= payload.len() {
        let len = u32::from_be_bytes(payload[at..at + 4].try_into().unwrap()) as usize;
        at += 4 + len;
        w.int(&Integer::from(value));
        count += 1;
    }
    (w.finish(), count)
}

/// Party 2's transport, damaging every protocol frame it sends after the first round.
struct Tamper {
    inner: MemoryTransport,
    how: Tampering,
    /// How many values it rewrote.
    rewritten: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl Transport for Tamper {
    fn me(&self) -> PartyId {
        self.inner.me()
    }
    fn peers(&self) -> Vec<PartyId> {
        self.inner.peers()
    }
    fn send(&self, to: PartyId, frame: Vec<u8>) -> hourglass_dkg::Result<()> {
        let mut f = Frame::decode(&frame).unwrap();
        if f.kind != Kind::Data {
            return self.inner.send(to, frame);
        }
        use hourglass_dkg::wire::step;
        let rewrite = match (self.how, f.tag.step) {
            (Tampering::PassEverything, s) if s == step::sieve_from_king(0) => Some(1),
            (Tampering::FalseWitness, step::TRIAL) => Some(3),
            (Tampering::PassEverything | Tampering::FalseWitness, _) => {
                return self.inner.send(to, frame)
            }
            _ => None,
        };
        if let Some(value) = rewrite {
            let (payload, count) = every_value(&f.payload, value);
            f.payload = payload;
            self.rewritten
                .fetch_add(count, std::sync::atomic::Ordering::Relaxed);
            return self.inner.send(to, f.encode());
        }
        match self.how {
            Tampering::PassEverything | Tampering::FalseWitness => {
                unreachable!("rewritten above")
            }
            Tampering::Garbage => self
                .inner
                .send(to, b"garbage that is not a frame at all".to_vec()),
            Tampering::OutOfRange => {
                let mut w = Writer::new();
                w.int(&(Integer::from(1) << 20_000));
                f.payload = w.finish();
                self.inner.send(to, f.encode())
            }
            Tampering::Truncated => {
                f.payload.pop();
                self.inner.send(to, f.encode())
            }
            Tampering::WrongSender => {
                f.sender = 3;
                self.inner.send(to, f.encode())
            }
            Tampering::Duplicate => {
                self.inner.send(to, frame.clone())?;
                self.inner.send(to, frame)
            }
        }
    }
    fn recv_until(&mut self, deadline: std::time::Instant) -> Option<Event> {
        self.inner.recv_until(deadline)
    }
    fn stats(&self) -> TrafficStats {
        self.inner.stats()
    }
}

#[test]
fn tampered_and_garbage_messages_abort_the_run_naming_the_sender() {
    for how in [
        Tampering::Garbage,
        Tampering::OutOfRange,
        Tampering::Truncated,
        Tampering::WrongSender,
        Tampering::Duplicate,
    ] {
        let ids: Vec<PartyId> = vec![1, 2, 3];
        let mut settings = Settings::new(512);
        settings.timeout_ms = 2_000;
        let handles: Vec<_> = memory_mesh(&ids, NetSim::default())
            .into_iter()
            .map(|inner| {
                let ids = ids.clone();
                let settings = settings.clone();
                thread::spawn(move || {
                    let me = inner.me();
                    let mut entropy = SeededEntropy::new(&[7, me as u8]);
                    let mut transport: Box<dyn Transport> = if me == 2 {
                        Box::new(Tamper {
                            inner,
                            how,
                            rewritten: Default::default(),
                        })
                    } else {
                        Box::new(inner)
                    };
                    let out = generate(
                        &mut *transport,
                        &ids,
                        &settings,
                        "t",
                        &mut entropy,
                        &mut |_| {},
                    );
                    (me, out.map(|_| ()))
                })
            })
            .collect();
        for h in handles {
            let (me, out) = h.join().unwrap();
            if me == 2 {
                continue;
            }
            // Either it caught party 2 itself, or another honest party did and said so.
            match out {
                Err(hourglass_dkg::Error::BadMessage { sender, reason }) => {
                    assert_eq!(sender, 2, "{how:?}: {reason}");
                }
                Err(hourglass_dkg::Error::Reported { culprits, by, .. }) => {
                    assert_eq!(culprits, vec![2], "{how:?}: reported by {by}");
                    assert_ne!(by, 2);
                }
                other => panic!("{how:?}: party {me} got {other:?}"),
            }
        }
    }
}

#[test]
fn too_few_survivors_is_an_error() {
    let ids: Vec<PartyId> = vec![1, 2, 3];
    let mesh = memory_mesh(&ids, NetSim::default());
    let mut settings = Settings::new(512);
    settings.timeout_ms = 5_000;
    let handles: Vec<_> = mesh
        .into_iter()
        .map(|mut transport| {
            let ids = ids.clone();
            let settings = settings.clone();
            thread::spawn(move || {
                if transport.me() == 2 {
                    drop(transport);
                    return None;
                }
                let mut entropy = SeededEntropy::new(&[3]);
                Some(generate(
                    &mut transport,
                    &ids,
                    &settings,
                    "t",
                    &mut entropy,
                    &mut |_| {},
                ))
            })
        })
        .collect();
    for h in handles {
        if let Some(out) = h.join().unwrap() {
            let err = out.unwrap_err().to_string();
            assert!(err.contains("only 2 parties left"), "{err}");
        }
    }
}

/// The sieving tree's product, or the test's units, are right: the candidates have no prime factor up to the sieving
/// bound, so far more moduli survive trial division than unsieved candidates would (about one
/// in five here, against one in thirty when `a` is not the product of units: then `p` is
/// uniform modulo `M`). The seeds fix every party's randomness, so the counts are fixed; each
/// seed's generation tries at least 160 candidates, enough for the ratio to mean something (a
/// run that finds its key in one batch of 16 can fail a one-in-eight bound by chance).
#[test]
fn sieved_candidates_survive_trial_division() {
    let mut settings = Settings::new(512);
    settings.batch = 16;
    for (k, seed) in [(5usize, 31u8), (7, 32), (20, 35)] {
        // 5 parties multiply units in a tree; 7 (at these sizes) and 20 test random sharings.
        let t = (k - 1) / 2;
        let method = hourglass_dkg::sieve::Sieve::new(256, k, None)
            .unwrap()
            .method(t);
        assert_eq!(method == SieveMethod::Tested, k > 5, "{k} parties");
        let results: Vec<Generated> = run_cluster(k, &settings, seed)
            .into_iter()
            .collect::<hourglass_dkg::Result<_>>()
            .unwrap();
        check_key(&results);
        let report = &results[0].report;
        assert!(
            report.biprimality_tests * 8 >= report.candidates,
            "{k} parties: {} of {} candidates survived trial division",
            report.biprimality_tests,
            report.candidates
        );
        eprintln!(
            "{k} parties: {} of {} candidates survived trial division",
            report.biprimality_tests, report.candidates
        );
    }
}

/// A party that sends frames far ahead of the protocol (each within its type's bound) to pin
/// memory is cut off at 16 buffered frames and named, not buffered without end.
#[test]
fn a_peer_flooding_frames_ahead_of_the_protocol_is_named() {
    use hourglass_dkg::wire::{step, Tag};
    let ids: Vec<PartyId> = vec![1, 2, 3];
    let mut mesh = memory_mesh(&ids, NetSim::default());
    let flooder = mesh.pop().unwrap();
    let idle = mesh.pop().unwrap();
    let mut honest = mesh.pop().unwrap();
    for round in 1000..1017u64 {
        let frame = Frame {
            kind: Kind::Data,
            session: [0; 16],
            tag: Tag {
                epoch: 0,
                round,
                step: step::SIEVE,
            },
            sender: 3,
            payload: Vec::new(),
        };
        flooder.send(1, frame.encode()).unwrap();
    }
    let mut settings = Settings::new(512);
    settings.timeout_ms = 10_000;
    let mut entropy = SeededEntropy::new(&[11]);
    let out = generate(&mut honest, &ids, &settings, "t", &mut entropy, &mut |_| {});
    match out {
        Err(hourglass_dkg::Error::BadMessage { sender, reason }) => {
            assert_eq!(sender, 3);
            assert_eq!(reason, hourglass_dkg::MessageProblem::TooManyAhead);
        }
        other => panic!("expected party 3 named, got {other:?}"),
    }
    drop((idle, flooder));
}

/// A 20-party generation at 512 bits (batches of 16, so the tested sieve) in which party
/// `liar` sends through a [`Tamper`] transport; each party's outcome, in id order, and how
/// many values the liar rewrote.
fn run_with_liar(
    liar: PartyId,
    how: Tampering,
    seed: u8,
) -> (Vec<hourglass_dkg::Result<Generated>>, usize) {
    let k = 20;
    let mut settings = Settings::new(512);
    settings.batch = 16;
    settings.timeout_ms = 20_000;
    let ids: Vec<PartyId> = (1..=k as u32).collect();
    let rewritten = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let handles: Vec<_> = memory_mesh(&ids, NetSim::default())
        .into_iter()
        .map(|inner| {
            let ids = ids.clone();
            let settings = settings.clone();
            let rewritten = rewritten.clone();
            thread::spawn(move || {
                let me = inner.me();
                let mut entropy = SeededEntropy::new(&[seed, me as u8]);
                let mut transport: Box<dyn Transport> = if me == liar {
                    Box::new(Tamper {
                        inner,
                        how,
                        rewritten,
                    })
                } else {
                    Box::new(inner)
                };
                generate(
                    &mut *transport,
                    &ids,
                    &settings,
                    "test",
                    &mut entropy,
                    &mut |_| {},
                )
            })
        })
        .collect();
    let results = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let rewritten = rewritten.load(std::sync::atomic::Ordering::Relaxed);
    (results, rewritten)
}

/// The share of a party's candidate pairs that reached the biprimality test.
fn tested_share(g: &Generated) -> f64 {
    g.report.biprimality_tests as f64 / g.report.candidates as f64
}

/// The attack on the tested sieve: a king that says every attempt passes gets candidates
/// that are not units modulo `M` into the batch. They cannot reach the key: the shares of a
/// candidate come from the sharings themselves, not from the king's word, so a candidate with
/// a factor in `M` makes an `N` that fails trial division. The generation still ends in a
/// correct key (the share of candidates that reach the biprimality test, with the liar and
/// without, is printed).
#[test]
fn a_king_passing_every_attempt_gets_no_small_factor_into_the_key() {
    let (results, rewritten) = run_with_liar(2, Tampering::PassEverything, 34);
    let results: Vec<Generated> = results.into_iter().map(|r| r.unwrap()).collect();
    check_key(&results);
    assert!(rewritten > 0);
    let mut settings = Settings::new(512);
    settings.batch = 16;
    let honest = run_cluster(20, &settings, 34);
    let honest = honest[0].as_ref().unwrap();
    eprintln!(
        "tests per candidate: {:.3} with a lying king, {:.3} without",
        tested_share(&results[0]),
        tested_share(honest)
    );
}

/// A member that claims a small factor a modulus does not have (to drop moduli it does not
/// like) is named by every honest member: a witness is checked by division.
#[test]
fn a_false_trial_division_witness_is_named() {
    let (results, rewritten) = run_with_liar(2, Tampering::FalseWitness, 36);
    assert!(rewritten > 0);
    for (i, out) in results.into_iter().enumerate() {
        if i == 1 {
            continue;
        }
        match out {
            Err(hourglass_dkg::Error::BadMessage { sender, reason }) => {
                assert_eq!(sender, 2);
                assert!(
                    matches!(reason, hourglass_dkg::MessageProblem::FalseWitness),
                    "{reason}"
                );
            }
            Err(hourglass_dkg::Error::Reported { culprits, by, .. }) => {
                assert_eq!(culprits, vec![2], "reported by {by}");
            }
            other => panic!("party {} got {other:?}", i + 1),
        }
    }
}

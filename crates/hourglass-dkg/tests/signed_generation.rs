//! The round that ends a published generation: every member signs the version 2 transcript
//! with its party key and checks every other member's signature before anything comes out.
//! A member whose signature is damaged, of another transcript, replayed from another session or
//! missing is named, and no honest member finishes.

mod common;

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use hourglass_arith::entropy::SeededEntropy;
use hourglass_dkg::adversary::{Deviant, Deviation};
use hourglass_dkg::params::Settings;
use hourglass_dkg::protocol::{generate_signed, SignedGeneration};
use hourglass_dkg::transcript::{PublicTranscript, SignedTranscript, TranscriptSigner};
use hourglass_dkg::transport::{
    memory_mesh, Event, MemoryTransport, NetSim, PartyId, TrafficStats, Transport,
};
use hourglass_dkg::wire::{Frame, Kind, Reader, Writer};
use hourglass_dkg::{Error, Failure, SignatureFault};

use common::{members, Filtered, Incoming, KeyKind, Members};

/// One generation at a time (the parties of concurrent tests would compete for two cores).
static SERIAL: Mutex<()> = Mutex::new(());

fn settings() -> Settings {
    let mut s = Settings::new(512);
    s.batch = 4;
    s.timeout_ms = 4_000;
    s
}

/// Runs a signed generation among parties 1..=k with `m`'s signers; `wrap` may replace a
/// party's transport (by id). Returns every party's outcome, by id.
fn run(
    m: Members,
    seed: u8,
    wrap: &dyn Fn(MemoryTransport) -> Box<dyn Transport>,
) -> Vec<(PartyId, hourglass_dkg::Result<SignedGeneration>)> {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let ids: Vec<PartyId> = (1..=m.signers.len() as PartyId).collect();
    let handles: Vec<_> = memory_mesh(&ids, NetSim::default())
        .into_iter()
        .zip(m.signers)
        .map(|(inner, signer)| {
            let ids = ids.clone();
            let mut transport = wrap(inner);
            thread::spawn(move || {
                let me = transport.me();
                let mut entropy = SeededEntropy::new(&[seed, me as u8]);
                let out = generate_signed(
                    &mut *transport,
                    &ids,
                    &settings(),
                    "signed",
                    &signer,
                    &mut entropy,
                    &mut |_| {},
                );
                (me, out)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

fn honest(transport: MemoryTransport) -> Box<dyn Transport> {
    Box::new(transport)
}

/// A transport whose outgoing signature frames of `step` (to `only`, if given) `rewrite`
/// changes (or drops, returning `None`); every other frame passes as it is.
struct Rewrite {
    inner: MemoryTransport,
    step: u16,
    only: Option<PartyId>,
    rewrite: Box<dyn Fn(Frame) -> Option<Vec<u8>> + Send>,
}

impl Transport for Rewrite {
    fn me(&self) -> PartyId {
        self.inner.me()
    }
    fn peers(&self) -> Vec<PartyId> {
        self.inner.peers()
    }
    fn send(&self, to: PartyId, bytes: Vec<u8>) -> hourglass_dkg::Result<()> {
        match Frame::decode(&bytes) {
            Ok(frame)
                if frame.kind == Kind::Signature
                    && frame.tag.step == self.step
                    && self.only.is_none_or(|p| p == to) =>
            {
                match (self.rewrite)(frame) {
                    Some(bytes) => self.inner.send(to, bytes),
                    None => Ok(()),
                }
            }
            _ => self.inner.send(to, bytes),
        }
    }
    fn recv_until(&mut self, deadline: Instant) -> Option<Event> {
        self.inner.recv_until(deadline)
    }
    fn stats(&self) -> TrafficStats {
        self.inner.stats()
    }
}

/// Party 2's transport rewritten by `rewrite`, the others honest.
fn party_2(
    rewrite: impl Fn(Frame) -> Option<Vec<u8>> + Send + Clone + 'static,
) -> impl Fn(MemoryTransport) -> Box<dyn Transport> {
    move |inner| {
        if inner.me() == 2 {
            // The signature frames (step 0); the echoes that follow pass as they are.
            Box::new(Rewrite {
                inner,
                step: 0,
                only: None,
                rewrite: Box::new(rewrite.clone()),
            })
        } else {
            Box::new(inner)
        }
    }
}

/// A signature frame's payload: the fingerprint signed, the scheme and the signature.
fn payload(fingerprint: &[u8], scheme: &[u8], signature: &[u8]) -> Vec<u8> {
    let mut w = Writer::new();
    w.bytes(fingerprint).bytes(scheme).bytes(signature);
    w.finish()
}

fn fields(frame: &Frame) -> (Vec<u8>, Vec<u8>, Vec<u8>) {
    let mut r = Reader::new(&frame.payload);
    let f = r.bytes().unwrap().to_vec();
    let s = r.bytes().unwrap().to_vec();
    let g = r.bytes().unwrap().to_vec();
    r.end().unwrap();
    (f, s, g)
}

/// Every party but `culprit` stopped naming it, and at least one of them found `fault` itself.
/// The others may have stopped on that one's announcement, which names the culprit too, or on
/// the culprit's departure (it stops on the announcement as well, and a party that reaches the
/// round after that finds its link closed).
fn culprit_named(
    outcomes: &[(PartyId, hourglass_dkg::Result<SignedGeneration>)],
    culprit: PartyId,
    fault: impl Fn(&Error) -> bool,
) {
    let mut found = false;
    for (id, out) in outcomes.iter().filter(|(id, _)| *id != culprit) {
        match out {
            Ok(_) => panic!("party {id} finished despite party {culprit}"),
            Err(e) if fault(e) => found = true,
            Err(Error::Reported { culprits, .. }) if culprits.contains(&culprit) => {}
            Err(Error::PartyFailed { party, .. }) if *party == culprit => {}
            Err(e) => panic!("party {id} stopped without naming party {culprit}: {e}"),
        }
    }
    assert!(found, "no party found the fault itself: {outcomes:?}");
}

#[test]
fn every_member_writes_the_same_signed_transcript_and_it_verifies() {
    // Three kinds of party keys in one committee.
    let m = members(&[KeyKind::P256, KeyKind::Ed25519, KeyKind::Rsa], "gen");
    let certificates = m.certificates.clone();
    let outcomes = run(m, 1, &honest);
    let results: Vec<SignedGeneration> = outcomes.into_iter().map(|(_, r)| r.unwrap()).collect();
    let text = results[0].transcript.to_json();
    for r in &results {
        assert_eq!(
            r.transcript.to_json(),
            text,
            "the same file at every member"
        );
    }
    let share = &results[0].generated.share;
    let file = SignedTranscript::from_json(&text).unwrap();
    assert_eq!(file.version(), 2);
    let committee = file.verify(&certificates).unwrap();
    assert_eq!(committee.members, vec![1, 2, 3]);
    assert_eq!(committee.threshold, 1);
    assert_eq!(&committee.n, share.public.n());
    assert_eq!(committee.cluster, "signed");
    let public = PublicTranscript::from_json(&text).unwrap();
    assert_eq!(hex::encode(committee.fingerprint), public.fingerprint_hex());
    assert_eq!(public.session, share.session);
    // A verifier who pins only some members' certificates is refused.
    assert!(file.verify(&certificates[..2]).is_err());
}

#[test]
fn a_damaged_signature_stops_the_generation_naming_its_member() {
    let m = members(&[KeyKind::P256; 3], "damaged");
    let outcomes = run(m, 2, &|inner| {
        if inner.me() == 2 {
            Box::new(Deviant::new(inner, Deviation::WrongSignature))
        } else {
            Box::new(inner)
        }
    });
    culprit_named(&outcomes, 2, |e| {
        matches!(
            e,
            Error::TranscriptSignature {
                party: 2,
                fault: SignatureFault::Invalid
            }
        )
    });
}

#[test]
fn a_member_that_signs_another_transcript_is_named() {
    // Party 2 signs a transcript with another modulus (its own key, a valid signature of the
    // wrong thing), and says so honestly in the frame, or claims it signed the real one.
    for claims_real in [false, true] {
        let m = members(&[KeyKind::P256; 3], "other");
        let key = m.keys[1].clone_key();
        let certificates: std::collections::BTreeMap<PartyId, Vec<u8>> =
            (1..=3).zip(m.certificates.clone()).collect();
        let signer = Arc::new(TranscriptSigner::new(2, &key, certificates.clone()).unwrap());
        let rewrite = move |frame: Frame| {
            let (real, scheme, _) = fields(&frame);
            let other = PublicTranscript {
                cluster: "signed".into(),
                session: frame.session,
                members: vec![1, 2, 3],
                n: hourglass_dkg::Integer::from(0xbad_c0de_u64),
                e: 65537,
                committee: None,
            };
            let sig = signer.sign(&other).unwrap();
            let fingerprint = if claims_real {
                real
            } else {
                other.fingerprint().to_vec()
            };
            Some(
                Frame {
                    payload: payload(&fingerprint, &scheme, &sig.signature),
                    ..frame
                }
                .encode(),
            )
        };
        let outcomes = run(m, 3, &party_2(rewrite));
        culprit_named(&outcomes, 2, |e| match e {
            Error::TranscriptSignature { party: 2, fault } => {
                if claims_real {
                    matches!(fault, SignatureFault::Invalid)
                } else {
                    matches!(fault, SignatureFault::OtherTranscript { .. })
                }
            }
            _ => false,
        });
    }
}

#[test]
fn a_signature_replayed_from_another_session_is_refused() {
    // A first generation: record party 2's signature frame.
    let recorded: Arc<Mutex<Option<Frame>>> = Arc::default();
    let keep = Arc::clone(&recorded);
    let m = members(&[KeyKind::P256; 3], "replay");
    let keys: Vec<_> = m.keys.iter().map(|k| k.clone_key()).collect();
    let certificates = m.certificates.clone();
    let outcomes = run(
        m,
        4,
        &party_2(move |frame: Frame| {
            let bytes = frame.encode();
            *keep.lock().unwrap() = Some(frame);
            Some(bytes)
        }),
    );
    assert!(outcomes.iter().all(|(_, r)| r.is_ok()));
    let old = recorded.lock().unwrap().clone().unwrap();

    // The same committee generates again (another session, another modulus); party 2 replays
    // its old signature in three ways.
    let same_committee = || {
        let by_id: std::collections::BTreeMap<PartyId, Vec<u8>> =
            (1..=3).zip(certificates.clone()).collect();
        Members {
            signers: keys
                .iter()
                .enumerate()
                .map(|(i, k)| TranscriptSigner::new(i as PartyId + 1, k, by_id.clone()).unwrap())
                .collect(),
            certificates: certificates.clone(),
            pems: Vec::new(),
            keys: keys.iter().map(|k| k.clone_key()).collect(),
        }
    };
    // (a) The old frame as it was: of another session.
    let frame = old.clone();
    let outcomes = run(same_committee(), 5, &party_2(move |_| Some(frame.encode())));
    culprit_named(&outcomes, 2, |e| {
        matches!(e, Error::BadMessage { sender: 2, .. })
    });
    // (b) The old payload in a frame of this session: another transcript.
    let frame = old.clone();
    let outcomes = run(
        same_committee(),
        6,
        &party_2(move |now: Frame| {
            Some(
                Frame {
                    payload: frame.payload.clone(),
                    ..now
                }
                .encode(),
            )
        }),
    );
    culprit_named(&outcomes, 2, |e| {
        matches!(
            e,
            Error::TranscriptSignature {
                party: 2,
                fault: SignatureFault::OtherTranscript { .. }
            }
        )
    });
    // (c) This session's fingerprint with the old signature: it does not verify.
    let (_, _, old_signature) = fields(&old);
    let outcomes = run(
        same_committee(),
        7,
        &party_2(move |now: Frame| {
            let (fingerprint, scheme, _) = fields(&now);
            Some(
                Frame {
                    payload: payload(&fingerprint, &scheme, &old_signature),
                    ..now
                }
                .encode(),
            )
        }),
    );
    culprit_named(&outcomes, 2, |e| {
        matches!(
            e,
            Error::TranscriptSignature {
                party: 2,
                fault: SignatureFault::Invalid
            }
        )
    });
}

#[test]
fn a_member_that_withholds_its_signature_is_named_by_the_others() {
    // It withholds its signature from everyone but echoes: each sees the echo first.
    let m = members(&[KeyKind::P256; 3], "silent");
    let outcomes = run(m, 8, &party_2(|_| None));
    for (id, out) in outcomes.iter().filter(|(id, _)| *id != 2) {
        match out {
            Err(
                e @ Error::TranscriptSignature {
                    party: 2,
                    fault: SignatureFault::Withheld,
                },
            ) => assert!(e.is_verdict(), "{e}"),
            Err(Error::PartyFailed {
                party: 2,
                reason: Failure::WhileSigningTranscript(_),
            }) => {}
            Err(Error::Reported { culprits, .. }) if culprits.contains(&2) => {}
            other => panic!("party {id}: {other:?}"),
        }
    }
    assert!(outcomes.iter().all(|(_, out)| out.is_err()));
}

/// Every party failed, the culprit included; every other one named it.
fn nobody_finished(
    outcomes: &[(PartyId, hourglass_dkg::Result<SignedGeneration>)],
    culprit: PartyId,
    fault: impl Fn(&Error) -> bool,
) {
    culprit_named(outcomes, culprit, fault);
    for (id, out) in outcomes {
        assert!(out.is_err(), "party {id} finished");
    }
}

/// A member that sends its signature to one member only (the lowest) and echoes: the members
/// it skipped name it, and the one that got every signature does not finish alone (it did
/// before the echo round).
#[test]
fn a_member_that_withholds_its_signature_from_some_is_named_and_nobody_finishes() {
    let m = members(&[KeyKind::P256; 4], "withhold");
    let outcomes = run(m, 9, &|inner| {
        if inner.me() == 2 {
            Box::new(Deviant::new(inner, Deviation::WithholdTranscriptSignature))
        } else {
            Box::new(inner)
        }
    });
    nobody_finished(&outcomes, 2, |e| {
        matches!(
            e,
            Error::TranscriptSignature {
                party: 2,
                fault: SignatureFault::Withheld
            }
        ) && e.is_verdict()
    });
    // Party 1 got party 2's signature and every other: it does not finish alone, but stops
    // on another member's word naming party 2 (or on party 2's link, closed as it stops).
    match &outcomes[0] {
        (1, Err(Error::Reported { culprits, .. })) => assert!(culprits.contains(&2)),
        (1, Err(Error::TranscriptSignature { party: 2, .. }))
        | (1, Err(Error::PartyFailed { party: 2, .. })) => {}
        other => panic!("party 1: {other:?}"),
    }
}

/// A member that sends one valid signature to the lowest member and another valid one (signed
/// afresh) to the others: every member accepts the one it got, the echoes show the other one,
/// and everybody stops naming it.
#[test]
fn a_member_that_sends_different_valid_signatures_is_named_and_nobody_finishes() {
    let m = members(&[KeyKind::P256; 4], "equivocate");
    let key = m.signers[1].clone();
    let outcomes = run(m, 10, &move |inner| {
        if inner.me() == 2 {
            Box::new(Deviant::with_signer(
                inner,
                Deviation::EquivocateTranscriptSignature,
                key.clone(),
            ))
        } else {
            Box::new(inner)
        }
    });
    nobody_finished(&outcomes, 2, |e| {
        matches!(
            e,
            Error::TranscriptSignature {
                party: 2,
                fault: SignatureFault::Equivocated { .. }
            }
        ) && e.is_verdict()
    });
    for (id, out) in outcomes.iter().filter(|(id, _)| *id != 2) {
        let text = out
            .as_ref()
            .err()
            .map(ToString::to_string)
            .unwrap_or_default();
        assert!(text.contains("party 2"), "party {id}: {text}");
    }
}

/// Party 1's transport, on which every frame from party 3 from its echo on arrives `hold`
/// late (a slow link: still in order).
struct SlowFrom3 {
    hold: Duration,
    held: VecDeque<(Instant, Event)>,
}

impl Incoming for SlowFrom3 {
    fn next(&mut self, inner: &mut MemoryTransport, deadline: Instant) -> Option<Event> {
        loop {
            let due = self.held.front().map(|(at, _)| *at);
            if due.is_some_and(|at| at <= Instant::now()) {
                return self.held.pop_front().map(|(_, e)| e);
            }
            let until = due.map_or(deadline, |at| at.min(deadline));
            match inner.recv_until(until) {
                Some(event) => {
                    let from_3 = match &event {
                        Event::Frame { from, bytes } => {
                            *from == 3
                                && (!self.held.is_empty()
                                    || Frame::decode(bytes).is_ok_and(|f| {
                                        f.kind == Kind::Signature && f.tag.step != 0
                                    }))
                        }
                        Event::Lost { party, .. } | Event::Rejected { party, .. } => {
                            *party == 3 && !self.held.is_empty()
                        }
                    };
                    if !from_3 {
                        return Some(event);
                    }
                    self.held.push_back((Instant::now() + self.hold, event));
                }
                None if Instant::now() >= deadline => return None,
                None => {}
            }
        }
    }
}

/// The equivocating member's own code finds the second signature in an echo and announces a
/// stop naming itself; a member whose echo showing it is still on its way (party 3's, to party
/// 1, on a slow link) waits for it and names the member on its own evidence (a negative
/// verdict) rather than on the announcement (an error): the echo round hears everyone out.
#[test]
fn an_announced_stop_does_not_cut_off_the_echoes_that_show_the_equivocation() {
    let m = members(&[KeyKind::P256; 3], "equivocate-slow");
    let key = m.signers[1].clone();
    let outcomes = run(m, 12, &move |inner| match inner.me() {
        1 => Box::new(Filtered {
            inner,
            filter: SlowFrom3 {
                hold: Duration::from_millis(800),
                held: VecDeque::new(),
            },
        }),
        2 => Box::new(Deviant::with_signer(
            inner,
            Deviation::EquivocateTranscriptSignature,
            key.clone(),
        )),
        _ => Box::new(inner),
    });
    for (id, out) in outcomes.iter().filter(|(id, _)| *id != 2) {
        match out {
            Err(
                e @ Error::TranscriptSignature {
                    party: 2,
                    fault: SignatureFault::Equivocated { .. },
                },
            ) => assert!(e.is_verdict()),
            other => panic!("party {id}: {other:?}"),
        }
    }
}

/// A malleated copy of an ECDSA signature (`(r, n - s)`, which anyone can make) is the same
/// signature: compared and stored in canonical form, so a member whose signature arrives
/// malleated is not taken for equivocating, and every member writes the same transcript.
#[test]
fn an_ecdsa_signature_and_its_malleated_copy_are_one_signature() {
    let m = members(&[KeyKind::P256; 3], "malleate");
    let outcomes = run(
        m,
        11,
        &party_2(|frame: Frame| {
            let (fingerprint, scheme, signature) = fields(&frame);
            Some(
                Frame {
                    payload: payload(&fingerprint, &scheme, &malleate(&signature)),
                    ..frame
                }
                .encode(),
            )
        }),
    );
    let texts: Vec<String> = outcomes
        .into_iter()
        .map(|(id, r)| {
            r.unwrap_or_else(|e| panic!("party {id}: {e}"))
                .transcript
                .to_json()
        })
        .collect();
    assert!(texts.iter().all(|t| *t == texts[0]));
}

/// `(r, s)` -> `(r, n - s)` for a P-256 DER signature.
fn malleate(der: &[u8]) -> Vec<u8> {
    use hourglass_dkg::Integer;
    let n = Integer::from_str_radix(
        "ffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551",
        16,
    )
    .unwrap();
    let r_len = der[3] as usize;
    let r = &der[4..4 + r_len];
    let s_len = der[5 + r_len] as usize;
    let s = Integer::from_digits(&der[6 + r_len..6 + r_len + s_len], rug::integer::Order::Msf);
    let flipped = Integer::from(&n - &s);
    let mut s_bytes = flipped.to_digits::<u8>(rug::integer::Order::Msf);
    if s_bytes[0] & 0x80 != 0 {
        s_bytes.insert(0, 0);
    }
    let mut body = vec![0x02, r_len as u8];
    body.extend_from_slice(r);
    body.extend_from_slice(&[0x02, s_bytes.len() as u8]);
    body.extend_from_slice(&s_bytes);
    let mut out = vec![0x30, body.len() as u8];
    out.extend_from_slice(&body);
    out
}

/// A member that echoes to one member the digest of a set it does not hold cannot then show
/// that set: the member it lied to asks for it by showing its own (the digests differ) and,
/// getting nothing back, names it with a negative verdict. The members it did not lie to
/// hold the same full set as everyone, and finish or stop naming it.
#[test]
fn a_member_that_echoes_a_digest_it_cannot_show_is_named() {
    let m = members(&[KeyKind::P256; 4], "false-digest");
    let outcomes = run(m, 14, &|inner| {
        if inner.me() == 2 {
            // Its echo (round 1) to party 3 names a digest of no set (zeros).
            Box::new(Rewrite {
                inner,
                step: hourglass_dkg::wire::step::TRANSCRIPT_ECHO,
                only: Some(3),
                rewrite: Box::new(|mut frame: Frame| {
                    let mut r = Reader::new(&frame.payload);
                    let fingerprint = r.bytes().unwrap().to_vec();
                    let mut w = Writer::new();
                    w.bytes(&fingerprint).bytes(&[0u8; 32]);
                    frame.payload = w.finish();
                    Some(frame.encode())
                }),
            })
        } else {
            Box::new(inner)
        }
    });
    let mut fingerprints = Vec::new();
    for (id, out) in &outcomes {
        match (id, out) {
            (
                3,
                Err(
                    e @ Error::TranscriptSignature {
                        party: 2,
                        fault: SignatureFault::UnshownEcho,
                    },
                ),
            ) => assert!(e.is_verdict()),
            (3, other) => panic!("party 3: {other:?}"),
            (_, Ok(generated)) => {
                fingerprints.push(generated.transcript.transcript().fingerprint())
            }
            (2, Err(_)) => {}
            (id, Err(Error::Reported { culprits, .. })) => {
                assert!(culprits.contains(&2), "party {id} named {culprits:?}")
            }
            (id, Err(e)) => panic!("party {id}: {e}"),
        }
    }
    fingerprints.dedup();
    assert!(fingerprints.len() <= 1, "{fingerprints:?}");
}

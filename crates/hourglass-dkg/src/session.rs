//! Rounds of messages among the members of a session, with out-of-order buffering and the
//! failure handling of paper section 3.3.
//!
//! A round is: send one payload to every other member, then wait until one payload from every
//! other member has arrived for the same [`Tag`]. Frames for later rounds (and later epochs)
//! are buffered; frames of earlier epochs are dropped. When a member's link is lost or it does
//! not answer within the timeout, the round ends with [`Halt::Failed`]; [`Session::restart`]
//! then agrees with the survivors on who is gone and starts a new epoch without them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use crate::bounds::FrameBounds;
use crate::transport::{Event, PartyId, Transport};
use crate::wire::{step, Frame, Kind, Reader, Tag, Writer, MAX_REASON};
use crate::{ConfigError, Error, Failure, MessageProblem, ParamError, Result};

pub(crate) mod error;

/// What a round collected when it hears the others out ([`Session::exchange_echoes`]).
#[derive(Debug)]
pub struct Collected {
    /// The payloads that came, by member.
    pub payloads: BTreeMap<PartyId, Vec<u8>>,
    /// The first stop another member announced during the round, if one did (then some
    /// payloads may be missing: those of members that stopped before sending theirs).
    pub reported: Option<Error>,
}

/// Why a round did not complete.
#[derive(Debug)]
pub enum Halt {
    /// Members failed (or one asked for a restart): the survivors restart without them.
    Failed(Vec<PartyId>, Failure),
    /// The run cannot continue (a malformed message, a protocol violation).
    Fatal(Error),
}

impl Halt {
    /// The error of a run that cannot continue without every member (a signature, a reshare):
    /// the first failed party is named with what was observed of it, wrapped by `needed` (what
    /// the run needed it for).
    pub fn into_error(self, needed: fn(Box<Failure>) -> Failure) -> Error {
        match self {
            Halt::Fatal(e) => e,
            Halt::Failed(parties, reason) => Error::PartyFailed {
                party: parties.first().copied().unwrap_or(0),
                reason: needed(Box::new(reason)),
            },
        }
    }
}

impl From<Error> for Halt {
    fn from(e: Error) -> Self {
        Halt::Fatal(e)
    }
}

impl From<hourglass_arith::Error> for Halt {
    fn from(e: hourglass_arith::Error) -> Self {
        Halt::Fatal(e.into())
    }
}

/// Results of a round.
pub type RoundResult<T> = std::result::Result<T, Halt>;

/// A buffered frame's kind, tag and sender.
type BufferKey = (u8, Tag, PartyId);

/// A party's view of the session.
pub struct Session<'t> {
    transport: &'t mut dyn Transport,
    members: Vec<PartyId>,
    session: [u8; 16],
    epoch: u32,
    timeout: Duration,
    buffer: HashMap<BufferKey, ([u8; 16], Vec<u8>)>,
    /// Restart reports: (epoch, phase, sender) -> (reason, parties it observed failing).
    aborts: HashMap<(u32, u8, PartyId), (String, Vec<PartyId>)>,
    lost: BTreeMap<PartyId, Failure>,
    last: Option<Tag>,
    bounds: FrameBounds,
}

fn bad(sender: PartyId, reason: impl Into<MessageProblem>) -> Halt {
    Halt::Fatal(Error::BadMessage {
        sender,
        reason: reason.into(),
    })
}

impl<'t> Session<'t> {
    /// A session among `members` (sorted; must include this party) over `transport`, which
    /// refuses every frame past `bounds` (the TLS transport refuses them before reading them;
    /// the session checks again, whatever the transport).
    pub fn new(
        transport: &'t mut dyn Transport,
        mut members: Vec<PartyId>,
        timeout: Duration,
        bounds: FrameBounds,
    ) -> Self {
        members.sort_unstable();
        members.dedup();
        Session {
            transport,
            members,
            session: [0; 16],
            epoch: 0,
            timeout,
            buffer: HashMap::new(),
            aborts: HashMap::new(),
            lost: BTreeMap::new(),
            last: None,
            bounds,
        }
    }

    /// This party.
    pub fn me(&self) -> PartyId {
        self.transport.me()
    }

    /// The current members, sorted.
    pub fn members(&self) -> &[PartyId] {
        &self.members
    }

    /// This party's 1-based position among the members (its BGW evaluation point).
    pub fn position(&self) -> usize {
        self.members
            .iter()
            .position(|&m| m == self.me())
            .map_or(0, |i| i + 1)
    }

    /// The member at 1-based `position`.
    pub fn member_at(&self, position: usize) -> PartyId {
        self.members[position - 1]
    }

    /// The current epoch.
    pub fn epoch(&self) -> u32 {
        self.epoch
    }

    /// The session identifier (set by [`Session::hello`]).
    pub fn id(&self) -> [u8; 16] {
        self.session
    }

    /// Bytes sent so far by this party.
    pub fn bytes_sent(&self) -> u64 {
        self.transport.stats().bytes_sent
    }

    /// The first round of an epoch: every member sends the digest of its settings, the member
    /// list and a fresh nonce; all must agree, and the session identifier is the hash of it all.
    ///
    /// Each member also sends every other a fresh secret `seeds[peer]` (over the encrypted
    /// link); the seeds received are returned, for the pairwise streams of
    /// [`crate::bgw::Shamir::zero_from_streams`].
    pub fn hello(
        &mut self,
        name: &str,
        settings_digest: &[u8; 32],
        nonce: &[u8; 16],
        seeds: &BTreeMap<PartyId, [u8; 32]>,
    ) -> RoundResult<BTreeMap<PartyId, [u8; 32]>> {
        self.session = [0; 16];
        let mut w = Writer::new();
        w.bytes(settings_digest).bytes(nonce);
        for m in &self.members {
            w.bytes(&m.to_be_bytes());
        }
        let payload = w.finish();
        let tag = Tag {
            epoch: self.epoch,
            round: 0,
            step: 0,
        };
        let others: Vec<PartyId> = self.others();
        let outgoing = others
            .iter()
            .map(|&p| {
                let mut w = Writer::new();
                w.bytes(seeds.get(&p).map_or(&[0u8; 32][..], |s| &s[..]));
                let mut with_seed = payload.clone();
                with_seed.extend_from_slice(&w.finish());
                (p, with_seed)
            })
            .collect();
        let replies = self.exchange_kind(Kind::Hello, tag, outgoing)?;
        let mut received = BTreeMap::new();
        let mut h = Sha256::new();
        h.update(b"hourglass dkg session v1\0");
        h.update((name.len() as u64).to_be_bytes());
        h.update(name.as_bytes());
        h.update(settings_digest);
        h.update(self.epoch.to_be_bytes());
        for &m in &self.members {
            let theirs = if m == self.me() {
                payload.clone()
            } else {
                replies[&m].clone()
            };
            let mut r = Reader::new(&theirs);
            let digest = r.bytes().map_err(|e| bad(m, e))?;
            if digest != settings_digest {
                return Err(Halt::Fatal(
                    ConfigError::SettingsMismatch { party: m }.into(),
                ));
            }
            let their_nonce = r.bytes().map_err(|e| bad(m, e))?;
            let mut listed = Vec::new();
            for _ in 0..self.members.len() {
                let b = r.bytes().map_err(|e| bad(m, e))?;
                let id: [u8; 4] = b.try_into().map_err(|_| bad(m, MessageProblem::MemberId))?;
                listed.push(u32::from_be_bytes(id));
            }
            if m != self.me() {
                let seed: [u8; 32] = r
                    .bytes()
                    .map_err(|e| bad(m, e))?
                    .try_into()
                    .map_err(|_| bad(m, MessageProblem::SeedLength))?;
                received.insert(m, seed);
            }
            r.end().map_err(|e| bad(m, e))?;
            if listed != self.members {
                return Err(Halt::Fatal(
                    ConfigError::MembersMismatch {
                        party: m,
                        theirs: listed,
                        ours: self.members.clone(),
                    }
                    .into(),
                ));
            }
            h.update(m.to_be_bytes());
            h.update(their_nonce);
        }
        let digest = h.finalize();
        self.session.copy_from_slice(&digest[..16]);
        Ok(received)
    }

    fn others(&self) -> Vec<PartyId> {
        let me = self.me();
        self.members.iter().copied().filter(|&m| m != me).collect()
    }

    /// Sends `outgoing[i].1` to `outgoing[i].0` for step `round/step` of this epoch and collects
    /// one payload from every other member.
    pub fn exchange(
        &mut self,
        round: u64,
        step: u16,
        outgoing: Vec<(PartyId, Vec<u8>)>,
    ) -> RoundResult<BTreeMap<PartyId, Vec<u8>>> {
        let tag = Tag {
            epoch: self.epoch,
            round,
            step,
        };
        self.exchange_kind(Kind::Data, tag, outgoing)
    }

    /// Sends the same payload to every other member and collects theirs.
    pub fn broadcast(
        &mut self,
        round: u64,
        step: u16,
        payload: Vec<u8>,
    ) -> RoundResult<BTreeMap<PartyId, Vec<u8>>> {
        let tag = Tag {
            epoch: self.epoch,
            round,
            step,
        };
        Ok(self
            .collect(Kind::Data, tag, Outgoing::Same(payload), false)?
            .payloads)
    }

    /// The round after a successful generation: sends `payload` (this party's signature of
    /// the transcript) to every other member as a [`Kind::Signature`] frame of this session and
    /// epoch, and collects theirs. A frame of another session is refused, naming its sender;
    /// so is a member whose echo ([`Self::exchange_echoes`]) arrives without its signature
    /// before it ([`MessageProblem::Skipped`]: links deliver in order, so it withheld it).
    pub fn exchange_signatures(
        &mut self,
        payload: Vec<u8>,
    ) -> RoundResult<BTreeMap<PartyId, Vec<u8>>> {
        Ok(self
            .exchange_signature_frames(0, step::HELLO, Outgoing::Same(payload))?
            .payloads)
    }

    /// The round after the signatures: sends `payload` (every member's signature as this
    /// party holds them) to every other member as a [`Kind::Signature`] frame of round 1,
    /// step [`step::TRANSCRIPT_ECHO`], and collects theirs.
    ///
    /// A stop another member announces in this round does not end it at once: every member
    /// sends its echo before it can find anything wrong in this round, and a link delivers in
    /// order, so the echoes of the members still to be heard from are on their way (a member
    /// that announces a stop, or whose link is lost, before its echo has none to send). They
    /// are collected, up to the round's timeout, and returned with the first announcement, so
    /// that this party judges by the evidence it holds rather than another's word (a member
    /// that equivocated and names itself would otherwise leave the honest members with only
    /// its announcement).
    pub fn exchange_echoes(&mut self, payload: Vec<u8>) -> RoundResult<Collected> {
        self.exchange_signature_frames(1, step::TRANSCRIPT_ECHO, Outgoing::Same(payload))
    }

    /// The round after the echoes: sends each other member its payload in `outgoing` (this
    /// party's full set of signatures, or nothing) as a [`Kind::Signature`] frame of round 2,
    /// step [`step::TRANSCRIPT_SETS`], and collects theirs, hearing every member out after an
    /// announced stop as [`Self::exchange_echoes`] does (the sets are the evidence).
    pub fn exchange_sets(&mut self, outgoing: Vec<(PartyId, Vec<u8>)>) -> RoundResult<Collected> {
        self.exchange_signature_frames(2, step::TRANSCRIPT_SETS, Outgoing::Each(outgoing))
    }

    fn exchange_signature_frames(
        &mut self,
        round: u64,
        step: u16,
        outgoing: Outgoing,
    ) -> RoundResult<Collected> {
        let tag = Tag {
            epoch: self.epoch,
            round,
            step,
        };
        // Only the echo and set rounds hear the others out after an announcement (see above).
        self.collect(Kind::Signature, tag, outgoing, step != step::HELLO)
    }

    fn exchange_kind(
        &mut self,
        kind: Kind,
        tag: Tag,
        outgoing: Vec<(PartyId, Vec<u8>)>,
    ) -> RoundResult<BTreeMap<PartyId, Vec<u8>>> {
        Ok(self
            .collect(kind, tag, Outgoing::Each(outgoing), false)?
            .payloads)
    }

    /// Sends `outgoing` and collects one frame of `kind` and `tag` from every other member.
    /// With `hear_out`, a stop another member announces is kept rather than returned at once,
    /// and the round goes on until every other member has answered, announced a stop or lost
    /// its link (or the timeout): what came is returned with the first announcement.
    fn collect(
        &mut self,
        kind: Kind,
        tag: Tag,
        outgoing: Outgoing,
        hear_out: bool,
    ) -> RoundResult<Collected> {
        if let Some(last) = self.last {
            if kind == Kind::Data && tag <= last {
                return Err(Halt::Fatal(ParamError::RoundOrder { tag, last }.into()));
            }
        }
        let frame = |payload| {
            Frame {
                kind,
                session: self.session,
                tag,
                sender: self.me(),
                payload,
            }
            .encode()
        };
        let sent = match outgoing {
            Outgoing::Each(outgoing) => outgoing.into_iter().try_for_each(|(to, payload)| {
                self.transport.send(to, frame(payload)).map_err(|e| (to, e))
            }),
            Outgoing::Same(payload) => {
                let others = self.others();
                self.transport
                    .send_to_all(&others, frame(payload))
                    .map_err(|e| (others.first().copied().unwrap_or_default(), e))
            }
        };
        if let Err((to, e)) = sent {
            return Err(match e {
                Error::PartyFailed { party, reason } => Halt::Failed(vec![party], reason),
                other => Halt::Failed(vec![to], Failure::Send(std::sync::Arc::new(other))),
            });
        }
        let mut got = BTreeMap::new();
        // With `hear_out`: the first stop announced, and the members that will send nothing
        // more (they announced a stop or their link is lost).
        let mut reported: Option<Error> = None;
        let mut done = BTreeSet::new();
        let deadline = Instant::now() + self.timeout;
        let others = self.others();
        loop {
            for &m in &others {
                if got.contains_key(&m) {
                    if self.buffer.contains_key(&(kind as u8, tag, m)) {
                        return Err(bad(m, MessageProblem::Duplicate { tag }));
                    }
                    continue;
                }
                if let Some((session, payload)) = self.buffer.remove(&(kind as u8, tag, m)) {
                    if kind != Kind::Hello && session != self.session {
                        return Err(bad(m, MessageProblem::OtherSession));
                    }
                    got.insert(m, payload);
                }
            }
            if reported.is_some() {
                done.extend(
                    others
                        .iter()
                        .filter(|m| !got.contains_key(*m) && self.lost.contains_key(*m)),
                );
                if others
                    .iter()
                    .all(|m| got.contains_key(m) || done.contains(m))
                {
                    return Ok(Collected {
                        payloads: got,
                        reported,
                    });
                }
            }
            if got.len() == others.len() {
                if kind == Kind::Data {
                    self.last = Some(tag);
                }
                return Ok(Collected {
                    payloads: got,
                    reported,
                });
            }
            if kind == Kind::Signature {
                // A later signature-round frame from a member whose frame for this step has
                // not come: the link delivers in order, so the member skipped this one.
                if let Some(&skipped) = others.iter().find(|&&m| {
                    !got.contains_key(&m)
                        && self
                            .buffer
                            .keys()
                            .any(|&(k, t, from)| k == kind as u8 && from == m && t > tag)
                }) {
                    return Err(bad(skipped, MessageProblem::Skipped { tag }));
                }
            }
            // Once a stop is held, a lost link only means nothing more comes from that member
            // (counted in `done` above): the announcement, not the link, is what is returned.
            if let Some(&failed) = others
                .iter()
                .find(|m| reported.is_none() && !got.contains_key(*m) && self.lost.contains_key(*m))
            {
                return Err(Halt::Failed(vec![failed], self.lost[&failed].clone()));
            }
            if self.aborts.keys().any(|&(e, _, _)| e == self.epoch) {
                return Err(Halt::Failed(Vec::new(), Failure::RestartRequested));
            }
            match self.transport.recv_until(deadline) {
                Some(event) => match self.absorb(event) {
                    Err(Halt::Fatal(e @ Error::Reported { by, .. })) if hear_out => {
                        done.insert(by);
                        reported.get_or_insert(e);
                    }
                    other => other?,
                },
                None if reported.is_some() => {
                    return Ok(Collected {
                        payloads: got,
                        reported,
                    })
                }
                None => {
                    let missing: Vec<PartyId> = others
                        .iter()
                        .copied()
                        .filter(|m| !got.contains_key(m))
                        .collect();
                    return Err(Halt::Failed(
                        missing,
                        Failure::NoAnswer {
                            timeout_ms: self.timeout.as_millis(),
                        },
                    ));
                }
            }
        }
    }

    /// Files an event: buffers frames, records losses and restart requests.
    fn absorb(&mut self, event: Event) -> RoundResult<()> {
        match event {
            Event::Lost { party, reason } => {
                self.lost.entry(party).or_insert(Failure::Link(reason));
                Ok(())
            }
            Event::Rejected { party, reason } => Err(bad(party, reason)),
            Event::Frame { from, bytes } => {
                let frame = Frame::decode(&bytes).map_err(|e| bad(from, e))?;
                self.bounds
                    .check(frame.kind, frame.tag.step, frame.payload.len())
                    .map_err(|e| bad(from, e))?;
                if frame.sender != from {
                    return Err(bad(
                        from,
                        MessageProblem::Impersonation {
                            claimed: frame.sender,
                        },
                    ));
                }
                if !self.members.contains(&from) {
                    // A party excluded earlier: its late frames are dropped.
                    return Ok(());
                }
                if frame.tag.epoch < self.epoch {
                    return Ok(());
                }
                match frame.kind {
                    Kind::Abort | Kind::Fatal => {
                        let mut r = Reader::new(&frame.payload);
                        let reason = r.bytes().map_err(|e| bad(from, e))?;
                        if reason.len() > MAX_REASON {
                            return Err(bad(from, MessageProblem::AbortReasonTooLong));
                        }
                        let reason = String::from_utf8_lossy(reason).into_owned();
                        let mut named = Vec::new();
                        while let Ok(b) = r.bytes() {
                            let id: [u8; 4] = b
                                .try_into()
                                .map_err(|_| bad(from, MessageProblem::AbortPartyId))?;
                            named.push(u32::from_be_bytes(id));
                            if named.len() > self.members.len() {
                                return Err(bad(from, MessageProblem::AbortTooManyParties));
                            }
                        }
                        r.end().map_err(|e| bad(from, e))?;
                        if frame.kind == Kind::Fatal {
                            return Err(Halt::Fatal(Error::Reported {
                                by: from,
                                culprits: named,
                                reason,
                            }));
                        }
                        let phase = u8::from(frame.tag.step == step::CONFIRM);
                        self.aborts
                            .insert((frame.tag.epoch, phase, from), (reason, named));
                        Ok(())
                    }
                    Kind::Data | Kind::Hello | Kind::Signature => {
                        if frame.kind == Kind::Data
                            && frame.tag.epoch == self.epoch
                            && self.last.is_some_and(|l| frame.tag <= l)
                        {
                            return Err(bad(
                                from,
                                MessageProblem::FinishedRound { tag: frame.tag },
                            ));
                        }
                        let key = (frame.kind as u8, frame.tag, from);
                        if self.buffer.contains_key(&key) {
                            return Err(bad(from, MessageProblem::Duplicate { tag: frame.tag }));
                        }
                        // A legitimate peer is at most a step ahead: a few frames each.
                        let ahead = self.buffer.keys().filter(|k| k.2 == from).count();
                        if ahead >= MAX_AHEAD_PER_PEER || self.buffer.len() > 4096 {
                            return Err(bad(from, MessageProblem::TooManyAhead));
                        }
                        self.buffer.insert(key, (frame.session, frame.payload));
                        Ok(())
                    }
                }
            }
        }
    }

    /// Agrees with the survivors on who failed and starts a new epoch without them.
    ///
    /// `failed` and `reason` are what this party observed. Every survivor broadcasts what *it*
    /// observed (its own timeouts and lost links); a party is removed only if every survivor
    /// observed its failure. A survivor that names a party this one sees alive is a false
    /// accuser ([`Error::FalseAccusation`]); a party this one saw fail that another survivor still
    /// reaches is a dispute ([`Error::Disputed`]): either way the generation stops, naming them,
    /// rather than remove anyone on another party's word. Returns the removed parties with what
    /// was observed of each; fails if fewer than `minimum` would be left (`2t + 1` for the fixed
    /// threshold `t`).
    pub fn restart(
        &mut self,
        failed: &[PartyId],
        reason: &Failure,
        minimum: usize,
        threshold: usize,
    ) -> Result<Vec<(PartyId, Failure)>> {
        let me = self.me();
        let members: BTreeSet<PartyId> = self.members.iter().copied().collect();
        // A lost link or a failed send is evidence; a round's timeout is only suspicion: a
        // member still computing (slower, or started later, on a loaded machine) looks the
        // same as a silent one. Suspects are asked like everyone else in phase 1 below, and
        // only those that stay silent for a whole timeout more are observed failing. (Counting
        // them failed at once let an honest party name a slow honest one, which the others
        // rightly took for a false accusation, and the generation stopped.)
        let mut observed: BTreeSet<PartyId> = if matches!(reason, Failure::NoAnswer { .. }) {
            BTreeSet::new()
        } else {
            failed.iter().copied().collect()
        };
        observed.extend(self.lost.keys().copied());
        observed.retain(|p| members.contains(p) && *p != me);
        // Phase 1: say what this party observed, and hear from every member it did not see
        // fail; one that stays silent now is observed failing too.
        let mut unreachable = BTreeSet::new();
        self.report_observed(&members, &observed, reason, step::ABORT, &mut unreachable);
        observed.extend(unreachable);
        self.await_reports(&members, &mut observed, 0)?;
        // Phase 2: every survivor says what it finally observed; they must all agree.
        let mut unreachable = BTreeSet::new();
        self.report_observed(&members, &observed, reason, step::CONFIRM, &mut unreachable);
        observed.extend(unreachable);
        self.await_reports(&members, &mut observed, 1)?;
        let survivors: Vec<PartyId> = members
            .iter()
            .copied()
            .filter(|&m| m != me && !observed.contains(&m))
            .collect();
        for &s in &survivors {
            let Some((_, theirs)) = self.aborts.get(&(self.epoch, 1, s)) else {
                continue;
            };
            let theirs: BTreeSet<PartyId> = theirs.iter().copied().collect();
            let accused: Vec<PartyId> = theirs
                .iter()
                .copied()
                .filter(|p| !observed.contains(p))
                .collect();
            if !accused.is_empty() {
                let err = Error::FalseAccusation {
                    accuser: s,
                    accused,
                };
                self.announce_fatal(&[s], &err.to_string());
                return Err(err);
            }
            if let Some(&party) = observed.iter().find(|p| !theirs.contains(p)) {
                // A party that just left may have announced why (another survivor stopped the
                // generation, and this party saw its link close first): hear it out.
                self.drain_announcements(FATAL_LINGER * 2)?;
                let err = Error::Disputed {
                    party,
                    witness: s,
                    reason: self.why(party, failed, reason),
                };
                self.announce_fatal(&[party], &err.to_string());
                return Err(err);
            }
        }
        let removed: Vec<(PartyId, Failure)> = observed
            .iter()
            .map(|&party| (party, self.why(party, failed, reason)))
            .collect();
        self.members.retain(|m| !observed.contains(m));
        self.aborts.retain(|&(e, _, _), _| e > self.epoch);
        self.buffer.retain(|&(_, tag, _), _| tag.epoch > self.epoch);
        self.epoch += 1;
        self.last = None;
        if self.members.len() < minimum {
            return Err(Error::TooFewParties {
                left: self.members.len(),
                minimum,
                threshold,
            });
        }
        Ok(removed)
    }

    /// Sends this party's observed failures (restart phase `step`) to every member not in
    /// `observed`; members whose link is gone are added to `unreachable`.
    fn report_observed(
        &mut self,
        members: &BTreeSet<PartyId>,
        observed: &BTreeSet<PartyId>,
        reason: &Failure,
        step: u16,
        unreachable: &mut BTreeSet<PartyId>,
    ) {
        let me = self.me();
        let payload = reason_and_parties(&reason.to_string(), observed.iter());
        let tag = Tag {
            epoch: self.epoch,
            round: u64::MAX,
            step,
        };
        for &m in members
            .iter()
            .filter(|m| **m != me && !observed.contains(m))
        {
            let frame = Frame {
                kind: Kind::Abort,
                session: self.session,
                tag,
                sender: me,
                payload: payload.clone(),
            };
            if self.transport.send(m, frame.encode()).is_err() {
                unreachable.insert(m);
            }
        }
    }

    /// Waits (up to the timeout) for the phase-`phase` report of every member not in
    /// `observed`; those that do not answer, or whose links are lost, join `observed`.
    fn await_reports(
        &mut self,
        members: &BTreeSet<PartyId>,
        observed: &mut BTreeSet<PartyId>,
        phase: u8,
    ) -> Result<()> {
        let me = self.me();
        // Phase 2 allows for the others' phase 1, which may still be waiting on a silent party.
        let deadline = Instant::now() + self.timeout * (u32::from(phase) + 1);
        loop {
            observed.extend(self.lost.keys().copied().filter(|p| members.contains(p)));
            observed.remove(&me);
            let waiting: Vec<PartyId> = members
                .iter()
                .copied()
                .filter(|&m| m != me && !observed.contains(&m))
                .filter(|&m| !self.aborts.contains_key(&(self.epoch, phase, m)))
                .collect();
            if waiting.is_empty() {
                return Ok(());
            }
            match self.transport.recv_until(deadline) {
                Some(event) => {
                    if let Err(Halt::Fatal(e)) = self.absorb(event) {
                        return Err(e);
                    }
                }
                None => {
                    observed.extend(waiting);
                    return Ok(());
                }
            }
        }
    }

    /// `e`, or, when `e` is a party's failure (a closed link, a failed send), the stop another
    /// party announced just before: a party that stops tells the others why and then closes
    /// its links, so its reason, when it arrives within a moment, says more than the link.
    pub fn explain(&mut self, e: Error) -> Error {
        if !matches!(e, Error::PartyFailed { .. }) {
            return e;
        }
        match self.drain_announcements(FATAL_LINGER * 2) {
            Err(reported @ Error::Reported { .. }) => reported,
            _ => e,
        }
    }

    /// Takes events until `wait` has passed, returning the first stop another party announces.
    fn drain_announcements(&mut self, wait: Duration) -> Result<()> {
        let deadline = Instant::now() + wait;
        while let Some(event) = self.transport.recv_until(deadline) {
            if let Err(Halt::Fatal(e)) = self.absorb(event) {
                return Err(e);
            }
        }
        Ok(())
    }

    /// Tells every other member that this party stops the generation because of `culprits`
    /// (so that they stop too, instead of taking this party's departure for its failure), and
    /// gives the frames a moment to leave.
    pub fn announce_fatal(&mut self, culprits: &[PartyId], reason: &str) {
        let me = self.me();
        let payload = reason_and_parties(reason, culprits.iter());
        let tag = Tag {
            epoch: self.epoch,
            round: u64::MAX,
            step: step::FATAL,
        };
        for &m in self.members.iter().filter(|m| **m != me) {
            let frame = Frame {
                kind: Kind::Fatal,
                session: self.session,
                tag,
                sender: me,
                payload: payload.clone(),
            };
            let _ = self.transport.send(m, frame.encode());
        }
        // The writers are asynchronous: let the frames go before the links close.
        std::thread::sleep(FATAL_LINGER);
    }

    /// What is known of why `party` is removed.
    fn why(&self, party: PartyId, failed: &[PartyId], reason: &Failure) -> Failure {
        if failed.contains(&party) {
            return reason.clone();
        }
        if let Some(lost) = self.lost.get(&party) {
            return lost.clone();
        }
        Failure::NoAnswerDuringRestart
    }
}

/// The payload of abort and fatal frames: the reason (cut to [`MAX_REASON`] bytes), then each
/// party's id.
fn reason_and_parties<'a>(reason: &str, parties: impl Iterator<Item = &'a PartyId>) -> Vec<u8> {
    let mut w = Writer::new();
    let mut short = reason.to_string();
    while short.len() > MAX_REASON {
        short.pop();
    }
    w.bytes(short.as_bytes());
    for p in parties {
        w.bytes(&p.to_be_bytes());
    }
    w.finish()
}

/// Most frames one peer may have buffered ahead of the protocol.
const MAX_AHEAD_PER_PEER: usize = 16;

/// What a round sends.
enum Outgoing {
    /// A payload for each member named.
    Each(Vec<(PartyId, Vec<u8>)>),
    /// The same payload for every other member ([`Transport::send_to_all`]).
    Same(Vec<u8>),
}

/// How long a stopping party waits for its fatal frames to leave.
const FATAL_LINGER: Duration = Duration::from_millis(200);

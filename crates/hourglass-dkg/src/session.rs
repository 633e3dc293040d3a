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

use crate::transport::{Event, PartyId, Transport};
use crate::wire::{Frame, Kind, Reader, Tag, Writer};
use crate::{Error, Result};

/// Why a round did not complete.
#[derive(Debug)]
pub enum Halt {
    /// Members failed (or one asked for a restart): the survivors restart without them.
    Failed(Vec<PartyId>, String),
    /// The run cannot continue (a malformed message, a protocol violation).
    Fatal(Error),
}

impl From<Error> for Halt {
    fn from(e: Error) -> Self {
        Halt::Fatal(e)
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
    aborts: HashMap<(u32, PartyId), (String, Vec<PartyId>)>,
    lost: BTreeMap<PartyId, String>,
    last: Option<Tag>,
}

fn bad(sender: PartyId, reason: impl Into<String>) -> Halt {
    Halt::Fatal(Error::BadMessage {
        sender,
        reason: reason.into(),
    })
}

impl<'t> Session<'t> {
    /// A session among `members` (sorted; must include this party) over `transport`.
    pub fn new(
        transport: &'t mut dyn Transport,
        mut members: Vec<PartyId>,
        timeout: Duration,
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
                return Err(Halt::Fatal(Error::Config(format!(
                    "party {m} runs with different generation settings (bits, batch, sieve bound, \
                     rounds, minimum or timeout); every party needs the same [generation] table"
                ))));
            }
            let their_nonce = r.bytes().map_err(|e| bad(m, e))?;
            let mut listed = Vec::new();
            for _ in 0..self.members.len() {
                let b = r.bytes().map_err(|e| bad(m, e))?;
                let id: [u8; 4] = b.try_into().map_err(|_| bad(m, "bad member id"))?;
                listed.push(u32::from_be_bytes(id));
            }
            if m != self.me() {
                let seed: [u8; 32] = r
                    .bytes()
                    .map_err(|e| bad(m, e))?
                    .try_into()
                    .map_err(|_| bad(m, "pairwise seed must be 32 bytes"))?;
                received.insert(m, seed);
            }
            r.end().map_err(|e| bad(m, e))?;
            if listed != self.members {
                return Err(Halt::Fatal(Error::Config(format!(
                    "party {m} expects members {listed:?}, this party {:?}",
                    self.members
                ))));
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
        let outgoing = self
            .others()
            .into_iter()
            .map(|p| (p, payload.clone()))
            .collect();
        self.exchange(round, step, outgoing)
    }

    fn exchange_kind(
        &mut self,
        kind: Kind,
        tag: Tag,
        outgoing: Vec<(PartyId, Vec<u8>)>,
    ) -> RoundResult<BTreeMap<PartyId, Vec<u8>>> {
        if let Some(last) = self.last {
            if kind == Kind::Data && tag <= last {
                return Err(Halt::Fatal(Error::InvalidParameters(format!(
                    "internal: round {tag:?} repeats or precedes {last:?}"
                ))));
            }
        }
        for (to, payload) in outgoing {
            let frame = Frame {
                kind,
                session: self.session,
                tag,
                sender: self.me(),
                payload,
            };
            if let Err(e) = self.transport.send(to, frame.encode()) {
                let reason = match e {
                    Error::PartyFailed { reason, .. } => reason,
                    other => other.to_string(),
                };
                return Err(Halt::Failed(vec![to], reason));
            }
        }
        let mut got = BTreeMap::new();
        let deadline = Instant::now() + self.timeout;
        let others = self.others();
        loop {
            for &m in &others {
                if got.contains_key(&m) {
                    if self.buffer.contains_key(&(kind as u8, tag, m)) {
                        return Err(bad(m, format!("duplicate message for {tag:?}")));
                    }
                    continue;
                }
                if let Some((session, payload)) = self.buffer.remove(&(kind as u8, tag, m)) {
                    if kind == Kind::Data && session != self.session {
                        return Err(bad(m, "message belongs to another session"));
                    }
                    got.insert(m, payload);
                }
            }
            if got.len() == others.len() {
                if kind == Kind::Data {
                    self.last = Some(tag);
                }
                return Ok(got);
            }
            if let Some(&failed) = others
                .iter()
                .find(|m| !got.contains_key(*m) && self.lost.contains_key(*m))
            {
                return Err(Halt::Failed(vec![failed], self.lost[&failed].clone()));
            }
            if self.aborts.keys().any(|&(e, _)| e == self.epoch) {
                return Err(Halt::Failed(
                    Vec::new(),
                    "a party asked for a restart".into(),
                ));
            }
            match self.transport.recv_until(deadline) {
                Some(event) => self.absorb(event)?,
                None => {
                    let missing: Vec<PartyId> = others
                        .iter()
                        .copied()
                        .filter(|m| !got.contains_key(m))
                        .collect();
                    return Err(Halt::Failed(
                        missing,
                        format!("no answer within {} ms", self.timeout.as_millis()),
                    ));
                }
            }
        }
    }

    /// Files an event: buffers frames, records losses and restart requests.
    fn absorb(&mut self, event: Event) -> RoundResult<()> {
        match event {
            Event::Lost { party, reason } => {
                self.lost.entry(party).or_insert(reason);
                Ok(())
            }
            Event::Rejected { party, reason } => Err(bad(party, reason)),
            Event::Frame { from, bytes } => {
                let frame = Frame::decode(&bytes).map_err(|e| bad(from, e))?;
                if frame.sender != from {
                    return Err(bad(
                        from,
                        format!(
                            "claims to be party {} on an authenticated link",
                            frame.sender
                        ),
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
                    Kind::Abort => {
                        let mut r = Reader::new(&frame.payload);
                        let reason = r.bytes().map_err(|e| bad(from, e))?;
                        if reason.len() > MAX_REASON {
                            return Err(bad(from, "abort reason too long"));
                        }
                        let reason = String::from_utf8_lossy(reason).into_owned();
                        let mut dead = Vec::new();
                        while let Ok(b) = r.bytes() {
                            let id: [u8; 4] = b
                                .try_into()
                                .map_err(|_| bad(from, "bad party id in abort"))?;
                            dead.push(u32::from_be_bytes(id));
                        }
                        r.end().map_err(|e| bad(from, e))?;
                        self.aborts.insert((frame.tag.epoch, from), (reason, dead));
                        Ok(())
                    }
                    Kind::Data | Kind::Hello => {
                        if frame.kind == Kind::Data
                            && frame.tag.epoch == self.epoch
                            && self.last.is_some_and(|l| frame.tag <= l)
                        {
                            return Err(bad(
                                from,
                                format!("unexpected message for finished round {:?}", frame.tag),
                            ));
                        }
                        let key = (frame.kind as u8, frame.tag, from);
                        if self.buffer.contains_key(&key) {
                            return Err(bad(
                                from,
                                format!("duplicate message for {:?}", frame.tag),
                            ));
                        }
                        if self.buffer.len() > 4096 {
                            return Err(bad(from, "too many messages ahead of the protocol"));
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
    /// `failed` and `reason` are what this party observed. Returns the parties removed, each
    /// with what was observed of it (by this party, or by the survivor that reported it). Fails
    /// if this party was excluded by the others or too few parties are left.
    pub fn restart(
        &mut self,
        failed: &[PartyId],
        reason: &str,
        minimum: usize,
    ) -> Result<Vec<(PartyId, String)>> {
        let me = self.me();
        let mut dead: BTreeSet<PartyId> = failed.iter().copied().collect();
        dead.extend(
            self.lost
                .keys()
                .copied()
                .filter(|p| self.members.contains(p)),
        );
        dead.remove(&me);
        let mut w = Writer::new();
        let mut short = reason.to_string();
        while short.len() > MAX_REASON {
            short.pop();
        }
        w.bytes(short.as_bytes());
        for d in &dead {
            w.bytes(&d.to_be_bytes());
        }
        let payload = w.finish();
        let tag = Tag {
            epoch: self.epoch,
            round: u64::MAX,
            step: u16::MAX,
        };
        let notify: Vec<PartyId> = self
            .members
            .iter()
            .copied()
            .filter(|&m| m != me && !dead.contains(&m))
            .collect();
        for m in notify {
            let frame = Frame {
                kind: Kind::Abort,
                session: self.session,
                tag,
                sender: me,
                payload: payload.clone(),
            };
            if self.transport.send(m, frame.encode()).is_err() {
                dead.insert(m);
            }
        }
        let deadline = Instant::now() + self.timeout;
        loop {
            for ((epoch, from), (_, theirs)) in &self.aborts {
                if *epoch == self.epoch && !dead.contains(from) {
                    dead.extend(theirs.iter().copied());
                }
            }
            dead.extend(
                self.lost
                    .keys()
                    .copied()
                    .filter(|p| self.members.contains(p)),
            );
            if dead.contains(&me) {
                return Err(Error::PartyFailed {
                    party: me,
                    reason: "the other parties excluded this party".into(),
                });
            }
            let waiting: Vec<PartyId> = self
                .members
                .iter()
                .copied()
                .filter(|&m| m != me && !dead.contains(&m))
                .filter(|&m| !self.aborts.contains_key(&(self.epoch, m)))
                .collect();
            if waiting.is_empty() {
                break;
            }
            match self.transport.recv_until(deadline) {
                Some(event) => {
                    if let Err(Halt::Fatal(e)) = self.absorb(event) {
                        return Err(e);
                    }
                }
                None => {
                    dead.extend(waiting);
                    break;
                }
            }
        }
        let removed: Vec<(PartyId, String)> = dead
            .into_iter()
            .map(|party| (party, self.why(party, failed, reason)))
            .collect();
        self.members
            .retain(|m| !removed.iter().any(|(r, _)| r == m));
        self.aborts.retain(|&(e, _), _| e > self.epoch);
        self.buffer.retain(|&(_, tag, _), _| tag.epoch > self.epoch);
        self.epoch += 1;
        self.last = None;
        if self.members.len() < minimum {
            return Err(Error::TooFewParties {
                left: self.members.len(),
                minimum,
            });
        }
        Ok(removed)
    }

    /// What is known of why `party` is removed.
    fn why(&self, party: PartyId, failed: &[PartyId], reason: &str) -> String {
        if failed.contains(&party) {
            return reason.to_string();
        }
        if let Some(lost) = self.lost.get(&party) {
            return lost.clone();
        }
        self.aborts
            .iter()
            .filter(|((epoch, _), (_, dead))| *epoch == self.epoch && dead.contains(&party))
            .min_by_key(|((_, from), _)| *from)
            .map_or_else(
                || "no answer during the restart".to_string(),
                |((_, from), (theirs, _))| format!("{theirs} (reported by party {from})"),
            )
    }
}

/// Longest failure description carried in an abort frame, in bytes.
const MAX_REASON: usize = 512;

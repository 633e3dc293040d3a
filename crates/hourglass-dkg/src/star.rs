//! A star topology: every party holds one link, to a relay that forwards frames and holds no
//! secret, instead of a link to every other party (`k - 1` links each, `k (k - 1) / 2` in all).
//!
//! [`StarTransport`] is a [`Transport`] over a transport whose only peer that matters is the
//! relay; [`relay`] is the relay's loop. Between two members every frame is sealed end to end:
//!
//! - **Keys.** Each member draws a P-256 key for the session and announces its public half
//!   through the relay, signed with the key of its pinned certificate (the key that signs
//!   transcripts, in a context of its own: [`ANNOUNCEMENT_CONTEXT`]) over the session's
//!   context, its id and the point. Each pair of members derives two keys (one per direction)
//!   from their Diffie-Hellman secret with HKDF-SHA256, salted with the session's context.
//! - **Frames.** ChaCha20-Poly1305 under the direction's key, the nonce the direction's frame
//!   count: the receiver accepts only the next frame of each sender, so a frame altered,
//!   forged, replayed, reordered, or one before it dropped, ends that link
//!   ([`LinkLoss::Unauthentic`]).
//! - **Broadcasts** (the same frame for every other member, [`Transport::send_to_all`]) go to
//!   the relay once: the frame sealed under a key of its own (fresh for each broadcast,
//!   derived from a secret the member drew when it joined and the broadcast's number), and
//!   for each recipient that key and the SHA-256 of the sealed frame, sealed as the next frame
//!   of the pair's direction (80 bytes). The relay hands each recipient its 80 bytes and the
//!   sealed frame. A recipient opens its 80 bytes in order like any frame of that sender,
//!   checks the digest and opens the frame: the relay can no more read, alter, replay or
//!   reorder a broadcast than a frame, and a member that learns a broadcast's key (every
//!   recipient does) cannot make another member accept a different frame under it (the
//!   digest is sealed under the pair's key).
//!
//! What the relay can and cannot do. It learns who sends how many bytes to whom, and when,
//! and the members' public keys; it cannot read a frame, alter one, forge one, replay or
//! reorder frames unseen, nor put its own key in a member's place (the announcement is signed
//! by the member's pinned key). It can stall: delay or drop frames, cut a member off or say a
//! member's connection is gone ([`LinkLoss::AtRelay`]); to the others that looks like that
//! member failing, as a network cutting its links would, and the generation's failure rules
//! treat it so (a member is removed only when every survivor saw it fail, and a generation
//! never continues below its threshold). A relay that replays a member's announcement from
//! an earlier session with the same context makes the others seal to a key whose private half
//! that member has erased: it stalls, and learns nothing unless that old private key leaked.
//!
//! - **Budgets.** A member's link to the relay may hold `k - 1` times a mesh link's pending
//!   frames, and each member its own share of that, as the relay's header names it
//!   ([`FrameBounds::stamped`]): a member that floods another runs past only its own share,
//!   its later frames are dropped, and the link and the other members go on. The header is the
//!   relay's word until a frame is opened: the member is refused as flooding (the verdict a
//!   mesh link gives) only if every message stamped with its id, up to the one past the share,
//!   opened as its frame; else it is seen failing ([`LinkLoss::FloodedThroughRelay`]), which
//!   the relay could have caused.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use hourglass_arith::entropy::EntropySource;
use p256::elliptic_curve::sec1::ToEncodedPoint;
use p256::{PublicKey, SecretKey};
use ring::aead::{Aad, LessSafeKey, Nonce, UnboundKey, CHACHA20_POLY1305};
use ring::hkdf;
use sha2::{Digest, Sha256};

use crate::bounds::{FrameBounds, ANNOUNCEMENT_BYTES, BROADCAST_PER_RECIPIENT, RELAY_OVERHEAD};
use crate::cluster::{ClusterConfig, RELAY_ID};
use crate::tls::{TlsOptions, TlsTransport};
use crate::transcript::{verify_signature, SigningScheme, TranscriptSignature, TranscriptSigner};
use crate::transport::{Event, PartyId, TrafficStats, Transport};
use crate::wire::MAX_SIGNATURE_BYTES;
use crate::{Error, LinkLoss, LinkRejection, Result};

/// What a member's key announcement signs: this context, then SHA-256 of the session's
/// context, the member's id and its public point ([`TranscriptSigner`]'s key signs it, so it
/// must never be taken for a transcript signature).
pub const ANNOUNCEMENT_CONTEXT: &[u8] = b"hourglass-dkg-star-key-v2\0";

/// The HKDF salt's prefix (followed by the session's context).
const KEY_SALT: &[u8] = b"hourglass-dkg-star-frames-v1\0";

/// The HKDF salt of a member's broadcast keys.
const BROADCAST_SALT: &[u8] = b"hourglass-dkg-star-broadcasts-v1\0";

/// Message kinds on a link to the relay. From a member: the kind, the recipient (0 for every
/// member, announcements only), the body. From the relay: the kind, the sender, the body.
const FRAME: u8 = 0;
const ANNOUNCE: u8 = 1;
/// From the relay only: the sender's connection to the relay is gone (no body).
const GONE: u8 = 2;
/// A broadcast. From a member (recipient 0): the number of recipients (`u32`), then each
/// recipient's id and its [`SEALED_KEY`] bytes, then the sealed frame. From the relay: the
/// recipient's [`SEALED_KEY`] bytes, then the sealed frame.
const BROADCAST: u8 = 3;
/// A broadcast's key and the SHA-256 of its sealed frame, sealed for one recipient.
const SEALED_KEY: usize = 32 + 32 + TAG;
const _: () = assert!(4 + SEALED_KEY == BROADCAST_PER_RECIPIENT);
const HEADER: usize = 5;
/// ChaCha20-Poly1305's tag.
const TAG: usize = 16;
const _: () = assert!(HEADER + TAG == RELAY_OVERHEAD);

/// An uncompressed P-256 point.
const POINT: usize = 65;
// An announcement: the header, the point, the scheme and the signature.
const _: () = assert!(HEADER + POINT + 2 + MAX_SIGNATURE_BYTES == ANNOUNCEMENT_BYTES);

fn wrap(kind: u8, party: PartyId, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER + body.len());
    out.push(kind);
    out.extend_from_slice(&party.to_be_bytes());
    out.extend_from_slice(body);
    out
}

fn unwrap(bytes: &[u8]) -> Option<(u8, PartyId, &[u8])> {
    let (head, body) = bytes.split_at_checked(HEADER)?;
    let party = PartyId::from_be_bytes(head[1..].try_into().ok()?);
    Some((head[0], party, body))
}

/// The digest a member's announcement signs.
fn announcement_digest(context: &[u8], member: PartyId, point: &[u8]) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update((context.len() as u64).to_be_bytes());
    h.update(context);
    h.update(member.to_be_bytes());
    h.update(point);
    h.finalize().into()
}

/// A key for one direction, with the number of frames sealed or opened under it.
struct Direction {
    key: LessSafeKey,
    count: u64,
}

impl Direction {
    /// The key for frames from `from` to `to` (ring's HKDF fails only for outputs longer than
    /// 255 hashes, never for one key: `None` is not expected).
    fn new(secret: &[u8], context: &[u8], from: PartyId, to: PartyId) -> Option<Self> {
        let salt = hkdf::Salt::new(hkdf::HKDF_SHA256, &[KEY_SALT, context].concat());
        let info = [from.to_be_bytes(), to.to_be_bytes()].concat();
        let info = [&info[..]];
        let prk = salt.extract(secret);
        let okm = prk.expand(&info, &CHACHA20_POLY1305).ok()?;
        Some(Direction {
            key: LessSafeKey::new(UnboundKey::from(okm)),
            count: 0,
        })
    }

    fn nonce(&mut self) -> Option<Nonce> {
        let mut n = [0u8; 12];
        n[4..].copy_from_slice(&self.count.to_be_bytes());
        self.count = self.count.checked_add(1)?;
        Some(Nonce::assume_unique_for_key(n))
    }

    fn seal(&mut self, mut frame: Vec<u8>) -> Option<Vec<u8>> {
        let nonce = self.nonce()?;
        self.key
            .seal_in_place_append_tag(nonce, Aad::empty(), &mut frame)
            .ok()?;
        Some(frame)
    }

    fn open(&mut self, sealed: &[u8]) -> Option<Vec<u8>> {
        let nonce = self.nonce()?;
        let mut buf = sealed.to_vec();
        let len = self
            .key
            .open_in_place(nonce, Aad::empty(), &mut buf)
            .ok()?
            .len();
        buf.truncate(len);
        Some(buf)
    }
}

/// A member's transport in a star: one link, to the relay, and frames sealed end to end with
/// every other member (see the module's documentation).
pub struct StarTransport<T: Transport> {
    inner: T,
    relay: PartyId,
    /// The frames the members may send (checked once opened).
    bounds: FrameBounds,
    outgoing: RefCell<BTreeMap<PartyId, Direction>>,
    incoming: BTreeMap<PartyId, Direction>,
    /// Where each broadcast's key comes from, and how many were sent.
    broadcasts: RefCell<(hkdf::Prk, u64)>,
    /// Members whose frames no longer come (their link ended), and why.
    ended: BTreeMap<PartyId, LinkLoss>,
    /// Members the relay stamped on a message that did not open as theirs after the
    /// announcements (an announcement or a kind a member never sends): their share of the
    /// link's budget may hold bytes that are not theirs ([`StarTransport::flooded`]).
    unproven: BTreeSet<PartyId>,
    /// Members with no valid key announcement: never peers.
    missing: BTreeMap<PartyId, LinkLoss>,
    pending: VecDeque<Event>,
}

impl<T: Transport> std::fmt::Debug for StarTransport<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StarTransport")
            .field("me", &self.inner.me())
            .field("relay", &self.relay)
            .field("peers", &self.incoming.keys().collect::<Vec<_>>())
            .field("missing", &self.missing.keys().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

impl<T: Transport> StarTransport<T> {
    /// Joins a star: announces a fresh key (drawn from a split of `entropy`, signed by `signer`) to
    /// `members` through `relay` over `inner`, and waits until `deadline` for every other
    /// member's announcement, each checked against that member's certificate in `signer`.
    /// `context` names the session (the same at every member, e.g. the cluster and a run
    /// identifier). Members whose announcement did not come or does not verify are
    /// [`StarTransport::missing`], never peers; frames that came meanwhile are kept. Every
    /// frame opened is checked against `bounds` (the session's, as a mesh link checks them;
    /// the link to the relay itself wants [`FrameBounds::relayed`]).
    #[allow(clippy::too_many_arguments)]
    pub fn connect(
        inner: T,
        relay: PartyId,
        bounds: FrameBounds,
        members: &[PartyId],
        context: &[u8],
        signer: &TranscriptSigner,
        entropy: &mut dyn EntropySource,
        deadline: Instant,
    ) -> Result<Self> {
        let me = inner.me();
        // From a split source: the key's draws leave the generation's own stream as it is, so
        // a seeded run makes the same candidates in a star as in a mesh.
        let mut own = entropy.split()?;
        let secret = loop {
            let mut bytes = zeroize::Zeroizing::new([0u8; 32]);
            own.fill(&mut bytes[..])?;
            if let Ok(key) = SecretKey::from_slice(&bytes[..]) {
                break key;
            }
        };
        let point = secret.public_key().to_encoded_point(false);
        let mut seed = zeroize::Zeroizing::new([0u8; 32]);
        own.fill(&mut seed[..])?;
        let broadcasts = hkdf::Salt::new(hkdf::HKDF_SHA256, BROADCAST_SALT).extract(&seed[..]);
        let signature = signer.sign_in_context(
            ANNOUNCEMENT_CONTEXT,
            &announcement_digest(context, me, point.as_bytes()),
        )?;
        let mut body = point.as_bytes().to_vec();
        body.extend_from_slice(&signature.scheme.code().to_be_bytes());
        body.extend_from_slice(&signature.signature);
        inner
            .send(relay, wrap(ANNOUNCE, 0, &body))
            .map_err(|_| Error::PartyFailed {
                party: relay,
                reason: LinkLoss::NeverConnected.into(),
            })?;
        let mut star = StarTransport {
            inner,
            relay,
            bounds,
            outgoing: RefCell::new(BTreeMap::new()),
            incoming: BTreeMap::new(),
            broadcasts: RefCell::new((broadcasts, 0)),
            ended: BTreeMap::new(),
            unproven: BTreeSet::new(),
            missing: BTreeMap::new(),
            pending: VecDeque::new(),
        };
        let mut waiting: BTreeSet<PartyId> = members.iter().copied().filter(|&m| m != me).collect();
        while !waiting.is_empty() {
            let Some(event) = star.inner.recv_until(deadline) else {
                break;
            };
            match event {
                Event::Frame { from, bytes } if from == relay => match unwrap(&bytes) {
                    Some((ANNOUNCE, sender, body)) if waiting.remove(&sender) => {
                        let keys =
                            announced_key(signer, context, sender, body).and_then(|public| {
                                let shared = p256::ecdh::diffie_hellman(
                                    secret.to_nonzero_scalar(),
                                    public.as_affine(),
                                );
                                let raw = shared.raw_secret_bytes();
                                Some((
                                    Direction::new(raw, context, me, sender)?,
                                    Direction::new(raw, context, sender, me)?,
                                ))
                            });
                        match keys {
                            Some((out, into)) => {
                                star.outgoing.get_mut().insert(sender, out);
                                star.incoming.insert(sender, into);
                            }
                            None => {
                                star.missing.insert(sender, LinkLoss::NoSignedKey);
                            }
                        }
                    }
                    Some((FRAME | GONE | BROADCAST, _, _)) => {
                        if let Some(e) = star.accept(&bytes) {
                            star.pending.push_back(e);
                        }
                    }
                    // A second announcement, or a kind the relay never sends: not that
                    // member's, though the relay stamped it with its id.
                    Some((_, sender, _)) => {
                        star.unproven.insert(sender);
                    }
                    None => {}
                },
                Event::Frame { .. } => {}
                Event::Lost { party, .. } | Event::Rejected { party, .. } if party == relay => {
                    break;
                }
                // A member whose share of the relay link ran out ([`FrameBounds::stamped`])
                // before or after its announcement.
                Event::Lost {
                    party,
                    reason: LinkLoss::FloodedThroughRelay { queued, limit },
                } => {
                    if waiting.remove(&party) {
                        let reason = LinkLoss::FloodedThroughRelay { queued, limit };
                        star.missing.insert(party, reason);
                    } else if let Some(e) = star.flooded(party, queued, limit) {
                        star.pending.push_back(e);
                    }
                }
                Event::Lost { .. } | Event::Rejected { .. } => {}
            }
        }
        for m in waiting {
            star.missing.insert(m, LinkLoss::NoSignedKey);
        }
        Ok(star)
    }

    /// The members with no valid key announcement (missing, malformed, or not signed by the
    /// key of their certificate), and why: they are not peers.
    pub fn missing(&self) -> Vec<PartyId> {
        self.missing.keys().copied().collect()
    }

    /// A frame from the relay, opened: the event it is, if any.
    fn accept(&mut self, bytes: &[u8]) -> Option<Event> {
        let (kind, from, body) = unwrap(bytes)?;
        if self.ended.contains_key(&from) {
            return None;
        }
        match kind {
            FRAME | BROADCAST => {
                let direction = self.incoming.get_mut(&from)?;
                let opened = if kind == FRAME {
                    direction.open(body)
                } else {
                    open_broadcast(direction, body)
                };
                let Some(frame) = opened else {
                    return Some(self.end(from, LinkLoss::Unauthentic));
                };
                let admitted = match <&[u8; crate::wire::HEADER]>::try_from(
                    frame.get(..crate::wire::HEADER).unwrap_or(&frame[..]),
                ) {
                    Ok(header) => self.bounds.admit(header, frame.len() as u64),
                    Err(_) => self.bounds.admit_length(frame.len() as u64),
                };
                match admitted {
                    Ok(()) => Some(Event::Frame { from, bytes: frame }),
                    Err(reason) => {
                        self.ended.insert(from, LinkLoss::Closed);
                        Some(Event::Rejected {
                            party: from,
                            reason,
                        })
                    }
                }
            }
            GONE if self.incoming.contains_key(&from) => Some(self.end(from, LinkLoss::AtRelay)),
            _ => {
                self.unproven.insert(from);
                None
            }
        }
    }

    /// Member `party`'s share of the relay link ran out ([`FrameBounds::stamped`]). If every
    /// message stamped with its id opened as its frame, up to the one that ran past the share
    /// (the link delivers that one before the loss), then it sent them all, authenticated, that
    /// far ahead of the protocol: it is refused as flooding, the verdict a mesh link gives.
    /// Otherwise some of those bytes may be the relay's, and it is a failure.
    fn flooded(&mut self, party: PartyId, queued: u64, limit: u64) -> Option<Event> {
        if self.ended.contains_key(&party) || !self.incoming.contains_key(&party) {
            return None;
        }
        if self.unproven.contains(&party) {
            return Some(self.end(party, LinkLoss::FloodedThroughRelay { queued, limit }));
        }
        self.ended.insert(party, LinkLoss::Closed);
        Some(Event::Rejected {
            party,
            reason: LinkRejection::Flooded { queued, limit },
        })
    }

    /// The link to the relay is gone: so is every member's that was still up.
    fn relay_gone(&mut self, reason: LinkLoss) -> Option<Event> {
        let live: Vec<PartyId> = self
            .incoming
            .keys()
            .copied()
            .filter(|p| !self.ended.contains_key(p))
            .collect();
        for p in live {
            let e = self.end(p, reason.clone());
            self.pending.push_back(e);
        }
        self.pending.pop_front()
    }

    fn end(&mut self, party: PartyId, reason: LinkLoss) -> Event {
        self.ended.insert(party, reason.clone());
        Event::Lost { party, reason }
    }
}

/// A member's announced key, if `body` is a point and a valid signature of it by `member`'s
/// certificate key.
fn announced_key(
    signer: &TranscriptSigner,
    context: &[u8],
    member: PartyId,
    body: &[u8],
) -> Option<PublicKey> {
    let (point, rest) = body.split_at_checked(POINT)?;
    let (scheme, signature) = rest.split_at_checked(2)?;
    let scheme = SigningScheme::from_code(u16::from_be_bytes(scheme.try_into().ok()?))?;
    let certificate = signer.certificates().get(&member)?;
    let digest = announcement_digest(context, member, point);
    let message = [ANNOUNCEMENT_CONTEXT, &digest[..]].concat();
    let signature = TranscriptSignature {
        member,
        scheme,
        signature: signature.to_vec(),
    };
    verify_signature(certificate, &message, &signature).ok()?;
    PublicKey::from_sec1_bytes(point).ok()
}

impl<T: Transport> Transport for StarTransport<T> {
    fn me(&self) -> PartyId {
        self.inner.me()
    }

    fn peers(&self) -> Vec<PartyId> {
        self.incoming.keys().copied().collect()
    }

    fn send(&self, to: PartyId, frame: Vec<u8>) -> Result<()> {
        let failed = |reason: LinkLoss| Error::PartyFailed {
            party: to,
            reason: reason.into(),
        };
        if let Some(reason) = self.ended.get(&to).or_else(|| self.missing.get(&to)) {
            return Err(failed(reason.clone()));
        }
        let sealed = {
            let mut outgoing = self.outgoing.borrow_mut();
            let direction = outgoing
                .get_mut(&to)
                .ok_or_else(|| failed(LinkLoss::NotAPeer))?;
            direction
                .seal(frame)
                .ok_or_else(|| failed(LinkLoss::Unauthentic))?
        };
        self.inner
            .send(self.relay, wrap(FRAME, to, &sealed))
            .map_err(|_| failed(LinkLoss::AtRelay))
    }

    fn send_to_all(&self, to: &[PartyId], frame: Vec<u8>) -> Result<()> {
        if to.len() < 2 {
            return to.iter().try_for_each(|&p| self.send(p, frame.clone()));
        }
        let failed = |party: PartyId, reason: LinkLoss| Error::PartyFailed {
            party,
            reason: reason.into(),
        };
        for &p in to {
            if let Some(reason) = self.ended.get(&p).or_else(|| self.missing.get(&p)) {
                return Err(failed(p, reason.clone()));
            }
        }
        let mut outgoing = self.outgoing.borrow_mut();
        if let Some(&p) = to.iter().find(|p| !outgoing.contains_key(p)) {
            return Err(failed(p, LinkLoss::NotAPeer));
        }
        // This broadcast's key: unique (the broadcast's number), known to the members only.
        let key = {
            let mut broadcasts = self.broadcasts.borrow_mut();
            let (prk, count) = &mut *broadcasts;
            let number = count.to_be_bytes();
            *count += 1;
            let mut key = zeroize::Zeroizing::new([0u8; 32]);
            prk.expand(&[&number[..]], &CHACHA20_POLY1305)
                .and_then(|okm| okm.fill(&mut key[..]))
                .map_err(|_| failed(to[0], LinkLoss::Unauthentic))?;
            key
        };
        let sealed = seal_once(&key, frame).ok_or_else(|| failed(to[0], LinkLoss::Unauthentic))?;
        let digest = Sha256::digest(&sealed);
        let count = u32::try_from(to.len()).map_err(|_| failed(to[0], LinkLoss::NotAPeer))?;
        let mut body = Vec::with_capacity(4 + to.len() * (4 + SEALED_KEY) + sealed.len());
        body.extend_from_slice(&count.to_be_bytes());
        for &p in to {
            let direction = outgoing
                .get_mut(&p)
                .ok_or_else(|| failed(p, LinkLoss::NotAPeer))?;
            // Room for the tag too: a reallocation would leave a copy of the key unwiped.
            let mut opening = Vec::with_capacity(SEALED_KEY);
            opening.extend_from_slice(&key[..]);
            opening.extend_from_slice(&digest);
            let opening = direction
                .seal(opening)
                .ok_or_else(|| failed(p, LinkLoss::Unauthentic))?;
            body.extend_from_slice(&p.to_be_bytes());
            body.extend_from_slice(&opening);
        }
        body.extend_from_slice(&sealed);
        self.inner
            .send(self.relay, wrap(BROADCAST, 0, &body))
            .map_err(|_| failed(to[0], LinkLoss::AtRelay))
    }

    fn recv_until(&mut self, deadline: Instant) -> Option<Event> {
        if let Some(e) = self.pending.pop_front() {
            return Some(e);
        }
        loop {
            match self.inner.recv_until(deadline)? {
                Event::Frame { from, bytes } if from == self.relay => {
                    if let Some(e) = self.accept(&bytes) {
                        return Some(e);
                    }
                }
                Event::Frame { .. } => {}
                Event::Lost { party, reason } if party == self.relay => {
                    return self.relay_gone(reason);
                }
                Event::Rejected { party, .. } if party == self.relay => {
                    return self.relay_gone(LinkLoss::AtRelay);
                }
                // A member whose share of the relay link ran out ([`FrameBounds::stamped`]);
                // what else the inner transport says of a member is not about the star.
                Event::Lost {
                    party,
                    reason: LinkLoss::FloodedThroughRelay { queued, limit },
                } => {
                    if let Some(e) = self.flooded(party, queued, limit) {
                        return Some(e);
                    }
                }
                Event::Lost { .. } | Event::Rejected { .. } => {}
            }
        }
    }

    fn stats(&self) -> TrafficStats {
        self.inner.stats()
    }
}

/// The context a star's announcements sign: the cluster's name and its members.
fn cluster_context(config: &ClusterConfig) -> Vec<u8> {
    let mut context = b"hourglass dkg star cluster\0".to_vec();
    context.extend_from_slice(&(config.name.len() as u64).to_be_bytes());
    context.extend_from_slice(config.name.as_bytes());
    for id in config.ids() {
        context.extend_from_slice(&id.to_be_bytes());
    }
    context
}

/// Member `me` of the star cluster `config` joins it: a TLS link to the relay (the relay's
/// pinned certificate; `options`' timeout and network simulation, bounds relayed from
/// `options.bounds`), then [`StarTransport::connect`] with every member of the cluster, its
/// key announcement signed by `signer`. Fails if the configuration is not a member's of a
/// star, or if the relay cannot be reached in time.
pub fn join(
    config: &ClusterConfig,
    me: PartyId,
    options: &TlsOptions,
    signer: &TranscriptSigner,
    entropy: &mut dyn EntropySource,
) -> Result<StarTransport<TlsTransport>> {
    let deadline = Instant::now() + options.connect_timeout;
    let members = config.ids();
    let link = TlsOptions {
        bounds: options.bounds.relayed(members.len()).stamped(),
        ..options.clone()
    };
    let tls = TlsTransport::connect(&config.relay_link()?, me, &link)?;
    if !tls.missing().is_empty() {
        return Err(Error::PartyFailed {
            party: RELAY_ID,
            reason: LinkLoss::NeverConnected.into(),
        });
    }
    StarTransport::connect(
        tls,
        RELAY_ID,
        options.bounds.clone(),
        &members,
        &cluster_context(config),
        signer,
        entropy,
        deadline,
    )
}

/// The relay of the star cluster `config` (the relay's own configuration: its key is the
/// `[relay]` certificate's) for a session among `members` (every party of the cluster for a
/// generation, the signers for a signature): accepts each member's TLS link until
/// `options`' timeout, then forwards ([`relay`]) until every member's link is gone or nothing
/// came for `idle`. `options`' bounds are the largest frames of the session (the relay only
/// sees sealed frames, so it bounds their lengths).
pub fn serve(
    config: &ClusterConfig,
    members: &[PartyId],
    options: &TlsOptions,
    idle: Duration,
) -> Result<RelayReport> {
    let hub = config.relay_hub(members)?;
    let members: Vec<PartyId> = hub.ids().into_iter().filter(|&id| id != RELAY_ID).collect();
    let link = TlsOptions {
        bounds: options.bounds.relayed(members.len()),
        ..options.clone()
    };
    let mut tls = TlsTransport::connect(&hub, RELAY_ID, &link)?;
    Ok(relay(&mut tls, &members, idle))
}

/// What a relay forwarded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RelayReport {
    /// Frames forwarded (an announcement counts once per recipient).
    pub frames: u64,
    /// Bytes forwarded.
    pub bytes: u64,
    /// Frames dropped: from a party that is not a member, malformed, or for a recipient that
    /// is not a member or whose connection is gone.
    pub dropped: u64,
}

/// Seals `frame` under `key`, a key for this one frame (a broadcast's): the nonce is fixed.
fn seal_once(key: &[u8; 32], mut frame: Vec<u8>) -> Option<Vec<u8>> {
    LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, key).ok()?)
        .seal_in_place_append_tag(
            Nonce::assume_unique_for_key([0; 12]),
            Aad::empty(),
            &mut frame,
        )
        .ok()?;
    Some(frame)
}

/// Opens a broadcast as the relay delivers it (`body`: this recipient's sealed key and digest,
/// then the sealed frame), the key and digest as the next frame under `direction`: the frame,
/// if the digest is the sealed frame's and it opens under that key.
fn open_broadcast(direction: &mut Direction, body: &[u8]) -> Option<Vec<u8>> {
    let (opening, sealed) = body.split_at_checked(SEALED_KEY)?;
    let opening = zeroize::Zeroizing::new(direction.open(opening)?);
    let (key, digest) = opening.split_at_checked(32)?;
    if Sha256::digest(sealed)[..] != *digest {
        return None;
    }
    let key = LessSafeKey::new(UnboundKey::new(&CHACHA20_POLY1305, key).ok()?);
    let mut buf = sealed.to_vec();
    let len = key
        .open_in_place(
            Nonce::assume_unique_for_key([0; 12]),
            Aad::empty(),
            &mut buf,
        )
        .ok()?
        .len();
    buf.truncate(len);
    Some(buf)
}

/// A recipient of a broadcast and its [`SEALED_KEY`] bytes.
type Opening<'a> = (PartyId, &'a [u8]);

/// A member's broadcast as the relay reads it: each recipient with its opening, and the
/// sealed frame; `None` if malformed or naming more recipients than `members`.
fn split_broadcast(body: &[u8], members: usize) -> Option<(Vec<Opening<'_>>, &[u8])> {
    let (count, mut rest) = body.split_at_checked(4)?;
    let count = u32::from_be_bytes(count.try_into().ok()?) as usize;
    if count >= members {
        return None;
    }
    let mut openings = Vec::with_capacity(count);
    for _ in 0..count {
        let (id, tail) = rest.split_at_checked(4)?;
        let (opening, tail) = tail.split_at_checked(SEALED_KEY)?;
        openings.push((PartyId::from_be_bytes(id.try_into().ok()?), opening));
        rest = tail;
    }
    Some((openings, rest))
}

/// The relay of a star: forwards every member's frames to their recipients and its key
/// announcement to every other member, stamping the sender as `transport` authenticated it,
/// and tells the members when one's connection is gone. Returns when every member's
/// connection is gone, or when nothing came for `idle`. It holds no secret and cannot read,
/// alter or forge what it forwards (see the module's documentation).
pub fn relay(transport: &mut dyn Transport, members: &[PartyId], idle: Duration) -> RelayReport {
    let mut report = RelayReport::default();
    let mut live: BTreeSet<PartyId> = members.iter().copied().collect();
    while !live.is_empty() {
        let Some(event) = transport.recv_until(Instant::now() + idle) else {
            break;
        };
        let mut gone = Vec::new();
        match event {
            Event::Frame { from, bytes } if live.contains(&from) => match unwrap(&bytes) {
                Some((FRAME, to, body)) if to != from && live.contains(&to) => {
                    let out = wrap(FRAME, from, body);
                    report.frames += 1;
                    report.bytes += out.len() as u64;
                    if transport.send(to, out).is_err() {
                        gone.push(to);
                    }
                }
                Some((BROADCAST, 0, body)) => match split_broadcast(body, members.len()) {
                    Some((openings, sealed)) => {
                        for (to, opening) in openings {
                            if to == from || !live.contains(&to) {
                                report.dropped += 1;
                                continue;
                            }
                            let out = wrap(BROADCAST, from, &[opening, sealed].concat());
                            report.frames += 1;
                            report.bytes += out.len() as u64;
                            if transport.send(to, out).is_err() {
                                gone.push(to);
                            }
                        }
                    }
                    None => report.dropped += 1,
                },
                Some((ANNOUNCE, 0, body)) => {
                    let out = wrap(ANNOUNCE, from, body);
                    for &m in live.iter().filter(|&&m| m != from) {
                        report.frames += 1;
                        report.bytes += out.len() as u64;
                        if transport.send(m, out.clone()).is_err() {
                            gone.push(m);
                        }
                    }
                }
                _ => report.dropped += 1,
            },
            Event::Frame { .. } => report.dropped += 1,
            Event::Lost { party, .. } | Event::Rejected { party, .. } => gone.push(party),
        }
        while let Some(party) = gone.pop() {
            if !live.remove(&party) {
                continue;
            }
            let notice = wrap(GONE, party, &[]);
            for &m in &live {
                if transport.send(m, notice.clone()).is_err() {
                    gone.push(m);
                }
            }
        }
    }
    report
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (Direction, Direction) {
        let secret = [9u8; 32];
        (
            Direction::new(&secret, b"ctx", 1, 2).unwrap(),
            Direction::new(&secret, b"ctx", 1, 2).unwrap(),
        )
    }

    #[test]
    fn frames_open_once_in_order_and_only_under_their_direction() {
        let (mut sender, mut receiver) = pair();
        let a = sender.seal(b"first".to_vec()).unwrap();
        let b = sender.seal(b"second".to_vec()).unwrap();
        assert_ne!(&a[..5], b"first");
        // Out of order: the second frame does not open as the first.
        assert!(pair().1.open(&b).is_none());
        assert_eq!(receiver.open(&a).unwrap(), b"first");
        // Replayed: the first frame does not open as the second.
        assert!(pair().1.open(&a).is_some());
        let mut replay = pair().1;
        replay.open(&a).unwrap();
        assert!(replay.open(&a).is_none());
        assert_eq!(receiver.open(&b).unwrap(), b"second");
        // The other direction, or another session's context, has another key.
        let mut back = Direction::new(&[9u8; 32], b"ctx", 2, 1).unwrap();
        assert!(back.open(&pair().0.seal(b"x".to_vec()).unwrap()).is_none());
        let mut other = Direction::new(&[9u8; 32], b"other", 1, 2).unwrap();
        assert!(other.open(&pair().0.seal(b"x".to_vec()).unwrap()).is_none());
    }

    /// A broadcast as member 1 sends it to the recipient of `direction`: its opening, then
    /// the frame sealed under `key`.
    fn broadcast_body(direction: &mut Direction, key: &[u8; 32], frame: &[u8]) -> Vec<u8> {
        let sealed = seal_once(key, frame.to_vec()).unwrap();
        let mut opening = key.to_vec();
        opening.extend_from_slice(&Sha256::digest(&sealed));
        let mut body = direction.seal(opening).unwrap();
        body.extend_from_slice(&sealed);
        body
    }

    #[test]
    fn a_broadcast_opens_once_in_order_and_only_as_it_was_sealed() {
        let (mut sender, mut receiver) = pair();
        let key = [3u8; 32];
        let body = broadcast_body(&mut sender, &key, b"to everyone");
        assert!(!body.windows(11).any(|w| w == b"to everyone"));
        assert_eq!(
            open_broadcast(&mut receiver, &body).unwrap(),
            b"to everyone"
        );
        // Replayed: its opening was the previous frame of the direction.
        assert!(open_broadcast(&mut receiver, &body).is_none());
        // A frame and a broadcast share the direction's order.
        let (mut sender, mut receiver) = pair();
        let frame = sender.seal(b"first".to_vec()).unwrap();
        let body = broadcast_body(&mut sender, &key, b"second");
        assert!(open_broadcast(&mut pair().1, &body).is_none());
        assert_eq!(receiver.open(&frame).unwrap(), b"first");
        assert_eq!(open_broadcast(&mut receiver, &body).unwrap(), b"second");
        // Altered anywhere: refused.
        for at in [0, SEALED_KEY - 1, SEALED_KEY, body.len() - 1] {
            let mut altered = body.clone();
            altered[at] ^= 1;
            let mut receiver = pair().1;
            receiver.open(&frame).unwrap();
            assert!(open_broadcast(&mut receiver, &altered).is_none(), "{at}");
        }
        // Every recipient learns the key: one that seals another frame under it cannot pass
        // that frame to another recipient, whose opening names the first frame's digest.
        let (mut to_two, mut two) = pair();
        let honest = broadcast_body(&mut to_two, &key, b"the value");
        let forged = seal_once(&key, b"another value".to_vec()).unwrap();
        let mut swapped = honest[..SEALED_KEY].to_vec();
        swapped.extend_from_slice(&forged);
        assert!(open_broadcast(&mut two, &swapped).is_none());
        assert!(open_broadcast(&mut pair().1, &honest[..SEALED_KEY - 1]).is_none());
    }

    #[test]
    fn the_relay_reads_a_broadcasts_recipients_and_refuses_more_than_the_others() {
        let mut body = 2u32.to_be_bytes().to_vec();
        for id in [2u32, 3] {
            body.extend_from_slice(&id.to_be_bytes());
            body.extend_from_slice(&[id as u8; SEALED_KEY]);
        }
        body.extend_from_slice(b"sealed");
        let (openings, sealed) = split_broadcast(&body, 3).unwrap();
        assert_eq!(sealed, b"sealed");
        assert_eq!(
            openings,
            vec![(2, &[2u8; SEALED_KEY][..]), (3, &[3u8; SEALED_KEY][..])]
        );
        // Three members: at most two recipients; and a count the body is too short for.
        assert!(split_broadcast(&body, 2).is_none());
        assert!(split_broadcast(&body[..4 + 2 * (4 + SEALED_KEY) - 1], 3).is_none());
        assert!(split_broadcast(&[0, 0, 0], 3).is_none());
    }

    #[test]
    fn relay_messages_shorter_than_their_header_are_not_read() {
        assert_eq!(
            unwrap(&wrap(FRAME, 7, b"body")),
            Some((FRAME, 7, &b"body"[..]))
        );
        assert_eq!(unwrap(&[0, 0, 0, 1]), None);
        assert_eq!(unwrap(&[]), None);
    }

    #[test]
    fn an_announcement_signs_its_context_member_and_point() {
        let d = announcement_digest(b"ctx", 1, &[4; POINT]);
        assert_ne!(d, announcement_digest(b"ctx2", 1, &[4; POINT]));
        assert_ne!(d, announcement_digest(b"ctx", 2, &[4; POINT]));
        assert_ne!(d, announcement_digest(b"ctx", 1, &[5; POINT]));
        // The context's length is hashed: moving a byte between context and id changes it.
        assert_ne!(
            announcement_digest(b"ab", 1, &[4; POINT]),
            announcement_digest(b"a", u32::from_be_bytes([b'b', 0, 0, 0]), &[4; POINT])
        );
    }
}

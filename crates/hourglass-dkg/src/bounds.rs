//! The largest frame a legitimate party sends, for every kind of frame and step, derived from
//! the cluster's parameters.
//!
//! A party buffers what its peers send, so a link refuses a frame larger than any a
//! legitimate peer could send **before** buffering it ([`FrameBounds::admit`], called by the
//! TLS transport on a frame's length and header), and the session checks every frame it takes
//! once more ([`FrameBounds::check`], for transports that do not look inside frames). The
//! bounds are not guesses with a margin: each is the exact size of the frame the protocol
//! writes when every value in it is as long as it can be, computed from what the frame carries:
//!
//! | frame | carries |
//! |---|---|
//! | hello | settings digest (32), nonce (16), `k` member ids (4 each), a pairwise seed (32) |
//! | sieving | `2B` shares of the sender's units (the first `t + 1` members), and two shares of each of its `ceil(2Bt / (k - t))` double sharings, below `M` |
//! | sieving level `i`, to and from a king | one value below `M` for each of the level's `2B * floor(size_i / 2)` products the king interpolates: at most `ceil(2B * floor(size_i / 2) / k)` |
//! | `N` shares | for each of `B` pairs, shares of `p_j` and `q_j` below `P` (`bits + 1` bits) |
//! | `N` points | one point below `P` per pair |
//! | trial division | one witness below `2^64` (or 0) per pair |
//! | biprimality | one value below `N` per pair that survived trial division (at most `B`) |
//! | gcd shares | `rounds - 1` biprimality values and 2 shares, below `N` |
//! | gcd point, rounding | one value below `N` |
//! | `phi mod e` parts and sums | one value below `e = 65537` |
//! | abort, fatal | a reason of at most [`MAX_REASON`] bytes and at most `k` party ids |
//! | transcript signature | fingerprint (32), scheme (2), signature (at most [`MAX_SIGNATURE_BYTES`]) |
//! | transcript echo | fingerprint (32), the set's digest (32) ([`crate::wire::ECHO_PAYLOAD_BYTES`]) |
//! | transcript set | fingerprint (32), then for each of the `k` members its id (4), scheme (2) and signature ([`crate::wire::set_payload_bytes`]) |
//! | signing request | request digest (32), salt (the hash's length) |
//! | partial signature | one value below `N` |
//! | reshare agreement | cluster identity (32), generation session (16), modulus hash (32), threshold (8), epoch (4), kind (1), fingerprint (32) |
//! | reshare sharing | in a refresh, the dealer's signed quotient and its residue below `k!`; `t + 1` commitments below `N`; the sub-share (offset to be non-negative) |
//! | reshare confirmation | fingerprint (32) |
//! | threshold request | request digest (32), salt, and the claim of the reshare agreement |
//! | threshold partial | the partial below `N` |
//! | threshold status | one byte: whether the sender's combination verified |
//! | threshold proof | the 128-bit challenge, the response |
//!
//! where `k` is the number of parties of the cluster, `t` its threshold, `B` the batch, `M` the
//! sieving modulus, and `size_i` the number of values at level `i` of the tree over the `t + 1`
//! units ([`crate::sieve::tree_levels`]); a restart runs with fewer members, so each bound is
//! the largest over every member count the generation may continue with. Every value is
//! written as a 4-byte length and its big-endian
//! magnitude ([`crate::wire::Writer`]). A frame of a kind or step the protocol never sends may
//! carry no payload.

use std::collections::BTreeMap;

use hourglass_rsa::HashAlg;

use crate::params::{Settings, PUBLIC_EXPONENT};
use crate::sieve::{tree_levels, Sieve, SieveMethod};
use crate::threshold::{Sizes, CHALLENGE_BITS};
use crate::transport::PartyId;
use crate::wire::{
    set_payload_bytes, step, FrameType, Kind, ECHO_PAYLOAD_BYTES, HEADER, KIND_AT, MAX_REASON,
    MAX_SIGNATURE_BYTES, STEP_AT,
};
use crate::{LinkRejection, ParamError, Result};

/// How many of its largest frames a peer may have delivered ahead of the protocol before its
/// link is cut: a legitimate peer is at most one step ahead (it cannot finish a step without
/// this party's message), so it has at most two data frames and a few short restart reports
/// or a signature in flight; 8 leaves room without letting `k - 1` peers pin much memory.
pub const PENDING_FRAMES: u64 = 8;

/// What a star's relay link adds to a frame ([`crate::star`]): a 5-byte header (kind and
/// sender or recipient) and the 16-byte tag of its sealing.
pub const RELAY_OVERHEAD: usize = 5 + 16;

/// The longest key announcement a star's relay forwards ([`crate::star`]): its 5-byte header,
/// an uncompressed P-256 point, the signature's scheme and the signature.
pub const ANNOUNCEMENT_BYTES: usize = 5 + 65 + 2 + MAX_SIGNATURE_BYTES;

/// What a star's broadcast adds for each recipient on its way to the relay
/// ([`crate::star`]): the recipient's id, and the broadcast's key and digest sealed for it.
pub const BROADCAST_PER_RECIPIENT: usize = 4 + 32 + 32 + 16;

/// A [`crate::threshold::Claim`] on the wire: seven byte strings of 32, 16, 32, 8, 4, 1 and 32
/// bytes.
const CLAIM_BYTES: usize = (4 + 32) + (4 + 16) + (4 + 32) + (4 + 8) + (4 + 4) + (4 + 1) + (4 + 32);

/// The length of a value below `2^bits` on the wire: a 4-byte length and the magnitude.
fn int_len(bits: u32) -> usize {
    4 + bits.div_ceil(8) as usize
}

/// The largest payload of every frame type a session sends (see the [module
/// documentation](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameBounds {
    /// Largest payload by kind and step.
    by_step: BTreeMap<(Kind, u16), usize>,
    /// Largest payload of the kinds whose step does not matter (abort and fatal).
    by_kind: BTreeMap<Kind, usize>,
    /// Frames are opaque: only their length is bounded (transports carrying other traffic).
    opaque: Option<usize>,
    /// How many members' frames one link carries: 1 in a mesh, `k - 1` on a link to or from
    /// the relay of a star (it may hold that many times [`PENDING_FRAMES`]).
    senders: u64,
    /// Each frame carries the member it comes from, as the relay of a star stamps it on a
    /// member's link ([`FrameBounds::origin_of`]): each origin has its own share of the
    /// budget.
    stamped: bool,
}

impl FrameBounds {
    fn with_reports(parties: usize) -> Self {
        let report = (4 + MAX_REASON) + parties * (4 + 4);
        FrameBounds {
            by_step: BTreeMap::new(),
            by_kind: [(Kind::Abort, report), (Kind::Fatal, report)].into(),
            opaque: None,
            senders: 1,
            stamped: false,
        }
    }

    fn set(&mut self, kind: Kind, step: u16, payload: usize) {
        let slot = self.by_step.entry((kind, step)).or_insert(0);
        *slot = (*slot).max(payload);
    }

    /// The bounds of a generation among the `parties` members of a cluster with `settings`
    /// (and of its closing round of transcript signatures).
    ///
    /// Fails on settings a generation refuses (invalid settings or threshold), and on a tree
    /// so deep that its levels would reach the steps that follow it (more than `2^19`
    /// contributors).
    pub fn generation(settings: &Settings, parties: usize) -> Result<Self> {
        settings.validate()?;
        settings.check_threshold(parties)?;
        let bits = settings.bits;
        let batch = settings.batch;
        let mut b = FrameBounds::with_reports(parties);
        b.set(
            Kind::Hello,
            step::HELLO,
            (4 + 32) + (4 + 16) + parties * (4 + 4) + (4 + 32),
        );
        let t = settings.threshold_for(parties);
        let levels = tree_levels(t + 1);
        if levels.len() > step::MAX_SIEVE_LEVELS {
            return Err(ParamError::Threshold {
                threshold: t,
                parties,
                max: parties.saturating_sub(1) / 2,
            }
            .into());
        }
        // A restart runs the sieve among fewer members: a longer M, more double sharings each
        // and more products per king. The bound is the largest over every count it may run with.
        let slots = 2 * batch;
        for k in settings.minimum_for(parties)..=parties {
            // A count whose sieve fails stops the generation in `Run::new`: no frame to bound.
            let Ok(sieve) = Sieve::new(settings.bits / 2, k, settings.sieve_bound) else {
                continue;
            };
            let m_len = int_len(sieve.modulus().significant_bits());
            match sieve.method(t) {
                SieveMethod::Tree => {
                    let dealt = (slots * t).div_ceil(k - t);
                    b.set(Kind::Data, step::SIEVE, (slots + 2 * dealt) * m_len);
                    for (level, &size) in levels.iter().enumerate() {
                        let per_king = (slots * (size / 2)).div_ceil(k);
                        b.set(Kind::Data, step::sieve_to_king(level), per_king * m_len);
                        b.set(Kind::Data, step::sieve_from_king(level), per_king * m_len);
                    }
                }
                SieveMethod::Tested => {
                    let attempts = sieve.attempts(batch);
                    let dealt = (2 * attempts).div_ceil(k - t);
                    b.set(Kind::Data, step::SIEVE, dealt * m_len);
                    let per_king = attempts.div_ceil(k);
                    b.set(Kind::Data, step::sieve_to_king(0), per_king * m_len);
                    b.set(Kind::Data, step::sieve_from_king(0), per_king * m_len);
                }
            }
        }
        // P is the least prime above 2^bits: bits + 1 bits.
        let p_len = int_len(bits + 1);
        let n_len = int_len(bits);
        let e_len = int_len(u32::BITS - PUBLIC_EXPONENT.leading_zeros());
        let rounds = settings.biprimality_rounds as usize;
        // Each member deals the shares of the pairs it holds: the t + 1 positions from a
        // pair's lead on, leads rotating over the k members pair by pair.
        for k in settings.minimum_for(parties)..=parties {
            let held = (t + 1) * (batch / k) + (t + 1).min(batch % k);
            b.set(Kind::Data, step::N_SHARES, held * 2 * p_len);
        }
        b.set(Kind::Data, step::N_POINTS, batch * p_len);
        b.set(Kind::Data, step::TRIAL, batch * int_len(64));
        b.set(Kind::Data, step::BIPRIMALITY, batch * n_len);
        b.set(Kind::Data, step::GCD_SHARES, (rounds - 1 + 2) * n_len);
        b.set(Kind::Data, step::GCD_POINT, n_len);
        b.set(Kind::Data, step::PHI_PARTS, e_len);
        b.set(Kind::Data, step::PHI_SUM, e_len);
        b.set(Kind::Data, step::ROUNDING, n_len);
        b.set(
            Kind::Signature,
            step::HELLO,
            (4 + 32) + (4 + 2) + (4 + MAX_SIGNATURE_BYTES),
        );
        b.set(Kind::Signature, step::TRANSCRIPT_ECHO, ECHO_PAYLOAD_BYTES);
        b.set(
            Kind::Signature,
            step::TRANSCRIPT_SETS,
            set_payload_bytes(parties),
        );
        Ok(b)
    }

    /// The bounds of a joint signature with a `bits`-bit modulus among `parties` members,
    /// hashing with `hash`.
    pub fn signing(bits: u32, parties: usize, hash: HashAlg) -> Self {
        let mut b = FrameBounds::with_reports(parties);
        b.set(
            Kind::Data,
            step::SIGN_REQUEST,
            (4 + 32) + (4 + hash.output_len()),
        );
        b.set(Kind::Data, step::SIGN_PARTIAL, int_len(bits));
        b
    }

    /// The bounds of a reshare (`refresh` false: from n-of-n shares) or a refresh (`refresh`
    /// true: from threshold shares) of a sharing of these `sizes`.
    pub fn resharing(sizes: &Sizes, refresh: bool) -> Self {
        let parties = sizes.parties;
        let mut b = FrameBounds::with_reports(parties);
        b.set(
            Kind::Hello,
            step::HELLO,
            (4 + 32) + (4 + 16) + parties * (4 + 4) + (4 + 32),
        );
        b.set(Kind::Data, step::RESHARE_AGREE, CLAIM_BYTES);
        let residues = if refresh {
            (4 + 1) + int_len(sizes.quotient_bits()) + int_len(sizes.delta.significant_bits())
        } else {
            0
        };
        b.set(
            Kind::Data,
            step::RESHARE_DEAL,
            residues
                + (sizes.threshold + 1) * int_len(sizes.bits)
                + int_len(sizes.sub_share_bits()),
        );
        b.set(Kind::Data, step::RESHARE_CONFIRM, 4 + 32);
        b
    }

    /// The bounds of a threshold signature among `signers` with shares of these `sizes`,
    /// hashing with `hash`.
    pub fn threshold_signing(sizes: &Sizes, signers: usize, hash: HashAlg) -> Self {
        let mut b = FrameBounds::with_reports(signers);
        b.set(
            Kind::Data,
            step::THRESHOLD_REQUEST,
            (4 + 32) + (4 + hash.output_len()) + CLAIM_BYTES,
        );
        b.set(Kind::Data, step::THRESHOLD_PARTIAL, int_len(sizes.bits));
        b.set(Kind::Data, step::THRESHOLD_STATUS, 1);
        b.set(
            Kind::Data,
            step::THRESHOLD_PROOF,
            int_len(CHALLENGE_BITS) + int_len(sizes.response_bits()),
        );
        b
    }

    /// Bounds for a star's relay that serves every kind of session of a cluster of `parties`
    /// with these generation `settings` (it sees sealed frames only, so it bounds their
    /// lengths): opaque frames of at most the longest frame of a generation, a joint
    /// signature, a signature by any `t + 1` of threshold shares (any `t`), a reshare or a
    /// refresh of them, with the longest hash.
    pub fn any_session(settings: &Settings, parties: usize) -> Result<Self> {
        let mut longest = [
            FrameBounds::generation(settings, parties)?,
            FrameBounds::signing(settings.bits, parties, HashAlg::Sha512),
        ]
        .iter()
        .map(FrameBounds::largest)
        .max()
        .unwrap_or(0);
        // Threshold shares exist for 3 to 256 parties (`Sizes::new` refuses the others).
        for t in 1..=parties.saturating_sub(1) / 2 {
            let Ok(sizes) = Sizes::new(settings.bits, parties, t) else {
                break;
            };
            for b in [
                FrameBounds::threshold_signing(&sizes, parties, HashAlg::Sha512),
                FrameBounds::resharing(&sizes, false),
                FrameBounds::resharing(&sizes, true),
            ] {
                longest = longest.max(b.largest());
            }
        }
        Ok(FrameBounds::opaque(longest))
    }

    /// Bounds for frames that are opaque byte strings of at most `max` bytes (a transport
    /// carrying something other than this crate's sessions, such as its own tests).
    pub fn opaque(max: usize) -> Self {
        FrameBounds {
            by_step: BTreeMap::new(),
            by_kind: BTreeMap::new(),
            opaque: Some(max),
            senders: 1,
            stamped: false,
        }
    }

    /// Bounds for a link to or from the relay of a star of `members` ([`crate::star`]): each
    /// frame is one of these, sealed ([`RELAY_OVERHEAD`] bytes more) and, as a broadcast to
    /// the relay, with a count and [`BROADCAST_PER_RECIPIENT`] bytes for each other member, so
    /// only its length is bounded on the link (each member checks the frames it opens against
    /// these bounds); and the link carries the frames of up to `members - 1` members.
    pub fn relayed(&self, members: usize) -> Self {
        let others = members.saturating_sub(1);
        FrameBounds {
            by_step: BTreeMap::new(),
            by_kind: BTreeMap::new(),
            // A session of short frames (a signature's) still carries the key announcements.
            opaque: Some(
                (self.largest() + RELAY_OVERHEAD + 4 + others * BROADCAST_PER_RECIPIENT)
                    .max(ANNOUNCEMENT_BYTES),
            ),
            senders: members.saturating_sub(1).max(1) as u64,
            stamped: false,
        }
    }

    /// [`FrameBounds::relayed`] for a member's link to the relay, whose every message names
    /// the member it comes from (the relay's header: a kind byte, then the member's id): a
    /// member may have delivered at most [`FrameBounds::max_pending_per_origin`] of the
    /// link's pending bytes, so one member that floods another uses up its own share, not
    /// the link's. The origin is the relay's word until the frame is opened: a relay that
    /// repeats a member's frames can use up that member's share too, as it can cut the
    /// member off.
    pub fn stamped(mut self) -> Self {
        self.stamped = true;
        self
    }

    /// The member a frame on a [`FrameBounds::stamped`] link comes from, as the relay says;
    /// `None` on any other link, or for a frame too short to name one.
    pub fn origin_of(&self, frame: &[u8]) -> Option<PartyId> {
        if !self.stamped {
            return None;
        }
        let id = frame.get(1..5)?;
        Some(PartyId::from_be_bytes(id.try_into().ok()?))
    }

    /// The largest payload of a frame of `kind` at `step` (0 for a step the protocol never
    /// sends).
    pub fn payload_limit(&self, kind: Kind, step: u16) -> usize {
        self.by_step
            .get(&(kind, step))
            .or_else(|| self.by_kind.get(&kind))
            .copied()
            .unwrap_or(0)
    }

    /// The largest frame of any type, header included.
    pub fn largest(&self) -> usize {
        match self.opaque {
            Some(max) => max,
            None => {
                HEADER
                    + self
                        .by_step
                        .values()
                        .chain(self.by_kind.values())
                        .copied()
                        .max()
                        .unwrap_or(0)
            }
        }
    }

    /// The most bytes a peer may have delivered that the protocol has not taken yet
    /// ([`PENDING_FRAMES`] of the largest frames per member the link carries).
    pub fn max_pending(&self) -> u64 {
        (self.largest() as u64)
            .saturating_mul(PENDING_FRAMES)
            .saturating_mul(self.senders)
    }

    /// The most bytes one member's frames may take of a [`FrameBounds::stamped`] link's
    /// pending budget ([`PENDING_FRAMES`] of the largest frames, what a mesh link to that
    /// member may hold).
    pub fn max_pending_per_origin(&self) -> u64 {
        (self.largest() as u64).saturating_mul(PENDING_FRAMES)
    }

    /// Whether a frame of `len` bytes may be read at all (before its header is).
    pub fn admit_length(&self, len: u64) -> std::result::Result<(), LinkRejection> {
        if len > self.largest() as u64 {
            return Err(LinkRejection::OversizedFrame {
                len,
                max: self.largest(),
                frame: None,
            });
        }
        Ok(())
    }

    /// Whether a frame of `len` bytes that starts with `header` (its first [`HEADER`] bytes)
    /// may be read: refused when its payload is longer than its type's bound. A frame of
    /// an unknown kind or another version passes here if short enough, and is refused by
    /// [`crate::wire::Frame::decode`].
    pub fn admit(&self, header: &[u8; HEADER], len: u64) -> std::result::Result<(), LinkRejection> {
        self.admit_length(len)?;
        if self.opaque.is_some() {
            return Ok(());
        }
        let frame = FrameType {
            kind: header[KIND_AT],
            step: u16::from_be_bytes([header[STEP_AT], header[STEP_AT + 1]]),
        };
        let limit =
            Kind::from_u8(frame.kind).map_or(0, |kind| self.payload_limit(kind, frame.step));
        if len - HEADER as u64 > limit as u64 {
            return Err(LinkRejection::OversizedFrame {
                len,
                max: HEADER + limit,
                frame: Some(frame),
            });
        }
        Ok(())
    }

    /// The same check on a whole frame of `kind` at `step` with a payload of `payload` bytes.
    pub fn check(
        &self,
        kind: Kind,
        step: u16,
        payload: usize,
    ) -> std::result::Result<(), LinkRejection> {
        let mut header = [0u8; HEADER];
        header[KIND_AT] = kind as u8;
        header[STEP_AT..STEP_AT + 2].copy_from_slice(&step.to_be_bytes());
        self.admit(&header, (HEADER + payload) as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The length of the sieving modulus `M` among `parties` members (below `2^(bits / 2)` when
    /// no modulus sieves: then the generation refuses to start).
    fn sieve_modulus_bits(settings: &Settings, parties: usize) -> u32 {
        Sieve::new(settings.bits / 2, parties, settings.sieve_bound)
            .map_or(settings.bits / 2, |sieve| {
                sieve.modulus().significant_bits()
            })
    }

    /// Settings for `bits` with batches of 32, the batch the worked figures below count.
    fn batch_of_32(bits: u32) -> Settings {
        let mut settings = Settings::new(bits);
        settings.batch = 32;
        settings
    }

    #[test]
    fn kinds_steps_and_lengths_are_checked() {
        let settings = batch_of_32(1024);
        let b = FrameBounds::generation(&settings, 5).unwrap();
        let limit = b.payload_limit(Kind::Data, step::N_SHARES);
        // t = 2: a member holds the pairs led from two positions before it to its own, 3 of
        // every 5 (and 2 of the last 2): 20 of 32, two values each.
        assert_eq!(limit, 20 * 2 * (4 + 129));
        assert!(b.check(Kind::Data, step::N_SHARES, limit).is_ok());
        assert_eq!(
            b.check(Kind::Data, step::N_SHARES, limit + 1),
            Err(LinkRejection::OversizedFrame {
                len: (HEADER + limit + 1) as u64,
                max: HEADER + limit,
                frame: Some(FrameType {
                    kind: Kind::Data as u8,
                    step: step::N_SHARES
                }),
            })
        );
        // A step the protocol never sends carries nothing; an unknown kind neither.
        assert!(b.check(Kind::Data, 19, 0).is_ok());
        assert!(b.check(Kind::Data, 19, 1).is_err());
        let mut header = [0u8; HEADER];
        header[KIND_AT] = 9;
        assert!(b.admit(&header, HEADER as u64).is_ok());
        assert!(b.admit(&header, HEADER as u64 + 1).is_err());
        assert!(b.admit_length(b.largest() as u64 + 1).is_err());
        // The restart reports and stops: any step.
        assert_eq!(
            b.payload_limit(Kind::Abort, step::CONFIRM),
            4 + MAX_REASON + 5 * 8
        );
        assert_eq!(b.payload_limit(Kind::Fatal, 7), 4 + MAX_REASON + 5 * 8);
    }

    #[test]
    fn the_sieving_frames_follow_the_tree() {
        // 5 parties, t = 2: three units, two products per candidate over 64 candidates: 128
        // products from 3 outputs per extraction, 43 double sharings dealt; level 0 has 64
        // products (13 per king at most), level 1 also 64.
        let settings = batch_of_32(512);
        let b = FrameBounds::generation(&settings, 5).unwrap();
        let m_len = int_len(sieve_modulus_bits(&settings, 5));
        assert_eq!(
            b.payload_limit(Kind::Data, step::SIEVE),
            (64 + 2 * 43) * m_len
        );
        assert_eq!(
            b.payload_limit(Kind::Data, step::sieve_to_king(0)),
            13 * m_len
        );
        assert_eq!(
            b.payload_limit(Kind::Data, step::sieve_from_king(1)),
            13 * m_len
        );
        assert_eq!(b.payload_limit(Kind::Data, step::sieve_to_king(2)), 0);
        // 50 parties, t = 24, test their candidates: a restart among 49 has 25 outputs per
        // extraction, two random sharings per attempt.
        let settings = batch_of_32(2048);
        let b = FrameBounds::generation(&settings, 50).unwrap();
        let sieve = Sieve::new(1024, 49, None).unwrap();
        assert_eq!(sieve.method(24), SieveMethod::Tested);
        let m_len = int_len(sieve.modulus().significant_bits());
        let attempts = sieve.attempts(32);
        let most = (2 * attempts).div_ceil(49 - 24) * m_len;
        assert!(b.payload_limit(Kind::Data, step::SIEVE) >= most);
        assert!(
            b.payload_limit(Kind::Data, step::sieve_to_king(0)) >= attempts.div_ceil(49) * m_len
        );
        assert!(
            b.payload_limit(Kind::Data, step::sieve_from_king(0)) >= attempts.div_ceil(49) * m_len
        );
    }

    #[test]
    fn a_restart_among_fewer_members_is_within_the_bounds() {
        let mut settings = Settings::new(1024);
        settings.threshold = Some(5);
        let whole = FrameBounds::generation(&settings, 20).unwrap();
        for k in 11..20 {
            let fewer = FrameBounds::generation(&settings, k).unwrap();
            for s in [
                step::SIEVE,
                step::sieve_to_king(0),
                step::sieve_from_king(2),
            ] {
                assert!(
                    fewer.payload_limit(Kind::Data, s) <= whole.payload_limit(Kind::Data, s),
                    "{k} members, step {s}"
                );
            }
        }
    }
}

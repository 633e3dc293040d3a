//! Deviating parties, for tests and demonstrations of the failure rules (`hourglass dkg local
//! --adversary ID:BEHAVIOUR`). A [`Deviant`] wraps a party's transport and changes what it sends;
//! the protocol code itself is the honest one. Nothing here is reachable from a cluster
//! configuration: only a caller that wraps its own transport deviates.
//!
//! What each behaviour must lead to (docs/FORMATS.md section 16.2 gives the rules):
//! - [`Deviation::FalseAbort`]: asks for a restart and accuses every other party. Honest parties
//!   see the accused alive, so the generation stops naming the accuser; nobody is removed.
//! - [`Deviation::Garbage`]: sends malformed frames. Each recipient stops naming it and tells the
//!   others, who stop too.
//! - [`Deviation::Silent`]: stops sending after its first rounds. Every survivor times out on it,
//!   so it is removed (if `2t + 1` parties remain) with the cause each observed.
//! - [`Deviation::WrongShare`]: follows the protocol but sends a wrong (well-formed) partial
//!   power of its share of `d` in the final test. The shares then do not combine to a working
//!   key, so the generation stops and no key comes out. (Naming the culprit here would need
//!   verifiable shares, such as Shoup's verification keys, which this protocol does not have.)
//! - [`Deviation::WrongSignature`]: follows the protocol but damages its signature of the
//!   transcript. Every other member finds that it does not verify under its certificate and
//!   stops naming it; no transcript (and no share) is written.
//! - [`Deviation::WrongPartial`]: follows the protocol but sends a wrong (well-formed) partial
//!   signature: in a threshold signature, its proof of correctness then fails, so every other
//!   signer names it and leaves it out (the signature still comes out while `t + 1` valid
//!   partials remain; with exactly `t + 1` signers it is an error naming it); in a
//!   generation, its partial power of the final test message is wrong, and no key comes out
//!   (as with `WrongShare`, which cannot be told apart there).
//! - [`Deviation::WithholdTranscriptSignature`]: sends its signature of the transcript only to
//!   the lowest other member, then echoes the signatures it holds. The members it skipped see
//!   its echo arrive before its signature and stop naming it; the lowest member, which holds
//!   every signature, stops on their word instead of finishing alone. Nobody finishes.
//! - [`Deviation::EquivocateTranscriptSignature`]: sends its signature to the lowest other
//!   member and a second valid one (signed afresh with its key, given by
//!   [`Deviant::with_signer`]) to the others. Both verify, so every member accepts the one it
//!   got; their echoed digests then differ, the sets they show each other hold the other one,
//!   and they stop naming it. Nobody finishes with a transcript the others do not hold.

use std::time::Instant;

use crate::transcript::TranscriptSigner;
use crate::transport::{Event, PartyId, TrafficStats, Transport};
use crate::wire::{step, Frame, Kind, Reader, Tag, Writer};
use crate::{Error, ParamError, Result};

pub(crate) mod deviation;
pub use deviation::Deviation;

/// The protocol step that carries each party's partial power of the final test message.
const FINAL_TEST_STEP: u16 = 42;

/// Data frames a deviant sends honestly before it starts deviating.
const HONEST_FRAMES: u64 = 6;

/// A transport that deviates as told.
pub struct Deviant<T: Transport> {
    inner: T,
    how: Deviation,
    data_sent: std::sync::atomic::AtomicU64,
    signer: Option<TranscriptSigner>,
}

impl<T: Transport> Deviant<T> {
    /// Wraps `inner`.
    pub fn new(inner: T, how: Deviation) -> Self {
        Self {
            inner,
            how,
            data_sent: std::sync::atomic::AtomicU64::new(0),
            signer: None,
        }
    }

    /// Wraps `inner`, holding the party's transcript key: what
    /// [`Deviation::EquivocateTranscriptSignature`] signs its second signature with.
    pub fn with_signer(inner: T, how: Deviation, signer: TranscriptSigner) -> Self {
        Self {
            signer: Some(signer),
            ..Self::new(inner, how)
        }
    }

    /// The lowest other member: the one a transcript-signature deviation treats honestly.
    fn lowest_peer(&self) -> Option<PartyId> {
        self.inner.peers().into_iter().min()
    }

    /// `frame` (this party's signature of the transcript) with another signature: a fresh one
    /// of the same fingerprint when the key is at hand and signs afresh, else the old one
    /// damaged.
    fn second_signature(&self, frame: Frame) -> Vec<u8> {
        let mut r = Reader::new(&frame.payload);
        let fields = (|| Some((r.bytes().ok()?, r.bytes().ok()?, r.bytes().ok()?)))();
        let Some((fingerprint, scheme, old)) = fields else {
            return frame.encode();
        };
        let fresh = <[u8; 32]>::try_from(fingerprint)
            .ok()
            .zip(self.signer.as_ref())
            .and_then(|(f, signer)| signer.sign_fingerprint(&f).ok())
            .map(|s| s.signature)
            .filter(|s| s.as_slice() != old);
        let signature = fresh.unwrap_or_else(|| {
            let mut damaged = old.to_vec();
            if let Some(last) = damaged.last_mut() {
                *last ^= 1;
            }
            damaged
        });
        let mut w = Writer::new();
        w.bytes(fingerprint).bytes(scheme).bytes(&signature);
        Frame {
            payload: w.finish(),
            ..frame
        }
        .encode()
    }

    /// An abort frame naming every other peer: in the restart phase of `frame` if it is an
    /// abort, else asking for a restart in its epoch.
    fn accusation(&self, frame: &Frame) -> Vec<u8> {
        let mut w = Writer::new();
        w.bytes(b"every other party failed (a false accusation, for testing)");
        for p in self.inner.peers() {
            w.bytes(&p.to_be_bytes());
        }
        Frame {
            kind: Kind::Abort,
            session: frame.session,
            tag: if frame.kind == Kind::Abort {
                frame.tag
            } else {
                Tag {
                    epoch: frame.tag.epoch,
                    round: u64::MAX,
                    step: step::ABORT,
                }
            },
            sender: frame.sender,
            payload: w.finish(),
        }
        .encode()
    }
}

impl<T: Transport> Transport for Deviant<T> {
    fn me(&self) -> PartyId {
        self.inner.me()
    }

    fn peers(&self) -> Vec<PartyId> {
        self.inner.peers()
    }

    fn send(&self, to: PartyId, bytes: Vec<u8>) -> Result<()> {
        let Ok(frame) = Frame::decode(&bytes) else {
            return self.inner.send(to, bytes);
        };
        let sent = if frame.kind == Kind::Data {
            self.data_sent
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
                + 1
        } else {
            self.data_sent.load(std::sync::atomic::Ordering::Relaxed)
        };
        let deviating = sent > HONEST_FRAMES;
        match self.how {
            Deviation::FalseAbort => match frame.kind {
                Kind::Abort => self.inner.send(to, self.accusation(&frame)),
                Kind::Data if deviating => {
                    self.inner.send(to, bytes)?;
                    self.inner.send(to, self.accusation(&frame))
                }
                _ => self.inner.send(to, bytes),
            },
            Deviation::Garbage if deviating && frame.kind == Kind::Data => self
                .inner
                .send(to, b"\xffnot a frame, for testing".to_vec()),
            Deviation::Silent if deviating => Ok(()),
            Deviation::WrongShare
                if frame.kind == Kind::Data && frame.tag.step == FINAL_TEST_STEP =>
            {
                let mut wrong = frame;
                // The payload is one length-prefixed value: change its last byte, keeping it
                // well formed and (almost surely) in range.
                if let Some(last) = wrong.payload.last_mut() {
                    *last ^= 1;
                }
                self.inner.send(to, wrong.encode())
            }
            Deviation::WrongPartial
                if frame.kind == Kind::Data
                    && [FINAL_TEST_STEP, step::THRESHOLD_PARTIAL].contains(&frame.tag.step) =>
            {
                let mut wrong = frame;
                // The partial is the payload's first value (a 4-byte length, then its bytes):
                // change its last byte, keeping it well formed and (almost surely) in range.
                let len = wrong
                    .payload
                    .get(..4)
                    .map_or(0, |b| u32::from_be_bytes([b[0], b[1], b[2], b[3]]) as usize);
                if let Some(last) = wrong.payload.get_mut(3 + len) {
                    *last ^= 1;
                }
                self.inner.send(to, wrong.encode())
            }
            Deviation::WithholdTranscriptSignature
                if frame.kind == Kind::Signature
                    && frame.tag.step == step::HELLO
                    && Some(to) != self.lowest_peer() =>
            {
                Ok(())
            }
            Deviation::EquivocateTranscriptSignature
                if frame.kind == Kind::Signature
                    && frame.tag.step == step::HELLO
                    && Some(to) != self.lowest_peer() =>
            {
                self.inner.send(to, self.second_signature(frame))
            }
            Deviation::WrongSignature
                if frame.kind == Kind::Signature && frame.tag.step == step::HELLO =>
            {
                let mut wrong = frame;
                // The signature is the payload's last value: change its last byte.
                if let Some(last) = wrong.payload.last_mut() {
                    *last ^= 1;
                }
                self.inner.send(to, wrong.encode())
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

/// Parses `ID:BEHAVIOUR` (e.g. `2:false-abort`).
pub fn parse_adversary(spec: &str) -> Result<(PartyId, Deviation)> {
    let bad = || {
        Error::from(ParamError::Adversary {
            spec: spec.to_string(),
        })
    };
    let (id, how) = spec.split_once(':').ok_or_else(bad)?;
    let id: PartyId = id.trim().parse().map_err(|_| bad())?;
    let how = Deviation::from_name(how.trim()).ok_or_else(bad)?;
    Ok((id, how))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_both_ways() {
        for (d, n) in Deviation::ALL {
            assert_eq!(Deviation::from_name(n), Some(d));
            assert_eq!(d.name(), n);
            assert_eq!(parse_adversary(&format!("3:{n}")).unwrap(), (3, d));
        }
        for bad in ["", "3", "x:garbage", "3:nonsense", ":silent"] {
            assert!(parse_adversary(bad).is_err(), "{bad}");
        }
    }

    /// The reader must accept what [`Deviant::accusation`] writes (it is a well-formed abort).
    #[test]
    fn accusations_are_well_formed_abort_frames() {
        let mesh = crate::transport::memory_mesh(&[1, 2, 3], Default::default());
        let t = mesh.into_iter().next().unwrap();
        let d = Deviant::new(t, Deviation::FalseAbort);
        let frame = Frame {
            kind: Kind::Data,
            session: [1; 16],
            tag: Tag {
                epoch: 0,
                round: 1,
                step: 1,
            },
            sender: 1,
            payload: Vec::new(),
        };
        let a = Frame::decode(&d.accusation(&frame)).unwrap();
        assert_eq!(a.kind, Kind::Abort);
        let mut r = Reader::new(&a.payload);
        assert!(r.bytes().is_ok());
        let mut named = Vec::new();
        while let Ok(b) = r.bytes() {
            named.push(u32::from_be_bytes(b.try_into().unwrap()));
        }
        assert_eq!(named, vec![2, 3]);
    }
}

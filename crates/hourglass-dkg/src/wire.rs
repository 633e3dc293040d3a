//! The protocol's messages on the wire.
//!
//! Every frame is `magic "HGDK" | version 4 | kind | session (16) | epoch (u32) | round (u64) |
//! step (u16) | sender (u32) | payload length (u32) | payload`, integers big-endian. A payload
//! is a sequence of non-negative integers, each as a `u32` byte length and big-endian
//! magnitude, or raw bytes for the kinds that carry them. Parsing checks every length against
//! what is left, so a malformed frame is an error, never a panic.
//!
//! A [`Kind::Signature`] frame carries, as byte strings, the transcript fingerprint the sender
//! signed (32 bytes), the TLS `SignatureScheme` (`u16be`) and the signature (at most
//! [`MAX_SIGNATURE_BYTES`]): [`SIGNATURE_FRAME_BYTES`] in all.
//!
//! What each frame carries, and so its largest legitimate size, is laid out by
//! [`crate::bounds::FrameBounds`]; the steps of the tag are named in [`step`].

use rug::integer::Order;
use rug::Integer;

/// The four bytes every frame starts with.
pub const MAGIC: &[u8; 4] = b"HGDK";
/// The wire version (7: the echo of the transcript signatures is a digest of the set, and the
/// full sets go only between members whose digests differ, [`step::TRANSCRIPT_SETS`]; 6: the trial division of each batch's moduli is split among the members,
/// who broadcast witnesses, [`step::TRIAL`]; 5: committees from about 15 parties draw their sieved residues by
/// testing random sharings, [`crate::sieve::SieveMethod::Tested`], with other sieving frames;
/// 4: `M_4` holds the odd primes up to 47 only,
/// [`crate::sieve::LEAD_PRIME_MAX`], so a party of version 3 would form other candidates; 3:
/// the transcript signatures are echoed, [`step::TRANSCRIPT_ECHO`]; 2: the sieving tree
/// multiplies with double sharings and kings).
pub const VERSION: u8 = 7;
/// The length of a frame's header, before its payload.
pub const HEADER: usize = 4 + 1 + 1 + 16 + 4 + 8 + 2 + 4 + 4;
/// Where the kind byte is in the header.
pub(crate) const KIND_AT: usize = 5;
/// Where the step (`u16be`) is in the header.
pub(crate) const STEP_AT: usize = 4 + 1 + 1 + 16 + 4 + 8;

/// The longest failure description an abort or fatal frame carries, in bytes.
pub const MAX_REASON: usize = 512;

/// The steps of a frame's tag: which message of a round it is.
pub mod step {
    /// Hello frames (round 0), and the transcript signatures (round 0, [`super::Kind::Signature`]).
    pub const HELLO: u16 = 0;
    /// The echo of every member's transcript signature, as the sender holds them: the
    /// fingerprint and the set's digest (round 1, [`super::Kind::Signature`]).
    pub const TRANSCRIPT_ECHO: u16 = 1;
    /// The full set of signatures, shown to each member whose echoed digest differs from the
    /// sender's, and nothing to the others (round 2, [`super::Kind::Signature`]).
    pub const TRANSCRIPT_SETS: u16 = 2;
    /// Sieving: the contributors' units and every member's double sharings, dealt.
    pub const SIEVE: u16 = 1;
    /// The most levels of the sieving tree the steps below [`N_SHARES`] have room for
    /// (`2^9` contributors).
    pub const MAX_SIEVE_LEVELS: usize = 9;
    /// Sieving tree level `level` (from 0): each member's masked products, to their kings.
    pub const fn sieve_to_king(level: usize) -> u16 {
        2 + 2 * level as u16
    }
    /// Sieving tree level `level` (from 0): each king's opened values, to every member.
    pub const fn sieve_from_king(level: usize) -> u16 {
        3 + 2 * level as u16
    }
    /// Shares of `p_j`, `q_j` for every pair of the batch (BGW over `P`).
    pub const N_SHARES: u16 = 20;
    /// Each member's points of the products, one per pair.
    pub const N_POINTS: u16 = 21;
    /// Each member's trial division witnesses, one per modulus of the batch (0 for none).
    pub const TRIAL: u16 = 22;
    /// The first biprimality value of every survivor of trial division.
    pub const BIPRIMALITY: u16 = 30;
    /// The remaining biprimality values and the BGW shares over `Z_N` of `r_j` and `x_j`.
    pub const GCD_SHARES: u16 = 31;
    /// Each member's point of `r (p + q - 1)`.
    pub const GCD_POINT: u16 = 32;
    /// Additive shares of `phi_j mod e`.
    pub const PHI_PARTS: u16 = 40;
    /// Each member's sum of its shares of `phi mod e`.
    pub const PHI_SUM: u16 = 41;
    /// Each member's partial power of the test message (the rounding fix).
    pub const ROUNDING: u16 = 42;
    /// A joint signature's first step: the request digest and a salt.
    pub const SIGN_REQUEST: u16 = 1;
    /// A joint signature's second step: the partial signature.
    pub const SIGN_PARTIAL: u16 = 2;
    /// A reshare's or refresh's first step: the cluster, the threshold, the epoch, the kind of
    /// share and its public fingerprint, compared field by field.
    pub const RESHARE_AGREE: u16 = 50;
    /// A reshare's or refresh's sharing: each dealer's commitments and the receiver's
    /// sub-share (and, in a refresh, the dealer's public residues).
    pub const RESHARE_DEAL: u16 = 51;
    /// A reshare's or refresh's last step: the fingerprint of the new epoch's public data.
    pub const RESHARE_CONFIRM: u16 = 52;
    /// A threshold signature's first step: the request, a salt, the cluster, threshold, epoch
    /// and public fingerprint.
    pub const THRESHOLD_REQUEST: u16 = 60;
    /// A threshold signature's second step: the partial signature.
    pub const THRESHOLD_PARTIAL: u16 = 61;
    /// A threshold signature's third step: whether the sender's combination verified.
    pub const THRESHOLD_STATUS: u16 = 62;
    /// A threshold signature's fourth step, only when a combination failed: the proof of
    /// correctness of the sender's partial.
    pub const THRESHOLD_PROOF: u16 = 63;
    /// Restart reports, phase 1 (what each party observed).
    pub const ABORT: u16 = u16::MAX;
    /// A stop announced to every member ([`super::Kind::Fatal`]).
    pub const FATAL: u16 = u16::MAX - 1;
    /// Restart reports, phase 2 (what each finally observed).
    pub const CONFIRM: u16 = u16::MAX - 2;
}

/// The longest transcript signature a party may send: 1024 bytes, an RSA-8192 signature (the
/// largest RSA key the ring provider accepts; ECDSA and Ed25519 signatures are far shorter).
pub const MAX_SIGNATURE_BYTES: usize = 1024;

/// The largest [`Kind::Signature`] frame: the header, then three length-prefixed byte strings
/// (the 32-byte fingerprint, the 2-byte scheme and the signature).
pub const SIGNATURE_FRAME_BYTES: usize = HEADER + (4 + 32) + (4 + 2) + (4 + MAX_SIGNATURE_BYTES);

/// The payload of an echo of the transcript signatures ([`step::TRANSCRIPT_ECHO`]): the
/// 32-byte fingerprint and the 32-byte digest of the set, each length-prefixed.
pub const ECHO_PAYLOAD_BYTES: usize = (4 + 32) + (4 + 32);

/// The largest payload of a full set of the transcript signatures among `members` members
/// ([`step::TRANSCRIPT_SETS`]): length-prefixed, the 32-byte fingerprint, then for every
/// member its id (4 bytes), scheme (2) and signature, each length-prefixed.
pub const fn set_payload_bytes(members: usize) -> usize {
    4 + (4 + 32) + members * ((4 + 4) + (4 + 2) + (4 + MAX_SIGNATURE_BYTES))
}

/// What a frame is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[repr(u8)]
pub enum Kind {
    /// Session setup: settings digest, member list, nonce.
    Hello = 1,
    /// A round's values.
    Data = 2,
    /// "Restart without these parties" (failure handling): what the sender observed.
    Abort = 3,
    /// "The generation stops": the sender aborts, naming the parties it holds responsible.
    Fatal = 4,
    /// After a successful generation: the sender's signature of the transcript fingerprint
    /// with its party key (docs/FORMATS.md section 16.6).
    Signature = 5,
}

impl Kind {
    /// The kind with this code.
    pub fn from_u8(b: u8) -> Option<Self> {
        match b {
            1 => Some(Kind::Hello),
            2 => Some(Kind::Data),
            3 => Some(Kind::Abort),
            4 => Some(Kind::Fatal),
            5 => Some(Kind::Signature),
            _ => None,
        }
    }
}

/// A frame's kind and step, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameType {
    /// The kind byte.
    pub kind: u8,
    /// The step.
    pub step: u16,
}

impl std::fmt::Display for FrameType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match Kind::from_u8(self.kind) {
            Some(Kind::Hello) => write!(f, "hello"),
            Some(Kind::Data) => write!(f, "data (step {})", self.step),
            Some(Kind::Abort) => write!(f, "abort"),
            Some(Kind::Fatal) => write!(f, "fatal"),
            Some(Kind::Signature) => write!(f, "signature"),
            None => write!(f, "unknown kind {}", self.kind),
        }
    }
}

/// Where a frame belongs: the session, the restart epoch, the iteration and the step in it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Tag {
    /// Restart counter (each failure-driven restart starts a new epoch).
    pub epoch: u32,
    /// Iteration (batch) number, or a fixed number for the final steps.
    pub round: u64,
    /// Step within the iteration.
    pub step: u16,
}

/// A decoded frame.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// The kind.
    pub kind: Kind,
    /// The session identifier.
    pub session: [u8; 16],
    /// Where it belongs.
    pub tag: Tag,
    /// The sender it claims (checked against the authenticated sender).
    pub sender: u32,
    /// The payload.
    pub payload: Vec<u8>,
}

impl Frame {
    /// Encodes the frame.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(HEADER + self.payload.len());
        out.extend_from_slice(MAGIC);
        out.push(VERSION);
        out.push(self.kind as u8);
        out.extend_from_slice(&self.session);
        out.extend_from_slice(&self.tag.epoch.to_be_bytes());
        out.extend_from_slice(&self.tag.round.to_be_bytes());
        out.extend_from_slice(&self.tag.step.to_be_bytes());
        out.extend_from_slice(&self.sender.to_be_bytes());
        out.extend_from_slice(&(self.payload.len() as u32).to_be_bytes());
        out.extend_from_slice(&self.payload);
        out
    }

    /// Decodes a frame, or says what is wrong with it.
    pub fn decode(bytes: &[u8]) -> Result<Frame, WireError> {
        if bytes.len() < HEADER {
            return Err(WireError::ShortFrame { len: bytes.len() });
        }
        if &bytes[..4] != MAGIC {
            return Err(WireError::BadMagic);
        }
        if bytes[4] != VERSION {
            return Err(WireError::UnsupportedVersion { found: bytes[4] });
        }
        let kind = Kind::from_u8(bytes[5]).ok_or(WireError::UnknownKind { found: bytes[5] })?;
        let mut r = Reader::new(&bytes[6..]);
        let session: [u8; 16] = r.array()?;
        let epoch = u32::from_be_bytes(r.array()?);
        let round = u64::from_be_bytes(r.array()?);
        let step = u16::from_be_bytes(r.array()?);
        let sender = u32::from_be_bytes(r.array()?);
        let len = u32::from_be_bytes(r.array()?) as usize;
        if r.rest().len() != len {
            return Err(WireError::PayloadLength {
                declared: len,
                actual: r.rest().len(),
            });
        }
        Ok(Frame {
            kind,
            session,
            tag: Tag { epoch, round, step },
            sender,
            payload: r.rest().to_vec(),
        })
    }
}

/// Writes a sequence of integers.
#[derive(Debug, Default)]
pub struct Writer {
    out: Vec<u8>,
}

impl Writer {
    /// An empty payload.
    pub fn new() -> Self {
        Writer::default()
    }

    /// Appends a non-negative integer (big-endian, no leading zeros).
    pub fn int(&mut self, x: &Integer) -> &mut Self {
        debug_assert!(*x >= 0);
        // Export native 64-bit words (a copy in GMP) and order the bytes here.
        let limbs = x.to_digits::<u64>(Order::Lsf);
        let len_at = self.out.len();
        self.out.extend_from_slice(&[0; 4]);
        let start = self.out.len();
        for limb in limbs.iter().rev() {
            self.out.extend_from_slice(&limb.to_be_bytes());
        }
        let zeros = self.out[start..].iter().take_while(|&&b| b == 0).count();
        self.out.drain(start..start + zeros);
        let len = (self.out.len() - start) as u32;
        self.out[len_at..start].copy_from_slice(&len.to_be_bytes());
        self
    }

    /// Appends a length-prefixed byte string.
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.out.extend_from_slice(&(b.len() as u32).to_be_bytes());
        self.out.extend_from_slice(b);
        self
    }

    /// The payload.
    pub fn finish(self) -> Vec<u8> {
        self.out
    }
}

/// Reads a payload written by [`Writer`].
#[derive(Debug)]
pub struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Reads `bytes`.
    pub fn new(bytes: &'a [u8]) -> Self {
        Reader { rest: bytes }
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], WireError> {
        if self.rest.len() < N {
            return Err(WireError::Truncated);
        }
        let (head, tail) = self.rest.split_at(N);
        self.rest = tail;
        let mut a = [0u8; N];
        a.copy_from_slice(head);
        Ok(a)
    }

    fn rest(&self) -> &'a [u8] {
        self.rest
    }

    /// The next byte string (on failure nothing is consumed).
    pub fn bytes(&mut self) -> Result<&'a [u8], WireError> {
        let start = self.rest;
        let len = u32::from_be_bytes(self.array()?) as usize;
        if self.rest.len() < len {
            self.rest = start;
            return Err(WireError::ValueLength {
                declared: len,
                left: self.rest.len(),
            });
        }
        let (head, tail) = self.rest.split_at(len);
        self.rest = tail;
        Ok(head)
    }

    /// The next integer, which must be below `bound`.
    pub fn int_below(&mut self, bound: &Integer) -> Result<Integer, WireError> {
        let b = self.bytes()?;
        // Big-endian bytes to native 64-bit words, least significant first (a copy in GMP).
        let limbs: Vec<u64> = b
            .rchunks(8)
            .map(|chunk| {
                let mut word = [0u8; 8];
                word[8 - chunk.len()..].copy_from_slice(chunk);
                u64::from_be_bytes(word)
            })
            .collect();
        let x = Integer::from_digits(&limbs, Order::Lsf);
        if x >= *bound {
            return Err(WireError::OutOfRange {
                bits: x.significant_bits(),
                bound_bits: bound.significant_bits(),
            });
        }
        Ok(x)
    }

    /// `count` integers below `bound`.
    pub fn ints_below(&mut self, count: usize, bound: &Integer) -> Result<Vec<Integer>, WireError> {
        (0..count).map(|_| self.int_below(bound)).collect()
    }

    /// Fails unless everything was read.
    pub fn end(&self) -> Result<(), WireError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(WireError::TrailingBytes {
                count: self.rest.len(),
            })
        }
    }
}

/// What is wrong with a frame or payload on the wire.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum WireError {
    /// Shorter than the frame header.
    #[error("frame of {len} bytes is shorter than the header")]
    ShortFrame {
        /// The frame's length.
        len: usize,
    },
    /// Not an hourglass frame.
    #[error("not a hourglass dkg frame (bad magic)")]
    BadMagic,
    /// A wire version this one does not speak.
    #[error("unsupported wire version {found}")]
    UnsupportedVersion {
        /// The version in the frame.
        found: u8,
    },
    /// A frame kind this one does not know.
    #[error("unknown kind {found}")]
    UnknownKind {
        /// The kind byte.
        found: u8,
    },
    /// A fixed-size field cut short.
    #[error("truncated")]
    Truncated,
    /// A payload length that is not the rest of the frame.
    #[error("payload length {declared} does not match the {actual} bytes that follow")]
    PayloadLength {
        /// The declared length.
        declared: usize,
        /// The bytes that follow.
        actual: usize,
    },
    /// A value longer than what is left.
    #[error("value of {declared} bytes but only {left} left")]
    ValueLength {
        /// The declared length.
        declared: usize,
        /// The bytes left.
        left: usize,
    },
    /// An integer not below its bound.
    #[error("value of {bits} bits is out of range (must be below a {bound_bits}-bit modulus)")]
    OutOfRange {
        /// The value's size.
        bits: u32,
        /// The bound's size.
        bound_bits: u32,
    },
    /// Bytes after the last value.
    #[error("{count} unexpected trailing bytes")]
    TrailingBytes {
        /// How many.
        count: usize,
    },
}

impl WireError {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never: a frame
    /// that cannot be read is malformed input.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_damage_is_reported() {
        let mut w = Writer::new();
        w.int(&Integer::from(12345u32))
            .int(&Integer::ZERO)
            .bytes(b"xy");
        let frame = Frame {
            kind: Kind::Data,
            session: [7; 16],
            tag: Tag {
                epoch: 2,
                round: 99,
                step: 3,
            },
            sender: 4,
            payload: w.finish(),
        };
        let bytes = frame.encode();
        let back = Frame::decode(&bytes).unwrap();
        assert_eq!(back, frame);
        let mut r = Reader::new(&back.payload);
        let bound = Integer::from(100_000u32);
        assert_eq!(r.ints_below(2, &bound).unwrap(), [12345, 0]);
        assert_eq!(r.bytes().unwrap(), b"xy");
        r.end().unwrap();
        let mut r = Reader::new(&back.payload);
        assert_eq!(
            r.int_below(&Integer::from(100u32)),
            Err(WireError::OutOfRange {
                bits: 14,
                bound_bits: 7
            })
        );
        for cut in 0..bytes.len() {
            assert!(Frame::decode(&bytes[..cut]).is_err());
        }
        let mut bad = bytes.clone();
        bad[4] = 9;
        assert_eq!(
            Frame::decode(&bad),
            Err(WireError::UnsupportedVersion { found: 9 })
        );
        bad = bytes.clone();
        bad[5] = 0;
        assert_eq!(
            Frame::decode(&bad),
            Err(WireError::UnknownKind { found: 0 })
        );
        assert_eq!(
            Frame::decode(&bytes[..10]),
            Err(WireError::ShortFrame { len: 10 })
        );
    }

    #[test]
    fn integers_round_trip_minimal_and_big_endian() {
        let values = [
            Integer::ZERO,
            Integer::from(1),
            Integer::from(255),
            Integer::from(256),
            Integer::from(u64::MAX),
            Integer::from(u64::MAX) + 1u32,
            (Integer::from(1) << 1000) - 1u32,
            Integer::from(0x0102_0304_0506_0708_090au128),
        ];
        let mut w = Writer::new();
        for v in &values {
            w.int(v);
        }
        let payload = w.finish();
        let bound = Integer::from(1) << 2000;
        let mut r = Reader::new(&payload);
        for v in &values {
            let expected = v.to_digits::<u8>(Order::Msf);
            let mut peek = Reader::new(r.rest);
            assert_eq!(
                peek.bytes().unwrap(),
                &expected[..],
                "big-endian, no leading zeros"
            );
            assert_eq!(r.int_below(&bound).unwrap(), *v);
        }
        r.end().unwrap();
    }

    proptest::proptest! {
        #[test]
        fn decoding_garbage_never_panics(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            if let Ok(f) = Frame::decode(&bytes) {
                let mut r = Reader::new(&f.payload);
                while r.bytes().is_ok() {}
            }
        }
    }
}

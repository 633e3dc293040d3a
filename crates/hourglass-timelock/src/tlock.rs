//! Time-lock encryption of files (Rivest, Shamir and Wagner, "Time-lock puzzles and
//! timed-release crypto", 1996): content that can only be read after `t` sequential squarings.
//!
//! Sealing makes a fresh modulus `n = pq`, picks a random base `a` and a random 32-byte content
//! key `K`, computes `b = a^(2^t) mod n` *fast* through the trapdoor (`r = 2^t mod phi(n)`, then
//! `b = a^r mod n`), and publishes `C_K = (K + b) mod n` in the file header. The content is
//! encrypted under `K` with XChaCha20-Poly1305 in the STREAM construction (64 KiB chunks, the
//! whole header as associated data), so files of any size stream through in constant memory.
//! `p`, `q` and `phi(n)` live in zeroizing [`SecretInt`]s and are never written anywhere.
//!
//! Opening has no trapdoor: it computes `b` by `t` sequential squarings on the error-checked
//! engine (checkpoints bound to the file header, clean stops), recovers `K = (C_K - b) mod n`
//! and decrypts. The byte layout is specified in docs/FORMATS.md ("Time-lock files").
//!
//! ```
//! use hourglass_arith::entropy::SeededEntropy;
//! use hourglass_timelock::tlock::{open, seal, OpenOutcome, SealParams};
//! use hourglass_timelock::SolveOptions;
//! use std::sync::atomic::AtomicBool;
//!
//! // Seeded entropy is insecure: for examples and tests only.
//! let mut rng = SeededEntropy::new(b"tlock doc example");
//! let mut sealed = Vec::new();
//! let params = SealParams::new(1024, 2000);
//! seal(&mut &b"open after 2000 squarings"[..], &mut sealed, &params, &mut rng).unwrap();
//!
//! let mut plain = Vec::new();
//! let stop = AtomicBool::new(false);
//! let outcome = open(&mut &sealed[..], &mut plain, &SolveOptions::default(), &stop, &mut |_| {});
//! assert!(matches!(outcome, Ok(OpenOutcome::Opened { .. })));
//! assert_eq!(plain, b"open after 2000 squarings");
//! ```

use std::io::{Read, Write};
use std::sync::atomic::AtomicBool;

use chacha20poly1305::aead::generic_array::GenericArray;
use chacha20poly1305::aead::stream::{DecryptorBE32, EncryptorBE32};
use chacha20poly1305::{KeyInit, XChaCha20Poly1305};
use hourglass_arith::entropy::{random_range, EntropySource};
use hourglass_arith::modular::{pow2_mod_ct, pow_mod_ct};
use hourglass_arith::prime::{random_prime, PrimeRequest};
use hourglass_arith::secret::{mod_ct, SecretInt};
use hourglass_arith::squaring::Progress;
use hourglass_arith::Integer;
use rug::integer::Order;
use sha2::{Digest, Sha256};
use zeroize::Zeroizing;

use crate::rsw::{check_squarings, solve_rsw_in_context, squarings_problem, RswPuzzle};
use crate::rsw::{SolveOptions, SolveOutcome};
use crate::ParamError;

/// The first 8 bytes of every time-lock file.
pub const MAGIC: &[u8; 8] = b"HGTLOCK\0";
/// The format version this code writes: 2 adds the trailer (SHA-256 of the header and the
/// body), so a damaged file is found before the squarings.
pub const VERSION: u16 = 2;
/// The oldest format version this code reads (version 1: no trailer).
pub const MIN_VERSION: u16 = 1;
/// Bytes of a version-2 file's trailer: SHA-256 of everything before it.
pub const TRAILER_SIZE: usize = 32;
/// Plaintext bytes per STREAM chunk (every chunk but the last is exactly this long).
pub const CHUNK_SIZE: usize = 1 << 16;
/// Poly1305 tag bytes after each chunk.
pub const TAG_SIZE: usize = 16;
/// Bytes of the STREAM nonce prefix (24-byte XChaCha20 nonce less a 4-byte counter and a
/// 1-byte last-chunk flag).
pub const NONCE_PREFIX_SIZE: usize = 19;
/// Bytes of the content key `K`.
pub const KEY_SIZE: usize = 32;
/// Smallest modulus accepted, in bits.
pub const MIN_MODULUS_BITS: u32 = 1024;
/// Largest modulus accepted, in bits: what the squaring kernels support.
pub const MAX_MODULUS_BITS: u32 = hourglass_arith::squaring::MAX_MODULUS_BITS;
/// The content length recorded when it was not known in advance (content read from a pipe).
pub const UNKNOWN_LENGTH: u64 = u64::MAX;
/// Most chunks a STREAM with a 32-bit counter can hold.
const MAX_CHUNKS: u64 = u32::MAX as u64;
/// magic, version, t, content length, modulus length.
const FIXED_PART: usize = 8 + 2 + 8 + 8 + 2;

/// Errors from sealing and opening time-lock files.
///
/// Authentication failures are deliberately unspecific: which chunk or which check failed is
/// not reported.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlockError {
    /// The input does not start with the time-lock magic bytes.
    #[error("not an hourglass time-lock file (wrong magic bytes)")]
    NotTlock,
    /// A format version this code does not read.
    #[error("unsupported time-lock file version {0} (this build reads versions {MIN_VERSION} to {VERSION})")]
    UnsupportedVersion(u16),
    /// The body does not match the trailer written at sealing: the file was damaged (a bad
    /// copy, a flipped bit) or edited. Found before any squaring.
    #[error("the time-lock file is damaged: its content does not match the checksum written when it was sealed")]
    Damaged,
    /// The header is malformed or its checksum does not match.
    #[error("corrupt time-lock header: {0}")]
    CorruptHeader(HeaderProblem),
    /// The file ends early.
    #[error("the time-lock file is truncated: {0}")]
    Truncated(Truncation),
    /// The content does not authenticate (or the recovered key is impossible): the file was
    /// modified, truncated or corrupted. Nothing about the cause is revealed.
    #[error("the time-lock file does not authenticate: it was modified, truncated or corrupted")]
    Authentication,
    /// Sealing computed inconsistent values (a hardware fault); nothing usable was produced.
    #[error("a computation fault was detected while sealing; the result was withheld")]
    FaultDetected,
    /// Reading or writing failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done ("reading the content", ...).
        context: &'static str,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// Parameters, entropy, arithmetic or checkpoint failures.
    #[error(transparent)]
    Timelock(#[from] crate::Error),
}

impl TlockError {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never. A
    /// file that fails its authentication is damaged or forged, not judged: an error.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

/// What is wrong with a time-lock header (or the age stanza that carries one).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderProblem {
    /// A modulus that is even or outside the supported sizes.
    #[error("the modulus must be odd with {min} to {max} bits (it has {bits})")]
    Modulus {
        /// The modulus's size.
        bits: u32,
        /// The smallest size.
        min: u32,
        /// The largest size.
        max: u32,
    },
    /// A recorded modulus length outside the supported sizes.
    #[error("modulus length of {bytes} bytes is outside {min}..={max}")]
    ModulusLength {
        /// The recorded length.
        bytes: usize,
        /// The smallest length.
        min: usize,
        /// The largest length.
        max: usize,
    },
    /// A modulus with leading zero bytes (not the minimal encoding).
    #[error("the modulus has leading zero bytes")]
    LeadingZeros,
    /// A base outside `1 < a < n - 1`.
    #[error("the base a must satisfy 1 < a < n - 1")]
    Base,
    /// A hidden key not below `n`.
    #[error("the hidden key C_K must be below n")]
    HiddenKey,
    /// A number of squarings out of range.
    #[error("invalid parameters: {0}")]
    Squarings(#[source] ParamError),
    /// A content length more than one file can hold.
    #[error("the content length exceeds what one file can hold")]
    ContentLength,
    /// A header checksum that does not match.
    #[error("checksum mismatch: the header was damaged or edited")]
    Checksum,
    /// An age stanza that does not carry a sealed file key as it says.
    #[error("hourglass stanza: {0}")]
    Stanza(#[source] StanzaProblem),
}

/// What is wrong with an age stanza of the hourglass plugin.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StanzaProblem {
    /// A body longer than a sealed file key.
    #[error("the body is too long")]
    BodyTooLong,
    /// Arguments that disagree with the header in the body.
    #[error("the arguments disagree with the sealed key")]
    ArgumentsMismatch,
    /// A body that is not a sealed 16-byte file key.
    #[error("the body is not a sealed 16-byte file key")]
    NotFileKey,
    /// A stanza version this plugin does not read.
    #[error("version {found} (this plugin reads {supported})")]
    Version {
        /// The version in the stanza.
        found: String,
        /// The version this plugin reads.
        supported: &'static str,
    },
    /// Not the three arguments (version, t, bits).
    #[error("expected 3 arguments (version, t, bits)")]
    Arguments {
        /// The number of arguments found.
        found: usize,
    },
}

/// Where a time-lock file ends early.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Truncation {
    /// Inside the header.
    #[error("the header is incomplete")]
    Header,
    /// Right after the header.
    #[error("nothing follows the header")]
    NoBody,
    /// Inside the last chunk's tag.
    #[error("the last chunk is shorter than its tag")]
    LastChunk,
    /// Before the trailer.
    #[error("the trailer is missing")]
    Trailer,
}

impl From<hourglass_arith::Error> for TlockError {
    fn from(e: hourglass_arith::Error) -> Self {
        Self::Timelock(crate::Error::Arith(e))
    }
}

/// Result alias for time-lock files.
pub type TlockResult<T> = std::result::Result<T, TlockError>;

fn io(context: &'static str) -> impl FnOnce(std::io::Error) -> TlockError {
    move |source| TlockError::Io { context, source }
}

/// The 32-byte content key `K`, wiped on drop.
pub struct ContentKey(Zeroizing<[u8; KEY_SIZE]>);

impl std::fmt::Debug for ContentKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ContentKey(...)")
    }
}

impl ContentKey {
    /// The key bytes. Anyone holding them can read the content at once.
    pub fn expose(&self) -> &[u8; KEY_SIZE] {
        &self.0
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(GenericArray::from_slice(&self.0[..]))
    }
}

/// Ciphertext bytes after the header for `content_len` bytes of content: one tag per chunk,
/// and at least one (possibly empty) chunk.
pub fn body_len(content_len: u64) -> u64 {
    let chunks = content_len.div_ceil(CHUNK_SIZE as u64).max(1);
    content_len + chunks * TAG_SIZE as u64
}

/// The header of a time-lock file: the puzzle `(n, a, t)`, the hidden key `C_K`, the STREAM
/// nonce prefix and the content length. Its exact bytes are the associated data of every chunk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlockHeader {
    version: u16,
    n: Integer,
    a: Integer,
    t: u64,
    c_k: Integer,
    nonce_prefix: [u8; NONCE_PREFIX_SIZE],
    content_len: Option<u64>,
    encoded: Vec<u8>,
}

fn fixed_bytes(x: &Integer, len: usize) -> Vec<u8> {
    let digits = x.to_digits::<u8>(Order::Msf);
    let mut out = vec![0u8; len.saturating_sub(digits.len())];
    out.extend_from_slice(&digits);
    out
}

/// Checks the ranges of the header fields (everything but the checksum).
fn check_fields(
    n: &Integer,
    a: &Integer,
    t: u64,
    c_k: &Integer,
    content_len: Option<u64>,
) -> TlockResult<()> {
    let bad = |why: HeaderProblem| Err(TlockError::CorruptHeader(why));
    let bits = n.significant_bits();
    if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&bits) || n.is_even() {
        return bad(HeaderProblem::Modulus {
            bits,
            min: MIN_MODULUS_BITS,
            max: MAX_MODULUS_BITS,
        });
    }
    if *a <= 1 || *a >= Integer::from(n - 1u32) {
        return bad(HeaderProblem::Base);
    }
    if *c_k < 0 || c_k >= n {
        return bad(HeaderProblem::HiddenKey);
    }
    if let Some(why) = squarings_problem(t) {
        return bad(HeaderProblem::Squarings(why));
    }
    if content_len.is_some_and(|len| len.div_ceil(CHUNK_SIZE as u64) > MAX_CHUNKS) {
        return bad(HeaderProblem::ContentLength);
    }
    Ok(())
}

impl TlockHeader {
    fn new(
        n: Integer,
        a: Integer,
        t: u64,
        c_k: Integer,
        nonce_prefix: [u8; NONCE_PREFIX_SIZE],
        content_len: Option<u64>,
    ) -> TlockResult<Self> {
        check_fields(&n, &a, t, &c_k, content_len)?;
        let k = n.significant_bits().div_ceil(8) as usize;
        let mut encoded = Vec::with_capacity(FIXED_PART + 3 * k + NONCE_PREFIX_SIZE + 32);
        encoded.extend_from_slice(MAGIC);
        encoded.extend_from_slice(&VERSION.to_be_bytes());
        encoded.extend_from_slice(&t.to_be_bytes());
        encoded.extend_from_slice(&content_len.unwrap_or(UNKNOWN_LENGTH).to_be_bytes());
        encoded.extend_from_slice(&(k as u16).to_be_bytes());
        for x in [&n, &a, &c_k] {
            encoded.extend_from_slice(&fixed_bytes(x, k));
        }
        encoded.extend_from_slice(&nonce_prefix);
        let checksum = Sha256::digest(&encoded);
        encoded.extend_from_slice(&checksum);
        Ok(Self {
            version: VERSION,
            n,
            a,
            t,
            c_k,
            nonce_prefix,
            content_len,
            encoded,
        })
    }

    /// Reads and checks a header, leaving `reader` at the first chunk. Checks, in order: the
    /// magic bytes, the version, the modulus length, the SHA-256 checksum (so accidental damage
    /// is found before hours of squaring), then the ranges of every field.
    pub fn read_from(reader: &mut dyn Read) -> TlockResult<Self> {
        let mut encoded = Vec::with_capacity(1024);
        let got = read_up_to(reader, &mut encoded, MAGIC.len())?;
        if encoded[..] != MAGIC[..got] {
            return Err(TlockError::NotTlock);
        }
        let need = |encoded: &mut Vec<u8>, reader: &mut dyn Read, len: usize| {
            if read_up_to(reader, encoded, len)? < len {
                return Err(TlockError::Truncated(Truncation::Header));
            }
            Ok(())
        };
        if got < MAGIC.len() {
            return Err(TlockError::Truncated(Truncation::Header));
        }
        need(&mut encoded, reader, 2)?;
        let version = u16::from_be_bytes([encoded[8], encoded[9]]);
        if !(MIN_VERSION..=VERSION).contains(&version) {
            return Err(TlockError::UnsupportedVersion(version));
        }
        need(&mut encoded, reader, FIXED_PART - 10)?;
        let be64 = |b: &[u8]| u64::from_be_bytes(b.try_into().unwrap_or([0; 8]));
        let t = be64(&encoded[10..18]);
        let len_field = be64(&encoded[18..26]);
        let k = usize::from(u16::from_be_bytes([encoded[26], encoded[27]]));
        let (min_k, max_k) = (
            MIN_MODULUS_BITS.div_ceil(8) as usize,
            MAX_MODULUS_BITS.div_ceil(8) as usize,
        );
        if !(min_k..=max_k).contains(&k) {
            return Err(TlockError::CorruptHeader(HeaderProblem::ModulusLength {
                bytes: k,
                min: min_k,
                max: max_k,
            }));
        }
        need(&mut encoded, reader, 3 * k + NONCE_PREFIX_SIZE + 32)?;
        let (body, checksum) = encoded.split_at(encoded.len() - 32);
        if Sha256::digest(body).as_slice() != checksum {
            return Err(TlockError::CorruptHeader(HeaderProblem::Checksum));
        }
        let field = |i: usize| {
            let start = FIXED_PART + i * k;
            Integer::from_digits(&encoded[start..start + k], Order::Msf)
        };
        let (n, a, c_k) = (field(0), field(1), field(2));
        if n.significant_bits().div_ceil(8) as usize != k {
            return Err(TlockError::CorruptHeader(HeaderProblem::LeadingZeros));
        }
        let mut nonce_prefix = [0u8; NONCE_PREFIX_SIZE];
        let start = FIXED_PART + 3 * k;
        nonce_prefix.copy_from_slice(&encoded[start..start + NONCE_PREFIX_SIZE]);
        let content_len = (len_field != UNKNOWN_LENGTH).then_some(len_field);
        check_fields(&n, &a, t, &c_k, content_len)?;
        Ok(Self {
            version,
            n,
            a,
            t,
            c_k,
            nonce_prefix,
            content_len,
            encoded,
        })
    }

    /// The header's exact bytes (the associated data of every chunk).
    pub fn as_bytes(&self) -> &[u8] {
        &self.encoded
    }

    /// The modulus `n`.
    pub fn n(&self) -> &Integer {
        &self.n
    }

    /// The base `a`.
    pub fn base(&self) -> &Integer {
        &self.a
    }

    /// Squarings needed to open: `t`.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// The hidden key `C_K = (K + a^(2^t)) mod n`.
    pub fn hidden_key(&self) -> &Integer {
        &self.c_k
    }

    /// The STREAM nonce prefix.
    pub fn nonce_prefix(&self) -> &[u8; NONCE_PREFIX_SIZE] {
        &self.nonce_prefix
    }

    /// The content length, when it was known at sealing.
    pub fn content_len(&self) -> Option<u64> {
        self.content_len
    }

    /// Bits of the modulus.
    pub fn modulus_bits(&self) -> u32 {
        self.n.significant_bits()
    }

    /// The whole file's length in bytes, when the content length is recorded: lets a reader
    /// spot a truncated or extended file before spending hours on the squarings.
    pub fn expected_file_len(&self) -> Option<u64> {
        self.content_len
            .map(|len| self.encoded.len() as u64 + body_len(len) + self.trailer_len())
    }

    /// The file's format version (1 or 2).
    pub fn version(&self) -> u16 {
        self.version
    }

    /// Bytes of the trailer after the body: [`TRAILER_SIZE`] from version 2, none before.
    fn trailer_len(&self) -> u64 {
        if self.version >= 2 {
            TRAILER_SIZE as u64
        } else {
            0
        }
    }

    /// SHA-256 of the header bytes: names this file (and nothing else).
    pub fn digest(&self) -> [u8; 32] {
        Sha256::digest(&self.encoded).into()
    }

    /// The puzzle whose solution `a^(2^t) mod n` unlocks the key.
    pub fn puzzle(&self) -> RswPuzzle {
        RswPuzzle::new(self.n.clone(), self.a.clone(), self.t)
            .unwrap_or_else(|_| unreachable!("header fields are checked on construction"))
    }

    /// The bytes a checkpoint of the opening run is bound to: a label and [`Self::digest`].
    pub fn checkpoint_context(&self) -> Vec<u8> {
        let mut ctx = b"hourglass-tlock-open-v1\0".to_vec();
        ctx.extend_from_slice(&self.digest());
        ctx
    }

    /// The content key from the puzzle solution `w = a^(2^t) mod n`: `K = (C_K - w) mod n`,
    /// which must fit in 32 bytes (otherwise `w` is wrong or the header was forged).
    pub fn recover_key(&self, w: &Integer) -> TlockResult<ContentKey> {
        let mut k = SecretInt::new(Integer::from(&self.c_k - w));
        k.expose_mut().modulo_mut(&self.n);
        let fits = k.expose().significant_bits() <= 8 * KEY_SIZE as u32;
        let mut key = Zeroizing::new([0u8; KEY_SIZE]);
        if fits {
            k.expose().write_digits(&mut key[..], Order::Msf);
        }
        drop(k);
        if !fits {
            return Err(TlockError::Authentication);
        }
        Ok(ContentKey(key))
    }
}

/// Appends up to `len` bytes from `reader` to `buf`; returns how many came (fewer only at the
/// end of the input).
fn read_up_to(reader: &mut dyn Read, buf: &mut Vec<u8>, len: usize) -> TlockResult<usize> {
    Read::take(&mut *reader, len as u64)
        .read_to_end(buf)
        .map_err(io("reading the time-lock file"))
}

/// A fresh modulus `n = pq` with its trapdoor, for sealing one file. The factors are wiped when
/// it is dropped (which [`Self::seal`] does), and no method reveals them.
pub struct SealingKey {
    n: Integer,
    p: SecretInt,
    q: SecretInt,
}

impl std::fmt::Debug for SealingKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SealingKey")
            .field("bits", &self.bits())
            .finish_non_exhaustive()
    }
}

impl SealingKey {
    /// Two fresh random primes of half the size each (top two bits set, so `n` has exactly
    /// `bits` bits), `MIN_MODULUS_BITS <= bits <= MAX_MODULUS_BITS`.
    pub fn generate(bits: u32, rng: &mut dyn EntropySource) -> TlockResult<Self> {
        if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&bits) {
            return Err(crate::Error::from(ParamError::TlockModulusBits {
                bits,
                min: MIN_MODULUS_BITS,
                max: MAX_MODULUS_BITS,
            })
            .into());
        }
        let half = bits / 2;
        loop {
            let p = SecretInt::new(random_prime(&PrimeRequest::new(bits - half), rng)?);
            let q = SecretInt::new(random_prime(&PrimeRequest::new(half), rng)?);
            if p != q {
                let n = Integer::from(p.expose() * q.expose());
                return Ok(Self { n, p, q });
            }
        }
    }

    /// The public modulus (for example to measure the squaring rate on it before choosing `t`).
    pub fn n(&self) -> &Integer {
        &self.n
    }

    /// Bits of the modulus.
    pub fn bits(&self) -> u32 {
        self.n.significant_bits()
    }

    /// `b = a^(2^t) mod n` through the trapdoor, checked against an independent computation
    /// modulo `p` and `q` (a fault here would lock the content away for good).
    fn shortcut(&self, a: &Integer, t: u64) -> TlockResult<SecretInt> {
        let one = |x: &SecretInt| SecretInt::new(Integer::from(x.expose() - 1u32));
        let (p1, q1) = (one(&self.p), one(&self.q));
        let phi = SecretInt::new(Integer::from(p1.expose() * q1.expose()));
        let r = SecretInt::new(pow2_mod_ct(t, phi.expose())?);
        let b = SecretInt::new(pow_mod_ct(a, r.expose(), &self.n)?);
        for (prime, prime_1) in [(&self.p, &p1), (&self.q, &q1)] {
            let r_i = SecretInt::new(pow2_mod_ct(t, prime_1.expose())?);
            let b_i = SecretInt::new(pow_mod_ct(a, r_i.expose(), prime.expose())?);
            let b_mod = SecretInt::new(mod_ct(b.expose(), prime.expose())?);
            if b_mod != b_i {
                return Err(TlockError::FaultDetected);
            }
        }
        Ok(b)
    }

    /// Seals the content read from `reader` into `writer` for `t` squarings, consuming the key
    /// (one modulus per file; the trapdoor is wiped on return). `content_len`, when given, is
    /// recorded in the header and must equal the bytes actually read. Returns the header.
    ///
    /// On error, `writer` may hold a partial file: write to a temporary place and keep it only
    /// on `Ok`.
    pub fn seal(
        self,
        t: u64,
        content_len: Option<u64>,
        reader: &mut dyn Read,
        writer: &mut dyn Write,
        rng: &mut dyn EntropySource,
    ) -> TlockResult<TlockHeader> {
        check_squarings(t)?;
        let low = Integer::from(2);
        let high = Integer::from(&self.n - 1u32);
        let a = random_range(rng, &low, &high)?;
        let b = self.shortcut(&a, t)?;
        let mut key = ContentKey(Zeroizing::new([0u8; KEY_SIZE]));
        rng.fill(&mut key.0[..])?;
        let k_int = SecretInt::new(Integer::from_digits(&key.0[..], Order::Msf));
        let mut c_k = Integer::from(k_int.expose() + b.expose());
        c_k.modulo_mut(&self.n);
        drop((b, k_int));
        let mut nonce_prefix = [0u8; NONCE_PREFIX_SIZE];
        rng.fill(&mut nonce_prefix)?;
        let header = TlockHeader::new(self.n.clone(), a, t, c_k, nonce_prefix, content_len)?;
        drop(self);
        let mut hashing = HashingWriter {
            inner: writer,
            hasher: Sha256::new(),
        };
        hashing
            .write_all(header.as_bytes())
            .map_err(io("writing the time-lock file"))?;
        let read = encrypt_body(&header, &key, reader, &mut hashing)?;
        let trailer = hashing.hasher.finalize();
        writer
            .write_all(&trailer)
            .map_err(io("writing the time-lock file"))?;
        if content_len.is_some_and(|len| len != read) {
            return Err(crate::Error::from(ParamError::ContentChanged {
                read,
                expected: content_len.unwrap_or_default(),
            })
            .into());
        }
        writer.flush().map_err(io("writing the time-lock file"))?;
        Ok(header)
    }
}

/// What to seal: modulus size, squarings, and (optionally) the content length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealParams {
    /// Modulus bits (2048 is the usual choice; at least [`MIN_MODULUS_BITS`]).
    pub bits: u32,
    /// Squarings needed to open.
    pub t: u64,
    /// The content length, if known: recorded so openers can detect truncated files early.
    pub content_len: Option<u64>,
}

impl SealParams {
    /// `bits`-bit modulus, `t` squarings, content length not recorded.
    pub fn new(bits: u32, t: u64) -> Self {
        Self {
            bits,
            t,
            content_len: None,
        }
    }
}

/// Seals `reader` into `writer` in one call: a fresh [`SealingKey`], then [`SealingKey::seal`].
pub fn seal(
    reader: &mut dyn Read,
    writer: &mut dyn Write,
    params: &SealParams,
    rng: &mut dyn EntropySource,
) -> TlockResult<TlockHeader> {
    check_squarings(params.t)?;
    SealingKey::generate(params.bits, rng)?.seal(params.t, params.content_len, reader, writer, rng)
}

fn encrypt_body(
    header: &TlockHeader,
    key: &ContentKey,
    reader: &mut dyn Read,
    writer: &mut dyn Write,
) -> TlockResult<u64> {
    let mut stream =
        EncryptorBE32::from_aead(key.cipher(), GenericArray::from_slice(&header.nonce_prefix));
    let ad = header.as_bytes();
    let reading = "reading the content";
    let mut chunk = Zeroizing::new(Vec::with_capacity(CHUNK_SIZE + TAG_SIZE));
    let mut next = Zeroizing::new(Vec::with_capacity(CHUNK_SIZE + TAG_SIZE));
    let mut total = 0u64;
    Read::take(&mut *reader, CHUNK_SIZE as u64)
        .read_to_end(&mut chunk)
        .map_err(io(reading))?;
    loop {
        total += chunk.len() as u64;
        next.clear();
        if chunk.len() == CHUNK_SIZE {
            Read::take(&mut *reader, CHUNK_SIZE as u64)
                .read_to_end(&mut next)
                .map_err(io(reading))?;
        }
        if next.is_empty() {
            stream
                .encrypt_last_in_place(ad, &mut *chunk)
                .map_err(|_| too_long())?;
            writer
                .write_all(&chunk)
                .map_err(io("writing the time-lock file"))?;
            return Ok(total);
        }
        stream
            .encrypt_next_in_place(ad, &mut *chunk)
            .map_err(|_| too_long())?;
        writer
            .write_all(&chunk)
            .map_err(io("writing the time-lock file"))?;
        std::mem::swap(&mut chunk, &mut next);
    }
}

fn too_long() -> TlockError {
    crate::Error::from(ParamError::ContentTooLong).into()
}

/// Decrypts the chunks that follow the header from `reader` into `writer` with `key`, and
/// returns the content length.
///
/// Every chunk is authenticated before it is written, but a truncated or edited file is only
/// known to be complete when this returns `Ok`: write to a temporary place and keep it only
/// then (the command line does). An empty last chunk is accepted only for empty content.
pub fn decrypt_body(
    header: &TlockHeader,
    key: &ContentKey,
    reader: &mut dyn Read,
    writer: &mut dyn Write,
) -> TlockResult<u64> {
    if header.version < 2 {
        return decrypt_chunks(header, key, reader, writer);
    }
    let mut body = TrailerReader::new(reader, header.as_bytes());
    let len = decrypt_chunks(header, key, &mut body, writer)?;
    // The chunks authenticated; a trailer that does not match means an edited file.
    body.finish().map_err(|_| TlockError::Authentication)?;
    Ok(len)
}

/// Checks a version-2 file's body against its trailer, without the key: `reader` is positioned
/// after the header, and everything up to the end is read. This finds accidental damage (a bad
/// copy, a flipped bit) before hours of squarings; it is not authentication (anyone can
/// recompute a trailer), which the chunks' tags give when the file is opened. Version-1 files
/// have no trailer and pass.
pub fn check_body(header: &TlockHeader, reader: &mut dyn Read) -> TlockResult<()> {
    if header.version < 2 {
        return Ok(());
    }
    let mut body = TrailerReader::new(reader, header.as_bytes());
    std::io::copy(&mut body, &mut std::io::sink()).map_err(io("reading the time-lock file"))?;
    body.finish()
}

/// A writer that hashes what passes through it (for the trailer).
struct HashingWriter<'a> {
    inner: &'a mut dyn Write,
    hasher: Sha256,
}

impl Write for HashingWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A reader that passes a file's body through and holds back its last [`TRAILER_SIZE`] bytes
/// (the trailer), hashing the header and everything it passes.
struct TrailerReader<'a> {
    inner: &'a mut dyn Read,
    held: Vec<u8>,
    hasher: Sha256,
    eof: bool,
}

impl<'a> TrailerReader<'a> {
    fn new(inner: &'a mut dyn Read, header: &[u8]) -> Self {
        let mut hasher = Sha256::new();
        hasher.update(header);
        Self {
            inner,
            held: Vec::with_capacity(CHUNK_SIZE + TRAILER_SIZE),
            hasher,
            eof: false,
        }
    }

    /// Reads to the end and compares the trailer with the hash of what came before it.
    fn finish(mut self) -> TlockResult<()> {
        std::io::copy(&mut self, &mut std::io::sink()).map_err(io("reading the time-lock file"))?;
        if self.held.len() != TRAILER_SIZE {
            return Err(TlockError::Truncated(Truncation::Trailer));
        }
        let digest = std::mem::take(&mut self.hasher).finalize();
        if digest.as_slice() != self.held.as_slice() {
            return Err(TlockError::Damaged);
        }
        Ok(())
    }
}

impl Read for TrailerReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        while !self.eof && self.held.len() < TRAILER_SIZE + out.len() {
            let mut buf = [0u8; 8192];
            let want = (TRAILER_SIZE + out.len() - self.held.len()).min(buf.len());
            let got = self.inner.read(&mut buf[..want])?;
            if got == 0 {
                self.eof = true;
            }
            self.held.extend_from_slice(&buf[..got]);
        }
        let n = self.held.len().saturating_sub(TRAILER_SIZE).min(out.len());
        out[..n].copy_from_slice(&self.held[..n]);
        self.hasher.update(&self.held[..n]);
        self.held.drain(..n);
        Ok(n)
    }
}

/// Decrypts the chunks of a body (without its trailer).
fn decrypt_chunks(
    header: &TlockHeader,
    key: &ContentKey,
    reader: &mut dyn Read,
    writer: &mut dyn Write,
) -> TlockResult<u64> {
    let mut stream =
        DecryptorBE32::from_aead(key.cipher(), GenericArray::from_slice(&header.nonce_prefix));
    let ad = header.as_bytes();
    let unit = CHUNK_SIZE + TAG_SIZE;
    let mut chunk = Zeroizing::new(Vec::with_capacity(unit));
    let mut next = Zeroizing::new(Vec::with_capacity(unit));
    let mut total = 0u64;
    read_up_to(reader, &mut chunk, unit)?;
    loop {
        if chunk.len() < TAG_SIZE {
            return Err(TlockError::Truncated(if total == 0 && chunk.is_empty() {
                Truncation::NoBody
            } else {
                Truncation::LastChunk
            }));
        }
        next.clear();
        if chunk.len() == unit {
            read_up_to(reader, &mut next, unit)?;
        }
        if next.is_empty() {
            stream
                .decrypt_last_in_place(ad, &mut *chunk)
                .map_err(|_| TlockError::Authentication)?;
            if chunk.is_empty() && total > 0 {
                return Err(TlockError::Authentication);
            }
            total += chunk.len() as u64;
            writer
                .write_all(&chunk)
                .map_err(io("writing the content"))?;
            break;
        }
        stream
            .decrypt_next_in_place(ad, &mut *chunk)
            .map_err(|_| TlockError::Authentication)?;
        total += chunk.len() as u64;
        writer
            .write_all(&chunk)
            .map_err(io("writing the content"))?;
        std::mem::swap(&mut chunk, &mut next);
    }
    if header.content_len.is_some_and(|len| len != total) {
        return Err(TlockError::Authentication);
    }
    writer.flush().map_err(io("writing the content"))?;
    Ok(total)
}

/// How the key search ended.
#[derive(Debug)]
pub enum KeyOutcome {
    /// The squarings are done and the key is recovered.
    Recovered(ContentKey),
    /// Stopped by the flag after `done` verified squarings (saved in the checkpoint, if any).
    Stopped {
        /// Verified squarings so far.
        done: u64,
    },
}

/// Computes `a^(2^t) mod n` by `t` sequential squarings (resuming from `options.checkpoint` if
/// it holds a state of this very file) and recovers the content key.
///
/// The finished state saved in the checkpoint reveals the key: delete the checkpoint once the
/// content is out (the command line does).
pub fn solve_key(
    header: &TlockHeader,
    options: &SolveOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> TlockResult<KeyOutcome> {
    let puzzle = header.puzzle();
    match solve_rsw_in_context(
        &puzzle,
        &header.checkpoint_context(),
        options,
        stop,
        progress,
    )? {
        SolveOutcome::Solved(w) => {
            let w = SecretInt::new(w);
            Ok(KeyOutcome::Recovered(header.recover_key(w.expose())?))
        }
        SolveOutcome::Stopped { done } => Ok(KeyOutcome::Stopped { done }),
    }
}

/// How opening ended.
#[derive(Debug)]
pub enum OpenOutcome {
    /// The whole content authenticated and was written.
    Opened {
        /// The file's header.
        header: TlockHeader,
        /// Content bytes written.
        content_len: u64,
    },
    /// Stopped by the flag after `done` verified squarings (saved in the checkpoint, if any).
    Stopped {
        /// Verified squarings so far.
        done: u64,
    },
}

/// Opens a time-lock file in one call: header, `t` squarings, key, content. See
/// [`decrypt_body`] for what `writer` holds when this fails.
pub fn open(
    reader: &mut dyn Read,
    writer: &mut dyn Write,
    options: &SolveOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> TlockResult<OpenOutcome> {
    let header = TlockHeader::read_from(reader)?;
    match solve_key(&header, options, stop, progress)? {
        KeyOutcome::Recovered(key) => {
            let content_len = decrypt_body(&header, &key, reader, writer)?;
            Ok(OpenOutcome::Opened {
                header,
                content_len,
            })
        }
        KeyOutcome::Stopped { done } => Ok(OpenOutcome::Stopped { done }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hourglass_arith::entropy::SeededEntropy;
    use hourglass_arith::squaring::square_k_times;

    #[test]
    fn the_trapdoor_shortcut_equals_sequential_squaring() {
        let mut rng = SeededEntropy::new(b"tlock shortcut");
        let key = SealingKey::generate(1024, &mut rng).unwrap();
        assert_eq!(key.bits(), 1024);
        let a = Integer::from(123_456_789u64);
        for t in [1u64, 2, 100, 5000] {
            let b = key.shortcut(&a, t).unwrap();
            assert_eq!(*b.expose(), square_k_times(&a, t, key.n()), "t = {t}");
        }
        assert!(format!("{key:?}").contains("1024"));
        assert!(!format!("{key:?}").contains(&key.n().to_string()[..20]));
    }

    #[test]
    fn body_lengths() {
        assert_eq!(body_len(0), 16);
        assert_eq!(body_len(1), 17);
        assert_eq!(body_len(CHUNK_SIZE as u64), CHUNK_SIZE as u64 + 16);
        assert_eq!(body_len(CHUNK_SIZE as u64 + 1), CHUNK_SIZE as u64 + 33);
    }

    #[test]
    fn keys_out_of_range_do_not_authenticate() {
        let mut rng = SeededEntropy::new(b"tlock recover");
        let mut out = Vec::new();
        let header = seal(
            &mut &b"x"[..],
            &mut out,
            &SealParams::new(1024, 10),
            &mut rng,
        )
        .unwrap();
        let w = square_k_times(header.base(), 10, header.n());
        assert!(header.recover_key(&w).is_ok());
        let wrong = Integer::from(&w + 1u32) << 300u32;
        assert!(matches!(
            header.recover_key(&wrong),
            Err(TlockError::Authentication)
        ));
        assert_eq!(
            format!("{:?}", header.recover_key(&w).unwrap()),
            "ContentKey(...)"
        );
    }
}

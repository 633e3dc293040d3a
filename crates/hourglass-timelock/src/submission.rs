//! Offline submission (paper section IV): puzzle sets, chains of solutions, the open-ended
//! mode, and the bundle an author submits.
//!
//! - The institution publishes a [`PuzzleSet`]: several public puzzle keys of different
//!   durations (for example 12 h, 4 h, 1 h, 10 min).
//! - The author seals a document ([`seal`]): link 1 solves a puzzle for the document's input
//!   `m_1` (a full-domain hash of the digest, [`input_from_digest`]); each next link solves a
//!   (usually shorter) puzzle for `m_(i+1)`, a full-domain hash of `c_i` onto the next modulus
//!   ([`chain_input`]), until stopped. Every finished link is kept.
//! - Open-ended mode (section IV-C): the author squares `m` modulo one key's modulus for as long
//!   as needed and records `(t, c = m^(2^t))`; the institution checks it with the trapdoor.
//! - The institution verifies a [`Bundle`] with its private keys ([`verify_bundle`]), in
//!   parallel, and credits the sum of the links' times.

use std::collections::HashMap;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hourglass_arith::checkpoint::CheckpointFile;
use hourglass_arith::entropy::EntropySource;
use hourglass_arith::hash_to_int::hash_to_residue;
use hourglass_arith::secret::{eq_ct, SecretInt};
use hourglass_arith::squaring::{Outcome, Progress, SquaringRun};
use hourglass_arith::Integer;
use rug::integer::Order;
use serde::{Deserialize, Serialize};

use crate::json;
use crate::key::{input_from_digest, PuzzleHash, PuzzleKey, PuzzlePublicKey};
use crate::rsw::{SolveOptions, SolveOutcome};
use crate::solve::solve;
use crate::{Error, Field, FileKind, ParamError, ParseError, Result};

const SET_TYPE: &str = "hourglass-puzzle-set";
const BUNDLE_TYPE: &str = "hourglass-submission-bundle";
/// Version 2 of sets and bundles: full-domain inputs for every link, one hash fixed by the set.
const FORMAT_VERSION: u32 = 2;
/// Domain separation tag of chain links' inputs (docs/FORMATS.md).
pub const CHAIN_INPUT_DST: &[u8] = b"HOURGLASS-V2-CHAIN-INPUT";

/// Relative slack when comparing credited times (they come from rounded squaring counts).
const CREDIT_TOLERANCE: f64 = 1e-4;

/// Squarings an open-ended run is set up for (it is stopped long before).
pub const OPEN_ENDED_LIMIT: u64 = 1 << 62;

/// A published set of puzzle keys of different durations, all fixing one document hash.
#[derive(Debug, Clone, PartialEq)]
pub struct PuzzleSet {
    /// A name for the set (the deadline it serves).
    pub name: String,
    /// The keys, longest first.
    pub puzzles: Vec<PuzzlePublicKey>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SetJson {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    name: String,
    hash: PuzzleHash,
    puzzles: Vec<serde_json::Value>,
}

impl PuzzleSet {
    /// A set from keys (sorted longest first). Needs at least one key, all with distinct
    /// fingerprints and the same document hash (the set fixes it for every bundle).
    pub fn new(name: &str, mut puzzles: Vec<PuzzlePublicKey>) -> Result<Self> {
        let Some(first) = puzzles.first() else {
            return Err(ParamError::EmptySet.into());
        };
        let hash = first.meta().hash;
        if let Some(other) = puzzles.iter().find(|p| p.meta().hash != hash) {
            return Err(ParamError::MixedHashes {
                first: hash,
                other: other.meta().hash,
            }
            .into());
        }
        puzzles.sort_by(|a, b| b.credited_secs().total_cmp(&a.credited_secs()));
        let mut seen = std::collections::HashSet::new();
        if !puzzles.iter().all(|p| seen.insert(p.fingerprint())) {
            return Err(ParamError::DuplicateKey.into());
        }
        Ok(Self {
            name: name.to_string(),
            puzzles,
        })
    }

    /// The set as JSON.
    pub fn to_json(&self) -> String {
        let puzzles = self
            .puzzles
            .iter()
            .map(|p| serde_json::from_str(&p.to_json()).unwrap_or(serde_json::Value::Null))
            .collect();
        let j = SetJson {
            kind: SET_TYPE.into(),
            version: FORMAT_VERSION,
            name: self.name.clone(),
            hash: self.hash(),
            puzzles,
        };
        json::to_text(&j)
    }

    /// Parses a set file (each key's fingerprint is checked).
    pub fn from_json(text: &str) -> Result<Self> {
        let j: SetJson =
            json::parse_versioned(FileKind::PuzzleSet, text, SET_TYPE, FORMAT_VERSION)?;
        let puzzles = j
            .puzzles
            .iter()
            .map(|v| PuzzlePublicKey::from_json(&v.to_string()))
            .collect::<Result<Vec<_>>>()?;
        let set = Self::new(&j.name, puzzles)?;
        if set.hash() != j.hash {
            return Err(Error::parse(
                FileKind::PuzzleSet,
                ParseError::HashMismatch {
                    named: j.hash,
                    keys: set.hash(),
                },
            ));
        }
        Ok(set)
    }

    /// The document hash every key of the set fixes.
    pub fn hash(&self) -> PuzzleHash {
        self.puzzles
            .first()
            .map_or(PuzzleHash::Sha256, |p| p.meta().hash)
    }

    /// The key with this fingerprint.
    pub fn find(&self, fingerprint: &[u8; 32]) -> Option<&PuzzlePublicKey> {
        self.puzzles
            .iter()
            .find(|p| p.fingerprint() == *fingerprint)
    }

    /// The next puzzle to solve when about `remaining` seconds of offline time are expected:
    /// the longest one that fits, or the shortest if none does; with no expectation, the
    /// shortest (the finest granularity: stopping loses at most one short link).
    pub fn pick(&self, remaining: Option<f64>) -> &PuzzlePublicKey {
        let shortest = self
            .puzzles
            .last()
            .unwrap_or_else(|| unreachable!("a set is never empty"));
        match remaining {
            Some(r) => self
                .puzzles
                .iter()
                .find(|p| p.credited_secs() <= r)
                .unwrap_or(shortest),
            None => shortest,
        }
    }
}

/// One link of a bundle.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum Link {
    /// A solved puzzle: `c = m^(2^t + z) mod n`, verified by `c^d == m`.
    Puzzle {
        /// Fingerprint of the puzzle key (hex).
        puzzle: String,
        /// The key's `t`.
        t: u64,
        /// The solution (hex).
        c: String,
    },
    /// Open-ended squaring: `c = m^(2^t) mod n` for an author-chosen `t`, verified with the
    /// trapdoor (`m^(2^t mod phi(n))`).
    Squarings {
        /// Fingerprint of the key whose modulus was used (hex).
        puzzle: String,
        /// Squarings done.
        t: u64,
        /// The result (hex).
        c: String,
    },
    /// A link of a public set ([`crate::public`]): `y = canon(x^(2^t))` in `Z_n* / {+1, -1}`
    /// with a proof, verified by anyone.
    Vdf {
        /// Fingerprint of the public set (hex).
        puzzle: String,
        /// Squarings.
        t: u64,
        /// The output `y` (hex, canonical).
        y: String,
        /// The proof, in the scheme the set fixes.
        proof: LinkProof,
    },
}

/// The proof a public link carries.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "scheme", rename_all = "kebab-case", deny_unknown_fields)]
pub enum LinkProof {
    /// Wesolowski: `pi = x^floor(2^t / l)` and the challenge prime `l` (hex).
    Wesolowski {
        /// `pi` (hex, canonical).
        pi: String,
        /// `l` (hex).
        l: String,
    },
    /// Pietrzak: the midpoints `mu_i` of the halving rounds (hex, canonical).
    Pietrzak {
        /// `mu_0, mu_1, ...`.
        mu: Vec<String>,
    },
}

impl Link {
    /// The key fingerprint (hex) this link uses.
    pub fn puzzle(&self) -> &str {
        match self {
            Link::Puzzle { puzzle, .. }
            | Link::Squarings { puzzle, .. }
            | Link::Vdf { puzzle, .. } => puzzle,
        }
    }
    /// Squarings the link represents.
    pub fn t(&self) -> u64 {
        match self {
            Link::Puzzle { t, .. } | Link::Squarings { t, .. } | Link::Vdf { t, .. } => *t,
        }
    }
    /// The link's result (`c`, or `y` for a proof-carrying link): what the next link's input
    /// is hashed from.
    pub fn c(&self) -> Result<Integer> {
        let c = match self {
            Link::Puzzle { c, .. } | Link::Squarings { c, .. } | Link::Vdf { y: c, .. } => c,
        };
        json::hex_integer(FileKind::SubmissionBundle, Field::C, c)
    }
}

/// Most links a bundle may hold.
const MAX_LINKS: usize = 100_000;

/// Which kind of set a bundle was sealed on: who can verify it, and who could forge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SetKind {
    /// Puzzle keys with a trapdoor: the institution verifies with its private keys.
    Private,
    /// A public modulus with proof-carrying links: anyone verifies.
    Public,
}

/// What an author submits with the document (format version 2).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bundle {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    /// The kind of set the bundle was sealed on.
    pub set: SetKind,
    /// Hash the document was digested with: informative only, since the verifier uses the
    /// hash its keys fix and refuses a bundle that names another.
    pub hash: PuzzleHash,
    /// The document digest (hex).
    pub digest: String,
    /// The links, in order.
    pub links: Vec<Link>,
}

/// The squarings a `duration` is worth at `rate` squarings per second (`round(duration *
/// rate)`), or `None` when that is not even one squaring.
pub fn squarings_for(duration: Duration, rate: f64) -> Option<u64> {
    let t = (duration.as_secs_f64() * rate).round();
    (t >= 1.0 && t < u64::MAX as f64).then_some(t as u64)
}

/// Makes a private set: one puzzle key per entry of `durations` (in that order) at `rate`
/// squarings per second, all fixing `hash`, issued by `name`. Returns the set (to publish) and
/// the private keys (to keep), the keys in the order of `durations`. Every duration is checked
/// before any key is made.
pub fn generate_set(
    name: &str,
    durations: &[Duration],
    bits: u32,
    rate: (f64, bool),
    hash: PuzzleHash,
    rng: &mut dyn EntropySource,
) -> Result<(PuzzleSet, Vec<PuzzleKey>)> {
    let (rate, measured) = rate;
    let squarings = durations
        .iter()
        .map(|d| {
            squarings_for(*d, rate).ok_or(Error::InvalidParameters(ParamError::DurationTooShort {
                duration: *d,
            }))
        })
        .collect::<Result<Vec<u64>>>()?;
    let mut keys = Vec::with_capacity(durations.len());
    for t in squarings {
        keys.push(
            crate::PuzzleKeyGen::new(bits, t)
                .rate(rate, measured)
                .hash(hash)
                .issuer(name)
                .generate(rng)?,
        );
    }
    let set = PuzzleSet::new(name, keys.iter().map(PuzzleKey::public_key).collect())?;
    Ok((set, keys))
}

impl Bundle {
    /// An empty bundle for a document digest, on a private set.
    pub fn new(hash: PuzzleHash, digest: &[u8]) -> Self {
        Self::with_kind(SetKind::Private, hash, digest)
    }

    /// An empty bundle for a document digest, on a public set ([`crate::public`]).
    pub fn new_public(hash: PuzzleHash, digest: &[u8]) -> Self {
        Self::with_kind(SetKind::Public, hash, digest)
    }

    /// Whether the bundle is for a public set.
    pub fn is_public(&self) -> bool {
        self.set == SetKind::Public
    }

    fn with_kind(set: SetKind, hash: PuzzleHash, digest: &[u8]) -> Self {
        Self {
            kind: BUNDLE_TYPE.into(),
            version: FORMAT_VERSION,
            set,
            hash,
            digest: hex::encode(digest),
            links: Vec::new(),
        }
    }

    /// The bundle as JSON.
    pub fn to_json(&self) -> String {
        json::to_text(self)
    }

    /// Parses a bundle.
    pub fn from_json(text: &str) -> Result<Self> {
        let what = FileKind::SubmissionBundle;
        let err = |why: ParseError| Error::parse(what, why);
        let b: Bundle = json::parse_versioned(what, text, BUNDLE_TYPE, FORMAT_VERSION)?;
        let digest = hex::decode(&b.digest).map_err(|e| err(ParseError::DigestHex(e)))?;
        if digest.len() != b.hash.output_len() {
            return Err(err(ParseError::DigestLength {
                hash: b.hash,
                want: b.hash.output_len(),
                got: digest.len(),
            }));
        }
        if b.links.len() > MAX_LINKS {
            return Err(err(ParseError::TooManyLinks {
                count: b.links.len(),
                max: MAX_LINKS,
            }));
        }
        let proof_links = b
            .links
            .iter()
            .filter(|l| matches!(l, Link::Vdf { .. }))
            .count();
        let expected = if b.is_public() { b.links.len() } else { 0 };
        if proof_links != expected {
            return Err(err(ParseError::LinkKinds { set: b.set }));
        }
        Ok(b)
    }

    /// The digest bytes.
    pub fn digest_bytes(&self) -> Vec<u8> {
        hex::decode(&self.digest).unwrap_or_default()
    }

    /// Total squarings of all links.
    pub fn total_squarings(&self) -> u64 {
        self.links.iter().map(Link::t).sum()
    }
}

/// The input of the link after one that produced `c`: a full-domain element of the next
/// modulus, `m = OS2IP(expand_message_xmd(SHA-256, I2OSP(c), "HOURGLASS-V2-CHAIN-INPUT", L))
/// mod n` (the same mapping as [`input_from_digest`] with its own tag; `I2OSP(c)` is the
/// minimal big-endian encoding of `c`; see docs/FORMATS.md).
pub fn chain_input(previous_c: &Integer, next: &PuzzlePublicKey) -> Result<Integer> {
    chain_input_for_modulus(previous_c, next.n())
}

/// [`chain_input`] for a bare modulus (public sets).
pub fn chain_input_for_modulus(previous_c: &Integer, n: &Integer) -> Result<Integer> {
    Ok(hash_to_residue(
        &previous_c.to_digits::<u8>(Order::Msf),
        CHAIN_INPUT_DST,
        n,
    )?)
}

/// The input of link `index` (0-based) of `bundle`.
fn link_input(bundle: &Bundle, index: usize, key: &PuzzlePublicKey) -> Result<Integer> {
    if index == 0 {
        input_from_digest(key.n(), &bundle.digest_bytes())
    } else {
        chain_input(&bundle.links[index - 1].c()?, key)
    }
}

/// How to seal.
#[derive(Debug, Clone)]
pub struct SealOptions {
    /// Expected offline time from the start, in seconds (picks the puzzles).
    pub expect_secs: Option<f64>,
    /// Stop once this much time is credited (seconds); `None` stops once the expected time
    /// (`expect_secs`) is credited, or, without an expectation either, runs until stopped.
    pub until_credited_secs: Option<f64>,
    /// Open-ended mode with this key's modulus instead of chained puzzles.
    pub open_ended: bool,
    /// Checkpoint file for the link in progress.
    pub checkpoint: CheckpointFile,
    /// Longest time between checkpoints.
    pub checkpoint_every: Duration,
}

/// Why a seal run returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SealEnd {
    /// The requested credited time is reached.
    Reached,
    /// The stop flag was raised (every finished link is in the bundle).
    Stopped,
}

/// Credited seconds of a bundle's links according to `set`.
pub fn credited_secs(set: &PuzzleSet, bundle: &Bundle) -> f64 {
    bundle
        .links
        .iter()
        .filter_map(|l| {
            let fp: [u8; 32] = hex::decode(l.puzzle()).ok()?.try_into().ok()?;
            set.find(&fp).map(|k| l.t() as f64 / k.meta().rate)
        })
        .sum()
}

/// Seals: extends `bundle` link by link (calling `on_link` after each, to save it) until the
/// target is reached or `stop` is raised. Resumes an unfinished link from the checkpoint.
pub fn seal(
    set: &PuzzleSet,
    bundle: &mut Bundle,
    options: &SealOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(usize, &PuzzlePublicKey, Progress),
    on_link: &mut dyn FnMut(&Bundle) -> Result<()>,
) -> Result<SealEnd> {
    if bundle.is_public() {
        return Err(ParamError::BundleSetKind {
            bundle: SetKind::Public,
        }
        .into());
    }
    loop {
        let credited = credited_secs(set, bundle);
        if options.reached(credited) {
            return Ok(SealEnd::Reached);
        }
        let index = bundle.links.len();
        let key = if options.open_ended {
            if index > 0 {
                return Ok(SealEnd::Reached);
            }
            set.pick(None)
        } else {
            set.pick(options.expect_secs.map(|e| e - credited))
        };
        let m = link_input(bundle, index, key)?;
        if options.open_ended {
            let total = match options.until_credited_secs {
                Some(u) => ((u * key.meta().rate).ceil() as u64).clamp(1, OPEN_ENDED_LIMIT),
                None => OPEN_ENDED_LIMIT,
            };
            let run = SquaringRun::new(key.n(), &m, total)?;
            let mut ctx = b"hourglass-open-ended-v2\0".to_vec();
            ctx.extend_from_slice(&key.fingerprint());
            ctx.extend_from_slice(&m.to_digits::<u8>(Order::Msf));
            let start = options.checkpoint.resume(&run, &ctx)?;
            let save = |s: &hourglass_arith::squaring::SquaringState| {
                options.checkpoint.save_state(&run, &ctx, s)
            };
            let outcome = run.run(
                start,
                stop,
                Duration::from_millis(250),
                options.checkpoint_every,
                &mut |p| progress(index, key, p),
                &mut |s| save(s),
            )?;
            let (state, end) = match outcome {
                Outcome::Finished(s) => (s, SealEnd::Reached),
                Outcome::Stopped(s) => (s, SealEnd::Stopped),
            };
            save(&state)?;
            if state.done > 0 {
                bundle.links = vec![Link::Squarings {
                    puzzle: key.fingerprint_hex(),
                    t: state.done,
                    c: format!("{:x}", state.x),
                }];
                on_link(bundle)?;
            }
            return Ok(end);
        }
        let opts = SolveOptions {
            checkpoint: Some(options.checkpoint.clone()),
            checkpoint_every: options.checkpoint_every,
            ..SolveOptions::default()
        };
        match solve(key, &m, &opts, stop, &mut |p| progress(index, key, p))? {
            SolveOutcome::Solved(c) => {
                bundle.links.push(Link::Puzzle {
                    puzzle: key.fingerprint_hex(),
                    t: key.t(),
                    c: format!("{c:x}"),
                });
                on_link(bundle)?;
                options.checkpoint.remove();
            }
            SolveOutcome::Stopped { .. } => return Ok(SealEnd::Stopped),
        }
    }
}

/// The verdict on one link.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkVerdict {
    /// Position in the bundle (0-based).
    pub index: usize,
    /// Key fingerprint.
    pub puzzle: String,
    /// Squarings.
    pub t: u64,
    /// Seconds credited (0 if invalid).
    pub credited_secs: f64,
    /// Whether it verified.
    pub valid: bool,
    /// Why not.
    pub reason: Option<String>,
}

/// The verdict on a bundle.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BundleVerdict {
    /// Whether the document matches the bundle's digest.
    pub document_matches: bool,
    /// Every link's verdict.
    pub links: Vec<LinkVerdict>,
    /// Whether everything verified.
    pub valid: bool,
    /// Seconds credited in total (0 unless valid).
    pub credited_secs: f64,
}

impl SealOptions {
    /// The credited time at which sealing stops: `until_credited_secs`, else `expect_secs`.
    pub fn target_secs(&self) -> Option<f64> {
        self.until_credited_secs.or(self.expect_secs)
    }

    /// Whether `credited` seconds reach the target (within the rounding of `t = duration *
    /// rate` per key, so a sum of credited times may fall a hair short).
    pub fn reached(&self, credited: f64) -> bool {
        self.target_secs()
            .is_some_and(|u| credited >= u * (1.0 - CREDIT_TOLERANCE))
    }
}

impl BundleVerdict {
    /// The verdict from the document check and every link's: valid only if the document
    /// matches and every link (at least one) verified; then the links' time is credited.
    pub fn of(document_matches: bool, links: Vec<LinkVerdict>) -> Self {
        let valid = document_matches && !links.is_empty() && links.iter().all(|l| l.valid);
        let credited_secs = if valid {
            links.iter().map(|l| l.credited_secs).sum()
        } else {
            0.0
        };
        BundleVerdict {
            document_matches,
            links,
            valid,
            credited_secs,
        }
    }
}

/// Verifies every link of `bundle` for a document with digest `document_digest`, using the
/// institution's private `keys`, on up to `threads` threads.
pub fn verify_bundle(
    bundle: &Bundle,
    document_digest: &[u8],
    keys: &[PuzzleKey],
    threads: usize,
    rng: &mut dyn EntropySource,
) -> Result<BundleVerdict> {
    let document_matches = bundle.digest_bytes() == document_digest;
    let by_fp: HashMap<String, &PuzzleKey> = keys
        .iter()
        .map(|k| (k.public().fingerprint_hex(), k))
        .collect();
    let indices: Vec<usize> = (0..bundle.links.len()).collect();
    let threads = threads.clamp(1, 64);
    let chunk = indices.len().div_ceil(threads).max(1);
    let mut rngs = Vec::new();
    for _ in 0..indices.chunks(chunk).len() {
        rngs.push(rng.split()?);
    }
    let verdicts: Vec<Result<Vec<LinkVerdict>>> = std::thread::scope(|s| {
        let handles: Vec<_> = indices
            .chunks(chunk)
            .zip(rngs.iter_mut())
            .map(|(part, r)| {
                let by_fp = &by_fp;
                s.spawn(move || {
                    part.iter()
                        .map(|&i| verify_link(bundle, i, by_fp, &mut **r))
                        .collect::<Result<Vec<_>>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(ParamError::ThreadPanicked.into()))
            })
            .collect()
    });
    let mut links = Vec::new();
    for v in verdicts {
        links.extend(v?);
    }
    Ok(BundleVerdict::of(document_matches, links))
}

fn verify_link(
    bundle: &Bundle,
    index: usize,
    keys: &HashMap<String, &PuzzleKey>,
    rng: &mut dyn EntropySource,
) -> Result<LinkVerdict> {
    let link = &bundle.links[index];
    let mut verdict = LinkVerdict {
        index,
        puzzle: link.puzzle().to_string(),
        t: link.t(),
        credited_secs: 0.0,
        valid: false,
        reason: None,
    };
    if bundle.is_public() {
        verdict.reason = Some(
            "the bundle is for a public set: verify it with the public set, not with keys".into(),
        );
        return Ok(verdict);
    }
    let Some(key) = keys.get(&link.puzzle().to_ascii_lowercase()) else {
        verdict.reason = Some("no private key with this fingerprint in the key directory".into());
        return Ok(verdict);
    };
    let public = key.public();
    // The verifier's keys fix the hash; a bundle naming another is refused, never followed.
    if bundle.hash != public.meta().hash {
        verdict.reason = Some(format!(
            "the bundle names hash {} but the puzzle key fixes {}",
            bundle.hash,
            public.meta().hash
        ));
        return Ok(verdict);
    }
    let m = link_input(bundle, index, public)?;
    let c = link.c()?;
    let ok = match link {
        Link::Puzzle { t, .. } => *t == public.t() && key.verify(&m, &c, rng)?,
        Link::Squarings { t, .. } => {
            *t > 0 && c < *public.n() && {
                let shortcut = SecretInt::new(key.shortcut_squarings(&m, *t)?);
                eq_ct(shortcut.expose(), &c, public.n())
            }
        }
        // Refused when the bundle is parsed; kept false here for bundles built in memory.
        Link::Vdf { .. } => false,
    };
    if ok {
        verdict.valid = true;
        verdict.credited_secs = link.t() as f64 / public.meta().rate;
    } else {
        verdict.reason =
            Some("the link does not verify (wrong, altered, or for another input)".into());
    }
    Ok(verdict)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::PuzzleKeyGen;
    use hourglass_arith::entropy::SeededEntropy;

    fn keys(rng: &mut SeededEntropy) -> Vec<PuzzleKey> {
        [400_000u64, 200_000, 100_000]
            .iter()
            .map(|&t| {
                PuzzleKeyGen::new(512, t)
                    .rate(100_000.0, false)
                    .generate(rng)
                    .unwrap()
            })
            .collect()
    }

    fn temp(name: &str) -> CheckpointFile {
        let dir = std::env::temp_dir().join(format!("hg-sub-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        CheckpointFile::new(
            dir.join("link.ckpt"),
            hourglass_arith::checkpoint::CheckpointKey::from_bytes([4u8; 32]),
        )
    }

    #[test]
    fn chain_seals_and_verifies_and_detects_tampering() {
        let mut rng = SeededEntropy::new(b"chain");
        let keys = keys(&mut rng);
        let set = PuzzleSet::new("test", keys.iter().map(|k| k.public_key()).collect()).unwrap();
        assert_eq!(PuzzleSet::from_json(&set.to_json()).unwrap(), set);
        let digest = PuzzleHash::Sha256.digest(b"the document");
        let mut bundle = Bundle::new(PuzzleHash::Sha256, &digest);
        let opts = SealOptions {
            expect_secs: Some(5.0),
            until_credited_secs: Some(5.0),
            open_ended: false,
            checkpoint: temp("chain"),
            checkpoint_every: Duration::ZERO,
        };
        let end = seal(
            &set,
            &mut bundle,
            &opts,
            &AtomicBool::new(false),
            &mut |_, _, _| {},
            &mut |_| Ok(()),
        )
        .unwrap();
        assert_eq!(end, SealEnd::Reached);
        // Expecting 5 s with 4 s / 2 s / 1 s puzzles: 4 s then 1 s.
        let ts: Vec<u64> = bundle.links.iter().map(Link::t).collect();
        assert_eq!(ts, vec![400_000, 100_000]);
        let back = Bundle::from_json(&bundle.to_json()).unwrap();
        let v = verify_bundle(&back, &digest, &keys, 2, &mut rng).unwrap();
        assert!(v.valid, "{v:?}");
        assert!((v.credited_secs - 5.0).abs() < 1e-9);
        // Another document, an altered link, a missing key.
        assert!(
            !verify_bundle(
                &back,
                &PuzzleHash::Sha256.digest(b"other"),
                &keys,
                1,
                &mut rng
            )
            .unwrap()
            .valid
        );
        let mut bad = back.clone();
        if let Link::Puzzle { c, .. } = &mut bad.links[1] {
            c.replace_range(0..1, if c.starts_with('1') { "2" } else { "1" });
        }
        let v = verify_bundle(&bad, &digest, &keys, 2, &mut rng).unwrap();
        assert!(!v.valid && v.links[0].valid && !v.links[1].valid);
        assert!(
            !verify_bundle(&back, &digest, &keys[..1], 1, &mut rng)
                .unwrap()
                .valid
        );
    }

    /// `--expect` alone stops once the expected time is credited (it used to run forever).
    #[test]
    fn an_expectation_alone_stops_when_it_is_credited() {
        let mut rng = SeededEntropy::new(b"expect");
        let keys = keys(&mut rng);
        let set = PuzzleSet::new("test", keys.iter().map(|k| k.public_key()).collect()).unwrap();
        let digest = PuzzleHash::Sha256.digest(b"expected");
        let mut bundle = Bundle::new(PuzzleHash::Sha256, &digest);
        let opts = SealOptions {
            expect_secs: Some(3.0),
            until_credited_secs: None,
            open_ended: false,
            checkpoint: temp("expect"),
            checkpoint_every: Duration::ZERO,
        };
        let end = seal(
            &set,
            &mut bundle,
            &opts,
            &AtomicBool::new(false),
            &mut |_, _, _| {},
            &mut |_| Ok(()),
        )
        .unwrap();
        assert_eq!(end, SealEnd::Reached);
        assert!((credited_secs(&set, &bundle) - 3.0).abs() < 1e-9);
    }

    #[test]
    fn open_ended_mode_verifies_with_the_trapdoor() {
        let mut rng = SeededEntropy::new(b"open");
        let keys = keys(&mut rng);
        let set = PuzzleSet::new("test", keys.iter().map(|k| k.public_key()).collect()).unwrap();
        let digest = PuzzleHash::Sha256.digest(b"doc");
        let mut bundle = Bundle::new(PuzzleHash::Sha256, &digest);
        let opts = SealOptions {
            expect_secs: None,
            until_credited_secs: Some(3.5),
            open_ended: true,
            checkpoint: temp("open"),
            checkpoint_every: Duration::ZERO,
        };
        assert_eq!(
            seal(
                &set,
                &mut bundle,
                &opts,
                &AtomicBool::new(false),
                &mut |_, _, _| {},
                &mut |_| Ok(())
            )
            .unwrap(),
            SealEnd::Reached
        );
        assert_eq!(bundle.links.len(), 1);
        assert_eq!(bundle.links[0].t(), 350_000);
        let v = verify_bundle(&bundle, &digest, &keys, 1, &mut rng).unwrap();
        assert!(v.valid, "{v:?}");
        let mut bad = bundle.clone();
        if let Link::Squarings { t, .. } = &mut bad.links[0] {
            *t += 1;
        }
        assert!(
            !verify_bundle(&bad, &digest, &keys, 1, &mut rng)
                .unwrap()
                .valid
        );
    }

    #[test]
    fn stopping_keeps_finished_links_and_resumes() {
        let mut rng = SeededEntropy::new(b"stop");
        let keys = keys(&mut rng);
        let set = PuzzleSet::new("test", keys.iter().map(|k| k.public_key()).collect()).unwrap();
        let digest = PuzzleHash::Sha256.digest(b"doc");
        let mut bundle = Bundle::new(PuzzleHash::Sha256, &digest);
        let ck = temp("stop");
        let opts = SealOptions {
            expect_secs: None,
            until_credited_secs: Some(2.0),
            open_ended: false,
            checkpoint: ck,
            checkpoint_every: Duration::ZERO,
        };
        assert_eq!(
            seal(
                &set,
                &mut bundle,
                &opts,
                &AtomicBool::new(true),
                &mut |_, _, _| {},
                &mut |_| Ok(())
            )
            .unwrap(),
            SealEnd::Stopped
        );
        assert!(bundle.links.is_empty());
        assert_eq!(
            seal(
                &set,
                &mut bundle,
                &opts,
                &AtomicBool::new(false),
                &mut |_, _, _| {},
                &mut |_| Ok(())
            )
            .unwrap(),
            SealEnd::Reached
        );
        assert_eq!(bundle.links.len(), 2); // two 1-second links
        assert!(
            verify_bundle(&bundle, &digest, &keys, 2, &mut rng)
                .unwrap()
                .valid
        );
    }
}

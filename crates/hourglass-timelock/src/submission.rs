//! Offline submission (paper section IV): puzzle sets, chains of solutions, the open-ended
//! mode, and the bundle an author submits.
//!
//! - The institution publishes a [`PuzzleSet`]: several public puzzle keys of different
//!   durations (for example 12 h, 4 h, 1 h, 10 min).
//! - The author seals a document ([`seal`]): link 1 solves a puzzle for the document's input
//!   `m_1` (a full-domain hash of the digest, [`crate::input_from_digest`]); each next link solves a
//!   (usually shorter) puzzle for `m_(i+1)`, a full-domain hash of `c_i` onto the next modulus
//!   ([`crate::bundle::chain_input`]), until stopped. Every finished link is kept.
//! - Open-ended mode (section IV-C): the author squares `m` modulo one key's modulus for as long
//!   as needed and records `(t, c = m^(2^t))`; the institution checks it with the trapdoor.
//! - The institution verifies a [`Bundle`] with its private keys through
//!   [`crate::verdict::Verifier`], which owns the verdict.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hourglass_arith::entropy::EntropySource;
use hourglass_arith::secret::{eq_ct, SecretInt};
use hourglass_arith::squaring::{Outcome, Progress, SquaringRun};
use rug::integer::Order;
use serde::{Deserialize, Serialize};

use crate::bundle::{
    link_input, widest_hex, Bundle, Link, SealEnd, SealOptions, SetKind, SizeGuard,
};
use crate::json;
use crate::key::{PuzzleHash, PuzzleKey, PuzzlePublicKey};
use crate::link_fault::LinkFault;
use crate::rsw::{SolveOptions, SolveOutcome};
use crate::solve::solve;
use crate::{Error, FileKind, ParamError, ParseError, Result};

/// The `type` of a private set file.
pub(crate) const SET_TYPE: &str = "hourglass-puzzle-set";
/// Version 2 of sets: full-domain inputs for every link, one hash fixed by the set.
const FORMAT_VERSION: u32 = 2;
/// The largest set file read.
pub const MAX_SET_BYTES: u64 = 1 << 20;

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
        if text.len() as u64 > MAX_SET_BYTES {
            return Err(Error::parse(
                FileKind::PuzzleSet,
                ParseError::TooLarge { max: MAX_SET_BYTES },
            ));
        }
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

/// Credited seconds of a bundle's links according to `set`.
pub fn credited_secs(set: &PuzzleSet, bundle: &Bundle) -> f64 {
    bundle
        .links
        .iter()
        .filter_map(|l| {
            let fp = l.fingerprint().ok()?;
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
    // The widest link a key can give (its result written with all its digits).
    let worst = |key: &PuzzlePublicKey| Link::Puzzle {
        puzzle: key.fingerprint_hex(),
        t: key.t(),
        c: widest_hex(key.n()),
    };
    let mut room = SizeGuard::new(bundle);
    if !options.open_ended && options.target_secs().is_some() {
        // The links the expected time takes, picked as the loop below picks them.
        let mut credited = credited_secs(set, bundle);
        let plan = std::iter::from_fn(|| {
            if options.reached(credited) {
                return None;
            }
            let key = set.pick(options.expect_secs.map(|e| e - credited));
            credited += key.credited_secs();
            Some(worst(key))
        });
        room.check_plan(bundle, plan)?;
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
        let m = link_input(bundle, index, key.n())?;
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
        room.check_next(bundle, &worst(key))?;
        let opts = SolveOptions {
            checkpoint: Some(options.checkpoint.clone()),
            checkpoint_every: options.checkpoint_every,
            ..SolveOptions::default()
        };
        match solve(key, &m, &opts, stop, &mut |p| progress(index, key, p))? {
            SolveOutcome::Solved(c) => {
                let link = Link::Puzzle {
                    puzzle: key.fingerprint_hex(),
                    t: key.t(),
                    c: format!("{c:x}"),
                };
                room.added(bundle, &link);
                bundle.links.push(link);
                on_link(bundle)?;
                options.checkpoint.remove();
            }
            SolveOutcome::Stopped { .. } => return Ok(SealEnd::Stopped),
        }
    }
}

/// Checks link `index` of `bundle` with its private `key`: the seconds it credits, or why it
/// does not verify. Called by [`crate::verdict::Verifier`], which owns the verdict.
pub(crate) fn check_link(
    key: &PuzzleKey,
    bundle: &Bundle,
    index: usize,
    rng: &mut dyn EntropySource,
) -> Result<std::result::Result<f64, LinkFault>> {
    let link = &bundle.links[index];
    let public = key.public();
    let m = link_input(bundle, index, public.n())?;
    let c = link.c()?;
    let ok = match link {
        Link::Puzzle { t, .. } => *t == public.t() && key.verify(&m, &c, rng)?,
        Link::Squarings { t, .. } => {
            *t > 0 && c < *public.n() && {
                let shortcut = SecretInt::new(key.shortcut_squarings(&m, *t)?);
                eq_ct(shortcut.expose(), &c, public.n())
            }
        }
        // A private set's bundle holds no proof-carrying link (its form is checked first).
        Link::Vdf { .. } => false,
    };
    Ok(if ok {
        Ok(link.t() as f64 / public.meta().rate)
    } else {
        Err(LinkFault::DoesNotVerify)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::PuzzleKeyGen;
    use crate::verdict::{Verdict, Verifier, VerifyOptions};
    use hourglass_arith::checkpoint::CheckpointFile;
    use hourglass_arith::entropy::SeededEntropy;

    /// The verdict on `bundle` for a document with this SHA-256 digest, with `keys`.
    fn verify_bundle(
        bundle: &Bundle,
        digest: &[u8],
        keys: &[PuzzleKey],
        threads: usize,
        rng: &mut SeededEntropy,
    ) -> Result<Verdict> {
        let verifier = Verifier::private(keys.to_vec())?;
        let digest = verifier.recorded_digest(digest.to_vec());
        let options = VerifyOptions {
            threads,
            ..VerifyOptions::default()
        };
        verifier.verify(bundle, &digest, &options, rng)
    }

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

    /// One 1024-bit key of 10 squarings: a link costs about 330 bytes and nothing to seal.
    fn tiny_set(rng: &mut SeededEntropy) -> PuzzleSet {
        let key = PuzzleKeyGen::new(1024, 10)
            .rate(100_000.0, false)
            .generate(rng)
            .unwrap();
        PuzzleSet::new("tiny", vec![key.public_key()]).unwrap()
    }

    /// An expectation that takes more links than a bundle holds is refused before the first.
    #[test]
    fn a_plan_that_cannot_fit_is_refused_before_sealing() {
        let mut rng = SeededEntropy::new(b"plan");
        let set = tiny_set(&mut rng);
        let mut bundle = Bundle::new(PuzzleHash::Sha256, &PuzzleHash::Sha256.digest(b"plan"));
        // 1 s of 0.1 ms links: 10,000 links, about 3 MiB.
        let opts = SealOptions {
            expect_secs: Some(1.0),
            until_credited_secs: None,
            open_ended: false,
            checkpoint: temp("plan"),
            checkpoint_every: Duration::ZERO,
        };
        let err = seal(
            &set,
            &mut bundle,
            &opts,
            &AtomicBool::new(false),
            &mut |_, _, _| {},
            &mut |_| Ok(()),
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidParameters(ParamError::PlanTooLarge { .. })
            ),
            "{err}"
        );
        assert!(bundle.links.is_empty());
        // A plan that fits starts (and here ends).
        let opts = SealOptions {
            expect_secs: Some(0.001),
            ..opts
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
        assert_eq!((end, bundle.links.len()), (SealEnd::Reached, 10));
    }

    /// A seal without a target (until stopped) stops at the bundle size limit, with every link
    /// saved, and the saved bundle reads back: no author is left with a bundle nobody accepts.
    #[test]
    fn sealing_stops_at_the_size_limit_and_the_bundle_reads_back() {
        let mut rng = SeededEntropy::new(b"boundary");
        let set = tiny_set(&mut rng);
        let digest = PuzzleHash::Sha256.digest(b"boundary");
        let mut bundle = Bundle::new(PuzzleHash::Sha256, &digest);
        let opts = SealOptions {
            expect_secs: None,
            until_credited_secs: None,
            open_ended: false,
            checkpoint: temp("boundary"),
            checkpoint_every: Duration::ZERO,
        };
        let mut saved = String::new();
        let err = seal(
            &set,
            &mut bundle,
            &opts,
            &AtomicBool::new(false),
            &mut |_, _, _| {},
            &mut |b| {
                saved = b.to_json();
                Ok(())
            },
        )
        .unwrap_err();
        assert!(
            matches!(err, Error::InvalidParameters(ParamError::BundleFull { .. })),
            "{err}"
        );
        assert!(err.to_string().contains("longer puzzles"), "{err}");
        // The last link saved is the bundle as it stands, within the limit, and one more of
        // the widest link would pass it.
        assert_eq!(saved, bundle.to_json());
        let back = Bundle::from_json(&saved).unwrap();
        assert_eq!(back, bundle);
        let key = set.pick(None);
        let widest = Link::Puzzle {
            puzzle: key.fingerprint_hex(),
            t: key.t(),
            c: crate::bundle::widest_hex(key.n()),
        };
        let bytes = saved.len() as u64;
        assert!(bytes <= crate::bundle::MAX_BUNDLE_BYTES);
        assert!(bytes + bundle.link_cost(&widest) > crate::bundle::MAX_BUNDLE_BYTES);
        assert!(bundle.links.len() > 2000, "{}", bundle.links.len());
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

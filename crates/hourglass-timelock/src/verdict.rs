//! One verdict on a bundle, decided once: the only place that says whether a bundle is valid,
//! how much time it credits, whom that verdict trusts, and whether the document was on time.
//!
//! Every surface (the CLI, the service, Python) builds a [`Verifier`] from what its user pins
//! (the institution's private keys, or a public set and the anchors of its origin), has the
//! verifier digest the document ([`Verifier::digest`]: the verifier, never the bundle, chooses
//! the hash), calls [`Verifier::verify`] and formats the [`Verdict`] it returns, placed in time
//! by a [`DatedVerdict`](crate::dated::DatedVerdict) (the received time from verified RFC 3161
//! timestamps, a stated time or the clock; a [`Dating`] turns it into the predated time and the
//! deadline check). No surface re-checks a link, re-derives a date or picks a hash.
//!
//! ```
//! use hourglass_arith::entropy::SeededEntropy;
//! use hourglass_timelock::submission::generate_set;
//! use hourglass_timelock::verdict::{Dating, Verifier, VerifyOptions};
//! use hourglass_timelock::{Bundle, PuzzleHash};
//!
//! let mut rng = SeededEntropy::new(b"verdict doc example, insecure");
//! let (_set, keys) = generate_set("demo", &[std::time::Duration::from_secs(1)], 1024,
//!     (1000.0, false), PuzzleHash::Sha256, &mut rng).unwrap();
//! let verifier = Verifier::private(keys).unwrap();
//! let digest = verifier.digest(&b"my paper"[..]).unwrap();
//! let empty = Bundle::new(PuzzleHash::Sha256, digest.bytes());
//! let verdict = verifier.verify(&empty, &digest, &VerifyOptions::default(), &mut rng).unwrap();
//! assert!(!verdict.is_valid());
//! assert_eq!(verdict.reason(), Some("the bundle has no links"));
//! let dated = Dating::new(&verdict, 1_800_000_000, Some(1_900_000_000));
//! assert_eq!(dated.before_deadline, Some(false));
//! ```

use std::collections::HashMap;
use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use hourglass_arith::entropy::EntropySource;
use serde::{Deserialize, Serialize};

use crate::bundle::{Bundle, SetKind};
use crate::key::{PuzzleHash, PuzzleKey};
use crate::link_fault::LinkFault;
use crate::pins::OriginPins;
use crate::public::PublicSet;
pub use crate::trust::Trust;
use crate::{ParamError, Result};

/// How [`Verifier::verify`] goes through a bundle's links.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LinkPolicy {
    /// Check every link and report each (for people reading the verdict).
    Every,
    /// Check links in batches of 1, 1, 2, 4, ... and stop after the first batch with an
    /// invalid link, and check none when the document does not match: a bundle of many bogus
    /// links (each costs the verifier a private-key operation or a proof check, and its maker
    /// nothing) costs about one check; an honest bundle costs exactly its links' checks. The
    /// verdict and its reason are those of [`LinkPolicy::Every`]; only the links listed differ.
    StopAtFirstInvalid,
}

/// Options of [`Verifier::verify`].
#[derive(Debug, Clone, Copy)]
pub struct VerifyOptions {
    /// Threads that check links (at least 1, at most 64).
    pub threads: usize,
    /// Which links are checked.
    pub links: LinkPolicy,
}

impl Default for VerifyOptions {
    /// Every available core, every link.
    fn default() -> Self {
        Self {
            threads: hourglass_vdf::available_threads(),
            links: LinkPolicy::Every,
        }
    }
}

/// The verdict on one link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LinkVerdict {
    /// Position in the bundle (0-based).
    pub(crate) index: usize,
    /// The key or set fingerprint the link names.
    pub(crate) puzzle: String,
    /// Squarings.
    pub(crate) t: u64,
    /// Seconds credited (0 if invalid).
    pub(crate) credited_secs: f64,
    /// Whether it verified.
    pub(crate) valid: bool,
    /// Why not.
    pub(crate) reason: Option<String>,
}

/// The verdict on a bundle, built only by [`Verifier::verify`] (its fields are private: no
/// surface can edit it; read it through its accessors). Its JSON also carries `trustless` and `assumption`, derived from
/// `trust` ([`Trust::trustless`], [`Trust::assumption`]) when it is written and ignored when it
/// is read.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct Verdict {
    /// Whether everything verified: the document matches and every link (at least one) does.
    pub(crate) valid: bool,
    /// The kind of set the verifier holds.
    pub(crate) set: SetKind,
    /// Whom the verdict trusts.
    pub(crate) trust: Trust,
    /// Whether the document matches the bundle's digest.
    pub(crate) document_matches: bool,
    /// Seconds credited in total (0 unless valid).
    pub(crate) credited_secs: f64,
    /// Why the bundle is invalid, in one sentence (none when valid).
    pub(crate) reason: Option<String>,
    /// The verdicts of the links checked (all of them unless the policy stopped early).
    pub(crate) links: Vec<LinkVerdict>,
}

impl LinkVerdict {
    /// Position in the bundle (0-based).
    pub fn index(&self) -> usize {
        self.index
    }

    /// The key or set fingerprint the link names.
    pub fn puzzle(&self) -> &str {
        &self.puzzle
    }

    /// Squarings.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// Seconds credited (0 if invalid).
    pub fn credited_secs(&self) -> f64 {
        self.credited_secs
    }

    /// Whether it verified.
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Why not.
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }
}

impl Verdict {
    /// Whether everything verified: the document matches and every link (at least one) does.
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// The kind of set the verifier holds.
    pub fn set(&self) -> SetKind {
        self.set
    }

    /// Whom the verdict trusts.
    pub fn trust(&self) -> &Trust {
        &self.trust
    }

    /// Whether the document matches the bundle's digest.
    pub fn document_matches(&self) -> bool {
        self.document_matches
    }

    /// Seconds credited in total (0 unless valid).
    pub fn credited_secs(&self) -> f64 {
        self.credited_secs
    }

    /// Why the bundle is invalid, in one sentence (none when valid).
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// The verdicts of the links checked (all of them unless the policy stopped early).
    pub fn links(&self) -> &[LinkVerdict] {
        &self.links
    }
}

impl Serialize for Verdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Verdict", 9)?;
        st.serialize_field("valid", &self.valid)?;
        st.serialize_field("set", &self.set)?;
        for (key, value) in self.trust.json_fields() {
            st.serialize_field(key, &value)?;
        }
        st.serialize_field("document_matches", &self.document_matches)?;
        st.serialize_field("credited_secs", &self.credited_secs)?;
        st.serialize_field("reason", &self.reason)?;
        st.serialize_field("links", &self.links)?;
        st.end()
    }
}

/// Why a bundle is invalid, for [`Verdict::reason`].
enum Rejection<'a> {
    SetKind {
        bundle: SetKind,
        verifier: SetKind,
    },
    Hash {
        bundle: PuzzleHash,
        fixed: PuzzleHash,
    },
    Document,
    NoLinks,
    Link(&'a LinkVerdict),
}

impl std::fmt::Display for Rejection<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rejection::SetKind { bundle, verifier } => write!(
                f,
                "the bundle is for a {bundle} set, not the {verifier} set it was verified with"
            ),
            Rejection::Hash { bundle, fixed } => write!(
                f,
                "the bundle names hash {bundle} but the set fixes {fixed}"
            ),
            Rejection::Document => f.write_str("the document does not match the bundle's digest"),
            Rejection::NoLinks => f.write_str("the bundle has no links"),
            Rejection::Link(l) => write!(
                f,
                "link {}: {}",
                l.index + 1,
                l.reason.as_deref().unwrap_or("does not verify")
            ),
        }
    }
}

/// A document digest made by a [`Verifier`] with the hash its keys or set fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DocumentDigest {
    hash: PuzzleHash,
    bytes: Vec<u8>,
}

impl DocumentDigest {
    /// The digest's bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// The hash it was made with.
    pub fn hash(&self) -> PuzzleHash {
        self.hash
    }

    /// Whether it is the digest `bundle` states. A document whose digest does not match gets
    /// an invalid verdict, whatever it holds: a service need not keep it (its digest, from
    /// [`Verifier::recorded_digest`], gives the same verdict).
    pub fn matches(&self, bundle: &Bundle) -> bool {
        bundle.digest_bytes() == self.bytes
    }
}

/// A private set's keys, checked to fix one document hash.
struct PrivateKeys {
    by_fingerprint: HashMap<[u8; 32], PuzzleKey>,
    hash: PuzzleHash,
}

/// What verifies bundles: the institution's private keys, or a public set with its origin
/// pinned. Cheap to share between threads and jobs ([`Arc`] inside).
#[derive(Clone)]
pub struct Verifier(Arc<Kind>);

enum Kind {
    Private(PrivateKeys),
    Public { set: Box<PublicSet>, trust: Trust },
}

impl std::fmt::Debug for Verifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Verifier")
            .field("set", &self.kind())
            .field("trust", &self.trust())
            .finish_non_exhaustive()
    }
}

impl Verifier {
    /// A verifier with a private set's keys (any order). Refuses an empty list, and keys that
    /// fix different document hashes (they cannot be one set's).
    pub fn private(keys: Vec<PuzzleKey>) -> Result<Self> {
        let first = keys
            .first()
            .ok_or(ParamError::EmptySet)?
            .public()
            .meta()
            .hash;
        if let Some(other) = keys.iter().find(|k| k.public().meta().hash != first) {
            return Err(ParamError::MixedHashes {
                first,
                other: other.public().meta().hash,
            }
            .into());
        }
        let mut by_fingerprint = HashMap::with_capacity(keys.len());
        for key in keys {
            if by_fingerprint
                .insert(key.public().fingerprint(), key)
                .is_some()
            {
                return Err(ParamError::DuplicateKey.into());
            }
        }
        Ok(Self(Arc::new(Kind::Private(PrivateKeys {
            by_fingerprint,
            hash: first,
        }))))
    }

    /// A verifier of a public set, with what the verifier pins of its origin: an RSA-2048 set
    /// checks itself; a committee's modulus needs its signed transcript and the members'
    /// certificates ([`OriginPins`]), and is refused without them; the institution's own
    /// modulus is verified, with a verdict that says the institution could have forged it.
    pub fn public(set: PublicSet, pins: &OriginPins) -> Result<Self> {
        let trust = crate::public::anchor_origin(&set, pins)?;
        Ok(Self(Arc::new(Kind::Public {
            set: Box::new(set),
            trust,
        })))
    }

    /// Which kind of set this verifier holds.
    pub fn kind(&self) -> SetKind {
        match &*self.0 {
            Kind::Private(_) => SetKind::Private,
            Kind::Public { .. } => SetKind::Public,
        }
    }

    /// Whom this verifier's valid verdicts trust.
    pub fn trust(&self) -> Trust {
        match &*self.0 {
            Kind::Private(_) => Trust::InstitutionKeys,
            Kind::Public { trust, .. } => trust.clone(),
        }
    }

    /// The hash documents are digested with: the one the keys or the set fix.
    pub fn hash(&self) -> PuzzleHash {
        match &*self.0 {
            Kind::Private(keys) => keys.hash,
            Kind::Public { set, .. } => set.hash,
        }
    }

    /// Digests a document with the verifier's hash, streaming.
    pub fn digest(&self, mut document: impl Read) -> std::io::Result<DocumentDigest> {
        let mut h = self.hash().hasher();
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = document.read(&mut buf)?;
            if n == 0 {
                break;
            }
            h.update(&buf[..n]);
        }
        Ok(DocumentDigest {
            hash: self.hash(),
            bytes: h.finalize().into_vec(),
        })
    }

    /// The digest of a document this verifier (or one of the same set) made earlier with
    /// [`Verifier::digest`], from its bytes as kept by the caller (a service that stored the
    /// digest of a document rather than the document). The bytes are the caller's word: give
    /// only what a verifier of this set made.
    pub fn recorded_digest(&self, bytes: Vec<u8>) -> DocumentDigest {
        DocumentDigest {
            hash: self.hash(),
            bytes,
        }
    }

    /// The one-call form: [`Verifier::verify`] of a document held in memory, with the default
    /// options.
    pub fn verify_bytes(
        &self,
        bundle: &Bundle,
        document: &[u8],
        rng: &mut dyn EntropySource,
    ) -> Result<Verdict> {
        let digest = DocumentDigest {
            hash: self.hash(),
            bytes: self.hash().digest(document),
        };
        self.verify(bundle, &digest, &VerifyOptions::default(), rng)
    }

    /// Verifies `bundle` for the document with digest `document` (made by
    /// [`Verifier::digest`]). `rng` blinds the private-key operations of a private set.
    /// An `Err` is the verifier's own failure (entropy, a thread); every fault of the bundle is
    /// an invalid verdict with its reason.
    pub fn verify(
        &self,
        bundle: &Bundle,
        document: &DocumentDigest,
        options: &VerifyOptions,
        rng: &mut dyn EntropySource,
    ) -> Result<Verdict> {
        if document.hash != self.hash() {
            return Err(ParamError::DigestHash {
                digest: document.hash,
                fixed: self.hash(),
            }
            .into());
        }
        // A bundle made in memory is held to the form a parsed one has.
        bundle.check_form()?;
        let mut verdict = Verdict {
            valid: false,
            set: self.kind(),
            trust: self.trust(),
            document_matches: document.matches(bundle),
            credited_secs: 0.0,
            reason: None,
            links: Vec::new(),
        };
        if bundle.set != self.kind() {
            verdict.reason = Some(
                Rejection::SetKind {
                    bundle: bundle.set,
                    verifier: self.kind(),
                }
                .to_string(),
            );
            return Ok(verdict);
        }
        if bundle.hash != self.hash() {
            verdict.reason = Some(
                Rejection::Hash {
                    bundle: bundle.hash,
                    fixed: self.hash(),
                }
                .to_string(),
            );
            return Ok(verdict);
        }
        let stop_early = options.links == LinkPolicy::StopAtFirstInvalid;
        if !stop_early || verdict.document_matches {
            verdict.links = self.check_links(bundle, options, rng)?;
        }
        let complete = verdict.links.len() == bundle.links.len();
        let first_invalid = verdict.links.iter().find(|l| !l.valid);
        let rejection = if !verdict.document_matches {
            Some(Rejection::Document)
        } else if bundle.links.is_empty() {
            Some(Rejection::NoLinks)
        } else {
            first_invalid.map(Rejection::Link)
        };
        verdict.reason = rejection.map(|r| r.to_string());
        verdict.valid = verdict.reason.is_none() && complete;
        if verdict.valid {
            verdict.credited_secs = verdict.links.iter().map(|l| l.credited_secs).sum();
        }
        Ok(verdict)
    }

    /// Checks the links the policy asks for, on up to `options.threads` threads.
    fn check_links(
        &self,
        bundle: &Bundle,
        options: &VerifyOptions,
        rng: &mut dyn EntropySource,
    ) -> Result<Vec<LinkVerdict>> {
        let total = bundle.links.len();
        let mut links = Vec::with_capacity(total);
        let mut batch = match options.links {
            LinkPolicy::Every => total,
            LinkPolicy::StopAtFirstInvalid => 1,
        };
        while links.len() < total {
            let range = links.len()..(links.len() + batch).min(total);
            let checked = self.check_range(bundle, range, options.threads, rng)?;
            let invalid = checked.iter().any(|l| !l.valid);
            links.extend(checked);
            if invalid && options.links == LinkPolicy::StopAtFirstInvalid {
                break;
            }
            batch = links.len().max(1);
        }
        Ok(links)
    }

    fn check_range(
        &self,
        bundle: &Bundle,
        range: std::ops::Range<usize>,
        threads: usize,
        rng: &mut dyn EntropySource,
    ) -> Result<Vec<LinkVerdict>> {
        let indices: Vec<usize> = range.collect();
        let chunk = indices.len().div_ceil(threads.clamp(1, 64)).max(1);
        let mut rngs = Vec::new();
        for _ in indices.chunks(chunk) {
            rngs.push(rng.split()?);
        }
        let parts: Vec<Result<Vec<LinkVerdict>>> = std::thread::scope(|s| {
            let handles: Vec<_> = indices
                .chunks(chunk)
                .zip(rngs.iter_mut())
                .map(|(part, r)| {
                    s.spawn(move || {
                        part.iter()
                            .map(|&i| self.check_link(bundle, i, &mut **r))
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
        let mut links = Vec::with_capacity(indices.len());
        for part in parts {
            links.extend(part?);
        }
        Ok(links)
    }

    fn check_link(
        &self,
        bundle: &Bundle,
        index: usize,
        rng: &mut dyn EntropySource,
    ) -> Result<LinkVerdict> {
        let link = &bundle.links[index];
        let outcome = match &*self.0 {
            Kind::Private(keys) => match keys.by_fingerprint.get(&link.fingerprint()?) {
                Some(key) => crate::submission::check_link(key, bundle, index, rng)?,
                None => Err(LinkFault::UnknownKey),
            },
            Kind::Public { set, .. } => crate::public::check_link(set, bundle, index)?,
        };
        let (valid, credited_secs, reason) = match outcome {
            Ok(secs) => (true, secs, None),
            Err(fault) => (false, 0.0, Some(fault.to_string())),
        };
        Ok(LinkVerdict {
            index,
            puzzle: link.puzzle().to_string(),
            t: link.t(),
            credited_secs,
            valid,
            reason,
        })
    }
}

/// A verdict placed in time: when the bundle was received, what it credits, when the document
/// provably existed and whether that was before a deadline. One rule for receipts, the
/// service's pages and API, the CLI and Python.
///
/// Times are whole seconds (received, deadline) and milliseconds (credited, predated) since the
/// Unix epoch. Every step saturates: a credited time longer than the time since 1970 (a set
/// with a tiny rate) predates the document to the epoch, which is still true (a document that
/// existed earlier existed then), and never fails or panics.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dating {
    /// When the bundle was received (seconds since the epoch).
    pub received_unix: u64,
    /// The time credited, in milliseconds (0 unless valid).
    pub credited_ms: u64,
    /// When the document provably existed: received minus credited, not before the epoch
    /// (milliseconds since the epoch).
    pub predated_to_ms: u64,
    /// The deadline, if any (seconds since the epoch).
    pub deadline_unix: Option<u64>,
    /// Whether the document is proven to predate the deadline (valid and predated to no later
    /// than it); `None` without a deadline.
    pub before_deadline: Option<bool>,
}

impl Dating {
    /// Dates `verdict` for a bundle received at `received_unix`, against `deadline_unix`.
    pub fn new(verdict: &Verdict, received_unix: u64, deadline_unix: Option<u64>) -> Self {
        let credited_ms = if verdict.valid {
            credited_ms(verdict.credited_secs)
        } else {
            0
        };
        Self::of_credit(verdict.valid, credited_ms, received_unix, deadline_unix)
    }

    /// Dates a recorded verdict: `valid` with `credited_ms` (a receipt's statement, a stored
    /// row).
    pub fn of_credit(
        valid: bool,
        credited_ms: u64,
        received_unix: u64,
        deadline_unix: Option<u64>,
    ) -> Self {
        let credited_ms = if valid { credited_ms } else { 0 };
        let predated_to_ms = received_unix
            .saturating_mul(1000)
            .saturating_sub(credited_ms);
        Self {
            received_unix,
            credited_ms,
            predated_to_ms,
            deadline_unix,
            before_deadline: deadline_unix
                .map(|d| valid && predated_to_ms <= d.saturating_mul(1000)),
        }
    }

    /// When the bundle was received.
    pub fn received(&self) -> SystemTime {
        unix_time(Duration::from_secs(self.received_unix))
    }

    /// When the document provably existed.
    pub fn predated_to(&self) -> SystemTime {
        unix_time(Duration::from_millis(self.predated_to_ms))
    }

    /// The deadline, if any.
    pub fn deadline(&self) -> Option<SystemTime> {
        self.deadline_unix
            .map(|d| unix_time(Duration::from_secs(d)))
    }
}

/// The epoch plus `since`, saturating at the latest time RFC 3339 can write (year 9999).
fn unix_time(since: Duration) -> SystemTime {
    const LAST: Duration = Duration::from_secs(253_402_300_799); // 9999-12-31T23:59:59Z
    SystemTime::UNIX_EPOCH + since.min(LAST)
}

/// Milliseconds of `secs`, rounded, saturating (never panics: NaN and negatives are 0).
pub fn credited_ms(secs: f64) -> u64 {
    // `as` saturates and maps NaN to 0.
    (secs * 1000.0).round() as u64
}

/// Seconds since the epoch of `t` (0 before it).
pub fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// RFC 3339 in whole seconds (UTC), for every surface's dates.
pub fn rfc3339(t: SystemTime) -> String {
    let t = unix_time(t.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default());
    humantime::format_rfc3339_seconds(t).to_string()
}

impl Serialize for Dating {
    /// `received`, `credited_ms`, `predated_to`, `deadline` and `before_deadline`, the times in
    /// RFC 3339.
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        let mut st = s.serialize_struct("Dating", 5)?;
        st.serialize_field("received", &rfc3339(self.received()))?;
        st.serialize_field("credited_ms", &self.credited_ms)?;
        st.serialize_field("predated_to", &rfc3339(self.predated_to()))?;
        st.serialize_field("deadline", &self.deadline().map(rfc3339))?;
        st.serialize_field("before_deadline", &self.before_deadline)?;
        st.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(valid: bool, credited_secs: f64) -> Verdict {
        Verdict {
            valid,
            set: SetKind::Public,
            trust: Trust::Rsa2048,
            document_matches: true,
            credited_secs,
            reason: None,
            links: Vec::new(),
        }
    }

    #[test]
    fn dating_saturates_instead_of_panicking() {
        // More time credited than has passed since 1970: predated to the epoch, before any
        // deadline, and every date prints.
        let d = Dating::new(&verdict(true, 1e30), 1_800_000_000, Some(1_800_000_000));
        assert_eq!(d.predated_to_ms, 0);
        assert_eq!(d.before_deadline, Some(true));
        assert_eq!(rfc3339(d.predated_to()), "1970-01-01T00:00:00Z");
        for secs in [f64::INFINITY, f64::NAN, -5.0, f64::MAX] {
            let d = Dating::new(&verdict(true, secs), u64::MAX, Some(u64::MAX));
            serde_json::to_string(&d).unwrap();
            rfc3339(d.received());
        }
    }

    #[test]
    fn an_invalid_verdict_credits_nothing_and_is_never_on_time() {
        let d = Dating::new(&verdict(false, 100.0), 1_000, Some(2_000));
        assert_eq!(d.credited_ms, 0);
        assert_eq!(d.predated_to_ms, 1_000_000);
        assert_eq!(d.before_deadline, Some(false));
    }

    #[test]
    fn the_deadline_is_inclusive_to_the_millisecond() {
        // Received 10 s after the deadline with 10 s credited: on time; 1 ms less: late.
        let on = Dating::of_credit(true, 10_000, 1_010, Some(1_000));
        assert_eq!(on.before_deadline, Some(true));
        let late = Dating::of_credit(true, 9_999, 1_010, Some(1_000));
        assert_eq!(late.before_deadline, Some(false));
        assert_eq!(Dating::of_credit(true, 1, 5, None).before_deadline, None);
    }
}

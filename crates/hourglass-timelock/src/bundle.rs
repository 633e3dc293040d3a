//! What an author submits: the [`Bundle`] of links that a document's sealing produced, on a set
//! of either kind, and how each link's input follows from the document and the link before.
//!
//! The format is shared by private sets ([`crate::submission`]) and public sets
//! ([`crate::public`]); neither module owns it. Every hex field is read strictly canonical
//! (lowercase, minimal; docs/FORMATS.md section 12.6): one proof has one spelling, so one
//! submission cannot be made into many distinct files, submissions or receipts.

use std::time::Duration;

use hourglass_arith::checkpoint::CheckpointFile;
use hourglass_arith::hash_to_int::hash_to_residue;
use hourglass_arith::Integer;
use rug::integer::Order;
use serde::{Deserialize, Serialize};

use crate::json;
use crate::key::{input_from_digest, PuzzleHash};
pub use crate::set_kind::SetKind;
use crate::{Error, Field, FileKind, ParamError, ParseError, Result};

const BUNDLE_TYPE: &str = "hourglass-submission-bundle";
/// Version 2 of bundles: full-domain inputs for every link, one hash fixed by the set.
const FORMAT_VERSION: u32 = 2;
/// Domain separation tag of chain links' inputs (docs/FORMATS.md).
pub const CHAIN_INPUT_DST: &[u8] = b"HOURGLASS-V2-CHAIN-INPUT";
/// The largest bundle: what every reader accepts (the service's upload limit too) and what
/// sealing never passes ([`MAX_LINKS`] follows from it).
pub const MAX_BUNDLE_BYTES: u64 = 1 << 20;
/// A lower bound on the bytes any link takes in a bundle as [`Bundle::to_json`] writes it (the
/// smallest is a puzzle link with a one-digit result: its fingerprint alone is 64 digits).
pub const MIN_LINK_BYTES: u64 = 100;
/// Most links a bundle may hold: as many of the smallest links as [`MAX_BUNDLE_BYTES`] holds.
pub const MAX_LINKS: usize = (MAX_BUNDLE_BYTES / MIN_LINK_BYTES) as usize;
/// Relative slack when comparing credited times (they come from rounded squaring counts).
const CREDIT_TOLERANCE: f64 = 1e-4;

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

/// Largest number of elements a Pietrzak proof may hold (one per halving round).
pub const MAX_PIETRZAK_ELEMENTS: usize = 64;

fn bundle_error(why: ParseError) -> Error {
    Error::parse(FileKind::SubmissionBundle, why)
}

/// A big integer field of a bundle, strictly canonical.
pub(crate) fn bundle_integer(field: Field, s: &str) -> Result<Integer> {
    json::hex_integer(FileKind::SubmissionBundle, field, s)
}

impl Link {
    /// The key (or public set) fingerprint, in hex, this link names.
    pub fn puzzle(&self) -> &str {
        match self {
            Link::Puzzle { puzzle, .. }
            | Link::Squarings { puzzle, .. }
            | Link::Vdf { puzzle, .. } => puzzle,
        }
    }

    /// The fingerprint this link names, as bytes.
    pub fn fingerprint(&self) -> Result<[u8; 32]> {
        hourglass_arith::bytes_from_canonical_hex(self.puzzle()).ok_or_else(|| {
            bundle_error(ParseError::NotCanonicalHex {
                field: Field::Puzzle,
            })
        })
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
        match self {
            Link::Puzzle { c, .. } | Link::Squarings { c, .. } => bundle_integer(Field::C, c),
            Link::Vdf { y, .. } => bundle_integer(Field::Y, y),
        }
    }

    /// Checks every field's form (canonical hex, proof sizes), naming the first bad one.
    fn check_form(&self) -> Result<()> {
        self.fingerprint()?;
        self.c()?;
        if let Link::Vdf { proof, .. } = self {
            match proof {
                LinkProof::Wesolowski { pi, l } => {
                    bundle_integer(Field::Pi, pi)?;
                    bundle_integer(Field::L, l)?;
                }
                LinkProof::Pietrzak { mu } => {
                    if mu.len() > MAX_PIETRZAK_ELEMENTS {
                        return Err(bundle_error(ParseError::ProofTooLong {
                            count: mu.len(),
                            max: MAX_PIETRZAK_ELEMENTS,
                        }));
                    }
                    for m in mu {
                        bundle_integer(Field::Mu, m)?;
                    }
                }
            }
        }
        Ok(())
    }
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
    /// hash its keys or set fix and refuses a bundle that names another.
    pub hash: PuzzleHash,
    /// The document digest (hex).
    pub digest: String,
    /// The links, in order.
    pub links: Vec<Link>,
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

    /// The bytes [`Bundle::to_json`] writes.
    pub fn json_bytes(&self) -> u64 {
        self.to_json().len() as u64
    }

    /// The bytes appending `link` adds to this bundle's JSON (as the second link or later;
    /// the first costs a separator less).
    pub(crate) fn link_cost(&self, link: &Link) -> u64 {
        let mut b = Bundle {
            kind: self.kind.clone(),
            version: self.version,
            set: self.set,
            hash: self.hash,
            digest: self.digest.clone(),
            links: vec![link.clone()],
        };
        let one = b.json_bytes();
        b.links.push(link.clone());
        b.json_bytes().saturating_sub(one)
    }

    /// Parses a bundle: its header, every field's canonical form, its size, at least one link
    /// and its links' kinds (proof-carrying links exactly on a public set).
    pub fn from_json(text: &str) -> Result<Self> {
        if text.len() as u64 > MAX_BUNDLE_BYTES {
            return Err(bundle_error(ParseError::TooLarge {
                max: MAX_BUNDLE_BYTES,
            }));
        }
        let b: Bundle = json::parse_versioned(
            FileKind::SubmissionBundle,
            text,
            BUNDLE_TYPE,
            FORMAT_VERSION,
        )?;
        b.check_form()?;
        // A bundle file holds at least one link: sealing writes one after its first link.
        if b.links.is_empty() {
            return Err(bundle_error(ParseError::NoLinks));
        }
        Ok(b)
    }

    /// Checks the form of a bundle however it was made: what [`Bundle::from_json`] checks.
    pub fn check_form(&self) -> Result<()> {
        let digest = self.digest_checked()?;
        if digest.len() != self.hash.output_len() {
            return Err(bundle_error(ParseError::DigestLength {
                hash: self.hash,
                want: self.hash.output_len(),
                got: digest.len(),
            }));
        }
        if self.links.len() > MAX_LINKS {
            return Err(bundle_error(ParseError::TooManyLinks {
                count: self.links.len(),
                max: MAX_LINKS,
            }));
        }
        let proof_links = self
            .links
            .iter()
            .filter(|l| matches!(l, Link::Vdf { .. }))
            .count();
        let expected = if self.is_public() {
            self.links.len()
        } else {
            0
        };
        if proof_links != expected {
            return Err(bundle_error(ParseError::LinkKinds { set: self.set }));
        }
        self.links.iter().try_for_each(Link::check_form)
    }

    /// The digest bytes, read strictly (lowercase hex).
    fn digest_checked(&self) -> Result<Vec<u8>> {
        let canonical = !self.digest.is_empty()
            && self.digest.len().is_multiple_of(2)
            && self
                .digest
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !canonical {
            return Err(bundle_error(ParseError::NotCanonicalHex {
                field: Field::Digest,
            }));
        }
        hex::decode(&self.digest).map_err(|e| bundle_error(ParseError::DigestHex(e)))
    }

    /// The digest bytes (empty when the field is malformed, which a parsed bundle never is).
    pub fn digest_bytes(&self) -> Vec<u8> {
        self.digest_checked().unwrap_or_default()
    }

    /// Total squarings of all links.
    pub fn total_squarings(&self) -> u64 {
        self.links.iter().map(Link::t).fold(0, u64::saturating_add)
    }
}

/// Keeps a bundle being sealed readable: within [`MAX_BUNDLE_BYTES`], which every reader and the
/// service enforce. A plan (the links an expected time takes) that cannot fit is refused before
/// sealing starts, and a seal that goes on (open-ended targets, a resumed or longer run) stops
/// before the link that could pass the limit, with every link sealed so far kept.
pub(crate) struct SizeGuard {
    /// The bundle's bytes now (an upper bound: links added are counted as later links).
    used: u64,
}

impl SizeGuard {
    /// The guard of `bundle` as it is.
    pub(crate) fn new(bundle: &Bundle) -> Self {
        Self {
            used: bundle.json_bytes(),
        }
    }

    /// Refuses a plan of `links` more links (each as large as such a link can be) that cannot
    /// fit. Stops counting past [`MAX_LINKS`].
    pub(crate) fn check_plan(
        &self,
        bundle: &Bundle,
        links: impl Iterator<Item = Link>,
    ) -> Result<()> {
        let mut bytes = self.used;
        let mut count = 0u64;
        let mut costs: Vec<(Link, u64)> = Vec::new();
        for link in links.take(MAX_LINKS + 1) {
            let cost = match costs.iter().find(|(l, _)| *l == link) {
                Some((_, c)) => *c,
                None => {
                    let c = bundle.link_cost(&link);
                    costs.push((link, c));
                    c
                }
            };
            bytes = bytes.saturating_add(cost);
            count += 1;
        }
        if bytes > MAX_BUNDLE_BYTES || bundle.links.len() as u64 + count > MAX_LINKS as u64 {
            return Err(ParamError::PlanTooLarge {
                links: count,
                bytes,
                max: MAX_BUNDLE_BYTES,
            }
            .into());
        }
        Ok(())
    }

    /// Before sealing a link that is at most `worst`: refuses it when it could pass the limit.
    pub(crate) fn check_next(&self, bundle: &Bundle, worst: &Link) -> Result<()> {
        let next = bundle.link_cost(worst);
        if self.used.saturating_add(next) > MAX_BUNDLE_BYTES || bundle.links.len() >= MAX_LINKS {
            return Err(ParamError::BundleFull {
                links: bundle.links.len(),
                bytes: self.used,
                next,
                max: MAX_BUNDLE_BYTES,
            }
            .into());
        }
        Ok(())
    }

    /// Counts `link`, just appended to `bundle`.
    pub(crate) fn added(&mut self, bundle: &Bundle, link: &Link) {
        self.used = self.used.saturating_add(bundle.link_cost(link));
    }
}

/// The largest a link's hex number below `n` can be written: all its digits.
pub(crate) fn widest_hex(n: &Integer) -> String {
    "f".repeat((n.significant_bits() as usize).div_ceil(4).max(1))
}

/// The input of the link after one that produced `c`: a full-domain element of the next
/// modulus, `m = OS2IP(expand_message_xmd(SHA-256, I2OSP(c), "HOURGLASS-V2-CHAIN-INPUT", L))
/// mod n` (the same mapping as [`crate::input_from_digest`] with its own tag; `I2OSP(c)` is the
/// minimal big-endian encoding of `c`; see docs/FORMATS.md).
pub fn chain_input(previous_c: &Integer, n: &Integer) -> Result<Integer> {
    Ok(hash_to_residue(
        &previous_c.to_digits::<u8>(Order::Msf),
        CHAIN_INPUT_DST,
        n,
    )?)
}

/// The input of link `index` (0-based) of `bundle` on modulus `n`: the document's input for the
/// first link, the previous link's result hashed onto `n` for the others.
pub fn link_input(bundle: &Bundle, index: usize, n: &Integer) -> Result<Integer> {
    if index == 0 {
        input_from_digest(n, &bundle.digest_bytes())
    } else {
        chain_input(&bundle.links[index - 1].c()?, n)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// [`MAX_LINKS`] is derived from [`MIN_LINK_BYTES`]: no link may take fewer bytes.
    #[test]
    fn no_link_is_smaller_than_the_bound_max_links_is_derived_from() {
        let bundle = Bundle::new(PuzzleHash::Sha256, &[0u8; 32]);
        let fingerprint = "0".repeat(64);
        let smallest = [
            Link::Puzzle {
                puzzle: fingerprint.clone(),
                t: 0,
                c: "0".into(),
            },
            Link::Squarings {
                puzzle: fingerprint.clone(),
                t: 0,
                c: "0".into(),
            },
            Link::Vdf {
                puzzle: fingerprint,
                t: 0,
                y: "0".into(),
                proof: LinkProof::Pietrzak { mu: Vec::new() },
            },
        ];
        for link in &smallest {
            // As the first link (a separator less than later ones).
            let first = Bundle {
                links: vec![link.clone()],
                ..bundle.clone()
            };
            assert!(
                first.json_bytes() - bundle.json_bytes() >= MIN_LINK_BYTES,
                "{link:?}"
            );
            assert!(bundle.link_cost(link) >= MIN_LINK_BYTES, "{link:?}");
        }
        assert_eq!(MAX_LINKS as u64, MAX_BUNDLE_BYTES / MIN_LINK_BYTES);
    }
}

//! Trustless offline submission: public puzzle sets, proof-carrying links, public verification.
//!
//! A [`PublicSet`] is a modulus nobody holds the factors of (a committee's distributed key, the
//! RSA-2048 challenge number, or, with weaker trust, an institution's own key) and a list of
//! link lengths `t`. There is no trapdoor: an author seals by doing the squarings
//! ([`seal_public`]) and attaches to each link a Wesolowski proof (hourglass-vdf) whose challenge
//! prime is hashed from the link's modulus, input, output and `t`. Anyone verifies a bundle with
//! the public set alone ([`crate::verdict::Verifier::public`]), in milliseconds, and nobody, the institution
//! included, can forge one for a modulus whose factors nobody knows.
//!
//! Links live in the group `Z_n* / {+1, -1}` of the VDF crate: link `i` maps its input onto `Z_n`
//! exactly as private sets do ([`crate::input_from_digest`], [`crate::bundle::chain_input`]),
//! takes the canonical representative `x_i = min(m_i, n - m_i)`, and claims
//! `y_i = canon(x_i^(2^t_i))`; the next input is hashed from `y_i`. docs/FORMATS.md section 12.10
//! specifies the files byte for byte.

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hourglass_arith::squaring::Progress;
use hourglass_arith::Integer;
use hourglass_vdf::eval::{evaluate, powers_path, EvalOptions, EvalOutcome};
use hourglass_vdf::group::RsaGroup;
use hourglass_vdf::{
    Pietrzak, PietrzakProof, SecurityLevel, Statement, Vdf, Wesolowski, WesolowskiProof,
};
use rug::integer::Order;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::bundle::{
    bundle_integer, link_input, widest_hex, Bundle, Link, LinkProof, SealEnd, SealOptions, SetKind,
    SizeGuard,
};
use crate::json;
use crate::key::PuzzleHash;
use crate::link_fault::LinkFault;
pub use crate::pins::{CommitteePins, OriginPins};
use crate::trust::Trust;
use crate::{Error, Field, FileKind, Fingerprinted, ParamError, ParseError, Result, TrustError};

pub use hourglass_vdf::proof_file::ProofScheme;

/// The `type` of a public set file.
pub(crate) const PUBLIC_SET_TYPE: &str = "hourglass-public-puzzle-set";
/// The puzzle formats' version (public sets were introduced with version 2).
const PUBLIC_SET_VERSION: u32 = 2;
/// Smallest modulus of a public set: a VDF group must resist factoring.
pub const MIN_PUBLIC_BITS: u32 = 2048;

/// Where a public set's modulus comes from, and how anyone can check it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ModulusOrigin {
    /// The RSA-2048 challenge number (RSA Laboratories, 1991): its factors were never known to
    /// anyone who still has them; anyone can compare it with the published number.
    Rsa2048,
    /// A committee's distributed key generation (`hourglass dkg`): nobody learned the factors
    /// unless more than the committee's threshold colluded. Check it against the committee's
    /// published `public.pem` and the fingerprint of its transcript.
    Dkg {
        /// The committee's own description (names of the members, where they publish).
        committee: String,
        /// Fingerprint of the generation's public transcript, as the committee published it.
        transcript: String,
    },
    /// An RSA key the institution made itself: it knows the factors, so it (and a thief of its
    /// key) could forge bundles; verification is still public.
    Institution,
}

impl ModulusOrigin {
    /// A one-line description for people.
    pub fn describe(&self) -> String {
        match self {
            ModulusOrigin::Rsa2048 => "the RSA-2048 challenge number (factors unknown)".into(),
            ModulusOrigin::Dkg { committee, .. } => format!(
                "a committee's distributed key generation ({committee}; trusted only once its signed transcript is checked against members' certificates the verifier pins)"
            ),
            ModulusOrigin::Institution => {
                "the institution's own key (the institution could forge bundles)".into()
            }
        }
    }
}

/// A published set of link lengths on one public modulus.
#[derive(Debug, Clone, PartialEq)]
pub struct PublicSet {
    /// A name for the set (the deadline it serves).
    pub name: String,
    /// The modulus and its group.
    group: RsaGroup,
    /// Where the modulus comes from.
    pub origin: ModulusOrigin,
    /// Link lengths in squarings, longest first.
    pub squarings: Vec<u64>,
    /// Reference rate: squarings per second (credited time is `t / rate`).
    pub rate: f64,
    /// Whether `rate` was measured on the issuing machine.
    pub rate_measured: bool,
    /// The document hash the set fixes.
    pub hash: PuzzleHash,
    /// The proof scheme the set fixes.
    pub proof: ProofScheme,
    /// Creation time, RFC 3339 UTC.
    pub created: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PublicSetJson {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    name: String,
    bits: u32,
    n: String,
    origin: ModulusOrigin,
    squarings: Vec<u64>,
    rate: f64,
    rate_measured: bool,
    hash: PuzzleHash,
    proof: ProofScheme,
    security_bits: u32,
    created: String,
    fingerprint: String,
}

/// The security level of every public set's proofs (fixed by the format, so the verifier, not
/// the bundle, chooses it): 256-bit challenges.
const LEVEL: SecurityLevel = SecurityLevel::K128;

impl PublicSet {
    /// A public set on `n` (at least [`MIN_PUBLIC_BITS`] bits, passing the VDF group checks).
    #[allow(clippy::too_many_arguments)] // one per field of the file
    pub fn new(
        name: &str,
        n: Integer,
        origin: ModulusOrigin,
        mut squarings: Vec<u64>,
        rate: f64,
        rate_measured: bool,
        hash: PuzzleHash,
        proof: ProofScheme,
        created: &str,
    ) -> Result<Self> {
        if n.significant_bits() < MIN_PUBLIC_BITS {
            return Err(ParamError::PublicModulusTooSmall {
                bits: n.significant_bits(),
                min: MIN_PUBLIC_BITS,
            }
            .into());
        }
        let group = RsaGroup::new(n)?;
        if let ModulusOrigin::Dkg { transcript, .. } = &origin {
            if hourglass_arith::bytes_from_canonical_hex::<32>(transcript).is_none() {
                return Err(Error::parse(
                    FileKind::PublicPuzzleSet,
                    ParseError::NotCanonicalHex {
                        field: Field::Fingerprint,
                    },
                ));
            }
        }
        if origin == ModulusOrigin::Rsa2048 && group.modulus() != RsaGroup::rsa_2048().modulus() {
            return Err(ParamError::OriginMismatch.into());
        }
        if squarings.is_empty()
            || squarings
                .iter()
                .any(|&t| t == 0 || t > hourglass_vdf::MAX_ITERATIONS)
        {
            return Err(ParamError::LinkLengths.into());
        }
        squarings.sort_unstable_by(|a, b| b.cmp(a));
        squarings.dedup();
        if !(rate.is_finite() && rate > 0.0) {
            return Err(ParamError::Rate.into());
        }
        Ok(Self {
            name: name.to_string(),
            group,
            origin,
            squarings,
            rate,
            rate_measured,
            hash,
            proof,
            created: created.to_string(),
        })
    }

    /// The modulus.
    pub fn n(&self) -> &Integer {
        self.group.modulus()
    }

    /// The VDF group of the modulus.
    pub fn group(&self) -> &RsaGroup {
        &self.group
    }

    /// SHA-256 over every field (length-prefixed; docs/FORMATS.md section 12.10).
    pub fn fingerprint(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        let mut field = |bytes: &[u8]| {
            h.update((bytes.len() as u32).to_be_bytes());
            h.update(bytes);
        };
        field(b"hourglass-public-set-v2");
        field(self.name.as_bytes());
        field(&self.n().to_digits::<u8>(Order::Msf));
        field(
            serde_json::to_string(&self.origin)
                .unwrap_or_default()
                .as_bytes(),
        );
        let ts: Vec<u8> = self
            .squarings
            .iter()
            .flat_map(|t| t.to_be_bytes())
            .collect();
        field(&ts);
        field(&self.rate.to_bits().to_be_bytes());
        field(&[u8::from(self.rate_measured)]);
        field(self.hash.name().as_bytes());
        field(self.proof.name().as_bytes());
        field(&LEVEL.bits().to_be_bytes());
        field(self.created.as_bytes());
        h.finalize().into()
    }

    /// The fingerprint in hex.
    pub fn fingerprint_hex(&self) -> String {
        hex::encode(self.fingerprint())
    }

    /// Seconds credited for `t` squarings.
    pub fn credited_secs(&self, t: u64) -> f64 {
        t as f64 / self.rate
    }

    /// The set as JSON.
    pub fn to_json(&self) -> String {
        json::to_text(&PublicSetJson {
            kind: PUBLIC_SET_TYPE.into(),
            version: PUBLIC_SET_VERSION,
            name: self.name.clone(),
            bits: self.n().significant_bits(),
            n: format!("{:x}", self.n()),
            origin: self.origin.clone(),
            squarings: self.squarings.clone(),
            rate: self.rate,
            rate_measured: self.rate_measured,
            hash: self.hash,
            proof: self.proof,
            security_bits: LEVEL.bits(),
            created: self.created.clone(),
            fingerprint: self.fingerprint_hex(),
        })
    }

    /// Parses a public set, checking its fingerprint, its modulus and its origin.
    pub fn from_json(text: &str) -> Result<Self> {
        let what = FileKind::PublicPuzzleSet;
        if text.len() as u64 > crate::submission::MAX_SET_BYTES {
            return Err(Error::parse(
                what,
                ParseError::TooLarge {
                    max: crate::submission::MAX_SET_BYTES,
                },
            ));
        }
        let j: PublicSetJson =
            json::parse_versioned(what, text, PUBLIC_SET_TYPE, PUBLIC_SET_VERSION)?;
        let err = |why: ParseError| Error::parse(what, why);
        if j.security_bits != LEVEL.bits() {
            return Err(err(ParseError::SecurityLevel {
                found: j.security_bits,
                supported: LEVEL.bits(),
            }));
        }
        let n = json::hex_integer(what, Field::N, &j.n)?;
        if n.significant_bits() != j.bits {
            return Err(err(ParseError::BitsMismatch {
                recorded: j.bits,
                actual: n.significant_bits(),
            }));
        }
        let set = Self::new(
            &j.name,
            n,
            j.origin,
            j.squarings.clone(),
            j.rate,
            j.rate_measured,
            j.hash,
            j.proof,
            &j.created,
        )?;
        if set.squarings != j.squarings {
            return Err(err(ParseError::SquaringsOrder));
        }
        if set.fingerprint_hex() != j.fingerprint {
            return Err(err(ParseError::FingerprintMismatch {
                of: Fingerprinted::Set,
            }));
        }
        Ok(set)
    }

    /// The next link length for about `remaining` seconds of expected offline time (as
    /// [`crate::submission::PuzzleSet::pick`]).
    pub fn pick(&self, remaining: Option<f64>) -> u64 {
        let shortest = *self.squarings.last().unwrap_or(&1);
        match remaining {
            Some(r) => self
                .squarings
                .iter()
                .copied()
                .find(|&t| self.credited_secs(t) <= r)
                .unwrap_or(shortest),
            None => shortest,
        }
    }
}

fn never_unverified(source: hourglass_vdf::Error) -> Error {
    Error::UnverifiedProof { source }
}

/// Checks one link's proof against its statement, in the scheme `set` fixes.
fn check_link_proof(
    set: &PublicSet,
    statement: &Statement,
    proof: &LinkProof,
) -> Result<std::result::Result<(), LinkFault>> {
    let outcome = match (set.proof, proof) {
        (ProofScheme::Wesolowski, LinkProof::Wesolowski { pi, l }) => {
            let p = WesolowskiProof {
                pi: bundle_integer(Field::Pi, pi)?,
                l: bundle_integer(Field::L, l)?,
            };
            Wesolowski::new(LEVEL).verify(statement, &p)
        }
        (ProofScheme::Pietrzak, LinkProof::Pietrzak { mu }) => {
            let p = PietrzakProof {
                mu: mu
                    .iter()
                    .map(|m| bundle_integer(Field::Mu, m))
                    .collect::<Result<Vec<_>>>()?,
            };
            Pietrzak::new(LEVEL).verify(statement, &p)
        }
        _ => return Ok(Err(LinkFault::ProofScheme(set.proof))),
    };
    Ok(outcome.map_err(|e| LinkFault::BadProof(e.to_string())))
}

/// The canonical input element of link `index` of `bundle` for `set`.
fn link_element(set: &PublicSet, bundle: &Bundle, index: usize) -> Result<Integer> {
    Ok(set.group.canonical(&link_input(bundle, index, set.n())?))
}

/// Credited seconds of the proof-carrying links of `bundle` (valid or not; see
/// [`crate::verdict::Verifier`] for the verdict).
pub fn credited_secs(set: &PublicSet, bundle: &Bundle) -> f64 {
    bundle.links.iter().map(|l| set.credited_secs(l.t())).sum()
}

/// Seals `bundle` on a public set: each link is `t` squarings of the previous link's hashed
/// output, with a Wesolowski proof; resumes the link in progress from `options.checkpoint`. The
/// `open_ended` option makes one link of the length `until_credited_secs` asks for.
pub fn seal_public(
    set: &PublicSet,
    bundle: &mut Bundle,
    options: &SealOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(usize, u64, Progress),
    on_link: &mut dyn FnMut(&Bundle) -> Result<()>,
) -> Result<SealEnd> {
    if !bundle.is_public() {
        return Err(ParamError::BundleSetKind {
            bundle: SetKind::Private,
        }
        .into());
    }
    // The widest link of `t` squarings: every number with all its digits, a Pietrzak proof
    // with one midpoint per bit of `t`.
    let wide = widest_hex(set.group.modulus());
    let worst = |t: u64| Link::Vdf {
        puzzle: set.fingerprint_hex(),
        t,
        y: wide.clone(),
        proof: match set.proof {
            ProofScheme::Wesolowski => LinkProof::Wesolowski {
                pi: wide.clone(),
                l: "f".repeat((LEVEL.prime_bits() as usize).div_ceil(4)),
            },
            ProofScheme::Pietrzak => LinkProof::Pietrzak {
                mu: vec![wide.clone(); (u64::BITS - t.leading_zeros()) as usize],
            },
        },
    };
    let mut room = SizeGuard::new(bundle);
    if !options.open_ended && options.target_secs().is_some() {
        let mut credited = credited_secs(set, bundle);
        let plan = std::iter::from_fn(|| {
            if options.reached(credited) {
                return None;
            }
            let t = set.pick(options.expect_secs.map(|e| e - credited));
            credited += set.credited_secs(t);
            Some(worst(t))
        });
        room.check_plan(bundle, plan)?;
    }
    loop {
        let credited = credited_secs(set, bundle);
        if options.reached(credited) {
            return Ok(SealEnd::Reached);
        }
        let index = bundle.links.len();
        let t = if options.open_ended {
            if index > 0 {
                return Ok(SealEnd::Reached);
            }
            let Some(u) = options.until_credited_secs else {
                return Err(ParamError::OpenEndedPublic.into());
            };
            ((u * set.rate).ceil() as u64).clamp(1, hourglass_vdf::MAX_ITERATIONS)
        } else {
            set.pick(options.expect_secs.map(|e| e - credited))
        };
        room.check_next(bundle, &worst(t))?;
        let x = link_element(set, bundle, index)?;
        let eval_options = EvalOptions {
            checkpoint: Some(options.checkpoint.clone()),
            checkpoint_every: options.checkpoint_every,
            progress_every: Duration::from_millis(250),
        };
        let evaluation = match evaluate(&set.group, &x, t, &eval_options, stop, &mut |p| {
            progress(index, t, p)
        })? {
            EvalOutcome::Finished(e) => e,
            EvalOutcome::Stopped { .. } => return Ok(SealEnd::Stopped),
        };
        let statement = evaluation.statement(LEVEL);
        let proof = match set.proof {
            ProofScheme::Wesolowski => {
                let vdf = Wesolowski::new(LEVEL);
                let p = vdf.prove(&evaluation)?;
                // Never hand out a link that does not verify (a fault, a corrupt powers file).
                vdf.verify(&statement, &p).map_err(never_unverified)?;
                LinkProof::Wesolowski {
                    pi: format!("{:x}", p.pi),
                    l: format!("{:x}", p.l),
                }
            }
            ProofScheme::Pietrzak => {
                let vdf = Pietrzak::new(LEVEL);
                let p = vdf.prove(&evaluation)?;
                vdf.verify(&statement, &p).map_err(never_unverified)?;
                LinkProof::Pietrzak {
                    mu: p.mu.iter().map(|m| format!("{m:x}")).collect(),
                }
            }
        };
        let link = Link::Vdf {
            puzzle: set.fingerprint_hex(),
            t,
            y: format!("{:x}", statement.y),
            proof,
        };
        room.added(bundle, &link);
        bundle.links.push(link);
        on_link(bundle)?;
        options.checkpoint.remove();
        let _ = std::fs::remove_file(powers_path(options.checkpoint.path()));
    }
}

/// Checks link `index` of `bundle` against `set`, with no secret: the seconds it credits, or
/// why it does not verify. Called by [`crate::verdict::Verifier`], which owns the verdict.
pub(crate) fn check_link(
    set: &PublicSet,
    bundle: &Bundle,
    index: usize,
) -> Result<std::result::Result<f64, LinkFault>> {
    let link = &bundle.links[index];
    let Link::Vdf { t, y, proof, .. } = link else {
        // A public set's bundle holds only proof-carrying links (its form is checked first).
        return Ok(Err(LinkFault::DoesNotVerify));
    };
    if link.fingerprint()? != set.fingerprint() {
        return Ok(Err(LinkFault::OtherSet));
    }
    let statement = Statement {
        group: set.group.clone(),
        x: link_element(set, bundle, index)?,
        y: bundle_integer(Field::Y, y)?,
        iterations: *t,
        level: LEVEL,
    };
    Ok(check_link_proof(set, &statement, proof)?.map(|()| set.credited_secs(*t)))
}

/// Whom a verdict on `set` trusts, given what the verifier pinned; an error when the origin
/// cannot be anchored (a committee without pins, pins that do not match).
pub(crate) fn anchor_origin(set: &PublicSet, pins: &OriginPins) -> Result<Trust> {
    match (&set.origin, &pins.committee) {
        (ModulusOrigin::Rsa2048, None) => Ok(Trust::Rsa2048),
        (ModulusOrigin::Institution, None) => Ok(Trust::InstitutionModulus),
        (ModulusOrigin::Dkg { committee, .. }, None) => Err(TrustError::UnpinnedCommittee {
            committee: committee.clone(),
        }
        .into()),
        (ModulusOrigin::Dkg { transcript, .. }, Some(pins)) => {
            crate::committee::anchor(set.n(), transcript, pins)
        }
        (origin, Some(_)) => Err(TrustError::NotACommittee {
            origin: origin.describe(),
        }
        .into()),
    }
}

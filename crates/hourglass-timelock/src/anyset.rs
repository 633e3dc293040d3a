//! A puzzle set of either kind, for the surfaces that take whatever set an institution
//! published: a private [`PuzzleSet`] (the institution verifies with its keys) or a
//! [`PublicSet`] (anyone verifies). One place decides which a `set.json` is, how a document is
//! digested for it, how its bundles start, resume and are sealed.

use std::sync::atomic::AtomicBool;

use hourglass_arith::squaring::Progress;

use crate::bundle::{Bundle, SealEnd, SealOptions, SetKind};
use crate::key::PuzzleHash;
use crate::public::{seal_public, PublicSet, PUBLIC_SET_TYPE};
use crate::submission::{seal, PuzzleSet, MAX_SET_BYTES, SET_TYPE};
use crate::{Error, FileKind, ParamError, ParseError, Result};

/// A set of either kind.
#[derive(Debug, Clone)]
pub enum AnySet {
    /// Puzzle keys with trapdoors held by the institution.
    Private(PuzzleSet),
    /// A public modulus: links carry proofs.
    Public(PublicSet),
}

impl AnySet {
    /// Reads a `set.json` of either kind.
    pub fn from_json(text: &str) -> Result<Self> {
        if text.len() as u64 > MAX_SET_BYTES {
            return Err(Error::parse(
                FileKind::PuzzleSet,
                ParseError::TooLarge { max: MAX_SET_BYTES },
            ));
        }
        // The kind is the typed `type` field, never a substring of the text.
        match crate::json::file_type(FileKind::PuzzleSet, text)?.as_str() {
            PUBLIC_SET_TYPE => PublicSet::from_json(text).map(AnySet::Public),
            SET_TYPE => PuzzleSet::from_json(text).map(AnySet::Private),
            other => Err(Error::parse(
                FileKind::PuzzleSet,
                ParseError::Type {
                    found: other.to_string(),
                    expected: "hourglass-puzzle-set or hourglass-public-puzzle-set",
                },
            )),
        }
    }

    /// Which kind of set this is.
    pub fn kind(&self) -> SetKind {
        match self {
            AnySet::Private(_) => SetKind::Private,
            AnySet::Public(_) => SetKind::Public,
        }
    }

    /// Whether this is a public set.
    pub fn is_public(&self) -> bool {
        matches!(self, AnySet::Public(_))
    }

    /// The hash documents are digested with (the set fixes it; the author does not choose).
    pub fn hash(&self) -> PuzzleHash {
        match self {
            AnySet::Private(s) => s.hash(),
            AnySet::Public(s) => s.hash,
        }
    }

    /// Seconds the set credits a bundle's links with.
    pub fn credited_secs(&self, bundle: &Bundle) -> f64 {
        match self {
            AnySet::Private(s) => crate::submission::credited_secs(s, bundle),
            AnySet::Public(s) => crate::public::credited_secs(s, bundle),
        }
    }

    /// An empty bundle of the right kind for a document digest.
    pub fn new_bundle(&self, digest: &[u8]) -> Bundle {
        match self {
            AnySet::Private(_) => Bundle::new(self.hash(), digest),
            AnySet::Public(_) => Bundle::new_public(self.hash(), digest),
        }
    }

    /// Checks that an existing bundle can be continued on this set for this document.
    pub fn check_resume(&self, bundle: &Bundle, digest: &[u8]) -> Result<()> {
        if bundle.digest_bytes() != digest {
            return Err(ParamError::BundleOtherDocument.into());
        }
        if bundle.is_public() != self.is_public() {
            return Err(ParamError::BundleSetKind { bundle: bundle.set }.into());
        }
        Ok(())
    }

    /// Seals links onto `bundle` ([`seal`] or [`seal_public`]); `progress` gets the link's
    /// index, its credited seconds and the squaring progress.
    pub fn seal(
        &self,
        bundle: &mut Bundle,
        options: &SealOptions,
        stop: &AtomicBool,
        progress: &mut dyn FnMut(usize, f64, Progress),
        on_link: &mut dyn FnMut(&Bundle) -> Result<()>,
    ) -> Result<SealEnd> {
        match self {
            AnySet::Private(s) => seal(
                s,
                bundle,
                options,
                stop,
                &mut |index, key, p| progress(index, key.credited_secs(), p),
                on_link,
            ),
            AnySet::Public(s) => seal_public(
                s,
                bundle,
                options,
                stop,
                &mut |index, t, p| progress(index, s.credited_secs(t), p),
                on_link,
            ),
        }
    }
}

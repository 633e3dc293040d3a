//! Why a time-lock operation failed: one variant per cause, grouped by area (parameters,
//! insecure choices, the JSON files, age recipients).

use crate::puzzle_hash::PuzzleHash;
use crate::set_kind::SetKind;

/// Errors from time-lock operations.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Arithmetic-core failure (entropy, checkpoints, parameters).
    #[error(transparent)]
    Arith(#[from] hourglass_arith::Error),
    /// RSA-layer failure.
    #[error(transparent)]
    Rsa(#[from] hourglass_rsa::Error),
    /// VDF failure of a public set (its modulus, an evaluation, a proof).
    #[error(transparent)]
    Vdf(#[from] hourglass_vdf::Error),
    /// Parameters that cannot work.
    #[error("invalid parameters: {0}")]
    InvalidParameters(#[from] ParamError),
    /// Parameters that published attacks break (allowed only when explicitly asked for).
    #[error("insecure parameters: {0}")]
    Insecure(#[from] Insecurity),
    /// A file in a format version this hourglass no longer verifies (its rules were unsafe).
    #[error(
        "{what} is format version {found}; this hourglass reads only version {expected}: {why}"
    )]
    OldVersion {
        /// What was being read.
        what: FileKind,
        /// The version in the file.
        found: u32,
        /// The version this build reads.
        expected: u32,
        /// What changed, and what to do.
        why: &'static str,
    },
    /// A file could not be parsed or is inconsistent.
    #[error("cannot parse {what}: {why}")]
    Parse {
        /// What was being read.
        what: FileKind,
        /// Why it failed.
        #[source]
        why: ParseError,
    },
    /// A proof just made does not verify (a computation fault, a corrupt powers file): it was
    /// not added.
    #[error("the new proof does not verify ({source}): a computation fault; nothing was added")]
    UnverifiedProof {
        /// Why the proof does not verify.
        #[source]
        source: hourglass_vdf::Error,
    },
    /// A public set's origin cannot be anchored in what the verifier pinned.
    #[error(transparent)]
    Trust(#[from] TrustError),
    /// The caller's callback for a finished link failed (its message: the callback belongs to
    /// the caller, whose error type this crate does not know).
    #[error("{0}")]
    OnLink(String),
}

impl Error {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): a set's
    /// origin refuted by the verifier's pins, or a negative verdict of the crates below.
    pub fn is_verdict(&self) -> bool {
        match self {
            Error::Trust(t) => t.is_refutation(),
            Error::Rsa(e) => e.is_verdict(),
            Error::Vdf(e) => e.is_verdict(),
            Error::Arith(e) => e.is_verdict(),
            _ => false,
        }
    }

    /// A parse error of `what`.
    pub(crate) fn parse(what: FileKind, why: ParseError) -> Self {
        Error::Parse { what, why }
    }
}

/// The hourglass files this crate reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// A puzzle public key.
    PuzzlePublicKey,
    /// A puzzle private key.
    PuzzlePrivateKey,
    /// A puzzle solution.
    PuzzleSolution,
    /// A set of puzzle keys (a private set).
    PuzzleSet,
    /// A public puzzle set.
    PublicPuzzleSet,
    /// A submission bundle.
    SubmissionBundle,
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileKind::PuzzlePublicKey => "puzzle public key",
            FileKind::PuzzlePrivateKey => "puzzle private key",
            FileKind::PuzzleSolution => "puzzle solution",
            FileKind::PuzzleSet => "puzzle set",
            FileKind::PublicPuzzleSet => "public puzzle set",
            FileKind::SubmissionBundle => "submission bundle",
        })
    }
}

/// A hexadecimal integer field of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The modulus `n`.
    N,
    /// The low part `z` of a puzzle exponent.
    Z,
    /// The prime `p`.
    P,
    /// The prime `q`.
    Q,
    /// The private exponent `d`.
    D,
    /// The public exponent `e`.
    E,
    /// A link's result `c`.
    C,
    /// A proof-carrying link's output `y`.
    Y,
    /// Wesolowski's `pi`.
    Pi,
    /// Wesolowski's challenge `l`.
    L,
    /// A Pietrzak `mu`.
    Mu,
    /// The key or set fingerprint a link names.
    Puzzle,
    /// A document digest.
    Digest,
    /// A fingerprint (of a file, or one a file records).
    Fingerprint,
}

impl std::fmt::Display for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Field::N => "n",
            Field::Z => "z",
            Field::P => "p",
            Field::Q => "q",
            Field::D => "d",
            Field::E => "e",
            Field::C => "c",
            Field::Y => "y",
            Field::Pi => "pi",
            Field::L => "l",
            Field::Mu => "mu",
            Field::Puzzle => "puzzle",
            Field::Digest => "digest",
            Field::Fingerprint => "fingerprint",
        })
    }
}

/// What a fingerprint covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fingerprinted {
    /// A puzzle key.
    Key,
    /// A public set.
    Set,
}

fn set_kind(kind: SetKind) -> &'static str {
    match kind {
        SetKind::Private => "private",
        SetKind::Public => "public",
    }
}

/// Why a JSON file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// Not JSON, or JSON without the file's fields.
    #[error("{0}")]
    Json(#[source] serde_json::Error),
    /// A `"type"` of another file.
    #[error("\"type\" is '{found}', expected '{expected}'")]
    Type {
        /// The type in the file.
        found: String,
        /// The type expected.
        expected: &'static str,
    },
    /// A version this one does not read.
    #[error("unsupported version {found} (this hourglass reads {supported})")]
    UnsupportedVersion {
        /// The version in the file.
        found: u32,
        /// The version this one reads.
        supported: u32,
    },
    /// A `bits` field that disagrees with the modulus.
    #[error("bits says {recorded} but n has {actual}")]
    BitsMismatch {
        /// The `bits` field.
        recorded: u32,
        /// The modulus's size.
        actual: u32,
    },
    /// A fingerprint that is not the one of the fields: the file was modified.
    #[error("fingerprint does not match the {} fields: the file was modified", match of { Fingerprinted::Key => "key's", Fingerprinted::Set => "set's" })]
    FingerprintMismatch {
        /// What the fingerprint covers.
        of: Fingerprinted,
    },
    /// A private key whose `z` is not the one its primes and `t` give.
    #[error("z does not match the private key and t")]
    ZMismatch,
    /// A solution's puzzle fingerprint that is not 64 lowercase hexadecimal digits.
    #[error("puzzle fingerprint must be 64 lowercase hex digits")]
    PuzzleFingerprint,
    /// A hex field that is not in canonical form (lowercase digits, no leading zero, the
    /// exact length for a digest or fingerprint).
    #[error("field {field}: expected canonical hexadecimal (lowercase digits, no leading zeros)")]
    NotCanonicalHex {
        /// The field.
        field: Field,
    },
    /// A file larger than any of its kind.
    #[error("larger than {max} bytes")]
    TooLarge {
        /// The largest accepted.
        max: u64,
    },
    /// A Pietrzak proof with more elements than halving rounds exist.
    #[error("a Pietrzak proof has at most {max} elements, not {count}")]
    ProofTooLong {
        /// Elements in the proof.
        count: usize,
        /// The most accepted.
        max: usize,
    },
    /// A digest that is not hexadecimal.
    #[error("digest: {0}")]
    DigestHex(#[source] hex::FromHexError),
    /// A digest of the wrong length for its hash.
    #[error("a {hash} digest has {want} bytes, not {got}")]
    DigestLength {
        /// The hash.
        hash: PuzzleHash,
        /// Its output length.
        want: usize,
        /// The digest's length.
        got: usize,
    },
    /// A bundle file without any link (nothing was sealed yet).
    #[error("the bundle has no links yet")]
    NoLinks,
    /// A bundle with more links than any submission has.
    #[error("too many links")]
    TooManyLinks {
        /// Links in the file.
        count: usize,
        /// The most accepted.
        max: usize,
    },
    /// A bundle whose links do not fit the kind of set it names.
    #[error("a bundle for a {} set has {} links", set_kind(*set), match set { SetKind::Public => "only proof-carrying (\"vdf\")", SetKind::Private => "no proof-carrying (\"vdf\")" })]
    LinkKinds {
        /// The kind of set the bundle names.
        set: SetKind,
    },
    /// A set whose recorded hash is not the one its keys fix.
    #[error("the set names hash {named} but its keys fix {keys}")]
    HashMismatch {
        /// The hash the set names.
        named: PuzzleHash,
        /// The hash its keys fix.
        keys: PuzzleHash,
    },
    /// A public set with proofs at another security level.
    #[error("proofs at {found} bits: this hourglass verifies proofs at {supported} bits")]
    SecurityLevel {
        /// The level in the file.
        found: u32,
        /// The level this one verifies.
        supported: u32,
    },
    /// A public set's link lengths out of order or repeated.
    #[error("squarings must be distinct and longest first")]
    SquaringsOrder,
}

/// Parameters refused as insecure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Insecurity {
    /// A puzzle private exponent short enough for a kangaroo search.
    #[error("a private exponent of {d_bits} bits falls to a kangaroo search in about 2^{} steps once one solution is public; use at least {min} bits", d_bits / 2)]
    ShortPrivateExponent {
        /// The exponent's size.
        d_bits: u32,
        /// The smallest safe size.
        min: u32,
    },
}

/// Parameters that cannot work.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    /// A puzzle modulus below the smallest size.
    #[error("puzzle modulus must be odd and at least {min} bits")]
    PuzzleModulusTooSmall {
        /// The modulus's size.
        bits: u32,
        /// The smallest size.
        min: u32,
    },
    /// An even puzzle modulus.
    #[error("puzzle modulus must be odd and at least {min} bits")]
    PuzzleModulusEven {
        /// The smallest size (named with the rule).
        min: u32,
    },
    /// A puzzle modulus size outside what the squaring kernels support.
    #[error(
        "puzzle modulus of {bits} bits is outside {min}..={max} (the squaring kernels' limit)"
    )]
    PuzzleModulusBits {
        /// The requested size.
        bits: u32,
        /// The smallest size.
        min: u32,
        /// The largest size.
        max: u32,
    },
    /// A puzzle private exponent size that cannot work.
    #[error("d of {d_bits} bits must be at least {min} bits and well below the modulus size")]
    PrivateExponentBits {
        /// The requested size.
        d_bits: u32,
        /// The smallest safe size.
        min: u32,
    },
    /// Zero squarings.
    #[error("the number of squarings t must be at least 1")]
    ZeroSquarings,
    /// More squarings than anyone could do.
    #[error("{t} squarings is absurd (the limit is 2^60 = {max})")]
    TooManySquarings {
        /// The number asked for.
        t: u64,
        /// The limit.
        max: u64,
    },
    /// A puzzle exponent's `z` out of range.
    #[error("z is out of range for this modulus")]
    ZOutOfRange,
    /// A puzzle key's rate or duration that is not a positive number.
    #[error("rate and duration must be positive numbers")]
    RateOrDuration,
    /// An RSW modulus that is even or at most 3.
    #[error("the modulus n must be odd and greater than 3")]
    RswModulus,
    /// An RSW base outside `1 < base < n - 1`.
    #[error("the base must satisfy 1 < base < n - 1")]
    RswBase,
    /// A puzzle input outside `1 < m < n - 1`.
    #[error("the puzzle input must satisfy 1 < m < n - 1")]
    PuzzleInput,
    /// A time-lock modulus size outside the supported range.
    #[error("a time-lock modulus of {bits} bits is outside {min}..={max}")]
    TlockModulusBits {
        /// The requested size.
        bits: u32,
        /// The smallest size.
        min: u32,
        /// The largest size.
        max: u32,
    },
    /// Content whose length changed while it was sealed.
    #[error("the content changed while it was sealed ({read} bytes read, {expected} expected)")]
    ContentChanged {
        /// Bytes read.
        read: u64,
        /// Bytes announced.
        expected: u64,
    },
    /// Content longer than one time-lock file holds.
    #[error("the content is too long for one time-lock file")]
    ContentTooLong,
    /// An age recipient that cannot be read or written.
    #[error(transparent)]
    Recipient(#[from] RecipientError),
    /// A puzzle set without keys.
    #[error("a puzzle set needs at least one key")]
    EmptySet,
    /// A puzzle set whose keys fix different document hashes.
    #[error("a puzzle set fixes one document hash, but its keys name {first} and {other}")]
    MixedHashes {
        /// The first key's hash.
        first: PuzzleHash,
        /// Another key's hash.
        other: PuzzleHash,
    },
    /// A puzzle set listing a key twice.
    #[error("a puzzle set lists the same key twice")]
    DuplicateKey,
    /// A verification thread panicked.
    #[error("verification thread panicked")]
    ThreadPanicked,
    /// A bundle for another document.
    #[error("the bundle is for another document")]
    BundleOtherDocument,
    /// A bundle sealed on the other kind of set.
    #[error("the bundle is for a {} set", set_kind(*bundle))]
    BundleSetKind {
        /// The kind of set the bundle was sealed on.
        bundle: SetKind,
    },
    /// A public set's modulus below the smallest size.
    #[error("a public set needs a modulus of at least {min} bits (this one has {bits})")]
    PublicModulusTooSmall {
        /// The modulus's size.
        bits: u32,
        /// The smallest size.
        min: u32,
    },
    /// A public set whose origin says RSA-2048 over another modulus.
    #[error("the origin says RSA-2048 but the modulus is another number")]
    OriginMismatch,
    /// A public set without link lengths, or with lengths out of range.
    #[error("a public set needs link lengths from 1 to 2^50 squarings")]
    LinkLengths,
    /// A public set's rate that is not a positive number.
    #[error("the rate must be a positive number of squarings per second")]
    Rate,
    /// A set's duration is worth less than one squaring at its rate.
    #[error("duration {} is too short for any squaring", humantime::format_duration(*duration).to_string().replace(' ', ""))]
    DurationTooShort {
        /// The duration.
        duration: std::time::Duration,
    },
    /// A document digest made with another hash than the verifier's keys or set fix.
    #[error("the document was digested with {digest}, but the verifier fixes {fixed}")]
    DigestHash {
        /// The digest's hash.
        digest: PuzzleHash,
        /// The hash the verifier fixes.
        fixed: PuzzleHash,
    },
    /// Sealing for the time expected takes more links than a bundle holds.
    #[error(
        "sealing for the time expected takes {links} more links, a bundle of about {bytes} \
         bytes, more than the {max} bytes readers and the service accept: seal on a set with \
         longer puzzles (or expect less time)"
    )]
    PlanTooLarge {
        /// Links the plan takes.
        links: u64,
        /// The bundle's bytes at the end of the plan (at most).
        bytes: u64,
        /// The limit.
        max: u64,
    },
    /// The next link could pass the bundle size limit: sealing stops, every link so far kept.
    #[error(
        "the bundle holds {links} links ({bytes} bytes) and one more (up to {next} bytes) could \
         pass the {max} bytes readers and the service accept, so sealing stops here with every \
         link kept: submit it as it is, or seal again on a set with longer puzzles"
    )]
    BundleFull {
        /// Links in the bundle.
        links: usize,
        /// Its bytes.
        bytes: u64,
        /// The next link's bytes, at most.
        next: u64,
        /// The limit.
        max: u64,
    },
    /// Open-ended sealing on a public set without the time to credit.
    #[error("open-ended sealing on a public set needs the time to credit (--until): a proof covers a length fixed in advance")]
    OpenEndedPublic,
}

/// Why a public set's origin cannot be anchored in what the verifier pinned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// The set claims a committee's modulus and the verifier pinned no committee.
    #[error("the set's modulus claims to come from a committee's distributed key generation ({committee}), which the set file alone cannot prove: pin the committee (its signed transcript.json and the certificates of its members you trust)")]
    UnpinnedCommittee {
        /// The committee as the set describes it (self-asserted).
        committee: String,
    },
    /// A committee was pinned for a set whose modulus is not a committee's.
    #[error("a committee was pinned, but the set's modulus is {origin}")]
    NotACommittee {
        /// The set's origin, described.
        origin: String,
    },
    /// The pinned transcript is not usable or does not verify against the pinned members
    /// (unsigned, a member not pinned, a signature that does not verify).
    #[error("the committee's transcript: {0}")]
    Transcript(#[source] hourglass_dkg::Error),
    /// The pinned transcript is another generation's than the one the set names.
    #[error("the set names committee transcript {named}, but the pinned transcript is {pinned}")]
    OtherTranscript {
        /// The fingerprint the set records.
        named: String,
        /// The pinned transcript's fingerprint.
        pinned: String,
    },
    /// The pinned transcript records another modulus than the set's.
    #[error("the committee's transcript records another modulus than the set's")]
    OtherModulus,
}

impl TrustError {
    /// Whether this is a negative verdict on the set's claim (the pins are in order, and the
    /// set or its transcript is not what they vouch for), rather than a verifier's missing or
    /// unusable pin.
    pub fn is_refutation(&self) -> bool {
        match self {
            TrustError::OtherTranscript { .. } | TrustError::OtherModulus => true,
            // hourglass-dkg says which transcript errors refute (a signature that does not
            // verify under a pinned member's certificate, a member that did not sign).
            TrustError::Transcript(e) => e.is_verdict(),
            TrustError::UnpinnedCommittee { .. } | TrustError::NotACommittee { .. } => false,
        }
    }
}

/// Why an age recipient cannot be read or written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecipientError {
    /// Not Bech32.
    #[error("not a recipient: {0}")]
    Bech32(#[source] bech32::Error),
    /// A Bech32 string of another kind of recipient.
    #[error("not an hourglass recipient (it starts with {prefix})")]
    OtherKind {
        /// Its human-readable part.
        prefix: String,
    },
    /// Bytes of the wrong length.
    #[error("not an hourglass recipient: wrong length")]
    Length {
        /// The length found.
        len: usize,
    },
    /// A recipient version this one does not read.
    #[error("not an hourglass recipient: unknown version (a newer hourglass wrote it)")]
    UnknownVersion {
        /// The version byte.
        found: u8,
    },
    /// The recipient could not be encoded.
    #[error("encoding the recipient: {0}")]
    Encode(#[source] bech32::Error),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

//! Why a transcript is not usable or does not show that its committee generated the modulus,
//! and why a member's certificate cannot be read.

use std::path::PathBuf;

use crate::PartyId;

/// Why a committee transcript file is not usable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TranscriptProblem {
    /// Not JSON of a transcript.
    #[error("{0}")]
    Json(#[source] serde_json::Error),
    /// Another format.
    #[error(
        "format {found:?}, expected {:?} (or {:?}, read but not trusted)",
        crate::formats::TRANSCRIPT_FORMAT,
        crate::formats::TRANSCRIPT_FORMAT_V1
    )]
    Format {
        /// The format in the file.
        found: String,
    },
    /// A hexadecimal field that is not in canonical form (lowercase, no leading zeros, the
    /// right length).
    #[error("{field} is not canonical lowercase hex{}", .expected.map(|n| format!(" of {n} digits")).unwrap_or_default())]
    Hex {
        /// The field.
        field: TranscriptField,
        /// The number of digits the field must have, for fixed-size fields.
        expected: Option<usize>,
    },
    /// A modulus of zero.
    #[error("n must be positive")]
    NonPositiveModulus,
    /// A member list that is not at least 3 sorted distinct nonzero ids (v2).
    #[error("members must be at least 3 sorted distinct nonzero ids")]
    Members,
    /// Not one certificate hash per member (v2).
    #[error("{certificates} certificate hashes for {members} members")]
    CertificateCount {
        /// Members listed.
        members: usize,
        /// Certificate hashes listed.
        certificates: usize,
    },
    /// Two members with the same certificate (v2).
    #[error("members {first} and {second} have the same certificate")]
    SameCertificate {
        /// The first member.
        first: PartyId,
        /// The second.
        second: PartyId,
    },
    /// A threshold the members cannot carry (v2): `1 <= t` and `2t + 1 <= members`.
    #[error("threshold {threshold} with {members} members (a generation needs 1 <= t and 2t + 1 members)")]
    Threshold {
        /// The threshold.
        threshold: u64,
        /// Members listed.
        members: usize,
    },
    /// A signature by a party that is not a member, a second one by a member, or signatures
    /// not in the order of the members (v2).
    #[error("signature by party {member}: not a member, repeated, or out of member order")]
    SignatureMember {
        /// The party the signature names.
        member: PartyId,
    },
    /// A signature scheme this version does not know (v2).
    #[error("member {member}: unknown signature scheme {scheme:?}")]
    Scheme {
        /// The member.
        member: PartyId,
        /// The scheme in the file.
        scheme: String,
    },
    /// A signature that is empty or longer than any supported key makes (v2).
    #[error("member {member}: a signature of {len} bytes (1 to {max} allowed)")]
    SignatureLength {
        /// The member.
        member: PartyId,
        /// Its length.
        len: usize,
        /// The longest allowed.
        max: usize,
    },
    /// A fingerprint that is not the fields'.
    #[error("the fingerprint does not match the fields (the file was modified)")]
    Fingerprint,
}

impl TranscriptProblem {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never: a
    /// transcript file that cannot be read, or whose fingerprint is not its fields' (the file's
    /// own checksum, not a signature), is malformed input.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

/// A hexadecimal field of a transcript file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum TranscriptField {
    /// The session id.
    Session,
    /// The modulus.
    N,
    /// The fingerprint.
    Fingerprint,
    /// A member's certificate hash.
    CertificateSha256 {
        /// The member.
        member: PartyId,
    },
    /// A member's signature.
    Signature {
        /// The member.
        member: PartyId,
    },
}

impl std::fmt::Display for TranscriptField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TranscriptField::Session => f.write_str("session"),
            TranscriptField::N => f.write_str("n"),
            TranscriptField::Fingerprint => f.write_str("fingerprint"),
            TranscriptField::CertificateSha256 { member } => {
                write!(f, "certificate_sha256 of member {member}")
            }
            TranscriptField::Signature { member } => write!(f, "signature of member {member}"),
        }
    }
}

/// Why a transcript does not show that its committee generated the modulus
/// ([`crate::transcript::SignedTranscript::verify`]).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TrustError {
    /// A v1 transcript: it carries no signatures, so anyone could have written it.
    #[error("a v1 transcript carries no signatures: anyone who knows a modulus's factors can write one, so it proves nothing (ask the committee for the v2 transcript.json that `hourglass dkg` now writes)")]
    Unsigned,
    /// Members whose certificate is not among the pinned ones.
    #[error("no pinned certificate for members {members:?} (the transcript names certificates that are not among those trusted)")]
    NotPinned {
        /// The members.
        members: Vec<PartyId>,
    },
    /// Members that did not sign.
    #[error("members {members:?} did not sign the transcript")]
    MissingSignatures {
        /// The members.
        members: Vec<PartyId>,
    },
    /// A member's signature that does not verify.
    #[error("member {member}'s signature {fault}")]
    BadSignature {
        /// The member.
        member: PartyId,
        /// What is wrong.
        fault: SignatureFault,
    },
}

impl TrustError {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): a member
    /// that did not sign, or a signature that does not verify under the pinned certificate.
    /// A v1 transcript (no signatures to check) and a member without a pinned certificate are
    /// errors: the verifier cannot decide.
    pub fn is_verdict(&self) -> bool {
        match self {
            TrustError::MissingSignatures { .. } => true,
            TrustError::BadSignature { fault, .. } => fault.is_verdict(),
            TrustError::Unsigned | TrustError::NotPinned { .. } => false,
        }
    }
}

/// What is wrong with a member's signature of a transcript.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SignatureFault {
    /// It does not verify under the member's certificate (another key, another transcript,
    /// another session, or damage).
    #[error("does not verify under the member's certificate")]
    Invalid,
    /// The member signed a transcript with another fingerprint (another modulus, session or
    /// member list than this party's).
    #[error("is of another transcript (fingerprint {signed}, this party's is {ours})")]
    OtherTranscript {
        /// The fingerprint it signed, in hex.
        signed: String,
        /// This party's, in hex.
        ours: String,
    },
    /// A scheme this build cannot verify, or not a TLS 1.3 scheme.
    #[error("uses signature scheme {scheme}, which cannot be verified here")]
    UnsupportedScheme {
        /// The scheme (its TLS name, or its number).
        scheme: String,
    },
    /// Longer than any supported key makes.
    #[error("is {len} bytes long (at most {max})")]
    TooLong {
        /// Its length.
        len: usize,
        /// The longest allowed.
        max: usize,
    },
    /// The member's certificate cannot be parsed for verification.
    #[error("cannot be checked: the member's certificate is unusable ({0})")]
    Certificate(String),
    /// The member withheld its signature from this party: its echo of the signatures came
    /// first (a link delivers in order, so it skipped its signature).
    #[error(
        "was withheld from this party (the member sent its echo of the signatures without it)"
    )]
    Withheld,
    /// The member sent different valid signatures to different members: the one `seen_by`
    /// echoed differs from this party's (in canonical form), and both verify under the
    /// member's certificate. Nobody else can make a signature with its key.
    #[error("is not the one party {seen_by} received, and both verify: the member sent different signatures to different members")]
    Equivocated {
        /// The member whose echo showed the other signature.
        seen_by: PartyId,
    },
    /// The member's echo of another member's signature does not verify under that member's
    /// certificate: it falsely reports what it received.
    #[error("is fine, but its echo of party {member}'s signature does not verify (a false report of what it received)")]
    FalseEcho {
        /// The member whose signature it misreported.
        member: PartyId,
    },
    /// The member echoed the digest of a set of signatures other than this party's, then did
    /// not show that set, or showed one with another digest: it misreports what it received.
    #[error("is fine, but it echoed a set of signatures it did not show (a false report of what it received)")]
    UnshownEcho,
}

impl SignatureFault {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): a
    /// signature that does not verify, signs another transcript or is longer than any key
    /// makes, one withheld from this party or different from the one another member received,
    /// and a false or unshown echo. A scheme this build cannot verify and an unusable certificate are errors: the
    /// signature could not be checked.
    pub fn is_verdict(&self) -> bool {
        match self {
            SignatureFault::Invalid
            | SignatureFault::OtherTranscript { .. }
            | SignatureFault::TooLong { .. }
            | SignatureFault::Withheld
            | SignatureFault::Equivocated { .. }
            | SignatureFault::FalseEcho { .. }
            | SignatureFault::UnshownEcho => true,
            SignatureFault::UnsupportedScheme { .. } | SignatureFault::Certificate(_) => false,
        }
    }
}

/// Why a party certificate file cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CertificateProblem {
    /// It cannot be read.
    #[error("{0}")]
    Read(#[source] std::io::Error),
    /// Bad PEM.
    #[error("bad PEM: {0}")]
    Pem(#[source] rustls::pki_types::pem::Error),
    /// No certificate in it.
    #[error("no PEM CERTIFICATE in the file")]
    NoCertificate,
    /// Several certificates in it.
    #[error("{count} certificates; pin exactly one per party")]
    Several {
        /// How many.
        count: usize,
    },
    /// Not an X.509 certificate.
    #[error("not an X.509 certificate: {0}")]
    NotX509(#[source] rustls::Error),
    /// A file larger than any certificate file should be (refused before it is read).
    #[error("{len} bytes, more than the {max} a certificate file may have")]
    TooLarge {
        /// The file's size.
        len: u64,
        /// The limit.
        max: u64,
    },
    /// A directory without `*.pem` or `*.crt` files.
    #[error("no *.pem or *.crt file in the directory")]
    EmptyDirectory,
    /// A file in a directory of certificates that cannot be used.
    #[error("{}: {problem}", path.display())]
    InFile {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        #[source]
        problem: Box<CertificateProblem>,
    },
}

impl CertificateProblem {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): never: a
    /// certificate file that cannot be read is malformed input.
    pub fn is_verdict(&self) -> bool {
        false
    }
}

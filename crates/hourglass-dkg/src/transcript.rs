//! The public transcript of a generation: what a committee publishes so that anyone can name
//! and check its modulus (for example as the modulus of a public puzzle set), signed by every
//! member.
//!
//! An unsigned record proves nothing: whoever knows the factors of some modulus can write one
//! for it and claim a committee made it. So the round that ends a generation
//! ([`crate::protocol::generate_signed`]) has every member sign the transcript's fingerprint
//! with its party key, the private key behind the TLS certificate the other parties pin, and
//! check every other member's signature before anything is written. A verifier who trusts the
//! members' certificates then checks the file with [`SignedTranscript::verify`]
//! (docs/FORMATS.md section 16.6):
//!
//! ```json
//! {"format": "hourglass-dkg-transcript-v2", "cluster": "conf-2027", "session": "<32 hex>",
//!  "threshold": 1, "members": [1, 2, 3], "certificate_sha256": ["<64 hex>", "...", "..."],
//!  "n": "<hex>", "e": 65537, "fingerprint": "<64 hex>",
//!  "signatures": [{"member": 1, "scheme": "ecdsa_secp256r1_sha256", "signature": "<hex>"}, ...]}
//! ```
//!
//! Version 1 files (`hourglass-dkg-transcript-v1`: no threshold, no certificates, no
//! signatures) are still read, with their own fingerprint, but carry no trust: verifying one
//! is an error ([`TrustError::Unsigned`]).
//!
//! ```
//! use hourglass_dkg::transcript::SignedTranscript;
//! # fn check(text: &str, pinned: &[Vec<u8>]) -> hourglass_dkg::Result<()> {
//! let transcript = SignedTranscript::from_json(text)?; // well-formed, fingerprint matches
//! let committee = transcript.verify(pinned)?;         // every member signed it
//! println!("{} members (threshold {}) made N", committee.members.len(), committee.threshold);
//! # Ok(()) }
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use hourglass_arith::{bytes_from_canonical_hex, integer_from_canonical_hex, Integer};
use rug::integer::Order;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::server::ParsedCertificate;
use rustls::sign::{CertifiedKey, SigningKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::keyshare::KeyShare;
use crate::transport::PartyId;
use crate::wire::MAX_SIGNATURE_BYTES;
use crate::{
    CertificateProblem, ConfigError, Error, Result, ShareError, SignatureFault, TlsError,
    TranscriptField, TranscriptProblem, TrustError,
};

mod canonical;
pub(crate) mod error;
pub use crate::formats::{TRANSCRIPT_FORMAT, TRANSCRIPT_FORMAT_V1};

/// What each member signs is this context followed by the 32-byte fingerprint. (It cannot be
/// taken for a TLS 1.3 `CertificateVerify`, whose signed content starts with 64 spaces.)
pub const SIGNATURE_CONTEXT: &[u8] = b"hourglass-dkg-transcript-signature-v2\0";

/// The largest certificate file [`read_certificates`] reads (1 MiB).
pub const MAX_CERTIFICATE_FILE: u64 = 1 << 20;

/// Fewest members a version 2 transcript may list (a cluster has at least three parties).
const MIN_MEMBERS: usize = 3;

/// The public record of one generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicTranscript {
    /// The cluster's name.
    pub cluster: String,
    /// The session that generated the key.
    pub session: [u8; 16],
    /// Every party holding a share, sorted.
    pub members: Vec<PartyId>,
    /// The modulus.
    pub n: Integer,
    /// The public exponent.
    pub e: u64,
    /// What a version 2 transcript adds: the threshold and the members' certificates. `None`
    /// for a version 1 transcript.
    pub committee: Option<Committee>,
}

/// What a version 2 transcript binds besides the cluster, session, members and key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Committee {
    /// The privacy threshold `t` of the generation: the largest number of colluding members
    /// against which the factors of `N` stay secret. Any `t` members together learn nothing
    /// about `p` and `q`; `t + 1` colluding members can rebuild them (the BGW sharings the
    /// protocol deals have degree `t`), all under the protocol's semi-honest model. It is
    /// [`crate::params::Settings::threshold_for`] of the parties the generation started with
    /// (fixed when the cluster is made, never lowered when parties fail), so
    /// `2t + 1 <= members`.
    pub threshold: usize,
    /// The SHA-256 of each member's TLS certificate (DER), in the order of the members: binds
    /// each member id to the identity that signs for it.
    pub certificate_sha256: Vec<[u8; 32]>,
}

/// The TLS 1.3 signature schemes a member's signature may use (its name in a transcript file
/// is the TLS name from RFC 8446 section 4.2.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SigningScheme {
    /// ECDSA on P-256 with SHA-256 (`ecdsa_secp256r1_sha256`, 0x0403): the keys of
    /// [`crate::cluster::init_cluster`].
    EcdsaP256Sha256,
    /// ECDSA on P-384 with SHA-384 (`ecdsa_secp384r1_sha384`, 0x0503).
    EcdsaP384Sha384,
    /// Ed25519 (`ed25519`, 0x0807).
    Ed25519,
    /// RSASSA-PSS with SHA-256 (`rsa_pss_rsae_sha256`, 0x0804).
    RsaPssSha256,
    /// RSASSA-PSS with SHA-384 (`rsa_pss_rsae_sha384`, 0x0805).
    RsaPssSha384,
    /// RSASSA-PSS with SHA-512 (`rsa_pss_rsae_sha512`, 0x0806).
    RsaPssSha512,
}

impl SigningScheme {
    /// Every scheme, in the order a signer prefers them.
    pub const ALL: [SigningScheme; 6] = [
        SigningScheme::Ed25519,
        SigningScheme::EcdsaP256Sha256,
        SigningScheme::EcdsaP384Sha384,
        SigningScheme::RsaPssSha256,
        SigningScheme::RsaPssSha384,
        SigningScheme::RsaPssSha512,
    ];

    /// The TLS name (RFC 8446), as written in transcript files.
    pub fn name(self) -> &'static str {
        match self {
            SigningScheme::EcdsaP256Sha256 => "ecdsa_secp256r1_sha256",
            SigningScheme::EcdsaP384Sha384 => "ecdsa_secp384r1_sha384",
            SigningScheme::Ed25519 => "ed25519",
            SigningScheme::RsaPssSha256 => "rsa_pss_rsae_sha256",
            SigningScheme::RsaPssSha384 => "rsa_pss_rsae_sha384",
            SigningScheme::RsaPssSha512 => "rsa_pss_rsae_sha512",
        }
    }

    /// The TLS `SignatureScheme` number, as sent in signature frames.
    pub fn code(self) -> u16 {
        u16::from(self.tls())
    }

    /// The scheme with this TLS name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.name() == name)
    }

    /// The scheme with this TLS number.
    pub fn from_code(code: u16) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.code() == code)
    }

    fn tls(self) -> rustls::SignatureScheme {
        use rustls::SignatureScheme as S;
        match self {
            SigningScheme::EcdsaP256Sha256 => S::ECDSA_NISTP256_SHA256,
            SigningScheme::EcdsaP384Sha384 => S::ECDSA_NISTP384_SHA384,
            SigningScheme::Ed25519 => S::ED25519,
            SigningScheme::RsaPssSha256 => S::RSA_PSS_SHA256,
            SigningScheme::RsaPssSha384 => S::RSA_PSS_SHA384,
            SigningScheme::RsaPssSha512 => S::RSA_PSS_SHA512,
        }
    }

    fn from_tls(scheme: rustls::SignatureScheme) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.tls() == scheme)
    }
}

impl std::fmt::Display for SigningScheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One member's signature of a transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptSignature {
    /// The member.
    pub member: PartyId,
    /// The scheme it signed with.
    pub scheme: SigningScheme,
    /// The signature of [`PublicTranscript::signed_message`] (for ECDSA, DER as in TLS).
    pub signature: Vec<u8>,
}

impl TranscriptSignature {
    /// The same signature in its canonical form: for ECDSA, `s` in the lower half of the
    /// group order (`(r, s)` and `(r, n - s)` both verify, so anyone can turn one into the
    /// other); other schemes' signatures are their own canonical form. Two signatures are the
    /// same when their canonical forms are; the generation stores and echoes these.
    pub fn canonical(mut self) -> Self {
        let order = match self.scheme {
            SigningScheme::EcdsaP256Sha256 => canonical::P256_ORDER,
            SigningScheme::EcdsaP384Sha384 => canonical::P384_ORDER,
            _ => return self,
        };
        self.signature = canonical::ecdsa_low_s(&self.signature, order);
        self
    }
}

/// A transcript file: the transcript, its version, and (version 2) the members' signatures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignedTranscript {
    transcript: PublicTranscript,
    signatures: Vec<TranscriptSignature>,
}

/// A committee whose transcript every member signed ([`SignedTranscript::verify`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifiedCommittee {
    /// The cluster's name.
    pub cluster: String,
    /// The members, sorted; each signed with the key of a pinned certificate.
    pub members: Vec<PartyId>,
    /// The privacy threshold (see [`Committee::threshold`]).
    pub threshold: usize,
    /// The modulus the members generated.
    pub n: Integer,
    /// The transcript's fingerprint.
    pub fingerprint: [u8; 32],
}

/// A version 1 file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileV1 {
    format: String,
    cluster: String,
    session: String,
    members: Vec<PartyId>,
    n: String,
    e: u64,
    fingerprint: String,
}

/// A version 2 file.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileV2 {
    format: String,
    cluster: String,
    session: String,
    threshold: u64,
    members: Vec<PartyId>,
    certificate_sha256: Vec<String>,
    n: String,
    e: u64,
    fingerprint: String,
    signatures: Vec<SignatureEntry>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SignatureEntry {
    member: PartyId,
    scheme: String,
    signature: String,
}

/// Only the format, to choose the version's parser.
#[derive(Deserialize)]
struct FormatOnly {
    format: String,
}

fn bad(why: TranscriptProblem) -> Error {
    Error::from(ShareError::Transcript(why))
}

fn not_canonical(field: TranscriptField, digits: Option<usize>) -> Error {
    bad(TranscriptProblem::Hex {
        field,
        expected: digits,
    })
}

/// Bytes written as an even number of lowercase hex digits (variable length).
fn bytes_from_lower_hex(s: &str) -> Option<Vec<u8>> {
    let lower = s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    if s.is_empty() || !lower {
        return None;
    }
    hex::decode(s).ok()
}

/// SHA-256 of a certificate (DER).
pub fn certificate_sha256(certificate: &[u8]) -> [u8; 32] {
    Sha256::digest(certificate).into()
}

impl PublicTranscript {
    /// The version 1 (unsigned) record of the generation that produced `share`.
    ///
    /// Kept for reading and comparing old files; a generation now publishes the version 2
    /// transcript of [`TranscriptSigner::transcript`], signed by every member.
    pub fn of(share: &KeyShare) -> Self {
        Self {
            cluster: share.cluster.clone(),
            session: share.session,
            members: share.members.clone(),
            n: share.public.n().clone(),
            e: share.public.e().to_u64().unwrap_or(0),
            committee: None,
        }
    }

    /// The version: 1 without a [`Committee`], else 2.
    pub fn version(&self) -> u32 {
        if self.committee.is_some() {
            2
        } else {
            1
        }
    }

    /// SHA-256 over length-prefixed fields (`u32be(len(F)) || F`), by version:
    ///
    /// - 1: the tag `hourglass-dkg-transcript-v1`, the cluster name, the 16-byte session,
    ///   the members (`u32be` each, concatenated), `N` (minimal big-endian) and `u64be(e)`;
    /// - 2: the tag `hourglass-dkg-transcript-v2`, the cluster name, the session,
    ///   `u64be(threshold)`, the members (`u32be` each), the members' certificate hashes (32
    ///   bytes each, in member order), `N` and `u64be(e)`.
    pub fn fingerprint(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        let mut field = |bytes: &[u8]| {
            h.update((bytes.len() as u32).to_be_bytes());
            h.update(bytes);
        };
        let members: Vec<u8> = self.members.iter().flat_map(|m| m.to_be_bytes()).collect();
        match &self.committee {
            None => {
                field(TRANSCRIPT_FORMAT_V1.as_bytes());
                field(self.cluster.as_bytes());
                field(&self.session);
                field(&members);
            }
            Some(c) => {
                field(TRANSCRIPT_FORMAT.as_bytes());
                field(self.cluster.as_bytes());
                field(&self.session);
                field(&(c.threshold as u64).to_be_bytes());
                field(&members);
                field(&c.certificate_sha256.concat());
            }
        }
        field(&self.n.to_digits::<u8>(Order::Msf));
        field(&self.e.to_be_bytes());
        h.finalize().into()
    }

    /// The fingerprint in hex (of the file's version: what a public set's origin records).
    pub fn fingerprint_hex(&self) -> String {
        hex::encode(self.fingerprint())
    }

    /// What each member signs: [`SIGNATURE_CONTEXT`] followed by the 32-byte fingerprint.
    pub fn signed_message(&self) -> Vec<u8> {
        [SIGNATURE_CONTEXT, &self.fingerprint()[..]].concat()
    }

    /// The transcript file, without signatures (`"signatures": []` for version 2).
    pub fn to_json(&self) -> String {
        file_json(self, &[])
    }

    /// Parses a version 1 or version 2 transcript file, checking its fingerprint, and returns
    /// the transcript without its signatures (see [`SignedTranscript::from_json`]).
    pub fn from_json(text: &str) -> Result<Self> {
        SignedTranscript::from_json(text).map(|s| s.transcript)
    }
}

/// The file of `t` with `signatures` (ignored for version 1).
fn file_json(t: &PublicTranscript, signatures: &[TranscriptSignature]) -> String {
    let written = match &t.committee {
        None => serde_json::to_string_pretty(&FileV1 {
            format: TRANSCRIPT_FORMAT_V1.into(),
            cluster: t.cluster.clone(),
            session: hex::encode(t.session),
            members: t.members.clone(),
            n: t.n.to_string_radix(16),
            e: t.e,
            fingerprint: t.fingerprint_hex(),
        }),
        Some(c) => serde_json::to_string_pretty(&FileV2 {
            format: TRANSCRIPT_FORMAT.into(),
            cluster: t.cluster.clone(),
            session: hex::encode(t.session),
            threshold: c.threshold as u64,
            members: t.members.clone(),
            certificate_sha256: c.certificate_sha256.iter().map(hex::encode).collect(),
            n: t.n.to_string_radix(16),
            e: t.e,
            fingerprint: t.fingerprint_hex(),
            signatures: signatures
                .iter()
                .map(|s| SignatureEntry {
                    member: s.member,
                    scheme: s.scheme.name().into(),
                    signature: hex::encode(&s.signature),
                })
                .collect(),
        }),
    };
    let mut s = written.unwrap_or_default();
    s.push('\n');
    s
}

/// The fields both versions share, parsed strictly.
fn common_fields(session: &str, n: &str) -> Result<([u8; 16], Integer)> {
    let session = bytes_from_canonical_hex::<16>(session)
        .ok_or_else(|| not_canonical(TranscriptField::Session, Some(32)))?;
    let n = integer_from_canonical_hex(n).ok_or_else(|| not_canonical(TranscriptField::N, None))?;
    if n == 0 {
        return Err(bad(TranscriptProblem::NonPositiveModulus));
    }
    Ok((session, n))
}

fn check_fingerprint(t: &PublicTranscript, written: &str) -> Result<()> {
    let written = bytes_from_canonical_hex::<32>(written)
        .ok_or_else(|| not_canonical(TranscriptField::Fingerprint, Some(64)))?;
    if t.fingerprint() != written {
        return Err(bad(TranscriptProblem::Fingerprint));
    }
    Ok(())
}

/// Checks what a version 2 transcript and its signatures must satisfy.
fn check_v2(t: &PublicTranscript, c: &Committee, signatures: &[TranscriptSignature]) -> Result<()> {
    let members_ok = t.members.len() >= MIN_MEMBERS
        && t.members[0] != 0
        && t.members.windows(2).all(|w| w[0] < w[1]);
    if !members_ok {
        return Err(bad(TranscriptProblem::Members));
    }
    if c.certificate_sha256.len() != t.members.len() {
        return Err(bad(TranscriptProblem::CertificateCount {
            members: t.members.len(),
            certificates: c.certificate_sha256.len(),
        }));
    }
    let mut seen: BTreeMap<[u8; 32], PartyId> = BTreeMap::new();
    for (&member, hash) in t.members.iter().zip(&c.certificate_sha256) {
        if let Some(&first) = seen.get(hash) {
            return Err(bad(TranscriptProblem::SameCertificate {
                first,
                second: member,
            }));
        }
        seen.insert(*hash, member);
    }
    if c.threshold == 0 || c.threshold.saturating_mul(2).saturating_add(1) > t.members.len() {
        return Err(bad(TranscriptProblem::Threshold {
            threshold: c.threshold as u64,
            members: t.members.len(),
        }));
    }
    let mut previous = 0;
    for s in signatures {
        if s.member <= previous || t.members.binary_search(&s.member).is_err() {
            return Err(bad(TranscriptProblem::SignatureMember { member: s.member }));
        }
        previous = s.member;
        if s.signature.is_empty() || s.signature.len() > MAX_SIGNATURE_BYTES {
            return Err(bad(TranscriptProblem::SignatureLength {
                member: s.member,
                len: s.signature.len(),
                max: MAX_SIGNATURE_BYTES,
            }));
        }
    }
    Ok(())
}

impl SignedTranscript {
    /// A version 2 transcript with its members' signatures (some may be missing: they are
    /// refused by [`SignedTranscript::verify`], not here).
    ///
    /// Fails for a version 1 transcript with signatures, and for a version 2 one that breaks
    /// the file's rules: at least 3 sorted distinct nonzero members, one distinct certificate
    /// hash per member, `1 <= threshold` and `2 threshold + 1 <= members`, signatures in
    /// member order, at most one per member, of 1 to [`MAX_SIGNATURE_BYTES`] bytes.
    pub fn new(transcript: PublicTranscript, signatures: Vec<TranscriptSignature>) -> Result<Self> {
        match &transcript.committee {
            None => {
                if let Some(s) = signatures.first() {
                    return Err(bad(TranscriptProblem::SignatureMember { member: s.member }));
                }
            }
            Some(c) => check_v2(&transcript, c, &signatures)?,
        }
        Ok(Self {
            transcript,
            signatures,
        })
    }

    /// Reads a v1 file (no threshold, no signatures) or a v2 file, checking its fingerprint.
    ///
    /// Every hex field must be canonical (lowercase, no leading zeros, fixed-size fields at
    /// their exact length); unknown and repeated fields are refused. Signatures are not
    /// checked here: [`SignedTranscript::verify`] does that against trusted certificates.
    pub fn from_json(text: &str) -> Result<Self> {
        let format: FormatOnly =
            serde_json::from_str(text).map_err(|e| bad(TranscriptProblem::Json(e)))?;
        match format.format.as_str() {
            TRANSCRIPT_FORMAT_V1 => {
                let file: FileV1 =
                    serde_json::from_str(text).map_err(|e| bad(TranscriptProblem::Json(e)))?;
                let (session, n) = common_fields(&file.session, &file.n)?;
                let t = PublicTranscript {
                    cluster: file.cluster,
                    session,
                    members: file.members,
                    n,
                    e: file.e,
                    committee: None,
                };
                check_fingerprint(&t, &file.fingerprint)?;
                Ok(Self {
                    transcript: t,
                    signatures: Vec::new(),
                })
            }
            TRANSCRIPT_FORMAT => {
                let file: FileV2 =
                    serde_json::from_str(text).map_err(|e| bad(TranscriptProblem::Json(e)))?;
                let (session, n) = common_fields(&file.session, &file.n)?;
                let mut certificate_sha256 = Vec::with_capacity(file.certificate_sha256.len());
                for (i, hash) in file.certificate_sha256.iter().enumerate() {
                    let member = file.members.get(i).copied().unwrap_or(0);
                    certificate_sha256.push(bytes_from_canonical_hex::<32>(hash).ok_or_else(
                        || not_canonical(TranscriptField::CertificateSha256 { member }, Some(64)),
                    )?);
                }
                let threshold = usize::try_from(file.threshold).map_err(|_| {
                    bad(TranscriptProblem::Threshold {
                        threshold: file.threshold,
                        members: file.members.len(),
                    })
                })?;
                let mut signatures = Vec::with_capacity(file.signatures.len());
                for entry in file.signatures {
                    let member = entry.member;
                    let scheme = SigningScheme::from_name(&entry.scheme).ok_or_else(|| {
                        bad(TranscriptProblem::Scheme {
                            member,
                            scheme: entry.scheme.clone(),
                        })
                    })?;
                    if entry.signature.len() > 2 * MAX_SIGNATURE_BYTES {
                        return Err(bad(TranscriptProblem::SignatureLength {
                            member,
                            len: entry.signature.len() / 2,
                            max: MAX_SIGNATURE_BYTES,
                        }));
                    }
                    let signature = bytes_from_lower_hex(&entry.signature).ok_or_else(|| {
                        not_canonical(TranscriptField::Signature { member }, None)
                    })?;
                    signatures.push(TranscriptSignature {
                        member,
                        scheme,
                        signature,
                    });
                }
                let t = PublicTranscript {
                    cluster: file.cluster,
                    session,
                    members: file.members,
                    n,
                    e: file.e,
                    committee: Some(Committee {
                        threshold,
                        certificate_sha256,
                    }),
                };
                let signed = Self::new(t, signatures)?;
                check_fingerprint(&signed.transcript, &file.fingerprint)?;
                Ok(signed)
            }
            _ => Err(bad(TranscriptProblem::Format {
                found: format.format,
            })),
        }
    }

    /// The file (version 2 with its signatures, or version 1 as it was read).
    pub fn to_json(&self) -> String {
        file_json(&self.transcript, &self.signatures)
    }

    /// The file's version: 1 or 2.
    pub fn version(&self) -> u32 {
        self.transcript.version()
    }

    /// The transcript: cluster, session, members, `N`, `e` and (version 2) the threshold and
    /// the members' certificate hashes.
    pub fn transcript(&self) -> &PublicTranscript {
        &self.transcript
    }

    /// The signatures, in member order (empty for version 1).
    pub fn signatures(&self) -> &[TranscriptSignature] {
        &self.signatures
    }

    /// The fingerprint in hex: what a public set's origin records.
    pub fn fingerprint_hex(&self) -> String {
        self.transcript.fingerprint_hex()
    }

    /// Checks that every member signed and that each signature verifies under the member's
    /// certificate among `pinned` (DER certificates the verifier trusts, matched by SHA-256
    /// to the hash the transcript records). Errors (typed, naming member ids): a v1 transcript
    /// (carries no signatures: no trust); a member with no pinned certificate; a member whose
    /// signature is missing or does not verify. Pinned certificates matching no member are
    /// ignored.
    ///
    /// What this shows: each listed member's key signed this very transcript (its modulus,
    /// session, members, threshold and certificates). Which members and which threshold are
    /// enough is the verifier's policy: a `VerifiedCommittee` says who they are.
    pub fn verify(&self, pinned: &[Vec<u8>]) -> Result<VerifiedCommittee> {
        let t = &self.transcript;
        let Some(committee) = &t.committee else {
            return Err(TrustError::Unsigned.into());
        };
        let by_hash: BTreeMap<[u8; 32], &[u8]> = pinned
            .iter()
            .map(|c| (certificate_sha256(c), c.as_slice()))
            .collect();
        let not_pinned: Vec<PartyId> = t
            .members
            .iter()
            .zip(&committee.certificate_sha256)
            .filter(|(_, hash)| !by_hash.contains_key(*hash))
            .map(|(&m, _)| m)
            .collect();
        if !not_pinned.is_empty() {
            return Err(TrustError::NotPinned {
                members: not_pinned,
            }
            .into());
        }
        let signed: BTreeSet<PartyId> = self.signatures.iter().map(|s| s.member).collect();
        let missing: Vec<PartyId> = t
            .members
            .iter()
            .copied()
            .filter(|m| !signed.contains(m))
            .collect();
        if !missing.is_empty() {
            return Err(TrustError::MissingSignatures { members: missing }.into());
        }
        let message = t.signed_message();
        for (&member, hash) in t.members.iter().zip(&committee.certificate_sha256) {
            // Both found above: every member is pinned and signed.
            let (Some(certificate), Some(signature)) = (
                by_hash.get(hash),
                self.signatures.iter().find(|s| s.member == member),
            ) else {
                return Err(TrustError::MissingSignatures {
                    members: vec![member],
                }
                .into());
            };
            verify_signature(certificate, &message, signature)
                .map_err(|fault| TrustError::BadSignature { member, fault })?;
        }
        Ok(VerifiedCommittee {
            cluster: t.cluster.clone(),
            members: t.members.clone(),
            threshold: committee.threshold,
            n: t.n.clone(),
            fingerprint: t.fingerprint(),
        })
    }
}

/// Checks `signature` of `message` under `certificate` (DER), as rustls checks a TLS 1.3
/// `CertificateVerify`: the scheme's algorithm from the ring provider's table, the key from the
/// certificate.
pub fn verify_signature(
    certificate: &[u8],
    message: &[u8],
    signature: &TranscriptSignature,
) -> std::result::Result<(), SignatureFault> {
    if signature.signature.len() > MAX_SIGNATURE_BYTES {
        return Err(SignatureFault::TooLong {
            len: signature.signature.len(),
            max: MAX_SIGNATURE_BYTES,
        });
    }
    let algorithms = rustls::crypto::ring::default_provider().signature_verification_algorithms;
    let scheme = signature.scheme.tls();
    let algorithm = algorithms
        .mapping
        .iter()
        .find(|(s, _)| *s == scheme)
        .and_then(|(_, algs)| algs.first())
        .ok_or_else(|| SignatureFault::UnsupportedScheme {
            scheme: signature.scheme.name().into(),
        })?;
    let der = CertificateDer::from(certificate);
    let cert = webpki::EndEntityCert::try_from(&der)
        .map_err(|e| SignatureFault::Certificate(e.to_string()))?;
    cert.verify_signature(*algorithm, message, &signature.signature)
        .map_err(|_| SignatureFault::Invalid)
}

/// A member's means to sign transcripts: its party key (the private key behind its TLS
/// certificate) and every party's pinned certificate.
#[derive(Clone)]
pub struct TranscriptSigner {
    me: PartyId,
    key: Arc<dyn SigningKey>,
    certificates: BTreeMap<PartyId, Vec<u8>>,
}

impl std::fmt::Debug for TranscriptSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TranscriptSigner")
            .field("me", &self.me)
            .field("key", &"...")
            .field("parties", &self.certificates.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl TranscriptSigner {
    /// The signer of party `me` with private key `key` (any key rustls's ring provider signs
    /// with: ECDSA P-256 or P-384, Ed25519, RSA), among parties with these `certificates`
    /// (DER). `me`'s certificate must carry `key`'s public key.
    pub fn new(
        me: PartyId,
        key: &PrivateKeyDer<'_>,
        certificates: BTreeMap<PartyId, Vec<u8>>,
    ) -> Result<Self> {
        let key = rustls::crypto::ring::sign::any_supported_type(key)
            .map_err(ConfigError::UnusableKey)?;
        Self::from_signing_key(me, key, certificates)
    }

    pub(crate) fn from_signing_key(
        me: PartyId,
        key: Arc<dyn SigningKey>,
        certificates: BTreeMap<PartyId, Vec<u8>>,
    ) -> Result<Self> {
        let own = certificates
            .get(&me)
            .ok_or(ConfigError::NoCertificate { party: me })?;
        let certified =
            CertifiedKey::new(vec![CertificateDer::from(own.clone())], Arc::clone(&key));
        if certified.keys_match().is_err() {
            return Err(ConfigError::KeyNotCertified { party: me }.into());
        }
        Ok(Self {
            me,
            key,
            certificates,
        })
    }

    /// The party that signs.
    pub fn me(&self) -> PartyId {
        self.me
    }

    /// Every party's certificate (DER), by id.
    pub fn certificates(&self) -> &BTreeMap<PartyId, Vec<u8>> {
        &self.certificates
    }

    /// The version 2 transcript of the generation that produced `share` with privacy
    /// threshold `threshold` (see [`Committee::threshold`]): each member's certificate hash
    /// from this signer's certificates. Fails if a member has none.
    pub fn transcript(&self, share: &KeyShare, threshold: usize) -> Result<PublicTranscript> {
        let certificate_sha256 = share
            .members
            .iter()
            .map(|m| {
                self.certificates
                    .get(m)
                    .map(|c| certificate_sha256(c))
                    .ok_or(ConfigError::NoCertificate { party: *m })
            })
            .collect::<std::result::Result<_, _>>()?;
        Ok(PublicTranscript {
            committee: Some(Committee {
                threshold,
                certificate_sha256,
            }),
            ..PublicTranscript::of(share)
        })
    }

    /// This party's signature of `transcript` ([`PublicTranscript::signed_message`]), with the
    /// first scheme of [`SigningScheme::ALL`] its key supports.
    pub fn sign(&self, transcript: &PublicTranscript) -> Result<TranscriptSignature> {
        self.sign_fingerprint(&transcript.fingerprint())
    }

    /// Signs the transcript whose fingerprint is `fingerprint`: [`SIGNATURE_CONTEXT`] followed
    /// by it ([`PublicTranscript::signed_message`]), with this member's key. Each call signs
    /// afresh (ECDSA draws a new nonce: two calls give two different valid signatures).
    pub fn sign_fingerprint(&self, fingerprint: &[u8; 32]) -> Result<TranscriptSignature> {
        self.sign_in_context(SIGNATURE_CONTEXT, fingerprint)
    }

    /// Signs `context` followed by `digest` with this member's key: the one signing routine of
    /// a member, each use with its own context (transcripts: [`SIGNATURE_CONTEXT`]; a star's
    /// key announcements: [`crate::star`]), so that no signature made for one use verifies for
    /// another.
    pub(crate) fn sign_in_context(
        &self,
        context: &[u8],
        digest: &[u8; 32],
    ) -> Result<TranscriptSignature> {
        let offered: Vec<rustls::SignatureScheme> =
            SigningScheme::ALL.iter().map(|s| s.tls()).collect();
        let signer = self
            .key
            .choose_scheme(&offered)
            .ok_or(TlsError::NoSigningScheme)?;
        let scheme = SigningScheme::from_tls(signer.scheme()).ok_or(TlsError::NoSigningScheme)?;
        let message = [context, &digest[..]].concat();
        let signature = signer.sign(&message).map_err(TlsError::Sign)?;
        Ok(TranscriptSignature {
            member: self.me,
            scheme,
            signature,
        })
    }
}

/// The certificates in a PEM file (one or more CERTIFICATE blocks) or in a directory (every
/// `*.pem` / `*.crt` file in it), as DER; a clear typed error ([`Error::Certificates`]) for a
/// file with none, or an unreadable one. Reads are bounded: a file over
/// [`MAX_CERTIFICATE_FILE`] (1 MiB) is refused before it is read whole.
///
/// In a directory, regular files are read in name order (subdirectories and special files are
/// skipped); every `*.pem` and `*.crt` file must hold at least one certificate (a `public.pem`
/// key beside them is an error, not silently skipped). Every certificate must parse as X.509.
pub fn read_certificates(path: &Path) -> Result<Vec<Vec<u8>>> {
    let fail = |problem| Error::Certificates {
        path: path.to_path_buf(),
        problem,
    };
    let meta = std::fs::metadata(path).map_err(|e| fail(CertificateProblem::Read(e)))?;
    if !meta.is_dir() {
        return read_pem_certificates(path).map_err(fail);
    }
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in std::fs::read_dir(path).map_err(|e| fail(CertificateProblem::Read(e)))? {
        let file = entry.map_err(|e| fail(CertificateProblem::Read(e)))?.path();
        let wanted = file
            .extension()
            .is_some_and(|ext| ext == "pem" || ext == "crt");
        // Regular files only (after symbolic links): a FIFO would block the read.
        if wanted && std::fs::metadata(&file).is_ok_and(|m| m.is_file()) {
            files.push(file);
        }
    }
    files.sort();
    if files.is_empty() {
        return Err(fail(CertificateProblem::EmptyDirectory));
    }
    let mut certificates = Vec::new();
    for file in files {
        let found = read_pem_certificates(&file).map_err(|problem| {
            fail(CertificateProblem::InFile {
                path: file.clone(),
                problem: Box::new(problem),
            })
        })?;
        certificates.extend(found);
    }
    Ok(certificates)
}

/// Every certificate of a PEM file (at least one, each a parsable X.509 certificate), read
/// only if the file has at most [`MAX_CERTIFICATE_FILE`] bytes.
pub(crate) fn read_pem_certificates(
    path: &Path,
) -> std::result::Result<Vec<Vec<u8>>, CertificateProblem> {
    let file = std::fs::File::open(path).map_err(CertificateProblem::Read)?;
    let too_large = |len| CertificateProblem::TooLarge {
        len,
        max: MAX_CERTIFICATE_FILE,
    };
    let len = file.metadata().map_err(CertificateProblem::Read)?.len();
    if len > MAX_CERTIFICATE_FILE {
        return Err(too_large(len));
    }
    // A file that grows, or a device that never ends, is cut one byte past the limit.
    let mut pem = Vec::new();
    file.take(MAX_CERTIFICATE_FILE + 1)
        .read_to_end(&mut pem)
        .map_err(CertificateProblem::Read)?;
    if pem.len() as u64 > MAX_CERTIFICATE_FILE {
        return Err(too_large(pem.len() as u64));
    }
    certificates_from_pem(&pem)
}

/// Every certificate of PEM text (at least one, each a parsable X.509 certificate), as DER:
/// [`read_certificates`] for bytes already in memory (the Python package's pins).
pub fn certificates_from_pem(pem: &[u8]) -> std::result::Result<Vec<Vec<u8>>, CertificateProblem> {
    use rustls::pki_types::pem::PemObject;
    let mut certificates = Vec::new();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(CertificateProblem::Pem)?;
        ParsedCertificate::try_from(&cert).map_err(CertificateProblem::NotX509)?;
        certificates.push(cert.to_vec());
    }
    if certificates.is_empty() {
        return Err(CertificateProblem::NoCertificate);
    }
    Ok(certificates)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PublicTranscript {
        PublicTranscript {
            cluster: "conf".into(),
            session: [7; 16],
            members: vec![1, 2, 3],
            n: Integer::from(0xabcdefu32) << 1000u32,
            e: 65537,
            committee: None,
        }
    }

    #[test]
    fn version_1_round_trips_and_detects_edits() {
        let t = sample();
        let text = t.to_json();
        assert!(text.contains(TRANSCRIPT_FORMAT_V1));
        assert_eq!(PublicTranscript::from_json(&text).unwrap(), t);
        for (from, to) in [
            ("\"conf\"", "\"conf2\""),
            ("65537", "3"),
            ("\"members\": [\n    1,", "\"members\": [\n    4,"),
        ] {
            assert!(text.contains(from), "{from}");
            assert!(PublicTranscript::from_json(&text.replacen(from, to, 1)).is_err());
        }
        assert!(PublicTranscript::from_json("{}").is_err());
    }

    /// The vectors of docs/FORMATS.md section 16.6 (computed independently with Python's
    /// hashlib from the byte layout written there).
    #[test]
    fn fingerprints_match_the_documented_vectors() {
        let mut t = PublicTranscript {
            cluster: "conf-2027".into(),
            session: core::array::from_fn(|i| i as u8),
            members: vec![1, 2, 3],
            n: Integer::from(3233),
            e: 65537,
            committee: Some(Committee {
                threshold: 1,
                certificate_sha256: vec![[0x11; 32], [0x22; 32], [0x33; 32]],
            }),
        };
        assert_eq!(
            t.fingerprint_hex(),
            "ac743e2bb7cc352fee22dcacea4e68482780b6194d14e52daa4d2d402701bc61"
        );
        assert_eq!(
            hex::encode(t.signed_message()),
            "686f7572676c6173732d646b672d7472616e7363726970742d7369676e61747572652d763200\
             ac743e2bb7cc352fee22dcacea4e68482780b6194d14e52daa4d2d402701bc61"
        );
        t.committee = None;
        assert_eq!(
            t.fingerprint_hex(),
            "d30496e50c3596d54815ab3a4df3839738da32d968f25ca7417c8796f3921f26"
        );
    }

    #[test]
    fn schemes_have_one_name_and_one_number() {
        for s in SigningScheme::ALL {
            assert_eq!(SigningScheme::from_name(s.name()), Some(s));
            assert_eq!(SigningScheme::from_code(s.code()), Some(s));
            assert_eq!(SigningScheme::from_tls(s.tls()), Some(s));
        }
        assert_eq!(SigningScheme::EcdsaP256Sha256.code(), 0x0403);
        assert_eq!(SigningScheme::Ed25519.code(), 0x0807);
        assert_eq!(SigningScheme::RsaPssSha256.code(), 0x0804);
        assert_eq!(SigningScheme::from_name("ECDSA_NISTP256_SHA256"), None);
        assert_eq!(SigningScheme::from_code(0x0401), None, "no PKCS#1 v1.5");
    }
}

//! Checkpoints: a log's signed statement of its size and root (C2SP tlog-checkpoint), as a
//! signed note (C2SP signed-note) with the log's signature and the witnesses' cosignatures
//! (C2SP tlog-cosignature/v1).
//!
//! A checkpoint verifies only against keys the verifier pins ([`LogPins`]): the log's key,
//! whose name must be the checkpoint's origin, and the witnesses whose cosignatures count
//! toward the quorum. Signatures by other keys are ignored; a signature by a pinned key that
//! does not verify makes the checkpoint invalid.

use base64::Engine;

use crate::error::{LogError, Result};
use crate::keys::{KeyRole, SigningKey, VerifierKey};
use crate::tree::{Hash, MAX_TREE_SIZE};

/// The most signatures a checkpoint may carry (`signed_note`'s limit): the log's and at most
/// [`MAX_WITNESSES`] cosignatures.
pub const MAX_SIGNATURES: usize = 100;
/// The most witnesses a log asks, or a verifier pins.
pub const MAX_WITNESSES: usize = MAX_SIGNATURES - 1;
/// The largest checkpoint read: the text (an origin of the longest key name, a size, a root)
/// and [`MAX_SIGNATURES`] signature lines by keys of the longest name, each `— NAME BASE64\n`
/// with the 4-byte id, the 8-byte time and the 64-byte signature (about 37 KB in all), rounded
/// up.
pub const MAX_CHECKPOINT_BYTES: usize = 64 * 1024;

/// A checkpoint with its signatures, parsed but not yet verified.
#[derive(Debug)]
pub struct SignedCheckpoint {
    note: signed_note::Note,
    body: tlog_tiles::Checkpoint,
}

/// The keys a verifier trusts for a log: the log's, the witnesses', and how many of the
/// witnesses must have cosigned.
#[derive(Debug, Clone)]
pub struct LogPins {
    log: VerifierKey,
    witnesses: Vec<VerifierKey>,
    quorum: usize,
}

/// A witness's cosignature on a verified checkpoint.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Cosignature {
    /// The witness's name.
    pub witness: String,
    /// When it cosigned (seconds since 1970).
    pub time: u64,
}

/// A checkpoint whose signature (and quorum of cosignatures) verified under pinned keys.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedCheckpoint {
    /// The log's origin.
    pub origin: String,
    /// The number of entries.
    pub size: u64,
    /// The tree's root.
    pub root: Hash,
    /// The pinned witnesses' valid cosignatures.
    pub cosignatures: Vec<Cosignature>,
    /// The signed note, as read.
    pub note: Vec<u8>,
}

/// Refuses keys that are not witness keys, a witness given twice (by name or key id), a quorum
/// larger than the witnesses, and more than [`MAX_WITNESSES`] witnesses.
pub(crate) fn check_witnesses(witnesses: &[VerifierKey], quorum: usize) -> Result<()> {
    for (i, w) in witnesses.iter().enumerate() {
        w.expect_role(KeyRole::Witness)?;
        if witnesses[..i]
            .iter()
            .any(|o| o.name() == w.name() || o.id() == w.id())
        {
            return Err(LogError::Settings(format!(
                "the witness {} is given twice",
                w.label()
            )));
        }
    }
    if quorum > witnesses.len() {
        return Err(LogError::Settings(format!(
            "a quorum of {quorum} witnesses needs at least {quorum} witness keys ({} given)",
            witnesses.len()
        )));
    }
    if witnesses.len() > MAX_WITNESSES {
        return Err(LogError::Settings(format!(
            "at most {MAX_WITNESSES} witnesses (a checkpoint carries at most {MAX_SIGNATURES} signatures)"
        )));
    }
    Ok(())
}

impl LogPins {
    /// Pins a log key and `witnesses`, `quorum` of which must cosign. Refuses keys of the wrong
    /// role, a witness given twice, and a quorum larger than the witnesses given.
    pub fn new(log: VerifierKey, witnesses: Vec<VerifierKey>, quorum: usize) -> Result<Self> {
        log.expect_role(KeyRole::Log)?;
        check_witnesses(&witnesses, quorum)?;
        Ok(Self {
            log,
            witnesses,
            quorum,
        })
    }

    /// Pins a log key alone (no witness required).
    pub fn log_only(log: VerifierKey) -> Result<Self> {
        Self::new(log, Vec::new(), 0)
    }

    /// The pinned log key.
    pub fn log(&self) -> &VerifierKey {
        &self.log
    }

    /// The pinned witnesses.
    pub fn witnesses(&self) -> &[VerifierKey] {
        &self.witnesses
    }

    /// How many of them must cosign.
    pub fn quorum(&self) -> usize {
        self.quorum
    }

    /// Pins from key texts (`name+id+base64`): the log's, and witnesses', `quorum` of which
    /// must cosign (`None`: all of them).
    pub fn parse(log: &str, witnesses: &[String], quorum: Option<usize>) -> Result<Self> {
        let witnesses = witnesses
            .iter()
            .map(|w| VerifierKey::parse(w))
            .collect::<Result<Vec<_>>>()?;
        let quorum = quorum.unwrap_or(witnesses.len());
        Self::new(VerifierKey::parse(log)?, witnesses, quorum)
    }

    /// Whom a checkpoint verified under these pins is trusted on: the log's key alone, or the
    /// log and at least `quorum` of the witnesses.
    pub fn trust(&self) -> String {
        if self.quorum == 0 {
            format!(
                "the log key {} alone (no witness: the log could show others another history)",
                self.log.label()
            )
        } else {
            format!(
                "the log key {} and {} of the witnesses {} (a split view needs them to collude)",
                self.log.label(),
                self.quorum,
                self.witnesses
                    .iter()
                    .map(VerifierKey::name)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    }
}

struct Verifiers<'a>(&'a LogPins);

impl signed_note::Verifiers for Verifiers<'_> {
    fn verifier(
        &self,
        name: &str,
        id: u32,
    ) -> std::result::Result<&dyn signed_note::Verifier, signed_note::VerificationError> {
        std::iter::once(&self.0.log)
            .chain(&self.0.witnesses)
            .find(|k| k.name() == name && k.id() == id)
            .map(|k| k as &dyn signed_note::Verifier)
            .ok_or(signed_note::VerificationError::UnknownKey {
                name: name.to_string(),
                id,
            })
    }
}

fn note_error(what: &'static str, e: signed_note::NoteError) -> LogError {
    LogError::malformed(what, e.to_string())
}

impl SignedCheckpoint {
    /// A checkpoint of `origin` at `size` with `root`, signed by the log's `key` (whose name
    /// must be the origin).
    pub fn sign(origin: &str, size: u64, root: Hash, key: &SigningKey) -> Result<Self> {
        if key.name() != origin {
            return Err(LogError::WrongKey {
                name: key.name().to_string(),
                why: "a log's key must be named after its origin",
            });
        }
        let body = tlog_tiles::Checkpoint::new(origin, size, root, "")
            .map_err(|_| LogError::malformed("checkpoint", "invalid origin"))?;
        let text = body.to_bytes();
        let signature = key.sign_note(&text)?;
        let note =
            signed_note::Note::new(&text, &[signature]).map_err(|e| note_error("checkpoint", e))?;
        Ok(Self { note, body })
    }

    /// Parses a checkpoint: a signed note of at most [`MAX_CHECKPOINT_BYTES`] whose text is a
    /// checkpoint in canonical form (origin, decimal size without leading zeros, base64 root,
    /// optional extension lines) of at most 2^40 entries.
    pub fn parse(bytes: &[u8]) -> Result<Self> {
        const WHAT: &str = "checkpoint";
        if bytes.len() > MAX_CHECKPOINT_BYTES {
            return Err(LogError::TooLarge {
                what: WHAT,
                limit: MAX_CHECKPOINT_BYTES,
            });
        }
        let note = signed_note::Note::from_bytes(bytes).map_err(|e| note_error(WHAT, e))?;
        let body = tlog_tiles::Checkpoint::from_bytes(note.text())
            .map_err(|_| LogError::malformed(WHAT, "its text is not a checkpoint"))?;
        if body.to_bytes() != note.text() {
            return Err(LogError::malformed(
                WHAT,
                "its text is not in canonical form",
            ));
        }
        if body.size() > MAX_TREE_SIZE {
            return Err(LogError::malformed(
                WHAT,
                format!(
                    "a tree of {} entries (at most 2^40 are accepted)",
                    body.size()
                ),
            ));
        }
        if !crate::keys::valid_key_name(body.origin()) {
            return Err(LogError::malformed(
                WHAT,
                "its origin is not a valid key name",
            ));
        }
        // One encoding per checkpoint: parsing again what it prints gives the same bytes.
        if note.to_bytes() != bytes {
            return Err(LogError::malformed(WHAT, "it is not in canonical form"));
        }
        Ok(Self { note, body })
    }

    /// The note's bytes (text, blank line, signature lines).
    pub fn to_bytes(&self) -> Vec<u8> {
        self.note.to_bytes()
    }

    /// The checkpoint text the signatures cover.
    pub fn text(&self) -> &[u8] {
        self.note.text()
    }

    /// The origin line.
    pub fn origin(&self) -> &str {
        self.body.origin()
    }

    /// The number of entries.
    pub fn size(&self) -> u64 {
        self.body.size()
    }

    /// The root hash.
    pub fn root(&self) -> Hash {
        *self.body.hash()
    }

    /// The same checkpoint with the signature lines of `lines` (a witness's response: lines of
    /// `— <name> <base64>`) added.
    pub fn with_signature_lines(&self, lines: &[u8]) -> Result<Self> {
        let mut bytes = self.to_bytes();
        bytes.extend_from_slice(lines);
        Self::parse(&bytes)
    }

    /// A witness's cosignature line for this checkpoint at `time`.
    pub fn cosignature_line(&self, key: &SigningKey, time: u64) -> Result<Vec<u8>> {
        Ok(key.cosign(self.text(), time)?.to_bytes())
    }

    /// Verifies the checkpoint under `pins`: the origin is the pinned log's name, the log's
    /// signature verifies, no signature of a pinned key fails, and at least the quorum of
    /// pinned witnesses cosigned.
    pub fn verify(&self, pins: &LogPins) -> Result<VerifiedCheckpoint> {
        if self.origin() != pins.log.name() {
            return Err(LogError::OtherLog {
                expected: pins.log.name().to_string(),
                found: self.origin().to_string(),
            });
        }
        let not_signed = || LogError::NotSignedByLog {
            key: pins.log.label(),
        };
        let (verified, _unknown) = self.note.verify(&Verifiers(pins)).map_err(|e| match e {
            signed_note::NoteError::UnverifiedNote => not_signed(),
            signed_note::NoteError::InvalidSignature { name, id } => {
                LogError::BadSignature { name, id }
            }
            other => note_error("checkpoint", other),
        })?;
        if !verified
            .iter()
            .any(|s| s.name() == pins.log.name() && s.id() == pins.log.id())
        {
            return Err(not_signed());
        }
        let mut cosignatures = Vec::new();
        for w in &pins.witnesses {
            if let Some(s) = verified
                .iter()
                .find(|s| s.name() == w.name() && s.id() == w.id())
            {
                cosignatures.push(Cosignature {
                    witness: w.name().to_string(),
                    time: VerifierKey::cosignature_time(s.signature()).unwrap_or(0),
                });
            }
        }
        if cosignatures.len() < pins.quorum {
            return Err(LogError::Quorum {
                got: cosignatures.len(),
                needed: pins.quorum,
                cosigned: cosignatures.iter().map(|c| c.witness.clone()).collect(),
            });
        }
        Ok(VerifiedCheckpoint {
            origin: self.origin().to_string(),
            size: self.size(),
            root: self.root(),
            cosignatures,
            note: self.to_bytes(),
        })
    }
}

impl VerifiedCheckpoint {
    /// What every surface reports of it: origin, size, root (base64) and the cosignatures
    /// (witness, time in RFC 3339).
    pub fn summary(&self) -> serde_json::Value {
        serde_json::json!({
            "origin": self.origin,
            "size": self.size,
            "root": hash_to_base64(&self.root),
            "cosignatures": self.cosignatures.iter().map(|c| serde_json::json!({
                "witness": c.witness,
                "time": c.rfc3339(),
            })).collect::<Vec<_>>(),
        })
    }
}

impl Cosignature {
    /// Its time, RFC 3339.
    pub fn rfc3339(&self) -> String {
        humantime::format_rfc3339_seconds(
            std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(self.time),
        )
        .to_string()
    }
}

/// A hash in the base64 form checkpoints, proofs and state files use.
pub fn hash_to_base64(h: &Hash) -> String {
    base64::engine::general_purpose::STANDARD.encode(h.0)
}

/// Parses a base64 hash.
pub fn hash_from_base64(text: &str, what: &'static str) -> Result<Hash> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|_| LogError::malformed(what, "a hash is not base64"))?;
    let arr: [u8; 32] = bytes
        .try_into()
        .map_err(|_| LogError::malformed(what, "a hash is not 32 bytes"))?;
    let h = Hash(arr);
    if hash_to_base64(&h) != text {
        return Err(LogError::malformed(
            what,
            "a hash is not in canonical base64",
        ));
    }
    Ok(h)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::leaf_hash;
    use hourglass_arith::entropy::SeededEntropy;

    fn key(name: &str, role: KeyRole) -> SigningKey {
        SigningKey::generate(name, role, &mut SeededEntropy::new(name.as_bytes())).unwrap()
    }

    fn cosigned(log: &SigningKey, witnesses: &[&SigningKey]) -> SignedCheckpoint {
        let mut c = SignedCheckpoint::sign(log.name(), 5, leaf_hash(b"root"), log).unwrap();
        for w in witnesses {
            let line = c.cosignature_line(w, 1_700_000_000).unwrap();
            c = c.with_signature_lines(&line).unwrap();
        }
        c
    }

    #[test]
    fn a_signed_checkpoint_verifies_and_round_trips() {
        let log = key("example.org/log", KeyRole::Log);
        let c = cosigned(&log, &[]);
        let again = SignedCheckpoint::parse(&c.to_bytes()).unwrap();
        let v = again
            .verify(&LogPins::log_only(log.verifier()).unwrap())
            .unwrap();
        assert_eq!(v.size, 5);
        assert_eq!(v.origin, "example.org/log");
        assert!(String::from_utf8(c.to_bytes())
            .unwrap()
            .starts_with("example.org/log\n5\n"));
    }

    #[test]
    fn only_the_pinned_log_key_counts() {
        let log = key("example.org/log", KeyRole::Log);
        // Another key of the same name (whoever signs with it is not the pinned log).
        let impostor = SigningKey::generate(
            log.name(),
            KeyRole::Log,
            &mut SeededEntropy::new(b"impostor"),
        )
        .unwrap();
        let pins = LogPins::log_only(log.verifier()).unwrap();
        let c = cosigned(&impostor, &[]);
        assert!(matches!(
            c.verify(&pins),
            Err(LogError::NotSignedByLog { .. })
        ));
        // Another log's checkpoint.
        let other = key("other.example/log", KeyRole::Log);
        let c = cosigned(&other, &[]);
        assert!(matches!(c.verify(&pins), Err(LogError::OtherLog { .. })));
        // Cosigned by a witness only (the log's signature stripped).
        let w = key("w1", KeyRole::Witness);
        let text = String::from_utf8(cosigned(&log, &[&w]).to_bytes()).unwrap();
        let witness_only: String = text
            .lines()
            .filter(|l| !l.starts_with("— example.org/log "))
            .map(|l| format!("{l}\n"))
            .collect();
        let c = SignedCheckpoint::parse(witness_only.as_bytes()).unwrap();
        let pins_w = LogPins::new(log.verifier(), vec![w.verifier()], 1).unwrap();
        assert!(matches!(
            c.verify(&pins_w),
            Err(LogError::NotSignedByLog { .. })
        ));
    }

    #[test]
    fn an_altered_checkpoint_is_refused() {
        let log = key("example.org/log", KeyRole::Log);
        let pins = LogPins::log_only(log.verifier()).unwrap();
        let text = String::from_utf8(cosigned(&log, &[]).to_bytes()).unwrap();
        let bigger = text.replacen("\n5\n", "\n6\n", 1);
        let c = SignedCheckpoint::parse(bigger.as_bytes()).unwrap();
        assert!(matches!(
            c.verify(&pins),
            Err(LogError::BadSignature { .. })
        ));
    }

    #[test]
    fn the_quorum_counts_distinct_pinned_witnesses() {
        let log = key("example.org/log", KeyRole::Log);
        let (w1, w2, w3) = (
            key("w1.example", KeyRole::Witness),
            key("w2.example", KeyRole::Witness),
            key("w3.example", KeyRole::Witness),
        );
        let pins = LogPins::new(log.verifier(), vec![w1.verifier(), w2.verifier()], 2).unwrap();
        let one = cosigned(&log, &[&w1]);
        assert!(matches!(
            one.verify(&pins),
            Err(LogError::Quorum {
                got: 1,
                needed: 2,
                ..
            })
        ));
        // The same witness twice is one cosignature.
        let twice = cosigned(&log, &[&w1, &w1]);
        assert!(matches!(
            twice.verify(&pins),
            Err(LogError::Quorum { got: 1, .. })
        ));
        // An unpinned witness does not count.
        let other = cosigned(&log, &[&w1, &w3]);
        assert!(matches!(
            other.verify(&pins),
            Err(LogError::Quorum { got: 1, .. })
        ));
        let both = cosigned(&log, &[&w2, &w1]);
        let v = both.verify(&pins).unwrap();
        assert_eq!(v.cosignatures.len(), 2);
        assert_eq!(v.cosignatures[0].time, 1_700_000_000);
        // A quorum larger than the witnesses, a witness key as the log key, a witness twice.
        assert!(LogPins::new(log.verifier(), vec![w1.verifier()], 2).is_err());
        assert!(LogPins::log_only(w1.verifier()).is_err());
        assert!(LogPins::new(log.verifier(), vec![w1.verifier(), w1.verifier()], 1).is_err());
        assert!(LogPins::new(log.verifier(), vec![log.verifier()], 1).is_err());
    }

    #[test]
    fn a_forged_cosignature_of_a_pinned_witness_is_refused() {
        let log = key("example.org/log", KeyRole::Log);
        let w1 = key("w1.example", KeyRole::Witness);
        let text = String::from_utf8(cosigned(&log, &[&w1]).to_bytes()).unwrap();
        // Another time than the one signed.
        let (head, last) = text.trim_end().rsplit_once('\n').unwrap();
        let (prefix, b64) = last.rsplit_once(' ').unwrap();
        let mut raw = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap();
        raw[11] ^= 1;
        let forged = format!(
            "{head}\n{prefix} {}\n",
            base64::engine::general_purpose::STANDARD.encode(raw)
        );
        let c = SignedCheckpoint::parse(forged.as_bytes()).unwrap();
        let pins = LogPins::new(log.verifier(), vec![w1.verifier()], 1).unwrap();
        assert!(matches!(
            c.verify(&pins),
            Err(LogError::BadSignature { .. })
        ));
    }

    #[test]
    fn the_largest_legitimate_checkpoint_fits_and_one_signature_more_is_refused() {
        let long = |c: char| c.to_string().repeat(crate::keys::MAX_KEY_NAME_BYTES);
        let log = key(&long('l'), KeyRole::Log);
        let mut c =
            SignedCheckpoint::sign(log.name(), MAX_TREE_SIZE, leaf_hash(b"r"), &log).unwrap();
        let witnesses: Vec<SigningKey> = (0..MAX_WITNESSES)
            .map(|i| key(&format!("{}{i:02}", &long('w')[..254]), KeyRole::Witness))
            .collect();
        let mut lines = Vec::new();
        for w in &witnesses {
            lines.extend(c.cosignature_line(w, i64::MAX as u64).unwrap());
        }
        c = c.with_signature_lines(&lines).unwrap();
        let bytes = c.to_bytes();
        assert!(bytes.len() <= MAX_CHECKPOINT_BYTES, "{}", bytes.len());
        let pins = LogPins::new(
            log.verifier(),
            witnesses.iter().map(SigningKey::verifier).collect(),
            MAX_WITNESSES,
        )
        .unwrap();
        assert_eq!(
            SignedCheckpoint::parse(&bytes)
                .unwrap()
                .verify(&pins)
                .unwrap()
                .cosignatures
                .len(),
            MAX_WITNESSES
        );
        let extra = key("one.more", KeyRole::Witness);
        let more = [bytes, c.cosignature_line(&extra, 0).unwrap()].concat();
        assert!(SignedCheckpoint::parse(&more).is_err());
        let mut too_many = pins.witnesses().to_vec();
        too_many.push(extra.verifier());
        assert!(LogPins::new(log.verifier(), too_many, 1).is_err());
    }

    #[test]
    fn malformed_checkpoints_are_errors() {
        let log = key("example.org/log", KeyRole::Log);
        let good = String::from_utf8(cosigned(&log, &[]).to_bytes()).unwrap();
        for bad in [
            String::new(),
            "x\n".into(),
            good.replacen("\n5\n", "\n05\n", 1),
            good.replacen("\n5\n", "\n1099511627777\n", 1),
            good.replace("\n\n", "\n"),
            good.replacen("example.org/log\n", "example org\n", 1),
            format!("{good}garbage\n"),
            "a".repeat(MAX_CHECKPOINT_BYTES + 1),
        ] {
            assert!(SignedCheckpoint::parse(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }
}

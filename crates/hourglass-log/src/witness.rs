//! Witnesses (C2SP tlog-witness): what a witness decides on an `add-checkpoint` request, the
//! request's format, and what it remembers of each log.
//!
//! A witness cosigns a checkpoint of a log it knows only after checking the log's signature
//! and a consistency proof from the last checkpoint it cosigned for that log: a log that shows
//! a witness two histories, or rewrites its own, is refused. The HTTP service around these
//! rules (`hourglass log witness`) must hold one lock per log from reading the remembered
//! checkpoint to persisting the new one, and persist before answering (the spec's race).

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::checkpoint::{hash_from_base64, hash_to_base64, LogPins, SignedCheckpoint};
use crate::error::{LogError, Result};
use crate::keys::{KeyRole, SigningKey, VerifierKey};
use crate::tree::{verify_consistency, Hash, EMPTY_HASH, MAX_PROOF_HASHES};

/// The most consistency proof lines a request may carry (the spec's limit).
pub const MAX_PROOF_LINES: usize = 63;
/// The largest `add-checkpoint` body: the old size line, the proof lines, the blank line and
/// the largest checkpoint.
pub const MAX_REQUEST_BYTES: usize =
    32 + MAX_PROOF_LINES * 45 + 1 + crate::checkpoint::MAX_CHECKPOINT_BYTES;

/// An `add-checkpoint` request: the size the log believes the witness has, a consistency proof
/// from it, and the checkpoint.
#[derive(Debug)]
pub struct AddCheckpoint {
    /// The tree size of the checkpoint the witness last cosigned, as the log believes.
    pub old_size: u64,
    /// The consistency proof from `old_size` to the checkpoint.
    pub proof: Vec<Hash>,
    /// The checkpoint, with at least the log's signature.
    pub checkpoint: SignedCheckpoint,
}

impl AddCheckpoint {
    /// The request body: `old N`, the proof lines, a blank line, the checkpoint.
    pub fn encode(old_size: u64, proof: &[Hash], checkpoint: &SignedCheckpoint) -> Vec<u8> {
        let mut body = format!("old {old_size}\n").into_bytes();
        for h in proof {
            body.extend_from_slice(hash_to_base64(h).as_bytes());
            body.push(b'\n');
        }
        body.push(b'\n');
        body.extend_from_slice(&checkpoint.to_bytes());
        body
    }

    /// Parses a request body (at most [`MAX_REQUEST_BYTES`]).
    pub fn parse(body: &[u8]) -> Result<Self> {
        const WHAT: &str = "add-checkpoint request";
        if body.len() > MAX_REQUEST_BYTES {
            return Err(LogError::TooLarge {
                what: WHAT,
                limit: MAX_REQUEST_BYTES,
            });
        }
        let mut rest = body;
        let mut line = || -> Result<&[u8]> {
            let end = rest
                .iter()
                .position(|&b| b == b'\n')
                .ok_or_else(|| LogError::malformed(WHAT, "it ends before the checkpoint"))?;
            let (l, tail) = rest.split_at(end);
            rest = &tail[1..];
            Ok(l)
        };
        let first = std::str::from_utf8(line()?)
            .map_err(|_| LogError::malformed(WHAT, "the old size line is not text"))?;
        let old = first
            .strip_prefix("old ")
            .ok_or_else(|| LogError::malformed(WHAT, "it must start with `old <size>`"))?;
        let old_size: u64 = old
            .parse()
            .ok()
            .filter(|n: &u64| n.to_string() == old)
            .ok_or_else(|| LogError::malformed(WHAT, "the old size is not a decimal number"))?;
        let mut proof = Vec::new();
        loop {
            let l = line()?;
            if l.is_empty() {
                break;
            }
            if proof.len() == MAX_PROOF_LINES {
                return Err(LogError::malformed(
                    WHAT,
                    "more than 63 consistency proof lines",
                ));
            }
            let text = std::str::from_utf8(l)
                .map_err(|_| LogError::malformed(WHAT, "a proof line is not text"))?;
            proof.push(hash_from_base64(text, WHAT)?);
        }
        let checkpoint = SignedCheckpoint::parse(rest)?;
        Ok(Self {
            old_size,
            proof,
            checkpoint,
        })
    }
}

/// Why a witness refused a request, with the HTTP status the spec gives it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The request is malformed, or its old size is larger than the checkpoint's (400).
    BadRequest(String),
    /// The checkpoint's signature by the log does not verify (403).
    NotSigned(String),
    /// The witness does not know the checkpoint's log (404).
    UnknownLog(String),
    /// The old size is not the size the witness last cosigned, which is given (409).
    Conflict {
        /// The size of the checkpoint the witness last cosigned for this log.
        size: u64,
        /// What conflicts.
        why: String,
    },
    /// The checkpoint cannot extend what the witness cosigned (422): the consistency proof does
    /// not verify (the log rewrote or forked its history), the checkpoint has the size the
    /// witness cosigned but another root (a fork at the same size), a checkpoint of size 0
    /// does not have the empty tree's root, or a proof from size 0 is not empty.
    Inconsistent(String),
}

impl Refusal {
    /// The HTTP status.
    pub fn status(&self) -> u16 {
        match self {
            Refusal::BadRequest(_) => 400,
            Refusal::NotSigned(_) => 403,
            Refusal::UnknownLog(_) => 404,
            Refusal::Conflict { .. } => 409,
            Refusal::Inconsistent(_) => 422,
        }
    }

    /// The explanation.
    pub fn message(&self) -> String {
        match self {
            Refusal::BadRequest(m)
            | Refusal::NotSigned(m)
            | Refusal::UnknownLog(m)
            | Refusal::Inconsistent(m) => m.clone(),
            Refusal::Conflict { why, .. } => why.clone(),
        }
    }
}

/// The latest checkpoint of a log that was verified (by a witness before cosigning it, or by a
/// client's `log verify`): what the next one must be consistent with.
#[derive(Debug, Clone, PartialEq)]
pub struct KnownCheckpoint {
    /// The log's origin.
    pub origin: String,
    /// Its size.
    pub size: u64,
    /// Its root.
    pub root: Hash,
    /// The checkpoint note as it was verified.
    pub note: Vec<u8>,
}

#[derive(serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct KnownFile {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    checkpoint: String,
}

const KNOWN_TYPE: &str = "hourglass-log-state";
/// The largest state file read.
const MAX_KNOWN_BYTES: usize = 2 * crate::checkpoint::MAX_CHECKPOINT_BYTES;

impl KnownCheckpoint {
    /// The state a verified checkpoint leaves.
    pub fn of(checkpoint: &crate::checkpoint::VerifiedCheckpoint) -> Self {
        Self {
            origin: checkpoint.origin.clone(),
            size: checkpoint.size,
            root: checkpoint.root,
            note: checkpoint.note.clone(),
        }
    }

    /// The state file's text: `{"type": "hourglass-log-state", "version": 1, "checkpoint":
    /// NOTE}`.
    pub fn to_json(&self) -> String {
        let file = KnownFile {
            kind: KNOWN_TYPE.into(),
            version: 1,
            checkpoint: String::from_utf8_lossy(&self.note).into_owned(),
        };
        serde_json::to_string_pretty(&file).unwrap_or_default() + "\n"
    }

    /// Reads the state file at `path` (`None` if there is none yet); see [`Self::from_json`].
    pub fn load(path: &Path, log: &VerifierKey) -> Result<Option<Self>> {
        use std::io::Read;
        let io = |source| LogError::Io {
            path: path.to_path_buf(),
            source,
        };
        let mut bytes = Vec::new();
        match std::fs::File::open(path) {
            Ok(f) => f
                .take(MAX_KNOWN_BYTES as u64 + 1)
                .read_to_end(&mut bytes)
                .map_err(io)?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
        };
        Self::from_json(&bytes, log).map(Some)
    }

    /// Writes the state file at `path` atomically (a crash leaves the old one or the new one).
    pub fn save(&self, path: &Path) -> Result<()> {
        hourglass_arith::atomic::write_atomic(
            path,
            self.to_json().as_bytes(),
            0o644,
            hourglass_arith::atomic::Existing::Replace,
        )
        .map_err(|source| LogError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Reads a state file; its checkpoint must verify under `log` (so a state file cannot
    /// plant a view of the log that the log did not sign).
    pub fn from_json(bytes: &[u8], log: &VerifierKey) -> Result<Self> {
        const WHAT: &str = "log state";
        if bytes.len() > MAX_KNOWN_BYTES {
            return Err(LogError::TooLarge {
                what: WHAT,
                limit: MAX_KNOWN_BYTES,
            });
        }
        let file: KnownFile =
            serde_json::from_slice(bytes).map_err(|e| LogError::malformed(WHAT, e.to_string()))?;
        if file.kind != KNOWN_TYPE || file.version != 1 {
            return Err(LogError::malformed(
                WHAT,
                "not an hourglass-log-state file of version 1",
            ));
        }
        let checkpoint = SignedCheckpoint::parse(file.checkpoint.as_bytes())?;
        let verified = checkpoint.verify(&LogPins::log_only(log.clone())?)?;
        Ok(Self::of(&verified))
    }
}

/// A witness: its cosigning key and the logs it witnesses.
#[derive(Debug)]
pub struct Witness {
    key: SigningKey,
    logs: Vec<VerifierKey>,
}

impl Witness {
    /// A witness cosigning with `key` for the logs whose keys are `logs` (one per origin).
    pub fn new(key: SigningKey, logs: Vec<VerifierKey>) -> Result<Self> {
        key.verifier().expect_role(KeyRole::Witness)?;
        for (i, l) in logs.iter().enumerate() {
            l.expect_role(KeyRole::Log)?;
            if logs[..i].iter().any(|o| o.name() == l.name()) {
                return Err(LogError::Settings(format!(
                    "two log keys for the origin {}",
                    l.name()
                )));
            }
        }
        if logs.is_empty() {
            return Err(LogError::Settings(
                "a witness needs at least one log key".into(),
            ));
        }
        Ok(Self { key, logs })
    }

    /// The witness's public key.
    pub fn verifier(&self) -> VerifierKey {
        self.key.verifier()
    }

    /// The logs it witnesses.
    pub fn logs(&self) -> &[VerifierKey] {
        &self.logs
    }

    /// The log it witnesses whose [`origin_hash`] is `hash` (lowercase hex only, as the spec
    /// writes it), if any.
    pub fn log_by_origin_hash(&self, hash: &str) -> Option<&VerifierKey> {
        self.logs.iter().find(|l| origin_hash(l.name()) == hash)
    }

    /// Decides on `request` given what the witness remembers of its log (`known`, `None` if it
    /// never cosigned one), at `now` (seconds since 1970). On success returns what to remember
    /// (persist it before answering) and the cosignature lines to answer with.
    pub fn add_checkpoint(
        &self,
        request: &AddCheckpoint,
        known: Option<&KnownCheckpoint>,
        now: u64,
    ) -> std::result::Result<(KnownCheckpoint, Vec<u8>), Refusal> {
        let cp = &request.checkpoint;
        let log = self
            .logs
            .iter()
            .find(|l| l.name() == cp.origin())
            .ok_or_else(|| {
                Refusal::UnknownLog(format!(
                    "this witness does not witness the log '{}'",
                    cp.origin()
                ))
            })?;
        let verified = cp
            .verify(
                &LogPins::log_only(log.clone()).map_err(|e| Refusal::BadRequest(e.to_string()))?,
            )
            .map_err(|e| Refusal::NotSigned(e.to_string()))?;
        if request.old_size > verified.size {
            return Err(Refusal::BadRequest(format!(
                "the old size {} is larger than the checkpoint's {}",
                request.old_size, verified.size
            )));
        }
        let (known_size, known_root) = known.map_or((0, None), |k| (k.size, Some(k.root)));
        if request.old_size != known_size {
            return Err(Refusal::Conflict {
                size: known_size,
                why: format!(
                    "the witness last cosigned a checkpoint of size {known_size}, not {}",
                    request.old_size
                ),
            });
        }
        if verified.size == 0 && verified.root != EMPTY_HASH {
            return Err(Refusal::Inconsistent(
                "a checkpoint of size 0 must have the empty tree's root (SHA-256 of nothing)"
                    .into(),
            ));
        }
        if request.old_size == 0 && !request.proof.is_empty() {
            return Err(Refusal::Inconsistent(
                "the consistency proof from size 0 must be empty".into(),
            ));
        }
        match known_root {
            // Nothing cosigned yet (old size 0): the empty tree is consistent with any tree.
            None => {}
            Some(root) if known_size == verified.size && root != verified.root => {
                return Err(Refusal::Inconsistent(format!(
                    "the witness cosigned another root for size {known_size}: the log forked"
                )));
            }
            Some(_) if known_size == verified.size && !request.proof.is_empty() => {
                return Err(Refusal::Inconsistent(
                    "the consistency proof between equal sizes must be empty".into(),
                ));
            }
            Some(_) if known_size == verified.size => {}
            // A remembered size 0 (a cosigned empty tree): likewise consistent with any tree.
            Some(_) if known_size == 0 => {}
            Some(_) if request.proof.len() > MAX_PROOF_HASHES => {
                return Err(Refusal::Inconsistent(
                    "the consistency proof has more hashes than any proof can".into(),
                ));
            }
            Some(root) => {
                verify_consistency(
                    known_size,
                    &root,
                    verified.size,
                    &verified.root,
                    &request.proof,
                )
                .map_err(|e| Refusal::Inconsistent(e.to_string()))?;
            }
        }
        let line = cp
            .cosignature_line(&self.key, now)
            .map_err(|e| Refusal::BadRequest(e.to_string()))?;
        let mut remembered = KnownCheckpoint::of(&verified);
        // Remember the checkpoint with this witness's cosignature on it.
        if let Ok(cosigned) = cp.with_signature_lines(&line) {
            remembered.note = cosigned.to_bytes();
        }
        Ok((remembered, line))
    }
}

/// A witness's memory on disk: one state file per log in a directory, written atomically
/// (temporary file, fsync, rename) before the witness answers.
#[derive(Debug, Clone)]
pub struct StateDir {
    dir: PathBuf,
}

impl StateDir {
    /// The directory (created, mode 0700, if missing).
    pub fn open(dir: &Path) -> std::io::Result<Self> {
        use std::os::unix::fs::DirBuilderExt;
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
        Ok(Self {
            dir: dir.to_path_buf(),
        })
    }

    /// The file of the log with `origin`: named by its [`origin_hash`].
    pub fn path(&self, origin: &str) -> PathBuf {
        self.dir.join(format!("{}.json", origin_hash(origin)))
    }

    /// What the witness remembers of `log` (`None` if nothing).
    pub fn load(&self, log: &VerifierKey) -> Result<Option<KnownCheckpoint>> {
        KnownCheckpoint::load(&self.path(log.name()), log)
    }

    /// Remembers `known` for its log, durably.
    pub fn store(&self, known: &KnownCheckpoint) -> Result<()> {
        known.save(&self.path(&known.origin))
    }
}

/// A log's origin hash: SHA-256 of its origin line, in lowercase hex, as tlog-witness names a
/// log in `GET <monitoring prefix>/<origin hash>/checkpoint`.
pub fn origin_hash(origin: &str) -> String {
    hex_of(&Sha256::digest(origin.as_bytes()))
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{append, leaf_hash, prove_consistency, root, HashMemo};
    use hourglass_arith::entropy::SeededEntropy;

    struct Log {
        key: SigningKey,
        memo: HashMemo,
        size: u64,
    }

    impl Log {
        fn new() -> Self {
            Self {
                key: SigningKey::generate(
                    "log.example",
                    KeyRole::Log,
                    &mut SeededEntropy::new(b"l"),
                )
                .unwrap(),
                memo: HashMemo::new(),
                size: 0,
            }
        }
        fn grow(&mut self, n: u64, tag: &str) {
            let leaves: Vec<Hash> = (0..n)
                .map(|i| leaf_hash(format!("{tag} {}", self.size + i).as_bytes()))
                .collect();
            append(&mut self.memo, self.size, &leaves).unwrap();
            self.size += n;
        }
        fn checkpoint(&self) -> SignedCheckpoint {
            SignedCheckpoint::sign(
                "log.example",
                self.size,
                root(&self.memo, self.size).unwrap(),
                &self.key,
            )
            .unwrap()
        }
        fn request(&self, old: u64) -> AddCheckpoint {
            let body = AddCheckpoint::encode(
                old,
                &prove_consistency(&self.memo, old, self.size).unwrap(),
                &self.checkpoint(),
            );
            AddCheckpoint::parse(&body).unwrap()
        }
    }

    fn witness(log: &Log) -> Witness {
        let key =
            SigningKey::generate("w.example", KeyRole::Witness, &mut SeededEntropy::new(b"w"))
                .unwrap();
        Witness::new(key, vec![log.key.verifier()]).unwrap()
    }

    #[test]
    fn a_witness_follows_a_growing_log_and_cosigns() {
        let mut log = Log::new();
        let w = witness(&log);
        log.grow(10, "e");
        let (known, line) = w.add_checkpoint(&log.request(0), None, 1000).unwrap();
        assert_eq!(known.size, 10);
        let cosigned = log.checkpoint().with_signature_lines(&line).unwrap();
        let pins = LogPins::new(log.key.verifier(), vec![w.verifier()], 1).unwrap();
        assert_eq!(cosigned.verify(&pins).unwrap().cosignatures[0].time, 1000);
        log.grow(300, "e");
        let (known, _) = w
            .add_checkpoint(&log.request(10), Some(&known), 1001)
            .unwrap();
        assert_eq!(known.size, 310);
        // The same checkpoint again is cosigned again.
        w.add_checkpoint(&log.request(310), Some(&known), 1002)
            .unwrap();
    }

    #[test]
    fn a_witness_refuses_what_the_spec_says_it_refuses() {
        let mut log = Log::new();
        let w = witness(&log);
        log.grow(10, "e");
        let (known, _) = w.add_checkpoint(&log.request(0), None, 1).unwrap();
        log.grow(5, "e");
        // The wrong old size: 409 with the witness's size.
        let r = w
            .add_checkpoint(&log.request(0), Some(&known), 2)
            .unwrap_err();
        assert_eq!(
            r,
            Refusal::Conflict {
                size: 10,
                why: r.message()
            }
        );
        assert_eq!(r.status(), 409);
        // A rewritten history: the same sizes, another entry 3.
        let mut forked = Log::new();
        forked.grow(3, "e");
        forked.grow(1, "forged");
        forked.grow(11, "e");
        let r = w
            .add_checkpoint(&forked.request(10), Some(&known), 3)
            .unwrap_err();
        assert_eq!(r.status(), 422, "{r:?}");
        // A fork at the same size: 422 (tlog-witness since July 2026; 409 before).
        let mut same = Log::new();
        same.grow(9, "e");
        same.grow(1, "forged");
        let r = w
            .add_checkpoint(&same.request(10), Some(&known), 3)
            .unwrap_err();
        assert_eq!(r.status(), 422, "{r:?}");
        assert!(r.message().contains("forked"), "{r:?}");
        // The same checkpoint with a proof between equal sizes: 422.
        let mut req = log.request(15);
        req.proof.push(leaf_hash(b"x"));
        let (grown, _) = w.add_checkpoint(&log.request(10), Some(&known), 3).unwrap();
        assert_eq!(
            w.add_checkpoint(&req, Some(&grown), 3)
                .unwrap_err()
                .status(),
            422
        );
        // Another log; a checkpoint not signed by the log's key.
        let other_key =
            SigningKey::generate("other.example", KeyRole::Log, &mut SeededEntropy::new(b"o"))
                .unwrap();
        let other =
            SignedCheckpoint::sign("other.example", 1, leaf_hash(b"x"), &other_key).unwrap();
        let req = AddCheckpoint::parse(&AddCheckpoint::encode(0, &[], &other)).unwrap();
        assert_eq!(w.add_checkpoint(&req, None, 4).unwrap_err().status(), 404);
        let impostor =
            SigningKey::generate("log.example", KeyRole::Log, &mut SeededEntropy::new(b"i"))
                .unwrap();
        let fake = SignedCheckpoint::sign("log.example", 15, leaf_hash(b"x"), &impostor).unwrap();
        let req = AddCheckpoint::parse(&AddCheckpoint::encode(10, &[], &fake)).unwrap();
        assert_eq!(
            w.add_checkpoint(&req, Some(&known), 4)
                .unwrap_err()
                .status(),
            403
        );
        // An old size beyond the checkpoint.
        let req = AddCheckpoint::parse(&AddCheckpoint::encode(20, &[], &log.checkpoint())).unwrap();
        assert_eq!(
            w.add_checkpoint(&req, Some(&known), 4)
                .unwrap_err()
                .status(),
            400
        );
    }

    #[test]
    fn size_zero_is_the_empty_tree_and_needs_no_proof() {
        let mut log = Log::new();
        let w = witness(&log);
        // The empty tree's checkpoint is cosigned, and anything grows from it without a proof.
        let (empty, _) = w.add_checkpoint(&log.request(0), None, 1).unwrap();
        assert_eq!((empty.size, empty.root), (0, EMPTY_HASH));
        log.grow(5, "e");
        let (five, _) = w.add_checkpoint(&log.request(0), Some(&empty), 2).unwrap();
        assert_eq!(five.size, 5);
        // A checkpoint of size 0 with another root: 422, whatever the witness knows.
        let bad_empty =
            SignedCheckpoint::sign("log.example", 0, leaf_hash(b"x"), &log.key).unwrap();
        let req = AddCheckpoint::parse(&AddCheckpoint::encode(0, &[], &bad_empty)).unwrap();
        let r = w.add_checkpoint(&req, None, 3).unwrap_err();
        assert_eq!(r.status(), 422, "{r:?}");
        assert!(r.message().contains("empty tree"), "{r:?}");
        assert_eq!(
            w.add_checkpoint(&req, Some(&empty), 3)
                .unwrap_err()
                .status(),
            422
        );
        // A non-empty proof from size 0: 422 (the checkpoint itself is fine without it).
        let mut req = log.request(0);
        req.proof.push(leaf_hash(b"e 0"));
        for known in [None, Some(&empty)] {
            let r = w.add_checkpoint(&req, known, 4).unwrap_err();
            assert_eq!(r.status(), 422, "{r:?}");
            assert!(r.message().contains("from size 0"), "{r:?}");
        }
        req.proof.clear();
        w.add_checkpoint(&req, None, 4).unwrap();
    }

    #[test]
    fn requests_round_trip_and_malformed_ones_are_refused() {
        let mut log = Log::new();
        log.grow(1000, "e");
        let req = log.request(300);
        let body = AddCheckpoint::encode(300, &req.proof, &req.checkpoint);
        let again = AddCheckpoint::parse(&body).unwrap();
        assert_eq!(again.old_size, 300);
        assert_eq!(again.proof, req.proof);
        let text = String::from_utf8(body).unwrap();
        for bad in [
            String::new(),
            "old 1\n".into(),
            text.replacen("old 300", "old 0300", 1),
            text.replacen("old 300", "old -1", 1),
            text.replacen("old 300", "new 300", 1),
            text.replacen("\n\n", "\nAAAA\n\n", 1),
            format!(
                "old 1\n{}\n",
                "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n".repeat(64)
            ),
        ] {
            assert!(AddCheckpoint::parse(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn state_files_must_be_signed_by_the_log() {
        let mut log = Log::new();
        log.grow(4, "e");
        let v = log
            .checkpoint()
            .verify(&LogPins::log_only(log.key.verifier()).unwrap())
            .unwrap();
        let known = KnownCheckpoint::of(&v);
        let json = known.to_json();
        assert_eq!(
            KnownCheckpoint::from_json(json.as_bytes(), &log.key.verifier()).unwrap(),
            known
        );
        let other =
            SigningKey::generate("log.example", KeyRole::Log, &mut SeededEntropy::new(b"x"))
                .unwrap();
        assert!(KnownCheckpoint::from_json(json.as_bytes(), &other.verifier()).is_err());
        assert!(KnownCheckpoint::from_json(b"{}", &log.key.verifier()).is_err());
        let dir =
            std::env::temp_dir().join(format!("hourglass-witness-state-{}", std::process::id()));
        let state = StateDir::open(&dir).unwrap();
        assert!(state.load(&log.key.verifier()).unwrap().is_none());
        state.store(&known).unwrap();
        assert_eq!(state.load(&log.key.verifier()).unwrap(), Some(known));
        let _ = std::fs::remove_dir_all(dir);
    }
}

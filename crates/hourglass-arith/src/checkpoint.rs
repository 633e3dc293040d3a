//! Checkpoint files for long squaring runs: atomic, authenticated, bound to their run.
//!
//! A checkpoint lets a run resume after a crash or Ctrl-C. Because a resumed run skips the
//! work the checkpoint claims, a checkpoint is trusted only if its author was this user: every
//! file carries an HMAC-SHA-256 under a per-user secret ([`CheckpointKey`], kept in the user's
//! state directory with mode 0600). A checkpoint that fails the MAC (planted, edited, copied from
//! another user, written by an older hourglass) is never trusted: [`CheckpointFile::load`] moves
//! it aside to `FILE.untrusted`, says so through the caller's notice, and the run starts over.
//!
//! Layout (all integers big-endian):
//!
//! ```text
//! magic    8 bytes  "HGCKPT02"
//! ctx_len  u32      length of the binding context
//! context  ctx_len  caller-chosen bytes naming the run (puzzle fingerprint, input, ...)
//! block    u64      block size B of the run
//! total    u64      total squarings of the run
//! done     u64      squarings done (a verified state)
//! x_len    u32, x   x0^(2^done) mod n, unsigned big-endian
//! d_len    u32, d   the error-check product at `done`
//! aux_len  u32, aux caller data authenticated with the state (e.g. a digest of side files)
//! mac      32 bytes HMAC-SHA-256(checkpoint key, everything above)
//! ```
//!
//! Files are written to a temporary file in the same directory, flushed with `fsync`, then
//! renamed over the old checkpoint (and the directory is synced), so a crash, `kill -9` or power
//! loss leaves either the old or the new checkpoint, never a torn one.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use hmac::{Hmac, Mac};
use rug::integer::Order;
use rug::Integer;
use sha2::Sha256;
use zeroize::Zeroizing;

use crate::atomic::{write_atomic, Existing};
use crate::squaring::{SquaringRun, SquaringState};
use crate::{Error, Result};

const MAGIC: &[u8; 8] = b"HGCKPT02";
/// The unauthenticated format of hourglass 0.1 (SHA-256 only): never trusted.
const OLD_MAGIC: &[u8; 8] = b"HGCKPT01";
/// Largest checkpoint accepted (two 16384-bit values and a context fit easily).
const MAX_CHECKPOINT: u64 = 1 << 20;
/// Largest caller data bound to a checkpoint.
const MAX_AUX: usize = 1024;
/// Name of the key file in the state directory.
const KEY_FILE: &str = "checkpoint.key";

/// A checkpoint: a verified state and what run it belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    /// Names the run; a checkpoint is only resumed by a run with the same context.
    pub context: Vec<u8>,
    /// Block size of the run.
    pub block: u64,
    /// Total squarings of the run.
    pub total: u64,
    /// The verified state.
    pub state: SquaringState,
    /// Caller data authenticated with the state (at most 1 KiB; empty for most runs).
    pub aux: Vec<u8>,
}

/// The per-user secret that authenticates checkpoints (32 bytes, wiped on drop).
#[derive(Clone)]
pub struct CheckpointKey(Arc<Zeroizing<[u8; 32]>>);

impl std::fmt::Debug for CheckpointKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CheckpointKey(...)")
    }
}

impl CheckpointKey {
    /// A key from raw bytes (tests, or a key kept elsewhere).
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(Arc::new(Zeroizing::new(bytes)))
    }

    /// A fresh random key for checkpoints that need not outlive this process.
    pub fn ephemeral() -> Result<Self> {
        let mut k = Zeroizing::new([0u8; 32]);
        getrandom::getrandom(k.as_mut()).map_err(Error::OsRandom)?;
        Ok(Self(Arc::new(k)))
    }

    /// The user's state directory: `$HOURGLASS_STATE_DIR`, else `$XDG_STATE_HOME/hourglass`,
    /// else `$HOME/.local/state/hourglass`.
    pub fn state_dir() -> Result<PathBuf> {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty());
        if let Some(dir) = var("HOURGLASS_STATE_DIR") {
            return Ok(PathBuf::from(dir));
        }
        if let Some(dir) = var("XDG_STATE_HOME") {
            return Ok(PathBuf::from(dir).join("hourglass"));
        }
        if let Some(home) = var("HOME") {
            return Ok(PathBuf::from(home).join(".local/state/hourglass"));
        }
        Err(Error::NoStateDir)
    }

    /// This user's key, from [`Self::state_dir`]/`checkpoint.key`, created on first use.
    pub fn for_user() -> Result<Self> {
        Self::load_or_create(&Self::state_dir()?.join(KEY_FILE))
    }

    /// The key in `path` (32 bytes, mode 0600), created with a fresh random value (and its
    /// directory with mode 0700) if missing. A key file that others may read or write is
    /// refused: whoever can read it can forge checkpoints this user would trust.
    pub fn load_or_create(path: &Path) -> Result<Self> {
        let io = |at: &Path| {
            let path = at.to_path_buf();
            move |source| Error::Io { path, source }
        };
        match std::fs::read(path) {
            Ok(bytes) => return Self::from_file_bytes(path, &bytes),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(io(path)(e)),
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            let mut builder = std::fs::DirBuilder::new();
            builder.recursive(true);
            #[cfg(unix)]
            std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
            builder.create(dir).map_err(io(dir))?;
        }
        // Written whole to a temporary file, then linked into place, which fails if another
        // process got there first: nobody ever reads a half-written key.
        let key = Self::ephemeral()?;
        let linked = match write_atomic(path, &key.0[..], 0o600, Existing::Refuse) {
            Ok(()) => Ok(Some(key)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(None),
            Err(e) => Err(io(path)(e)),
        };
        match linked? {
            Some(key) => Ok(key),
            // Another process created it first: use theirs.
            None => {
                let bytes = std::fs::read(path).map_err(io(path))?;
                Self::from_file_bytes(path, &bytes)
            }
        }
    }

    fn from_file_bytes(path: &Path, bytes: &[u8]) -> Result<Self> {
        let bytes = Zeroizing::new(bytes.to_vec());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path)
                .map_err(|source| Error::Io {
                    path: path.to_path_buf(),
                    source,
                })?
                .permissions()
                .mode();
            if mode & 0o077 != 0 {
                return Err(Error::KeyExposed {
                    path: path.to_path_buf(),
                    mode: mode & 0o777,
                });
            }
        }
        let raw: [u8; 32] = bytes.as_slice().try_into().map_err(|_| Error::NotAKey {
            path: path.to_path_buf(),
        })?;
        Ok(Self::from_bytes(raw))
    }

    fn mac(&self, data: &[u8]) -> [u8; 32] {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0[..])
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(data);
        mac.finalize().into_bytes().into()
    }

    fn verify(&self, data: &[u8], tag: &[u8]) -> bool {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.0[..])
            .unwrap_or_else(|_| unreachable!("HMAC takes keys of any length"));
        mac.update(data);
        // Constant-time comparison.
        mac.verify_slice(tag).is_ok()
    }
}

/// Why a checkpoint file was not trusted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Untrusted {
    /// Written by hourglass 0.1, whose checkpoints carried no authentication.
    #[error("it is in the unauthenticated format of an older hourglass")]
    OldFormat,
    /// The MAC does not match: planted, edited, or made by another user or key.
    #[error("its authentication code does not match this user's key (planted, edited, or written by someone else)")]
    BadMac,
    /// Not a checkpoint, or truncated.
    #[error("it is not a well-formed checkpoint ({0})")]
    Malformed(String),
}

fn put_int(out: &mut Vec<u8>, x: &Integer) {
    put_bytes(out, &x.to_digits::<u8>(Order::Msf));
}

fn put_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(bytes);
}

impl Checkpoint {
    /// Serialises to the file layout, authenticated under `key`.
    pub fn to_bytes(&self, key: &CheckpointKey) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        put_bytes(&mut out, &self.context);
        out.extend_from_slice(&self.block.to_be_bytes());
        out.extend_from_slice(&self.total.to_be_bytes());
        out.extend_from_slice(&self.state.done.to_be_bytes());
        put_int(&mut out, &self.state.x);
        put_int(&mut out, &self.state.check);
        put_bytes(&mut out, &self.aux);
        let tag = key.mac(&out);
        out.extend_from_slice(&tag);
        out
    }

    /// Parses and authenticates a checkpoint written under `key`.
    pub fn from_bytes(bytes: &[u8], key: &CheckpointKey) -> std::result::Result<Self, Untrusted> {
        if bytes.len() >= 8 && &bytes[..8] == OLD_MAGIC {
            return Err(Untrusted::OldFormat);
        }
        if bytes.len() < MAGIC.len() + 32 || &bytes[..8] != MAGIC {
            return Err(Untrusted::Malformed("not an hourglass checkpoint".into()));
        }
        let (body, tag) = bytes.split_at(bytes.len() - 32);
        if !key.verify(body, tag) {
            return Err(Untrusted::BadMac);
        }
        let mut r = Reader { data: &body[8..] };
        let parsed = (|| {
            let ctx_len = r.u32()? as usize;
            let context = r.take(ctx_len)?.to_vec();
            let block = r.u64()?;
            let total = r.u64()?;
            let done = r.u64()?;
            let x = r.int()?;
            let check = r.int()?;
            let aux_len = r.u32()? as usize;
            if aux_len > MAX_AUX {
                return None;
            }
            let aux = r.take(aux_len)?.to_vec();
            r.data.is_empty().then_some(Self {
                context,
                block,
                total,
                state: SquaringState { done, x, check },
                aux,
            })
        })();
        // Authentic but unparsable: only a bug of ours could write it.
        parsed.ok_or_else(|| Untrusted::Malformed("authentic but inconsistent fields".into()))
    }

    /// Checks that this checkpoint (read from `path`) belongs to the run named by `context`,
    /// `block` and `total`.
    pub fn check_belongs(&self, path: &Path, context: &[u8], block: u64, total: u64) -> Result<()> {
        if self.context != context {
            return Err(Error::ForeignCheckpoint {
                path: path.to_path_buf(),
            });
        }
        if self.block != block || self.total != total {
            return Err(Error::CheckpointShape {
                path: path.to_path_buf(),
                total: self.total,
                block: self.block,
                want_total: total,
                want_block: block,
            });
        }
        Ok(())
    }
}

/// Receives what the user should hear about checkpoints (an untrusted file set aside).
pub type Notice = Arc<dyn Fn(&str) + Send + Sync>;

/// Where a run keeps its checkpoint, and the key that authenticates it.
#[derive(Clone)]
pub struct CheckpointFile {
    path: PathBuf,
    key: CheckpointKey,
    notice: Notice,
}

impl std::fmt::Debug for CheckpointFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CheckpointFile")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl CheckpointFile {
    /// A checkpoint at `path` under `key`; notices go to standard error until
    /// [`Self::with_notice`] says otherwise.
    pub fn new(path: impl Into<PathBuf>, key: CheckpointKey) -> Self {
        Self {
            path: path.into(),
            key,
            notice: Arc::new(|msg: &str| eprintln!("warning: {msg}")),
        }
    }

    /// Sends notices (an untrusted checkpoint set aside) to `notice`.
    pub fn with_notice(mut self, notice: impl Fn(&str) + Send + Sync + 'static) -> Self {
        self.notice = Arc::new(notice);
        self
    }

    /// The checkpoint's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where an untrusted checkpoint is moved: `FILE.untrusted`.
    pub fn untrusted_path(&self) -> PathBuf {
        let mut s = self.path.as_os_str().to_owned();
        s.push(".untrusted");
        PathBuf::from(s)
    }

    /// Reads the checkpoint: `Ok(None)` if there is none, or if the file is not authentic, in
    /// which case it is moved to [`Self::untrusted_path`] (nothing is deleted) and the notice
    /// names it. Only a file this user's key authenticates is ever returned.
    pub fn load(&self) -> Result<Option<Checkpoint>> {
        let path = &self.path;
        let io = |source: std::io::Error| Error::Io {
            path: path.clone(),
            source,
        };
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
            Ok(m) if m.is_dir() => return Err(Error::CheckpointIsDirectory { path: path.clone() }),
            Ok(m) if m.len() > MAX_CHECKPOINT => {
                return self.set_aside(Untrusted::Malformed("too large".into()));
            }
            Ok(_) => {}
        }
        let bytes = std::fs::read(path).map_err(io)?;
        match Checkpoint::from_bytes(&bytes, &self.key) {
            Ok(c) => Ok(Some(c)),
            Err(why) => self.set_aside(why),
        }
    }

    /// Moves an untrusted file out of the way and tells the user.
    fn set_aside(&self, why: Untrusted) -> Result<Option<Checkpoint>> {
        self.reject(&why.to_string())?;
        Ok(None)
    }

    /// Moves the checkpoint to [`Self::untrusted_path`] because of `why`, telling the user; the
    /// run then starts over. For callers that find a checkpoint unusable for their own reasons
    /// (e.g. side files that no longer match it).
    pub fn reject(&self, why: &str) -> Result<()> {
        let aside = self.untrusted_path();
        std::fs::rename(&self.path, &aside).map_err(|source| Error::CannotSetAside {
            path: self.path.clone(),
            why: why.to_string(),
            source,
        })?;
        (self.notice)(&format!(
            "ignoring checkpoint {}: {why}; moved it to {} and starting over",
            self.path.display(),
            aside.display()
        ));
        Ok(())
    }

    /// Writes `checkpoint` atomically, authenticated (mode 0600).
    pub fn save(&self, checkpoint: &Checkpoint) -> Result<()> {
        write_atomic(
            &self.path,
            &checkpoint.to_bytes(&self.key),
            0o600,
            Existing::Replace,
        )
        .map_err(|source| Error::Io {
            path: self.path.clone(),
            source,
        })
    }

    /// Deletes the checkpoint (after the run's result is safely stored).
    pub fn remove(&self) {
        let _ = std::fs::remove_file(&self.path);
    }

    /// The state `run` should start from: the initial state, or the authentic checkpoint of
    /// this very run (named by `context`). An authentic checkpoint of another run is an error
    /// (it is this user's other work: it is neither used nor overwritten).
    pub fn resume(&self, run: &SquaringRun<'_>, context: &[u8]) -> Result<SquaringState> {
        Ok(self
            .resume_with_aux(run, context)?
            .map_or_else(|| run.initial_state(), |c| c.state))
    }

    /// Like [`Self::resume`], returning the whole checkpoint (with its `aux`) when there is one.
    pub fn resume_with_aux(
        &self,
        run: &SquaringRun<'_>,
        context: &[u8],
    ) -> Result<Option<Checkpoint>> {
        let Some(ckpt) = self.load()? else {
            return Ok(None);
        };
        ckpt.check_belongs(&self.path, context, run.block(), run.total())?;
        run.validate_state(&ckpt.state)?;
        Ok(Some(ckpt))
    }

    /// Saves `state` of `run` (named by `context`) with no caller data.
    pub fn save_state(
        &self,
        run: &SquaringRun<'_>,
        context: &[u8],
        state: &SquaringState,
    ) -> Result<()> {
        self.save(&Checkpoint {
            context: context.to_vec(),
            block: run.block(),
            total: run.total(),
            state: state.clone(),
            aux: Vec::new(),
        })
    }
}

struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.data.len() < n {
            return None;
        }
        let (a, b) = self.data.split_at(n);
        self.data = b;
        Some(a)
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }
    /// A length-prefixed integer in its minimal encoding (no leading zero byte), so every
    /// checkpoint has exactly one encoding.
    fn int(&mut self) -> Option<Integer> {
        let len = self.u32()? as usize;
        let bytes = self.take(len)?;
        if bytes.first() == Some(&0) {
            return None;
        }
        Some(Integer::from_digits(bytes, Order::Msf))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sha2::Digest;

    fn key() -> CheckpointKey {
        CheckpointKey::from_bytes([7u8; 32])
    }

    fn sample() -> Checkpoint {
        Checkpoint {
            context: b"puzzle-fp|doc-digest".to_vec(),
            block: 1024,
            total: 1_000_000,
            state: SquaringState {
                done: 4096,
                x: Integer::from(123456789u64) << 300,
                check: Integer::from(42),
            },
            aux: b"side".to_vec(),
        }
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hg-ckpt-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn round_trip_and_every_single_bit_flip_is_detected() {
        let c = sample();
        let bytes = c.to_bytes(&key());
        assert_eq!(Checkpoint::from_bytes(&bytes, &key()).unwrap(), c);
        for i in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[i / 8] ^= 1 << (i % 8);
            assert!(
                Checkpoint::from_bytes(&b, &key()).is_err(),
                "flip {i} undetected"
            );
        }
        for len in 0..bytes.len() {
            assert!(Checkpoint::from_bytes(&bytes[..len], &key()).is_err());
        }
    }

    /// The planted-checkpoint attack: a well-formed file whose integrity hash is right but
    /// which was not written with this user's key (another key, or the old unkeyed format).
    #[test]
    fn a_checkpoint_made_without_our_key_is_refused() {
        let forged = sample().to_bytes(&CheckpointKey::from_bytes([8u8; 32]));
        assert_eq!(
            Checkpoint::from_bytes(&forged, &key()),
            Err(Untrusted::BadMac)
        );
        // The 0.1 format: body then SHA-256 of it, which anyone can compute.
        let mut old = forged[..forged.len() - 32].to_vec();
        old[..8].copy_from_slice(OLD_MAGIC);
        let digest = Sha256::digest(&old);
        old.extend_from_slice(&digest);
        assert_eq!(
            Checkpoint::from_bytes(&old, &key()),
            Err(Untrusted::OldFormat)
        );
    }

    /// Found by the `checkpoint` fuzz target: an authentic file whose `x` had a leading zero
    /// byte parsed, and re-encoded differently. Encodings are now canonical.
    #[test]
    fn non_minimal_integers_are_refused() {
        let mut body = MAGIC.to_vec();
        put_bytes(&mut body, b"");
        for v in [16384u64, 1 << 20, 16384] {
            body.extend_from_slice(&v.to_be_bytes());
        }
        put_bytes(&mut body, &[0, 5]); // x = 5 with a leading zero byte
        put_bytes(&mut body, &[7]);
        put_bytes(&mut body, b"");
        let tag = key().mac(&body);
        body.extend_from_slice(&tag);
        assert!(matches!(
            Checkpoint::from_bytes(&body, &key()),
            Err(Untrusted::Malformed(_))
        ));
    }

    #[test]
    fn belongs_only_to_its_run() {
        let c = sample();
        assert!(c
            .check_belongs(
                Path::new("c.ckpt"),
                b"puzzle-fp|doc-digest",
                1024,
                1_000_000
            )
            .is_ok());
        assert!(c
            .check_belongs(Path::new("c.ckpt"), b"other", 1024, 1_000_000)
            .is_err());
        assert!(c
            .check_belongs(Path::new("c.ckpt"), b"puzzle-fp|doc-digest", 512, 1_000_000)
            .is_err());
    }

    #[test]
    fn save_and_load_atomically() {
        let dir = temp_dir("atomic");
        let file = CheckpointFile::new(dir.join("run.ckpt"), key());
        assert_eq!(file.load().unwrap(), None);
        file.save(&sample()).unwrap();
        assert_eq!(file.load().unwrap(), Some(sample()));
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn an_untrusted_file_is_set_aside_with_a_notice_and_never_returned() {
        let dir = temp_dir("aside");
        let path = dir.join("run.ckpt");
        let planted = sample().to_bytes(&CheckpointKey::from_bytes([9u8; 32]));
        std::fs::write(&path, &planted).unwrap();
        let heard = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
        let sink = heard.clone();
        let file = CheckpointFile::new(&path, key())
            .with_notice(move |m| sink.lock().unwrap().push(m.to_string()));
        assert_eq!(file.load().unwrap(), None);
        assert!(!path.exists());
        // Nothing is destroyed: the file is kept beside, byte for byte.
        assert_eq!(std::fs::read(file.untrusted_path()).unwrap(), planted);
        let heard = heard.lock().unwrap();
        assert_eq!(heard.len(), 1);
        assert!(heard[0].contains("run.ckpt") && heard[0].contains("authentication"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Many processes creating the key at once all end up with the same, complete key (found
    /// by the CLI tests: a reader saw a key file still being written).
    #[test]
    fn concurrent_creation_yields_one_complete_key() {
        let dir = temp_dir("race");
        let path = dir.join("state/checkpoint.key");
        let macs: Vec<[u8; 32]> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..16)
                .map(|_| s.spawn(|| CheckpointKey::load_or_create(&path).unwrap().mac(b"x")))
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(macs.iter().all(|m| *m == macs[0]));
        let leftovers = std::fs::read_dir(dir.join("state")).unwrap().count();
        assert_eq!(leftovers, 1, "temporary files left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_user_key_is_created_once_with_mode_0600_and_shared() {
        let dir = temp_dir("key");
        let path = dir.join("state/checkpoint.key");
        let a = CheckpointKey::load_or_create(&path).unwrap();
        let b = CheckpointKey::load_or_create(&path).unwrap();
        assert_eq!(a.mac(b"x"), b.mac(b"x"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
            let err = CheckpointKey::load_or_create(&path).unwrap_err();
            assert!(err.to_string().contains("chmod 600"), "{err}");
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        std::fs::write(&path, b"short").unwrap();
        assert!(CheckpointKey::load_or_create(&path).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

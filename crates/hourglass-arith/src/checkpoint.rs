//! Checkpoint files for long squaring runs: atomic, integrity-protected, bound to their run.
//!
//! Layout (all integers big-endian):
//!
//! ```text
//! magic    8 bytes  "HGCKPT01"
//! ctx_len  u32      length of the binding context
//! context  ctx_len  caller-chosen bytes naming the run (puzzle fingerprint, input digest, ...)
//! block    u64      block size B of the run
//! total    u64      total squarings of the run
//! done     u64      squarings done (a verified state)
//! x_len    u32, x   x0^(2^done) mod n, unsigned big-endian
//! d_len    u32, d   the error-check product at `done`
//! sha256   32 bytes SHA-256 of everything above
//! ```
//!
//! Files are written to a temporary file in the same directory, flushed with `fsync`, then
//! renamed over the old checkpoint (and the directory is synced), so a crash, `kill -9` or power
//! loss leaves either the old or the new checkpoint, never a torn one.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use rug::integer::Order;
use rug::Integer;
use sha2::{Digest, Sha256};

use crate::squaring::SquaringState;
use crate::{Error, Result};

const MAGIC: &[u8; 8] = b"HGCKPT01";
/// Largest checkpoint accepted (two 16384-bit values and a context fit easily).
const MAX_CHECKPOINT: u64 = 1 << 20;

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
}

fn put_int(out: &mut Vec<u8>, x: &Integer) {
    let bytes = x.to_digits::<u8>(Order::Msf);
    out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
    out.extend_from_slice(&bytes);
}

impl Checkpoint {
    /// Serialises to the file layout.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(self.context.len() as u32).to_be_bytes());
        out.extend_from_slice(&self.context);
        out.extend_from_slice(&self.block.to_be_bytes());
        out.extend_from_slice(&self.total.to_be_bytes());
        out.extend_from_slice(&self.state.done.to_be_bytes());
        put_int(&mut out, &self.state.x);
        put_int(&mut out, &self.state.check);
        let digest = Sha256::digest(&out);
        out.extend_from_slice(&digest);
        out
    }

    /// Parses and checks the integrity hash.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        let corrupt = |why: &str| Error::InvalidParameter(format!("corrupt checkpoint: {why}"));
        if bytes.len() < MAGIC.len() + 32 || &bytes[..8] != MAGIC {
            return Err(corrupt("not an hourglass checkpoint"));
        }
        let (body, digest) = bytes.split_at(bytes.len() - 32);
        if Sha256::digest(body).as_slice() != digest {
            return Err(corrupt(
                "integrity hash mismatch (truncated or modified file)",
            ));
        }
        let mut r = Reader { data: &body[8..] };
        let ctx_len = r.u32()? as usize;
        let context = r.take(ctx_len)?.to_vec();
        let block = r.u64()?;
        let total = r.u64()?;
        let done = r.u64()?;
        let x = r.int()?;
        let check = r.int()?;
        if !r.data.is_empty() {
            return Err(corrupt("trailing bytes"));
        }
        Ok(Self {
            context,
            block,
            total,
            state: SquaringState { done, x, check },
        })
    }

    /// Writes atomically to `path`.
    pub fn save(&self, path: &Path) -> Result<()> {
        write_atomic(path, &self.to_bytes(), 0o600)
    }

    /// Reads `path`; `Ok(None)` if it does not exist.
    pub fn load(path: &Path) -> Result<Option<Self>> {
        let io = |e: std::io::Error| {
            Error::InvalidParameter(format!("reading checkpoint {}: {e}", path.display()))
        };
        match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io(e)),
            Ok(m) if m.len() > MAX_CHECKPOINT => {
                return Err(Error::InvalidParameter(format!(
                    "{} is too large to be a checkpoint",
                    path.display()
                )))
            }
            Ok(_) => {}
        }
        let bytes = std::fs::read(path).map_err(io)?;
        Self::from_bytes(&bytes).map(Some)
    }

    /// Checks that this checkpoint belongs to the run named by `context`, `block` and `total`.
    pub fn check_belongs(&self, context: &[u8], block: u64, total: u64) -> Result<()> {
        if self.context != context {
            return Err(Error::InvalidParameter(
                "the checkpoint belongs to another puzzle or input".into(),
            ));
        }
        if self.block != block || self.total != total {
            return Err(Error::InvalidParameter(format!(
                "the checkpoint is for a run of {} squarings in blocks of {}, not {} in blocks of {}",
                self.total, self.block, total, block
            )));
        }
        Ok(())
    }
}

struct Reader<'a> {
    data: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if self.data.len() < n {
            return Err(Error::InvalidParameter(
                "corrupt checkpoint: truncated".into(),
            ));
        }
        let (a, b) = self.data.split_at(n);
        self.data = b;
        Ok(a)
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_be_bytes(
            self.take(4)?.try_into().unwrap_or([0; 4]),
        ))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_be_bytes(
            self.take(8)?.try_into().unwrap_or([0; 8]),
        ))
    }
    fn int(&mut self) -> Result<Integer> {
        let len = self.u32()? as usize;
        Ok(Integer::from_digits(self.take(len)?, Order::Msf))
    }
}

/// Writes `data` to `path` atomically: temporary file in the same directory, `fsync`,
/// permissions `mode` (Unix), rename, directory `fsync`.
pub fn write_atomic(path: &Path, data: &[u8], mode: u32) -> Result<()> {
    let io =
        |e: std::io::Error| Error::InvalidParameter(format!("writing {}: {e}", path.display()));
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // An unpredictable name (opened exclusively below), so a stale file from a crash or a
    // planted one never blocks or redirects the write.
    static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let mut salt = [0u8; 8];
    getrandom::getrandom(&mut salt).map_err(|e| Error::Entropy(e.to_string()))?;
    let tmp = dir.join(format!(
        ".{name}.{}.{}{}.tmp",
        std::process::id(),
        hex_lower(&salt),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = {
            let mut opts = std::fs::OpenOptions::new();
            // create_new (O_EXCL): never open a file or follow a symlink someone planted
            // at this predictable name; that would write the data wherever it points.
            opts.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                opts.mode(mode);
            }
            opts.open(&tmp)?
        };
        f.write_all(data)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            f.set_permissions(std::fs::Permissions::from_mode(mode))?;
        }
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(io)
}

fn hex_lower(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

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
        }
    }

    #[test]
    fn round_trip_and_every_single_bit_flip_is_detected() {
        let c = sample();
        let bytes = c.to_bytes();
        assert_eq!(Checkpoint::from_bytes(&bytes).unwrap(), c);
        for i in 0..bytes.len() * 8 {
            let mut b = bytes.clone();
            b[i / 8] ^= 1 << (i % 8);
            assert!(Checkpoint::from_bytes(&b).is_err(), "flip {i} undetected");
        }
        for len in 0..bytes.len() {
            assert!(Checkpoint::from_bytes(&bytes[..len]).is_err());
        }
    }

    #[test]
    fn belongs_only_to_its_run() {
        let c = sample();
        assert!(c
            .check_belongs(b"puzzle-fp|doc-digest", 1024, 1_000_000)
            .is_ok());
        assert!(c.check_belongs(b"other", 1024, 1_000_000).is_err());
        assert!(c
            .check_belongs(b"puzzle-fp|doc-digest", 512, 1_000_000)
            .is_err());
    }

    #[test]
    fn save_and_load_atomically() {
        let dir = std::env::temp_dir().join(format!("hg-ckpt-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("run.ckpt");
        assert_eq!(Checkpoint::load(&path).unwrap(), None);
        sample().save(&path).unwrap();
        assert_eq!(Checkpoint::load(&path).unwrap(), Some(sample()));
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

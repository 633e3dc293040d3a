//! Entropy sources.
//!
//! Every random value hourglass uses comes through an [`EntropySource`]. Three exist:
//!
//! - [`OsEntropy`]: the operating system's CSPRNG (`getrandom`). The default everywhere.
//! - [`FileEntropy`]: raw bytes read from a file or device (for example a hardware RNG at
//!   `/dev/hwrng`). It uses nothing else: when the file runs out, the request fails with
//!   [`Error::EntropyExhausted`]; it never falls back to another source.
//! - [`SeededEntropy`]: a deterministic generator from a seed. **Insecure**, for tests and
//!   reproducible benchmarks only.

use std::fs::File;
use std::io::{ErrorKind, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rug::integer::Order;
use rug::Integer;
use sha2::{Digest, Sha256};
use zeroize::Zeroize;

use crate::{Error, Result};

/// A source of random bytes.
pub trait EntropySource: Send {
    /// Fills `buf` entirely with random bytes, or fails.
    fn fill(&mut self, buf: &mut [u8]) -> Result<()>;

    /// A second source for use on another thread.
    ///
    /// Seeded sources derive an independent deterministic stream; file sources share the
    /// file (so every byte still comes from it); the OS source returns another OS source.
    fn split(&mut self) -> Result<Box<dyn EntropySource>>;

    /// A short human-readable description ("OS CSPRNG", "file /dev/hwrng", ...).
    fn describe(&self) -> String;
}

impl<T: EntropySource + ?Sized> EntropySource for Box<T> {
    fn fill(&mut self, buf: &mut [u8]) -> Result<()> {
        (**self).fill(buf)
    }
    fn split(&mut self) -> Result<Box<dyn EntropySource>> {
        (**self).split()
    }
    fn describe(&self) -> String {
        (**self).describe()
    }
}

/// The operating system's cryptographically secure generator.
#[derive(Debug, Default, Clone, Copy)]
pub struct OsEntropy;

impl EntropySource for OsEntropy {
    fn fill(&mut self, buf: &mut [u8]) -> Result<()> {
        getrandom::getrandom(buf).map_err(Error::OsRandom)
    }
    fn split(&mut self) -> Result<Box<dyn EntropySource>> {
        Ok(Box::new(OsEntropy))
    }
    fn describe(&self) -> String {
        "OS CSPRNG".into()
    }
}

#[derive(Debug)]
struct SharedFile {
    file: File,
    consumed: u64,
}

/// Raw random bytes read from a file or device, and nothing else.
#[derive(Debug, Clone)]
pub struct FileEntropy {
    path: PathBuf,
    shared: Arc<Mutex<SharedFile>>,
}

impl FileEntropy {
    /// Opens `path` (a regular file, a FIFO or a character device such as `/dev/hwrng`).
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|source| Error::EntropyIo {
            path: path.to_owned(),
            source,
        })?;
        Ok(Self {
            path: path.to_owned(),
            shared: Arc::new(Mutex::new(SharedFile { file, consumed: 0 })),
        })
    }

    /// Bytes consumed so far (across every split of this source).
    pub fn consumed(&self) -> u64 {
        self.shared.lock().map(|s| s.consumed).unwrap_or(0)
    }
}

impl EntropySource for FileEntropy {
    fn fill(&mut self, buf: &mut [u8]) -> Result<()> {
        let mut shared = self.shared.lock().map_err(|_| Error::EntropyPoisoned)?;
        let mut filled = 0;
        while filled < buf.len() {
            match shared.file.read(&mut buf[filled..]) {
                Ok(0) => {
                    let consumed = shared.consumed + filled as u64;
                    buf.zeroize();
                    return Err(Error::EntropyExhausted {
                        source_name: self.path.display().to_string(),
                        consumed,
                        needed: buf.len() - filled,
                    });
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(Error::EntropyIo {
                        path: self.path.clone(),
                        source,
                    })
                }
            }
        }
        shared.consumed += filled as u64;
        Ok(())
    }
    fn split(&mut self) -> Result<Box<dyn EntropySource>> {
        Ok(Box::new(self.clone()))
    }
    fn describe(&self) -> String {
        format!("file {}", self.path.display())
    }
}

/// A deterministic generator: SHA-256 in counter mode over a seed.
///
/// **Insecure.** It exists so that tests and benchmarks can be reproduced. Never use it
/// for keys that protect anything.
#[derive(Clone)]
pub struct SeededEntropy {
    key: [u8; 32],
    counter: u64,
    splits: u64,
    pool: [u8; 32],
    pool_left: usize,
}

impl std::fmt::Debug for SeededEntropy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SeededEntropy { .. }")
    }
}

impl SeededEntropy {
    /// A generator whose whole output is determined by `seed`.
    pub fn new(seed: &[u8]) -> Self {
        let key: [u8; 32] = Sha256::new()
            .chain_update(b"hourglass insecure seeded entropy v1")
            .chain_update(seed)
            .finalize()
            .into();
        Self {
            key,
            counter: 0,
            splits: 0,
            pool: [0; 32],
            pool_left: 0,
        }
    }

    fn block(&mut self) -> [u8; 32] {
        let out = Sha256::new()
            .chain_update(self.key)
            .chain_update(self.counter.to_be_bytes())
            .finalize()
            .into();
        self.counter += 1;
        out
    }
}

impl Drop for SeededEntropy {
    fn drop(&mut self) {
        self.key.zeroize();
        self.pool.zeroize();
    }
}

impl EntropySource for SeededEntropy {
    fn fill(&mut self, buf: &mut [u8]) -> Result<()> {
        for byte in buf.iter_mut() {
            if self.pool_left == 0 {
                self.pool = self.block();
                self.pool_left = 32;
            }
            *byte = self.pool[32 - self.pool_left];
            self.pool_left -= 1;
        }
        Ok(())
    }
    fn split(&mut self) -> Result<Box<dyn EntropySource>> {
        self.splits += 1;
        let mut seed = Vec::with_capacity(48);
        seed.extend_from_slice(&self.key);
        seed.extend_from_slice(b"split");
        seed.extend_from_slice(&self.splits.to_be_bytes());
        Ok(Box::new(SeededEntropy::new(&seed)))
    }
    fn describe(&self) -> String {
        "seeded (INSECURE, deterministic)".into()
    }
}

/// A uniformly random integer of at most `bits` bits.
pub fn random_bits(rng: &mut dyn EntropySource, bits: u32) -> Result<Integer> {
    let nbytes = bits.div_ceil(8) as usize;
    let mut buf = vec![0u8; nbytes];
    rng.fill(&mut buf)?;
    let excess = (nbytes * 8) as u32 - bits;
    if excess > 0 {
        buf[0] &= 0xffu8 >> excess;
    }
    let x = Integer::from_digits(&buf, Order::Msf);
    buf.zeroize();
    Ok(x)
}

/// A uniformly random integer in `[0, bound)`, by rejection sampling.
pub fn random_below(rng: &mut dyn EntropySource, bound: &Integer) -> Result<Integer> {
    if *bound <= 0 {
        return Err(Error::InvalidArgument(
            "random_below needs a positive bound",
        ));
    }
    let bits = bound.significant_bits();
    loop {
        let x = random_bits(rng, bits)?;
        if x < *bound {
            return Ok(x);
        }
    }
}

/// A uniformly random integer in `[low, high)`.
pub fn random_range(rng: &mut dyn EntropySource, low: &Integer, high: &Integer) -> Result<Integer> {
    if high <= low {
        return Err(Error::InvalidArgument("random_range needs low < high"));
    }
    let width = Integer::from(high - low);
    Ok(random_below(rng, &width)? + low)
}

/// A random `bits`-bit integer whose top bit is set (so it has exactly `bits` bits).
pub fn random_exact_bits(rng: &mut dyn EntropySource, bits: u32) -> Result<Integer> {
    if bits == 0 {
        return Err(Error::InvalidArgument("bit length must be positive"));
    }
    let mut x = random_bits(rng, bits)?;
    x.set_bit(bits - 1, true);
    Ok(x)
}

/// A random 64-bit value.
pub fn random_u64(rng: &mut dyn EntropySource) -> Result<u64> {
    let mut b = [0u8; 8];
    rng.fill(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

/// `--entropy PATH` and `--seed TEXT`, the entropy options of every command-line surface
/// (the `clap` feature).
#[cfg(feature = "clap")]
#[derive(clap::Args, Debug, Clone, Default)]
pub struct EntropyArgs {
    /// Read random bytes from this file or device (e.g. /dev/hwrng) and nothing else; running
    /// out is an error. Default: the operating system's CSPRNG.
    #[arg(long, value_name = "PATH", conflicts_with = "seed")]
    pub entropy: Option<std::path::PathBuf>,
    /// INSECURE: derive every random value from this text (reproducible tests and benchmarks
    /// only).
    #[arg(long, value_name = "TEXT")]
    pub seed: Option<String>,
}

#[cfg(feature = "clap")]
impl EntropyArgs {
    /// The selected source, with a warning on standard error for `--seed`.
    pub fn source(&self) -> Result<Box<dyn EntropySource>> {
        if let Some(seed) = &self.seed {
            eprintln!(
                "hourglass: warning: --seed makes every random value predictable: INSECURE, for tests and benchmarks only"
            );
            return Ok(Box::new(SeededEntropy::new(seed.as_bytes())));
        }
        if let Some(path) = &self.entropy {
            return Ok(Box::new(FileEntropy::open(path)?));
        }
        Ok(Box::new(OsEntropy))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn seeded_is_deterministic_and_seed_sensitive() {
        let mut a = SeededEntropy::new(b"x");
        let mut b = SeededEntropy::new(b"x");
        let mut c = SeededEntropy::new(b"y");
        let (mut ba, mut bb, mut bc) = ([0u8; 100], [0u8; 100], [0u8; 100]);
        a.fill(&mut ba).unwrap();
        b.fill(&mut bb).unwrap();
        c.fill(&mut bc).unwrap();
        assert_eq!(ba, bb);
        assert_ne!(ba, bc);
    }

    #[test]
    fn seeded_split_streams_differ_and_are_reproducible() {
        let mut a = SeededEntropy::new(b"s");
        let mut b = SeededEntropy::new(b"s");
        let mut sa = a.split().unwrap();
        let mut sb = b.split().unwrap();
        let (mut x, mut y, mut z) = ([0u8; 32], [0u8; 32], [0u8; 32]);
        sa.fill(&mut x).unwrap();
        sb.fill(&mut y).unwrap();
        a.fill(&mut z).unwrap();
        assert_eq!(x, y);
        assert_ne!(x, z);
    }

    #[test]
    fn file_entropy_uses_exactly_the_file_and_reports_exhaustion() {
        let mut f = tempfile_path();
        f.1.write_all(&[7u8; 40]).unwrap();
        f.1.flush().unwrap();
        let mut src = FileEntropy::open(&f.0).unwrap();
        let mut buf = [0u8; 32];
        src.fill(&mut buf).unwrap();
        assert_eq!(buf, [7u8; 32]);
        let mut more = [0u8; 16];
        match src.fill(&mut more) {
            Err(Error::EntropyExhausted {
                consumed, needed, ..
            }) => {
                assert_eq!(consumed, 40);
                assert_eq!(needed, 8);
            }
            other => panic!("expected exhaustion, got {other:?}"),
        }
        std::fs::remove_file(&f.0).unwrap();
    }

    fn tempfile_path() -> (PathBuf, File) {
        let path = std::env::temp_dir().join(format!(
            "hourglass-entropy-test-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        let file = File::create(&path).unwrap();
        (path, file)
    }

    #[test]
    fn random_below_stays_below() {
        let mut rng = SeededEntropy::new(b"below");
        let bound = Integer::from(1000);
        for _ in 0..500 {
            let x = random_below(&mut rng, &bound).unwrap();
            assert!(x >= 0 && x < bound);
        }
    }

    #[test]
    fn random_exact_bits_has_top_bit() {
        let mut rng = SeededEntropy::new(b"bits");
        for bits in [1u32, 7, 8, 9, 63, 64, 65, 1000] {
            assert_eq!(
                random_exact_bits(&mut rng, bits)
                    .unwrap()
                    .significant_bits(),
                bits
            );
        }
    }
}

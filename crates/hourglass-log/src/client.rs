//! Reading a tiled log and believing nothing it did not prove: its checkpoint must verify under
//! the pinned keys, every tile read must hash to that checkpoint's root (`tlog_tiles`'s
//! authenticated tile reader), every entry must hash to its leaf, and the checkpoint must be
//! consistent with the one the client verified last time.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::checkpoint::{LogPins, SignedCheckpoint, VerifiedCheckpoint, MAX_CHECKPOINT_BYTES};
use crate::error::{LogError, Result};
use crate::tiles::{bundles_for, decode_bundle, TileId};
use crate::tree::{leaf_hash, stored_index, verify_consistency, Hash, HashReader};
use crate::witness::KnownCheckpoint;

/// Where a log's resources come from: `fetch("checkpoint")`, `fetch("tile/0/000")`, ...
pub trait TileSource {
    /// The bytes at `path` under the log's prefix, at most `limit` of them (more is an error);
    /// `Ok(None)` when the log says it has no such resource (HTTP 404).
    fn fetch(&self, path: &str, limit: usize) -> Result<Option<Vec<u8>>>;

    /// The resource's full name, for messages (a URL).
    fn name(&self, path: &str) -> String;
}

/// What [`verify_log`] established.
#[derive(Debug, Clone)]
pub struct Verified {
    /// The log's checkpoint, verified under the pins.
    pub checkpoint: VerifiedCheckpoint,
    /// The checkpoint verified before (from the state), which this one is consistent with.
    pub previous: Option<KnownCheckpoint>,
    /// The entries read (from the previous size, or from 0, to the checkpoint's size).
    pub entries_read: u64,
}

/// Fetches and verifies the log's current checkpoint.
pub fn fetch_checkpoint(source: &dyn TileSource, pins: &LogPins) -> Result<VerifiedCheckpoint> {
    let bytes = source
        .fetch("checkpoint", MAX_CHECKPOINT_BYTES)?
        .ok_or_else(|| LogError::Missing {
            url: source.name("checkpoint"),
        })?;
    SignedCheckpoint::parse(&bytes)?.verify(pins)
}

/// Verifies the log behind `source` under `pins`: its checkpoint, the consistency of that
/// checkpoint with `previous` (what the last verification saw), and the entries from
/// `previous`'s size (or from entry `from`, when given and smaller; or 0) to the checkpoint's
/// size, each of which is given to `each` with its index once it is proven to be in the tree.
pub fn verify_log(
    source: &dyn TileSource,
    pins: &LogPins,
    previous: Option<&KnownCheckpoint>,
    from: Option<u64>,
    each: &mut dyn FnMut(u64, &[u8]) -> Result<()>,
) -> Result<Verified> {
    let checkpoint = fetch_checkpoint(source, pins)?;
    if let Some(p) = previous {
        if p.origin != checkpoint.origin {
            return Err(LogError::Settings(format!(
                "the saved state is of the log '{}', not '{}'",
                p.origin, checkpoint.origin
            )));
        }
    }
    if checkpoint.size == 0 && checkpoint.root != crate::tree::EMPTY_HASH {
        return Err(LogError::TilesMismatch { size: 0 });
    }
    let tiles = AuthenticatedTiles::new(source, &checkpoint);
    if let Some(p) = previous {
        tiles.check_consistency(p)?;
    }
    let start = previous
        .map_or(0, |p| p.size)
        .min(from.unwrap_or(u64::MAX))
        .min(checkpoint.size);
    // Whatever is read, the tiles at the tree's right edge must hash to the checkpoint: a log
    // that rewrote its stored history is caught even when no entry is new.
    if start == checkpoint.size && checkpoint.size > 0 {
        tiles.leaves(checkpoint.size - 1, checkpoint.size)?;
    }
    let leaves = tiles.leaves(start, checkpoint.size)?;
    for bundle in bundles_for(start, checkpoint.size, checkpoint.size) {
        let bytes = source
            .fetch(&bundle.path(), bundle.max_bytes())?
            .ok_or_else(|| LogError::Missing {
                url: source.name(&bundle.path()),
            })?;
        let entries = decode_bundle(&bytes, bundle.width)?;
        for (i, entry) in entries.into_iter().enumerate() {
            let index = bundle.first() + i as u64;
            if index < start {
                continue;
            }
            if leaf_hash(entry) != leaves[(index - start) as usize] {
                return Err(LogError::EntryMismatch { index });
            }
            each(index, entry)?;
        }
    }
    Ok(Verified {
        entries_read: checkpoint.size - start,
        previous: previous.cloned(),
        checkpoint,
    })
}

/// The hash tiles of one verified checkpoint, read through `tlog_tiles`'s authenticating
/// reader: any hash returned has been proven to be in the checkpoint's tree.
struct AuthenticatedTiles<'a> {
    source: &'a dyn TileSource,
    checkpoint: &'a VerifiedCheckpoint,
    /// Tiles already authenticated.
    cache: RefCell<HashMap<TileId, Vec<u8>>>,
    /// The first error of a fetch (the reader's own error type cannot carry it).
    failure: RefCell<Option<LogError>>,
}

impl<'a> AuthenticatedTiles<'a> {
    fn new(source: &'a dyn TileSource, checkpoint: &'a VerifiedCheckpoint) -> Self {
        Self {
            source,
            checkpoint,
            cache: RefCell::default(),
            failure: RefCell::default(),
        }
    }

    fn reader(&self) -> tlog_tiles::TileHashReader<'_> {
        tlog_tiles::TileHashReader::new(self.checkpoint.size, self.checkpoint.root, self)
    }

    fn error(&self, e: tlog_tiles::Error) -> LogError {
        if let Some(f) = self.failure.borrow_mut().take() {
            return f;
        }
        match e {
            tlog_tiles::Error::InconsistentTile | tlog_tiles::Error::InvalidTile => {
                LogError::TilesMismatch {
                    size: self.checkpoint.size,
                }
            }
            other => LogError::Tree(other.to_string()),
        }
    }

    /// Hashes by stored index, authenticated.
    fn read(&self, indexes: &[u64]) -> Result<Vec<Hash>> {
        if indexes.is_empty() {
            return Ok(Vec::new());
        }
        self.reader()
            .read_hashes(indexes)
            .map_err(|e| self.error(e))
    }

    /// The leaf hashes `from..to`, authenticated.
    fn leaves(&self, from: u64, to: u64) -> Result<Vec<Hash>> {
        let indexes: Vec<u64> = (from..to).map(|i| stored_index(0, i)).collect();
        self.read(&indexes)
    }

    /// Checks that `previous` is a prefix of this checkpoint's tree.
    fn check_consistency(&self, previous: &KnownCheckpoint) -> Result<()> {
        let new_size = self.checkpoint.size;
        if previous.size > new_size {
            return Err(LogError::Shrank {
                old_size: previous.size,
                new_size,
            });
        }
        let inconsistent = || LogError::Inconsistent {
            old_size: previous.size,
            old_root: previous.root,
            new_size,
            new_root: self.checkpoint.root,
        };
        if previous.size == new_size {
            return if previous.root == self.checkpoint.root {
                Ok(())
            } else {
                Err(inconsistent())
            };
        }
        if previous.size == 0 {
            return Ok(());
        }
        // The proof is built from authenticated hashes of the new tree; it verifies only if the
        // old tree is its prefix.
        let proof = crate::tree::prove_consistency(&Reader(self), previous.size, new_size)
            .map_err(|e| self.failure.borrow_mut().take().unwrap_or(e))?;
        verify_consistency(
            previous.size,
            &previous.root,
            new_size,
            &self.checkpoint.root,
            &proof,
        )
    }
}

/// The authenticated tiles as a hash reader.
struct Reader<'r, 'a>(&'r AuthenticatedTiles<'a>);

impl HashReader for Reader<'_, '_> {
    fn read_hashes(&self, indexes: &[u64]) -> std::result::Result<Vec<Hash>, tlog_tiles::Error> {
        self.0.reader().read_hashes(indexes).map_err(|e| {
            let mapped = self.0.error(e);
            *self.0.failure.borrow_mut() = Some(mapped);
            tlog_tiles::Error::InvalidInput("see the failure".into())
        })
    }
}

impl tlog_tiles::TileReader for AuthenticatedTiles<'_> {
    fn height(&self) -> u8 {
        crate::tiles::TILE_HEIGHT
    }

    fn read_tiles(
        &self,
        tiles: &[tlog_tiles::Tile],
    ) -> std::result::Result<Vec<Vec<u8>>, tlog_tiles::Error> {
        let mut out = Vec::with_capacity(tiles.len());
        for t in tiles {
            let id = TileId::from_tlog(t);
            if let Some(data) = self.cache.borrow().get(&id) {
                out.push(data.clone());
                continue;
            }
            let path = id.path();
            let fetched = match self.source.fetch(&path, id.hash_bytes()) {
                Ok(Some(bytes)) if bytes.len() == id.hash_bytes() => bytes,
                Ok(Some(bytes)) => {
                    *self.failure.borrow_mut() = Some(LogError::malformed(
                        "tile",
                        format!(
                            "{} has {} bytes, not {}",
                            self.source.name(&path),
                            bytes.len(),
                            id.hash_bytes()
                        ),
                    ));
                    return Err(tlog_tiles::Error::BadMath);
                }
                Ok(None) => {
                    *self.failure.borrow_mut() = Some(LogError::Missing {
                        url: self.source.name(&path),
                    });
                    return Err(tlog_tiles::Error::BadMath);
                }
                Err(e) => {
                    *self.failure.borrow_mut() = Some(e);
                    return Err(tlog_tiles::Error::BadMath);
                }
            };
            out.push(fetched);
        }
        Ok(out)
    }

    fn save_tiles(&self, tiles: &[tlog_tiles::Tile], data: &[Vec<u8>]) {
        let mut cache = self.cache.borrow_mut();
        for (t, d) in tiles.iter().zip(data) {
            cache
                .entry(TileId::from_tlog(t))
                .or_insert_with(|| d.clone());
        }
    }
}

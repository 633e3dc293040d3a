//! Reading a tiled log and believing nothing it did not prove.
//!
//! The checkpoint must verify under the pinned keys. Then the tree is recomputed: the hashes of
//! the complete subtrees the previously verified tree ends with (its *frontier*, at most one
//! per bit of its size) are read from the log's tiles and must hash to the root verified last
//! time; the entries from there on are read from the entry bundles, hashed, and appended to
//! that frontier; the result must be the new checkpoint's root. So every entry read is proven
//! to be in the checkpoint's tree, and the new tree is proven, by construction, to extend the
//! old one (no consistency proof needed, and none that a log could forge). The entries of a
//! partial bundle that were verified before (the bundle grew since) are downloaded again with
//! it and are each checked against their leaf in the previously verified tree: an entry
//! rewritten in place is named ([`LogError::EntryRewritten`]), not skipped. So every entry of
//! every bundle read is checked against a verified root.
//!
//! This deliberately does not rely on `tlog_tiles`'s authenticating tile reader: when the
//! tiles that make the root collapse into fewer tiles than subtrees, it skips the check of some
//! leaf tiles against their parents, and a log could pass a forged entry with a matching forged
//! leaf hash (`tests/client.rs` mounts that attack).

use std::cell::RefCell;
use std::collections::HashMap;

use crate::checkpoint::{LogPins, SignedCheckpoint, VerifiedCheckpoint, MAX_CHECKPOINT_BYTES};
use crate::error::{LogError, Result};
use crate::tiles::{bundles_for, decode_bundle, TileId, TILE_HEIGHT};
use crate::tree::{append, frontier, leaf_hash, root, stored_index, HashMemo, HashReader};
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
    /// The checkpoint verified before (from the state), which this one extends.
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

/// Verifies the log behind `source` under `pins`: its checkpoint, that its tree extends
/// `previous` (what the last verification saw; `None`: read the whole log), and every entry
/// from `previous`'s size to the checkpoint's. Each entry is given to `each` with its index as
/// it is read; it is proven to be in the log only if this returns `Ok` (so report nothing
/// before).
pub fn verify_log(
    source: &dyn TileSource,
    pins: &LogPins,
    previous: Option<&KnownCheckpoint>,
    each: &mut dyn FnMut(u64, &[u8]) -> Result<()>,
) -> Result<Verified> {
    let checkpoint = fetch_checkpoint(source, pins)?;
    let size = checkpoint.size;
    if let Some(p) = previous {
        if p.origin != checkpoint.origin {
            return Err(LogError::Settings(format!(
                "the saved state is of the log '{}', not '{}'",
                p.origin, checkpoint.origin
            )));
        }
        if p.size > size {
            return Err(LogError::Shrank {
                old_size: p.size,
                new_size: size,
            });
        }
    }
    let start = previous.map_or(0, |p| p.size);
    let tiles = TileCache::new(source, size);
    let mut memo = HashMemo::new();
    for (level, n) in frontier(start) {
        memo.insert(level, n, tiles.stored_hash(level, n)?);
    }
    if let Some(p) = previous {
        if root(&memo, start)? != p.root {
            return Err(if p.size == size && p.root == checkpoint.root {
                // The same checkpoint as before, and tiles that no longer make it.
                LogError::TilesMismatch { size }
            } else {
                LogError::Inconsistent {
                    old_size: p.size,
                    old_root: p.root,
                    new_size: size,
                    new_root: checkpoint.root,
                }
            });
        }
    }
    let mut grown = start;
    for bundle in bundles_for(start, size, size) {
        let bytes = source
            .fetch(&bundle.path(), bundle.max_bytes())?
            .ok_or_else(|| LogError::Missing {
                url: source.name(&bundle.path()),
            })?;
        let mut leaves = Vec::with_capacity(bundle.width as usize);
        for (i, entry) in decode_bundle(&bytes, bundle.width)?.into_iter().enumerate() {
            let index = bundle.first() + i as u64;
            if index < start {
                // An entry verified before, served again in the partial bundle it sat in: it
                // must still be the leaf the verified tree holds (read from the tile that made
                // the frontier, so proven by the previous root).
                if leaf_hash(entry) != tiles.stored_hash(0, index)? {
                    return Err(LogError::EntryRewritten { index, size: start });
                }
                continue;
            }
            leaves.push(leaf_hash(entry));
            each(index, entry)?;
        }
        append(&mut memo, grown, &leaves)?;
        grown += leaves.len() as u64;
        memo = keep_frontier(&memo, grown)?;
    }
    if root(&memo, size)? != checkpoint.root {
        return Err(match previous {
            Some(p) if p.size > 0 => LogError::Inconsistent {
                old_size: p.size,
                old_root: p.root,
                new_size: size,
                new_root: checkpoint.root,
            },
            _ => LogError::EntriesMismatch { size },
        });
    }
    Ok(Verified {
        entries_read: size - start,
        previous: previous.cloned(),
        checkpoint,
    })
}

/// Only the hashes that extending the tree of `size` leaves needs (its frontier): memory stays
/// logarithmic in the log's size.
fn keep_frontier(memo: &HashMemo, size: u64) -> Result<HashMemo> {
    let mut kept = HashMemo::new();
    for (level, n) in frontier(size) {
        let h = memo
            .read_hashes(&[stored_index(level, n)])
            .map_err(|e| LogError::Tree(e.to_string()))?[0];
        kept.insert(level, n, h);
    }
    Ok(kept)
}

/// The hash tiles of a tree, fetched once each; nothing read here is believed until the root
/// computed from it matches a verified one.
struct TileCache<'a> {
    source: &'a dyn TileSource,
    size: u64,
    fetched: RefCell<HashMap<TileId, Vec<u8>>>,
}

impl<'a> TileCache<'a> {
    fn new(source: &'a dyn TileSource, size: u64) -> Self {
        Self {
            source,
            size,
            fetched: RefCell::default(),
        }
    }

    /// The stored hash at `level`, index `n`, from the tile holding it (as wide as the tree
    /// makes that tile).
    fn stored_hash(&self, level: u8, n: u64) -> Result<crate::tree::Hash> {
        let index = stored_index(level, n);
        let tile = tlog_tiles::Tile::from_index(TILE_HEIGHT, index)
            .parent(0, self.size)
            .ok_or_else(|| LogError::Tree(format!("no tile holds hash ({level}, {n})")))?;
        let id = TileId::from_tlog(&tile);
        if !self.fetched.borrow().contains_key(&id) {
            let path = id.path();
            let bytes =
                self.source
                    .fetch(&path, id.hash_bytes())?
                    .ok_or_else(|| LogError::Missing {
                        url: self.source.name(&path),
                    })?;
            if bytes.len() != id.hash_bytes() {
                return Err(LogError::malformed(
                    "tile",
                    format!(
                        "{} has {} bytes, not {}",
                        self.source.name(&path),
                        bytes.len(),
                        id.hash_bytes()
                    ),
                ));
            }
            self.fetched.borrow_mut().insert(id, bytes);
        }
        let fetched = self.fetched.borrow();
        tile.hash_at_index(&fetched[&id], index)
            .map_err(|e| LogError::Tree(e.to_string()))
    }
}

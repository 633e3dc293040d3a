//! A log held in memory and laid out exactly as a tiled log serves it: every tile, entry
//! bundle and the signed checkpoint, by path. For tests, fuzzing and tools that write a static
//! log (the files can be served as they are).

use std::collections::BTreeMap;

use crate::checkpoint::SignedCheckpoint;
use crate::client::TileSource;
use crate::error::{LogError, Result};
use crate::keys::SigningKey;
use crate::tiles::{encode_bundle, tiles_of_tree, TileKind};
use crate::tree::{append, leaf_hash, root, stored_index, Hash, HashMemo, HashReader};

/// The resources of a log of some entries, by path under its prefix.
#[derive(Debug, Clone)]
pub struct MemoryLog {
    files: BTreeMap<String, Vec<u8>>,
    root: Hash,
}

impl MemoryLog {
    /// The log of `entries`, its checkpoint signed by `key` (named after the log's origin).
    pub fn new(entries: &[Vec<u8>], key: &SigningKey) -> Result<Self> {
        let mut memo = HashMemo::new();
        let leaves: Vec<_> = entries.iter().map(|e| leaf_hash(e)).collect();
        append(&mut memo, 0, &leaves)?;
        let size = entries.len() as u64;
        let mut files = BTreeMap::new();
        for t in tiles_of_tree(size) {
            let bytes = match t.kind {
                TileKind::Entries => {
                    let first = t.first() as usize;
                    encode_bundle(
                        entries[first..first + t.width as usize]
                            .iter()
                            .map(Vec::as_slice),
                    )?
                }
                TileKind::Hashes(_) => {
                    let idx: Vec<u64> = (0..u64::from(t.width))
                        .map(|i| stored_index(t.tree_level(), t.first() + i))
                        .collect();
                    memo.read_hashes(&idx)
                        .map_err(|e| LogError::Tree(e.to_string()))?
                        .iter()
                        .flat_map(|h| h.0)
                        .collect()
                }
            };
            files.insert(t.path(), bytes);
        }
        let root = root(&memo, size)?;
        let cp = SignedCheckpoint::sign(key.name(), size, root, key)?;
        files.insert("checkpoint".into(), cp.to_bytes());
        Ok(Self { files, root })
    }

    /// The tree's root.
    pub fn root(&self) -> Hash {
        self.root
    }

    /// Every resource, by path.
    pub fn files(&self) -> &BTreeMap<String, Vec<u8>> {
        &self.files
    }

    /// Every resource, to change (a test's lying log).
    pub fn files_mut(&mut self) -> &mut BTreeMap<String, Vec<u8>> {
        &mut self.files
    }
}

impl TileSource for MemoryLog {
    fn fetch(&self, path: &str, limit: usize) -> Result<Option<Vec<u8>>> {
        match self.files.get(path) {
            Some(b) if b.len() > limit => Err(LogError::TooLarge {
                what: "a resource the log served",
                limit,
            }),
            other => Ok(other.cloned()),
        }
    }

    fn name(&self, path: &str) -> String {
        format!("memory:/{path}")
    }
}

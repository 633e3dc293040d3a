//! The Merkle tree of a log (RFC 6962 hashing, SHA-256): leaf hashes, inclusion and consistency
//! proofs, and the stored hashes a log keeps (Crosby-Wallach order, as Go's tlog and the
//! `tlog_tiles` crate number them).
//!
//! A log stores, for every record `n`, the record's leaf hash and the hash of each complete
//! subtree the record closes: about two hashes per record. A stored hash is named by its level
//! (0 for leaves, 1 for pairs, ...) and its index `n` within the level, and numbered densely by
//! [`stored_index`]. Proofs and roots are computed by `tlog_tiles` from the stored hashes a
//! [`HashReader`] returns; [`needed`] tells which ones a computation reads, so that a database
//! can fetch exactly those first.

use std::collections::HashMap;

pub use tlog_tiles::{Hash, HashReader, EMPTY_HASH};

use crate::error::{LogError, Result};

/// The largest tree a verifier accepts: 2^40 entries (a trillion receipts; far beyond any
/// institution, and small enough that every index fits the arithmetic of proofs and tiles).
pub const MAX_TREE_SIZE: u64 = 1 << 40;
/// The most hashes an inclusion or consistency proof of a tree of [`MAX_TREE_SIZE`] holds.
pub const MAX_PROOF_HASHES: usize = 2 * 40;

/// The leaf hash of an entry: `SHA-256(0x00 || entry)`.
pub fn leaf_hash(entry: &[u8]) -> Hash {
    tlog_tiles::record_hash(entry)
}

/// The dense number of the stored hash at `level`, index `n`.
pub fn stored_index(level: u8, n: u64) -> u64 {
    tlog_tiles::stored_hash_index(level, n)
}

/// The level and index of stored hash number `index`.
pub fn split_index(index: u64) -> (u8, u64) {
    tlog_tiles::split_stored_hash_index(index)
}

fn tree_error(e: tlog_tiles::Error) -> LogError {
    LogError::Tree(e.to_string())
}

fn check_size(size: u64) -> Result<()> {
    if size > MAX_TREE_SIZE {
        return Err(LogError::malformed(
            "tree size",
            format!("{size} is larger than the largest log accepted (2^40 entries)"),
        ));
    }
    Ok(())
}

/// A proof that an entry is the `index`-th leaf of the tree of `size` leaves (RFC 6962 section
/// 2.1.1, an audit path).
#[derive(Debug, Clone, PartialEq)]
pub struct InclusionProof {
    /// The entry's index.
    pub index: u64,
    /// The size of the tree the proof leads to.
    pub size: u64,
    /// The audit path, from the leaf up.
    pub path: Vec<Hash>,
}

impl InclusionProof {
    /// Checks that `entry` is leaf `index` of the tree of `size` leaves whose root is `root`.
    pub fn verify(&self, entry: &[u8], root: &Hash) -> Result<()> {
        self.verify_leaf(leaf_hash(entry), root)
    }

    /// [`Self::verify`] from the entry's leaf hash.
    pub fn verify_leaf(&self, leaf: Hash, root: &Hash) -> Result<()> {
        check_size(self.size)?;
        if self.index >= self.size {
            return Err(LogError::malformed(
                "inclusion proof",
                format!(
                    "entry {} is outside a tree of {} entries",
                    self.index, self.size
                ),
            ));
        }
        if self.path.len() > MAX_PROOF_HASHES {
            return Err(LogError::malformed("inclusion proof", "too many hashes"));
        }
        tlog_tiles::check_record(&self.path, self.size, *root, self.index, leaf).map_err(|_| {
            LogError::NotIncluded {
                index: self.index,
                size: self.size,
            }
        })
    }
}

/// Checks that the tree of `old_size` leaves with root `old_root` is a prefix of the tree of
/// `new_size` leaves with root `new_root`, by the consistency proof `proof` (RFC 6962 section
/// 2.1.2). Equal sizes need equal roots and an empty proof; an empty old tree is a prefix of
/// every tree.
pub fn verify_consistency(
    old_size: u64,
    old_root: &Hash,
    new_size: u64,
    new_root: &Hash,
    proof: &[Hash],
) -> Result<()> {
    check_size(new_size)?;
    let inconsistent = || LogError::Inconsistent {
        old_size,
        old_root: *old_root,
        new_size,
        new_root: *new_root,
    };
    if old_size > new_size {
        return Err(LogError::Shrank { old_size, new_size });
    }
    if proof.len() > MAX_PROOF_HASHES {
        return Err(LogError::malformed("consistency proof", "too many hashes"));
    }
    // Equal sizes first: two trees of size 0 with different roots are not one tree (the
    // independent verifier of the command line's tests caught this order wrong).
    if old_size == new_size {
        return if proof.is_empty() && old_root == new_root {
            Ok(())
        } else {
            Err(inconsistent())
        };
    }
    if old_size == 0 {
        return if proof.is_empty() {
            Ok(())
        } else {
            Err(inconsistent())
        };
    }
    tlog_tiles::check_tree(&proof.to_vec(), new_size, *new_root, old_size, *old_root)
        .map_err(|_| inconsistent())
}

/// Stored hashes held in memory, by their dense number: what a log's computations read.
#[derive(Debug, Default, Clone)]
pub struct HashMemo(HashMap<u64, Hash>);

impl HashMemo {
    /// An empty memo.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the stored hash at `level`, index `n`.
    pub fn insert(&mut self, level: u8, n: u64, hash: Hash) {
        self.0.insert(stored_index(level, n), hash);
    }

    /// How many hashes it holds.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl HashReader for HashMemo {
    fn read_hashes(&self, indexes: &[u64]) -> std::result::Result<Vec<Hash>, tlog_tiles::Error> {
        indexes
            .iter()
            .map(|i| {
                self.0
                    .get(i)
                    .copied()
                    .ok_or(tlog_tiles::Error::IndexesNotInTree)
            })
            .collect()
    }
}

/// Records which stored hashes a computation reads (answering zeros). The proof and root
/// computations of `tlog_tiles` read a set of hashes that depends only on the sizes and
/// indexes involved, never on the hashes' values, so a first run with this reader names exactly
/// what the real run will read.
struct Recorder(std::cell::RefCell<Vec<u64>>);

impl HashReader for Recorder {
    fn read_hashes(&self, indexes: &[u64]) -> std::result::Result<Vec<Hash>, tlog_tiles::Error> {
        self.0.borrow_mut().extend_from_slice(indexes);
        Ok(vec![Hash::default(); indexes.len()])
    }
}

/// The stored hashes (level, index) that `compute` reads, sorted, without repeats.
pub fn needed(compute: impl FnOnce(&dyn HashReader)) -> Vec<(u8, u64)> {
    let recorder = Recorder(std::cell::RefCell::new(Vec::new()));
    compute(&recorder);
    let mut out: Vec<(u8, u64)> = recorder
        .0
        .into_inner()
        .into_iter()
        .map(split_index)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// Adapts `&dyn HashReader` to the generic readers of `tlog_tiles`.
struct Dyn<'a>(&'a dyn HashReader);

impl HashReader for Dyn<'_> {
    fn read_hashes(&self, indexes: &[u64]) -> std::result::Result<Vec<Hash>, tlog_tiles::Error> {
        self.0.read_hashes(indexes)
    }
}

/// The stored hashes that appending leaves to a tree of `size` leaves reads: the roots of the
/// complete subtrees the tree ends with (one for each bit set in `size`).
pub fn frontier(size: u64) -> Vec<(u8, u64)> {
    (0..64u8)
        .filter(|&level| size >> level & 1 == 1)
        .map(|level| (level, (size >> level) - 1))
        .collect()
}

/// Appends `leaves` to the tree of `size` leaves whose stored hashes `memo` holds (at least its
/// [`frontier`]): returns the new stored hashes, (level, index, hash), and adds them to `memo`.
pub fn append(memo: &mut HashMemo, size: u64, leaves: &[Hash]) -> Result<Vec<(u8, u64, Hash)>> {
    let end = size
        .checked_add(leaves.len() as u64)
        .filter(|&e| e <= MAX_TREE_SIZE)
        .ok_or_else(|| LogError::Tree("the log is full (2^40 entries)".into()))?;
    let mut out = Vec::with_capacity(leaves.len() * 2);
    for (n, leaf) in (size..end).zip(leaves) {
        let hashes =
            tlog_tiles::stored_hashes_for_record_hash(n, *leaf, &*memo).map_err(tree_error)?;
        let first = stored_index(0, n);
        for (k, h) in hashes.into_iter().enumerate() {
            let (level, i) = split_index(first + k as u64);
            memo.insert(level, i, h);
            out.push((level, i, h));
        }
    }
    Ok(out)
}

/// The root of the tree of `size` leaves.
pub fn root(reader: &dyn HashReader, size: u64) -> Result<Hash> {
    check_size(size)?;
    tlog_tiles::tree_hash(size, &Dyn(reader)).map_err(tree_error)
}

/// The stored hashes [`root`] reads for a tree of `size` leaves.
pub fn root_needs(size: u64) -> Vec<(u8, u64)> {
    needed(|r| {
        let _ = root(r, size);
    })
}

/// The inclusion proof of leaf `index` in the tree of `size` leaves.
pub fn prove_inclusion(reader: &dyn HashReader, size: u64, index: u64) -> Result<InclusionProof> {
    check_size(size)?;
    let path = tlog_tiles::prove_record(size, index, &Dyn(reader)).map_err(tree_error)?;
    Ok(InclusionProof { index, size, path })
}

/// The stored hashes [`prove_inclusion`] reads.
pub fn inclusion_needs(size: u64, index: u64) -> Vec<(u8, u64)> {
    needed(|r| {
        let _ = prove_inclusion(r, size, index);
    })
}

/// The consistency proof from the tree of `old_size` leaves to the tree of `new_size` (empty
/// when `old_size` is 0 or equal to `new_size`).
pub fn prove_consistency(
    reader: &dyn HashReader,
    old_size: u64,
    new_size: u64,
) -> Result<Vec<Hash>> {
    check_size(new_size)?;
    if old_size > new_size {
        return Err(LogError::Tree(format!(
            "no consistency proof from {old_size} down to {new_size}"
        )));
    }
    if old_size == 0 || old_size == new_size {
        return Ok(Vec::new());
    }
    tlog_tiles::prove_tree(new_size, old_size, &Dyn(reader)).map_err(tree_error)
}

/// The stored hashes [`prove_consistency`] reads.
pub fn consistency_needs(old_size: u64, new_size: u64) -> Vec<(u8, u64)> {
    needed(|r| {
        let _ = prove_consistency(r, old_size, new_size);
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The RFC 6962 root of `leaves`, computed directly from the definition.
    fn mth(leaves: &[Hash]) -> Hash {
        match leaves.len() {
            0 => EMPTY_HASH,
            1 => leaves[0],
            n => {
                // The largest power of two smaller than n.
                let k = 1usize << (usize::BITS - 1 - (n - 1).leading_zeros());
                tlog_tiles::node_hash(mth(&leaves[..k]), mth(&leaves[k..]))
            }
        }
    }

    fn tree(n: u64) -> (HashMemo, Vec<Hash>) {
        let leaves: Vec<Hash> = (0..n)
            .map(|i| leaf_hash(format!("entry {i}").as_bytes()))
            .collect();
        let mut memo = HashMemo::new();
        append(&mut memo, 0, &leaves).unwrap();
        (memo, leaves)
    }

    #[test]
    fn roots_match_the_definition_of_rfc_6962() {
        let (memo, leaves) = tree(70);
        for size in 0..=70u64 {
            assert_eq!(
                root(&memo, size).unwrap(),
                mth(&leaves[..size as usize]),
                "size {size}"
            );
        }
    }

    #[test]
    fn appending_in_batches_is_appending_one_by_one() {
        let (whole, _) = tree(300);
        let leaves: Vec<Hash> = (0..300)
            .map(|i| leaf_hash(format!("entry {i}").as_bytes()))
            .collect();
        let mut size = 0u64;
        let mut memo = HashMemo::new();
        for chunk in leaves.chunks(37) {
            // Only the frontier of the tree so far is needed to extend it.
            let mut frontier_only = HashMemo::new();
            for (level, n) in frontier(size) {
                let h = whole.read_hashes(&[stored_index(level, n)]).unwrap()[0];
                frontier_only.insert(level, n, h);
            }
            for (level, n, h) in append(&mut frontier_only, size, chunk).unwrap() {
                memo.insert(level, n, h);
            }
            size += chunk.len() as u64;
        }
        assert_eq!(root(&memo, 300).unwrap(), root(&whole, 300).unwrap());
    }

    #[test]
    fn proofs_verify_and_fail_when_anything_changes() {
        let (memo, leaves) = tree(100);
        for size in [1u64, 2, 3, 7, 8, 9, 64, 100] {
            let r = root(&memo, size).unwrap();
            for index in 0..size {
                let p = prove_inclusion(&memo, size, index).unwrap();
                p.verify_leaf(leaves[index as usize], &r).unwrap();
                let other = leaves[((index + 1) % 100) as usize];
                assert!(p.verify_leaf(other, &r).is_err());
            }
            for old in 0..=size {
                let proof = prove_consistency(&memo, old, size).unwrap();
                let old_root = root(&memo, old).unwrap();
                verify_consistency(old, &old_root, size, &r, &proof).unwrap();
                if old > 0 {
                    let forged = leaf_hash(b"forged");
                    assert!(matches!(
                        verify_consistency(old, &forged, size, &r, &proof),
                        Err(LogError::Inconsistent { .. })
                    ));
                }
            }
        }
        let r = root(&memo, 50).unwrap();
        assert!(matches!(
            verify_consistency(60, &r, 50, &r, &[]),
            Err(LogError::Shrank { .. })
        ));
    }

    #[test]
    fn the_recorded_needs_are_exactly_what_proofs_read() {
        let (whole, _) = tree(1000);
        for (size, index) in [
            (1000u64, 0u64),
            (1000, 999),
            (777, 300),
            (256, 255),
            (257, 256),
        ] {
            let mut partial = HashMemo::new();
            for (level, n) in inclusion_needs(size, index) {
                partial.insert(
                    level,
                    n,
                    whole.read_hashes(&[stored_index(level, n)]).unwrap()[0],
                );
            }
            assert_eq!(
                prove_inclusion(&partial, size, index).unwrap(),
                prove_inclusion(&whole, size, index).unwrap()
            );
        }
        for (old, new) in [(1u64, 1000u64), (300, 777), (256, 512), (999, 1000)] {
            let mut partial = HashMemo::new();
            for (level, n) in consistency_needs(old, new)
                .into_iter()
                .chain(root_needs(new))
            {
                partial.insert(
                    level,
                    n,
                    whole.read_hashes(&[stored_index(level, n)]).unwrap()[0],
                );
            }
            assert_eq!(
                prove_consistency(&partial, old, new).unwrap(),
                prove_consistency(&whole, old, new).unwrap()
            );
            assert_eq!(root(&partial, new).unwrap(), root(&whole, new).unwrap());
        }
    }

    #[test]
    fn a_missing_hash_is_an_error_not_a_panic() {
        let memo = HashMemo::new();
        assert!(root(&memo, 5).is_err());
        assert!(prove_inclusion(&memo, 5, 2).is_err());
        assert!(prove_inclusion(&memo, 5, 5).is_err());
        assert!(prove_consistency(&memo, 2, 5).is_err());
        assert!(root(&memo, MAX_TREE_SIZE + 1).is_err());
    }

    #[test]
    fn absurd_proofs_are_refused() {
        let r = leaf_hash(b"x");
        let p = InclusionProof {
            index: 5,
            size: 3,
            path: vec![],
        };
        assert!(p.verify(b"x", &r).is_err());
        let p = InclusionProof {
            index: 0,
            size: u64::MAX,
            path: vec![r; 64],
        };
        assert!(p.verify(b"x", &r).is_err());
        let p = InclusionProof {
            index: 0,
            size: 2,
            path: vec![r; 200],
        };
        assert!(p.verify(b"x", &r).is_err());
        assert!(verify_consistency(1, &r, 2, &r, &vec![r; 500]).is_err());
        assert!(verify_consistency(0, &r, 2, &r, &[r]).is_err());
        // Equal sizes, the empty tree's included: equal roots and no proof, nothing else.
        let other = leaf_hash(b"y");
        assert!(verify_consistency(0, &EMPTY_HASH, 0, &EMPTY_HASH, &[]).is_ok());
        assert!(verify_consistency(0, &EMPTY_HASH, 0, &other, &[]).is_err());
        assert!(verify_consistency(2, &r, 2, &r, &[]).is_ok());
        assert!(verify_consistency(2, &r, 2, &other, &[]).is_err());
        assert!(verify_consistency(2, &r, 2, &r, &[r]).is_err());
    }
}

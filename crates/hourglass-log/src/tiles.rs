//! C2SP tlog-tiles: the resources a log serves (`checkpoint`, `tile/<L>/<N>[.p/<W>]`,
//! `tile/entries/<N>[.p/<W>]`) and the entry bundle format.
//!
//! Tiles have height 8: a full tile holds 256 hashes (8,192 bytes). The tile `N` of level `L`
//! holds the hashes of the subtrees of `256^L` leaves number `256 N` to `256 N + W - 1`: leaf
//! hashes at level 0, and at level `L` the roots of full tiles of level `L - 1`, which are the
//! stored hashes of tree level `8 L`. An entry bundle holds the entries of the level-0 tile of
//! the same number, each as a big-endian `u16` length followed by its bytes.

use crate::error::{LogError, Result};
use crate::tree::{Hash, MAX_TREE_SIZE};

/// Hashes in a full tile.
pub const TILE_WIDTH: u32 = 256;
/// Tree levels a tile spans.
pub const TILE_HEIGHT: u8 = 8;
/// Bytes of a full hash tile.
pub const MAX_TILE_BYTES: usize = TILE_WIDTH as usize * 32;
/// The largest entry (its length is a `u16` in bundles).
pub const MAX_ENTRY_BYTES: usize = u16::MAX as usize;
/// The largest entry bundle: a full bundle of the largest entries.
pub const MAX_BUNDLE_BYTES: usize = TILE_WIDTH as usize * (2 + MAX_ENTRY_BYTES);

/// Which tiles: hashes of a level, or entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum TileKind {
    /// Hashes at tile level `L` (tree level `8 L`).
    Hashes(u8),
    /// Entry bundles (beside level 0).
    Entries,
}

/// One tile or entry bundle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TileId {
    /// Hashes of a level, or entries.
    pub kind: TileKind,
    /// The tile's number within its level.
    pub index: u64,
    /// How many hashes or entries it holds, 1 to 256 (256: a full tile).
    pub width: u32,
}

/// What a path under a log's prefix names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resource {
    /// `checkpoint`.
    Checkpoint,
    /// A tile or entry bundle.
    Tile(TileId),
}

impl TileId {
    /// A hash tile.
    pub fn hashes(level: u8, index: u64, width: u32) -> Self {
        Self {
            kind: TileKind::Hashes(level),
            index,
            width,
        }
    }

    /// An entry bundle.
    pub fn entries(index: u64, width: u32) -> Self {
        Self {
            kind: TileKind::Entries,
            index,
            width,
        }
    }

    /// Whether it is full (256 wide).
    pub fn is_full(&self) -> bool {
        self.width == TILE_WIDTH
    }

    /// The tree level of its hashes (0 for entries: they hash to level 0).
    pub fn tree_level(&self) -> u8 {
        match self.kind {
            TileKind::Hashes(l) => l * TILE_HEIGHT,
            TileKind::Entries => 0,
        }
    }

    /// The index (at [`Self::tree_level`]) of its first hash or entry.
    pub fn first(&self) -> u64 {
        self.index.saturating_mul(u64::from(TILE_WIDTH))
    }

    /// The path under the log's prefix: `tile/<L>/<N>[.p/<W>]` or `tile/entries/<N>[.p/<W>]`.
    pub fn path(&self) -> String {
        let level = match self.kind {
            TileKind::Hashes(l) => l.to_string(),
            TileKind::Entries => "entries".into(),
        };
        let mut n = self.index;
        let mut number = format!("{:03}", n % 1000);
        while n >= 1000 {
            n /= 1000;
            number = format!("x{:03}/{number}", n % 1000);
        }
        let partial = if self.is_full() {
            String::new()
        } else {
            format!(".p/{}", self.width)
        };
        format!("tile/{level}/{number}{partial}")
    }

    /// Bytes the tile has (hash tiles: 32 per hash; entry bundles vary).
    pub fn hash_bytes(&self) -> usize {
        self.width as usize * 32
    }

    /// The largest number of bytes this tile may have when served.
    pub fn max_bytes(&self) -> usize {
        match self.kind {
            TileKind::Hashes(_) => self.hash_bytes(),
            TileKind::Entries => self.width as usize * (2 + MAX_ENTRY_BYTES),
        }
    }

    /// The tile `tlog_tiles` names.
    pub(crate) fn from_tlog(t: &tlog_tiles::Tile) -> Self {
        Self::hashes(t.level(), t.level_index(), t.width())
    }

    /// Whether all its hashes (or entries) are in a tree of `size` leaves (a log serves such a
    /// tile: its content never changes).
    pub fn within(&self, size: u64) -> bool {
        self.index
            .checked_mul(u64::from(TILE_WIDTH))
            .and_then(|first| first.checked_add(u64::from(self.width)))
            .is_some_and(|end| end <= size >> self.tree_level())
    }
}

/// Parses a path under a log's prefix (without a leading `/`): the checkpoint, a hash tile or an
/// entry bundle, in canonical form only (levels 0 to 63 without leading zeros, `N` in 3-digit
/// groups all but the last prefixed with `x`, widths 1 to 255).
pub fn parse_path(path: &str) -> Result<Resource> {
    const WHAT: &str = "tile path";
    if path == "checkpoint" {
        return Ok(Resource::Checkpoint);
    }
    if path.len() > 64 {
        return Err(LogError::TooLarge {
            what: WHAT,
            limit: 64,
        });
    }
    let bad = || LogError::malformed(WHAT, format!("'{path}' is not a tile of a C2SP tiled log"));
    let rest = path.strip_prefix("tile/").ok_or_else(bad)?;
    let (level, rest) = rest.split_once('/').ok_or_else(bad)?;
    let kind = if level == "entries" {
        TileKind::Entries
    } else {
        let l: u8 = level.parse().map_err(|_| bad())?;
        if l > 63 || level.starts_with('+') {
            return Err(bad());
        }
        TileKind::Hashes(l)
    };
    let (number, width) = match rest.split_once(".p/") {
        Some((number, w)) => {
            let w: u32 = w.parse().map_err(|_| bad())?;
            if !(1..TILE_WIDTH).contains(&w) {
                return Err(bad());
            }
            (number, w)
        }
        None => (rest, TILE_WIDTH),
    };
    let mut index: u64 = 0;
    for group in number.split('/') {
        let digits = group.strip_prefix('x').unwrap_or(group);
        if digits.len() != 3 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return Err(bad());
        }
        let g: u64 = digits.parse().map_err(|_| bad())?;
        index = index
            .checked_mul(1000)
            .and_then(|i| i.checked_add(g))
            .ok_or_else(bad)?;
    }
    let tile = TileId { kind, index, width };
    // Canonical only: one path per tile (this also checks where the x prefixes are).
    if tile.path() != path {
        return Err(bad());
    }
    Ok(Resource::Tile(tile))
}

/// Every tile and entry bundle of a tree of `size` leaves that a client reading the whole log
/// needs: the full tiles and the partial ones the size makes, at every level.
pub fn tiles_of_tree(size: u64) -> Vec<TileId> {
    let mut out = Vec::new();
    if size == 0 || size > MAX_TREE_SIZE {
        return out;
    }
    for t in tlog_tiles::Tile::new_tiles(TILE_HEIGHT, 0, size) {
        let id = TileId::from_tlog(&t);
        if id.kind == TileKind::Hashes(0) {
            out.push(TileId::entries(id.index, id.width));
        }
        out.push(id);
    }
    out
}

/// The entry bundles holding entries `from..to` of a tree of `size` leaves (`to <= size`).
pub fn bundles_for(from: u64, to: u64, size: u64) -> Vec<TileId> {
    let w = u64::from(TILE_WIDTH);
    if from >= to || to > size {
        return Vec::new();
    }
    (from / w..=(to - 1) / w)
        .map(|index| {
            let end = ((index + 1) * w).min(size);
            TileId::entries(index, (end - index * w) as u32)
        })
        .collect()
}

/// Encodes an entry bundle: each entry as a big-endian `u16` length and its bytes.
pub fn encode_bundle<'a>(entries: impl IntoIterator<Item = &'a [u8]>) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    for (i, e) in entries.into_iter().enumerate() {
        let len = u16::try_from(e.len()).map_err(|_| LogError::TooLarge {
            what: if i == 0 {
                "entry"
            } else {
                "an entry of the bundle"
            },
            limit: MAX_ENTRY_BYTES,
        })?;
        out.extend_from_slice(&len.to_be_bytes());
        out.extend_from_slice(e);
    }
    Ok(out)
}

/// Decodes an entry bundle of exactly `width` entries (nothing may follow the last).
pub fn decode_bundle(bytes: &[u8], width: u32) -> Result<Vec<&[u8]>> {
    const WHAT: &str = "entry bundle";
    if bytes.len() > width as usize * (2 + MAX_ENTRY_BYTES) {
        return Err(LogError::TooLarge {
            what: WHAT,
            limit: width as usize * (2 + MAX_ENTRY_BYTES),
        });
    }
    let mut out = Vec::with_capacity(width as usize);
    let mut rest = bytes;
    for i in 0..width {
        let (len, tail) = rest.split_first_chunk::<2>().ok_or_else(|| {
            LogError::malformed(WHAT, format!("it ends before entry {i} of {width}"))
        })?;
        let len = usize::from(u16::from_be_bytes(*len));
        if tail.len() < len {
            return Err(LogError::malformed(
                WHAT,
                format!("entry {i} is cut short ({} of {len} bytes)", tail.len()),
            ));
        }
        let (entry, tail) = tail.split_at(len);
        out.push(entry);
        rest = tail;
    }
    if !rest.is_empty() {
        return Err(LogError::malformed(
            WHAT,
            format!("{} bytes follow its {width} entries", rest.len()),
        ));
    }
    Ok(out)
}

/// Splits a hash tile into its hashes, checking its length.
pub fn decode_hash_tile(bytes: &[u8], width: u32) -> Result<Vec<Hash>> {
    if bytes.len() != width as usize * 32 {
        return Err(LogError::malformed(
            "tile",
            format!(
                "{} bytes, not {} for {width} hashes",
                bytes.len(),
                width as usize * 32
            ),
        ));
    }
    Ok(bytes
        .chunks_exact(32)
        .map(|c| Hash(c.try_into().unwrap_or([0; 32])))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_follow_the_spec() {
        assert_eq!(TileId::hashes(0, 0, 256).path(), "tile/0/000");
        assert_eq!(
            TileId::hashes(1, 1234067, 256).path(),
            "tile/1/x001/x234/067"
        );
        assert_eq!(TileId::hashes(2, 5, 17).path(), "tile/2/005.p/17");
        assert_eq!(TileId::entries(1000, 3).path(), "tile/entries/x001/000.p/3");
        for t in [
            TileId::hashes(0, 0, 256),
            TileId::hashes(63, u64::MAX / 2, 1),
            TileId::entries(1234067, 255),
            TileId::entries(u64::MAX, 256),
        ] {
            assert_eq!(parse_path(&t.path()).unwrap(), Resource::Tile(t));
        }
        assert_eq!(parse_path("checkpoint").unwrap(), Resource::Checkpoint);
    }

    #[test]
    fn non_canonical_paths_are_refused() {
        for bad in [
            "",
            "tile",
            "tile/0",
            "tile/0/",
            "tile/00/000",
            "tile/+0/000",
            "tile/64/000",
            "tile/0/0",
            "tile/0/0000",
            "tile/0/x000",
            "tile/0/000/001",
            "tile/0/x001/x234/067/",
            "tile/0/001/x234",
            "tile/0/x000/001",
            "tile/0/000.p/0",
            "tile/0/000.p/256",
            "tile/0/000.p/05",
            "tile/0/000.p/",
            "tile/data/000",
            "tile/entries/000.p/1/2",
            "tile/0/x018/x446/x744/x073/x709/x551/616",
            "/tile/0/000",
            "tile/0/-01",
        ] {
            assert!(parse_path(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn the_spec_example_tree_of_70000() {
        // "a tree of size 70,000 will be represented by 273 full level 0 tiles, one partial
        // level 0 tile of width 112, one full level 1 tile, one partial level 1 tile of width
        // 17, and one partial level 2 tile of width 1."
        let tiles = tiles_of_tree(70_000);
        let count = |k: TileKind, full: bool| {
            tiles
                .iter()
                .filter(|t| t.kind == k && t.is_full() == full)
                .count()
        };
        assert_eq!(count(TileKind::Hashes(0), true), 273);
        assert_eq!(count(TileKind::Entries, true), 273);
        assert!(tiles.contains(&TileId::hashes(0, 273, 112)));
        assert!(tiles.contains(&TileId::entries(273, 112)));
        assert_eq!(count(TileKind::Hashes(1), true), 1);
        assert!(tiles.contains(&TileId::hashes(1, 1, 17)));
        assert!(tiles.contains(&TileId::hashes(2, 0, 1)));
        assert_eq!(tiles.len(), 273 * 2 + 2 + 3);
        for t in &tiles {
            assert!(t.within(70_000), "{t:?}");
        }
        assert!(TileId::hashes(0, 273, 111).within(70_000));
        assert!(!TileId::hashes(0, 273, 113).within(70_000));
        assert!(!TileId::hashes(0, 274, 1).within(70_000));
        assert!(TileId::hashes(0, 0, 256).within(256));
        assert!(TileId::hashes(1, 0, 1).within(256));
        assert!(!TileId::hashes(1, 0, 1).within(255));
        assert!(!TileId::entries(u64::MAX, 256).within(u64::MAX));
    }

    #[test]
    fn bundles_round_trip_and_refuse_damage() {
        let entries: Vec<Vec<u8>> = vec![vec![], b"a".to_vec(), vec![7; 65535]];
        let bundle = encode_bundle(entries.iter().map(Vec::as_slice)).unwrap();
        let back = decode_bundle(&bundle, 3).unwrap();
        assert_eq!(back, entries.iter().map(Vec::as_slice).collect::<Vec<_>>());
        assert!(decode_bundle(&bundle, 2).is_err());
        assert!(decode_bundle(&bundle, 4).is_err());
        assert!(decode_bundle(&bundle[..bundle.len() - 1], 3).is_err());
        assert!(encode_bundle([&vec![0u8; 65536][..]]).is_err());
        assert_eq!(bundles_for(0, 1, 1), vec![TileId::entries(0, 1)]);
        assert_eq!(
            bundles_for(250, 600, 700),
            vec![
                TileId::entries(0, 256),
                TileId::entries(1, 256),
                TileId::entries(2, 188)
            ]
        );
    }
}

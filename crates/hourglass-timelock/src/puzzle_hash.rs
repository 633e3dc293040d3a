//! The hashes that turn a document into a puzzle input, and the names they go by.

use digest::DynDigest;
use serde::{Deserialize, Serialize};

/// Hash functions that turn a document into a puzzle input.
///
/// Only collision-resistant hashes: a puzzle solution certifies that *this* document existed,
/// so a hash with practical collisions (SHA-1) or a 160-bit one (RIPEMD-160) would let one
/// solution vouch for two documents. Both are refused wherever they appear in a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum PuzzleHash {
    /// SHA-256 (the default).
    #[serde(rename = "sha256")]
    Sha256,
    /// SHA-512.
    #[serde(rename = "sha512")]
    Sha512,
    /// SHA3-256.
    #[serde(rename = "sha3-256")]
    Sha3_256,
    /// BLAKE2b-512.
    #[serde(rename = "blake2b")]
    Blake2b,
}

impl PuzzleHash {
    /// Every supported hash.
    pub const ALL: [PuzzleHash; 4] = [
        PuzzleHash::Sha256,
        PuzzleHash::Sha512,
        PuzzleHash::Sha3_256,
        PuzzleHash::Blake2b,
    ];

    /// The name used in files and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PuzzleHash::Sha256 => "sha256",
            PuzzleHash::Sha512 => "sha512",
            PuzzleHash::Sha3_256 => "sha3-256",
            PuzzleHash::Blake2b => "blake2b",
        }
    }

    /// Parses a name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|h| h.name() == name)
    }

    /// Parses a name, explaining a refusal (weak hashes are named as such).
    pub fn parse(name: &str) -> std::result::Result<Self, HashNameError> {
        Self::from_name(name).ok_or_else(|| match name {
            "sha1" | "ripemd160" => HashNameError::TooWeak {
                name: name.to_string(),
            },
            _ => HashNameError::Unknown {
                name: name.to_string(),
            },
        })
    }

    /// A fresh incremental hasher.
    pub fn hasher(self) -> Box<dyn DynDigest + Send> {
        match self {
            PuzzleHash::Sha256 => Box::new(sha2::Sha256::default()),
            PuzzleHash::Sha512 => Box::new(sha2::Sha512::default()),
            PuzzleHash::Sha3_256 => Box::new(sha3::Sha3_256::default()),
            PuzzleHash::Blake2b => Box::new(blake2::Blake2b512::default()),
        }
    }

    /// Digest length in bytes.
    pub fn output_len(self) -> usize {
        self.hasher().output_size()
    }

    /// The digest of `data`.
    pub fn digest(self, data: &[u8]) -> Vec<u8> {
        let mut h = self.hasher();
        h.update(data);
        h.finalize().into_vec()
    }
}

/// Why a document hash name is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HashNameError {
    /// A hash too weak against collisions to certify time.
    #[error("hash '{name}' is not accepted for anything that certifies time (too weak against collisions); use sha256, sha512, sha3-256 or blake2b")]
    TooWeak {
        /// The name given.
        name: String,
    },
    /// A name of no hash hourglass knows.
    #[error("unknown document hash '{name}' (use sha256, sha512, sha3-256 or blake2b)")]
    Unknown {
        /// The name given.
        name: String,
    },
}

impl<'de> Deserialize<'de> for PuzzleHash {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        Self::parse(&name).map_err(serde::de::Error::custom)
    }
}

impl std::fmt::Display for PuzzleHash {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

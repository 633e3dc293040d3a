//! The solution file: which puzzle, which document digest, and `c`.

use hourglass_arith::entropy::EntropySource;
use hourglass_arith::Integer;
use serde::{Deserialize, Serialize};

use crate::json;
use crate::key::{input_from_digest, PuzzleHash, PuzzleKey, PuzzlePublicKey};
use crate::{Error, Field, FileKind, ParseError, Result};

const SOLUTION_TYPE: &str = "hourglass-puzzle-solution";
/// Version 2: the full-domain input of a version-2 key.
const SOLUTION_VERSION: u32 = 2;

/// A solved puzzle for one document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Solution {
    /// Fingerprint of the puzzle public key.
    pub puzzle: [u8; 32],
    /// Hash the document was digested with.
    pub hash: PuzzleHash,
    /// The document digest.
    pub digest: Vec<u8>,
    /// Squarings of the puzzle (copied from the key, for display).
    pub t: u64,
    /// `c = m^(2^t + z) mod n`.
    pub c: Integer,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct SolutionJson {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    puzzle: String,
    hash: PuzzleHash,
    digest: String,
    t: u64,
    c: String,
}

/// Why a solution was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// The solution is for another puzzle key.
    WrongPuzzle,
    /// The solution names another hash than the one the puzzle key fixes.
    WrongHash,
    /// The document's digest differs from the one solved for.
    DocumentMismatch,
    /// `c^d != m`: the solution is wrong or was altered.
    WrongSolution,
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Rejection::WrongPuzzle => "the solution is for another puzzle key",
            Rejection::WrongHash => {
                "the solution names another document hash than the puzzle key fixes"
            }
            Rejection::DocumentMismatch => {
                "the document differs from the one the puzzle was solved for"
            }
            Rejection::WrongSolution => "the solution does not verify (wrong or altered)",
        })
    }
}

impl Solution {
    /// The solution of `key`'s puzzle for a document `digest` (made with the key's hash):
    /// `c`, the result of [`crate::solve`].
    pub fn new(key: &PuzzlePublicKey, digest: Vec<u8>, c: Integer) -> Self {
        Self {
            puzzle: key.fingerprint(),
            hash: key.meta().hash,
            digest,
            t: key.t(),
            c,
        }
    }

    /// The solution as a JSON file.
    pub fn to_json(&self) -> String {
        let j = SolutionJson {
            kind: SOLUTION_TYPE.into(),
            version: SOLUTION_VERSION,
            puzzle: hex::encode(self.puzzle),
            hash: self.hash,
            digest: hex::encode(&self.digest),
            t: self.t,
            c: format!("{:x}", self.c),
        };
        json::to_text(&j)
    }

    /// Parses a JSON solution file.
    pub fn from_json(text: &str) -> Result<Self> {
        let what = FileKind::PuzzleSolution;
        let err = |why: ParseError| Error::parse(what, why);
        let j: SolutionJson = json::parse_versioned(what, text, SOLUTION_TYPE, SOLUTION_VERSION)?;
        let puzzle: [u8; 32] = hourglass_arith::bytes_from_canonical_hex(&j.puzzle)
            .ok_or_else(|| err(ParseError::PuzzleFingerprint))?;
        if j.digest.bytes().any(|b| b.is_ascii_uppercase()) {
            return Err(err(ParseError::NotCanonicalHex {
                field: Field::Digest,
            }));
        }
        let digest = hex::decode(&j.digest).map_err(|e| err(ParseError::DigestHex(e)))?;
        if digest.len() != j.hash.output_len() {
            return Err(err(ParseError::DigestLength {
                hash: j.hash,
                want: j.hash.output_len(),
                got: digest.len(),
            }));
        }
        let c = json::hex_integer(what, Field::C, &j.c)?;
        Ok(Self {
            puzzle,
            hash: j.hash,
            digest,
            t: j.t,
            c,
        })
    }

    /// The puzzle input this solution claims to be for.
    pub fn input(&self, key: &PuzzlePublicKey) -> Result<Integer> {
        input_from_digest(key.n(), &self.digest)
    }

    /// Verifies against the private key and the document's digest, computed by the caller with
    /// the hash the key fixes (`key.public().meta().hash`): the verifier, not the solution,
    /// chooses the hash, and a solution that names another one is refused.
    pub fn verify(
        &self,
        key: &PuzzleKey,
        document_digest: &[u8],
        rng: &mut dyn EntropySource,
    ) -> Result<std::result::Result<(), Rejection>> {
        if self.puzzle != key.public().fingerprint() {
            return Ok(Err(Rejection::WrongPuzzle));
        }
        if self.hash != key.public().meta().hash {
            return Ok(Err(Rejection::WrongHash));
        }
        if document_digest != self.digest.as_slice() {
            return Ok(Err(Rejection::DocumentMismatch));
        }
        let m = self.input(key.public())?;
        Ok(if key.verify(&m, &self.c, rng)? {
            Ok(())
        } else {
            Err(Rejection::WrongSolution)
        })
    }
}

//! RSA time-lock puzzles (Jerschow and Mauve, "Offline Submission with RSA Time-Lock Puzzles").
//!
//! An institution makes a puzzle key whose public exponent is inflated to `e~ = 2^t + z`, so the
//! public-key operation `c = m^(e~) mod n` costs `t` sequential squarings, while verification
//! is one ordinary private-key operation `c^d mod n == m`. An author who is offline at a
//! deadline solves the puzzle for the digest of the finished document, proving it existed at
//! least the puzzle's duration before the solution was shown.
//!
//! - [`PuzzleKeyGen`] makes keys; [`PuzzleKey`] / [`PuzzlePublicKey`] hold them.
//! - [`PuzzleHash`] and [`document_input`] define how a document becomes the puzzle input `m`.
//! - [`solve`] computes the solution with error checking, checkpoints and resume;
//!   [`PuzzleKey::verify`] checks it.
//! - [`submission`]: puzzle sets, chains of puzzles and the open-ended mode (offline
//!   submission, paper section IV); [`bundle`]: what an author submits.
//! - [`verdict`]: the one verdict on a bundle of either kind, whom it trusts, and its dating.
//! - [`public`]: trustless offline submission: public sets on a modulus nobody can open,
//!   proof-carrying links, verification by anyone.
//! - [`certificate`]: X.509 puzzle certificates (`E = z 2^65 + 2t + 1`) under institution CAs
//!   (`hourglass-x509`).
//! - [`signature`]: delayed signatures, fast to make and `t` squarings to verify.
//! - [`tlock`]: Rivest-Shamir-Wagner time-lock encryption of files; [`rsw`]: classic puzzles
//!   such as LCS35 and CSAIL2019.
//!
//! ```
//! use hourglass_arith::entropy::SeededEntropy;
//! use hourglass_timelock::{document_input, PuzzleHash, PuzzleKeyGen, SolveOptions, solve, SolveOutcome};
//! use std::sync::atomic::AtomicBool;
//!
//! let mut rng = SeededEntropy::new(b"doc example, insecure");
//! let key = PuzzleKeyGen::new(1024, 5000).generate(&mut rng).unwrap();
//! let public = key.public_key();
//! let m = document_input(&public, PuzzleHash::Sha256, b"my paper").unwrap();
//! let outcome = solve(&public, &m, &SolveOptions::default(), &AtomicBool::new(false), &mut |_| {}).unwrap();
//! let SolveOutcome::Solved(c) = outcome else { unreachable!() };
//! assert!(key.verify(&m, &c, &mut rng).unwrap());
//! ```

#![forbid(unsafe_code)]

pub mod age;
pub mod anyset;
pub mod bundle;
pub mod certificate;
mod committee;
pub mod dated;
mod error;
mod json;
mod key;
mod link_fault;
mod pins;
pub mod public;
mod puzzle_hash;
pub mod rsw;
mod set_kind;
pub mod signature;
mod solution;
mod solve;
pub mod submission;
pub mod tlock;
mod trust;
pub mod verdict;

pub use bundle::{Bundle, Link};
pub use error::{
    Error, Field, FileKind, Fingerprinted, Insecurity, ParamError, ParseError, RecipientError,
    Result, TrustError,
};
pub use key::{
    document_input, input_from_digest, PuzzleKey, PuzzleKeyGen, PuzzleMeta, PuzzlePublicKey,
    DOCUMENT_INPUT_DST, MIN_D_BITS, MIN_D_BITS_INSECURE,
};
pub use puzzle_hash::{HashNameError, PuzzleHash};
pub use rsw::{SolveOptions, SolveOutcome};
pub use set_kind::SetKind;
pub use solution::{Rejection, Solution};
pub use solve::solve;

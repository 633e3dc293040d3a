//! The interface both schemes implement.

use crate::error::Result;
use crate::eval::Evaluation;
use crate::hash_prime::SecurityLevel;
use crate::statement::Statement;

/// A verifiable delay function: proves an evaluation, verifies a statement with a proof.
pub trait Vdf {
    /// The proof type.
    type Proof;

    /// The security level of the challenges.
    fn level(&self) -> SecurityLevel;

    /// A proof that `evaluation` is right.
    fn prove(&self, evaluation: &Evaluation) -> Result<Self::Proof>;

    /// `Ok(())` if `proof` shows `statement` true, [`Error::InvalidProof`](crate::Error::InvalidProof) otherwise.
    fn verify(&self, statement: &Statement, proof: &Self::Proof) -> Result<()>;
}

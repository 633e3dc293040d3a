//! Verifiable delay functions in RSA groups: Wesolowski's, with the fast verification of
//! Attias, Vigneri and Dimitrov (paper 003), and Pietrzak's.
//!
//! A VDF output is `y = x^(2^T)` in the group `Z_N* / {+1, -1}` of an RSA modulus whose
//! factors nobody knows ([`group::RsaGroup`]; the RSA-2048 challenge number by default). `x` is
//! the hash of an input message; computing `y` takes `T` sequential squarings, and a proof lets
//! anyone check `y` in a tiny fraction of that time.
//!
//! - [`eval::evaluate`] does the squarings with the error-checked engine of
//!   `hourglass-arith` (progress, checkpoints and resume), keeping every `kappa`-th power for
//!   the prover;
//! - [`Wesolowski`] proves with `pi = x^floor(2^T / l)` for a challenge prime `l`
//!   ([`hash_prime`]) and verifies with one double exponentiation ([`multiexp`]);
//! - [`Pietrzak`] proves with `log T` halving rounds and verifies with `2 log T` short
//!   exponentiations;
//! - [`proof_file`] is the stable, versioned JSON format (`docs/FORMATS.md`).
//!
//! ```
//! use hourglass_vdf::{eval, group::RsaGroup, Statement, Vdf, Wesolowski};
//!
//! let group = RsaGroup::rsa_2048();
//! let x = group.hash_to_element(b"block 1234").unwrap();
//! let evaluation = eval::evaluate_in_memory(&group, &x, 1000).unwrap();
//! let vdf = Wesolowski::default();
//! let proof = vdf.prove(&evaluation).unwrap();
//! let statement = evaluation.statement(vdf.level());
//! vdf.verify(&statement, &proof).unwrap();
//! ```

#![forbid(unsafe_code)]

/// Runs `$body` with `$ring` bound to the fastest [`multiexp::Ring`] for `$group`.
macro_rules! with_ring {
    ($group:expr, |$ring:ident| $body:expr) => {{
        #[cfg(target_arch = "x86_64")]
        {
            match $group.ifma_context() {
                Some(ctx) => {
                    let $ring = $crate::multiexp::IfmaRing::new(ctx);
                    $body
                }
                None => {
                    let $ring = $crate::multiexp::GmpRing::new($group.modulus());
                    $body
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            let $ring = $crate::multiexp::GmpRing::new($group.modulus());
            $body
        }
    }};
}

mod error;
pub mod eval;
pub mod group;
pub mod hash_prime;
pub mod multiexp;
pub mod pietrzak;
pub mod proof_file;
mod scheme;
mod statement;
#[cfg(test)]
mod toy;
mod traits;
mod verdict;
pub mod wesolowski;

pub use error::{Error, FormatError, InputError, ModulusError, ParamError, ProofField, Result};
pub use hash_prime::SecurityLevel;
pub use hourglass_arith::threads::{available_threads, parallel_map};
pub use pietrzak::{Pietrzak, PietrzakProof};
pub use statement::{check_iterations, Statement, MAX_ITERATIONS};
pub use traits::Vdf;
pub use wesolowski::{Wesolowski, WesolowskiProof};

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
pub mod wesolowski;

use rug::Integer;

pub use error::{Error, FormatError, InputError, ModulusError, ParamError, ProofField};
pub use hash_prime::SecurityLevel;
pub use pietrzak::{Pietrzak, PietrzakProof};
pub use wesolowski::{Wesolowski, WesolowskiProof};

use crate::group::RsaGroup;

/// The largest number of squarings accepted (2^50: years at any known speed).
pub const MAX_ITERATIONS: u64 = 1 << 50;

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// What a proof claims: `y = x^(2^iterations)` in the group, at a security level.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Statement {
    /// The group.
    pub group: RsaGroup,
    /// The input element (canonical).
    pub x: Integer,
    /// The claimed output (canonical).
    pub y: Integer,
    /// `T`, the number of squarings.
    pub iterations: u64,
    /// The security level `k` of the challenges.
    pub level: SecurityLevel,
}

impl Statement {
    /// Checks the parts every scheme needs: iterations in range and `x`, `y` canonical.
    pub fn check_well_formed(&self) -> Result<()> {
        check_iterations(self.iterations)?;
        if !self.group.is_canonical(&self.x) {
            return Err(Error::InvalidProof(
                "the input is not a canonical group element",
            ));
        }
        if !self.group.is_canonical(&self.y) {
            return Err(Error::InvalidProof(
                "the output is not a canonical group element (min(v, N - v))",
            ));
        }
        Ok(())
    }

    /// The domain-separated encoding of the whole statement that challenges are hashed from:
    /// tag, `N`, `x`, `y` (each as many bytes as `N`), `T`, `k`.
    pub fn encode(&self, scheme: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(64 + 3 * self.group.element_bytes());
        out.extend_from_slice(b"hourglass-vdf-v1/");
        out.extend_from_slice(scheme.as_bytes());
        out.extend_from_slice(b"/statement\0");
        out.extend_from_slice(&(self.group.element_bytes() as u32).to_be_bytes());
        out.extend_from_slice(&self.group.modulus_bytes());
        out.extend_from_slice(&self.group.encode(&self.x));
        out.extend_from_slice(&self.group.encode(&self.y));
        out.extend_from_slice(&self.iterations.to_be_bytes());
        out.extend_from_slice(&(self.level.bits() as u16).to_be_bytes());
        out
    }
}

/// Checks `1 <= T <= MAX_ITERATIONS`.
pub fn check_iterations(t: u64) -> Result<()> {
    if t == 0 || t > MAX_ITERATIONS {
        return Err(ParamError::Iterations { found: t }.into());
    }
    Ok(())
}

/// `f` over every item on `threads` threads (at least one), results in the items' order.
pub fn parallel_map<T: Sync, R: Send>(
    items: &[T],
    threads: usize,
    f: impl Fn(&T) -> R + Sync,
) -> Vec<R> {
    let share = items.len().div_ceil(threads.max(1)).max(1);
    let f = &f;
    std::thread::scope(|s| {
        let handles: Vec<_> = items
            .chunks(share)
            .map(|part| s.spawn(move || part.iter().map(f).collect::<Vec<R>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
            .collect()
    })
}

/// The number of threads to use: every core.
pub fn available_threads() -> usize {
    std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get)
}

/// A verifiable delay function: proves an evaluation, verifies a statement with a proof.
pub trait Vdf {
    /// The proof type.
    type Proof;

    /// The security level of the challenges.
    fn level(&self) -> SecurityLevel;

    /// A proof that `evaluation` is right.
    fn prove(&self, evaluation: &eval::Evaluation) -> Result<Self::Proof>;

    /// `Ok(())` if `proof` shows `statement` true, [`Error::InvalidProof`] otherwise.
    fn verify(&self, statement: &Statement, proof: &Self::Proof) -> Result<()>;
}

/// A group for unit tests: 512 bits with its order known (insecure on purpose: fast, and the
/// trapdoor lets tests reach any `T`).
#[cfg(test)]
pub(crate) fn toy_group() -> (RsaGroup, Integer) {
    let p = (Integer::from(1) << 255u32).next_prime();
    let q = (Integer::from(3) << 254u32).next_prime();
    let order = Integer::from(&p - 1u32) * Integer::from(&q - 1u32);
    (RsaGroup::new_insecure(p * q).unwrap(), order)
}

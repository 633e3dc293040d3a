//! What a proof claims, and the bounds every statement keeps.

use rug::Integer;

use crate::error::{Error, ParamError, Result};
use crate::group::RsaGroup;
use crate::hash_prime::SecurityLevel;

/// The largest number of squarings accepted (2^50: years at any known speed).
pub const MAX_ITERATIONS: u64 = 1 << 50;

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

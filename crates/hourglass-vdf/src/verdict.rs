//! The verdict on a proof file against what its verifier trusts: the one rule the command line,
//! the service and Python print ([`crate::proof_file::ProofFile::verify_against`]).

use serde::ser::SerializeMap;
use serde::Serialize;

/// Whether a proof file shows its statement true over the modulus the verifier trusts, for the
/// input the verifier expects. Its JSON is `{"valid": true, "scheme", "modulus", "iterations",
/// "security_bits", "output"}` or `{"valid": false, "reason"}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofVerdict {
    valid: bool,
    reason: Option<String>,
    untrusted_modulus: bool,
    scheme: &'static str,
    modulus: String,
    iterations: u64,
    security_bits: u32,
    output: String,
}

/// What a proof file states, for its verdict.
pub(crate) struct Stated {
    /// The scheme's name.
    pub scheme: &'static str,
    /// The modulus, described.
    pub modulus: String,
    /// `T`.
    pub iterations: u64,
    /// `k`.
    pub security_bits: u32,
    /// The output, as hex of the group's width.
    pub output: String,
}

impl ProofVerdict {
    /// A proof that verified.
    pub(crate) fn valid(stated: Stated) -> Self {
        Self::of(stated, None, false)
    }

    /// A proof refused for `reason`; `untrusted_modulus` when it is over another modulus than
    /// the trusted one.
    pub(crate) fn invalid(stated: Stated, reason: String, untrusted_modulus: bool) -> Self {
        Self::of(stated, Some(reason), untrusted_modulus)
    }

    fn of(stated: Stated, reason: Option<String>, untrusted_modulus: bool) -> Self {
        ProofVerdict {
            valid: reason.is_none(),
            reason,
            untrusted_modulus,
            scheme: stated.scheme,
            modulus: stated.modulus,
            iterations: stated.iterations,
            security_bits: stated.security_bits,
            output: stated.output,
        }
    }

    /// Whether the proof is valid: over the trusted modulus, for the expected input, and its
    /// proof verifies.
    pub fn is_valid(&self) -> bool {
        self.valid
    }

    /// Why not, in one sentence (none when valid).
    pub fn reason(&self) -> Option<&str> {
        self.reason.as_deref()
    }

    /// Whether the proof was refused for being over another modulus than the trusted one (the
    /// prover may know that modulus's factors).
    pub fn untrusted_modulus(&self) -> bool {
        self.untrusted_modulus
    }

    /// The scheme (`wesolowski`, `pietrzak`).
    pub fn scheme(&self) -> &'static str {
        self.scheme
    }

    /// The proof's modulus, described ([`crate::group::RsaGroup::describe`]).
    pub fn modulus(&self) -> &str {
        &self.modulus
    }

    /// `T`, the number of squarings the proof states.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// The security level `k` of its challenges.
    pub fn security_bits(&self) -> u32 {
        self.security_bits
    }

    /// The output `y`, as hex of the group's width.
    pub fn output(&self) -> &str {
        &self.output
    }
}

impl Serialize for ProofVerdict {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("valid", &self.valid)?;
        match &self.reason {
            Some(reason) => m.serialize_entry("reason", reason)?,
            None => {
                m.serialize_entry("scheme", self.scheme)?;
                m.serialize_entry("modulus", &self.modulus)?;
                m.serialize_entry("iterations", &self.iterations)?;
                m.serialize_entry("security_bits", &self.security_bits)?;
                m.serialize_entry("output", &self.output)?;
            }
        }
        m.end()
    }
}

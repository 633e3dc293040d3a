//! The two proof schemes, by the names proof files give them.

/// The name of Wesolowski's scheme in proof files and in the statements it hashes.
pub const WESOLOWSKI: &str = "wesolowski";
/// The name of Pietrzak's scheme in proof files and in the statements it hashes.
pub const PIETRZAK: &str = "pietrzak";

/// A proof scheme: which proof [`crate::proof_file::prove_input`] makes, and which one a public puzzle set fixes
/// for its links (its name in files: `wesolowski`, `pietrzak`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[cfg_attr(feature = "clap", derive(clap::ValueEnum))]
#[serde(rename_all = "kebab-case")]
pub enum ProofScheme {
    /// Wesolowski: one group element; verification in about a millisecond.
    Wesolowski,
    /// Pietrzak: `log T` group elements; cheaper to prove, slower to verify.
    Pietrzak,
}

impl ProofScheme {
    /// The name proof files give the scheme (`wesolowski`, `pietrzak`).
    pub fn name(self) -> &'static str {
        match self {
            ProofScheme::Wesolowski => WESOLOWSKI,
            ProofScheme::Pietrzak => PIETRZAK,
        }
    }
}

impl std::fmt::Display for ProofScheme {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

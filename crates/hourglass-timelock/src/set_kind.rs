//! The two kinds of puzzle set.

use serde::{Deserialize, Serialize};

/// Which kind of set a bundle was sealed on: who can verify it, and who could forge it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SetKind {
    /// Puzzle keys with a trapdoor: the institution verifies with its private keys.
    Private,
    /// A public modulus with proof-carrying links: anyone verifies.
    Public,
}

impl SetKind {
    /// `private` or `public`.
    pub fn name(self) -> &'static str {
        match self {
            SetKind::Private => "private",
            SetKind::Public => "public",
        }
    }
}

impl std::fmt::Display for SetKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

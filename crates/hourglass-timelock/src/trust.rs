//! Whom a verdict trusts.

use serde::{Deserialize, Serialize};

/// Whom a verdict trusts: what would have to be false for a valid verdict to be a forgery.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Trust {
    /// A private set: the institution verified with the trapdoors of its own puzzle keys, so it
    /// (or a thief of its keys) could have made the bundle without doing the squarings.
    InstitutionKeys,
    /// A public set on the RSA-2048 challenge number, whose factors nobody is known to hold.
    Rsa2048,
    /// A public set on a committee's modulus, the committee pinned by the verifier: nobody
    /// knows the factors unless more than `threshold` of its members colluded.
    Committee {
        /// The cluster's name.
        cluster: String,
        /// The members (party ids) whose signatures the verifier checked.
        members: Vec<hourglass_dkg::PartyId>,
        /// Colluders the generation withstands: `threshold + 1` of them could know the factors.
        threshold: usize,
        /// The fingerprint of the committee's signed transcript (hex).
        transcript: String,
    },
    /// A public set on the institution's own modulus: it knows the factors and could forge.
    InstitutionModulus,
}

impl Trust {
    /// `trust`, `trustless` and `assumption`: how every verdict's JSON says whom it trusts (the
    /// bundle verdict's, the service's submissions).
    pub fn json_fields(&self) -> [(&'static str, serde_json::Value); 3] {
        [
            (
                "trust",
                serde_json::to_value(self).unwrap_or(serde_json::Value::Null),
            ),
            ("trustless", self.trustless().into()),
            ("assumption", self.assumption().into()),
        ]
    }

    /// Whether nobody, the institution included, could have forged a valid bundle (under the
    /// stated assumption).
    pub fn trustless(&self) -> bool {
        matches!(self, Trust::Rsa2048 | Trust::Committee { .. })
    }

    /// The assumption a valid verdict rests on, as a sentence.
    pub fn assumption(&self) -> String {
        match self {
            Trust::InstitutionKeys => "the institution holds the puzzles' trapdoors: it could have forged this bundle (trust the institution)".into(),
            Trust::Rsa2048 => "nobody knows the factors of the RSA-2048 challenge number".into(),
            Trust::Committee { cluster, members, threshold, .. } => format!(
                "nobody knows the factors of committee '{cluster}''s modulus unless at least {} of its members {} colluded",
                threshold + 1,
                members.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
            ),
            Trust::InstitutionModulus => "the institution made the set's modulus and knows its factors: it could have forged this bundle (trust the institution)".into(),
        }
    }
}

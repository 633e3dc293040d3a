//! The RSA variants: how the private exponents are chosen and the private operation runs.

/// The RSA variants hourglass generates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Variant {
    /// Small e (65537), private operation `c^d mod n` without the CRT.
    Standard,
    /// Small e, private operation by the CRT (Quisquater-Couvreur, Garner recombination).
    Crt,
    /// Wiener's rebalanced RSA-CRT: small random CRT exponents, e about n bits.
    Rebalanced,
    /// Sun-Wu scheme A: short e, small CRT exponents, `e d_p = k_p1 k_p2 (p-1) + 1`.
    SchemeA,
    /// Sun-Hinek-Wu scheme B: short e, small CRT exponents, `e d_p = k_p (p-1) + 1`.
    SchemeB,
}

impl Variant {
    /// Every variant, in the papers' order.
    pub const ALL: [Variant; 5] = [
        Variant::Standard,
        Variant::Crt,
        Variant::Rebalanced,
        Variant::SchemeA,
        Variant::SchemeB,
    ];

    /// The command-line name (`standard`, `crt`, `rebalanced`, `scheme-a`, `scheme-b`).
    pub fn name(self) -> &'static str {
        match self {
            Variant::Standard => "standard",
            Variant::Crt => "crt",
            Variant::Rebalanced => "rebalanced",
            Variant::SchemeA => "scheme-a",
            Variant::SchemeB => "scheme-b",
        }
    }

    /// Parses a command-line name.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.name() == name)
    }

    /// Whether the private operation uses the CRT.
    pub fn uses_crt(self) -> bool {
        self != Variant::Standard
    }
}

impl std::fmt::Display for Variant {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

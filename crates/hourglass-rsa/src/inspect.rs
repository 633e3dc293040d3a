//! Judging an RSA key: which variant it looks like, its sizes, and whether published attacks
//! apply. Works on any key, including keys made by OpenSSL or other tools.

use hourglass_arith::prime::{is_prime_bpsw, small_primes};
use hourglass_arith::Integer;
use serde::Serialize;

use crate::key::{PrivateKey, PublicKey, Variant};
use crate::params::{rebalanced_weakness, security_level, short_e_weakness};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing.
    Info,
    /// Below current recommendations, not known to be broken.
    Weak,
    /// A published attack breaks it, or it is invalid.
    Broken,
}

/// One observation about a key.
#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    /// How bad.
    pub severity: Severity,
    /// What and why.
    pub message: String,
}

/// The result of inspecting a key.
#[derive(Debug, Clone, Serialize)]
pub struct Inspection {
    /// `private` or `public`.
    pub kind: &'static str,
    /// The variant recorded in the file (hex and JSON keys record it), if any.
    pub recorded_variant: Option<Variant>,
    /// What the key's shape says it is.
    pub shape: String,
    /// Modulus bits.
    pub bits: u32,
    /// Estimated security level in bits (NIST SP 800-56B).
    pub security_level: u32,
    /// Public exponent bits.
    pub e_bits: u32,
    /// The public exponent in decimal when it has at most 64 bits.
    pub e: Option<String>,
    /// Private exponent bits (private keys).
    pub d_bits: Option<u32>,
    /// Bits of p and q (private keys).
    pub prime_bits: Option<(u32, u32)>,
    /// Bits of the CRT exponents (private keys).
    pub crt_exponent_bits: Option<(u32, u32)>,
    /// Overall verdict: the worst finding's severity (`info` means no problem found).
    pub verdict: Severity,
    /// Everything found.
    pub findings: Vec<Finding>,
    /// SHA-256 fingerprint of the modulus (hex), to tell keys apart.
    pub fingerprint: String,
}

fn push(findings: &mut Vec<Finding>, severity: Severity, message: impl Into<String>) {
    findings.push(Finding {
        severity,
        message: message.into(),
    });
}

fn public_findings(key: &PublicKey, findings: &mut Vec<Finding>) {
    let (n, e) = (key.n(), key.e());
    let bits = key.bits();
    if bits < 1024 {
        push(
            findings,
            Severity::Broken,
            format!("{bits}-bit modulus: moduli up to 829 bits have been factored publicly"),
        );
    } else if bits < 2048 {
        push(
            findings,
            Severity::Weak,
            format!(
                "{bits}-bit modulus gives about {} bits of security; use 2048 or more",
                security_level(bits)
            ),
        );
    } else {
        push(
            findings,
            Severity::Info,
            format!(
                "{bits}-bit modulus: about {} bits of security",
                security_level(bits)
            ),
        );
    }
    if let Some(&p) = small_primes().iter().find(|&&p| n.mod_u(p) == 0) {
        push(
            findings,
            Severity::Broken,
            format!("the modulus is divisible by {p}"),
        );
    }
    if n.is_perfect_square() {
        push(
            findings,
            Severity::Broken,
            "the modulus is a perfect square (p = q)",
        );
    } else if let Some(p) = fermat_factor(n, 10_000) {
        push(
            findings,
            Severity::Broken,
            format!(
                "Fermat's method factors the modulus at once (|p - q| is tiny): p has {} bits",
                p.significant_bits()
            ),
        );
    }
    if is_prime_bpsw(n) {
        push(findings, Severity::Broken, "the modulus is prime");
    }
    if *e < 65537 {
        push(findings, Severity::Info, format!("e = {e} is below 65537: safe with OAEP/PSS, dangerous with textbook RSA or PKCS#1 v1.5 encryption"));
    }
    if e.significant_bits() > 64 && bits > 3072 {
        push(findings, Severity::Info, format!("e has {} bits: OpenSSL refuses public exponents over 64 bits for moduli over 3072 bits", e.significant_bits()));
    }
}

/// Fermat's method for a few steps: finds p when |p - q| is tiny.
fn fermat_factor(n: &Integer, steps: u32) -> Option<Integer> {
    let mut a = Integer::from(n.sqrt_ref());
    if Integer::from(&a * &a) < *n {
        a += 1;
    }
    for _ in 0..steps {
        let b2 = Integer::from(&a * &a) - n;
        if b2.is_perfect_square() {
            let b = b2.sqrt();
            let p = Integer::from(&a - &b);
            if p > 1 {
                return Some(p);
            }
        }
        a += 1;
    }
    None
}

/// Inspects a public key.
pub fn inspect_public(key: &PublicKey) -> Inspection {
    let mut findings = Vec::new();
    public_findings(key, &mut findings);
    let bits = key.bits();
    let e_bits = key.e().significant_bits();
    let shape = if e_bits + 64 >= bits {
        push(&mut findings, Severity::Info, "e is about as large as n: typical of rebalanced RSA (small CRT exponents); the public key alone cannot show how small they are");
        "large e (rebalanced RSA-CRT or similar)".to_string()
    } else if e_bits > 256 {
        "short-e rebalanced (scheme A or B) or unusual large e".to_string()
    } else {
        "standard (small e)".to_string()
    };
    finish("public", None, shape, key, None, None, None, findings)
}

/// Inspects a private key.
pub fn inspect_private(key: &PrivateKey) -> Inspection {
    let mut findings = Vec::new();
    let public = key.public();
    public_findings(public, &mut findings);
    let bits = public.bits();
    let n_f = f64::from(bits);
    let [d, p, q, dp, dq, _] = key.secret_components();
    let (pb, qb) = (p.expose().significant_bits(), q.expose().significant_bits());
    let (dpb, dqb) = (
        dp.expose().significant_bits(),
        dq.expose().significant_bits(),
    );
    let db = d.expose().significant_bits();
    let e_bits = public.e().significant_bits();
    let diff = Integer::from(p.expose() - q.expose()).abs();
    if diff.significant_bits() <= (bits / 2).saturating_sub(100) {
        push(
            &mut findings,
            Severity::Broken,
            format!(
                "|p - q| has only {} bits: Fermat factoring",
                diff.significant_bits()
            ),
        );
    }
    if pb.abs_diff(qb) > bits / 8 {
        push(
            &mut findings,
            Severity::Weak,
            format!(
                "unbalanced primes ({pb} and {qb} bits): the smaller one is easier to find by ECM"
            ),
        );
    }
    if f64::from(db) < 0.25 * n_f {
        push(
            &mut findings,
            Severity::Broken,
            format!("d has {db} bits < n/4: Wiener's continued-fraction attack"),
        );
    } else if f64::from(db) < 0.292 * n_f {
        push(
            &mut findings,
            Severity::Broken,
            format!("d has {db} bits < 0.292 n: Boneh-Durfee lattice attack"),
        );
    }
    let small_crt = dpb.max(dqb) + 32 < pb.min(qb);
    let shape;
    if small_crt {
        let worst = dpb.min(dqb);
        if e_bits + 64 >= bits {
            shape = "rebalanced RSA-CRT (Wiener): small CRT exponents, large e".to_string();
            if let Some(why) = rebalanced_weakness(bits, worst) {
                // Broken below the Takayasu-Lu-Peng bound, or when a square-root search over
                // d_p (about 2^(bits/2) work) costs 2^80 or less.
                let sev = if f64::from(worst) < 0.122 * n_f || worst <= 160 {
                    Severity::Broken
                } else {
                    Severity::Weak
                };
                push(&mut findings, sev, why.to_string());
            } else {
                push(&mut findings, Severity::Info, format!("CRT exponents of {dpb}/{dqb} bits meet the safety margin for rebalanced RSA"));
            }
        } else {
            shape = "short-e rebalanced RSA-CRT (scheme A or B): small CRT exponents, short e"
                .to_string();
            if let Some(why) = short_e_weakness(bits, e_bits, worst) {
                let bm = (0.4 * (n_f - f64::from(e_bits))).min(n_f / 4.0);
                let sev = if f64::from(worst) <= bm {
                    Severity::Broken
                } else {
                    Severity::Weak
                };
                push(&mut findings, sev, why.to_string());
            } else {
                push(&mut findings, Severity::Info, format!("e of {e_bits} bits and CRT exponents of {dpb}/{dqb} bits meet the safety margins for short-e rebalanced RSA"));
            }
        }
    } else if e_bits <= 256 {
        shape = "standard RSA with CRT parameters (small e)".to_string();
    } else {
        shape = format!("full-size CRT exponents with a {e_bits}-bit e (unusual)");
    }
    finish(
        "private",
        key.variant(),
        shape,
        public,
        Some(db),
        Some((pb, qb)),
        Some((dpb, dqb)),
        findings,
    )
}

#[allow(clippy::too_many_arguments)]
fn finish(
    kind: &'static str,
    recorded_variant: Option<Variant>,
    shape: String,
    key: &PublicKey,
    d_bits: Option<u32>,
    prime_bits: Option<(u32, u32)>,
    crt_exponent_bits: Option<(u32, u32)>,
    findings: Vec<Finding>,
) -> Inspection {
    let verdict = findings
        .iter()
        .map(|f| f.severity)
        .max()
        .unwrap_or(Severity::Info);
    let e = key.e();
    let fp = crate::HashAlg::Sha256.digest(&e_bytes(key.n()));
    Inspection {
        kind,
        recorded_variant,
        shape,
        bits: key.bits(),
        security_level: security_level(key.bits()),
        e_bits: e.significant_bits(),
        e: (e.significant_bits() <= 64).then(|| e.to_string()),
        d_bits,
        prime_bits,
        crt_exponent_bits,
        verdict,
        findings,
        fingerprint: hex::encode(fp),
    }
}

fn e_bytes(x: &Integer) -> Vec<u8> {
    x.to_digits::<u8>(rug::integer::Order::Msf)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyGenOptions;
    use hourglass_arith::entropy::SeededEntropy;

    #[test]
    fn safe_defaults_pass_and_paper_sizes_fail() {
        let mut rng = SeededEntropy::new(b"inspect");
        let good = KeyGenOptions::new(2048, Variant::Rebalanced)
            .generate(&mut rng)
            .unwrap();
        let i = inspect_private(&good);
        assert_eq!(i.verdict, Severity::Info, "{:?}", i.findings);
        assert!(i.shape.contains("rebalanced"));
        let bad = KeyGenOptions::new(1024, Variant::Rebalanced)
            .dp_bits(160)
            .allow_insecure(true)
            .generate(&mut rng)
            .unwrap();
        assert_eq!(inspect_private(&bad).verdict, Severity::Broken);
        let b = KeyGenOptions::new(1024, Variant::SchemeB)
            .e_bits(512)
            .dp_bits(198)
            .allow_insecure(true)
            .generate(&mut rng)
            .unwrap();
        let ib = inspect_private(&b);
        assert_eq!(ib.verdict, Severity::Broken);
        assert!(ib.shape.contains("short-e"));
    }

    #[test]
    fn fermat_finds_close_primes() {
        let p = Integer::from(1_000_000_007u64);
        let q = Integer::from(1_000_000_009u64);
        let n = Integer::from(&p * &q);
        assert_eq!(fermat_factor(&n, 10), Some(p));
    }
}

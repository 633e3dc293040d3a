//! Security levels and safe default sizes.
//!
//! The papers' sizes for small CRT exponents are broken today:
//! - Bleichenbacher-May (PKC 2006) recover the factors when
//!   `d_p <= min((N/e)^(2/5), N^(1/4))`;
//! - Takayasu-Lu-Peng (Eurocrypt 2017 / JoC 2019) break `d_p < N^0.122` for `e` about `N`.
//!
//! hourglass's defaults keep a margin above both, and above generic square-root searches on
//! `d_p`:
//! - rebalanced: `d_p` bits = `max(0.122 n + 64, 2 lambda + 32)`, rounded up to 32 bits;
//! - schemes A and B: `n_d >= n/4 + 64` and `n_e + n_d >= n/2 + lambda`, with
//!   `n_e = max(n_d, n/2 + lambda - n_d)`, both rounded up to 32 bits.

/// Bits of security of an `n`-bit RSA modulus (NIST SP 800-56B Rev. 2, Appendix D formula,
/// rounded to a multiple of 8; gives 112 / 128 / 152 / 200 at 2048 / 3072 / 4096 / 8192).
pub fn security_level(n_bits: u32) -> u32 {
    let n = f64::from(n_bits) * std::f64::consts::LN_2;
    let strength = (1.923 * n.cbrt() * n.ln().powi(2).cbrt() - 4.69) / std::f64::consts::LN_2;
    ((strength / 8.0).round() * 8.0) as u32
}

fn round_up_32(x: f64) -> u32 {
    ((x / 32.0).ceil() * 32.0) as u32
}

/// Default (safe) CRT-exponent size for Wiener's rebalanced RSA.
pub fn rebalanced_dp_bits(n_bits: u32) -> u32 {
    let lambda = f64::from(security_level(n_bits));
    round_up_32((0.122 * f64::from(n_bits) + 64.0).max(2.0 * lambda + 32.0))
}

/// Smallest CRT-exponent size considered safe for rebalanced RSA (before rounding).
pub fn rebalanced_dp_min_bits(n_bits: u32) -> u32 {
    let lambda = f64::from(security_level(n_bits));
    (0.122 * f64::from(n_bits) + 64.0)
        .max(2.0 * lambda + 32.0)
        .ceil() as u32
}

/// Default (safe) `(n_e, n_d)`: public exponent bits and CRT exponent bits for schemes A/B.
pub fn short_e_sizes(n_bits: u32) -> (u32, u32) {
    let lambda = f64::from(security_level(n_bits));
    let n = f64::from(n_bits);
    let n_d = round_up_32(n / 4.0 + 64.0);
    let n_e = round_up_32(n / 2.0 + lambda - f64::from(n_d)).max(n_d);
    (n_e, n_d)
}

/// A weakness of key-generation parameters that a published attack exploits.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Weakness {
    /// A modulus small enough to factor.
    #[error("a {bits}-bit modulus can be factored (RSA-768 fell in 2009, RSA-829 in 2020)")]
    ModulusFactorable {
        /// The modulus size.
        bits: u32,
    },
    /// CRT exponents within the Bleichenbacher-May bound (short-e keys).
    #[error(
        "d_p of {dp_bits} bits is within the Bleichenbacher-May bound \
         min((N/e)^(2/5), N^(1/4)) (PKC 2006): the factors can be recovered"
    )]
    BleichenbacherMay {
        /// The CRT exponent size.
        dp_bits: u32,
    },
    /// CRT exponents less than `n/4 + 64` bits (short-e keys).
    #[error(
        "d_p of {dp_bits} bits is less than n/4 + 64 = {min} bits: too close to the \
         Bleichenbacher-May bound"
    )]
    NearBleichenbacherMay {
        /// The CRT exponent size.
        dp_bits: u32,
        /// `n/4 + 64`.
        min: u32,
    },
    /// `n_e + n_d` less than `n/2 + lambda` (short-e keys).
    #[error(
        "n_e + n_d = {sum} bits is less than n/2 + lambda = {min} bits (lattice attacks on \
         e*d_p = k_p(p-1) + 1 with small unknowns)"
    )]
    ShortExponentSum {
        /// `n_e + n_d`.
        sum: u32,
        /// `n/2 + lambda`.
        min: u32,
    },
    /// CRT exponents small enough for a square-root search (rebalanced keys).
    #[error("d_p of {dp_bits} bits falls to a square-root search (about 2^{} work)", dp_bits / 2)]
    SquareRootSearch {
        /// The CRT exponent size.
        dp_bits: u32,
    },
    /// CRT exponents below `N^0.122` (rebalanced keys).
    #[error("d_p of {dp_bits} bits is below N^0.122 ({:.0} bits): broken by Takayasu-Lu-Peng", 0.122 * f64::from(*modulus_bits))]
    TakayasuLuPeng {
        /// The CRT exponent size.
        dp_bits: u32,
        /// The modulus size.
        modulus_bits: u32,
    },
    /// CRT exponents below the safety margin (rebalanced keys).
    #[error(
        "d_p of {dp_bits} bits is below the safety margin max(0.122n + 64, 2*lambda + 32) = \
         {min} bits (lattice attacks and square-root searches on d_p)"
    )]
    BelowMargin {
        /// The CRT exponent size.
        dp_bits: u32,
        /// The margin.
        min: u32,
    },
    /// A primality test of at most one Miller-Rabin round to base 2.
    #[error("no primality test beyond one Miller-Rabin round to base 2")]
    NoPrimalityTest,
}

/// Why `(n_e, n_d)` (public exponent bits, CRT exponent bits) is unsafe for an `n`-bit
/// short-e rebalanced key, or `None` if it meets the margins.
pub fn short_e_weakness(n_bits: u32, e_bits: u32, dp_bits: u32) -> Option<Weakness> {
    let lambda = security_level(n_bits);
    let n = f64::from(n_bits);
    if f64::from(dp_bits) <= (0.4 * (n - f64::from(e_bits))).min(n / 4.0) {
        return Some(Weakness::BleichenbacherMay { dp_bits });
    }
    if f64::from(dp_bits) < n / 4.0 + 64.0 {
        return Some(Weakness::NearBleichenbacherMay {
            dp_bits,
            min: n_bits / 4 + 64,
        });
    }
    if e_bits + dp_bits < n_bits / 2 + lambda {
        return Some(Weakness::ShortExponentSum {
            sum: e_bits + dp_bits,
            min: n_bits / 2 + lambda,
        });
    }
    None
}

/// Why `dp_bits`-bit CRT exponents are unsafe for an `n`-bit key with an `e` of about `n`
/// bits (rebalanced RSA), or `None`.
pub fn rebalanced_weakness(n_bits: u32, dp_bits: u32) -> Option<Weakness> {
    let n = f64::from(n_bits);
    if dp_bits <= 160 {
        return Some(Weakness::SquareRootSearch { dp_bits });
    }
    if f64::from(dp_bits) < 0.122 * n {
        return Some(Weakness::TakayasuLuPeng {
            dp_bits,
            modulus_bits: n_bits,
        });
    }
    let min = rebalanced_dp_min_bits(n_bits);
    if dp_bits < min {
        return Some(Weakness::BelowMargin { dp_bits, min });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_match_nist() {
        assert_eq!(security_level(1024), 80);
        assert_eq!(security_level(2048), 112);
        assert_eq!(security_level(3072), 128);
        assert_eq!(security_level(4096), 152);
        assert_eq!(security_level(8192), 200);
    }

    #[test]
    fn defaults_match_the_issue_table() {
        assert_eq!(rebalanced_dp_bits(2048), 320);
        assert_eq!(rebalanced_dp_bits(3072), 448);
        assert_eq!(rebalanced_dp_bits(4096), 576);
        assert_eq!(short_e_sizes(2048), (576, 576));
        assert_eq!(short_e_sizes(3072), (832, 832));
        assert_eq!(short_e_sizes(4096), (1120, 1088));
    }

    #[test]
    fn defaults_are_not_weak_and_paper_sizes_are() {
        for n in [1024, 2048, 3072, 4096, 8192] {
            assert!(rebalanced_weakness(n, rebalanced_dp_bits(n)).is_none());
            let (e, d) = short_e_sizes(n);
            assert!(short_e_weakness(n, e, d).is_none(), "{n}");
        }
        assert_eq!(
            rebalanced_weakness(1024, 160),
            Some(Weakness::SquareRootSearch { dp_bits: 160 })
        );
        assert_eq!(
            short_e_weakness(1024, 568, 160),
            Some(Weakness::BleichenbacherMay { dp_bits: 160 })
        );
        assert_eq!(
            short_e_weakness(1024, 512, 198),
            Some(Weakness::BleichenbacherMay { dp_bits: 198 })
        );
    }

    #[test]
    fn weaknesses_carry_their_sizes_and_read_as_before() {
        // 0.122 * 2048 = 249.856: the bound is printed rounded.
        let w = rebalanced_weakness(2048, 200).unwrap();
        assert_eq!(
            w,
            Weakness::TakayasuLuPeng {
                dp_bits: 200,
                modulus_bits: 2048
            }
        );
        assert_eq!(
            w.to_string(),
            "d_p of 200 bits is below N^0.122 (250 bits): broken by Takayasu-Lu-Peng"
        );
        let w = short_e_weakness(2048, 576, 560).unwrap();
        assert_eq!(
            w,
            Weakness::NearBleichenbacherMay {
                dp_bits: 560,
                min: 576
            }
        );
        assert_eq!(
            w.to_string(),
            "d_p of 560 bits is less than n/4 + 64 = 576 bits: too close to the \
             Bleichenbacher-May bound"
        );
    }
}

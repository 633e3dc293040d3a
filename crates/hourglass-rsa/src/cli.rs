//! Command-line argument groups for RSA key generation (the `clap` feature), shared by every
//! surface that makes keys (the `hourglass` command line and its benchmarks).

use clap::{Args, ValueEnum};
use hourglass_arith::prime::{fips186_5_mr_rounds, PrimalityTest};
use hourglass_arith::Integer;

use crate::{Insecurity, KeyGenOptions, KeygenOption, ParamError, Result, Variant};

/// The RSA variants, as `--variant` names them.
#[derive(ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum VariantArg {
    Standard,
    Crt,
    Rebalanced,
    SchemeA,
    SchemeB,
}

impl From<VariantArg> for Variant {
    fn from(v: VariantArg) -> Self {
        match v {
            VariantArg::Standard => Variant::Standard,
            VariantArg::Crt => Variant::Crt,
            VariantArg::Rebalanced => Variant::Rebalanced,
            VariantArg::SchemeA => Variant::SchemeA,
            VariantArg::SchemeB => Variant::SchemeB,
        }
    }
}

/// Options that shape key generation (shared with the benchmarks).
#[derive(Args, Debug, Clone)]
pub struct KeygenShape {
    /// Which RSA variant.
    #[arg(long, value_enum, default_value = "crt")]
    variant: VariantArg,
    /// Modulus size in bits (1024 to 8192 without --allow-insecure).
    #[arg(long, default_value_t = 3072)]
    bits: u32,
    /// Public exponent for standard/crt (decimal or 0x-hex).
    #[arg(long, value_name = "E")]
    e: Option<String>,
    /// Bits of the CRT exponents d_p, d_q (rebalanced, scheme-a, scheme-b).
    #[arg(long, value_name = "BITS")]
    dp_bits: Option<u32>,
    /// Bits of the public exponent (scheme-a, scheme-b).
    #[arg(long, value_name = "BITS")]
    e_bits: Option<u32>,
    /// Bits of scheme A's extra factor k_p2.
    #[arg(long, value_name = "BITS", default_value_t = 56)]
    kp2_bits: u32,
    /// Miller-Rabin rounds with random bases (default: FIPS 186-5 for the prime size; the
    /// RSAtron post uses 12).
    #[arg(long, value_name = "N")]
    mr_rounds: Option<u32>,
    /// Skip the strong Lucas test (Miller-Rabin only, as in the RSAtron post).
    #[arg(long)]
    no_lucas: bool,
    /// Search for p and q on this many threads (1 or 2).
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Accept parameters that published attacks break (prints why).
    #[arg(long)]
    allow_insecure: bool,
}

impl KeygenShape {
    /// Threads requested for the prime search.
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Builds the library options, printing warnings and refusal reasons.
    pub fn options(&self) -> Result<KeyGenOptions> {
        let variant = Variant::from(self.variant);
        if !(64..=16384).contains(&self.bits) {
            return Err(ParamError::BitsOption {
                bits: self.bits,
                min: 64,
                max: 16384,
            }
            .into());
        }
        if !(1024..=8192).contains(&self.bits) && !self.allow_insecure {
            return Err(Insecurity::UnsupportedBits {
                bits: self.bits,
                min: 1024,
                max: 8192,
            }
            .into());
        }
        let mut opts = KeyGenOptions::new(self.bits, variant)
            .allow_insecure(self.allow_insecure)
            .threads(self.threads)
            .kp2_bits(self.kp2_bits);
        if let Some(e) = &self.e {
            if !matches!(variant, Variant::Standard | Variant::Crt) {
                return Err(ParamError::OptionNotForVariant {
                    option: KeygenOption::E,
                    variant,
                }
                .into());
            }
            opts = opts.public_exponent(parse_integer(e)?);
        }
        if let Some(b) = self.dp_bits {
            if matches!(variant, Variant::Standard | Variant::Crt) {
                return Err(ParamError::OptionNotForVariant {
                    option: KeygenOption::DpBits,
                    variant,
                }
                .into());
            }
            opts = opts.dp_bits(b);
        }
        if let Some(b) = self.e_bits {
            if !matches!(variant, Variant::SchemeA | Variant::SchemeB) {
                return Err(ParamError::OptionNotForVariant {
                    option: KeygenOption::EBits,
                    variant,
                }
                .into());
            }
            opts = opts.e_bits(b);
        }
        if self.mr_rounds.is_some() || self.no_lucas {
            let rounds = self
                .mr_rounds
                .unwrap_or_else(|| fips186_5_mr_rounds(self.bits / 2));
            opts = opts.primality(PrimalityTest {
                mr_rounds: rounds,
                lucas: !self.no_lucas,
            });
        }
        let review = opts.review()?;
        for w in &review.warnings {
            eprintln!("hourglass: warning: {w}");
        }
        if !review.insecure.is_empty() {
            if self.allow_insecure {
                for why in &review.insecure {
                    eprintln!("hourglass: warning: INSECURE (allowed by --allow-insecure): {why}");
                }
            } else {
                return Err(Insecurity::Weaknesses(review.insecure).into());
            }
        }
        Ok(opts)
    }
}

/// `--e`'s value: decimal or 0x-hex.
fn parse_integer(s: &str) -> std::result::Result<Integer, ParamError> {
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => (h, 16),
        None => (s, 10),
    };
    Integer::from_str_radix(digits, radix).map_err(|source| ParamError::PublicExponentSyntax {
        text: s.to_string(),
        source,
    })
}

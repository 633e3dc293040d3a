//! The group `Z_N* / {+1, -1}` of an RSA modulus of unknown factorisation.
//!
//! Elements are represented canonically by `min(v, N - v)`, so `v` and `-v` are the same
//! element and a prover cannot pass `-y` off as a second valid output: `-1` has order two in
//! `Z_N*`, and working modulo `{+1, -1}` removes that low-order element (Boneh-Bünz-Fisch).
//! Every element a verifier receives must already be in canonical form (`0 < v <= (N - 1) / 2`)
//! and the product of all of them must be a unit, which also rejects zero and any value sharing
//! a factor with `N`.

use rug::integer::Order;
use rug::Integer;
use sha2::{Digest, Sha512};

use crate::error::{InputError, ModulusError, Result};

/// The RSA Factoring Challenge's RSA-2048 number (RSA Laboratories, 1991): 617 decimal digits,
/// 2048 bits, unfactored; nobody knows its factors, so nobody holds a trapdoor.
pub const RSA_2048_DECIMAL: &str = concat!(
    "25195908475657893494027183240048398571429282126204032027777137836043662020707595556264018525880784",
    "4069182906412495150821892985591491761845028084891200728449926873928072877767359714183472702618963750149718246911",
    "6507761337985909570009733045974880842840179742910064245869181719511874612151517265463228221686998754918242243363",
    "7259085141865462043576798423387184774447920739934236584823824281198163815010674810451660377306056201619676256133",
    "8441436038339044149526344321901146575444541784240209246165157233507787077498171257724679629263863563732899121548",
    "31438167899885040445364023527381951378636564391212010397122822120720357",
);

/// The smallest modulus accepted without [`RsaGroup::new_insecure`]: 1024 bits is already far
/// below what a long-lived VDF should use (2048 is the default).
pub const MIN_MODULUS_BITS: u32 = 1024;
/// The smallest modulus [`RsaGroup::new_insecure`] accepts (tests and experiments only).
pub const MIN_INSECURE_MODULUS_BITS: u32 = 64;
/// The largest modulus accepted.
pub const MAX_MODULUS_BITS: u32 = 8192;

/// Domain separation for hashing inputs to group elements.
const INPUT_DOMAIN: &[u8] = b"hourglass-vdf-v1/input-to-group";

/// Where a group's modulus comes from: a built-in modulus by name, or any other.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModulusSource {
    /// A built-in modulus (`rsa-2048`).
    Builtin(&'static str),
    /// A modulus given by its value (a key file, a distributed key generation, a setup).
    Explicit,
}

/// The group `Z_N* / {+1, -1}`.
#[derive(Clone)]
pub struct RsaGroup {
    n: Integer,
    half: Integer,
    bytes: usize,
    source: ModulusSource,
    /// IFMA arithmetic modulo `n`, when the CPU has it.
    #[cfg(target_arch = "x86_64")]
    ifma: Option<std::sync::Arc<hourglass_arith::mont::ifma::IfmaContext>>,
}

impl std::fmt::Debug for RsaGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RsaGroup")
            .field("bits", &self.n.significant_bits())
            .field("source", &self.source)
            .finish()
    }
}

impl PartialEq for RsaGroup {
    fn eq(&self, other: &Self) -> bool {
        self.n == other.n
    }
}

impl Eq for RsaGroup {}

impl RsaGroup {
    /// The group of the RSA-2048 challenge number (the default).
    pub fn rsa_2048() -> Self {
        let n = Integer::from_str_radix(RSA_2048_DECIMAL, 10)
            .unwrap_or_else(|_| unreachable!("the built-in constant is decimal"));
        Self::build(n, ModulusSource::Builtin("rsa-2048"))
    }

    /// A built-in group by name (`"rsa-2048"`), or `None`.
    pub fn builtin(name: &str) -> Option<Self> {
        match name {
            "rsa-2048" => Some(Self::rsa_2048()),
            _ => None,
        }
    }

    /// The names of the built-in moduli.
    pub fn builtin_names() -> &'static [&'static str] {
        &["rsa-2048"]
    }

    /// The group of modulus `n`: odd, at least [`MIN_MODULUS_BITS`] bits, without prime factors
    /// below 2^16 and not a perfect power of small degree (cheap checks that rule out moduli
    /// whose group order is easy to find; they cannot prove that nobody knows the factors).
    pub fn new(n: Integer) -> Result<Self> {
        Self::checked(n, MIN_MODULUS_BITS)
    }

    /// Like [`RsaGroup::new`] but accepts moduli from [`MIN_INSECURE_MODULUS_BITS`] bits: for
    /// tests and experiments only (small moduli are factored in seconds, and then every
    /// proof can be forged).
    pub fn new_insecure(n: Integer) -> Result<Self> {
        Self::checked(n, MIN_INSECURE_MODULUS_BITS)
    }

    fn checked(n: Integer, min_bits: u32) -> Result<Self> {
        let bits = n.significant_bits();
        if bits < min_bits {
            return Err(ModulusError::TooSmall {
                bits,
                min: min_bits,
            }
            .into());
        }
        if bits > MAX_MODULUS_BITS {
            return Err(ModulusError::TooLarge {
                bits,
                max: MAX_MODULUS_BITS,
            }
            .into());
        }
        if n.is_even() {
            return Err(ModulusError::Even.into());
        }
        let g = Integer::from(n.gcd_ref(hourglass_arith::prime::small_primorial()));
        if g != 1 {
            return Err(ModulusError::SmallFactor { factor: g }.into());
        }
        if n.is_perfect_power() {
            return Err(ModulusError::PerfectPower.into());
        }
        if n.is_probably_prime(30) != rug::integer::IsPrime::No {
            return Err(ModulusError::Prime.into());
        }
        Ok(Self::build(n, ModulusSource::Explicit))
    }

    fn build(n: Integer, source: ModulusSource) -> Self {
        let half = Integer::from(&n - 1u32) >> 1u32;
        let bytes = (n.significant_bits() as usize).div_ceil(8);
        Self {
            // Small (test) moduli keep to GMP, with the squaring engine's threshold.
            #[cfg(target_arch = "x86_64")]
            ifma: (n.significant_bits() >= hourglass_arith::mont::IFMA_MIN_BITS)
                .then(|| hourglass_arith::mont::ifma::IfmaContext::new(&n).map(std::sync::Arc::new))
                .flatten(),
            n,
            half,
            bytes,
            source,
        }
    }

    /// The IFMA context of the group, when this CPU has IFMA.
    #[cfg(target_arch = "x86_64")]
    pub fn ifma_context(&self) -> Option<&hourglass_arith::mont::ifma::IfmaContext> {
        self.ifma.as_deref()
    }

    /// The modulus `N`.
    pub fn modulus(&self) -> &Integer {
        &self.n
    }

    /// Where the modulus comes from.
    pub fn source(&self) -> &ModulusSource {
        &self.source
    }

    /// The name of a built-in modulus.
    pub fn name(&self) -> Option<&'static str> {
        match self.source {
            ModulusSource::Builtin(name) => Some(name),
            ModulusSource::Explicit => None,
        }
    }

    /// The modulus for people: a built-in's name, else its size and first hex digits (`a
    /// 2048-bit modulus c7970ceedcc3b075...`).
    pub fn describe(&self) -> String {
        match self.name() {
            Some(name) => name.to_string(),
            None => {
                let hex = self.n.to_string_radix(16);
                format!(
                    "a {}-bit modulus {}...",
                    self.bits(),
                    &hex[..hex.len().min(16)]
                )
            }
        }
    }

    /// Bits of `N`.
    pub fn bits(&self) -> u32 {
        self.n.significant_bits()
    }

    /// Bytes of an encoded element (the byte length of `N`).
    pub fn element_bytes(&self) -> usize {
        self.bytes
    }

    /// The canonical representative `min(v mod N, N - v mod N)` of `v`'s class.
    pub fn canonical(&self, v: &Integer) -> Integer {
        let r = Integer::from(v.modulo_ref(&self.n));
        if r > self.half {
            Integer::from(&self.n - &r)
        } else {
            r
        }
    }

    /// Whether `v` is a canonical representative (`0 < v <= (N - 1) / 2`).
    pub fn is_canonical(&self, v: &Integer) -> bool {
        *v > 0 && *v <= self.half
    }

    /// `a b mod N` (not canonicalised).
    pub fn mul(&self, a: &Integer, b: &Integer) -> Integer {
        let mut p = Integer::from(a * b);
        p %= &self.n;
        p
    }

    /// Whether every value in `values` is a unit modulo `N`, by one GCD of their product.
    pub fn all_units<'a>(&self, values: impl IntoIterator<Item = &'a Integer>) -> bool {
        let mut product = Integer::from(1);
        for v in values {
            product *= v;
            product %= &self.n;
        }
        product != 0 && product.gcd(&self.n) == 1
    }

    /// `N` as big-endian bytes of [`RsaGroup::element_bytes`].
    pub fn modulus_bytes(&self) -> Vec<u8> {
        self.encode(&self.n)
    }

    /// `v` (below `N`) as big-endian bytes of exactly [`RsaGroup::element_bytes`].
    pub fn encode(&self, v: &Integer) -> Vec<u8> {
        let digits = v.to_digits::<u8>(Order::Msf);
        let mut out = vec![0u8; self.bytes.saturating_sub(digits.len())];
        out.extend_from_slice(&digits);
        out
    }

    /// Maps an input message to a group element: SHA-512 in counter mode over the domain tag,
    /// `N` and the message, expanded to the modulus length plus 128 bits, reduced modulo `N`
    /// and made canonical. Fails only for the identity or a non-unit (probability about
    /// `2^-1000`), which would reveal a factor of `N`.
    pub fn hash_to_element(&self, message: &[u8]) -> Result<Integer> {
        let mut base = Sha512::new();
        base.update(INPUT_DOMAIN);
        base.update((self.bytes as u32).to_be_bytes());
        base.update(self.modulus_bytes());
        base.update((message.len() as u64).to_be_bytes());
        base.update(message);
        let want = self.bytes + 16;
        let mut wide = Vec::with_capacity(want + 64);
        let mut counter = 0u32;
        while wide.len() < want {
            let mut h = base.clone();
            h.update(counter.to_be_bytes());
            wide.extend_from_slice(&h.finalize());
            counter += 1;
        }
        wide.truncate(want);
        let x = self.canonical(&Integer::from_digits(&wide, Order::Msf));
        if x <= 1 || !self.all_units([&x]) {
            return Err(InputError::Degenerate.into());
        }
        Ok(x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rsa_2048_is_the_challenge_number() {
        assert_eq!(RSA_2048_DECIMAL.len(), 617);
        let g = RsaGroup::rsa_2048();
        assert_eq!(g.bits(), 2048);
        assert_eq!(g.element_bytes(), 256);
        // Passes the checks an explicit modulus must pass.
        assert!(RsaGroup::new(g.modulus().clone()).is_ok());
        assert_eq!(g.name(), Some("rsa-2048"));
    }

    #[test]
    fn bad_moduli_are_refused() {
        let p = (Integer::from(1) << 600u32).next_prime();
        let q = (Integer::from(1) << 601u32).next_prime();
        let n = Integer::from(&p * &q);
        let refusal = |n: Integer| match RsaGroup::new(n) {
            Err(crate::error::Error::InvalidModulus(why)) => why,
            other => panic!("expected an unusable modulus, got {other:?}"),
        };
        assert!(RsaGroup::new(n.clone()).is_ok());
        assert_eq!(refusal(Integer::from(&n << 1u32)), ModulusError::Even);
        assert_eq!(
            refusal(Integer::from(&n * 65521u32)),
            ModulusError::SmallFactor {
                factor: Integer::from(65521)
            }
        );
        assert_eq!(refusal(Integer::from(&p * &p)), ModulusError::PerfectPower);
        let big_prime = (Integer::from(1) << 1100u32).next_prime();
        assert_eq!(refusal(big_prime), ModulusError::Prime);
        let small =
            (Integer::from(1) << 300u32).next_prime() * (Integer::from(1) << 301u32).next_prime();
        let why = refusal(small.clone());
        assert_eq!(
            why,
            ModulusError::TooSmall {
                bits: 602,
                min: MIN_MODULUS_BITS
            }
        );
        assert_eq!(
            why.to_string(),
            format!("a 602-bit modulus is too small (at least {MIN_MODULUS_BITS} bits)")
        );
        assert!(RsaGroup::new_insecure(small).is_ok());
        assert!(RsaGroup::new_insecure(Integer::from(15)).is_err());
    }

    #[test]
    fn canonical_form_identifies_v_and_minus_v() {
        let g = RsaGroup::rsa_2048();
        let v = Integer::from(123456789u64);
        let minus = Integer::from(g.modulus() - &v);
        assert_eq!(g.canonical(&v), v);
        assert_eq!(g.canonical(&minus), v);
        assert!(g.is_canonical(&v));
        assert!(!g.is_canonical(&minus));
        assert!(!g.is_canonical(&Integer::ZERO));
    }

    #[test]
    fn inputs_hash_to_distinct_canonical_units() {
        let g = RsaGroup::rsa_2048();
        let a = g.hash_to_element(b"alpha").unwrap();
        let b = g.hash_to_element(b"beta").unwrap();
        let empty = g.hash_to_element(b"").unwrap();
        assert_ne!(a, b);
        assert_ne!(a, empty);
        assert!(g.is_canonical(&a) && g.is_canonical(&b));
        assert!(a.significant_bits() > 2000, "uses the whole range");
        assert_eq!(a, g.hash_to_element(b"alpha").unwrap(), "deterministic");
    }
}

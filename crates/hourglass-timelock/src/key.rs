//! Puzzle keys: generation, the public triple `(n, t, z)`, file encodings and verification.

use hourglass_arith::entropy::{random_exact_bits, EntropySource};
use hourglass_arith::hash_to_int::hash_to_residue;
use hourglass_arith::modular::{pow2_mod_ct, pow_mod_ct};
use hourglass_arith::prime::{random_prime, PrimeRequest};
use hourglass_arith::secret::{eq_ct, inverse_odd_ct, SecretInt};
use hourglass_arith::squaring::{check_modulus_bits, MAX_MODULUS_BITS};
use hourglass_arith::Integer;
use hourglass_rsa::{PrivateKey, Variant};
use rug::integer::Order;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::json;
pub use crate::puzzle_hash::{HashNameError, PuzzleHash};
use crate::{Error, Field, FileKind, Fingerprinted, Insecurity, ParamError, ParseError, Result};

/// Domain separation tag of the document link's input (docs/FORMATS.md).
pub const DOCUMENT_INPUT_DST: &[u8] = b"HOURGLASS-V2-PUZZLE-INPUT";

/// The puzzle input for a document digest: a full-domain element of `[2, n-2]`,
/// `m = OS2IP(expand_message_xmd(SHA-256, digest, "HOURGLASS-V2-PUZZLE-INPUT", L)) mod n` with
/// `L = ceil((bits(n) + 128) / 8)` (RFC 9380's `hash_to_field`; see
/// [`hourglass_arith::hash_to_int`]).
///
/// Why full-domain: `m -> m^(2^t) mod n` is multiplicative, so if inputs were small integers
/// (as `0x01 || digest` was in format version 1), an attacker could compute `p^(2^t)` for many
/// small primes `p` in parallel and then "solve" instantly any document whose input factors
/// over them. An input spread over the whole group has no such structure.
pub fn input_from_digest(n: &Integer, digest: &[u8]) -> Result<Integer> {
    Ok(hash_to_residue(digest, DOCUMENT_INPUT_DST, n)?)
}
/// The puzzle input for a whole document held in memory.
pub fn document_input(key: &PuzzlePublicKey, hash: PuzzleHash, document: &[u8]) -> Result<Integer> {
    input_from_digest(key.n(), &hash.digest(document))
}

/// What a puzzle key was made for (informational; the security lies in `t`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PuzzleMeta {
    /// Intended solving time in seconds on the reference machine.
    pub duration_secs: f64,
    /// Reference rate: sequential squarings per second.
    pub rate: f64,
    /// Whether `rate` was measured on the issuing machine (rather than given).
    pub rate_measured: bool,
    /// Hash that documents are to be digested with.
    pub hash: PuzzleHash,
    /// Who issued the key.
    pub issuer: String,
    /// Creation time, RFC 3339 UTC.
    pub created: String,
}

/// A public puzzle key `(n, t, z)`: the public exponent is `e~ = 2^t + z`.
#[derive(Debug, Clone, PartialEq)]
pub struct PuzzlePublicKey {
    n: Integer,
    t: u64,
    z: Integer,
    meta: PuzzleMeta,
}

/// Fingerprint of everything in a public key that changes a verdict or the credited time: `n`,
/// `t`, `z` and every metadata field (SHA-256 over a length-prefixed encoding; see
/// docs/FORMATS.md). Editing any field of the JSON changes it, so an edited file is refused.
fn fingerprint_of(n: &Integer, t: u64, z: &Integer, meta: &PuzzleMeta) -> [u8; 32] {
    let mut h = Sha256::new();
    let mut field = |bytes: &[u8]| {
        Digest::update(&mut h, (bytes.len() as u32).to_be_bytes());
        Digest::update(&mut h, bytes);
    };
    field(b"hourglass-puzzle-v2");
    field(&n.to_digits::<u8>(Order::Msf));
    field(&t.to_be_bytes());
    field(&z.to_digits::<u8>(Order::Msf));
    field(meta.hash.name().as_bytes());
    field(&meta.duration_secs.to_bits().to_be_bytes());
    field(&meta.rate.to_bits().to_be_bytes());
    field(&[u8::from(meta.rate_measured)]);
    field(meta.issuer.as_bytes());
    field(meta.created.as_bytes());
    h.finalize().into()
}

impl PuzzlePublicKey {
    /// Assembles a public key, checking its ranges.
    pub fn new(n: Integer, t: u64, z: Integer, meta: PuzzleMeta) -> Result<Self> {
        if n.significant_bits() < MIN_MODULUS_BITS {
            return Err(ParamError::PuzzleModulusTooSmall {
                bits: n.significant_bits(),
                min: MIN_MODULUS_BITS,
            }
            .into());
        }
        if n.is_even() {
            return Err(ParamError::PuzzleModulusEven {
                min: MIN_MODULUS_BITS,
            }
            .into());
        }
        check_modulus_bits(n.significant_bits())?;
        if t == 0 {
            return Err(ParamError::ZeroSquarings.into());
        }
        if z <= 0 || z.significant_bits() > 2 * n.significant_bits() + 1 {
            return Err(ParamError::ZOutOfRange.into());
        }
        if !(meta.rate.is_finite()
            && meta.rate > 0.0
            && meta.duration_secs.is_finite()
            && meta.duration_secs >= 0.0)
        {
            return Err(ParamError::RateOrDuration.into());
        }
        Ok(Self { n, t, z, meta })
    }

    /// The modulus.
    pub fn n(&self) -> &Integer {
        &self.n
    }
    /// Squarings to solve.
    pub fn t(&self) -> u64 {
        self.t
    }
    /// The low part of the public exponent.
    pub fn z(&self) -> &Integer {
        &self.z
    }
    /// Descriptive metadata.
    pub fn meta(&self) -> &PuzzleMeta {
        &self.meta
    }
    /// Modulus bits.
    pub fn bits(&self) -> u32 {
        self.n.significant_bits()
    }
    /// SHA-256 fingerprint of `(n, t, z)` and the metadata.
    pub fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(&self.n, self.t, &self.z, &self.meta)
    }
    /// The fingerprint in hex.
    pub fn fingerprint_hex(&self) -> String {
        hex::encode(self.fingerprint())
    }
    /// Time credited for one solution of this puzzle, in seconds (`t / rate`).
    pub fn credited_secs(&self) -> f64 {
        self.t as f64 / self.meta.rate
    }

    /// The JSON public key file.
    pub fn to_json(&self) -> String {
        let j = PublicJson {
            kind: PUBLIC_TYPE.into(),
            version: KEY_VERSION,
            bits: self.bits(),
            n: format!("{:x}", self.n),
            t: self.t,
            z: format!("{:x}", self.z),
            meta: self.meta.clone(),
            fingerprint: self.fingerprint_hex(),
        };
        json::to_text(&j)
    }

    /// Parses a JSON public key file, checking its fingerprint.
    pub fn from_json(text: &str) -> Result<Self> {
        Self::from_public_json(json::parse_versioned(
            FileKind::PuzzlePublicKey,
            text,
            PUBLIC_TYPE,
            KEY_VERSION,
        )?)
    }

    fn from_public_json(j: PublicJson) -> Result<Self> {
        let what = FileKind::PuzzlePublicKey;
        let n = json::hex_integer(what, Field::N, &j.n)?;
        let z = json::hex_integer(what, Field::Z, &j.z)?;
        let key = Self::new(n, j.t, z, j.meta)?;
        if key.bits() != j.bits {
            return Err(Error::parse(
                what,
                ParseError::BitsMismatch {
                    recorded: j.bits,
                    actual: key.bits(),
                },
            ));
        }
        if key.fingerprint_hex() != j.fingerprint {
            return Err(Error::parse(
                what,
                ParseError::FingerprintMismatch {
                    of: Fingerprinted::Key,
                },
            ));
        }
        Ok(key)
    }
}

const PUBLIC_TYPE: &str = "hourglass-puzzle-public-key";
/// Version 2: full-domain inputs and a fingerprint over every field (docs/FORMATS.md).
const KEY_VERSION: u32 = 2;
const PRIVATE_TYPE: &str = "hourglass-puzzle-private-key";

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PublicJson {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    bits: u32,
    n: String,
    t: u64,
    z: String,
    #[serde(flatten)]
    meta: PuzzleMeta,
    fingerprint: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PrivateJson {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    public: PublicJson,
    p: SecretHex,
    q: SecretHex,
    d: SecretHex,
    e: String,
}

/// The hex text of a secret field, wiped when dropped (parsing and writing key files).
#[derive(Serialize, Deserialize)]
#[serde(transparent)]
struct SecretHex(String);

impl Drop for SecretHex {
    fn drop(&mut self) {
        zeroize::Zeroize::zeroize(&mut self.0);
    }
}

/// A private puzzle key: the RSA key `(n, d)` behind a public puzzle key.
#[derive(Debug, Clone)]
pub struct PuzzleKey {
    public: PuzzlePublicKey,
    rsa: PrivateKey,
}

impl PuzzleKey {
    /// The public half.
    pub fn public_key(&self) -> PuzzlePublicKey {
        self.public.clone()
    }

    /// The public half, borrowed.
    pub fn public(&self) -> &PuzzlePublicKey {
        &self.public
    }

    /// The underlying RSA key (constant-time, blinded, fault-checked private operations).
    pub fn rsa(&self) -> &PrivateKey {
        &self.rsa
    }

    /// Checks a solution: `c^d mod n == m` (one CRT private-key operation).
    pub fn verify(&self, m: &Integer, c: &Integer, rng: &mut dyn EntropySource) -> Result<bool> {
        if *c <= 0 || c >= self.public.n() {
            return Ok(false);
        }
        // c^d is not released: compared over all of n's limbs, with no early exit.
        let cd = SecretInt::new(self.rsa.private_op(c, rng)?);
        Ok(eq_ct(cd.expose(), m, self.public.n()))
    }

    /// `m^(2^t mod phi(n)) mod n`: the result of `t` squarings of `m`, by the trapdoor (for the
    /// open-ended mode, where the author chose `t`).
    pub fn shortcut_squarings(&self, m: &Integer, t: u64) -> Result<Integer> {
        let [_, p, q, ..] = self.rsa.secret_components();
        let phi =
            SecretInt::new(Integer::from(p.expose() - 1u32) * Integer::from(q.expose() - 1u32));
        // r is never 0: no phi(n) of an RSA modulus divides 2^t (pow_mod_ct would refuse it).
        let r = SecretInt::new(pow2_mod_ct(t, phi.expose())?);
        Ok(pow_mod_ct(m, r.expose(), self.public.n())?)
    }

    /// The JSON private key file (secret: write it with mode 0600).
    pub fn to_json(&self) -> zeroize::Zeroizing<String> {
        let [d, p, q, ..] = self.rsa.secret_components();
        let public: PublicJson = serde_json::from_str(&self.public.to_json())
            .unwrap_or_else(|_| unreachable!("own JSON parses"));
        let j = PrivateJson {
            kind: PRIVATE_TYPE.into(),
            version: KEY_VERSION,
            public,
            p: SecretHex(format!("{:x}", p.expose())),
            q: SecretHex(format!("{:x}", q.expose())),
            d: SecretHex(format!("{:x}", d.expose())),
            e: format!("{:x}", self.rsa.public().e()),
        };
        json::to_secret_text(&j)
    }

    /// Parses a JSON private key file and checks it is consistent with its public key.
    pub fn from_json(text: &str) -> Result<Self> {
        let what = FileKind::PuzzlePrivateKey;
        let j: PrivateJson = json::parse_versioned(what, text, PRIVATE_TYPE, KEY_VERSION)?;
        json::check_header(
            FileKind::PuzzlePublicKey,
            &j.public.kind,
            j.public.version,
            PUBLIC_TYPE,
            KEY_VERSION,
        )?;
        let public = PuzzlePublicKey::from_public_json(j.public)?;
        let field = |name: Field, v: &str| json::hex_integer(what, name, v);
        let (p, q, d, e) = (
            field(Field::P, &j.p.0)?,
            field(Field::Q, &j.q.0)?,
            field(Field::D, &j.d.0)?,
            field(Field::E, &j.e)?,
        );
        let rsa = PrivateKey::from_components(
            public.n().clone(),
            e,
            d,
            p,
            q,
            None,
            None,
            Some(Variant::Crt),
        )?;
        let key = Self { public, rsa };
        if key.expected_z()? != *key.public.z() {
            return Err(Error::parse(what, ParseError::ZMismatch));
        }
        Ok(key)
    }

    fn expected_z(&self) -> Result<Integer> {
        let [_, p, q, ..] = self.rsa.secret_components();
        let phi = Integer::from(p.expose() - 1u32) * Integer::from(q.expose() - 1u32);
        z_for(&phi, self.public.t(), self.rsa.public().e())
    }
}

/// `z = phi - (2^t mod phi) + e`, with `2^t mod phi` in time independent of `phi`'s value.
fn z_for(phi: &Integer, t: u64, e: &Integer) -> Result<Integer> {
    let r = SecretInt::new(pow2_mod_ct(t, phi)?);
    Ok(Integer::from(phi - r.expose()) + e)
}

/// Options for making a puzzle key.
#[derive(Debug, Clone)]
pub struct PuzzleKeyGen {
    bits: u32,
    t: u64,
    d_bits: u32,
    allow_insecure: bool,
    meta: PuzzleMeta,
}

/// Smallest private exponent size accepted by default. Once one solution `c = m^(e~)` is
/// public, `d` with `c^d = m` can be found by a kangaroo search in about `2^(bits/2)` steps,
/// so 256 bits give 2^128 work.
pub const MIN_D_BITS: u32 = 256;
/// Smallest puzzle modulus, in bits.
const MIN_MODULUS_BITS: u32 = 512;
/// Smallest private exponent size accepted even with [`PuzzleKeyGen::allow_insecure`].
pub const MIN_D_BITS_INSECURE: u32 = 64;

impl PuzzleKeyGen {
    /// A key of `bits` bits solved by `t` squarings, with a 256-bit `d`, SHA-256 documents, and
    /// a nominal rate of one squaring per microsecond (set [`Self::rate`] for the real one).
    pub fn new(bits: u32, t: u64) -> Self {
        Self {
            bits,
            t,
            d_bits: 256,
            allow_insecure: false,
            meta: PuzzleMeta {
                duration_secs: t as f64 / 1e6,
                rate: 1e6,
                rate_measured: false,
                hash: PuzzleHash::Sha256,
                issuer: String::new(),
                created: humantime::format_rfc3339_seconds(std::time::SystemTime::now())
                    .to_string(),
            },
        }
    }

    /// The reference rate (squarings per second) and whether it was measured here.
    pub fn rate(mut self, rate: f64, measured: bool) -> Self {
        self.meta.rate = rate;
        self.meta.rate_measured = measured;
        self.meta.duration_secs = self.t as f64 / rate;
        self
    }

    /// Size of the private exponent `d` (at least [`MIN_D_BITS`], unless
    /// [`Self::allow_insecure`]).
    pub fn d_bits(mut self, bits: u32) -> Self {
        self.d_bits = bits;
        self
    }

    /// Accepts a private exponent below [`MIN_D_BITS`] (down to [`MIN_D_BITS_INSECURE`]): for
    /// reproducing the paper's figures and for tests, never for real deadlines.
    pub fn allow_insecure(mut self, allow: bool) -> Self {
        self.allow_insecure = allow;
        self
    }

    /// Hash for documents.
    pub fn hash(mut self, hash: PuzzleHash) -> Self {
        self.meta.hash = hash;
        self
    }

    /// Issuer name.
    pub fn issuer(mut self, issuer: &str) -> Self {
        self.meta.issuer = issuer.to_string();
        self
    }

    /// Generates the key: fresh primes, a random `d`, `e = d^-1 mod phi`, `r = 2^t mod phi` (one
    /// modular exponentiation: milliseconds, not the paper's minutes) and `z = phi - r + e`.
    /// Every call makes a new modulus: no second exponent is ever issued for one.
    pub fn generate(&self, rng: &mut dyn EntropySource) -> Result<PuzzleKey> {
        if !(MIN_MODULUS_BITS..=MAX_MODULUS_BITS).contains(&self.bits) {
            return Err(ParamError::PuzzleModulusBits {
                bits: self.bits,
                min: MIN_MODULUS_BITS,
                max: MAX_MODULUS_BITS,
            }
            .into());
        }
        if self.d_bits + 16 > self.bits || self.d_bits < MIN_D_BITS_INSECURE {
            return Err(ParamError::PrivateExponentBits {
                d_bits: self.d_bits,
                min: MIN_D_BITS,
            }
            .into());
        }
        if self.d_bits < MIN_D_BITS && !self.allow_insecure {
            return Err(Insecurity::ShortPrivateExponent {
                d_bits: self.d_bits,
                min: MIN_D_BITS,
            }
            .into());
        }
        if self.t == 0 {
            return Err(ParamError::ZeroSquarings.into());
        }
        let half = self.bits / 2;
        loop {
            let p = random_prime(&PrimeRequest::new(self.bits - half), rng)?;
            let q = random_prime(&PrimeRequest::new(half), rng)?;
            if Integer::from(&p - &q).abs().significant_bits() <= half.saturating_sub(100) {
                continue;
            }
            let phi = SecretInt::new(Integer::from(&p - 1u32) * Integer::from(&q - 1u32));
            // e = d^-1 mod phi is the trapdoor: found in constant time (GMP's gcd and
            // inversion take time that depends on d and phi); a d that shares a factor with
            // phi is drawn again.
            let (d, e) = loop {
                let mut d = SecretInt::new(random_exact_bits(rng, self.d_bits)?);
                d.expose_mut().set_bit(0, true);
                match inverse_odd_ct(d.expose(), phi.expose()) {
                    Ok(e) => break (d.expose_owned(), e),
                    Err(hourglass_arith::Error::NotInvertible) => continue,
                    Err(other) => return Err(other.into()),
                }
            };
            let z = z_for(phi.expose(), self.t, &e)?;
            let n = Integer::from(&p * &q);
            let public = PuzzlePublicKey::new(n.clone(), self.t, z, self.meta.clone())?;
            let rsa = PrivateKey::from_components(n, e, d, p, q, None, None, Some(Variant::Crt))?;
            return Ok(PuzzleKey { public, rsa });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hourglass_arith::modular::pow_mod_vartime;

    /// A measured rate has all 53 bits of an f64; it must read back exactly, or the key's
    /// fingerprint (which covers the rate's bits) no longer matches (a bug found by the README
    /// test: `puzzle keygen --duration` keys were refused as modified).
    #[test]
    fn keys_with_measured_rates_read_back_with_their_fingerprint() {
        let mut rng = SeededEntropy::new(b"measured rate");
        // The first two read back one ulp off without serde_json's float_roundtrip.
        for rate in [
            181461.72276817466,
            189242.43304185194,
            7150563.727139904,
            1.0e6 / 3.0,
        ] {
            let key = PuzzleKeyGen::new(512, 1_000_003)
                .rate(rate, true)
                .generate(&mut rng)
                .unwrap();
            let public = key.public();
            let back = PuzzlePublicKey::from_json(&public.to_json()).unwrap();
            assert_eq!(back.fingerprint(), public.fingerprint(), "rate {rate}");
            assert_eq!(back.meta().rate.to_bits(), rate.to_bits());
            let private = PuzzleKey::from_json(&key.to_json()).unwrap();
            assert_eq!(private.public().fingerprint(), public.fingerprint());
        }
    }
    use hourglass_arith::entropy::SeededEntropy;
    use hourglass_arith::squaring::square_k_times;

    #[test]
    fn public_operation_equals_slow_exponentiation_and_verifies() {
        let mut rng = SeededEntropy::new(b"puzzle key");
        let key = PuzzleKeyGen::new(512, 1000).generate(&mut rng).unwrap();
        let public = key.public_key();
        let m = document_input(&public, PuzzleHash::Sha256, b"doc").unwrap();
        let alpha = square_k_times(&m, public.t(), public.n());
        let beta = pow_mod_vartime(&m, public.z(), public.n()).unwrap();
        let c = alpha * beta % public.n();
        // c = m^(2^t + z) directly:
        let e_tilde = (Integer::from(1) << 1000u32) + public.z();
        assert_eq!(c, pow_mod_vartime(&m, &e_tilde, public.n()).unwrap());
        assert!(key.verify(&m, &c, &mut rng).unwrap());
        let other = document_input(&public, PuzzleHash::Sha256, b"doc2").unwrap();
        assert!(!key.verify(&other, &c, &mut rng).unwrap());
        // Around the modulus's length too, where 2^t stops being below phi.
        for t in [1, 2, 100, 509, 510, 511, 512, 513, 1000, 4321] {
            assert_eq!(
                key.shortcut_squarings(&m, t).unwrap(),
                square_k_times(&m, t, public.n()),
                "t = {t}"
            );
        }
    }

    #[test]
    fn json_round_trips_and_detects_edits() {
        let mut rng = SeededEntropy::new(b"json");
        let key = PuzzleKeyGen::new(512, 77)
            .issuer("Test U")
            .generate(&mut rng)
            .unwrap();
        let pubj = key.public().to_json();
        assert_eq!(PuzzlePublicKey::from_json(&pubj).unwrap(), key.public_key());
        let privj = key.to_json();
        let back = PuzzleKey::from_json(&privj).unwrap();
        assert_eq!(back.public_key(), key.public_key());
        let edited = pubj.replace("\"t\": 77", "\"t\": 76");
        let err = PuzzlePublicKey::from_json(&edited).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Parse {
                    what: FileKind::PuzzlePublicKey,
                    why: ParseError::FingerprintMismatch {
                        of: Fingerprinted::Key
                    }
                }
            ),
            "{err:?}"
        );
        let newer = pubj.replace("\"version\": 2", "\"version\": 3");
        let err = PuzzlePublicKey::from_json(&newer).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Parse {
                    what: FileKind::PuzzlePublicKey,
                    why: ParseError::UnsupportedVersion {
                        found: 3,
                        supported: 2
                    }
                }
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "cannot parse puzzle public key: unsupported version 3 (this hourglass reads 2)"
        );
        assert!(PuzzlePublicKey::from_json("{}").is_err());
        assert!(PuzzleKey::from_json(&pubj).is_err());
    }

    #[test]
    fn every_hash_gives_an_input_below_n() {
        let mut rng = SeededEntropy::new(b"hashes");
        let key = PuzzleKeyGen::new(1024, 10).generate(&mut rng).unwrap();
        for h in PuzzleHash::ALL {
            let m = document_input(key.public(), h, b"x").unwrap();
            assert!(m > 1 && m < *key.public().n());
            assert_eq!(h.digest(b"x").len(), h.output_len());
            assert_eq!(PuzzleHash::from_name(h.name()), Some(h));
        }
    }

    #[test]
    fn bad_parameters_are_refused() {
        let mut rng = SeededEntropy::new(b"bad");
        assert!(PuzzleKeyGen::new(512, 0).generate(&mut rng).is_err());
        assert!(PuzzleKeyGen::new(512, 10)
            .d_bits(64)
            .generate(&mut rng)
            .is_err());
        assert!(PuzzleKeyGen::new(256, 10).generate(&mut rng).is_err());
        // Larger than the kernels support: refused before any prime is generated.
        let err = PuzzleKeyGen::new(8200, 10).generate(&mut rng).unwrap_err();
        assert!(err.to_string().contains("kernels"), "{err}");
        let huge = (Integer::from(1) << 9000u32) + 1u32;
        let meta = PuzzleKeyGen::new(512, 1)
            .generate(&mut rng)
            .unwrap()
            .public()
            .meta()
            .clone();
        let err = PuzzlePublicKey::new(huge, 5, Integer::from(3), meta).unwrap_err();
        assert!(err.to_string().contains("kernels"), "{err}");
    }

    /// A short private exponent (the kangaroo attack recovers d in 2^(bits/2) steps from one
    /// public solution) is refused unless explicitly allowed, and the refusal says why.
    #[test]
    fn short_private_exponents_need_allow_insecure() {
        let mut rng = SeededEntropy::new(b"short d");
        let err = PuzzleKeyGen::new(1024, 10)
            .d_bits(128)
            .generate(&mut rng)
            .unwrap_err();
        assert!(
            matches!(
                err,
                Error::Insecure(Insecurity::ShortPrivateExponent {
                    d_bits: 128,
                    min: MIN_D_BITS
                })
            ),
            "{err}"
        );
        assert!(err.to_string().contains("kangaroo"), "{err}");
        let key = PuzzleKeyGen::new(1024, 10)
            .d_bits(128)
            .allow_insecure(true)
            .generate(&mut rng)
            .unwrap();
        let m = document_input(key.public(), PuzzleHash::Sha256, b"x").unwrap();
        let c = pow_mod_vartime(
            &m,
            &((Integer::from(1) << 10u32) + key.public().z()),
            key.public().n(),
        )
        .unwrap();
        assert!(key.verify(&m, &c, &mut rng).unwrap());
        assert!(PuzzleKeyGen::new(1024, 10)
            .d_bits(32)
            .allow_insecure(true)
            .generate(&mut rng)
            .is_err());
    }
}

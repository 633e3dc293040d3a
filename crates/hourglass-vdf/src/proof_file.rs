//! The proof file: everything a verifier needs, as JSON (`docs/FORMATS.md`, section 15).
//!
//! ```json
//! {
//!   "format": "hourglass-vdf-proof",
//!   "version": 1,
//!   "scheme": "wesolowski",
//!   "modulus": "rsa-2048",
//!   "security_bits": 128,
//!   "iterations": 1000,
//!   "input": "68656c6c6f",
//!   "output": "<N-sized hex>",
//!   "proof": { "pi": "<N-sized hex>", "l": "<2k-bit hex>" }
//! }
//! ```
//!
//! `modulus` is a built-in name (`rsa-2048`) or `N` in lowercase hex. Group elements are
//! lowercase hex of exactly the byte length of `N`; `l` of exactly `2k / 8` bytes; the input is
//! lowercase hex of at most [`MAX_INPUT_BYTES`] bytes. A Pietrzak proof is
//! `{ "mu": [<N-sized hex>, ..] }`. Unknown fields, other versions, upper-case or short hex
//! are refused, so each proof has exactly one encoding.

use rug::integer::Order;
use rug::Integer;
use serde::{Deserialize, Serialize};

use crate::error::{Error, FormatError, InputError, ProofField, Result};
use crate::group::RsaGroup;
use crate::hash_prime::SecurityLevel;
use crate::pietrzak::{Pietrzak, PietrzakProof};
pub use crate::scheme::ProofScheme;
use crate::statement::{check_iterations, Statement};
use crate::traits::Vdf;
pub use crate::verdict::ProofVerdict;
use crate::verdict::Stated;
use crate::wesolowski::{Wesolowski, WesolowskiProof};

/// The `format` field.
pub const FORMAT: &str = "hourglass-vdf-proof";
/// The `version` field.
pub const VERSION: u32 = 1;
/// The largest input a proof file carries (VDF inputs are seeds and challenges; hash a
/// larger document first).
pub const MAX_INPUT_BYTES: usize = 1 << 16;
/// The largest proof file accepted.
pub const MAX_FILE_BYTES: usize = 1 << 20;

/// Which moduli a parser accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModulusPolicy {
    /// At least [`crate::group::MIN_MODULUS_BITS`] bits.
    Secure,
    /// Down to [`crate::group::MIN_INSECURE_MODULUS_BITS`] (tests, experiments).
    AllowInsecure,
}

/// Groups whose moduli were already checked, by their text in proof files.
#[derive(Debug, Default)]
pub struct GroupCache(std::collections::HashMap<String, RsaGroup>);

/// A proof of one of the schemes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AnyProof {
    /// A Wesolowski proof.
    Wesolowski(WesolowskiProof),
    /// A Pietrzak proof.
    Pietrzak(PietrzakProof),
}

impl AnyProof {
    /// The scheme name (`wesolowski` or `pietrzak`).
    pub fn scheme(&self) -> &'static str {
        match self {
            AnyProof::Wesolowski(_) => crate::wesolowski::SCHEME,
            AnyProof::Pietrzak(_) => crate::pietrzak::SCHEME,
        }
    }
}

/// A parsed proof file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProofFile {
    /// The group.
    pub group: RsaGroup,
    /// The input message (the VDF input is its hash to the group).
    pub input: Vec<u8>,
    /// `T`.
    pub iterations: u64,
    /// The security level.
    pub level: SecurityLevel,
    /// The output `y` (canonical).
    pub output: Integer,
    /// The proof.
    pub proof: AnyProof,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    format: String,
    version: u32,
    scheme: String,
    modulus: String,
    security_bits: u32,
    iterations: u64,
    input: String,
    output: String,
    proof: RawProof,
}

#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum RawProof {
    Wesolowski(RawWesolowski),
    Pietrzak(RawPietrzak),
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWesolowski {
    pi: String,
    l: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPietrzak {
    mu: Vec<String>,
}

fn fixed_hex(v: &Integer, bytes: usize) -> String {
    let digits = v.to_digits::<u8>(Order::Msf);
    let mut out = vec![0u8; bytes.saturating_sub(digits.len())];
    out.extend_from_slice(&digits);
    hex::encode(out)
}

fn parse_fixed_hex(s: &str, bytes: usize, field: ProofField) -> Result<Integer> {
    if s.len() != 2 * bytes || !s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(FormatError::FixedHex {
            field,
            digits: 2 * bytes,
        }
        .into());
    }
    let raw = hex::decode(s).map_err(|source| FormatError::Hex { field, source })?;
    Ok(Integer::from_digits(&raw, Order::Msf))
}

impl ProofFile {
    /// The statement the file claims: the input hashed to the group, the output, `T`, `k`.
    pub fn statement(&self) -> Result<Statement> {
        Ok(Statement {
            group: self.group.clone(),
            x: self.group.hash_to_element(&self.input)?,
            y: self.output.clone(),
            iterations: self.iterations,
            level: self.level,
        })
    }

    /// Verifies the proof with the default parameters of its scheme.
    pub fn verify(&self) -> Result<()> {
        let statement = self.statement()?;
        match &self.proof {
            AnyProof::Wesolowski(p) => Wesolowski::new(self.level)
                .with_threads(1)
                .verify(&statement, p),
            AnyProof::Pietrzak(p) => Pietrzak::new(self.level).verify(&statement, p),
        }
    }

    /// The verdict on this proof for a verifier who trusts the group `trusted` and, when
    /// given, expects the input `input`: invalid when the proof is over another modulus (its
    /// prover may know the factors), for another input, or does not verify. The one rule every
    /// surface prints.
    pub fn verify_against(&self, trusted: &RsaGroup, input: Option<&[u8]>) -> ProofVerdict {
        let stated = Stated {
            scheme: self.proof.scheme(),
            modulus: self.group.describe(),
            iterations: self.iterations,
            security_bits: self.level.bits(),
            output: hex::encode(self.group.encode(&self.output)),
        };
        if self.group != *trusted {
            let why = format!(
                "the proof is over {}, not the trusted modulus {}",
                self.group.describe(),
                trusted.describe()
            );
            return ProofVerdict::invalid(stated, why, true);
        }
        if input.is_some_and(|i| i != self.input) {
            return ProofVerdict::invalid(stated, "the proof is for another input".into(), false);
        }
        match self.verify() {
            Ok(()) => ProofVerdict::valid(stated),
            Err(e) => ProofVerdict::invalid(stated, e.to_string(), false),
        }
    }

    /// The JSON text on one line (for `.jsonl` batches).
    pub fn to_json_line(&self) -> String {
        let mut s =
            serde_json::to_string(&self.raw()).unwrap_or_else(|_| unreachable!("plain data"));
        s.push('\n');
        s
    }

    /// The JSON text (pretty-printed, fields in the documented order, a final newline).
    pub fn to_json(&self) -> String {
        let mut s = serde_json::to_string_pretty(&self.raw())
            .unwrap_or_else(|_| unreachable!("plain data"));
        s.push('\n');
        s
    }

    fn raw(&self) -> Raw {
        let eb = self.group.element_bytes();
        let proof = match &self.proof {
            AnyProof::Wesolowski(p) => RawProof::Wesolowski(RawWesolowski {
                pi: fixed_hex(&p.pi, eb),
                l: fixed_hex(&p.l, self.level.prime_bits() as usize / 8),
            }),
            AnyProof::Pietrzak(p) => RawProof::Pietrzak(RawPietrzak {
                mu: p.mu.iter().map(|m| fixed_hex(m, eb)).collect(),
            }),
        };
        Raw {
            format: FORMAT.into(),
            version: VERSION,
            scheme: self.proof.scheme().into(),
            modulus: match self.group.name() {
                Some(name) => name.into(),
                None => self.group.modulus().to_string_radix(16),
            },
            security_bits: self.level.bits(),
            iterations: self.iterations,
            input: hex::encode(&self.input),
            output: fixed_hex(&self.output, eb),
            proof,
        }
    }

    /// Parses and checks a proof file's structure (not the proof itself: see
    /// [`ProofFile::verify`]).
    pub fn from_json(text: &[u8], policy: ModulusPolicy) -> Result<Self> {
        Self::from_json_cached(text, policy, &mut GroupCache::default())
    }

    /// [`ProofFile::from_json`], taking already-checked groups from `groups` (a batch of
    /// proofs over one modulus checks it once).
    pub fn from_json_cached(
        text: &[u8],
        policy: ModulusPolicy,
        groups: &mut GroupCache,
    ) -> Result<Self> {
        if text.len() > MAX_FILE_BYTES {
            return Err(FormatError::TooLarge {
                max: MAX_FILE_BYTES,
            }
            .into());
        }
        let raw: Raw = serde_json::from_slice(text).map_err(|e| {
            // serde names the untagged enum it could not match; say what the object must be.
            if e.to_string().contains("untagged enum RawProof") {
                FormatError::ProofShape
            } else {
                FormatError::Json(e)
            }
        })?;
        if raw.format != FORMAT {
            return Err(FormatError::NotAProof { found: raw.format }.into());
        }
        if raw.version != VERSION {
            return Err(FormatError::UnknownVersion {
                found: raw.version,
                supported: VERSION,
            }
            .into());
        }
        let level = SecurityLevel::from_bits(raw.security_bits).map_err(in_file)?;
        check_iterations(raw.iterations).map_err(in_file)?;
        let group = match RsaGroup::builtin(&raw.modulus) {
            Some(g) => g,
            None if groups.0.contains_key(&raw.modulus) => groups.0[&raw.modulus].clone(),
            None => {
                let n = hourglass_arith::integer_from_canonical_hex(&raw.modulus).ok_or(
                    FormatError::ModulusSyntax {
                        builtin: RsaGroup::builtin_names(),
                    },
                )?;
                let group = match policy {
                    ModulusPolicy::Secure => RsaGroup::new(n)?,
                    ModulusPolicy::AllowInsecure => RsaGroup::new_insecure(n)?,
                };
                groups.0.insert(raw.modulus.clone(), group.clone());
                group
            }
        };
        if raw.input.len() > 2 * MAX_INPUT_BYTES
            || !raw
                .input
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        {
            return Err(FormatError::InputSyntax {
                max: MAX_INPUT_BYTES,
            }
            .into());
        }
        let input = hex::decode(&raw.input).map_err(|source| FormatError::Hex {
            field: ProofField::Input,
            source,
        })?;
        let eb = group.element_bytes();
        let output = parse_fixed_hex(&raw.output, eb, ProofField::Output)?;
        let proof = match (raw.scheme.as_str(), raw.proof) {
            (crate::wesolowski::SCHEME, RawProof::Wesolowski(p)) => {
                AnyProof::Wesolowski(WesolowskiProof {
                    pi: parse_fixed_hex(&p.pi, eb, ProofField::Pi)?,
                    l: parse_fixed_hex(&p.l, level.prime_bits() as usize / 8, ProofField::L)?,
                })
            }
            (crate::pietrzak::SCHEME, RawProof::Pietrzak(p)) => {
                if p.mu.len() > MAX_ROUNDS {
                    return Err(FormatError::TooManyRounds {
                        rounds: p.mu.len(),
                        max: MAX_ROUNDS,
                    }
                    .into());
                }
                AnyProof::Pietrzak(PietrzakProof {
                    mu: p
                        .mu
                        .iter()
                        .map(|m| parse_fixed_hex(m, eb, ProofField::Mu))
                        .collect::<Result<_>>()?,
                })
            }
            (crate::wesolowski::SCHEME, _) => {
                return Err(FormatError::SchemeMismatch {
                    scheme: ProofScheme::Wesolowski,
                }
                .into())
            }
            (crate::pietrzak::SCHEME, _) => {
                return Err(FormatError::SchemeMismatch {
                    scheme: ProofScheme::Pietrzak,
                }
                .into())
            }
            (other, _) => {
                return Err(FormatError::UnknownScheme {
                    found: other.to_string(),
                }
                .into())
            }
        };
        Ok(Self {
            group,
            input,
            iterations: raw.iterations,
            level,
            output,
            proof,
        })
    }
}
impl std::str::FromStr for ProofScheme {
    type Err = Error;

    /// `wesolowski` or `pietrzak`.
    fn from_str(s: &str) -> Result<Self> {
        match s {
            crate::wesolowski::SCHEME => Ok(ProofScheme::Wesolowski),
            crate::pietrzak::SCHEME => Ok(ProofScheme::Pietrzak),
            other => Err(FormatError::UnknownScheme {
                found: other.to_string(),
            }
            .into()),
        }
    }
}

/// Most Pietrzak rounds a proof file may hold (one per halving round: a generous bound, as
/// [`crate::MAX_ITERATIONS`] squarings need 50).
const MAX_ROUNDS: usize = 64;

/// An out-of-range parameter met in a proof file is a malformed file.
fn in_file(e: Error) -> Error {
    match e {
        Error::InvalidParameters(p) => FormatError::Parameters(p).into(),
        other => other,
    }
}

/// How [`prove_input`] ended.
#[derive(Debug)]
pub enum ProveOutcome {
    /// The proof file, checked, with the time of the evaluation and of the proof.
    Proved {
        /// The proof file (it verifies).
        file: Box<ProofFile>,
        /// Seconds spent on the squarings (this session).
        eval_secs: f64,
        /// Seconds spent proving.
        prove_secs: f64,
    },
    /// Stopped by the stop flag after `done` squarings (saved in the checkpoint, if any).
    Stopped {
        /// Squarings done and saved.
        done: u64,
    },
}

/// Evaluates the VDF on `input` (hashed to the group) for `iterations` squarings, proves it
/// with `scheme` and checks the proof before handing it out (a fault or a corrupt powers file
/// never yields a proof that does not verify). Resumes from `options.checkpoint` when it holds
/// this very run; `stop` interrupts cleanly.
#[allow(clippy::too_many_arguments)]
pub fn prove_input(
    group: &RsaGroup,
    input: &[u8],
    iterations: u64,
    scheme: ProofScheme,
    level: SecurityLevel,
    options: &crate::eval::EvalOptions,
    stop: &std::sync::atomic::AtomicBool,
    progress: &mut dyn FnMut(hourglass_arith::squaring::Progress),
) -> Result<ProveOutcome> {
    if input.len() > MAX_INPUT_BYTES {
        return Err(InputError::TooLong {
            len: input.len(),
            max: MAX_INPUT_BYTES,
        }
        .into());
    }
    let x = group.hash_to_element(input)?;
    let start = std::time::Instant::now();
    let evaluation = match crate::eval::evaluate(group, &x, iterations, options, stop, progress)? {
        crate::eval::EvalOutcome::Finished(e) => e,
        crate::eval::EvalOutcome::Stopped { done } => return Ok(ProveOutcome::Stopped { done }),
    };
    let eval_secs = start.elapsed().as_secs_f64();
    let start = std::time::Instant::now();
    let proof = match scheme {
        ProofScheme::Wesolowski => AnyProof::Wesolowski(Wesolowski::new(level).prove(&evaluation)?),
        ProofScheme::Pietrzak => AnyProof::Pietrzak(Pietrzak::new(level).prove(&evaluation)?),
    };
    let prove_secs = start.elapsed().as_secs_f64();
    let file = ProofFile {
        group: group.clone(),
        input: input.to_vec(),
        iterations,
        level,
        output: evaluation.output(),
        proof,
    };
    file.verify()?;
    Ok(ProveOutcome::Proved {
        file: Box::new(file),
        eval_secs,
        prove_secs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const VECTOR: &str = include_str!("../tests/vectors/wesolowski-rsa2048-t1000.json");

    /// The test vector with `field` replaced by `value`, parsed.
    fn parse_with(field: &str, value: serde_json::Value) -> Result<ProofFile> {
        let mut v: serde_json::Value = serde_json::from_str(VECTOR).unwrap();
        v[field] = value;
        ProofFile::from_json(v.to_string().as_bytes(), ModulusPolicy::Secure)
    }

    #[test]
    fn the_verdict_trusts_only_the_verifiers_modulus_and_input() {
        let file = ProofFile::from_json(VECTOR.as_bytes(), ModulusPolicy::Secure).unwrap();
        let rsa2048 = RsaGroup::builtin("rsa-2048").unwrap();
        let v = file.verify_against(&rsa2048, Some(&file.input));
        assert!(v.is_valid() && v.reason().is_none(), "{v:?}");
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["valid"], true);
        assert_eq!(json["modulus"], "rsa-2048");
        assert_eq!(json["iterations"], file.iterations);
        // Another input than the verifier expects.
        let v = file.verify_against(&rsa2048, Some(b"another input"));
        assert_eq!(v.reason(), Some("the proof is for another input"));
        assert!(!v.untrusted_modulus());
        assert_eq!(
            serde_json::to_value(&v).unwrap(),
            serde_json::json!({"valid": false, "reason": "the proof is for another input"})
        );
        // A verifier who trusts another modulus: refused before any proof is checked.
        let (toy, _) = crate::toy::toy_group();
        let v = file.verify_against(&toy, None);
        assert!(!v.is_valid() && v.untrusted_modulus(), "{v:?}");
        let why = v.reason().unwrap();
        assert!(
            why.starts_with("the proof is over rsa-2048, not the trusted modulus a 5"),
            "{why}"
        );
        // A changed output: over the trusted modulus, but the proof does not verify.
        let mut forged = file.clone();
        forged.output = rsa2048.canonical(&(forged.output.clone() + 1u32));
        let v = forged.verify_against(&rsa2048, None);
        assert!(!v.is_valid() && !v.untrusted_modulus(), "{v:?}");
    }

    #[test]
    fn malformed_files_name_the_field_and_the_values() {
        assert!(parse_with("version", 1.into()).is_ok());
        let err = parse_with("version", 2.into()).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Format(FormatError::UnknownVersion {
                    found: 2,
                    supported: VERSION
                })
            ),
            "{err:?}"
        );
        let err = parse_with("security_bits", 100.into()).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Format(FormatError::Parameters(crate::ParamError::SecurityLevel {
                    found: 100
                }))
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "malformed proof file: invalid parameters: security level k = 100 is not supported (128 or 256)"
        );
        let err = parse_with("output", "00".into()).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Format(FormatError::FixedHex {
                    field: ProofField::Output,
                    digits: 512
                })
            ),
            "{err:?}"
        );
        let err = parse_with("scheme", "pietrzak".into()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "malformed proof file: the proof object does not match the scheme pietrzak"
        );
        let err = parse_with("proof", serde_json::json!({"x": 1})).unwrap_err();
        assert!(
            matches!(err, Error::Format(FormatError::ProofShape)),
            "{err:?}"
        );
    }
}

//! Key files: PKCS#8 / SPKI PEM (the default), PKCS#1 PEM, DER, hex and JSON.
//!
//! The PEM and DER forms are the standard ones, so `openssl pkey` reads every key hourglass
//! writes, including rebalanced and short-e keys (their CRT exponents are the standard
//! `exponent1`/`exponent2` fields). The hex and JSON forms also record the variant; their
//! layout is specified in `docs/FORMATS.md`.
//!
//! Decoding detects the form from the content and rejects anything malformed, inconsistent or
//! unsupported with an [`Error::Parse`] ([`ParseError`]) or [`Error::InvalidKey`]
//! ([`crate::KeyError`]) that says what is wrong.

use der::asn1::{AnyRef, BitStringRef, UintRef};
use der::{Decode, Encode};
use hourglass_arith::secret::SecretInt;
use hourglass_arith::Integer;
use pem_rfc7468::LineEnding;
use rug::integer::Order;
use serde::{Deserialize, Serialize};
use spki::AlgorithmIdentifierRef;
use zeroize::Zeroizing;

use crate::key::{PrivateKey, PublicKey, Variant};
use crate::names::{PRIVATE_TYPE, PUBLIC_TYPE};
use crate::{
    DerItem, EncodeError, EncryptionError, Error, KeyError, KeyField, KeyKind, ParamError,
    ParseError, Result,
};

/// Output forms for key files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyFormat {
    /// PEM: PKCS#8 `PRIVATE KEY` / SPKI `PUBLIC KEY` (the default).
    Pem,
    /// PEM: PKCS#1 `RSA PRIVATE KEY` / `RSA PUBLIC KEY`.
    Pkcs1,
    /// Binary DER of the PKCS#8 / SPKI structures.
    Der,
    /// `name = hexdigits` lines, in the spirit of the RSAtron post.
    Hex,
    /// JSON with hexadecimal big-endian integers.
    Json,
}

impl KeyFormat {
    /// Parses a command-line name (`pem`, `pkcs1`, `der`, `hex`, `json`).
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "pem" | "pkcs8" => Some(Self::Pem),
            "pkcs1" => Some(Self::Pkcs1),
            "der" => Some(Self::Der),
            "hex" => Some(Self::Hex),
            "json" => Some(Self::Json),
            _ => None,
        }
    }
}

/// The Maximum size of a key file we parse (a 16384-bit key in hex is under 20 KiB).
pub const MAX_KEY_FILE: usize = 1 << 20;

/// The largest integer field we accept, in bytes (8192 hexadecimal digits; a 32768-bit
/// modulus), in every form alike: whatever decodes can be re-encoded in any form, and a large
/// file cannot make us run primality tests on megabit numbers.
pub const MAX_INTEGER_BYTES: usize = 4096;

const RSA_OID: der::asn1::ObjectIdentifier = pkcs1::ALGORITHM_OID;

fn be_bytes(x: &Integer) -> Vec<u8> {
    if *x == 0 {
        vec![0]
    } else {
        x.to_digits::<u8>(Order::Msf)
    }
}

fn uint_to_int(field: KeyField, u: UintRef<'_>) -> Result<Integer> {
    let bytes = u.as_bytes();
    if bytes.len() > MAX_INTEGER_BYTES {
        return Err(ParseError::IntegerTooLarge {
            field,
            bytes: bytes.len(),
            max: MAX_INTEGER_BYTES,
        }
        .into());
    }
    Ok(Integer::from_digits(bytes, Order::Msf))
}

/// A DER encoding failure of `what`.
fn encode_err(what: DerItem) -> impl Fn(der::Error) -> Error {
    move |source| EncodeError::Der { what, source }.into()
}

/// A DER decoding failure of `what` (a malformed structure).
fn decode_err(what: DerItem) -> impl Fn(der::Error) -> Error {
    move |source| ParseError::Der { what, source }.into()
}

fn rsa_algorithm() -> AlgorithmIdentifierRef<'static> {
    AlgorithmIdentifierRef {
        oid: RSA_OID,
        parameters: Some(AnyRef::NULL),
    }
}

/// PKCS#1 `RSAPrivateKey` DER.
fn pkcs1_private_der(key: &PrivateKey) -> Result<Zeroizing<Vec<u8>>> {
    let public = key.public();
    let [d, p, q, dp, dq, qinv] = key.secret_components();
    let parts: Vec<Zeroizing<Vec<u8>>> = [
        public.n(),
        public.e(),
        d.expose(),
        p.expose(),
        q.expose(),
        dp.expose(),
        dq.expose(),
        qinv.expose(),
    ]
    .iter()
    .map(|x| Zeroizing::new(be_bytes(x)))
    .collect();
    let u = |i: usize| UintRef::new(&parts[i]).map_err(encode_err(DerItem::Integer));
    let structure = pkcs1::RsaPrivateKey {
        modulus: u(0)?,
        public_exponent: u(1)?,
        private_exponent: u(2)?,
        prime1: u(3)?,
        prime2: u(4)?,
        exponent1: u(5)?,
        exponent2: u(6)?,
        coefficient: u(7)?,
        other_prime_infos: None,
    };
    Ok(Zeroizing::new(
        structure
            .to_der()
            .map_err(encode_err(DerItem::RsaPrivateKey))?,
    ))
}

fn pkcs1_public_der(key: &PublicKey) -> Result<Vec<u8>> {
    let n = be_bytes(key.n());
    let e = be_bytes(key.e());
    pkcs1::RsaPublicKey {
        modulus: UintRef::new(&n).map_err(encode_err(DerItem::Modulus))?,
        public_exponent: UintRef::new(&e).map_err(encode_err(DerItem::Exponent))?,
    }
    .to_der()
    .map_err(encode_err(DerItem::RsaPublicKey))
}

fn pkcs8_der(key: &PrivateKey) -> Result<Zeroizing<Vec<u8>>> {
    let inner = pkcs1_private_der(key)?;
    let info = pkcs8::PrivateKeyInfo::new(rsa_algorithm(), &inner);
    Ok(Zeroizing::new(
        info.to_der().map_err(encode_err(DerItem::Pkcs8))?,
    ))
}

fn spki_der(key: &PublicKey) -> Result<Vec<u8>> {
    let inner = pkcs1_public_der(key)?;
    let spki = spki::SubjectPublicKeyInfoRef {
        algorithm: rsa_algorithm(),
        subject_public_key: BitStringRef::from_bytes(&inner).map_err(encode_err(DerItem::Spki))?,
    };
    spki.to_der().map_err(encode_err(DerItem::Spki))
}

fn pem(label: &str, der: &[u8]) -> Result<Vec<u8>> {
    pem_rfc7468::encode_string(label, LineEnding::LF, der)
        .map(String::into_bytes)
        .map_err(|e| EncodeError::Pem(e).into())
}

/// Serialises a private key. The result is secret: wipe it after writing.
pub fn encode_private_key(key: &PrivateKey, format: KeyFormat) -> Result<Zeroizing<Vec<u8>>> {
    Ok(Zeroizing::new(match format {
        KeyFormat::Pem => pem("PRIVATE KEY", &pkcs8_der(key)?)?,
        KeyFormat::Pkcs1 => pem("RSA PRIVATE KEY", &pkcs1_private_der(key)?)?,
        KeyFormat::Der => pkcs8_der(key)?.to_vec(),
        KeyFormat::Hex => private_hex(key).into_bytes(),
        KeyFormat::Json => private_json(key)?.into_bytes(),
    }))
}

/// Serialises a public key.
pub fn encode_public_key(key: &PublicKey, format: KeyFormat) -> Result<Vec<u8>> {
    match format {
        KeyFormat::Pem => pem("PUBLIC KEY", &spki_der(key)?),
        KeyFormat::Pkcs1 => pem("RSA PUBLIC KEY", &pkcs1_public_der(key)?),
        KeyFormat::Der => spki_der(key),
        KeyFormat::Hex => Ok(format!(
            "# hourglass RSA public key: hexadecimal, big-endian\nn = {:x}\ne = {:x}\n",
            key.n(),
            key.e()
        )
        .into_bytes()),
        KeyFormat::Json => {
            let j = PublicJson {
                kind: PUBLIC_TYPE.into(),
                version: 1,
                bits: key.bits(),
                n: format!("{:x}", key.n()),
                e: format!("{:x}", key.e()),
            };
            Ok(format!(
                "{}\n",
                serde_json::to_string_pretty(&j).map_err(EncodeError::Json)?
            )
            .into_bytes())
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PrivateJson {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    variant: Option<Variant>,
    bits: u32,
    n: String,
    e: String,
    d: String,
    p: String,
    q: String,
    dp: String,
    dq: String,
    qinv: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PublicJson {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    bits: u32,
    n: String,
    e: String,
}

/// Every number of a private key, in file order (`n`, `e`, then the secrets), each in a
/// wiping [`SecretInt`].
fn all_values(key: &PrivateKey) -> [SecretInt; 8] {
    let p = key.public();
    let [d, pp, q, dp, dq, qinv] = key.secret_components();
    [
        SecretInt::new(p.n().clone()),
        SecretInt::new(p.e().clone()),
        d.clone(),
        pp.clone(),
        q.clone(),
        dp.clone(),
        dq.clone(),
        qinv.clone(),
    ]
}

fn private_hex(key: &PrivateKey) -> String {
    let mut out = String::from("# hourglass RSA private key: hexadecimal, big-endian. SECRET.\n");
    if let Some(v) = key.variant() {
        out.push_str(&format!("variant = {v}\n"));
    }
    let values = all_values(key);
    for (name, value) in KeyField::ALL.iter().zip(values.iter()) {
        out.push_str(&format!("{name} = {:x}\n", value.expose()));
    }
    out
}

fn private_json(key: &PrivateKey) -> Result<String> {
    let v = all_values(key);
    let h = |x: &SecretInt| format!("{:x}", x.expose());
    let j = PrivateJson {
        kind: PRIVATE_TYPE.into(),
        version: 1,
        variant: key.variant(),
        bits: key.public().bits(),
        n: h(&v[0]),
        e: h(&v[1]),
        d: h(&v[2]),
        p: h(&v[3]),
        q: h(&v[4]),
        dp: h(&v[5]),
        dq: h(&v[6]),
        qinv: h(&v[7]),
    };
    drop(v);
    let s = serde_json::to_string_pretty(&j).map_err(EncodeError::Json)?;
    Ok(format!("{s}\n"))
}

fn parse_hex_int(field: KeyField, s: &str) -> Result<Integer> {
    let s = s.trim();
    if s.len() > 2 * MAX_INTEGER_BYTES {
        return Err(ParseError::HexTooLong {
            field,
            max: MAX_INTEGER_BYTES,
        }
        .into());
    }
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ParseError::NotHex { field }.into());
    }
    Integer::from_str_radix(s, 16).map_err(|source| ParseError::HexInteger { field, source }.into())
}

/// What a key file holds after decoding.
enum Decoded {
    Private(Box<PrivateKey>),
    Public(PublicKey),
}

fn decode_any(bytes: &[u8]) -> Result<Decoded> {
    if bytes.len() > MAX_KEY_FILE {
        return Err(ParseError::FileTooLarge { max: MAX_KEY_FILE }.into());
    }
    let trimmed = trim_ascii_start(bytes);
    if trimmed.is_empty() {
        return Err(ParseError::Empty.into());
    }
    if trimmed.starts_with(b"-----BEGIN ") {
        // Trailing whitespace (say, a blank line after the END line) is tolerated like leading.
        let (label, der) =
            pem_rfc7468::decode_vec(trimmed.trim_ascii_end()).map_err(ParseError::Pem)?;
        let der = Zeroizing::new(der);
        return match label {
            "PRIVATE KEY" => decode_pkcs8(&der),
            "RSA PRIVATE KEY" => decode_pkcs1_private(&der, None),
            "PUBLIC KEY" => decode_spki(&der).map(Decoded::Public),
            "RSA PUBLIC KEY" => decode_pkcs1_public(&der).map(Decoded::Public),
            "ENCRYPTED PRIVATE KEY" => Err(Error::PassphraseRequired),
            other => Err(ParseError::PemLabel {
                label: other.to_string(),
            }
            .into()),
        };
    }
    if trimmed[0] == b'{' {
        return decode_json(trimmed);
    }
    if trimmed[0] == 0x30 {
        // DER: PKCS#8, SPKI, or bare PKCS#1. The four structures differ in their first fields,
        // so at most one parses; its verdict stands, with the reason when the key is invalid.
        if pkcs8::EncryptedPrivateKeyInfo::from_der(trimmed).is_ok() {
            return Err(Error::PassphraseRequired);
        }
        if pkcs8::PrivateKeyInfo::from_der(trimmed).is_ok() {
            return decode_pkcs8(trimmed);
        }
        if spki::SubjectPublicKeyInfoRef::from_der(trimmed).is_ok() {
            return decode_spki(trimmed).map(Decoded::Public);
        }
        if pkcs1::RsaPrivateKey::from_der(trimmed).is_ok() {
            return decode_pkcs1_private(trimmed, None);
        }
        if pkcs1::RsaPublicKey::from_der(trimmed).is_ok() {
            return decode_pkcs1_public(trimmed).map(Decoded::Public);
        }
        return Err(ParseError::NotDer.into());
    }
    decode_hex(trimmed)
}

fn trim_ascii_start(b: &[u8]) -> &[u8] {
    let start = b
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(b.len());
    &b[start..]
}

fn decode_pkcs8(der: &[u8]) -> Result<Decoded> {
    let info = pkcs8::PrivateKeyInfo::from_der(der).map_err(decode_err(DerItem::Pkcs8))?;
    if info.algorithm.oid != RSA_OID {
        return Err(ParseError::NotRsa {
            key: KeyKind::Private,
            oid: info.algorithm.oid,
        }
        .into());
    }
    decode_pkcs1_private(info.private_key, None)
}

fn decode_pkcs1_private(der: &[u8], variant: Option<Variant>) -> Result<Decoded> {
    let k = pkcs1::RsaPrivateKey::from_der(der).map_err(decode_err(DerItem::RsaPrivateKey))?;
    if k.other_prime_infos.is_some() {
        return Err(ParseError::MultiPrime.into());
    }
    // Size-check every field before the (costly) consistency checks.
    let n = uint_to_int(KeyField::N, k.modulus)?;
    let e = uint_to_int(KeyField::E, k.public_exponent)?;
    let d = uint_to_int(KeyField::D, k.private_exponent)?;
    let p = uint_to_int(KeyField::P, k.prime1)?;
    let q = uint_to_int(KeyField::Q, k.prime2)?;
    let dp = uint_to_int(KeyField::Dp, k.exponent1)?;
    let dq = uint_to_int(KeyField::Dq, k.exponent2)?;
    let qinv = uint_to_int(KeyField::Qinv, k.coefficient)?;
    let key = PrivateKey::from_components(n, e, d, p, q, Some(dp), Some(dq), variant)?;
    check_qinv(&key, &qinv)?;
    Ok(Decoded::Private(Box::new(key)))
}

fn check_qinv(key: &PrivateKey, given: &Integer) -> Result<()> {
    if key.secret_components()[5].expose() != given {
        return Err(KeyError::Coefficient.into());
    }
    Ok(())
}

fn decode_pkcs1_public(der: &[u8]) -> Result<PublicKey> {
    let k = pkcs1::RsaPublicKey::from_der(der).map_err(decode_err(DerItem::RsaPublicKey))?;
    PublicKey::new(
        uint_to_int(KeyField::N, k.modulus)?,
        uint_to_int(KeyField::E, k.public_exponent)?,
    )
}

fn decode_spki(der: &[u8]) -> Result<PublicKey> {
    let spki = spki::SubjectPublicKeyInfoRef::from_der(der).map_err(decode_err(DerItem::Spki))?;
    if spki.algorithm.oid != RSA_OID {
        return Err(ParseError::NotRsa {
            key: KeyKind::Public,
            oid: spki.algorithm.oid,
        }
        .into());
    }
    let bits = spki
        .subject_public_key
        .as_bytes()
        .ok_or(ParseError::UnusedBits)?;
    decode_pkcs1_public(bits)
}

fn decode_json(bytes: &[u8]) -> Result<Decoded> {
    let value: serde_json::Value = serde_json::from_slice(bytes).map_err(ParseError::Json)?;
    let kind = value.get("type").and_then(|t| t.as_str()).unwrap_or("");
    match kind {
        PRIVATE_TYPE => {
            let j: PrivateJson =
                serde_json::from_value(value).map_err(|source| ParseError::JsonKey {
                    key: KeyKind::Private,
                    source,
                })?;
            if j.version != 1 {
                return Err(ParseError::UnknownVersion { found: j.version }.into());
            }
            let f = parse_hex_int;
            let key = PrivateKey::from_components(
                f(KeyField::N, &j.n)?,
                f(KeyField::E, &j.e)?,
                f(KeyField::D, &j.d)?,
                f(KeyField::P, &j.p)?,
                f(KeyField::Q, &j.q)?,
                Some(f(KeyField::Dp, &j.dp)?),
                Some(f(KeyField::Dq, &j.dq)?),
                j.variant,
            )?;
            check_qinv(&key, &f(KeyField::Qinv, &j.qinv)?)?;
            if key.public().bits() != j.bits {
                return Err(KeyError::BitsMismatch {
                    recorded: j.bits,
                    actual: key.public().bits(),
                }
                .into());
            }
            Ok(Decoded::Private(Box::new(key)))
        }
        PUBLIC_TYPE => {
            let j: PublicJson =
                serde_json::from_value(value).map_err(|source| ParseError::JsonKey {
                    key: KeyKind::Public,
                    source,
                })?;
            if j.version != 1 {
                return Err(ParseError::UnknownVersion { found: j.version }.into());
            }
            let key = PublicKey::new(
                parse_hex_int(KeyField::N, &j.n)?,
                parse_hex_int(KeyField::E, &j.e)?,
            )?;
            if key.bits() != j.bits {
                return Err(KeyError::BitsMismatch {
                    recorded: j.bits,
                    actual: key.bits(),
                }
                .into());
            }
            Ok(Decoded::Public(key))
        }
        other => Err(ParseError::JsonType {
            found: other.to_string(),
        }
        .into()),
    }
}

fn decode_hex(bytes: &[u8]) -> Result<Decoded> {
    let text = std::str::from_utf8(bytes).map_err(|_| ParseError::NotText)?;
    let mut fields: Vec<(KeyField, String)> = Vec::new();
    let mut variant = None;
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let line_no = lineno + 1;
        let (name, value) = line
            .split_once('=')
            .ok_or(ParseError::HexLine { line: line_no })?;
        let (name, value) = (name.trim(), value.trim());
        if name == "variant" {
            variant =
                Some(
                    Variant::from_name(value).ok_or_else(|| ParseError::UnknownVariant {
                        line: line_no,
                        name: value.to_string(),
                    })?,
                );
            continue;
        }
        let field = KeyField::from_name(name).ok_or_else(|| ParseError::UnknownField {
            line: line_no,
            name: name.to_string(),
        })?;
        if fields.iter().any(|(f, _)| *f == field) {
            return Err(ParseError::DuplicateField {
                line: line_no,
                field,
            }
            .into());
        }
        fields.push((field, value.to_string()));
    }
    let get = |field: KeyField| -> Result<Option<Integer>> {
        fields
            .iter()
            .find(|(f, _)| *f == field)
            .map(|(_, v)| parse_hex_int(field, v))
            .transpose()
    };
    let (n, e) = match (get(KeyField::N)?, get(KeyField::E)?) {
        (Some(n), Some(e)) => (n, e),
        _ => return Err(ParseError::NoModulus.into()),
    };
    if fields.len() == 2 {
        return Ok(Decoded::Public(PublicKey::new(n, e)?));
    }
    let need = |field: KeyField| -> Result<Integer> {
        get(field)?.ok_or_else(|| ParseError::MissingField { field }.into())
    };
    let key = PrivateKey::from_components(
        n,
        e,
        need(KeyField::D)?,
        need(KeyField::P)?,
        need(KeyField::Q)?,
        get(KeyField::Dp)?,
        get(KeyField::Dq)?,
        variant,
    )?;
    if let Some(qinv) = get(KeyField::Qinv)? {
        check_qinv(&key, &qinv)?;
    }
    Ok(Decoded::Private(Box::new(key)))
}

/// Reads a private key in any supported form.
pub fn decode_private_key(bytes: &[u8]) -> Result<PrivateKey> {
    match decode_any(bytes)? {
        Decoded::Private(k) => Ok(*k),
        Decoded::Public(_) => Err(ParseError::PublicNotPrivate.into()),
    }
}

/// Reads a public key in any supported form; a private key file yields its public half.
pub fn decode_public_key(bytes: &[u8]) -> Result<PublicKey> {
    match decode_any(bytes)? {
        Decoded::Private(k) => Ok(k.public_key()),
        Decoded::Public(p) => Ok(p),
    }
}

/// Reads either kind: `Ok(Err(public))` for a public key, `Ok(Ok(private))` for a private one.
pub fn decode_key(bytes: &[u8]) -> Result<std::result::Result<PrivateKey, PublicKey>> {
    Ok(match decode_any(bytes)? {
        Decoded::Private(k) => Ok(*k),
        Decoded::Public(p) => Err(p),
    })
}

/// PBKDF2-HMAC-SHA-256 iterations for keys this version encrypts (OWASP's 2023 figure; about
/// a third of a second on a current core, for the owner and for every guess of an attacker).
pub const PBKDF2_ITERATIONS: u32 = 600_000;

/// Whether `bytes` hold an encrypted PKCS#8 private key (PEM or DER), which needs a passphrase.
pub fn is_encrypted(bytes: &[u8]) -> bool {
    let trimmed = trim_ascii_start(bytes).trim_ascii_end();
    if trimmed.starts_with(b"-----BEGIN ENCRYPTED PRIVATE KEY-----") {
        return true;
    }
    pkcs8::EncryptedPrivateKeyInfo::from_der(trimmed).is_ok()
}

/// Serialises a private key as an encrypted PKCS#8 PEM file (`ENCRYPTED PRIVATE KEY`): PBES2
/// with PBKDF2-HMAC-SHA-256 ([`PBKDF2_ITERATIONS`], 16-byte random salt) and AES-256-CBC, the
/// format `openssl pkey -aes256` writes and every OpenSSL reads.
pub fn encode_private_key_encrypted(
    key: &PrivateKey,
    passphrase: &[u8],
    rng: &mut dyn hourglass_arith::entropy::EntropySource,
) -> Result<Zeroizing<Vec<u8>>> {
    if passphrase.is_empty() {
        return Err(ParamError::EmptyPassphrase.into());
    }
    let mut salt = [0u8; 16];
    let mut iv = [0u8; 16];
    rng.fill(&mut salt)?;
    rng.fill(&mut iv)?;
    let params = pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(PBKDF2_ITERATIONS, &salt, &iv)
        .map_err(EncodeError::Pbes2Parameters)?;
    let plain = pkcs8_der(key)?;
    let encrypted = params
        .encrypt(passphrase, &plain)
        .map_err(EncodeError::Encrypt)?;
    let info = pkcs8::EncryptedPrivateKeyInfo {
        encryption_algorithm: params.into(),
        encrypted_data: &encrypted,
    };
    let der = info.to_der().map_err(encode_err(DerItem::EncryptedKey))?;
    Ok(Zeroizing::new(pem("ENCRYPTED PRIVATE KEY", &der)?))
}

/// Most PBKDF2 iterations accepted in a key file (a file is input: an absurd count would make
/// reading it a denial of service).
const MAX_PBKDF2_ITERATIONS: u32 = 10_000_000;
/// Most memory scrypt may need for a key file (`128 r N` bytes).
const MAX_SCRYPT_BYTES: u64 = 1 << 30;

/// Refuses key-derivation parameters that would take unreasonable time or memory to apply.
fn check_kdf_cost(kdf: &pkcs5::pbes2::Kdf<'_>) -> Result<()> {
    match kdf {
        pkcs5::pbes2::Kdf::Pbkdf2(p) if p.iteration_count > MAX_PBKDF2_ITERATIONS => {
            Err(EncryptionError::Pbkdf2Iterations {
                iterations: p.iteration_count,
                max: MAX_PBKDF2_ITERATIONS,
            }
            .into())
        }
        pkcs5::pbes2::Kdf::Scrypt(s) => {
            let bytes = 128 * u64::from(s.block_size) * s.cost_parameter;
            if bytes > MAX_SCRYPT_BYTES || s.parallelization > 16 {
                return Err(EncryptionError::ScryptCost {
                    n: s.cost_parameter,
                    r: s.block_size,
                    p: s.parallelization,
                }
                .into());
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

/// Decrypts an encrypted PKCS#8 key (PEM or DER) with `passphrase` and reads it; a file that is
/// not encrypted is read as [`decode_key`] does (the passphrase is then unused).
pub fn decode_key_with_passphrase(
    bytes: &[u8],
    passphrase: &[u8],
) -> Result<std::result::Result<PrivateKey, PublicKey>> {
    if !is_encrypted(bytes) {
        return decode_key(bytes);
    }
    let trimmed = trim_ascii_start(bytes).trim_ascii_end();
    let der = if trimmed.starts_with(b"-----BEGIN ") {
        let (_, der) = pem_rfc7468::decode_vec(trimmed).map_err(ParseError::Pem)?;
        der
    } else {
        trimmed.to_vec()
    };
    let info = pkcs8::EncryptedPrivateKeyInfo::from_der(&der)
        .map_err(decode_err(DerItem::EncryptedKey))?;
    let plain = match &info.encryption_algorithm {
        pkcs5::EncryptionScheme::Pbes2(params) => {
            check_kdf_cost(&params.kdf)?;
            params
                .decrypt(passphrase, info.encrypted_data)
                .map_err(|e| match e {
                    // pkcs5 0.7 reports bad padding after decryption as EncryptFailed.
                    pkcs5::Error::DecryptFailed | pkcs5::Error::EncryptFailed => {
                        Error::WrongPassphrase
                    }
                    other => EncryptionError::Pbes2(other).into(),
                })?
        }
        _ => return Err(EncryptionError::Pbes1.into()),
    };
    let plain = Zeroizing::new(plain);
    // A wrong passphrase that happens to leave valid padding yields garbage, not a key.
    match decode_pkcs8(&plain).map_err(|_| Error::WrongPassphrase)? {
        Decoded::Private(k) => Ok(Ok(*k)),
        Decoded::Public(p) => Ok(Err(p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::KeyGenOptions;
    use hourglass_arith::entropy::SeededEntropy;

    #[test]
    fn encrypted_keys_round_trip_and_refuse_wrong_or_missing_passphrases() {
        let mut rng = SeededEntropy::new(b"encrypted");
        let key = KeyGenOptions::new(1024, Variant::Crt)
            .allow_insecure(true)
            .generate(&mut rng)
            .unwrap();
        let pem = encode_private_key_encrypted(&key, b"correct horse", &mut rng).unwrap();
        assert!(pem.starts_with(b"-----BEGIN ENCRYPTED PRIVATE KEY-----"));
        assert!(is_encrypted(&pem));
        assert!(!is_encrypted(
            &encode_private_key(&key, KeyFormat::Pem).unwrap()
        ));
        let back = decode_key_with_passphrase(&pem, b"correct horse")
            .unwrap()
            .unwrap();
        assert_eq!(back.public_key(), key.public_key());
        let wrong = decode_key_with_passphrase(&pem, b"wrong horse");
        assert!(matches!(wrong, Err(Error::WrongPassphrase)), "{wrong:?}");
        assert!(matches!(decode_key(&pem), Err(Error::PassphraseRequired)));
        assert!(encode_private_key_encrypted(&key, b"", &mut rng).is_err());
        // Damage anywhere in the encrypted body is refused, never read as another key.
        let (label, der) = pem_rfc7468::decode_vec(&pem).unwrap();
        for pos in [der.len() - 1, der.len() - 40] {
            let mut bad = der.clone();
            bad[pos] ^= 1;
            let bad = pem_rfc7468::encode_string(label, LineEnding::LF, &bad).unwrap();
            assert!(decode_key_with_passphrase(bad.as_bytes(), b"correct horse").is_err());
        }
    }

    #[test]
    fn a_key_file_cannot_demand_unbounded_key_derivation() {
        let (salt, iv) = ([1u8; 16], [2u8; 16]);
        let params =
            pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(100_000_000, &salt, &iv).unwrap();
        let info = pkcs8::EncryptedPrivateKeyInfo {
            encryption_algorithm: params.into(),
            encrypted_data: &[0u8; 48],
        };
        let der = info.to_der().unwrap();
        let start = std::time::Instant::now();
        let err = decode_key_with_passphrase(&der, b"pw").unwrap_err();
        assert!(
            matches!(
                err,
                Error::UnsupportedEncryption(EncryptionError::Pbkdf2Iterations {
                    iterations: 100_000_000,
                    max: MAX_PBKDF2_ITERATIONS
                })
            ),
            "{err:?}"
        );
        // Refused before any derivation (10^8 iterations would take a minute).
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn every_format_round_trips() {
        let mut rng = SeededEntropy::new(b"encoding");
        for variant in [Variant::Crt, Variant::Rebalanced] {
            let key = KeyGenOptions::new(1024, variant)
                .allow_insecure(true)
                .generate(&mut rng)
                .unwrap();
            for format in [
                KeyFormat::Pem,
                KeyFormat::Pkcs1,
                KeyFormat::Der,
                KeyFormat::Hex,
                KeyFormat::Json,
            ] {
                let bytes = encode_private_key(&key, format).unwrap();
                let back = decode_private_key(&bytes).unwrap();
                assert_eq!(back.public(), key.public());
                assert_eq!(all_values(&back), all_values(&key));
                if matches!(format, KeyFormat::Hex | KeyFormat::Json) {
                    assert_eq!(back.variant(), Some(variant));
                }
                let public = encode_public_key(key.public(), format).unwrap();
                assert_eq!(&decode_public_key(&public).unwrap(), key.public());
                assert!(decode_private_key(&public).is_err());
                assert_eq!(&decode_public_key(&bytes).unwrap(), key.public());
            }
        }
    }

    #[test]
    fn parse_errors_name_the_line_field_and_sizes() {
        let err = decode_public_key(b"n = ff\nn = ff\n").unwrap_err();
        assert!(
            matches!(
                err,
                Error::Parse(ParseError::DuplicateField {
                    line: 2,
                    field: KeyField::N
                })
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "cannot parse key: line 2: field 'n' appears twice"
        );
        let err = decode_public_key(b"# comment\nn = ff\nfoo = 1\n").unwrap_err();
        assert!(
            matches!(&err, Error::Parse(ParseError::UnknownField { line: 3, name }) if name == "foo"),
            "{err:?}"
        );
        let err = decode_public_key(b"n = ff\ne = xyz\n").unwrap_err();
        assert!(
            matches!(err, Error::Parse(ParseError::NotHex { field: KeyField::E })),
            "{err:?}"
        );
        // A 64-bit modulus is the smallest accepted: 63 bits report their size.
        let err = decode_public_key(b"n = 7fffffffffffffff\ne = 3\n").unwrap_err();
        assert!(
            matches!(
                err,
                Error::InvalidKey(KeyError::ModulusTooSmall { bits: 63, min: 64 })
            ),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            "invalid key: modulus must be odd and at least 64 bits"
        );
        let err = decode_public_key(
            br#"{"type": "hourglass-rsa-public-key", "version": 7, "bits": 64, "n": "ff", "e": "3"}"#,
        )
        .unwrap_err();
        assert!(
            matches!(err, Error::Parse(ParseError::UnknownVersion { found: 7 })),
            "{err:?}"
        );
        let err = decode_public_key(br#"{"type": "x509"}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot parse key: JSON \"type\" is 'x509', expected 'hourglass-rsa-private-key' or 'hourglass-rsa-public-key'"
        );
    }

    #[test]
    fn malformed_inputs_are_errors() {
        for bad in [
            &b""[..],
            b"   ",
            b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
            b"-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n",
            b"{\"type\": \"hourglass-rsa-private-key\"}",
            b"{not json",
            b"n = 1234\n",
            b"n = zz\ne = 3\n",
            b"\x30\x03\x02\x01\x01",
            b"garbage",
        ] {
            assert!(decode_private_key(bad).is_err());
            assert!(decode_public_key(bad).is_err());
        }
    }
}

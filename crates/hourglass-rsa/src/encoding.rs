//! Key files: PKCS#8 / SPKI PEM (the default), PKCS#1 PEM, DER, hex and JSON.
//!
//! The PEM and DER forms are the standard ones, so `openssl pkey` reads every key hourglass
//! writes, including rebalanced and short-e keys (their CRT exponents are the standard
//! `exponent1`/`exponent2` fields). The hex and JSON forms also record the variant; their
//! layout is specified in `docs/FORMATS.md`.
//!
//! Decoding detects the form from the content and rejects anything malformed, inconsistent or
//! unsupported with an [`Error::Parse`] or [`Error::InvalidKey`] that says what is wrong.

use der::asn1::{AnyRef, BitStringRef, UintRef};
use der::{Decode, Encode};
use hourglass_arith::Integer;
use pem_rfc7468::LineEnding;
use rug::integer::Order;
use serde::{Deserialize, Serialize};
use spki::AlgorithmIdentifierRef;
use zeroize::Zeroizing;

use crate::key::{PrivateKey, PublicKey, Variant};
use crate::{Error, Result};

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

fn uint_to_int(name: &str, u: UintRef<'_>) -> Result<Integer> {
    let bytes = u.as_bytes();
    if bytes.len() > MAX_INTEGER_BYTES {
        return Err(Error::Parse(format!(
            "field {name}: {}-byte integer; integers are limited to {MAX_INTEGER_BYTES} bytes",
            bytes.len()
        )));
    }
    Ok(Integer::from_digits(bytes, Order::Msf))
}

fn der_err(what: &str) -> impl Fn(der::Error) -> Error + '_ {
    move |e| Error::Parse(format!("{what}: {e}"))
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
    let u = |i: usize| UintRef::new(&parts[i]).map_err(der_err("encoding integer"));
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
            .map_err(der_err("encoding RSAPrivateKey"))?,
    ))
}

fn pkcs1_public_der(key: &PublicKey) -> Result<Vec<u8>> {
    let n = be_bytes(key.n());
    let e = be_bytes(key.e());
    pkcs1::RsaPublicKey {
        modulus: UintRef::new(&n).map_err(der_err("encoding modulus"))?,
        public_exponent: UintRef::new(&e).map_err(der_err("encoding exponent"))?,
    }
    .to_der()
    .map_err(der_err("encoding RSAPublicKey"))
}

fn pkcs8_der(key: &PrivateKey) -> Result<Zeroizing<Vec<u8>>> {
    let inner = pkcs1_private_der(key)?;
    let info = pkcs8::PrivateKeyInfo::new(rsa_algorithm(), &inner);
    Ok(Zeroizing::new(
        info.to_der().map_err(der_err("encoding PKCS#8"))?,
    ))
}

fn spki_der(key: &PublicKey) -> Result<Vec<u8>> {
    let inner = pkcs1_public_der(key)?;
    let spki = spki::SubjectPublicKeyInfoRef {
        algorithm: rsa_algorithm(),
        subject_public_key: BitStringRef::from_bytes(&inner).map_err(der_err("encoding SPKI"))?,
    };
    spki.to_der().map_err(der_err("encoding SPKI"))
}

fn pem(label: &str, der: &[u8]) -> Result<Vec<u8>> {
    pem_rfc7468::encode_string(label, LineEnding::LF, der)
        .map(String::into_bytes)
        .map_err(|e| Error::Parse(format!("PEM encoding: {e}")))
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
                serde_json::to_string_pretty(&j).map_err(|e| Error::Parse(e.to_string()))?
            )
            .into_bytes())
        }
    }
}

const PRIVATE_TYPE: &str = "hourglass-rsa-private-key";
const PUBLIC_TYPE: &str = "hourglass-rsa-public-key";
const HEX_FIELDS: [&str; 8] = ["n", "e", "d", "p", "q", "dp", "dq", "qinv"];

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

fn all_values(key: &PrivateKey) -> [Integer; 8] {
    let p = key.public();
    let [d, pp, q, dp, dq, qinv] = key.secret_components();
    [
        p.n().clone(),
        p.e().clone(),
        d.expose_owned(),
        pp.expose_owned(),
        q.expose_owned(),
        dp.expose_owned(),
        dq.expose_owned(),
        qinv.expose_owned(),
    ]
}

fn private_hex(key: &PrivateKey) -> String {
    let mut out = String::from("# hourglass RSA private key: hexadecimal, big-endian. SECRET.\n");
    if let Some(v) = key.variant() {
        out.push_str(&format!("variant = {v}\n"));
    }
    let mut values = all_values(key);
    for (name, value) in HEX_FIELDS.iter().zip(values.iter()) {
        out.push_str(&format!("{name} = {value:x}\n"));
    }
    values.iter_mut().for_each(hourglass_arith::secret::wipe);
    out
}

fn private_json(key: &PrivateKey) -> Result<String> {
    let mut v = all_values(key);
    let h = |x: &Integer| format!("{x:x}");
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
    v.iter_mut().for_each(hourglass_arith::secret::wipe);
    let s = serde_json::to_string_pretty(&j).map_err(|e| Error::Parse(e.to_string()))?;
    Ok(format!("{s}\n"))
}

fn parse_hex_int(name: &str, s: &str) -> Result<Integer> {
    let s = s.trim();
    if s.len() > 2 * MAX_INTEGER_BYTES {
        return Err(Error::Parse(format!(
            "field {name}: more than {} hexadecimal digits; integers are limited to {MAX_INTEGER_BYTES} bytes",
            2 * MAX_INTEGER_BYTES
        )));
    }
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::Parse(format!(
            "field {name}: expected hexadecimal digits"
        )));
    }
    Integer::from_str_radix(s, 16).map_err(|e| Error::Parse(format!("field {name}: {e}")))
}

/// What a key file holds after decoding.
enum Decoded {
    Private(Box<PrivateKey>),
    Public(PublicKey),
}

fn decode_any(bytes: &[u8]) -> Result<Decoded> {
    if bytes.len() > MAX_KEY_FILE {
        return Err(Error::Parse(format!(
            "file is larger than {MAX_KEY_FILE} bytes; not a key"
        )));
    }
    let trimmed = trim_ascii_start(bytes);
    if trimmed.is_empty() {
        return Err(Error::Parse("the file is empty".into()));
    }
    if trimmed.starts_with(b"-----BEGIN ") {
        // Trailing whitespace (say, a blank line after the END line) is tolerated like leading.
        let (label, der) = pem_rfc7468::decode_vec(trimmed.trim_ascii_end())
            .map_err(|e| Error::Parse(format!("malformed PEM: {e}")))?;
        let der = Zeroizing::new(der);
        return match label {
            "PRIVATE KEY" => decode_pkcs8(&der),
            "RSA PRIVATE KEY" => decode_pkcs1_private(&der, None),
            "PUBLIC KEY" => decode_spki(&der).map(Decoded::Public),
            "RSA PUBLIC KEY" => decode_pkcs1_public(&der).map(Decoded::Public),
            "ENCRYPTED PRIVATE KEY" => Err(Error::PassphraseRequired),
            other => Err(Error::Parse(format!(
                "PEM label '{other}' is not an RSA key"
            ))),
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
        return Err(Error::Parse(
            "binary data is not a DER RSA key (PKCS#8, SPKI or PKCS#1)".into(),
        ));
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
    let info = pkcs8::PrivateKeyInfo::from_der(der).map_err(der_err("malformed PKCS#8"))?;
    if info.algorithm.oid != RSA_OID {
        return Err(Error::Parse(format!(
            "PKCS#8 key algorithm {} is not rsaEncryption",
            info.algorithm.oid
        )));
    }
    decode_pkcs1_private(info.private_key, None)
}

fn decode_pkcs1_private(der: &[u8], variant: Option<Variant>) -> Result<Decoded> {
    let k = pkcs1::RsaPrivateKey::from_der(der).map_err(der_err("malformed RSAPrivateKey"))?;
    if k.other_prime_infos.is_some() {
        return Err(Error::Parse(
            "multi-prime RSA keys are not supported".into(),
        ));
    }
    // Size-check every field before the (costly) consistency checks.
    let n = uint_to_int("n", k.modulus)?;
    let e = uint_to_int("e", k.public_exponent)?;
    let d = uint_to_int("d", k.private_exponent)?;
    let p = uint_to_int("p", k.prime1)?;
    let q = uint_to_int("q", k.prime2)?;
    let dp = uint_to_int("dp", k.exponent1)?;
    let dq = uint_to_int("dq", k.exponent2)?;
    let qinv = uint_to_int("qinv", k.coefficient)?;
    let key = PrivateKey::from_components(n, e, d, p, q, Some(dp), Some(dq), variant)?;
    check_qinv(&key, &qinv)?;
    Ok(Decoded::Private(Box::new(key)))
}

fn check_qinv(key: &PrivateKey, given: &Integer) -> Result<()> {
    if key.secret_components()[5].expose() != given {
        return Err(Error::InvalidKey("coefficient != q^-1 mod p".into()));
    }
    Ok(())
}

fn decode_pkcs1_public(der: &[u8]) -> Result<PublicKey> {
    let k = pkcs1::RsaPublicKey::from_der(der).map_err(der_err("malformed RSAPublicKey"))?;
    PublicKey::new(
        uint_to_int("n", k.modulus)?,
        uint_to_int("e", k.public_exponent)?,
    )
}

fn decode_spki(der: &[u8]) -> Result<PublicKey> {
    let spki = spki::SubjectPublicKeyInfoRef::from_der(der)
        .map_err(der_err("malformed SubjectPublicKeyInfo"))?;
    if spki.algorithm.oid != RSA_OID {
        return Err(Error::Parse(format!(
            "public key algorithm {} is not rsaEncryption",
            spki.algorithm.oid
        )));
    }
    let bits = spki
        .subject_public_key
        .as_bytes()
        .ok_or_else(|| Error::Parse("public key bit string has unused bits".into()))?;
    decode_pkcs1_public(bits)
}

fn decode_json(bytes: &[u8]) -> Result<Decoded> {
    let value: serde_json::Value =
        serde_json::from_slice(bytes).map_err(|e| Error::Parse(format!("malformed JSON: {e}")))?;
    let kind = value.get("type").and_then(|t| t.as_str()).unwrap_or("");
    match kind {
        PRIVATE_TYPE => {
            let j: PrivateJson = serde_json::from_value(value)
                .map_err(|e| Error::Parse(format!("JSON private key: {e}")))?;
            if j.version != 1 {
                return Err(Error::Parse(format!(
                    "unsupported JSON key version {}",
                    j.version
                )));
            }
            let f = |name: &str, s: &str| parse_hex_int(name, s);
            let key = PrivateKey::from_components(
                f("n", &j.n)?,
                f("e", &j.e)?,
                f("d", &j.d)?,
                f("p", &j.p)?,
                f("q", &j.q)?,
                Some(f("dp", &j.dp)?),
                Some(f("dq", &j.dq)?),
                j.variant,
            )?;
            check_qinv(&key, &f("qinv", &j.qinv)?)?;
            if key.public().bits() != j.bits {
                return Err(Error::InvalidKey(format!(
                    "bits says {} but n has {}",
                    j.bits,
                    key.public().bits()
                )));
            }
            Ok(Decoded::Private(Box::new(key)))
        }
        PUBLIC_TYPE => {
            let j: PublicJson = serde_json::from_value(value)
                .map_err(|e| Error::Parse(format!("JSON public key: {e}")))?;
            if j.version != 1 {
                return Err(Error::Parse(format!(
                    "unsupported JSON key version {}",
                    j.version
                )));
            }
            let key = PublicKey::new(parse_hex_int("n", &j.n)?, parse_hex_int("e", &j.e)?)?;
            if key.bits() != j.bits {
                return Err(Error::InvalidKey(format!(
                    "bits says {} but n has {}",
                    j.bits,
                    key.bits()
                )));
            }
            Ok(Decoded::Public(key))
        }
        other => Err(Error::Parse(format!(
            "JSON \"type\" is '{other}', expected '{PRIVATE_TYPE}' or '{PUBLIC_TYPE}'"
        ))),
    }
}

fn decode_hex(bytes: &[u8]) -> Result<Decoded> {
    let text = std::str::from_utf8(bytes)
        .map_err(|_| Error::Parse("not a key file: binary data that is not DER".into()))?;
    let mut fields: Vec<(String, String)> = Vec::new();
    let mut variant = None;
    for (lineno, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = line
            .split_once('=')
            .ok_or_else(|| Error::Parse(format!("line {}: expected 'name = hex'", lineno + 1)))?;
        let (name, value) = (name.trim(), value.trim());
        if name == "variant" {
            variant = Some(Variant::from_name(value).ok_or_else(|| {
                Error::Parse(format!("line {}: unknown variant '{value}'", lineno + 1))
            })?);
            continue;
        }
        if !HEX_FIELDS.contains(&name) {
            return Err(Error::Parse(format!(
                "line {}: unknown field '{name}'",
                lineno + 1
            )));
        }
        if fields.iter().any(|(n, _)| n == name) {
            return Err(Error::Parse(format!(
                "line {}: field '{name}' appears twice",
                lineno + 1
            )));
        }
        fields.push((name.to_string(), value.to_string()));
    }
    let get = |name: &str| -> Result<Option<Integer>> {
        fields
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| parse_hex_int(name, v))
            .transpose()
    };
    let (n, e) =
        match (get("n")?, get("e")?) {
            (Some(n), Some(e)) => (n, e),
            _ => return Err(Error::Parse(
                "not a key file: no 'n = ...' and 'e = ...' lines (expected PEM, DER, JSON or hex)"
                    .into(),
            )),
        };
    if fields.len() == 2 {
        return Ok(Decoded::Public(PublicKey::new(n, e)?));
    }
    let need = |name: &str| -> Result<Integer> {
        get(name)?.ok_or_else(|| Error::Parse(format!("hex private key lacks field '{name}'")))
    };
    let key = PrivateKey::from_components(
        n,
        e,
        need("d")?,
        need("p")?,
        need("q")?,
        get("dp")?,
        get("dq")?,
        variant,
    )?;
    if let Some(qinv) = get("qinv")? {
        check_qinv(&key, &qinv)?;
    }
    Ok(Decoded::Private(Box::new(key)))
}

/// Reads a private key in any supported form.
pub fn decode_private_key(bytes: &[u8]) -> Result<PrivateKey> {
    match decode_any(bytes)? {
        Decoded::Private(k) => Ok(*k),
        Decoded::Public(_) => Err(Error::Parse(
            "this is a public key; a private key is needed".into(),
        )),
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
        return Err(Error::InvalidParameters("the passphrase is empty".into()));
    }
    let mut salt = [0u8; 16];
    let mut iv = [0u8; 16];
    rng.fill(&mut salt)?;
    rng.fill(&mut iv)?;
    let params = pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(PBKDF2_ITERATIONS, &salt, &iv)
        .map_err(|e| Error::InvalidParameters(format!("PBES2 parameters: {e}")))?;
    let plain = pkcs8_der(key)?;
    let encrypted = params
        .encrypt(passphrase, &plain)
        .map_err(|e| Error::InvalidParameters(format!("encrypting the key: {e}")))?;
    let info = pkcs8::EncryptedPrivateKeyInfo {
        encryption_algorithm: params.into(),
        encrypted_data: &encrypted,
    };
    let der = info
        .to_der()
        .map_err(der_err("encoding EncryptedPrivateKeyInfo"))?;
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
            Err(Error::UnsupportedEncryption(format!(
                "{} PBKDF2 iterations (at most {MAX_PBKDF2_ITERATIONS} are accepted)",
                p.iteration_count
            )))
        }
        pkcs5::pbes2::Kdf::Scrypt(s) => {
            let bytes = 128 * u64::from(s.block_size) * s.cost_parameter;
            if bytes > MAX_SCRYPT_BYTES || s.parallelization > 16 {
                return Err(Error::UnsupportedEncryption(format!(
                    "scrypt with N = {}, r = {}, p = {} needs too much memory or time",
                    s.cost_parameter, s.block_size, s.parallelization
                )));
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
        let (_, der) = pem_rfc7468::decode_vec(trimmed)
            .map_err(|e| Error::Parse(format!("malformed PEM: {e}")))?;
        der
    } else {
        trimmed.to_vec()
    };
    let info = pkcs8::EncryptedPrivateKeyInfo::from_der(&der)
        .map_err(|e| Error::Parse(format!("malformed encrypted key: {e}")))?;
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
                    other => Error::UnsupportedEncryption(other.to_string()),
                })?
        }
        _ => return Err(Error::UnsupportedEncryption(
            "PBES1 (DES/RC2 with MD5 or SHA-1) is broken; re-encrypt with `openssl pkey -aes256`"
                .into(),
        )),
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
        assert!(matches!(err, Error::UnsupportedEncryption(_)), "{err:?}");
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

//! Why an RSA operation failed: one variant per cause, grouped by area (key consistency,
//! insecure or unworkable parameters, key-file parsing, key encryption).

use der::asn1::ObjectIdentifier;

use crate::hash::HashAlg;
use crate::params::Weakness;
use crate::variant::Variant;

/// Errors from RSA operations.
///
/// Decryption and signature verification failures are deliberately unspecific
/// ([`Error::Decryption`], [`Error::Verification`]) so they cannot serve as padding oracles.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Arithmetic-core failure (entropy, parameters).
    #[error(transparent)]
    Arith(#[from] hourglass_arith::Error),
    /// A key's parameters are inconsistent or out of range.
    #[error("invalid key: {0}")]
    InvalidKey(#[from] KeyError),
    /// Requested parameters are broken by published attacks; `allow_insecure` overrides.
    #[error("insecure parameters refused: {0}")]
    Insecure(#[from] Insecurity),
    /// Parameters that cannot work at all.
    #[error("invalid parameters: {0}")]
    InvalidParameters(#[from] ParamError),
    /// The message is too long for the key and padding.
    #[error("message too long: {len} bytes, at most {max} fit this key and padding")]
    MessageTooLong {
        /// Message length in bytes.
        len: usize,
        /// Largest length that fits.
        max: usize,
    },
    /// The input (ciphertext or signature) is not an integer below the modulus.
    #[error("input out of range: it must be {len} bytes and less than the modulus")]
    InputOutOfRange {
        /// The key's modulus length in bytes.
        len: usize,
    },
    /// Decryption failed (wrong key, corrupted ciphertext or wrong padding).
    #[error("decryption failed")]
    Decryption,
    /// The signature does not verify.
    #[error("signature verification failed")]
    Verification,
    /// A fault was detected during a private-key operation; no output was released.
    #[error("fault detected during the private-key operation; result withheld")]
    FaultDetected,
    /// A key file could not be parsed.
    #[error("cannot parse key: {0}")]
    Parse(#[from] ParseError),
    /// A key could not be written in the requested form (a failure of the encoder, not of
    /// the key).
    #[error("cannot encode key: {0}")]
    Encode(#[from] EncodeError),
    /// The private key is encrypted (PKCS#8 PBES2) and no passphrase was given.
    #[error("the private key is encrypted with a passphrase")]
    PassphraseRequired,
    /// The passphrase does not decrypt the key (or the encrypted key is damaged).
    #[error("the passphrase does not decrypt the key (wrong passphrase, or a damaged file)")]
    WrongPassphrase,
    /// The encrypted key uses a scheme this version does not read.
    #[error("unsupported key encryption: {0}")]
    UnsupportedEncryption(#[from] EncryptionError),
}

impl Error {
    /// Whether this is a negative verdict (exit status 1) rather than an error (2): a
    /// signature that does not verify.
    pub fn is_verdict(&self) -> bool {
        matches!(self, Error::Verification)
    }
}

/// Which of a key's two primes (or the values derived from it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WhichPrime {
    /// `p` (PKCS#1 `prime1`).
    P,
    /// `q` (PKCS#1 `prime2`).
    Q,
}

/// Why a key's components are inconsistent or out of range.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// A modulus of fewer than `min` bits.
    #[error("modulus must be odd and at least {min} bits")]
    ModulusTooSmall {
        /// The modulus's size.
        bits: u32,
        /// The smallest size accepted.
        min: u32,
    },
    /// An even modulus.
    #[error("modulus must be odd and at least {min} bits")]
    ModulusEven {
        /// The smallest size accepted (named with the rule).
        min: u32,
    },
    /// A public exponent that is not in `1 < e < n`.
    #[error("public exponent must be odd with 1 < e < n")]
    PublicExponentOutOfRange,
    /// An even public exponent.
    #[error("public exponent must be odd with 1 < e < n")]
    PublicExponentEven,
    /// `n` is not the product of the given primes.
    #[error("n != p * q")]
    ModulusNotProduct,
    /// `p` equals `q`, or one of them is below 3.
    #[error("p and q must be distinct odd primes")]
    PrimesNotDistinct,
    /// `p` or `q` failed the primality test.
    #[error("p or q is not prime")]
    NotPrime,
    /// `e d != 1` modulo `p - 1` or `q - 1`.
    #[error("e * d != 1 modulo the prime minus one")]
    PrivateExponent {
        /// The prime whose `p - 1` the exponents do not fit.
        prime: WhichPrime,
    },
    /// A recorded CRT exponent that is not `d mod (p-1)` (or `mod (q-1)`).
    #[error("{}", match prime { WhichPrime::P => "d_p != d mod (p-1)", WhichPrime::Q => "d_q != d mod (q-1)" })]
    CrtExponent {
        /// Which CRT exponent (`d_p` for `p`, `d_q` for `q`).
        prime: WhichPrime,
    },
    /// `q` has no inverse modulo `p`.
    #[error("q not invertible mod p")]
    QNotInvertible,
    /// A recorded CRT coefficient that is not `q^-1 mod p`.
    #[error("coefficient != q^-1 mod p")]
    Coefficient,
    /// A JSON key whose `bits` field disagrees with its modulus.
    #[error("bits says {recorded} but n has {actual}")]
    BitsMismatch {
        /// The `bits` field.
        recorded: u32,
        /// The modulus's size.
        actual: u32,
    },
    /// A thread panicked while holding the key's blinding state.
    #[error("blinding state poisoned")]
    BlindingPoisoned,
}

/// Why parameters were refused as insecure.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Insecurity {
    /// Published attacks break the parameters (one entry per attack that applies).
    #[error("{}", join_weaknesses(.0))]
    Weaknesses(Vec<Weakness>),
    /// A command-line modulus size outside the supported range.
    #[error("--bits {bits} is outside the supported {min}..={max} (smaller keys are factorable)")]
    UnsupportedBits {
        /// The requested size.
        bits: u32,
        /// Smallest supported size.
        min: u32,
        /// Largest supported size.
        max: u32,
    },
}

fn join_weaknesses(w: &[Weakness]) -> String {
    w.iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Key-generation options given on the command line that do not apply to every variant.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeygenOption {
    /// `--e` (standard and crt keys).
    E,
    /// `--dp-bits` (rebalanced, scheme-a and scheme-b keys).
    DpBits,
    /// `--e-bits` (scheme-a and scheme-b keys).
    EBits,
}

/// Parameters that cannot work at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamError {
    /// A modulus size outside what key generation supports.
    #[error("modulus size {bits} is outside {min}..={max} bits")]
    ModulusSize {
        /// The requested size.
        bits: u32,
        /// Smallest size.
        min: u32,
        /// Largest size.
        max: u32,
    },
    /// A command-line modulus size outside what key generation supports.
    #[error("--bits {bits} is outside {min}..={max}")]
    BitsOption {
        /// The requested size.
        bits: u32,
        /// Smallest size.
        min: u32,
        /// Largest size.
        max: u32,
    },
    /// A public exponent that is even or below 3.
    #[error("e must be odd and at least 3")]
    PublicExponentSmallOrEven,
    /// A public exponent too large for a standard key of this size.
    #[error("e of {e_bits} bits is too large for a {modulus_bits}-bit standard key")]
    PublicExponentTooLarge {
        /// The exponent's size.
        e_bits: u32,
        /// The modulus size.
        modulus_bits: u32,
    },
    /// A rebalanced key's CRT exponent size outside its workable range.
    #[error("d_p of {dp_bits} bits must be between {min} and {max} bits")]
    DpBitsRange {
        /// The requested size.
        dp_bits: u32,
        /// Smallest size.
        min: u32,
        /// Largest size.
        max: u32,
    },
    /// Short-e exponent sizes that do not fit the modulus.
    #[error("e of {e_bits} bits and d_p of {dp_bits} bits do not fit a {modulus_bits}-bit key")]
    ShortESizes {
        /// Public exponent size.
        e_bits: u32,
        /// CRT exponent size.
        dp_bits: u32,
        /// Modulus size.
        modulus_bits: u32,
    },
    /// `n_e + n_d` too small to leave room for `k_p` (and scheme A's `k_p2`).
    #[error(
        "n_e + n_d = {sum} bits must exceed n/2{} by at least 16 bits, so that \
         e d_p = k_p (p-1) + 1 has room for k_p",
        kp2_suffix(*kp2_bits)
    )]
    NoRoomForKp {
        /// `n_e + n_d`.
        sum: u32,
        /// Bits of scheme A's `k_p2` (0 for scheme B).
        kp2_bits: u32,
    },
    /// Scheme A sizes that leave no bits for `k_p1`.
    #[error("scheme A: n_e + n_d leaves no room for k_p1 after k_p2")]
    NoRoomForKp1,
    /// A prime search thread panicked.
    #[error("prime search thread panicked")]
    ThreadPanicked,
    /// A command-line option given for a variant it does not apply to.
    #[error("{}", option_message(*option, *variant))]
    OptionNotForVariant {
        /// The option.
        option: KeygenOption,
        /// The variant asked for.
        variant: Variant,
    },
    /// `--e` is not an integer.
    #[error("--e: '{text}' is not an integer ({source})")]
    PublicExponentSyntax {
        /// What was typed.
        text: String,
        /// Why it does not parse.
        #[source]
        source: rug::integer::ParseIntegerError,
    },
    /// An empty passphrase for encrypting a key.
    #[error("the passphrase is empty")]
    EmptyPassphrase,
    /// A digest of the wrong length for its hash.
    #[error("a {hash} digest is {want} bytes, got {got}")]
    DigestLength {
        /// The hash.
        hash: HashAlg,
        /// Its output length.
        want: usize,
        /// The length given.
        got: usize,
    },
    /// An OAEP seed of the wrong length.
    #[error("OAEP seed must be {want} bytes")]
    OaepSeedLength {
        /// The hash's output length.
        want: usize,
    },
    /// A modulus too small for OAEP with this hash.
    #[error(
        "a {bits}-bit key is too small for OAEP with a {hash_len}-byte hash (it needs at least {min_bits} bits); use a smaller hash or a larger key"
    )]
    KeyTooSmallForOaep {
        /// The key size (whole bytes, in bits).
        bits: usize,
        /// The hash's output length in bytes.
        hash_len: usize,
        /// Smallest key size that fits.
        min_bits: usize,
    },
    /// A modulus too small for PSS with this hash and salt.
    #[error("key too small for this hash and salt")]
    KeyTooSmallForPss,
}

fn kp2_suffix(kp2_bits: u32) -> String {
    if kp2_bits > 0 {
        format!(" + k_p2 bits ({kp2_bits})")
    } else {
        String::new()
    }
}

fn option_message(option: KeygenOption, variant: Variant) -> String {
    match option {
        KeygenOption::E => format!(
            "--e applies to standard and crt keys; {variant} keys derive e (use --e-bits for schemes A and B)"
        ),
        KeygenOption::DpBits => {
            "--dp-bits applies to rebalanced, scheme-a and scheme-b keys".into()
        }
        KeygenOption::EBits => "--e-bits applies to scheme-a and scheme-b keys".into(),
    }
}

/// A named integer field of a key (the names the hex form uses).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyField {
    /// The modulus.
    N,
    /// The public exponent.
    E,
    /// The private exponent.
    D,
    /// The first prime.
    P,
    /// The second prime.
    Q,
    /// `d mod (p-1)`.
    Dp,
    /// `d mod (q-1)`.
    Dq,
    /// `q^-1 mod p`.
    Qinv,
}

impl KeyField {
    /// Every field, in the order key files list them.
    pub const ALL: [KeyField; 8] = [
        KeyField::N,
        KeyField::E,
        KeyField::D,
        KeyField::P,
        KeyField::Q,
        KeyField::Dp,
        KeyField::Dq,
        KeyField::Qinv,
    ];

    /// The field's name in hex and JSON key files.
    pub fn name(self) -> &'static str {
        match self {
            KeyField::N => "n",
            KeyField::E => "e",
            KeyField::D => "d",
            KeyField::P => "p",
            KeyField::Q => "q",
            KeyField::Dp => "dp",
            KeyField::Dq => "dq",
            KeyField::Qinv => "qinv",
        }
    }

    /// The field named `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|f| f.name() == name)
    }
}

impl std::fmt::Display for KeyField {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A private or a public key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyKind {
    /// A private key.
    Private,
    /// A public key.
    Public,
}

/// A DER structure of a key file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DerItem {
    /// An INTEGER field.
    Integer,
    /// The modulus INTEGER of a public key.
    Modulus,
    /// The exponent INTEGER of a public key.
    Exponent,
    /// PKCS#1 `RSAPrivateKey`.
    RsaPrivateKey,
    /// PKCS#1 `RSAPublicKey`.
    RsaPublicKey,
    /// PKCS#8 `PrivateKeyInfo`.
    Pkcs8,
    /// `SubjectPublicKeyInfo`.
    Spki,
    /// PKCS#8 `EncryptedPrivateKeyInfo`.
    EncryptedKey,
}

impl std::fmt::Display for DerItem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DerItem::Integer => "integer",
            DerItem::Modulus => "modulus",
            DerItem::Exponent => "exponent",
            DerItem::RsaPrivateKey => "RSAPrivateKey",
            DerItem::RsaPublicKey => "RSAPublicKey",
            DerItem::Pkcs8 => "PKCS#8",
            DerItem::Spki => "SubjectPublicKeyInfo",
            DerItem::EncryptedKey => "encrypted key",
        })
    }
}

/// Why a key file could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ParseError {
    /// The file is larger than any key file.
    #[error("file is larger than {max} bytes; not a key")]
    FileTooLarge {
        /// The largest key file read.
        max: usize,
    },
    /// The file is empty (or only whitespace).
    #[error("the file is empty")]
    Empty,
    /// PEM armour that does not decode.
    #[error("malformed PEM: {0}")]
    Pem(#[source] pem_rfc7468::Error),
    /// A PEM label that is not an RSA key's.
    #[error("PEM label '{label}' is not an RSA key")]
    PemLabel {
        /// The label found.
        label: String,
    },
    /// A DER structure that does not decode.
    #[error("malformed {what}: {source}")]
    Der {
        /// The structure.
        what: DerItem,
        /// The decoder's error.
        #[source]
        source: der::Error,
    },
    /// Binary data that is none of the DER key structures.
    #[error("binary data is not a DER RSA key (PKCS#8, SPKI or PKCS#1)")]
    NotDer,
    /// A key whose algorithm is not rsaEncryption.
    #[error("{} algorithm {oid} is not rsaEncryption", match key { KeyKind::Private => "PKCS#8 key", KeyKind::Public => "public key" })]
    NotRsa {
        /// A PKCS#8 private key or an SPKI public key.
        key: KeyKind,
        /// The algorithm it names.
        oid: ObjectIdentifier,
    },
    /// A PKCS#1 key with more than two primes.
    #[error("multi-prime RSA keys are not supported")]
    MultiPrime,
    /// An SPKI public key whose bit string is not whole bytes.
    #[error("public key bit string has unused bits")]
    UnusedBits,
    /// An integer field larger than any key's.
    #[error("field {field}: {bytes}-byte integer; integers are limited to {max} bytes")]
    IntegerTooLarge {
        /// The field.
        field: KeyField,
        /// Its size in bytes.
        bytes: usize,
        /// The largest size accepted.
        max: usize,
    },
    /// A hexadecimal field longer than any key's.
    #[error("field {field}: more than {} hexadecimal digits; integers are limited to {max} bytes", 2 * max)]
    HexTooLong {
        /// The field.
        field: KeyField,
        /// The largest size accepted, in bytes.
        max: usize,
    },
    /// A field that is not hexadecimal digits.
    #[error("field {field}: expected hexadecimal digits")]
    NotHex {
        /// The field.
        field: KeyField,
    },
    /// A hexadecimal field GMP does not read.
    #[error("field {field}: {source}")]
    HexInteger {
        /// The field.
        field: KeyField,
        /// Why it does not parse.
        #[source]
        source: rug::integer::ParseIntegerError,
    },
    /// Text that is not JSON.
    #[error("malformed JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// JSON that is not a key of the kind its `type` names.
    #[error("JSON {} key: {source}", match key { KeyKind::Private => "private", KeyKind::Public => "public" })]
    JsonKey {
        /// The kind of key.
        key: KeyKind,
        /// What does not fit.
        #[source]
        source: serde_json::Error,
    },
    /// A JSON key of a version this one does not read.
    #[error("unsupported JSON key version {found}")]
    UnknownVersion {
        /// The version in the file.
        found: u32,
    },
    /// A JSON `type` that is not a key's.
    #[error(
        "JSON \"type\" is '{found}', expected '{}' or '{}'",
        crate::names::PRIVATE_TYPE,
        crate::names::PUBLIC_TYPE
    )]
    JsonType {
        /// The type in the file.
        found: String,
    },
    /// Binary data that is not DER.
    #[error("not a key file: binary data that is not DER")]
    NotText,
    /// A hex-form line that is not `name = hex`.
    #[error("line {line}: expected 'name = hex'")]
    HexLine {
        /// The line number (from 1).
        line: usize,
    },
    /// A `variant = ...` line naming no variant.
    #[error("line {line}: unknown variant '{name}'")]
    UnknownVariant {
        /// The line number (from 1).
        line: usize,
        /// The name in the file.
        name: String,
    },
    /// A hex-form field with an unknown name.
    #[error("line {line}: unknown field '{name}'")]
    UnknownField {
        /// The line number (from 1).
        line: usize,
        /// The name in the file.
        name: String,
    },
    /// A hex-form field given twice.
    #[error("line {line}: field '{field}' appears twice")]
    DuplicateField {
        /// The line number (from 1) of the second occurrence.
        line: usize,
        /// The field.
        field: KeyField,
    },
    /// Text without the `n` and `e` lines of the hex form.
    #[error("not a key file: no 'n = ...' and 'e = ...' lines (expected PEM, DER, JSON or hex)")]
    NoModulus,
    /// A hex-form private key without a field it needs.
    #[error("hex private key lacks field '{field}'")]
    MissingField {
        /// The field.
        field: KeyField,
    },
    /// A public key where a private key is needed.
    #[error("this is a public key; a private key is needed")]
    PublicNotPrivate,
}

/// Why a key could not be encoded.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EncodeError {
    /// A DER structure could not be encoded.
    #[error("{what}: {source}")]
    Der {
        /// The structure.
        what: DerItem,
        /// The encoder's error.
        #[source]
        source: der::Error,
    },
    /// PEM armour could not be written.
    #[error("PEM: {0}")]
    Pem(#[source] pem_rfc7468::Error),
    /// JSON could not be written.
    #[error("JSON: {0}")]
    Json(#[source] serde_json::Error),
    /// PBES2 parameters could not be built.
    #[error("PBES2 parameters: {0}")]
    Pbes2Parameters(pkcs5::Error),
    /// The key could not be encrypted.
    #[error("encrypting the key: {0}")]
    Encrypt(pkcs5::Error),
}

/// Why an encrypted key is not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EncryptionError {
    /// More PBKDF2 iterations than a key file may ask for.
    #[error("{iterations} PBKDF2 iterations (at most {max} are accepted)")]
    Pbkdf2Iterations {
        /// Iterations in the file.
        iterations: u32,
        /// Most accepted.
        max: u32,
    },
    /// scrypt parameters that need too much memory or time.
    #[error("scrypt with N = {n}, r = {r}, p = {p} needs too much memory or time")]
    ScryptCost {
        /// Cost parameter.
        n: u64,
        /// Block size.
        r: u16,
        /// Parallelisation.
        p: u16,
    },
    /// PBES1, which is broken.
    #[error("PBES1 (DES/RC2 with MD5 or SHA-1) is broken; re-encrypt with `openssl pkey -aes256`")]
    Pbes1,
    /// A PBES2 scheme the PKCS#5 library does not support.
    #[error("{0}")]
    Pbes2(pkcs5::Error),
}

/// Result alias for this crate.
pub type Result<T> = std::result::Result<T, Error>;

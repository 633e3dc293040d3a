//! Ed25519 keys of logs and witnesses, in the text forms of C2SP signed-note.
//!
//! A **verifier key** (what `--log-key`, `--witness` and `--witness-key` read, what `/log/key`
//! serves) is `<name>+<key id>+<base64(type || 32-byte public key)>`, where the key id is the
//! first four bytes of `SHA-256(name || 0x0A || type || public key)` in lowercase hex. The type
//! byte says what the key signs: `0x01`, notes (a log's checkpoints, [`KeyRole::Log`]), or `0x04`,
//! C2SP tlog-cosignature/v1 cosignatures ([`KeyRole::Witness`]). A key of one role is refused
//! where the other is expected, so a witness key can never pass for a log key.
//!
//! A **signer key** (the private key files `log.key` and `witness.key`) is
//! `PRIVATE+KEY+<name>+<key id>+<base64(type || 32-byte seed)>`, the form Go's note package and
//! the `signed_note` crate use for note keys, extended to the cosignature type.

use base64::Engine;
use ed25519_dalek::{Signature as EdSignature, Signer as _};
use hourglass_arith::entropy::EntropySource;
use zeroize::Zeroizing;

use crate::error::{LogError, Result};

/// The largest key text read (a name of up to 256 bytes and the encoded key).
pub const MAX_KEY_TEXT_BYTES: usize = 512;
/// The longest key name accepted.
pub const MAX_KEY_NAME_BYTES: usize = 256;

const BASE64: base64::engine::general_purpose::GeneralPurpose =
    base64::engine::general_purpose::STANDARD;

/// What a key signs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyRole {
    /// A log's key: it signs checkpoints as notes (signature type `0x01`, Ed25519).
    Log,
    /// A witness's key: it cosigns checkpoints (signature type `0x04`, C2SP tlog-cosignature/v1).
    Witness,
}

impl KeyRole {
    /// The signature type byte of the key's encoding.
    pub fn type_byte(self) -> u8 {
        match self {
            KeyRole::Log => 0x01,
            KeyRole::Witness => 0x04,
        }
    }

    fn from_type_byte(b: u8) -> Option<Self> {
        match b {
            0x01 => Some(KeyRole::Log),
            0x04 => Some(KeyRole::Witness),
            _ => None,
        }
    }

    /// `log` or `witness`.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyRole::Log => "log",
            KeyRole::Witness => "witness",
        }
    }
}

/// Whether `name` is a valid key name: 1 to [`MAX_KEY_NAME_BYTES`] bytes of UTF-8 with neither
/// whitespace nor `+` (signed-note's rule), and no control characters.
pub fn valid_key_name(name: &str) -> bool {
    name.len() <= MAX_KEY_NAME_BYTES
        && signed_note::is_key_name_valid(name)
        && !name.chars().any(char::is_control)
}

fn check_name(name: &str, what: &'static str) -> Result<()> {
    if valid_key_name(name) {
        Ok(())
    } else {
        Err(LogError::malformed(
            what,
            format!(
                "the name must be 1 to {MAX_KEY_NAME_BYTES} bytes without spaces, '+' or control characters"
            ),
        ))
    }
}

/// The key id of a key: `SHA-256(name || 0x0A || type || public key)[..4]`.
fn key_id(name: &str, role: KeyRole, public: &[u8; 32]) -> u32 {
    let mut material = Vec::with_capacity(33);
    material.push(role.type_byte());
    material.extend_from_slice(public);
    signed_note::key_id(name, &material)
}

/// The message a tlog-cosignature/v1 signs: a header line, the time line, then the checkpoint's
/// note text.
pub(crate) fn cosignature_message(time: u64, text: &[u8]) -> Vec<u8> {
    let mut m = format!("cosignature/v1\ntime {time}\n").into_bytes();
    m.extend_from_slice(text);
    m
}

/// A public key that verifies a log's signatures or a witness's cosignatures.
#[derive(Clone, PartialEq, Eq)]
pub struct VerifierKey {
    name: String,
    role: KeyRole,
    id: u32,
    key: ed25519_dalek::VerifyingKey,
}

impl std::fmt::Debug for VerifierKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "VerifierKey({})", self.encode())
    }
}

impl VerifierKey {
    /// Parses a verifier key `<name>+<id>+<base64>` (surrounding whitespace, such as a file's
    /// final newline, is ignored). The id must be the key's own, in lowercase hex, and the text
    /// must be exactly the key's encoding.
    pub fn parse(text: &str) -> Result<Self> {
        const WHAT: &str = "verifier key";
        let text = text.trim();
        if text.len() > MAX_KEY_TEXT_BYTES {
            return Err(LogError::TooLarge {
                what: WHAT,
                limit: MAX_KEY_TEXT_BYTES,
            });
        }
        if text.starts_with("PRIVATE+KEY+") {
            return Err(LogError::malformed(
                WHAT,
                "this is a private key; give its public half (the .pub file)",
            ));
        }
        // The id is checked by re-encoding: the text must be the key's own encoding.
        let mut parts = text.splitn(3, '+');
        let (Some(name), Some(_id), Some(b64)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(LogError::malformed(WHAT, "expected NAME+KEYID+BASE64"));
        };
        check_name(name, WHAT)?;
        let material = BASE64
            .decode(b64)
            .map_err(|_| LogError::malformed(WHAT, "the key is not base64"))?;
        let (role, public) = match material.split_first() {
            Some((&t, rest)) => (
                KeyRole::from_type_byte(t).ok_or_else(|| {
                    LogError::malformed(
                        WHAT,
                        format!("signature type 0x{t:02x} is not Ed25519 (0x01) or an Ed25519 cosignature (0x04)"),
                    )
                })?,
                <[u8; 32]>::try_from(rest)
                    .map_err(|_| LogError::malformed(WHAT, "an Ed25519 key has 32 bytes"))?,
            ),
            None => return Err(LogError::malformed(WHAT, "the key is empty")),
        };
        let key = ed25519_dalek::VerifyingKey::from_bytes(&public)
            .map_err(|_| LogError::malformed(WHAT, "not an Ed25519 public key"))?;
        if key.is_weak() {
            return Err(LogError::malformed(
                WHAT,
                "a weak (small-order) Ed25519 key",
            ));
        }
        let parsed = Self {
            name: name.to_string(),
            role,
            id: key_id(name, role, &public),
            key,
        };
        if parsed.encode() != text {
            return Err(LogError::malformed(
                WHAT,
                "the key id is not this key's (or the text is not in its canonical form)",
            ));
        }
        Ok(parsed)
    }

    /// The key's text, `<name>+<id>+<base64>`.
    pub fn encode(&self) -> String {
        let mut material = vec![self.role.type_byte()];
        material.extend_from_slice(self.key.as_bytes());
        format!("{}+{:08x}+{}", self.name, self.id, BASE64.encode(material))
    }

    /// The key's name (a log's origin, a witness's name).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the key verifies.
    pub fn role(&self) -> KeyRole {
        self.role
    }

    /// The key id.
    pub fn id(&self) -> u32 {
        self.id
    }

    /// `name+id`, as signature lines and messages name a key.
    pub fn label(&self) -> String {
        format!("{}+{:08x}", self.name, self.id)
    }

    /// Refuses a key of another role than `role`.
    pub fn expect_role(&self, role: KeyRole) -> Result<()> {
        if self.role == role {
            Ok(())
        } else {
            Err(LogError::WrongKey {
                name: self.name.clone(),
                why: match role {
                    KeyRole::Log => "this is a witness's cosigning key, not a log's key",
                    KeyRole::Witness => "this is a log's key, not a witness's cosigning key",
                },
            })
        }
    }

    /// The time of a cosignature by this (witness) key, from its signature bytes.
    pub(crate) fn cosignature_time(sig: &[u8]) -> Option<u64> {
        let time = u64::from_be_bytes(sig.get(..8)?.try_into().ok()?);
        (time <= i64::MAX as u64).then_some(time)
    }
}

impl signed_note::Verifier for VerifierKey {
    fn name(&self) -> &str {
        &self.name
    }

    fn key_id(&self) -> u32 {
        self.id
    }

    fn verify(&self, msg: &[u8], sig: &[u8]) -> bool {
        let (message, sig) = match self.role {
            KeyRole::Log => (std::borrow::Cow::Borrowed(msg), sig),
            KeyRole::Witness => {
                let Some(time) = Self::cosignature_time(sig) else {
                    return false;
                };
                (
                    std::borrow::Cow::Owned(cosignature_message(time, msg)),
                    &sig[8..],
                )
            }
        };
        let Ok(bytes) = <[u8; 64]>::try_from(sig) else {
            return false;
        };
        self.key
            .verify_strict(&message, &EdSignature::from_bytes(&bytes))
            .is_ok()
    }
}

/// A private key that signs checkpoints (a log's) or cosigns them (a witness's). The seed is
/// wiped from memory when the key is dropped (ed25519-dalek's `SigningKey` zeroizes itself).
pub struct SigningKey {
    name: String,
    role: KeyRole,
    key: ed25519_dalek::SigningKey,
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({}, ...)", self.verifier().label())
    }
}

impl SigningKey {
    /// A new key named `name` for `role`, from `rng` (the OS CSPRNG unless the user named
    /// another source).
    pub fn generate(name: &str, role: KeyRole, rng: &mut dyn EntropySource) -> Result<Self> {
        check_name(name, "key name")?;
        let mut seed = Zeroizing::new([0u8; 32]);
        rng.fill(seed.as_mut())?;
        Ok(Self {
            name: name.to_string(),
            role,
            key: ed25519_dalek::SigningKey::from_bytes(&seed),
        })
    }

    /// Parses a signer key `PRIVATE+KEY+<name>+<id>+<base64(type || seed)>`; the id must be
    /// the id of the key's public half.
    pub fn parse(text: &str) -> Result<Self> {
        const WHAT: &str = "private key";
        let text = text.trim();
        if text.len() > MAX_KEY_TEXT_BYTES {
            return Err(LogError::TooLarge {
                what: WHAT,
                limit: MAX_KEY_TEXT_BYTES,
            });
        }
        let Some(rest) = text.strip_prefix("PRIVATE+KEY+") else {
            return Err(LogError::malformed(
                WHAT,
                "expected PRIVATE+KEY+NAME+KEYID+BASE64",
            ));
        };
        let mut parts = rest.splitn(3, '+');
        let (Some(name), Some(id_hex), Some(b64)) = (parts.next(), parts.next(), parts.next())
        else {
            return Err(LogError::malformed(
                WHAT,
                "expected PRIVATE+KEY+NAME+KEYID+BASE64",
            ));
        };
        check_name(name, WHAT)?;
        let material = Zeroizing::new(
            BASE64
                .decode(b64)
                .map_err(|_| LogError::malformed(WHAT, "the key is not base64"))?,
        );
        let (role, seed) = match material.split_first() {
            Some((&t, rest)) => (
                KeyRole::from_type_byte(t).ok_or_else(|| {
                    LogError::malformed(WHAT, format!("signature type 0x{t:02x} is not supported"))
                })?,
                Zeroizing::new(
                    <[u8; 32]>::try_from(rest)
                        .map_err(|_| LogError::malformed(WHAT, "an Ed25519 seed has 32 bytes"))?,
                ),
            ),
            None => return Err(LogError::malformed(WHAT, "the key is empty")),
        };
        let key = Self {
            name: name.to_string(),
            role,
            key: ed25519_dalek::SigningKey::from_bytes(&seed),
        };
        if format!("{:08x}", key.verifier().id) != id_hex {
            return Err(LogError::malformed(
                WHAT,
                "the key id is not the id of this key's public half",
            ));
        }
        if *key.encode() != text {
            return Err(LogError::malformed(
                WHAT,
                "the text is not in canonical form",
            ));
        }
        Ok(key)
    }

    /// The key's text (secret: wiped when dropped).
    pub fn encode(&self) -> Zeroizing<String> {
        let mut material = Zeroizing::new(vec![self.role.type_byte()]);
        material.extend_from_slice(self.key.as_bytes());
        Zeroizing::new(format!(
            "PRIVATE+KEY+{}+{:08x}+{}",
            self.name,
            self.verifier().id,
            BASE64.encode(&*material)
        ))
    }

    /// The public half.
    pub fn verifier(&self) -> VerifierKey {
        let public = self.key.verifying_key();
        VerifierKey {
            name: self.name.clone(),
            role: self.role,
            id: key_id(&self.name, self.role, public.as_bytes()),
            key: public,
        }
    }

    /// The key's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// What the key signs.
    pub fn role(&self) -> KeyRole {
        self.role
    }

    /// The note signature of `text` by this (log) key.
    pub(crate) fn sign_note(&self, text: &[u8]) -> Result<signed_note::Signature> {
        self.verifier().expect_role(KeyRole::Log)?;
        let sig = self.key.sign(text);
        signed_note::Signature::new(self.name.clone(), self.verifier().id, sig.to_vec())
            .map_err(|e| LogError::malformed("key name", e.to_string()))
    }

    /// The cosignature of the note text `text` at `time` (seconds since 1970) by this (witness)
    /// key.
    pub(crate) fn cosign(&self, text: &[u8], time: u64) -> Result<signed_note::Signature> {
        self.verifier().expect_role(KeyRole::Witness)?;
        if time > i64::MAX as u64 {
            return Err(LogError::Settings(
                "a cosignature time past 2^63 - 1".into(),
            ));
        }
        let sig = self.key.sign(&cosignature_message(time, text));
        let mut bytes = time.to_be_bytes().to_vec();
        bytes.extend_from_slice(&sig.to_bytes());
        signed_note::Signature::new(self.name.clone(), self.verifier().id, bytes)
            .map_err(|e| LogError::malformed("key name", e.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hourglass_arith::entropy::SeededEntropy;
    use signed_note::Verifier as _;

    fn key(name: &str, role: KeyRole) -> SigningKey {
        SigningKey::generate(name, role, &mut SeededEntropy::new(name.as_bytes())).unwrap()
    }

    #[test]
    fn keys_round_trip_and_ids_follow_the_spec() {
        for role in [KeyRole::Log, KeyRole::Witness] {
            let k = key("example.com/log", role);
            let again = SigningKey::parse(&k.encode()).unwrap();
            assert_eq!(again.verifier(), k.verifier());
            let v = VerifierKey::parse(&format!("{}\n", k.verifier().encode())).unwrap();
            assert_eq!(v, k.verifier());
            assert_eq!(v.role(), role);
        }
    }

    #[test]
    fn a_log_key_matches_signed_notes_own_encoding() {
        // signed_note's StandardVerifier reads our log verifier keys, and our note signatures
        // verify under it: the same format, from an independent implementation.
        let k = key("example.com/log", KeyRole::Log);
        let theirs = signed_note::StandardVerifier::new(&k.verifier().encode()).unwrap();
        assert_eq!(theirs.key_id(), k.verifier().id());
        let sig = k.sign_note(b"hello\n").unwrap();
        assert!(theirs.verify(b"hello\n", sig.signature()));
        // ...and its signer reads our private log key.
        assert!(signed_note::StandardSigner::new(&k.encode()).is_ok());
    }

    #[test]
    fn cosignatures_verify_only_for_their_text_and_time() {
        let w = key("witness.example/w1", KeyRole::Witness);
        let sig = w.cosign(b"origin\n1\nAAAA\n", 1_700_000_000).unwrap();
        let v = w.verifier();
        assert!(v.verify(b"origin\n1\nAAAA\n", sig.signature()));
        assert!(!v.verify(b"origin\n2\nAAAA\n", sig.signature()));
        let mut later = sig.signature().to_vec();
        later[7] ^= 1;
        assert!(!v.verify(b"origin\n1\nAAAA\n", &later));
        // A cosignature is not a note signature: the log role refuses it and vice versa.
        assert!(w.sign_note(b"x\n").is_err());
        assert!(key("l", KeyRole::Log).cosign(b"x\n", 1).is_err());
    }

    #[test]
    fn malformed_keys_are_refused_not_panicked_on() {
        let good = key("n", KeyRole::Log).verifier().encode();
        for bad in [
            String::new(),
            "n".into(),
            "n+0000".into(),
            good.replace("n+", "n m+"),
            good.to_uppercase(),
            format!("{good}A"),
            good.replacen('+', "+0", 1),
            format!("PRIVATE+KEY+{good}"),
            "n+00000000+AgAAAA==".into(),
            "x".repeat(2000),
        ] {
            assert!(VerifierKey::parse(&bad).is_err(), "{bad}");
            assert!(SigningKey::parse(&bad).is_err(), "{bad}");
        }
        // Another key's id.
        let other = key("n", KeyRole::Witness).verifier().encode();
        let head: Vec<&str> = good.splitn(3, '+').collect();
        let tail: Vec<&str> = other.splitn(3, '+').collect();
        let spliced = format!("{}+{}+{}", head[0], head[1], tail[2]);
        assert!(VerifierKey::parse(&spliced).is_err());
    }

    #[test]
    fn roles_are_not_interchangeable() {
        let w = key("w", KeyRole::Witness).verifier();
        assert!(w.expect_role(KeyRole::Log).is_err());
        assert!(w.expect_role(KeyRole::Witness).is_ok());
    }
}

//! The data directory: the secrets a server holds (receipt-signing key, vault key for the
//! sets' private keys, the admin token's hash) and, by default, the SQLite database.
//!
//! Files (all mode 0600, made on first start, never served):
//! - `receipt.key`: the institution's RSA key (PKCS#8 PEM) that signs receipts; `receipt.pub`
//!   (0644) is its public half, also served at `/institution.pub`.
//! - `vault.key`: 32 random bytes; the sets' private puzzle keys are stored in the database
//!   sealed under it (XChaCha20-Poly1305, the set's name as associated data), so N servers that
//!   share one PostgreSQL and these files can all verify, while the database alone reveals no
//!   trapdoor.
//! - `admin.token` (unless `--admin-token-file` names another): a random token; only its
//!   SHA-256 is kept in memory and compared in constant time.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hourglass_arith::atomic::{write_atomic, Existing};
use hourglass_arith::entropy::{EntropySource, OsEntropy};
use hourglass_rsa::encoding::{
    decode_private_key, encode_private_key, encode_public_key, KeyFormat,
};
use hourglass_rsa::{KeyGenOptions, PrivateKey, Variant};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::error::{io, Error};

const VAULT_MAGIC: &[u8; 8] = b"HGVAULT1";
/// Receipt keys are long-lived: 3072 bits.
const RECEIPT_KEY_BITS: u32 = 3072;

/// The secrets of one data directory, loaded.
pub(crate) struct DataDir {
    path: PathBuf,
    /// Held for the life of the server when the database is this directory's SQLite file.
    _lock: Option<File>,
    admin_hash: [u8; 32],
    vault: Zeroizing<[u8; 32]>,
    receipt_key: PrivateKey,
    receipt_pub_pem: String,
}

impl DataDir {
    /// Opens (creating what is missing) the data directory. `exclusive`: take the directory's
    /// lock (a SQLite database serves one process).
    pub(crate) fn open(
        path: &Path,
        admin_token_file: Option<&Path>,
        exclusive: bool,
    ) -> Result<Self, Error> {
        std::fs::create_dir_all(path).map_err(io(path))?;
        let lock = if exclusive {
            let lock_path = path.join("serve.lock");
            let file = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_path)
                .map_err(io(&lock_path))?;
            match file.try_lock() {
                Ok(()) => Some(file),
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(Error::DataDirBusy { path: lock_path })
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(io(&lock_path)(e)),
            }
        } else {
            None
        };
        let mut rng = OsEntropy;
        let token_path = admin_token_file
            .map(Path::to_path_buf)
            .unwrap_or_else(|| path.join("admin.token"));
        let token = read_or_make(&token_path, || {
            let mut bytes = [0u8; 32];
            rng.fill(&mut bytes)?;
            Ok(Zeroizing::new(
                format!("{}\n", hex::encode(bytes)).into_bytes(),
            ))
        })?;
        let token = String::from_utf8_lossy(&token).trim().to_string();
        if token.len() < 16 {
            return Err(Error::WeakToken { path: token_path });
        }
        let admin_hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();

        let vault_path = path.join("vault.key");
        let vault_bytes = read_or_make(&vault_path, || {
            let mut bytes = Zeroizing::new(vec![0u8; 32]);
            rng.fill(&mut bytes)?;
            Ok(bytes)
        })?;
        let vault: [u8; 32] = vault_bytes
            .as_slice()
            .try_into()
            .map_err(|_| Error::BadFile {
                path: vault_path.clone(),
                what: "vault key (32 bytes)",
            })?;

        let key_path = path.join("receipt.key");
        let key_pem = read_or_make(&key_path, || {
            let key = KeyGenOptions::new(RECEIPT_KEY_BITS, Variant::Crt).generate(&mut rng)?;
            Ok(encode_private_key(&key, KeyFormat::Pem)?)
        })?;
        let receipt_key = decode_private_key(&key_pem).map_err(|_| Error::BadFile {
            path: key_path,
            what: "receipt-signing key (PKCS#8 PEM)",
        })?;
        let receipt_pub_pem =
            String::from_utf8(encode_public_key(receipt_key.public(), KeyFormat::Pem)?)
                .unwrap_or_default();
        let pub_path = path.join("receipt.pub");
        write_atomic(
            &pub_path,
            receipt_pub_pem.as_bytes(),
            0o644,
            Existing::Replace,
        )
        .map_err(io(&pub_path))?;
        Ok(Self {
            path: path.to_path_buf(),
            _lock: lock,
            admin_hash,
            vault: Zeroizing::new(vault),
            receipt_key,
            receipt_pub_pem,
        })
    }

    /// The directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Whether `token` is the admin token (constant time in the token's content).
    pub(crate) fn is_admin(&self, token: &str) -> bool {
        let hash: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        hash.ct_eq(&self.admin_hash).into()
    }

    /// The key that signs receipts.
    pub(crate) fn receipt_key(&self) -> &PrivateKey {
        &self.receipt_key
    }

    /// The receipt key's public half, PEM.
    pub(crate) fn receipt_pub_pem(&self) -> &str {
        &self.receipt_pub_pem
    }

    /// Seals a set's private keys for the database.
    pub(crate) fn seal(&self, set: &str, plaintext: &[u8]) -> Result<Vec<u8>, Error> {
        let mut nonce = [0u8; 24];
        OsEntropy.fill(&mut nonce)?;
        let cipher = XChaCha20Poly1305::new(self.vault.as_ref().into());
        let sealed = cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: plaintext,
                    aad: set.as_bytes(),
                },
            )
            .map_err(|_| Error::Vault { set: set.into() })?;
        let mut out = VAULT_MAGIC.to_vec();
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// Opens what [`DataDir::seal`] sealed for the same set.
    pub(crate) fn open_sealed(
        &self,
        set: &str,
        sealed: &[u8],
    ) -> Result<Zeroizing<Vec<u8>>, Error> {
        let fail = || Error::Vault { set: set.into() };
        let rest = sealed.strip_prefix(VAULT_MAGIC).ok_or_else(fail)?;
        if rest.len() < 24 {
            return Err(fail());
        }
        let (nonce, body) = rest.split_at(24);
        let cipher = XChaCha20Poly1305::new(self.vault.as_ref().into());
        cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: body,
                    aad: set.as_bytes(),
                },
            )
            .map(Zeroizing::new)
            .map_err(|_| fail())
    }
}

/// Reads a secret file, or makes it with `make` (mode 0600, never replacing a file that
/// appeared meanwhile) when it does not exist.
fn read_or_make(
    path: &Path,
    make: impl FnOnce() -> Result<Zeroizing<Vec<u8>>, Error>,
) -> Result<Zeroizing<Vec<u8>>, Error> {
    match read_secret(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let bytes = make()?;
            match write_atomic(path, &bytes, 0o600, Existing::Refuse) {
                Ok(()) => Ok(bytes),
                // Another process made it first: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                    read_secret(path).map_err(io(path))
                }
                Err(e) => Err(io(path)(e)),
            }
        }
        other => other.map_err(io(path)),
    }
}

/// Reads a small secret file (at most 1 MiB).
fn read_secret(path: &Path) -> std::io::Result<Zeroizing<Vec<u8>>> {
    let mut bytes = Zeroizing::new(Vec::new());
    File::open(path)?.take(1 << 20).read_to_end(&mut bytes)?;
    Ok(bytes)
}

//! The data directory: the secrets a server holds (receipt-signing key, vault key for the
//! sets' private keys, the admin token's hash) and, by default, the SQLite database.
//!
//! The directory is its owner's only (mode 0700, set at every start, whatever the umask), and
//! so is every file in it (0600, tightened at every start), the SQLite database and the
//! `-wal` and `-shm` files SQLite makes beside it included: the database file is created 0600
//! before SQLite opens it ([`create_sqlite_file`]), and SQLite gives its side files the
//! database's mode. The exceptions are `receipt.pub`, `tsa.pem` and `tsa-ca.pem`, public by
//! design.
//!
//! Files (all mode 0600, made on first start, never served):
//! - `receipt.key`: the institution's RSA key (PKCS#8 PEM) that signs receipts; `receipt.pub`
//!   (0644: public) is its public half, also served at `/institution.pub`.
//! - `tsa.key`: the RFC 3161 TSA's key, ECDSA P-256 unless another kind is named when it is
//!   made (`--tsa-key rsa-3072` or `ecdsa-p384`; PKCS#8 PEM); `tsa-ca.pem` (0644) the TSA CA, self-signed
//!   with the receipt key (so the institution's public key pins the tokens' chain), and
//!   `tsa.pem` (0644) the TSA certificate it issued, with the critical extendedKeyUsage
//!   timeStamping. Served at `/tsa-ca.pem` and `/tsa.pem`. Not made when `--tsa-cert` and
//!   `--tsa-key` name an institution's own.
//! - `log.key`: the transparency log's Ed25519 key (C2SP signer key
//!   `PRIVATE+KEY+<origin>+<id>+<base64>`), named after the log's origin (`--log-origin` at
//!   first start, else `<listen address>/log`); `log.pub` (0644) is its verifier key, also
//!   served at `/log/key`. Every server of one database needs a copy of the first one's.
//! - `vault.key`: 32 random bytes; the sets' private puzzle keys are stored in the database
//!   sealed under it (XChaCha20-Poly1305, the set's name as associated data), so N servers that
//!   share one PostgreSQL and these files can all verify, while the database alone reveals no
//!   trapdoor.
//! - `admin.token` (unless `--admin-token-file` names another): a random token; only its
//!   SHA-256 is kept in memory and compared in constant time.
//! - `serve.lock`: held by the server that uses the SQLite database here.
//! - `hourglass.db`, `hourglass.db-wal`, `hourglass.db-shm`: the SQLite database, by default.

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::str::FromStr;

use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hourglass_arith::atomic::{write_atomic, Existing};
use hourglass_arith::entropy::{EntropySource, OsEntropy};
use hourglass_log::keys::{KeyRole, SigningKey};
use hourglass_receipt::institution_fingerprint;
use hourglass_rsa::encoding::{
    decode_private_key, encode_private_key, encode_public_key, KeyFormat,
};
use hourglass_rsa::{KeyGenOptions, PrivateKey, Variant};
use hourglass_timestamp::{
    verify_token, PolicyId, Query, Tsa, TsaAnchor, TsaCertificate, TsaKey, TsaKeyType,
};
use hourglass_x509::{pem_certificates, CaCertificate, Certificate, CertificateOptions};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use zeroize::Zeroizing;

use crate::error::{io, Error};

const VAULT_MAGIC: &[u8; 8] = b"HGVAULT1";
/// Receipt keys are long-lived: 3072 bits.
const RECEIPT_KEY_BITS: u32 = 3072;
/// The data directory's mode: its owner's only.
const DIR_MODE: u32 = 0o700;
/// The mode of every file in it but the [`PUBLIC_FILES`].
const FILE_MODE: u32 = 0o600;
/// The files of the directory that are public (served at `/institution.pub`, `/tsa.pem` and
/// `/tsa-ca.pem`).
const PUBLIC_FILES: [&str; 4] = ["receipt.pub", "tsa.pem", "tsa-ca.pem", "log.pub"];
/// How long the TSA CA made at first start is valid.
const TSA_CA_DAYS: u32 = 30 * 365;
/// How long the TSA certificate made at first start is valid.
const TSA_CERT_DAYS: u32 = 10 * 365;

/// An institution's own TSA certificate and key (`--tsa-cert`, `--tsa-key`).
#[derive(Debug, Clone)]
pub struct TsaFiles {
    /// PEM: the TSA certificate, then the CA certificates of its chain.
    pub cert: PathBuf,
    /// The TSA's private key (PKCS#8 or PKCS#1 PEM, unencrypted).
    pub key: PathBuf,
}

/// Where the service's timestamp authority comes from.
#[derive(Debug, Clone)]
pub enum TsaSource {
    /// The data directory's own, made at first start with a key of this kind (`None`: the
    /// default, ECDSA P-256); an existing `tsa.key` must be of the kind given.
    Own(Option<TsaKeyType>),
    /// An institution's own certificate and key.
    Given(TsaFiles),
}

/// The timestamp authority of this data directory.
pub(crate) struct TsaSetup {
    pub tsa: Tsa,
    /// The TSA certificate, PEM (`/tsa.pem`).
    pub cert_pem: String,
    /// Its CA certificates, PEM (`/tsa-ca.pem`); `None` when an institution's own TSA
    /// certificate came without its chain.
    pub ca_pem: Option<String>,
}

/// The secrets of one data directory, loaded.
pub(crate) struct DataDir {
    path: PathBuf,
    /// Held for the life of the server when the database is this directory's SQLite file.
    _lock: Option<File>,
    admin_hash: [u8; 32],
    vault: Zeroizing<[u8; 32]>,
    receipt_key: PrivateKey,
    receipt_pub_pem: String,
    tsa: TsaSetup,
    log_key: SigningKey,
}

impl DataDir {
    /// Opens (creating what is missing) the data directory. `exclusive`: take the directory's
    /// lock (a SQLite database serves one process). The log key made at first start is named
    /// `log_origin`, else `default_origin`; an existing one must be named `log_origin` when it
    /// is given.
    pub(crate) fn open(
        path: &Path,
        admin_token_file: Option<&Path>,
        exclusive: bool,
        tsa_source: &TsaSource,
        policy: PolicyId,
        log_origin: (Option<&str>, &str),
    ) -> Result<Self, Error> {
        make_private(path)?;
        let lock = if exclusive {
            let lock_path = path.join("serve.lock");
            let file = File::options()
                .create(true)
                .truncate(false)
                .write(true)
                .mode(FILE_MODE)
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
        let tsa = match tsa_source {
            TsaSource::Given(files) => given_tsa(files, policy)?,
            TsaSource::Own(kind) => own_tsa(path, *kind, &receipt_key, policy, &mut rng)?,
        };
        let log_key = log_key(path, log_origin, &mut rng)?;
        Ok(Self {
            path: path.to_path_buf(),
            _lock: lock,
            admin_hash,
            vault: Zeroizing::new(vault),
            receipt_key,
            receipt_pub_pem,
            tsa,
            log_key,
        })
    }

    /// The transparency log's key (its name is the log's origin).
    pub(crate) fn log_key(&self) -> &SigningKey {
        &self.log_key
    }

    /// The timestamp authority.
    pub(crate) fn tsa(&self) -> &TsaSetup {
        &self.tsa
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

/// The log key of the data directory at `dir`, made at first start (see [`DataDir::open`]),
/// and its public half written to `log.pub`.
fn log_key(
    dir: &Path,
    (given, default): (Option<&str>, &str),
    rng: &mut dyn EntropySource,
) -> Result<SigningKey, Error> {
    let path = dir.join("log.key");
    let mut made = None;
    let text = read_or_make(&path, || {
        let key = SigningKey::generate(given.unwrap_or(default), KeyRole::Log, rng)
            .map_err(|e| Error::Log(format!("the log origin: {e}")))?;
        let text = Zeroizing::new(format!("{}\n", &*key.encode()).into_bytes());
        made = Some(());
        Ok(text)
    })?;
    let key = std::str::from_utf8(&text)
        .ok()
        .and_then(|t| SigningKey::parse(t).ok())
        .filter(|k| k.role() == KeyRole::Log)
        .ok_or_else(|| Error::BadFile {
            path: path.clone(),
            what: "transparency log key (PRIVATE+KEY+ORIGIN+ID+BASE64)",
        })?;
    if let Some(origin) = given {
        if made.is_none() && key.name() != origin {
            return Err(Error::Log(format!(
                "{} is the key of the log '{}', not '{origin}' (a log's origin is fixed when its \
                 key is made; drop --log-origin or give '{}')",
                path.display(),
                key.name(),
                key.name()
            )));
        }
    }
    let pub_path = dir.join("log.pub");
    write_atomic(
        &pub_path,
        format!("{}\n", key.verifier().encode()).as_bytes(),
        0o644,
        Existing::Replace,
    )
    .map_err(io(&pub_path))?;
    Ok(key)
}

/// Makes `dir` its owner's only: created with mode 0700 if missing (its parents as usual), set
/// to 0700 if it exists, and every file in it but [`PUBLIC_FILE`] set to 0600 (a directory
/// made by an older version, or under a loose umask, had 0755 and 0644).
fn make_private(dir: &Path) -> Result<(), Error> {
    if let Some(parent) = dir.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(io(parent))?;
    }
    match std::fs::DirBuilder::new().mode(DIR_MODE).create(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && dir.is_dir() => {}
        other => other.map_err(io(dir))?,
    }
    restrict(dir, DIR_MODE)?;
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        let is_file = entry.file_type().map_err(io(&path))?.is_file();
        if is_file && !PUBLIC_FILES.iter().any(|f| entry.file_name() == *f) {
            restrict(&path, FILE_MODE)?;
        }
    }
    Ok(())
}

/// Takes the permissions of `path` down to at most `mode` (its owner's bits only are kept).
fn restrict(path: &Path, mode: u32) -> Result<(), Error> {
    let now = std::fs::metadata(path)
        .map_err(io(path))?
        .permissions()
        .mode()
        & 0o7777;
    if now & !mode != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(now & mode))
            .map_err(io(path))?;
    }
    Ok(())
}

/// Creates the SQLite database file that `url` names (`sqlite://PATH?...`), empty and with
/// mode 0600, if it does not exist, before SQLite opens it; an existing one, and the `-wal`,
/// `-shm` and `-journal` files beside it, are taken down to 0600. SQLite creates a database
/// with mode 0644 less the umask, and its side files with the database's mode: made this way,
/// none of them is readable by other users whatever the umask. In-memory and read-only
/// databases are left alone.
pub(crate) fn create_sqlite_file(url: &str) -> Result<(), Error> {
    let Ok(options) = sqlx::sqlite::SqliteConnectOptions::from_str(url) else {
        return Ok(()); // SQLite's own error, when it opens the URL, says more.
    };
    let query = url.split_once('?').map_or("", |(_, q)| q);
    let file = options.get_filename();
    let in_memory = file.to_string_lossy().starts_with("file:sqlx-in-memory")
        || query.split('&').any(|p| p == "mode=memory");
    if in_memory || file.as_os_str().is_empty() {
        return Ok(());
    }
    if !query.split('&').any(|p| p == "mode=ro") {
        match File::options()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .open(file)
        {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(io(file)(e)),
        }
    }
    for suffix in ["", "-wal", "-shm", "-journal"] {
        let mut name = file.as_os_str().to_owned();
        name.push(suffix);
        let side = PathBuf::from(name);
        if side.is_file() {
            restrict(&side, FILE_MODE)?;
        }
    }
    Ok(())
}

/// The data directory's own TSA: `tsa.key` (of `kind`, ECDSA P-256 by default), `tsa-ca.pem`
/// (self-signed with the receipt key) and `tsa.pem`, each read if present and made if not. A CA
/// that is not the receipt key's, a TSA certificate that is not the TSA key's or not issued by
/// the CA, and a key of another kind than `kind` are refused; the TSA is checked by stamping
/// and verifying one token before the server starts.
fn own_tsa(
    dir: &Path,
    kind: Option<TsaKeyType>,
    receipt_key: &PrivateKey,
    policy: PolicyId,
    rng: &mut OsEntropy,
) -> Result<TsaSetup, Error> {
    let key_path = dir.join("tsa.key");
    let key_pem = read_or_make(&key_path, || {
        let key = TsaKey::generate(kind.unwrap_or_default(), rng)?;
        Ok(Zeroizing::new(key.to_pem()?.as_bytes().to_vec()))
    })?;
    let key = TsaKey::from_pem(&key_pem).map_err(|_| Error::BadFile {
        path: key_path.clone(),
        what: "TSA key (PKCS#8 PEM)",
    })?;
    if let Some(kind) = kind {
        if key.kind() != Some(kind) {
            return Err(Error::TsaKeyKind {
                path: key_path,
                found: key.describe(),
                wanted: kind.name(),
            });
        }
    }
    let cert_err = |path: &Path| {
        let path = path.to_path_buf();
        move |source| Error::TsaCertificate { path, source }
    };
    let ca_path = dir.join("tsa-ca.pem");
    let fingerprint = institution_fingerprint(receipt_key.public())?;
    let ca = match std::fs::read(&ca_path) {
        Ok(bytes) => CaCertificate::from_bytes(&bytes)
            .map_err(hourglass_timestamp::TimestampError::from)
            .map_err(cert_err(&ca_path))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let options = CertificateOptions::days(
                &format!("hourglass TSA CA {}", &fingerprint[..16]),
                TSA_CA_DAYS,
            );
            let ca = CaCertificate::self_signed(receipt_key, &options, rng)
                .map_err(hourglass_timestamp::TimestampError::from)
                .map_err(cert_err(&ca_path))?;
            write_atomic(&ca_path, ca.to_pem().as_bytes(), 0o644, Existing::Refuse)
                .map_err(io(&ca_path))?;
            ca
        }
        Err(e) => return Err(io(&ca_path)(e)),
    };
    if ca.public_key() != receipt_key.public() {
        return Err(Error::BadFile {
            path: ca_path,
            what: "TSA CA of this data directory's receipt key",
        });
    }
    let cert_path = dir.join("tsa.pem");
    let cert = match std::fs::read(&cert_path) {
        Ok(bytes) => TsaCertificate::from_bytes(&bytes).map_err(cert_err(&cert_path))?,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let options = CertificateOptions::days(
                &format!("hourglass TSA {}", &fingerprint[..16]),
                TSA_CERT_DAYS,
            );
            let spki = key.spki()?;
            let cert = TsaCertificate::issue(spki, &ca, receipt_key, &options, rng)
                .map_err(cert_err(&cert_path))?;
            write_atomic(
                &cert_path,
                cert.to_pem().as_bytes(),
                0o644,
                Existing::Refuse,
            )
            .map_err(io(&cert_path))?;
            cert
        }
        Err(e) => return Err(io(&cert_path)(e)),
    };
    let (cert_pem, ca_pem) = (cert.to_pem(), ca.to_pem());
    let tsa = Tsa::new(key, cert, vec![ca.certificate().clone()], policy)?;
    // One token, stamped now and verified under the CA as any verifier will: a certificate
    // issued by another CA, or no longer valid, stops the server here.
    let probe = Query::for_data(hourglass_rsa::HashAlg::Sha256, b"probe", false, None, rng)?;
    let token = tsa.stamp(&probe, &[1], std::time::SystemTime::now(), rng)?;
    verify_token(&token, &[], &[TsaAnchor::from(ca)]).map_err(cert_err(&cert_path))?;
    Ok(TsaSetup {
        tsa,
        cert_pem,
        ca_pem: Some(ca_pem),
    })
}

/// An institution's own TSA (`--tsa-cert`, `--tsa-key`): the first certificate of the file is
/// the TSA's, the others its CAs, sent with every token that asks for certificates.
fn given_tsa(files: &TsaFiles, policy: PolicyId) -> Result<TsaSetup, Error> {
    let cert_err = |source| Error::TsaCertificate {
        path: files.cert.clone(),
        source,
    };
    let bytes = std::fs::read(&files.cert).map_err(io(&files.cert))?;
    let ders = pem_certificates(&bytes).map_err(|e| cert_err(e.into()))?;
    let (first, rest) = ders.split_first().ok_or(Error::BadFile {
        path: files.cert.clone(),
        what: "PEM file of certificates",
    })?;
    let cert = TsaCertificate::from_bytes(first).map_err(cert_err)?;
    let chain = rest
        .iter()
        .map(|der| Certificate::from_bytes(der))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| cert_err(e.into()))?;
    let key_pem = read_secret(&files.key).map_err(io(&files.key))?;
    let key = TsaKey::from_pem(&key_pem).map_err(|_| Error::BadFile {
        path: files.key.clone(),
        what: "TSA private key (unencrypted PEM: RSA, or EC over P-256 or P-384)",
    })?;
    let cert_pem = cert.to_pem();
    let ca_pem = (!chain.is_empty()).then(|| chain.iter().map(Certificate::to_pem).collect());
    Ok(TsaSetup {
        tsa: Tsa::new(key, cert, chain, policy)?,
        cert_pem,
        ca_pem,
    })
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

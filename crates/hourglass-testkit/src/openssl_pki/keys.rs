//! Private keys made by `openssl genpkey`.

use std::path::{Path, PathBuf};

use tempfile::TempDir;

use super::command::{run, temp_dir, Error};

/// The kind of a key pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyKind {
    /// RSA with a modulus of this many bits.
    Rsa(u32),
    /// ECDSA on NIST P-256.
    P256,
    /// ECDSA on NIST P-384.
    P384,
    /// ECDSA on NIST P-521.
    P521,
    /// Ed25519.
    Ed25519,
}

impl KeyKind {
    /// The arguments of `openssl genpkey` that make such a key.
    fn genpkey_args(self) -> Vec<String> {
        let curve = |name: &str| {
            vec![
                "-algorithm".into(),
                "EC".into(),
                "-pkeyopt".into(),
                format!("ec_paramgen_curve:{name}"),
            ]
        };
        match self {
            KeyKind::Rsa(bits) => vec![
                "-algorithm".into(),
                "RSA".into(),
                "-pkeyopt".into(),
                format!("rsa_keygen_bits:{bits}"),
            ],
            KeyKind::P256 => curve("P-256"),
            KeyKind::P384 => curve("P-384"),
            KeyKind::P521 => curve("P-521"),
            KeyKind::Ed25519 => vec!["-algorithm".into(), "ED25519".into()],
        }
    }
}

/// Makes a key of `kind` at `path` (PEM, PKCS#8, unencrypted).
pub(crate) fn generate(kind: KeyKind, path: &Path) -> Result<(), Error> {
    let mut args: Vec<std::ffi::OsString> = vec!["genpkey".into()];
    args.extend(kind.genpkey_args().into_iter().map(Into::into));
    args.extend(["-out".into(), path.as_os_str().to_owned()]);
    run(None, &args).map(drop)
}

/// A key pair in PEM files, in a temporary directory that lives as long as the value.
#[derive(Debug)]
pub struct Key {
    dir: TempDir,
    kind: KeyKind,
}

impl Key {
    /// A new key pair of `kind` (`openssl genpkey`), and its public key (`openssl pkey -pubout`).
    pub fn generate(kind: KeyKind) -> Result<Key, Error> {
        let key = Key {
            dir: temp_dir()?,
            kind,
        };
        generate(kind, &key.path())?;
        let (private, public) = (key.path(), key.public_path());
        run(
            None,
            &[
                "pkey".as_ref(),
                "-in".as_ref(),
                private.as_os_str(),
                "-pubout".as_ref(),
                "-out".as_ref(),
                public.as_os_str(),
            ],
        )?;
        Ok(key)
    }

    /// Its kind.
    pub fn kind(&self) -> KeyKind {
        self.kind
    }

    /// The private key's PEM file (PKCS#8, unencrypted).
    pub fn path(&self) -> PathBuf {
        self.dir.path().join("key.pem")
    }

    /// The public key's PEM file (SubjectPublicKeyInfo).
    pub fn public_path(&self) -> PathBuf {
        self.dir.path().join("public.pem")
    }
}

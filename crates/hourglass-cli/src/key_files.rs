//! Reading RSA key files, encrypted ones included: the passphrase comes from
//! `--passphrase-file` or, on a terminal, from a prompt that does not echo.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use hourglass_rsa::encoding::{decode_key_with_passphrase, is_encrypted};
use hourglass_rsa::{PrivateKey, PublicKey};
use zeroize::Zeroizing;

use crate::cli_error::{CliError, InputProblem, PassphraseProblem};
use crate::inputs::read_input;

/// `--passphrase-file`, recorded once in `main`.
static PASSPHRASE_FILE: OnceLock<Option<PathBuf>> = OnceLock::new();

/// Records `--passphrase-file` (once, in `main`).
pub fn set_passphrase_file(path: Option<PathBuf>) {
    let _ = PASSPHRASE_FILE.set(path);
}

/// Whether `--passphrase-file` was given. A command that writes a private key then encrypts it,
/// as `--encrypt` asks (a passphrase is the intent to encrypt, never silently ignored); one
/// whose key format cannot be encrypted refuses it.
pub fn passphrase_given() -> bool {
    matches!(PASSPHRASE_FILE.get(), Some(Some(_)))
}

/// The refusal of a passphrase by a command whose private keys (`what`) cannot be encrypted:
/// writing them in the clear would betray the intent of the passphrase.
pub fn unencryptable_keys_error(what: &'static str) -> CliError {
    PassphraseProblem::Unencryptable { what }.into()
}

/// The passphrase from `--passphrase-file` (its first line), if one was given.
fn passphrase_from_file() -> Result<Option<Zeroizing<String>>, CliError> {
    let Some(Some(path)) = PASSPHRASE_FILE.get() else {
        return Ok(None);
    };
    let bytes = Zeroizing::new(read_input(path, "passphrase file")?);
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| PassphraseProblem::FileNotText { path: path.clone() })?;
    let line = text.lines().next().unwrap_or("");
    if line.is_empty() {
        return Err(PassphraseProblem::FileEmpty { path: path.clone() }.into());
    }
    Ok(Some(Zeroizing::new(line.to_string())))
}

/// Prompts on the terminal (not echoed); an error when there is no terminal to ask.
fn prompt(question: &str) -> Result<Zeroizing<String>, CliError> {
    if !std::io::stdin().is_terminal() {
        return Err(PassphraseProblem::NoTerminal.into());
    }
    rpassword::prompt_password(question)
        .map(Zeroizing::new)
        .map_err(|e| PassphraseProblem::Prompt(e).into())
}

/// The passphrase to encrypt a new key with: `--passphrase-file`, or asked twice.
pub fn new_passphrase(path: &Path) -> Result<Zeroizing<String>, CliError> {
    if let Some(p) = passphrase_from_file()? {
        return Ok(p);
    }
    let first = prompt(&format!("Passphrase for {}: ", path.display()))?;
    if first.is_empty() {
        return Err(PassphraseProblem::Empty.into());
    }
    let again = prompt("The same passphrase again: ")?;
    if *first != *again {
        return Err(PassphraseProblem::Differ.into());
    }
    Ok(first)
}

/// Reads a key file of any supported form, decrypting an encrypted PKCS#8 key with the
/// passphrase from `--passphrase-file` or the terminal.
pub fn read_key(
    path: &Path,
    what: &'static str,
) -> Result<Result<PrivateKey, PublicKey>, CliError> {
    let bytes = Zeroizing::new(read_input(path, what)?);
    let passphrase = if is_encrypted(&bytes) {
        match passphrase_from_file()? {
            Some(p) => p,
            None => prompt(&format!("Passphrase for {}: ", path.display()))?,
        }
    } else {
        Zeroizing::new(String::new())
    };
    decode_key_with_passphrase(&bytes, passphrase.as_bytes())
        .map_err(|e| CliError::from(e).with_path(path))
}

/// Loads a private key file with a clear error.
pub fn load_private(path: &Path) -> Result<PrivateKey, CliError> {
    read_key(path, "key")?.map_err(|_| CliError::input(path, InputProblem::PublicKey))
}

/// Loads a public key (or the public half of a private key file).
pub fn load_public(path: &Path) -> Result<PublicKey, CliError> {
    Ok(match read_key(path, "key")? {
        Ok(private) => private.public_key(),
        Err(public) => public,
    })
}

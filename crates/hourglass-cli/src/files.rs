//! Reading inputs and writing outputs safely.
//!
//! `-` means standard input or output. Output files are written to a temporary file in the
//! same directory, flushed to disk, given their final permissions (0600 for secrets) and only
//! then renamed into place, so a failure never leaves a partial or empty file behind.

use std::fs::File;
use std::io::{Read, Write};
use std::path::Path;

use crate::cli_error::CliError;

/// Largest input read into memory (messages, ciphertexts, key files).
pub const MAX_INPUT: u64 = 1 << 30;

fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reads a whole input (`-` for stdin). `what` names it in errors ("key", "ciphertext").
pub fn read_input(path: &Path, what: &str) -> Result<Vec<u8>, CliError> {
    let mut data = Vec::new();
    let result = if is_stdio(path) {
        std::io::stdin()
            .lock()
            .take(MAX_INPUT + 1)
            .read_to_end(&mut data)
    } else {
        File::open(path).and_then(|f| f.take(MAX_INPUT + 1).read_to_end(&mut data))
    };
    result.map_err(|e| {
        CliError::new(format!("cannot read {what} {}: {e}", path.display()))
            .hint("check the path and permissions")
    })?;
    if data.len() as u64 > MAX_INPUT {
        return Err(CliError::new(format!(
            "{what} {} is larger than {MAX_INPUT} bytes",
            path.display()
        )));
    }
    Ok(data)
}

/// Opens an input for streaming (`-` for stdin).
pub fn open_input(path: &Path, what: &str) -> Result<Box<dyn Read>, CliError> {
    if is_stdio(path) {
        return Ok(Box::new(std::io::stdin()));
    }
    File::open(path)
        .map(|f| Box::new(f) as Box<dyn Read>)
        .map_err(|e| CliError::new(format!("cannot open {what} {}: {e}", path.display())))
}

/// Whether the output holds a secret (mode 0600) or public data (mode 0644).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sensitivity {
    /// Private keys, decrypted plaintexts.
    Secret,
    /// Everything else.
    Public,
}

/// Writes `data` to `path` atomically (`-` for stdout).
pub fn write_output(path: &Path, data: &[u8], sensitivity: Sensitivity) -> Result<(), CliError> {
    if is_stdio(path) {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(data)
            .and_then(|()| out.flush())
            .map_err(|e| CliError::new(format!("cannot write to standard output: {e}")));
    }
    let fail = |e: std::io::Error| {
        CliError::new(format!("cannot write {}: {e}", path.display()))
            .hint("check that the directory exists and is writable")
    };
    // A device or pipe (`-o /dev/null`, a FIFO) is written in place: renaming a temporary file
    // over it would replace the device node with a regular file.
    if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(fail)?;
        return f.write_all(data).and_then(|()| f.flush()).map_err(fail);
    }
    let mode = match sensitivity {
        Sensitivity::Secret => 0o600,
        Sensitivity::Public => 0o644,
    };
    hourglass_arith::checkpoint::write_atomic(path, data, mode).map_err(|e| {
        CliError::new(e.to_string()).hint("check that the directory exists and is writable")
    })
}

/// The modulus of an RSA key file (PEM, DER, hex or JSON; a public key from `hourglass dkg`
/// or `vdf setup`), for the delay commands' `--modulus`. A private key is accepted with a
/// warning: whoever holds it can shortcut any delay.
pub fn modulus_from_key_file(path: &Path) -> Result<hourglass_arith::Integer, CliError> {
    let bytes = read_input(path, "modulus")?;
    let key = hourglass_rsa::encoding::decode_key(&bytes)
        .map_err(|e| CliError::from(e).context(path.display()))?;
    Ok(match key {
        Ok(private) => {
            eprintln!(
                "hourglass: warning: {} is a private key: whoever holds it can shortcut the delay",
                path.display()
            );
            private.public().n().clone()
        }
        Err(public) => public.n().clone(),
    })
}

//! Reading inputs: a file, or standard input for `-`, bounded in size.
//!
//! Below both the output files ([`crate::files`], which re-exports these for the commands) and
//! the key files ([`crate::key_files`]), which both read through them.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::cli_error::CliError;

/// Largest input read into memory (messages, ciphertexts, key files).
pub const MAX_INPUT: u64 = 1 << 30;

/// Whether `path` is `-`: standard input or output.
pub fn is_stdio(path: &Path) -> bool {
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

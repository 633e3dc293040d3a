//! Reading inputs: a file, or standard input for `-`, bounded in size.
//!
//! Below both the output files ([`crate::files`], which re-exports these for the commands) and
//! the key files ([`crate::key_files`]), which both read through them.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use crate::cli_error::{CliError, IoOp};

/// Largest input read into memory (messages, ciphertexts, key files).
pub const MAX_INPUT: u64 = 1 << 30;

/// Whether `path` is `-`: standard input or output.
pub fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == "-"
}

/// Reads a whole input (`-` for stdin). `what` names it in errors ("key", "ciphertext").
pub fn read_input(path: &Path, what: &'static str) -> Result<Vec<u8>, CliError> {
    read_input_limited(path, what, MAX_INPUT)
}

/// Reads a whole input of at most `max` bytes (its format's limit), refusing a larger one
/// before it is read: a regular file by its size, a stream once `max + 1` bytes arrived.
pub fn read_input_limited(path: &Path, what: &'static str, max: u64) -> Result<Vec<u8>, CliError> {
    let too_large = || CliError::TooLarge {
        what,
        path: path.to_path_buf(),
        max,
    };
    // A regular file larger than the limit is refused by its size, unread.
    if !is_stdio(path) && std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > max) {
        return Err(too_large());
    }
    let mut data = Vec::new();
    let result = if is_stdio(path) {
        std::io::stdin().lock().take(max + 1).read_to_end(&mut data)
    } else {
        File::open(path).and_then(|f| f.take(max + 1).read_to_end(&mut data))
    };
    result.map_err(|e| CliError::io(IoOp::Read(what), path, e))?;
    if data.len() as u64 > max {
        return Err(too_large());
    }
    Ok(data)
}

/// Opens an input for streaming (`-` for stdin).
pub fn open_input(path: &Path, what: &'static str) -> Result<Box<dyn Read>, CliError> {
    if is_stdio(path) {
        return Ok(Box::new(std::io::stdin()));
    }
    File::open(path)
        .map(|f| Box::new(f) as Box<dyn Read>)
        .map_err(|e| CliError::io(IoOp::Open(what), path, e))
}

//! Reading puzzle files: private keys and the digests of documents.

use std::io::Read;
use std::path::Path;

use hourglass_timelock::{PuzzleHash, PuzzleKey};

use crate::cli_error::{CliError, InputProblem, IoOp};
use crate::files::{open_input, read_input};

/// A whole file as UTF-8 text (`what` names it in errors).
pub fn text(path: &Path, what: &'static str) -> Result<String, CliError> {
    String::from_utf8(read_input(path, what)?)
        .map_err(|_| CliError::input(path, InputProblem::NotText))
}

/// Loads a puzzle private key file.
pub fn load_puzzle_key(path: &Path) -> Result<PuzzleKey, CliError> {
    let t = zeroize::Zeroizing::new(text(path, "puzzle key")?);
    PuzzleKey::from_json(&t).map_err(|e| {
        CliError::from(e).with_path(path).with_hint(
            "a puzzle private key is the NAME.key file written by `hourglass puzzle keygen`",
        )
    })
}

/// Digest of a file (streamed), with `hash`.
pub fn digest_file(path: &Path, hash: PuzzleHash) -> Result<Vec<u8>, CliError> {
    let mut input = open_input(path, "document")?;
    let mut h = hash.hasher();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = input
            .read(&mut buf)
            .map_err(|e| CliError::io(IoOp::Reading, path, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().into_vec())
}

//! Reading inputs and writing outputs safely.
//!
//! `-` means standard input or output. Output files are written to a temporary file in the
//! same directory, flushed to disk, given their final permissions (0600 for secrets) and only
//! then renamed into place, so a failure never leaves a partial or empty file behind. The
//! readers live one level down, in [`crate::inputs`] (key files are read through them too), and
//! are re-exported here for the commands.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use hourglass_arith::atomic::{write_atomic, Existing};

use crate::cli_error::{CliError, IoOp, OutputProblem};
use crate::inputs::is_stdio;
pub use crate::inputs::{open_input, read_input, read_input_limited, MAX_INPUT};

/// Whether the output holds a secret (mode 0600) or public data (mode 0644).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sensitivity {
    /// Private keys, decrypted plaintexts.
    Secret,
    /// Everything else.
    Public,
}

impl Sensitivity {
    /// The Unix permissions of a file holding this kind of data.
    pub fn mode(self) -> u32 {
        match self {
            Sensitivity::Secret => 0o600,
            Sensitivity::Public => 0o644,
        }
    }
}

/// Whether `--force` was given: existing output files may be replaced.
static FORCE: AtomicBool = AtomicBool::new(false);

/// Records `--force` (once, in `main`).
pub fn set_force(force: bool) {
    FORCE.store(force, Ordering::Relaxed);
}

/// What to do with an existing output file: refuse unless `--force` was given.
pub fn existing_policy() -> Existing {
    if FORCE.load(Ordering::Relaxed) {
        Existing::Replace
    } else {
        Existing::Refuse
    }
}

/// `base` with `ext` appended to its file name (`exam` + `.key` = `exam.key`).
pub fn with_ext(base: &Path, ext: &str) -> PathBuf {
    let mut s = base.as_os_str().to_owned();
    s.push(ext);
    PathBuf::from(s)
}

/// Whether `path` is written in place rather than through a temporary file: standard output,
/// a device or a pipe (`-o /dev/null`, a FIFO), which renaming would replace with a file.
pub fn written_in_place(path: &Path) -> bool {
    is_stdio(path) || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir())
}

/// The error for an output that cannot be written, naming `--force` when it exists.
pub fn output_error(path: &Path, e: std::io::Error) -> CliError {
    if e.kind() == std::io::ErrorKind::AlreadyExists {
        return CliError::output(path, OutputProblem::Exists);
    }
    CliError::io(IoOp::Write, path, e)
}

/// Checks, before any long work, that `path` can be written: not a directory, in a directory
/// that exists, and not an existing file unless `--force` was given.
pub fn check_output(path: &Path) -> Result<(), CliError> {
    if written_in_place(path) {
        return Ok(());
    }
    if path.is_dir() {
        return Err(CliError::output(path, OutputProblem::IsDirectory));
    }
    let dir = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if !dir.is_dir() {
        return Err(CliError::output(
            path,
            OutputProblem::NoParent {
                dir: dir.to_path_buf(),
            },
        ));
    }
    if existing_policy() == Existing::Refuse && std::fs::symlink_metadata(path).is_ok() {
        return Err(CliError::output(path, OutputProblem::Exists));
    }
    Ok(())
}

/// A directory output (a puzzle set, a DKG cluster) built whole beside its target and moved
/// into place by [`Self::commit`]: a failure leaves no half-written directory, and with
/// `--force` an existing one is replaced only once the new one is complete.
#[derive(Debug)]
pub struct DirOutput {
    target: PathBuf,
    staging: tempfile::TempDir,
}

impl DirOutput {
    /// Checks `target` before any work (it may exist only if empty, unless `--force` was
    /// given) and creates the staging directory beside it.
    pub fn create(target: &Path) -> Result<Self, CliError> {
        if target.exists() && !target.is_dir() {
            return Err(CliError::output(target, OutputProblem::NotDirectory));
        }
        let non_empty = std::fs::read_dir(target).is_ok_and(|mut e| e.next().is_some());
        if non_empty && existing_policy() == Existing::Refuse {
            return Err(CliError::output(target, OutputProblem::NotEmpty));
        }
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&parent).map_err(|e| CliError::io(IoOp::CreateDir, &parent, e))?;
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let staging = tempfile::Builder::new()
            .prefix(&format!(".{name}.new-"))
            .tempdir_in(&parent)
            .map_err(|e| output_error(target, e))?;
        Ok(Self {
            target: target.to_path_buf(),
            staging,
        })
    }

    /// Where to write the directory's contents until it is committed.
    pub fn path(&self) -> &Path {
        self.staging.path()
    }

    /// Moves the complete directory into place (replacing the old one, kept aside until the
    /// new one is in place).
    pub fn commit(self) -> Result<(), CliError> {
        let fail = |e: std::io::Error| output_error(&self.target, e);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(self.staging.path(), std::fs::Permissions::from_mode(0o755))
                .map_err(fail)?;
        }
        let aside = if self.target.exists() {
            let aside = self.staging.path().with_extension("old");
            std::fs::rename(&self.target, &aside).map_err(fail)?;
            Some(aside)
        } else {
            None
        };
        let staging = self.staging.keep();
        if let Err(e) = std::fs::rename(&staging, &self.target) {
            if let Some(aside) = &aside {
                let _ = std::fs::rename(aside, &self.target);
            }
            let _ = std::fs::remove_dir_all(&staging);
            return Err(fail(e));
        }
        if let Some(aside) = aside {
            let _ = std::fs::remove_dir_all(aside);
        }
        Ok(())
    }
}

/// Writes `data` to `path` atomically (`-` for stdout). An existing file is refused unless
/// `--force` was given.
pub fn write_output(path: &Path, data: &[u8], sensitivity: Sensitivity) -> Result<(), CliError> {
    write_with(path, data, sensitivity, existing_policy())
}

/// Writes `data` to `path` atomically, replacing it: for a file the command itself keeps up to
/// date (a bundle extended link by link, a demo's own files).
pub fn write_output_replacing(
    path: &Path,
    data: &[u8],
    sensitivity: Sensitivity,
) -> Result<(), CliError> {
    write_with(path, data, sensitivity, Existing::Replace)
}

/// Writes a public file that several processes may write with the same bytes (each DKG party
/// writes the cluster's `public.pem`): an existing identical file is left as it is, a different
/// one is refused unless `--force` was given.
pub fn write_shared_output(path: &Path, data: &[u8]) -> Result<(), CliError> {
    let same = || std::fs::read(path).is_ok_and(|old| old == data);
    if same() {
        return Ok(());
    }
    match write_output(path, data, Sensitivity::Public) {
        Err(_) if same() => Ok(()),
        other => other,
    }
}

fn write_with(
    path: &Path,
    data: &[u8],
    sensitivity: Sensitivity,
    existing: Existing,
) -> Result<(), CliError> {
    if is_stdio(path) {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(data)
            .and_then(|()| out.flush())
            .map_err(|e| CliError::io(IoOp::WriteStdout, path, e));
    }
    if written_in_place(path) {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| output_error(path, e))?;
        return f
            .write_all(data)
            .and_then(|()| f.flush())
            .map_err(|e| output_error(path, e));
    }
    write_atomic(path, data, sensitivity.mode(), existing).map_err(|e| output_error(path, e))
}

/// The modulus of an RSA key file (PEM, DER, hex or JSON; a public key from `hourglass dkg`
/// or `vdf setup`), for the delay commands' `--modulus`. A private key is accepted with a
/// warning: whoever holds it can shortcut any delay.
pub fn modulus_from_key_file(path: &Path) -> Result<hourglass_arith::Integer, CliError> {
    let key = crate::key_files::read_key(path, "modulus")?;
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

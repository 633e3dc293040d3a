//! Streamed outputs that appear only when complete.
//!
//! [`StagedOutput`] is the streaming counterpart of [`crate::files::write_output`]: bytes go to
//! a temporary file in the target's directory (mode 0600 while it is written), and
//! [`StagedOutput::commit`] flushes it to disk, sets the final permissions and renames it into
//! place. Dropping it without `commit` (an error, a failed authentication, Ctrl-C) deletes the
//! temporary file, so no partial output is ever left behind. Standard output (`-`) and devices
//! or pipes cannot be renamed over, so their bytes are held in memory (up to
//! [`MAX_INPUT`] bytes, wiped when dropped) and written out by `commit`.

use std::io::Write;
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

use crate::cli_error::CliError;
use crate::files::{Sensitivity, MAX_INPUT};

/// An output file that is only created, complete, by [`Self::commit`].
pub struct StagedOutput {
    path: PathBuf,
    sensitivity: Sensitivity,
    stage: Stage,
}

enum Stage {
    /// A temporary file beside the target, renamed over it on commit.
    File(tempfile::NamedTempFile),
    /// Held in memory, then written to standard output or to a device/pipe on commit.
    Memory(Zeroizing<Vec<u8>>),
}

impl std::fmt::Debug for StagedOutput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StagedOutput")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

fn is_stdio(path: &Path) -> bool {
    path.as_os_str() == "-"
}

impl StagedOutput {
    /// Starts an output to `path` (`-` for standard output). For a file, the temporary file is
    /// created now, so an unwritable directory is reported before any long computation.
    pub fn create(path: &Path, sensitivity: Sensitivity) -> Result<Self, CliError> {
        let in_memory =
            is_stdio(path) || std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
        let stage = if in_memory {
            Stage::Memory(Zeroizing::new(Vec::new()))
        } else {
            let dir = match path.parent() {
                Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let name = path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            // tempfile opens with O_EXCL under a random name and mode 0600.
            let tmp = tempfile::Builder::new()
                .prefix(&format!(".{name}."))
                .suffix(".tmp")
                .tempfile_in(&dir)
                .map_err(|e| {
                    CliError::new(format!("cannot write {}: {e}", path.display()))
                        .hint("check that the directory exists and is writable")
                })?;
            Stage::File(tmp)
        };
        Ok(Self {
            path: path.to_path_buf(),
            sensitivity,
            stage,
        })
    }

    /// Makes the output appear: fsync, permissions and rename for a file; one write for
    /// standard output or a device.
    pub fn commit(self) -> Result<(), CliError> {
        let path = self.path;
        let fail = |e: std::io::Error| {
            CliError::new(format!("cannot write {}: {e}", path.display()))
                .hint("check that the directory exists, is writable and has free space")
        };
        match self.stage {
            Stage::Memory(data) => {
                if is_stdio(&path) {
                    let mut out = std::io::stdout().lock();
                    out.write_all(&data)
                        .and_then(|()| out.flush())
                        .map_err(|e| CliError::new(format!("cannot write to standard output: {e}")))
                } else {
                    let mut f = std::fs::OpenOptions::new()
                        .write(true)
                        .open(&path)
                        .map_err(fail)?;
                    f.write_all(&data).and_then(|()| f.flush()).map_err(fail)
                }
            }
            Stage::File(mut tmp) => {
                tmp.flush().map_err(fail)?;
                #[cfg(unix)]
                {
                    use std::os::unix::fs::PermissionsExt;
                    let mode = match self.sensitivity {
                        Sensitivity::Secret => 0o600,
                        Sensitivity::Public => 0o644,
                    };
                    tmp.as_file()
                        .set_permissions(std::fs::Permissions::from_mode(mode))
                        .map_err(fail)?;
                }
                tmp.as_file().sync_all().map_err(fail)?;
                tmp.persist(&path).map_err(|e| fail(e.error))?;
                if let Some(dir) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
                    if let Ok(d) = std::fs::File::open(dir) {
                        let _ = d.sync_all();
                    }
                }
                Ok(())
            }
        }
    }
}

impl Write for StagedOutput {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.stage {
            Stage::File(tmp) => tmp.write(buf),
            Stage::Memory(data) => {
                if data.len() as u64 + buf.len() as u64 > MAX_INPUT {
                    return Err(std::io::Error::other(format!(
                        "more than {MAX_INPUT} bytes cannot be held for standard output or a device; write to a file with -o FILE"
                    )));
                }
                data.extend_from_slice(buf);
                Ok(buf.len())
            }
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.stage {
            Stage::File(tmp) => tmp.flush(),
            Stage::Memory(_) => Ok(()),
        }
    }
}

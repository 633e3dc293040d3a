//! Streamed outputs that appear only when complete.
//!
//! [`StagedOutput`] is the streaming counterpart of [`crate::files::write_output`]: bytes go to
//! an [`AtomicFile`] in the target's directory, and [`StagedOutput::commit`] flushes it to
//! disk and moves it into place. Dropping it without `commit` (an error, a failed authentication, Ctrl-C) deletes the
//! temporary file, so no partial output is ever left behind. Standard output (`-`) and devices
//! or pipes cannot be renamed over, so their bytes are held in memory (up to
//! [`MAX_INPUT`] bytes, wiped when dropped) and written out by `commit`.

use std::io::Write;
use std::path::{Path, PathBuf};

use zeroize::Zeroizing;

use hourglass_arith::atomic::AtomicFile;

use crate::cli_error::CliError;
use crate::files::{
    check_output, existing_policy, output_error, write_output, written_in_place, Sensitivity,
    MAX_INPUT,
};

/// An output file that is only created, complete, by [`Self::commit`].
pub struct StagedOutput {
    path: PathBuf,
    stage: Stage,
}

enum Stage {
    /// A temporary file beside the target, moved into place on commit.
    File(AtomicFile),
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

impl StagedOutput {
    /// Starts an output to `path` (`-` for standard output). For a file, the target is checked
    /// (an existing one is refused unless `--force` was given) and the temporary file created
    /// now, so these errors come before any long computation.
    pub fn create(path: &Path, sensitivity: Sensitivity) -> Result<Self, CliError> {
        let stage = if written_in_place(path) {
            Stage::Memory(Zeroizing::new(Vec::new()))
        } else {
            check_output(path)?;
            Stage::File(
                AtomicFile::create(path, sensitivity.mode(), existing_policy())
                    .map_err(|e| output_error(path, e))?,
            )
        };
        Ok(Self {
            path: path.to_path_buf(),
            stage,
        })
    }

    /// Makes the output appear: fsync and move into place for a file; one write for standard
    /// output or a device.
    pub fn commit(self) -> Result<(), CliError> {
        let path = self.path;
        match self.stage {
            Stage::Memory(data) => write_output(&path, &data, Sensitivity::Public),
            Stage::File(file) => file.commit().map_err(|e| output_error(&path, e)),
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

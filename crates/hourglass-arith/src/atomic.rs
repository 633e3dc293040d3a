//! Files that appear whole or not at all: the one way hourglass writes a file.
//!
//! An [`AtomicFile`] is written to a temporary file in the target's directory (created
//! exclusively under an unpredictable name, with its final mode from the start), then
//! [`AtomicFile::commit`] flushes it to disk, moves it into place and flushes the directory.
//! Dropping it uncommitted (an error, Ctrl-C unwinding, a failed authentication) deletes the
//! temporary file, so a crash or a failure never leaves a partial file under the target's name.
//!
//! What happens to a file already at the target is the caller's explicit choice
//! ([`Existing`]): keys, certificates and the results of long work are never replaced unless the
//! user asked for it, and the refusal is atomic (the move is a `link`, which fails if the name
//! exists, so two processes racing for one name never overwrite each other).

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// What to do when the target already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Fail with [`io::ErrorKind::AlreadyExists`] (checked when the file is created, so before
    /// any long work, and again atomically when it is committed).
    Refuse,
    /// Replace it atomically: readers see the old file or the new one, never a mix.
    Replace,
}

/// A file being written, which appears at its path only when [`Self::commit`] succeeds.
#[derive(Debug)]
pub struct AtomicFile {
    path: PathBuf,
    dir: PathBuf,
    tmp: PathBuf,
    file: Option<File>,
    mode: u32,
    existing: Existing,
}

/// The directory a path lives in (`.` for a bare file name).
fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Fails with `AlreadyExists` if something is at `path` (a dangling symlink counts).
fn refuse_existing(path: &Path) -> io::Result<()> {
    if std::fs::symlink_metadata(path).is_ok() {
        return Err(io::Error::new(
            io::ErrorKind::AlreadyExists,
            format!("{} already exists", path.display()),
        ));
    }
    Ok(())
}

impl AtomicFile {
    /// Starts writing `path` with Unix permissions `mode` (e.g. 0o600 for secrets). With
    /// [`Existing::Refuse`], an existing target is reported now. The temporary file is created
    /// now too, so an unwritable directory is also reported before any work.
    pub fn create(path: &Path, mode: u32, existing: Existing) -> io::Result<Self> {
        if existing == Existing::Refuse {
            refuse_existing(path)?;
        }
        let dir = parent_dir(path);
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut salt = [0u8; 8];
        getrandom::getrandom(&mut salt).map_err(|e| io::Error::other(e.to_string()))?;
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let tmp = dir.join(format!(
            ".{name}.{}.{}{}.tmp",
            std::process::id(),
            salt.iter().map(|b| format!("{b:02x}")).collect::<String>(),
            COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        let mut opts = std::fs::OpenOptions::new();
        // create_new (O_EXCL): never open a file or follow a symlink planted at this name.
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, mode);
        let file = opts.open(&tmp)?;
        Ok(Self {
            path: path.to_path_buf(),
            dir,
            tmp,
            file: Some(file),
            mode,
            existing,
        })
    }

    /// The path the file will have once committed.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Flushes the data to disk and moves the file into place (replacing or refusing an
    /// existing target as chosen at creation), then flushes the directory entry.
    pub fn commit(mut self) -> io::Result<()> {
        let file = self.file.take().expect("an AtomicFile is committed once");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            // The umask may have narrowed the mode given at creation; public files get theirs.
            file.set_permissions(std::fs::Permissions::from_mode(self.mode))?;
        }
        file.sync_all()?;
        drop(file);
        match self.existing {
            Existing::Replace => std::fs::rename(&self.tmp, &self.path)?,
            // link(2) fails if the name exists: the refusal holds even against a race.
            Existing::Refuse => {
                std::fs::hard_link(&self.tmp, &self.path)?;
                std::fs::remove_file(&self.tmp)?;
            }
        }
        if let Ok(d) = File::open(&self.dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(io::Error::other("write after commit")),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        // Committed or not, the temporary name must not outlive us.
        let _ = std::fs::remove_file(&self.tmp);
    }
}

/// Writes `data` to `path` as one [`AtomicFile`].
pub fn write_atomic(path: &Path, data: &[u8], mode: u32, existing: Existing) -> io::Result<()> {
    let mut f = AtomicFile::create(path, mode, existing)?;
    f.write_all(data)?;
    f.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "hourglass-atomic-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn leftovers(d: &Path) -> Vec<String> {
        std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".tmp"))
            .collect()
    }

    #[test]
    fn refuses_an_existing_target_and_leaves_it_untouched() {
        let d = dir();
        let p = d.join("key.pem");
        std::fs::write(&p, b"precious").unwrap();
        let e = write_atomic(&p, b"new", 0o600, Existing::Refuse).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&p).unwrap(), b"precious");
        write_atomic(&p, b"new", 0o600, Existing::Replace).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"new");
        assert!(leftovers(&d).is_empty());
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_target_created_during_the_work_is_not_overwritten() {
        let d = dir();
        let p = d.join("out");
        let mut f = AtomicFile::create(&p, 0o644, Existing::Refuse).unwrap();
        f.write_all(b"ours").unwrap();
        std::fs::write(&p, b"theirs").unwrap();
        assert_eq!(f.commit().unwrap_err().kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(&p).unwrap(), b"theirs");
        assert!(leftovers(&d).is_empty());
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn an_uncommitted_file_leaves_nothing_behind() {
        let d = dir();
        let p = d.join("out");
        let mut f = AtomicFile::create(&p, 0o600, Existing::Refuse).unwrap();
        f.write_all(b"partial").unwrap();
        drop(f);
        assert!(!p.exists());
        assert!(leftovers(&d).is_empty());
        std::fs::remove_dir_all(d).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn modes_are_the_ones_asked_for() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir();
        for mode in [0o600, 0o644] {
            let p = d.join(format!("f{mode:o}"));
            write_atomic(&p, b"x", mode, Existing::Refuse).unwrap();
            let m = std::fs::metadata(&p).unwrap().permissions().mode() & 0o777;
            assert_eq!(m, mode);
        }
        std::fs::remove_dir_all(d).unwrap();
    }
}

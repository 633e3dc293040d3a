//! Running `openssl`: its failures, the digests its options name, and the times it reads.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

/// `openssl` refused to make something (its command line and output), or could not be run, or a
/// file beside it could not be written or read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// The command line (or the file operation) that failed.
    pub command: String,
    /// What `openssl` wrote, standard output then standard error (or the I/O error).
    pub output: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {}", self.command, self.output)
    }
}

impl std::error::Error for Error {}

/// A digest, as OpenSSL's options name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Digest {
    /// SHA-256.
    Sha256,
    /// SHA-384.
    Sha384,
    /// SHA-512.
    Sha512,
}

impl Digest {
    /// OpenSSL's name (`sha256`), as in `-md sha256` or `signer_digest = sha256`.
    pub fn name(self) -> &'static str {
        match self {
            Digest::Sha256 => "sha256",
            Digest::Sha384 => "sha384",
            Digest::Sha512 => "sha512",
        }
    }

    /// The option that names it on its own (`-sha256`), as `openssl ts -query` takes it.
    pub fn flag(self) -> String {
        format!("-{}", self.name())
    }
}

/// Runs `openssl args` in `dir` (the process's directory when `None`): whether it exited with
/// success, and its standard output then standard error. Err only when it could not be run.
pub(crate) fn openssl<S: AsRef<OsStr>>(
    dir: Option<&Path>,
    args: &[S],
) -> Result<(bool, String), Error> {
    let mut command = Command::new("openssl");
    command.args(args);
    if let Some(dir) = dir {
        command.current_dir(dir);
    }
    let out = command.output().map_err(|e| Error {
        command: command_line(args),
        output: format!("could not run openssl: {e}"),
    })?;
    Ok((
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    ))
}

/// Runs `openssl args` in `dir`; its output, or an error when it does not exit with success.
pub(crate) fn run<S: AsRef<OsStr>>(dir: Option<&Path>, args: &[S]) -> Result<String, Error> {
    match openssl(dir, args)? {
        (true, output) => Ok(output),
        (false, output) => Err(Error {
            command: command_line(args),
            output,
        }),
    }
}

/// `openssl` and its arguments, as a shell would show them.
fn command_line<S: AsRef<OsStr>>(args: &[S]) -> String {
    let mut line = OsString::from("openssl");
    for a in args {
        line.push(" ");
        line.push(a);
    }
    line.to_string_lossy().into_owned()
}

/// Writes `bytes` to `path`.
pub(crate) fn write(path: &Path, bytes: impl AsRef<[u8]>) -> Result<(), Error> {
    std::fs::write(path, bytes).map_err(|e| io_error("writing", path, &e))
}

/// The bytes of `path`.
pub(crate) fn read(path: &Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|e| io_error("reading", path, &e))
}

/// A new temporary directory.
pub(crate) fn temp_dir() -> Result<tempfile::TempDir, Error> {
    tempfile::tempdir().map_err(|e| io_error("creating", &std::env::temp_dir(), &e))
}

/// An [`Error`] for a file operation.
pub(crate) fn io_error(doing: &str, path: &Path, e: &std::io::Error) -> Error {
    Error {
        command: format!("{doing} {}", path.display()),
        output: e.to_string(),
    }
}

/// The present time, in whole seconds since the Unix epoch.
pub fn unix_now() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
}

/// `unix` (seconds since the epoch) as `YYYYMMDDHHMMSSZ`, the form `openssl ca -startdate` reads
/// (it writes a UTCTime from 1950 to 2049, a GeneralizedTime otherwise).
pub(crate) fn asn1_time(unix: i64) -> String {
    let (days, secs) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}{month:02}{day:02}{:02}{:02}{:02}Z",
        secs / 3600,
        secs % 3600 / 60,
        secs % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_openssl_reads_them() {
        assert_eq!(asn1_time(0), "19700101000000Z");
        assert_eq!(asn1_time(951_782_400), "20000229000000Z");
        assert_eq!(asn1_time(1_700_000_000), "20231114221320Z");
        assert_eq!(asn1_time(-1), "19691231235959Z");
        assert_eq!(asn1_time(2_871_763_199), "20601231235959Z");
    }
}

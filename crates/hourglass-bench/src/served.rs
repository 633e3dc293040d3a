//! A `hourglass serve` child process (this executable) on loopback, for the benchmarks that
//! measure the service through HTTP.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::{Error, Result};

/// A `hourglass serve` child process, stopped when dropped.
pub(crate) struct Served {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Its data directory.
    pub data: PathBuf,
    _dir: Option<tempfile::TempDir>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve_error(why: impl Into<String>) -> Error {
    Error::Service(why.into())
}

/// Starts this executable's `serve` on the data directory `data` (a fresh one when `None`),
/// any free loopback port, no rate limit, with `extra` arguments, and waits until it listens.
pub(crate) fn serve(data: Option<&Path>, extra: &[&str]) -> Result<Served> {
    let exe = std::env::current_exe().map_err(Error::CurrentExe)?;
    let dir = match data {
        Some(_) => None,
        None => Some(tempfile::tempdir().map_err(Error::TempDir)?),
    };
    let data = match (&dir, data) {
        (Some(d), _) => d.path().join("data"),
        (None, Some(p)) => p.to_path_buf(),
        (None, None) => unreachable!("one of them is set"),
    };
    let mut child = Command::new(exe)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--rate-limit",
            "0",
            "--data",
        ])
        .arg(&data)
        .args(extra)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| serve_error(format!("cannot start `hourglass serve`: {e}")))?;
    let stderr = child
        .stderr
        .take()
        .ok_or_else(|| serve_error("no standard error from `hourglass serve`"))?;
    let mut lines = BufReader::new(stderr).lines();
    // What it said before it listened: the reason, if it stops.
    let mut said = Vec::new();
    let base = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(rest) = line.split("listening on ").nth(1) {
                    break rest.split_whitespace().next().unwrap_or("").to_string();
                }
                said.push(line);
            }
            _ => {
                let _ = child.kill();
                let last: Vec<&str> = said
                    .iter()
                    .rev()
                    .take(4)
                    .rev()
                    .map(String::as_str)
                    .collect();
                return Err(serve_error(format!(
                    "`hourglass serve` stopped before it listened: {}",
                    last.join(" / ")
                )));
            }
        }
    };
    // Keep reading its standard error so that it never blocks on a full pipe.
    std::thread::spawn(move || for _ in lines {});
    Ok(Served {
        child,
        base,
        data,
        _dir: dir,
    })
}

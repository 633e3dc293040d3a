//! A throwaway PostgreSQL cluster on loopback for the benchmarks that measure the service on
//! PostgreSQL: made with the server binaries Debian's `postgresql` package installs (`bash
//! scripts/setup-debian.sh`), in a temporary directory, stopped and removed when dropped.
//!
//! Unlike the test suite's cluster it keeps PostgreSQL's durable defaults (`fsync`,
//! `synchronous_commit`): a benchmark of a service that promises "nothing acknowledged is
//! lost" measures the commits it pays for.

use std::path::PathBuf;
use std::process::Command;

use crate::{Error, Result};

/// A running cluster with database `hourglass` owned by user `hourglass` (trust authentication,
/// listening on 127.0.0.1 only).
pub(crate) struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    /// PostgreSQL refuses to run as root: then the cluster belongs to the `postgres` user.
    as_postgres: bool,
}

fn pg_error(why: impl Into<String>) -> Error {
    Error::Service(format!("PostgreSQL: {}", why.into()))
}

impl Cluster {
    /// Makes and starts a cluster that accepts `max_connections` connections.
    pub(crate) fn start(max_connections: u32) -> Result<Self> {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|d| {
                d.flatten()
                    .map(|e| e.path().join("bin"))
                    .filter(|p| p.join("initdb").exists())
                    .max()
            })
            .ok_or_else(|| {
                pg_error(
                    "no server binaries in /usr/lib/postgresql: run `bash scripts/setup-debian.sh` \
                     (it installs postgresql), or give --database sqlite",
                )
            })?;
        let dir = tempfile::Builder::new()
            .prefix("hourglass-bench-pg")
            .tempdir()
            .map_err(Error::TempDir)?;
        let as_postgres = running_as_root();
        if as_postgres {
            run(Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path()))?;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| pg_error(format!("no free loopback port: {e}")))?
            .port();
        let cluster = Self {
            dir,
            bin,
            port,
            as_postgres,
        };
        let data = cluster.data();
        cluster.pg(
            "initdb",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-U".as_ref(),
                "hourglass".as_ref(),
                "-A".as_ref(),
                "trust".as_ref(),
            ],
        )?;
        let options = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c max_connections={max_connections}",
            cluster.dir.path().display()
        );
        let log = cluster.dir.path().join("log");
        cluster.pg(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-o".as_ref(),
                options.as_ref(),
                "-l".as_ref(),
                log.as_os_str(),
                "-w".as_ref(),
                "start".as_ref(),
            ],
        )?;
        let port = port.to_string();
        cluster.pg(
            "createdb",
            &[
                "-h",
                "127.0.0.1",
                "-p",
                &port,
                "-U",
                "hourglass",
                "hourglass",
            ]
            .map(AsRef::as_ref),
        )?;
        Ok(cluster)
    }

    fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs the server binary `name` with `args` (as the `postgres` user when this is root).
    fn pg(&self, name: &str, args: &[&std::ffi::OsStr]) -> Result<()> {
        let program = self.bin.join(name);
        let mut command = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).arg(&program);
            c
        } else {
            Command::new(&program)
        };
        run(command.args(args).current_dir(self.dir.path()))
    }

    /// The URL `hourglass serve --database` takes.
    pub(crate) fn url(&self) -> String {
        format!("postgres://hourglass@127.0.0.1:{}/hourglass", self.port)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let data = self.data();
        let _ = self.pg(
            "pg_ctl",
            &[
                "-D".as_ref(),
                data.as_os_str(),
                "-m".as_ref(),
                "fast".as_ref(),
                "stop".as_ref(),
            ],
        );
    }
}

/// Runs `command`, an error with its output when it fails.
fn run(command: &mut Command) -> Result<()> {
    let out = command
        .output()
        .map_err(|e| pg_error(format!("cannot run {:?}: {e}", command.get_program())))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(pg_error(format!(
            "{:?} failed: {}{}",
            command.get_program(),
            String::from_utf8_lossy(&out.stdout).trim(),
            String::from_utf8_lossy(&out.stderr).trim()
        )))
    }
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

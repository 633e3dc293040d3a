//! The real service for tests: `hourglass serve` processes on loopback, a throwaway PostgreSQL
//! cluster from Debian's binaries, and the calls an institution and an author make.

#![allow(dead_code)] // Each test crate uses a different subset.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::common::{hg, state_dir};

/// A running `hourglass serve`.
pub struct Server {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`.
    pub base: String,
    /// Its data directory.
    pub data: PathBuf,
}

impl Server {
    /// Starts `hourglass serve --data DATA --listen 127.0.0.1:0 EXTRA...` and waits until it
    /// listens.
    pub fn start(data: &Path, extra: &[&str]) -> Server {
        Self::spawn(Command::new(env!("CARGO_BIN_EXE_hourglass")), data, extra)
    }

    /// [`Server::start`] with the process's file-mode creation mask set to `umask` (octal, as
    /// the shell's `umask` takes it) before it starts.
    pub fn start_with_umask(data: &Path, extra: &[&str], umask: &str) -> Server {
        Self::start_after(data, extra, &format!("umask {umask}"))
    }

    /// [`Server::start`] after the shell command `setup` (`umask 077`, `ulimit -n 256`) in the
    /// shell that then execs the server.
    pub fn start_after(data: &Path, extra: &[&str], setup: &str) -> Server {
        let mut sh = Command::new("sh");
        sh.args([
            "-c",
            &format!("{setup} && exec \"$0\" \"$@\""),
            env!("CARGO_BIN_EXE_hourglass"),
        ]);
        Self::spawn(sh, data, extra)
    }

    /// Runs `command serve --data DATA --listen 127.0.0.1:0 EXTRA...` and waits until it
    /// listens (`command` execs hourglass, so its process is the server's).
    fn spawn(mut command: Command, data: &Path, extra: &[&str]) -> Server {
        let mut child = command
            .env("HOURGLASS_STATE_DIR", state_dir())
            .env("RUST_LOG", "warn")
            .args(["serve", "--data"])
            .arg(data)
            .args(["--listen", "127.0.0.1:0"])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start hourglass serve");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(rest) = line.split("listening on ").nth(1) {
                    if let Some(tx) = tx.take() {
                        let _ =
                            tx.send(Ok(rest.split_whitespace().next().unwrap_or("").to_string()));
                    }
                } else if let Some(tx) = &tx {
                    let _ = tx.send(Err(line.clone()));
                }
                eprintln!("[serve] {line}");
            }
        });
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Ok(base)) => {
                    return Server {
                        child: Some(child),
                        base,
                        data: data.to_path_buf(),
                    }
                }
                Ok(Err(_)) => continue,
                Err(_) => {
                    let _ = child.kill();
                    panic!("hourglass serve did not start within 60 s");
                }
            }
        }
    }

    /// The admin token the server made.
    pub fn token(&self) -> String {
        std::fs::read_to_string(self.data.join("admin.token"))
            .unwrap()
            .trim()
            .to_string()
    }

    /// `http://.../PATH`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// Sends SIGKILL (without reaping: [`Server::kill9`] does that), usable while other threads
    /// are talking to the server.
    pub fn signal_kill(&self) {
        if let Some(c) = &self.child {
            let _ = Command::new("kill")
                .args(["-KILL", &c.id().to_string()])
                .status();
        }
    }

    /// SIGKILL, no chance to clean up.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM and wait.
    pub fn stop(&mut self) -> std::process::ExitStatus {
        let mut c = self.child.take().expect("running");
        let _ = Command::new("kill").arg(c.id().to_string()).status();
        c.wait().unwrap()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill9();
    }
}

/// A blocking HTTP client with a timeout.
pub fn client() -> reqwest::blocking::Client {
    reqwest::blocking::Client::builder()
        .timeout(Duration::from_secs(60))
        .build()
        .unwrap()
}

/// `POST /api/v1/sets` as the admin; returns (status, body).
pub fn create_set(server: &Server, body: &Value) -> (u16, Value) {
    let r = client()
        .post(server.url("/api/v1/sets"))
        .bearer_auth(server.token())
        .json(body)
        .send()
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().unwrap_or(Value::Null))
}

/// A private set of short puzzles (`durations` at a fixed rate of 100000 squarings/s); writes its
/// set.json (as served) to `dir/NAME.set.json` and returns the path.
pub fn short_set(server: &Server, name: &str, durations: &[&str], dir: &Path) -> PathBuf {
    let (status, body) = create_set(
        server,
        &json!({ "name": name, "durations": durations, "rate": 100000.0, "deadline": "2099-01-01T00:00:00Z" }),
    );
    assert_eq!(status, 201, "{body}");
    download_set(server, name, &dir.join(format!("{name}.set.json")))
}

/// Downloads set `name` (the set.json the service serves) to `path`; returns the path.
pub fn download_set(server: &Server, name: &str, path: &Path) -> PathBuf {
    let text = client()
        .get(server.url(&format!("/api/v1/sets/{name}")))
        .send()
        .unwrap()
        .bytes()
        .unwrap();
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

/// Seals `document` against `set` with the CLI until `expect` is credited; returns the bundle.
pub fn seal(set: &Path, document: &Path, expect: &str) -> PathBuf {
    let bundle = document.with_extension("bundle");
    hg(&[
        "submit".as_ref(),
        "seal".as_ref(),
        "--set".as_ref(),
        set.as_os_str(),
        "-i".as_ref(),
        document.as_os_str(),
        "--expect".as_ref(),
        expect.as_ref(),
        "-o".as_ref(),
        bundle.as_os_str(),
        "--quiet".as_ref(),
    ]);
    bundle
}

/// Uploads a bundle and a document; returns (status, body).
pub fn upload(server: &Server, bundle: &[u8], document: &[u8]) -> (u16, Value) {
    try_upload(server, bundle, document).unwrap()
}

/// Uploads a bundle and a document; (status, body), or why no answer came.
pub fn try_upload(server: &Server, bundle: &[u8], document: &[u8]) -> Result<(u16, Value), String> {
    let form = reqwest::blocking::multipart::Form::new()
        .part(
            "bundle",
            reqwest::blocking::multipart::Part::bytes(bundle.to_vec()).file_name("x.bundle"),
        )
        .part(
            "document",
            reqwest::blocking::multipart::Part::bytes(document.to_vec()).file_name("doc"),
        );
    let r = client()
        .post(server.url("/api/v1/submissions"))
        .multipart(form)
        .send()
        .map_err(|e| e.to_string())?;
    let status = r.status().as_u16();
    Ok((status, r.json().unwrap_or(Value::Null)))
}

/// `GET /api/v1/submissions/ID`.
pub fn submission(server: &Server, id: &str) -> (u16, Value) {
    let r = client()
        .get(server.url(&format!("/api/v1/submissions/{id}")))
        .send()
        .unwrap();
    let status = r.status().as_u16();
    (status, r.json().unwrap_or(Value::Null))
}

/// Waits until submission `id` is verified and its receipt is handed out (once the
/// transparency log published a checkpoint holding it), or it ended in an error; returns it.
pub fn verdict(server: &Server, id: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let (status, body) = submission(server, id);
        assert_eq!(status, 200, "{body}");
        if body["status"] == "error" || (body["status"] != "queued" && body["receipt"].is_object())
        {
            return body;
        }
        assert!(
            Instant::now() < deadline,
            "{id} has no receipt after 120 s: {body}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// Downloads the server's transparency log key (`/log/key`) to `dir/log.pub`.
pub fn log_key(server: &Server, dir: &Path) -> PathBuf {
    let text = client()
        .get(server.url("/log/key"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    let path = dir.join("log.pub");
    std::fs::write(&path, text).unwrap();
    path
}

/// A running `hourglass log witness` on loopback, with its key files.
pub struct WitnessProcess {
    child: Option<Child>,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    /// Its verifier key file.
    pub public: PathBuf,
    key: PathBuf,
    state: PathBuf,
    log_keys: Vec<PathBuf>,
    /// What it wrote on standard error so far.
    pub stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl WitnessProcess {
    /// Makes a witness key named `name` in `dir` and starts a witness of the logs `log_keys`
    /// on a free port.
    pub fn start(dir: &Path, name: &str, log_keys: &[&Path]) -> WitnessProcess {
        let key = dir.join(format!("{name}.key"));
        hg(&[
            "log".as_ref(),
            "keygen".as_ref(),
            "--name".as_ref(),
            format!("{name}.example").as_ref(),
            "-o".as_ref(),
            key.as_os_str(),
        ]);
        let mut w = WitnessProcess {
            child: None,
            url: format!("http://127.0.0.1:{}", free_port()),
            public: dir.join(format!("{name}.pub")),
            key,
            state: dir.join(format!("{name}-state")),
            log_keys: log_keys.iter().map(|p| p.to_path_buf()).collect(),
            stderr: Default::default(),
        };
        w.restart();
        w
    }

    /// Starts it again (same key, state and port) after [`Self::stop`].
    pub fn restart(&mut self) {
        let listen = self.url.trim_start_matches("http://").to_string();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hourglass"));
        cmd.env("RUST_LOG", "info")
            .args(["log", "witness", "--listen", &listen, "--key"])
            .arg(&self.key)
            .arg("--state")
            .arg(&self.state);
        for k in &self.log_keys {
            cmd.arg("--log-key").arg(k);
        }
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("cannot start hourglass log witness");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, rx) = std::sync::mpsc::channel();
        let log = self.stderr.clone();
        std::thread::spawn(move || {
            let mut tx = Some(tx);
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if line.contains("listening on ") {
                    if let Some(tx) = tx.take() {
                        let _ = tx.send(());
                    }
                }
                eprintln!("[witness] {line}");
                if let Ok(mut l) = log.lock() {
                    l.push_str(&line);
                    l.push('\n');
                }
            }
        });
        rx.recv_timeout(Duration::from_secs(60))
            .expect("the witness did not start within 60 s");
        self.child = Some(child);
    }

    /// `--witness URL=KEYFILE` for `hourglass serve`.
    pub fn serve_arg(&self) -> String {
        format!("{}={}", self.url, self.public.display())
    }

    /// Kills it.
    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for WitnessProcess {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The value of a metric line (`NAME{LABELS} VALUE`) in /metrics, 0 if absent.
pub fn metric(server: &Server, line_prefix: &str) -> f64 {
    let text = client()
        .get(server.url("/metrics"))
        .send()
        .unwrap()
        .text()
        .unwrap();
    text.lines()
        .find(|l| l.starts_with(line_prefix))
        .and_then(|l| l.rsplit(' ').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.0)
}

/// A throwaway PostgreSQL cluster in a temporary directory, from Debian's binaries, listening
/// on a free loopback port; stopped (and its files removed) on drop.
pub struct Postgres {
    dir: tempfile::TempDir,
    bin: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl Postgres {
    /// Starts a cluster with database `hourglass` owned by user `hourglass` (trust auth on
    /// loopback only).
    pub fn start() -> Postgres {
        let bin = std::fs::read_dir("/usr/lib/postgresql")
            .ok()
            .and_then(|d| {
                d.flatten()
                    .map(|e| e.path().join("bin"))
                    .filter(|p| p.join("initdb").exists())
                    .max()
            })
            .expect("PostgreSQL server binaries not found in /usr/lib/postgresql: run `bash scripts/setup-debian.sh` (it installs postgresql)");
        let dir = tempfile::Builder::new()
            .prefix("hourglass-pg")
            .tempdir()
            .unwrap();
        // PostgreSQL refuses to run as root: then the cluster belongs to the postgres user.
        let as_postgres = running_as_root();
        if as_postgres {
            let _ = Command::new("chown")
                .args(["-R", "postgres:postgres"])
                .arg(dir.path())
                .status();
        }
        let port = free_port();
        let pg = Postgres {
            dir,
            bin,
            port,
            as_postgres,
        };
        let data = pg.dir.path().join("data");
        pg.run(&[
            pg.bin.join("initdb").to_str().unwrap(),
            "-D",
            data.to_str().unwrap(),
            "-U",
            "hourglass",
            "-A",
            "trust",
            "--no-sync",
        ]);
        let opts = format!(
            "-p {port} -k {} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200",
            pg.dir.path().display()
        );
        pg.run(&[
            pg.bin.join("pg_ctl").to_str().unwrap(),
            "-D",
            data.to_str().unwrap(),
            "-o",
            &opts,
            "-l",
            pg.dir.path().join("log").to_str().unwrap(),
            "-w",
            "start",
        ]);
        pg.run(&[
            pg.bin.join("createdb").to_str().unwrap(),
            "-h",
            "127.0.0.1",
            "-p",
            &port.to_string(),
            "-U",
            "hourglass",
            "hourglass",
        ]);
        pg
    }

    fn run(&self, args: &[&str]) -> String {
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"]).args(args);
            c
        } else {
            let mut c = Command::new(args[0]);
            c.args(&args[1..]);
            c
        };
        let out = cmd
            .current_dir(self.dir.path())
            .output()
            .expect("cannot run a PostgreSQL binary");
        assert!(
            out.status.success(),
            "{args:?} failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The URL `hourglass serve --database` takes.
    pub fn url(&self) -> String {
        format!("postgres://hourglass@127.0.0.1:{}/hourglass", self.port)
    }

    /// Runs SQL with psql and returns its unaligned output.
    pub fn sql(&self, query: &str) -> String {
        self.run(&[
            self.bin.join("psql").to_str().unwrap(),
            "-h",
            "127.0.0.1",
            "-p",
            &self.port.to_string(),
            "-U",
            "hourglass",
            "-d",
            "hourglass",
            "-At",
            "-c",
            query,
        ])
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        let data = self.dir.path().join("data");
        let mut cmd = if self.as_postgres {
            let mut c = Command::new("runuser");
            c.args(["-u", "postgres", "--"])
                .arg(self.bin.join("pg_ctl"));
            c
        } else {
            Command::new(self.bin.join("pg_ctl"))
        };
        let _ = cmd
            .arg("-D")
            .arg(&data)
            .args(["-m", "immediate", "stop"])
            .current_dir(self.dir.path())
            .output();
    }
}

fn running_as_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
        .unwrap_or(false)
}

/// A loopback port that was free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

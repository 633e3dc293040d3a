//! Helpers shared by the command-line scenario and interoperability tests.
//!
//! External tools (the `openssl` command line, Python with `cryptography` and `pycryptodome`)
//! are required, not optional: a missing tool fails the test with a message saying how to
//! install it, so a machine without them cannot pass by skipping.

#![allow(dead_code)] // Each test crate uses a different subset.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command as StdCommand, Output, Stdio};
use std::time::{Duration, Instant};

/// How to install every tool these tests need.
pub const SETUP_HINT: &str =
    "run `bash scripts/setup-debian.sh` (it installs openssl, libssl-dev and m4 \
     with apt, and the Python packages cryptography and pycryptodome with pip)";

/// The state directory (checkpoint key) of the runs of this test process: a fresh user per test
/// binary, so no test depends on, or writes to, the real user's state.
pub fn state_dir() -> PathBuf {
    std::env::temp_dir().join(format!("hourglass-test-state-{}", std::process::id()))
}

/// The `hourglass` binary under test.
pub fn hourglass() -> assert_cmd::Command {
    let mut cmd = assert_cmd::Command::new(env!("CARGO_BIN_EXE_hourglass"));
    cmd.env("HOURGLASS_STATE_DIR", state_dir());
    cmd
}

fn describe(args: &[&OsStr]) -> String {
    args.iter()
        .map(|a| a.to_string_lossy())
        .collect::<Vec<_>>()
        .join(" ")
}

fn show(out: &Output) -> String {
    format!(
        "status {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// Runs `hourglass ARGS` and returns its output, whatever the status.
pub fn hg_run<S: AsRef<OsStr>>(args: &[S]) -> Output {
    let args: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
    hourglass()
        .args(&args)
        .output()
        .expect("cannot run the hourglass binary")
}

/// Runs `hourglass ARGS`, requires success, returns its output.
pub fn hg<S: AsRef<OsStr>>(args: &[S]) -> Output {
    let out = hg_run(args);
    let list: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
    assert!(
        out.status.success(),
        "hourglass {} failed:\n{}",
        describe(&list),
        show(&out)
    );
    out
}

/// Runs `hourglass ARGS`, requires failure with exit status `code`: 2 (an error) with an
/// `hourglass: error:` line on stderr, or 1 (a negative verdict) with an `hourglass:` line that
/// does not call it an error; returns stderr.
pub fn hg_fail<S: AsRef<OsStr>>(code: i32, args: &[S]) -> String {
    let out = hg_run(args);
    let list: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
    assert_eq!(
        out.status.code(),
        Some(code),
        "hourglass {}: wrong status\n{}",
        describe(&list),
        show(&out)
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if code == 1 {
        assert!(
            stderr.contains("hourglass: ") && !stderr.contains("hourglass: error:"),
            "hourglass {}: a negative verdict is not an error\n{}",
            describe(&list),
            show(&out)
        );
    } else {
        assert!(
            stderr.contains("hourglass: error:"),
            "hourglass {}: no 'hourglass: error:' on stderr\n{}",
            describe(&list),
            show(&out)
        );
    }
    stderr
}

/// Fails (does not skip) unless `openssl` runs.
pub fn require_openssl() {
    match StdCommand::new("openssl").arg("version").output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!("`openssl version` failed; {SETUP_HINT}\n{}", show(&out)),
        Err(e) => {
            panic!("the `openssl` command line is required but cannot be run ({e}); {SETUP_HINT}")
        }
    }
}

/// Runs `openssl ARGS` and returns its output, whatever the status.
pub fn openssl_run<S: AsRef<OsStr>>(args: &[S]) -> Output {
    require_openssl();
    StdCommand::new("openssl")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run openssl ({e}); {SETUP_HINT}"))
}

/// Runs `openssl ARGS`, requires success.
pub fn openssl<S: AsRef<OsStr>>(args: &[S]) -> Output {
    let out = openssl_run(args);
    let list: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
    assert!(
        out.status.success(),
        "openssl {} failed:\n{}",
        describe(&list),
        show(&out)
    );
    out
}

/// Runs `openssl ARGS` in `dir`, requires success, and returns its standard output and error.
pub fn openssl_in(args: &[&str], dir: &Path) -> String {
    require_openssl();
    let out = StdCommand::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "openssl {args:?}: {text}");
    text
}

/// An OpenSSL TSA in `dir`: `ca.pem` (the root a relying party pins), `tsa.pem` (critical
/// extendedKeyUsage timeStamping) and `tsa.cnf` for `openssl ts -reply`. Its `certs` repeats
/// the signer's certificate, a common configuration: OpenSSL then writes it twice in the token.
pub fn openssl_tsa(dir: &Path, name: &str) {
    openssl_in(
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-subj",
            &format!("/CN={name} Root"),
            "-days",
            "3650",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ],
        dir,
    );
    openssl_in(
        &[
            "req",
            "-new",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "tsa.key",
            "-out",
            "tsa.csr",
            "-subj",
            &format!("/CN={name}"),
        ],
        dir,
    );
    std::fs::write(
        dir.join("tsa.ext"),
        "extendedKeyUsage=critical,timeStamping\nkeyUsage=critical,digitalSignature\n",
    )
    .unwrap();
    openssl_in(
        &[
            "x509",
            "-req",
            "-in",
            "tsa.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "tsa.pem",
            "-days",
            "365",
            "-extfile",
            "tsa.ext",
        ],
        dir,
    );
    std::fs::write(dir.join("serial"), "01\n").unwrap();
    std::fs::write(
        dir.join("tsa.cnf"),
        "[ tsa ]\ndefault_tsa = t\n[ t ]\nserial = ./serial\ncrypto_device = builtin\n\
         signer_cert = ./tsa.pem\nsigner_key = ./tsa.key\ncerts = ./tsa.pem\nsigner_digest = sha256\n\
         default_policy = 1.3.6.1.4.1.4146.2.3\ndigests = sha256, sha384, sha512\naccuracy = secs:1\n\
         ess_cert_id_alg = sha1\n",
    )
    .unwrap();
}

/// Fails (does not skip) unless `python3` can import every module in `modules`.
pub fn require_python(modules: &[&str]) {
    let script = modules
        .iter()
        .map(|m| format!("import {m}\n"))
        .collect::<String>();
    match StdCommand::new("python3").arg("-c").arg(&script).output() {
        Ok(out) if out.status.success() => {}
        Ok(out) => panic!(
            "python3 cannot import {modules:?}; {SETUP_HINT}\n{}",
            show(&out)
        ),
        Err(e) => panic!("python3 is required but cannot be run ({e}); {SETUP_HINT}"),
    }
}

/// An argument list from a template of space-separated words, where each `{}` word is replaced
/// by the next path: `argv("rsa sign -k {} -i {}", &[&key, &msg])`. Words cannot contain spaces;
/// pass such arguments as a plain slice instead.
pub fn argv(template: &str, paths: &[&Path]) -> Vec<String> {
    let mut paths = paths.iter();
    let args: Vec<String> = template
        .split_whitespace()
        .map(|word| match word {
            "{}" => s(paths.next().expect("more {} than paths")).to_string(),
            _ => word.to_string(),
        })
        .collect();
    assert!(
        paths.next().is_none(),
        "more paths than {{}} in {template:?}"
    );
    args
}

/// `path` as `&str` (temporary directories are UTF-8 here).
pub fn s(path: &Path) -> &str {
    path.to_str().expect("UTF-8 path")
}

/// A fresh temporary directory, removed when dropped.
pub fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("hourglass-test-")
        .tempdir()
        .expect("temporary directory")
}

/// Generates a key with `--seed` (deterministic) into `dir/NAME.pem` and `dir/NAME.pub.pem`.
pub fn keygen(
    dir: &Path,
    name: &str,
    variant: &str,
    bits: u32,
    extra: &[&str],
) -> (PathBuf, PathBuf) {
    keygen_seeded(
        dir,
        name,
        &format!("hourglass tests: {name} {variant} {bits}"),
        variant,
        bits,
        extra,
    )
}

/// Like [`keygen`] with an explicit seed (the same seed and options give the same key).
pub fn keygen_seeded(
    dir: &Path,
    name: &str,
    seed: &str,
    variant: &str,
    bits: u32,
    extra: &[&str],
) -> (PathBuf, PathBuf) {
    let key = dir.join(format!("{name}.pem"));
    let public = dir.join(format!("{name}.pub.pem"));
    let bits = bits.to_string();
    let mut args = vec![
        "rsa",
        "keygen",
        "--variant",
        variant,
        "--bits",
        &bits,
        "--seed",
        seed,
        "-o",
        s(&key),
        "--pubout",
        s(&public),
    ];
    args.extend_from_slice(extra);
    hg(&args);
    (key, public)
}

/// Writes `data` to `dir/name` and returns the path.
pub fn file(dir: &Path, name: &str, data: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, data).expect("write test file");
    path
}

/// Copies `src` to `dir/name` with bit `bit` flipped (bit 0 is the low bit of the first byte).
pub fn flipped(src: &Path, dir: &Path, name: &str, bit: usize) -> PathBuf {
    let mut data = std::fs::read(src).expect("read file to tamper with");
    data[bit / 8] ^= 1 << (bit % 8);
    file(dir, name, &data)
}

/// Reads a file.
pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Starts `hourglass ARGS` in the background, waits (at most a minute) until `checkpoint`
/// exists, lets it run `linger` longer, then kills it with SIGKILL and checks that it did not
/// report success: a crash in the middle of a long computation.
pub fn kill_after_checkpoint(args: &[&str], checkpoint: &Path, linger: Duration) {
    let mut child = StdCommand::new(env!("CARGO_BIN_EXE_hourglass"))
        .env("HOURGLASS_STATE_DIR", state_dir())
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("cannot start the hourglass binary");
    let start = Instant::now();
    while !checkpoint.exists() && start.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(linger);
    child.kill().expect("cannot kill the background run"); // SIGKILL
    let status = child.wait().expect("cannot wait for the background run");
    assert!(!status.success(), "the killed run reported success");
}

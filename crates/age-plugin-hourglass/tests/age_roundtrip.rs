//! End to end with Debian's `age` (installed by scripts/setup-debian.sh): encrypt to an
//! hourglass recipient, decrypt by doing the squarings, refuse a tampered stanza, and mix with
//! an ordinary X25519 recipient (either opens the file).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use hourglass_timelock::age::AgeRecipient;

fn require(tool: &str) {
    match Command::new(tool).arg("--version").output() {
        Ok(o) if o.status.success() => {}
        _ => panic!("`{tool}` is needed: run `bash scripts/setup-debian.sh` (Debian package age)"),
    }
}

/// PATH with this build's plugin first, so `age` finds `age-plugin-hourglass`.
fn path_with_plugin() -> std::ffi::OsString {
    let plugin = Path::new(env!("CARGO_BIN_EXE_age-plugin-hourglass"));
    let path = std::env::var_os("PATH").unwrap_or_default();
    let dirs =
        std::iter::once(plugin.parent().unwrap().to_path_buf()).chain(std::env::split_paths(&path));
    std::env::join_paths(dirs).unwrap()
}

fn age(dir: &Path, state: &Path, args: &[&str]) -> Output {
    Command::new("age")
        .args(args)
        .current_dir(dir)
        .env("PATH", path_with_plugin())
        .env("HOURGLASS_STATE_DIR", state)
        .output()
        .expect("age runs")
}

fn ok(out: Output) -> Output {
    assert!(
        out.status.success(),
        "age failed: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

struct Setup {
    _tmp: tempfile::TempDir,
    dir: PathBuf,
    state: PathBuf,
}

fn setup() -> Setup {
    require("age");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().to_path_buf();
    let state = dir.join("state");
    std::fs::write(dir.join("plain.txt"), b"meet at noon, behind the library\n").unwrap();
    Setup {
        _tmp: tmp,
        dir,
        state,
    }
}

fn recipient() -> String {
    AgeRecipient {
        t: 300_000,
        bits: 1024,
        rate: None,
    }
    .to_bech32()
    .unwrap()
}

#[test]
fn encrypts_and_decrypts_with_debians_age() {
    let s = setup();
    let r = recipient();
    ok(age(
        &s.dir,
        &s.state,
        &["-r", &r, "-o", "f.age", "plain.txt"],
    ));
    let header = std::fs::read(s.dir.join("f.age")).unwrap();
    assert!(String::from_utf8_lossy(&header).contains("-> hourglass-tlock v1 300000 1024"));
    let out = ok(age(&s.dir, &s.state, &["-d", "-j", "hourglass", "f.age"]));
    assert_eq!(out.stdout, std::fs::read(s.dir.join("plain.txt")).unwrap());
    assert!(String::from_utf8_lossy(&out.stderr).contains("sequential squarings"));
    // The finished checkpoint (it reveals the key) is gone.
    let left: Vec<_> = std::fs::read_dir(s.state.join("age")).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_tampered_stanza_is_refused() {
    let s = setup();
    let r = recipient();
    ok(age(
        &s.dir,
        &s.state,
        &["-r", &r, "-o", "f.age", "plain.txt"],
    ));
    let text = std::fs::read_to_string(s.dir.join("f.age").as_path()).unwrap_or_default();
    let bytes = std::fs::read(s.dir.join("f.age")).unwrap();
    // Flip one base64 character of the stanza body (the line after the stanza's first line).
    let start = bytes.windows(3).position(|w| w == b"-> ").unwrap();
    let body = start + bytes[start..].iter().position(|&b| b == b'\n').unwrap() + 10;
    let mut bad = bytes.clone();
    bad[body] = if bad[body] == b'A' { b'B' } else { b'A' };
    std::fs::write(s.dir.join("bad.age"), &bad).unwrap();
    let out = age(&s.dir, &s.state, &["-d", "-j", "hourglass", "bad.age"]);
    assert!(
        !out.status.success(),
        "a tampered stanza opened ({})",
        text.len()
    );
    assert!(out.stdout.is_empty());
    // An edited argument (a smaller t) is refused too, before any squaring.
    let edited = String::from_utf8_lossy(&bytes).replacen("v1 300000 1024", "v1 3 1024", 1);
    std::fs::write(s.dir.join("args.age"), edited.as_bytes()).unwrap();
    let out = age(&s.dir, &s.state, &["-d", "-j", "hourglass", "args.age"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("disagree"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn mixed_with_an_x25519_recipient_either_opens_it() {
    let s = setup();
    require("age-keygen");
    let keygen = Command::new("age-keygen")
        .args(["-o", "key.txt"])
        .current_dir(&s.dir)
        .output()
        .unwrap();
    assert!(keygen.status.success());
    let stderr = String::from_utf8_lossy(&keygen.stderr);
    let x25519 = stderr
        .split_whitespace()
        .find(|w| w.starts_with("age1"))
        .expect("age-keygen prints the public key");
    let r = recipient();
    ok(age(
        &s.dir,
        &s.state,
        &["-r", &r, "-r", x25519, "-o", "both.age", "plain.txt"],
    ));
    let plain = std::fs::read(s.dir.join("plain.txt")).unwrap();
    let by_key = ok(age(&s.dir, &s.state, &["-d", "-i", "key.txt", "both.age"]));
    assert_eq!(by_key.stdout, plain);
    let by_time = ok(age(
        &s.dir,
        &s.state,
        &["-d", "-j", "hourglass", "both.age"],
    ));
    assert_eq!(by_time.stdout, plain);
}

#[test]
fn the_binary_explains_itself_and_refuses_unknown_arguments() {
    let bin = env!("CARGO_BIN_EXE_age-plugin-hourglass");
    let help = Command::new(bin).arg("--help").output().unwrap();
    assert!(help.status.success());
    assert!(String::from_utf8_lossy(&help.stdout).contains("hourglass timelock recipient"));
    let bad = Command::new(bin).arg("--nonsense").output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

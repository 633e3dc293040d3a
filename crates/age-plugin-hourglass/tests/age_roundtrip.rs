//! End to end with Debian's `age` (installed by scripts/setup-debian.sh): encrypt to an
//! hourglass recipient, decrypt by doing the squarings, refuse a tampered stanza, and mix with
//! an ordinary X25519 recipient (either opens the file); of several hourglass stanzas the
//! cheapest opens the file, and long work is announced, or refused past a limit, before it starts.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

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
    recipient_of(300_000)
}

/// A recipient of `t` squarings on 1024-bit moduli.
fn recipient_of(t: u64) -> String {
    AgeRecipient {
        t,
        bits: 1024,
        rate: None,
    }
    .to_bech32()
    .unwrap()
}

/// Squarings that take more than a day at any rate a 1024-bit modulus is squared at (10^13: a
/// day and a bit at a hundred million a second, weeks at the few million a CPU does).
const WEEKS: u64 = 10_000_000_000_000;

/// How a run that may not end by itself ended.
struct Bounded {
    /// Its exit status, or `None` if it was killed.
    status: Option<ExitStatus>,
    stdout: Vec<u8>,
    stderr: String,
}

/// Runs `age ARGS` (with `env`) in a process group of its own, so that it and the plugin it
/// starts can be killed together: until it ends, `stderr` shows `until`, or `limit` passes.
/// A run that had to be killed (the plugin squaring on) has no status.
fn age_bounded(
    s: &Setup,
    args: &[&str],
    env: &[(&str, &str)],
    until: Option<&str>,
    limit: Duration,
) -> Bounded {
    let mut child = Command::new("age")
        .args(args)
        .current_dir(&s.dir)
        .env("PATH", path_with_plugin())
        .env("HOURGLASS_STATE_DIR", &s.state)
        .envs(env.iter().copied())
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("age runs");
    let stderr = Arc::new(Mutex::new(String::new()));
    let mut pipe = child.stderr.take().unwrap();
    let sink = stderr.clone();
    let reader = std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = pipe.read(&mut buf) {
            if n == 0 {
                break;
            }
            sink.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
    let mut out = child.stdout.take().unwrap();
    let stdout = std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = out.read_to_end(&mut bytes);
        bytes
    });
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break Some(status);
        }
        let seen = until.is_some_and(|u| stderr.lock().unwrap().contains(u));
        if seen || start.elapsed() > limit {
            // age and the plugin it started: the whole group.
            let group = format!("-{}", child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let _ = reader.join();
    let stdout = stdout.join().unwrap();
    let stderr = stderr.lock().unwrap().clone();
    Bounded {
        status,
        stdout,
        stderr,
    }
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

/// Two hourglass stanzas, the first needing weeks of squarings and the second a fraction of a
/// second: the cheap one opens the file (hourglass 0.1 started on the first and never ended).
#[test]
fn of_several_stanzas_the_one_with_the_fewest_squarings_opens_the_file() {
    let s = setup();
    let (slow, fast) = (recipient_of(WEEKS), recipient());
    ok(age(
        &s.dir,
        &s.state,
        &["-r", &slow, "-r", &fast, "-o", "two.age", "plain.txt"],
    ));
    let text = String::from_utf8_lossy(&std::fs::read(s.dir.join("two.age")).unwrap()).into_owned();
    let (at_slow, at_fast) = (
        text.find(&format!("v1 {WEEKS} 1024")).unwrap(),
        text.find("v1 300000 1024").unwrap(),
    );
    assert!(
        at_slow < at_fast,
        "the slow stanza must come first:\n{text}"
    );
    let run = age_bounded(
        &s,
        &["-d", "-j", "hourglass", "two.age"],
        &[],
        None,
        Duration::from_secs(120),
    );
    assert!(
        run.status.is_some_and(|st| st.success()),
        "not opened by the cheap stanza within 2 minutes ({:?}):\n{}",
        run.status,
        run.stderr
    );
    assert_eq!(run.stdout, std::fs::read(s.dir.join("plain.txt")).unwrap());
    assert!(
        run.stderr.contains("300000 sequential squarings"),
        "{}",
        run.stderr
    );
}

/// `AGE_PLUGIN_HOURGLASS_MAX_TIME` refuses work estimated beyond it, before any squaring, and
/// says how long it would have taken; work within it goes ahead; a value that is not a
/// duration is refused.
#[test]
fn a_limit_refuses_long_work_before_it_starts() {
    let s = setup();
    let slow = recipient_of(WEEKS);
    ok(age(
        &s.dir,
        &s.state,
        &["-r", &slow, "-o", "slow.age", "plain.txt"],
    ));
    let run = age_bounded(
        &s,
        &["-d", "-j", "hourglass", "slow.age"],
        &[("AGE_PLUGIN_HOURGLASS_MAX_TIME", "1h")],
        None,
        Duration::from_secs(60),
    );
    let refused = run.status.is_some_and(|st| !st.success());
    assert!(
        refused,
        "not refused at once ({:?}):\n{}",
        run.status, run.stderr
    );
    assert!(run.stdout.is_empty());
    for want in [
        "AGE_PLUGIN_HOURGLASS_MAX_TIME",
        "days",
        "nothing was started",
    ] {
        assert!(run.stderr.contains(want), "{want} missing:\n{}", run.stderr);
    }
    // No work was checkpointed.
    let saved: Vec<_> = std::fs::read_dir(s.state.join("age"))
        .map(|d| d.collect())
        .unwrap_or_default();
    assert!(saved.is_empty(), "{saved:?}");

    // Within the limit it opens.
    let fast = recipient();
    ok(age(
        &s.dir,
        &s.state,
        &["-r", &fast, "-o", "fast.age", "plain.txt"],
    ));
    let run = age_bounded(
        &s,
        &["-d", "-j", "hourglass", "fast.age"],
        &[("AGE_PLUGIN_HOURGLASS_MAX_TIME", "1h")],
        None,
        Duration::from_secs(120),
    );
    assert!(run.status.is_some_and(|st| st.success()), "{}", run.stderr);
    assert_eq!(run.stdout, std::fs::read(s.dir.join("plain.txt")).unwrap());

    let run = age_bounded(
        &s,
        &["-d", "-j", "hourglass", "fast.age"],
        &[("AGE_PLUGIN_HOURGLASS_MAX_TIME", "soon")],
        None,
        Duration::from_secs(60),
    );
    assert!(run.status.is_some_and(|st| !st.success()), "{}", run.stderr);
    assert!(run.stderr.contains("not a duration"), "{}", run.stderr);
}

/// Work estimated beyond a day is announced, with the estimate, before it starts.
#[test]
fn long_work_is_announced_before_it_starts() {
    let s = setup();
    let slow = recipient_of(WEEKS);
    ok(age(
        &s.dir,
        &s.state,
        &["-r", &slow, "-o", "slow.age", "plain.txt"],
    ));
    let run = age_bounded(
        &s,
        &["-d", "-j", "hourglass", "slow.age"],
        &[],
        Some("this will take"),
        Duration::from_secs(60),
    );
    assert!(run.status.is_none(), "it ended by itself:\n{}", run.stderr);
    let announced = run
        .stderr
        .lines()
        .find(|l| l.contains("this will take"))
        .unwrap_or_else(|| panic!("no announcement within a minute:\n{}", run.stderr));
    assert!(announced.contains("days"), "{announced}");
}

#[test]
fn the_binary_explains_itself_and_refuses_unknown_arguments() {
    let bin = env!("CARGO_BIN_EXE_age-plugin-hourglass");
    let help = Command::new(bin).arg("--help").output().unwrap();
    assert!(help.status.success());
    let help = String::from_utf8_lossy(&help.stdout);
    assert!(help.contains("hourglass timelock recipient"));
    assert!(help.contains("AGE_PLUGIN_HOURGLASS_MAX_TIME"));
    let bad = Command::new(bin).arg("--nonsense").output().unwrap();
    assert_eq!(bad.status.code(), Some(2));
}

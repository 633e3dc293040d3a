//! The transparency log of receipts, end to end on loopback: `hourglass serve` with two
//! `hourglass log witness` processes, receipts checked with the log's and the witnesses' keys,
//! `hourglass log verify` and `log search` as an auditor runs them, an independent Python
//! recomputation of the root from the served entries, a witness down (uploads go on, receipts
//! wait, nothing is lost), a quorum not met, and a history rewritten in the database (refused
//! by the witnesses, caught by `log verify`).

mod common;
mod service;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::{file, hg, hg_fail, hg_run, require_python, s, tempdir};
use serde_json::Value;
use service::{client, seal, short_set, upload, verdict, Server, WitnessProcess};

/// Pre-makes the log's key in the data directory (so witnesses can be given its public half
/// before the server's first start), as `hourglass log keygen --role log` documents.
fn log_key_ahead(data: &Path, origin: &str) -> PathBuf {
    std::fs::create_dir_all(data).unwrap();
    hg(&[
        "log",
        "keygen",
        "--role",
        "log",
        "--name",
        origin,
        "-o",
        s(&data.join("log.key")),
    ]);
    let public = data.parent().unwrap().join("log.pub");
    std::fs::copy(data.join("log.pub"), &public).unwrap();
    public
}

/// Seals `text` against `set` and uploads it; returns the submission id.
fn submit(server: &Server, set: &Path, dir: &Path, name: &str, text: &str) -> String {
    let doc = file(dir, name, text.as_bytes());
    let bundle = seal(set, &doc, "1s");
    let (status, body) = upload(server, &std::fs::read(bundle).unwrap(), text.as_bytes());
    assert_eq!(status, 202, "{body}");
    body["id"].as_str().unwrap().to_string()
}

/// The receipt of `id` written to `dir/NAME`.
fn receipt_file(server: &Server, id: &str, dir: &Path, name: &str) -> PathBuf {
    let v = verdict(server, id);
    file(
        dir,
        name,
        serde_json::to_string(&v["receipt"]).unwrap().as_bytes(),
    )
}

fn institution(server: &Server, dir: &Path) -> PathBuf {
    file(
        dir,
        "institution.pub",
        &client()
            .get(server.url("/institution.pub"))
            .send()
            .unwrap()
            .bytes()
            .unwrap(),
    )
}

/// `hourglass log verify ... --json`: (exit code, JSON or stderr).
fn log_verify(server: &Server, log_pub: &Path, state: &Path, extra: &[&str]) -> (i32, String) {
    let prefix = server.url("/log");
    let mut args = vec![
        "log",
        "verify",
        "--log",
        &prefix,
        "--log-key",
        s(log_pub),
        "--state",
        s(state),
        "--json",
    ];
    args.extend(extra);
    let out = hg_run(&args);
    let code = out.status.code().unwrap_or(-1);
    let text = if code == 0 {
        String::from_utf8_lossy(&out.stdout).into_owned()
    } else {
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    (code, text)
}

/// The receipt of `id` is not handed out for `wait` (it waits for the log's checkpoint).
fn receipt_waits(server: &Server, id: &str, wait: Duration) {
    let end = Instant::now() + wait;
    while Instant::now() < end {
        let r = client()
            .get(server.url(&format!("/api/v1/submissions/{id}/receipt")))
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 404, "a receipt was handed out");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// Rewrites history in a stopped server's SQLite database, as an operator with access to it
/// could: entry 0's verdict is changed, and the tree is recomputed from the entries.
fn rewrite_entry_zero(data: &Path) {
    let script = "import sqlite3, sys\n\
        c = sqlite3.connect(sys.argv[1])\n\
        e = bytes(c.execute('SELECT entry FROM log_entries WHERE idx = 0').fetchone()[0])\n\
        c.execute('UPDATE log_entries SET entry = ? WHERE idx = 0', (e.replace(b'verdict: invalid', b'verdict: valid').replace(b'submission: ', b'submission: x', 1),))\n\
        c.execute('DELETE FROM log_hashes')\n\
        c.execute('UPDATE log_state SET tree_size = 0')\n\
        c.commit()\n";
    let out = Command::new("python3")
        .args(["-c", script])
        .arg(data.join("hourglass.db"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn receipts_are_in_a_witnessed_log_that_anyone_audits_and_a_rewrite_is_caught() {
    require_python(&["cryptography"]);
    let dir = tempdir();
    let d = dir.path();
    let data = d.join("srv");
    let log_pub = log_key_ahead(&data, "receipts.example/log");
    let w1 = WitnessProcess::start(d, "w1", &[&log_pub]);
    let mut w2 = WitnessProcess::start(d, "w2", &[&log_pub]);
    let (w1_pub, w2_pub) = (w1.public.clone(), w2.public.clone());
    let witnesses = [
        "--witness".to_string(),
        w1.serve_arg(),
        "--witness".to_string(),
        w2.serve_arg(),
        "--log-interval".to_string(),
        "200ms".to_string(),
    ];
    let args: Vec<&str> = witnesses.iter().map(String::as_str).collect();
    let mut server = Server::start(&data, &args);
    let set = short_set(&server, "conf", &["1s"], d);
    let inst = institution(&server, d);

    // A valid submission and an invalid one (another document): both receipts are logged.
    let good = submit(&server, &set, d, "paper.txt", "the paper\n");
    let doc = file(d, "other.txt", b"another text\n");
    let bundle = seal(&set, &file(d, "third.txt", b"third\n"), "1s");
    let (_, bad) = upload(&server, &std::fs::read(&bundle).unwrap(), b"another text\n");
    let bad = bad["id"].as_str().unwrap().to_string();
    let good_receipt = receipt_file(&server, &good, d, "good.json");
    let bad_receipt = receipt_file(&server, &bad, d, "bad.json");

    // The receipt checks against the log and both witnesses.
    let check = |receipt: &Path, extra: &[&str]| {
        let mut a = vec![
            "submit",
            "check-receipt",
            s(receipt),
            "--institution",
            s(&inst),
        ];
        a.extend(extra);
        hg_run(&a)
    };
    let both = [
        "--log-key",
        s(&log_pub),
        "--witness-key",
        s(&w1_pub),
        "--witness-key",
        s(&w2_pub),
    ];
    let out = check(&good_receipt, &both);
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("cosigned by w1.example, w2.example")
            || text.contains("cosigned by w2.example, w1.example"),
        "{text}"
    );
    // Its invalid verdict is authentic and logged: exit 1 for the verdict, not for the log.
    let out = check(&bad_receipt, &both);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stdout).contains("log: entry"));
    // Without the log's key the receipt is not believed (an error), and a witness the log
    // never asked does not make a quorum (a negative verdict).
    assert!(hg_fail(
        2,
        &[
            "submit",
            "check-receipt",
            s(&good_receipt),
            "--institution",
            s(&inst)
        ]
    )
    .contains("--log-key"));
    let stranger = WitnessProcess::start(d, "w3", &[&log_pub]);
    let out = check(
        &good_receipt,
        &[
            "--log-key",
            s(&log_pub),
            "--witness-key",
            s(&stranger.public),
        ],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A witness key given as the log key is refused as an error.
    let out = check(&good_receipt, &["--log-key", s(&w1.public)]);
    assert_eq!(out.status.code(), Some(2));

    // An auditor: the whole log, then its growth, each proven consistent with the last.
    let state = d.join("audit.state");
    let (code, out) = log_verify(&server, &log_pub, &state, &["--institution", s(&inst)]);
    assert_eq!(code, 0, "{out}");
    let first: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(first["checkpoint"]["size"], 2);
    assert_eq!(first["new_entries"].as_array().unwrap().len(), 2);
    assert!(first["new_entries"]
        .as_array()
        .unwrap()
        .iter()
        .all(|e| e["signed_by_institution"] == true));
    // The same log recomputed from its served entries by an independent implementation.
    let oracle = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/tlog_oracle.py"))
        .arg(server.url("/log"))
        .arg(&log_pub)
        .output()
        .unwrap();
    assert!(
        oracle.status.success(),
        "{}",
        String::from_utf8_lossy(&oracle.stderr)
    );
    let theirs: Value = serde_json::from_slice(&oracle.stdout).unwrap();
    assert_eq!(theirs["size"], 2);
    assert_eq!(theirs["root"], first["checkpoint"]["root"]);
    // Anyone finds every receipt of a document, or of a set.
    let prefix = server.url("/log");
    let search = |what: &[&str]| {
        let mut a = vec![
            "log",
            "search",
            "--log",
            &prefix,
            "--log-key",
            s(&log_pub),
            "--json",
        ];
        a.extend(what);
        hg_run(&a)
    };
    let found = search(&["--document", s(&d.join("paper.txt"))]);
    assert_eq!(found.status.code(), Some(0));
    let found: Value = serde_json::from_slice(&found.stdout).unwrap();
    assert_eq!(found["found"].as_array().unwrap().len(), 1);
    assert_eq!(found["found"][0]["submission"], good.as_str());
    let found: Value = serde_json::from_slice(&search(&["--set", "conf"]).stdout).unwrap();
    assert_eq!(found["found"].as_array().unwrap().len(), 2);
    assert_eq!(search(&["--document", s(&doc)]).status.code(), Some(0));
    let never = file(d, "never.txt", b"never submitted\n");
    assert_eq!(search(&["--document", s(&never)]).status.code(), Some(1));

    // Tiles are immutable, checkpoints are not.
    let r = client()
        .get(server.url("/log/tile/0/000.p/2"))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(r.headers()["cache-control"]
        .to_str()
        .unwrap()
        .contains("immutable"));
    assert_eq!(r.bytes().unwrap().len(), 64);
    let r = client().get(server.url("/log/checkpoint")).send().unwrap();
    assert!(!r.headers()["cache-control"]
        .to_str()
        .unwrap()
        .contains("immutable"));
    // An auditor's many reads are not rate limited (the server runs with the default limit
    // of 20 per second, bursts of 60).
    for _ in 0..100 {
        let r = client()
            .get(server.url("/log/tile/entries/000.p/2"))
            .send()
            .unwrap();
        assert_eq!(r.status().as_u16(), 200);
    }
    // Beyond the published tree, or not canonical: 404.
    for path in [
        "/log/tile/0/000.p/3",
        "/log/tile/0/000",
        "/log/tile/0/0.p/1",
        "/log/tile/entries/001",
    ] {
        assert_eq!(
            client()
                .get(server.url(path))
                .send()
                .unwrap()
                .status()
                .as_u16(),
            404,
            "{path}"
        );
    }

    // A witness down: uploads are still accepted, the receipt waits; nothing is lost.
    w2.stop();
    let third = submit(&server, &set, d, "late.txt", "a late paper\n");
    receipt_waits(&server, &third, Duration::from_secs(3));
    w2.restart();
    let late = receipt_file(&server, &third, d, "late.json");
    assert_eq!(check(&late, &both).status.code(), Some(0));
    let (code, out) = log_verify(&server, &log_pub, &state, &[]);
    assert_eq!(code, 0, "{out}");
    let second: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(second["previous"]["size"], 2);
    assert_eq!(second["checkpoint"]["size"], 3);
    assert_eq!(second["new_entries"][0]["index"], 2);

    // History rewritten in the database (entry 0's verdict, and the tree recomputed): the
    // witnesses refuse the next checkpoint, its receipt waits, and the auditor's next run fails.
    server.stop();
    rewrite_entry_zero(&data);
    let server = Server::start(&data, &args);
    let fourth = submit(&server, &set, d, "after.txt", "after the rewrite\n");
    let end = Instant::now() + Duration::from_secs(60);
    while !(w1.stderr.lock().unwrap().contains("422") && w2.stderr.lock().unwrap().contains("422"))
    {
        assert!(
            Instant::now() < end,
            "the witnesses did not refuse the rewritten log"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    receipt_waits(&server, &fourth, Duration::from_secs(1));
    let saved = std::fs::read(&state).unwrap();
    let (code, err) = log_verify(&server, &log_pub, &state, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("do not hash"), "{err}");
    assert_eq!(
        std::fs::read(&state).unwrap(),
        saved,
        "the state moved on a failure"
    );

    // The same operator, now without witnesses, publishes the rewritten tree: the auditor's
    // state proves the fork, naming both sizes and roots.
    drop(server);
    let server = Server::start(&data, &["--log-interval", "200ms"]);
    verdict(&server, &fourth);
    let (code, err) = log_verify(&server, &log_pub, &state, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(
        err.contains("rewritten or forked") && err.contains("size 3") && err.contains("size 4"),
        "{err}"
    );
    assert_eq!(std::fs::read(&state).unwrap(), saved);
}

#[test]
fn a_checkpoint_cosigned_by_one_of_two_required_witnesses_is_refused() {
    let dir = tempdir();
    let d = dir.path();
    let data = d.join("srv");
    let log_pub = log_key_ahead(&data, "quorum.example/log");
    let w1 = WitnessProcess::start(d, "w1", &[&log_pub]);
    let mut w2 = WitnessProcess::start(d, "w2", &[&log_pub]);
    w2.stop();
    // The operator settles for one witness of two: its checkpoints carry one cosignature.
    let server = Server::start(
        &data,
        &[
            "--witness",
            &w1.serve_arg(),
            "--witness",
            &w2.serve_arg(),
            "--witness-quorum",
            "1",
            "--log-interval",
            "200ms",
        ],
    );
    let set = short_set(&server, "conf", &["1s"], d);
    let id = submit(&server, &set, d, "paper.txt", "paper\n");
    let receipt = receipt_file(&server, &id, d, "receipt.json");
    let inst = institution(&server, d);
    let keys = [
        "--log-key",
        s(&log_pub),
        "--witness-key",
        s(&w1.public),
        "--witness-key",
        s(&w2.public),
    ];
    let mut args = vec![
        "submit",
        "check-receipt",
        s(&receipt),
        "--institution",
        s(&inst),
    ];
    args.extend(keys);
    let err = hg_fail(1, &args);
    assert!(
        err.contains("cosigned by 1 of the pinned witnesses, 2 required"),
        "{err}"
    );
    args.extend(["--witness-quorum", "1"]);
    hg(&args);
    let (code, err) = log_verify(&server, &log_pub, &d.join("state"), &keys[2..]);
    assert_eq!(code, 1, "{err}");
    assert!(!d.join("state").exists(), "no state is saved on a failure");
    // A quorum larger than the witnesses given is a usage error.
    hg_fail(
        2,
        &[
            "submit",
            "check-receipt",
            s(&receipt),
            "--institution",
            s(&inst),
            "--log-key",
            s(&log_pub),
            "--witness-key",
            s(&w1.public),
            "--witness-quorum",
            "2",
        ],
    );
}

#[test]
fn witness_keys_and_servers_refuse_bad_input() {
    let dir = tempdir();
    let d = dir.path();
    // keygen writes the pair, 0600 for the private half, and never overwrites.
    let out = hg(&[
        "log",
        "keygen",
        "--name",
        "w.example",
        "-o",
        s(&d.join("w.key")),
    ]);
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(printed.starts_with("w.example+"), "{printed}");
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(d.join("w.key"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777,
        0o600
    );
    assert_eq!(std::fs::read_to_string(d.join("w.pub")).unwrap(), printed);
    hg_fail(
        2,
        &[
            "log",
            "keygen",
            "--name",
            "w.example",
            "-o",
            s(&d.join("w.key")),
        ],
    );
    hg_fail(
        2,
        &[
            "log",
            "keygen",
            "--name",
            "bad name",
            "-o",
            s(&d.join("x.key")),
        ],
    );
    assert!(!d.join("x.key").exists() && !d.join("x.pub").exists());
    // A private key, a witness key or junk where a log key is expected.
    let junk = file(d, "junk.pub", b"not a key\n");
    for bad in [d.join("w.key"), d.join("w.pub"), junk] {
        hg_fail(
            2,
            &[
                "log",
                "witness",
                "--listen",
                "127.0.0.1:0",
                "--key",
                s(&d.join("w.key")),
                "--log-key",
                s(&bad),
                "--state",
                s(&d.join("st")),
            ],
        );
    }
    // A server given a witness key file that is not one, or a quorum it cannot meet.
    let data = d.join("srv");
    for extra in [
        vec![
            "--witness".to_string(),
            format!("http://127.0.0.1:1={}", d.join("junk.pub").display()),
        ],
        vec![
            "--witness".to_string(),
            format!("http://127.0.0.1:1={}", d.join("w.pub").display()),
            "--witness-quorum".into(),
            "2".into(),
        ],
        vec!["--witness".to_string(), "no-url".into()],
        vec!["--log-origin".to_string(), "two words".into()],
    ] {
        let mut args = vec![
            "serve".to_string(),
            "--data".into(),
            data.display().to_string(),
            "--listen".into(),
            "127.0.0.1:0".into(),
        ];
        args.extend(extra);
        let out = hg_run(&args);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

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

/// A log made in the test (its key, a tree of `n` entries tagged `tag`): checkpoints and
/// consistency proofs to send to a witness.
struct TestLog {
    key: hourglass_log::keys::SigningKey,
    memo: hourglass_log::tree::HashMemo,
    size: u64,
}

impl TestLog {
    fn new(origin: &str) -> Self {
        use hourglass_arith::entropy::SeededEntropy;
        use hourglass_log::keys::{KeyRole, SigningKey};
        Self {
            key: SigningKey::generate(origin, KeyRole::Log, &mut SeededEntropy::new(b"test log"))
                .unwrap(),
            memo: hourglass_log::tree::HashMemo::new(),
            size: 0,
        }
    }

    fn grow(&mut self, n: u64, tag: &str) {
        use hourglass_log::tree::{append, leaf_hash};
        let leaves: Vec<_> = (self.size..self.size + n)
            .map(|i| leaf_hash(format!("{tag} {i}").as_bytes()))
            .collect();
        append(&mut self.memo, self.size, &leaves).unwrap();
        self.size += n;
    }

    fn checkpoint(&self) -> hourglass_log::checkpoint::SignedCheckpoint {
        let root = hourglass_log::tree::root(&self.memo, self.size).unwrap();
        hourglass_log::checkpoint::SignedCheckpoint::sign(
            self.key.name(),
            self.size,
            root,
            &self.key,
        )
        .unwrap()
    }

    /// An `add-checkpoint` body from `old`, with the proof `proof` changes.
    fn request(
        &self,
        old: u64,
        proof: impl FnOnce(&mut Vec<hourglass_log::tree::Hash>),
    ) -> Vec<u8> {
        let mut p = hourglass_log::tree::prove_consistency(&self.memo, old, self.size).unwrap();
        proof(&mut p);
        hourglass_log::witness::AddCheckpoint::encode(old, &p, &self.checkpoint())
    }
}

#[test]
fn a_witness_answers_as_the_current_tlog_witness_text_says() {
    use hourglass_log::checkpoint::{LogPins, SignedCheckpoint};
    use hourglass_log::keys::VerifierKey;
    use hourglass_log::tree::{leaf_hash, EMPTY_HASH};
    use hourglass_log::witness::{origin_hash, AddCheckpoint};
    let dir = tempdir();
    let d = dir.path();
    let mut log = TestLog::new("witnessed.example/log");
    let log_pub = file(
        d,
        "log.pub",
        format!("{}\n", log.key.verifier().encode()).as_bytes(),
    );
    let w = WitnessProcess::start(d, "w1", &[&log_pub]);
    let post = |body: Vec<u8>| {
        let r = client()
            .post(format!("{}/add-checkpoint", w.url))
            .body(body)
            .send()
            .unwrap();
        (r.status().as_u16(), r.text().unwrap())
    };
    let latest = |hash: &str| {
        let r = client()
            .get(format!("{}/{hash}/checkpoint", w.url))
            .send()
            .unwrap();
        (r.status().as_u16(), r.bytes().unwrap().to_vec())
    };
    let ours = origin_hash("witnessed.example/log");
    assert_eq!(ours.len(), 64);
    // Nothing cosigned yet, and a log it does not witness: 404.
    assert_eq!(latest(&ours).0, 404);
    assert_eq!(latest(&origin_hash("other.example/log")).0, 404);
    assert_eq!(latest(&ours.to_uppercase()).0, 404);

    // A size-0 checkpoint whose root is not the empty tree's: 422.
    let bad_empty =
        SignedCheckpoint::sign(log.key.name(), 0, leaf_hash(b"not empty"), &log.key).unwrap();
    let (status, text) = post(AddCheckpoint::encode(0, &[], &bad_empty));
    assert_eq!(status, 422, "{text}");
    assert!(text.contains("empty tree"), "{text}");
    assert_eq!(
        latest(&ours).0,
        404,
        "a refused checkpoint is not remembered"
    );
    // The empty tree itself is cosigned.
    let (status, text) = post(log.request(0, |_| {}));
    assert_eq!(status, 200, "{text}");
    let w_key = VerifierKey::parse(std::fs::read_to_string(&w.public).unwrap().trim()).unwrap();
    let pins = LogPins::new(log.key.verifier(), vec![w_key], 1).unwrap();
    let (status, body) = latest(&ours);
    assert_eq!(status, 200);
    let v = SignedCheckpoint::parse(&body)
        .unwrap()
        .verify(&pins)
        .unwrap();
    assert_eq!((v.size, v.root), (0, EMPTY_HASH));

    // Grown to 7: a non-empty proof from size 0 is 422, the empty one is cosigned.
    log.grow(7, "e");
    let (status, text) = post(log.request(0, |p| p.push(leaf_hash(b"e 0"))));
    assert_eq!(status, 422, "{text}");
    assert!(text.contains("from size 0"), "{text}");
    let (status, text) = post(log.request(0, |_| {}));
    assert_eq!(status, 200, "{text}");
    // Grown to 20 with a wrong proof: 422; a stale old size: 409 with the size, as text/x.tlog.size.
    log.grow(13, "e");
    let (status, _) = post(log.request(7, |p| p[0] = leaf_hash(b"forged")));
    assert_eq!(status, 422);
    let r = client()
        .post(format!("{}/add-checkpoint", w.url))
        .body(log.request(3, |_| {}))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 409);
    assert_eq!(r.headers()["content-type"], "text/x.tlog.size");
    assert_eq!(r.text().unwrap(), "7\n");
    let (status, text) = post(log.request(7, |_| {}));
    assert_eq!(status, 200, "{text}");
    let cosigned_20 = latest(&ours).1;
    let v = SignedCheckpoint::parse(&cosigned_20)
        .unwrap()
        .verify(&pins)
        .unwrap();
    assert_eq!(v.size, 20);
    assert_eq!(v.cosignatures.len(), 1);

    // A fork at the same size (another entry 19): 422, and the witness keeps what it had.
    let mut fork = TestLog::new("witnessed.example/log");
    fork.grow(19, "e");
    fork.grow(1, "forged");
    let (status, text) = post(fork.request(20, |_| {}));
    assert_eq!(status, 422, "{text}");
    assert!(text.contains("forked"), "{text}");
    assert_eq!(latest(&ours), (200, cosigned_20));
    // Old size beyond the checkpoint: 400.
    let (status, _) = post(AddCheckpoint::encode(21, &[], &log.checkpoint()));
    assert_eq!(status, 400);
}

/// Rewrites entry 0 in a stopped server's SQLite database in place, as an operator with access
/// to it could, leaving the tree's hashes as they were (so the log's next checkpoints still
/// extend the one an auditor saw).
fn rewrite_entry_zero_in_place(data: &Path) {
    let script = "import sqlite3, sys\n\
        c = sqlite3.connect(sys.argv[1])\n\
        e = bytes(c.execute('SELECT entry FROM log_entries WHERE idx = 0').fetchone()[0])\n\
        f = e.replace(b'submission: ', b'submission: x', 1)\n\
        assert f != e\n\
        c.execute('UPDATE log_entries SET entry = ? WHERE idx = 0', (f,))\n\
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

/// `GET path` with `Accept-Encoding: gzip`: (Content-Encoding, body as sent).
fn get_gzip(server: &Server, path: &str) -> (Option<String>, Vec<u8>) {
    let r = client()
        .get(server.url(path))
        .header("Accept-Encoding", "gzip")
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 200, "{path}");
    let encoding = r
        .headers()
        .get("content-encoding")
        .map(|v| v.to_str().unwrap().to_string());
    (encoding, r.bytes().unwrap().to_vec())
}

#[test]
fn an_entry_rewritten_in_place_is_named_by_the_auditor_from_the_bundle_it_reads_again() {
    use std::io::Read;
    require_python(&["cryptography"]);
    let dir = tempdir();
    let d = dir.path();
    let data = d.join("srv");
    let args = ["--log-interval", "200ms"];
    let mut server = Server::start(&data, &args);
    let log_pub = service::log_key(&server, d);
    let set = short_set(&server, "conf", &["1s"], d);
    let first = submit(&server, &set, d, "one.txt", "one\n");
    let second = submit(&server, &set, d, "two.txt", "two\n");
    verdict(&server, &first);
    verdict(&server, &second);
    let state = d.join("audit.state");
    let (code, out) = log_verify(&server, &log_pub, &state, &[]);
    assert_eq!(code, 0, "{out}");
    let seen: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(seen["checkpoint"]["size"], 2);

    // Entry bundles are gzip-encoded for a client that accepts it, and only then; hash tiles
    // never are.
    let plain = client()
        .get(server.url("/log/tile/entries/000.p/2"))
        .send()
        .unwrap();
    assert!(plain.headers().get("content-encoding").is_none());
    assert_eq!(plain.headers()["vary"], "accept-encoding");
    let plain = plain.bytes().unwrap().to_vec();
    let (encoding, packed) = get_gzip(&server, "/log/tile/entries/000.p/2");
    assert_eq!(encoding.as_deref(), Some("gzip"));
    let mut unpacked = Vec::new();
    flate2::read::GzDecoder::new(&packed[..])
        .read_to_end(&mut unpacked)
        .unwrap();
    assert_eq!(unpacked, plain);
    assert_eq!(get_gzip(&server, "/log/tile/0/000.p/2").0, None);

    // The operator rewrites entry 0 in place and the log grows by one entry: the partial
    // bundle holding entry 0 is read again, and the auditor names the rewritten entry.
    server.stop();
    rewrite_entry_zero_in_place(&data);
    let server = Server::start(&data, &args);
    let third = submit(&server, &set, d, "three.txt", "three\n");
    verdict(&server, &third);
    let saved = std::fs::read(&state).unwrap();
    let (code, err) = log_verify(&server, &log_pub, &state, &[]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("entry 0 of the log was rewritten"), "{err}");
    assert_eq!(
        std::fs::read(&state).unwrap(),
        saved,
        "the state moved on a failure"
    );
    // An auditor without a saved state reads every entry and finds they do not make the root;
    // so does the independent recomputation.
    let (code, err) = log_verify(&server, &log_pub, &d.join("fresh.state"), &[]);
    assert_eq!(code, 1, "{err}");
    assert!(!d.join("fresh.state").exists());
    let oracle = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/tlog_oracle.py"))
        .arg(server.url("/log"))
        .arg(&log_pub)
        .output()
        .unwrap();
    assert!(!oracle.status.success());
    assert!(
        String::from_utf8_lossy(&oracle.stderr).contains("root"),
        "{}",
        String::from_utf8_lossy(&oracle.stderr)
    );
}

/// Runs `tests/python/tlog_proofs.py` on `cases`; its answers.
fn python_proofs(cases: &[Value]) -> Vec<Value> {
    use std::io::Write;
    let mut child = Command::new("python3")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/tlog_proofs.py"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let input = serde_json::to_vec(cases).unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(&input).unwrap());
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answers: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(answers.len(), cases.len());
    answers
}

#[test]
fn proofs_and_checkpoints_agree_with_an_independent_python_verifier() {
    use hourglass_arith::entropy::SeededEntropy;
    use hourglass_log::checkpoint::{hash_to_base64, SignedCheckpoint};
    use hourglass_log::keys::{KeyRole, SigningKey};
    use hourglass_log::tree::{
        leaf_hash, prove_consistency, prove_inclusion, root, verify_consistency, Hash, EMPTY_HASH,
    };
    use hourglass_log::witness::{AddCheckpoint, Witness};
    use serde_json::json;
    require_python(&["cryptography"]);
    let b64 = |hs: &[Hash]| hs.iter().map(hash_to_base64).collect::<Vec<_>>();
    let flip = |h: &Hash| {
        let mut f = *h;
        f.0[7] ^= 1;
        f
    };
    let mut log = TestLog::new("interop.example/log");
    log.grow(70, "e");
    let entry = |i: u64| format!("e {i}").into_bytes();
    let roots: Vec<Hash> = (0..=70).map(|n| root(&log.memo, n).unwrap()).collect();
    assert_eq!(roots[0], EMPTY_HASH);
    // (case, whether our verifier accepts it).
    let mut cases: Vec<(Value, bool)> = Vec::new();
    for n in [0u64, 1, 2, 3, 7, 8, 9, 70] {
        let entries: Vec<String> = (0..n).map(|i| hex::encode(entry(i))).collect();
        let r = roots[n as usize];
        cases.push((
            json!({"kind": "root", "entries": entries, "root": hash_to_base64(&r)}),
            true,
        ));
        cases.push((
            json!({"kind": "root", "entries": entries, "root": hash_to_base64(&flip(&r))}),
            false,
        ));
    }
    // Every inclusion proof in trees of 1 to 70 entries, and each with its first hash, its
    // index or its root damaged.
    for n in 1..=70u64 {
        for i in 0..n {
            let proof = prove_inclusion(&log.memo, n, i).unwrap();
            let r = roots[n as usize];
            let mut variants = vec![(proof.clone(), r)];
            if let Some(first) = proof.path.first() {
                let mut p = proof.clone();
                p.path[0] = flip(first);
                variants.push((p, r));
            }
            if i + 1 < n {
                let mut p = proof.clone();
                p.index += 1;
                variants.push((p, r));
            }
            variants.push((proof.clone(), flip(&r)));
            for (p, r) in variants {
                let ours = p.verify(&entry(i), &r).is_ok();
                cases.push((
                    json!({"kind": "inclusion", "index": p.index, "size": p.size,
                           "entry": hex::encode(entry(i)), "proof": b64(&p.path),
                           "root": hash_to_base64(&r)}),
                    ours,
                ));
            }
        }
    }
    // Every consistency proof between trees of 0 to 40 entries, the empty tree included, and
    // each damaged: a hash flipped, a hash added (so a proof from size 0 that is not empty),
    // the new root changed.
    for n in 0..=40u64 {
        for m in 0..=n {
            let proof = prove_consistency(&log.memo, m, n).unwrap();
            let (old, new) = (roots[m as usize], roots[n as usize]);
            let mut variants = vec![(proof.clone(), new)];
            if let Some(first) = proof.first() {
                let mut p = proof.clone();
                p[0] = flip(first);
                variants.push((p, new));
            }
            let mut longer = proof.clone();
            longer.push(leaf_hash(b"extra"));
            variants.push((longer, new));
            variants.push((proof.clone(), flip(&new)));
            for (p, new) in variants {
                let ours = verify_consistency(m, &old, n, &new, &p).is_ok();
                cases.push((
                    json!({"kind": "consistency", "old_size": m, "old_root": hash_to_base64(&old),
                           "size": n, "root": hash_to_base64(&new), "proof": b64(&p)}),
                    ours,
                ));
            }
        }
    }
    // Checkpoints: the empty tree's and a grown one, cosigned by a witness that decided as
    // tlog-witness says; a size-0 checkpoint with another root is refused by both sides.
    let w_key =
        SigningKey::generate("w.example", KeyRole::Witness, &mut SeededEntropy::new(b"w")).unwrap();
    let other_w =
        SigningKey::generate("w.example", KeyRole::Witness, &mut SeededEntropy::new(b"v")).unwrap();
    let w_vkey = w_key.verifier().encode();
    let witness = Witness::new(w_key, vec![log.key.verifier()]).unwrap();
    let log_vkey = log.key.verifier().encode();
    let empty = TestLog::new("interop.example/log");
    let req = AddCheckpoint::parse(&empty.request(0, |_| {})).unwrap();
    let (known, line) = witness.add_checkpoint(&req, None, 1_700_000_000).unwrap();
    let empty_note = empty
        .checkpoint()
        .with_signature_lines(&line)
        .unwrap()
        .to_bytes();
    let req = AddCheckpoint::parse(&log.request(0, |_| {})).unwrap();
    let (_, line) = witness
        .add_checkpoint(&req, Some(&known), 1_700_000_001)
        .unwrap();
    let grown_note = log
        .checkpoint()
        .with_signature_lines(&line)
        .unwrap()
        .to_bytes();
    let bad_empty = SignedCheckpoint::sign(log.key.name(), 0, leaf_hash(b"x"), &log.key).unwrap();
    let req = AddCheckpoint::parse(&AddCheckpoint::encode(0, &[], &bad_empty)).unwrap();
    assert_eq!(
        witness.add_checkpoint(&req, None, 1).unwrap_err().status(),
        422
    );
    let note = |b: &[u8]| String::from_utf8(b.to_vec()).unwrap();
    let checkpoints = vec![
        json!({"kind": "checkpoint", "note": note(&empty_note), "log_key": log_vkey,
               "witness_keys": [w_vkey]}),
        json!({"kind": "checkpoint", "note": note(&grown_note), "log_key": log_vkey,
               "witness_keys": [w_vkey]}),
        json!({"kind": "checkpoint", "note": note(&grown_note), "log_key": log_vkey,
               "witness_keys": [other_w.verifier().encode()]}),
        json!({"kind": "checkpoint", "note": note(&bad_empty.to_bytes()), "log_key": log_vkey,
               "witness_keys": []}),
    ];

    let (proof_cases, ours): (Vec<Value>, Vec<bool>) = cases.into_iter().unzip();
    let mut all = proof_cases.clone();
    all.extend(checkpoints);
    let answers = python_proofs(&all);
    let mut accepted = 0;
    for ((case, ours), theirs) in proof_cases.iter().zip(&ours).zip(&answers) {
        assert_eq!(theirs, &Value::Bool(*ours), "disagreement on {case}");
        accepted += usize::from(*ours);
    }
    // Both sides accepted the honest proofs and refused the damaged ones: about a third of
    // the cases are honest.
    assert!(
        accepted > 2_000 && accepted < proof_cases.len() / 2,
        "{accepted}"
    );
    let cp = &answers[proof_cases.len()..];
    assert_eq!(
        cp[0],
        json!({"size": 0, "root": hash_to_base64(&EMPTY_HASH), "cosigned_by": ["w.example"]})
    );
    assert_eq!(
        cp[1],
        json!({"size": 70, "root": hash_to_base64(&roots[70]), "cosigned_by": ["w.example"]})
    );
    assert_eq!(cp[2]["cosigned_by"], json!([]));
    assert_eq!(cp[3], json!(false));
}

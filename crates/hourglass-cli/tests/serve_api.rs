//! `hourglass serve` over HTTP on loopback, the same contract on SQLite and on a throwaway
//! PostgreSQL cluster: sets made by the admin only, uploads queued durably and deduplicated,
//! verdicts with signed receipts that the CLI checks offline, and every bad request answered
//! with its status and a JSON error that changes nothing.

mod common;
mod service;

use std::path::Path;

use common::{file, hg, hg_fail, s, tempdir};
use serde_json::{json, Value};
use service::{
    client, create_set, download_set, log_key, metric, seal, short_set, submission, upload,
    verdict, Postgres, Server,
};

/// Everything the API promises, against one server.
fn contract(server: &Server, work: &Path) {
    // Admin only, with the right token.
    let body = json!({ "name": "conf", "durations": ["2s", "1s"], "rate": 100000.0 });
    let r = client()
        .post(server.url("/api/v1/sets"))
        .json(&body)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    assert!(r.json::<Value>().unwrap()["error"]
        .as_str()
        .unwrap()
        .contains("admin token"));
    let r = client()
        .post(server.url("/api/v1/sets"))
        .bearer_auth("not-the-token-at-all")
        .json(&body)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 401);
    // Malformed set requests name the field.
    for (bad, field) in [
        (
            json!({ "name": "no spaces allowed", "durations": ["1s"], "rate": 1e5 }),
            "name",
        ),
        (
            json!({ "name": "x", "durations": ["soon"], "rate": 1e5 }),
            "durations",
        ),
        (
            json!({ "name": "x", "durations": ["1ns"], "rate": 1e5 }),
            "durations",
        ),
        (
            json!({ "name": "x", "durations": [], "rate": 1e5 }),
            "durations",
        ),
        (
            json!({ "name": "x", "durations": ["1s"], "rate": -1.0 }),
            "rate",
        ),
        (
            json!({ "name": "x", "durations": ["1s"], "rate": 1e5, "hash": "md5" }),
            "hash",
        ),
        (
            json!({ "name": "x", "durations": ["1s"], "rate": 1e5, "deadline": "tomorrow" }),
            "deadline",
        ),
        (
            json!({ "name": "x", "durations": ["1s"], "rate": 1e5, "colour": "red" }),
            "colour",
        ),
    ] {
        let (status, body) = create_set(server, &bad);
        assert_eq!(status, 400, "{bad}: {body}");
        assert!(
            body["error"].as_str().unwrap().contains(field),
            "{bad}: {body}"
        );
    }
    assert_eq!(
        client()
            .get(server.url("/api/v1/sets"))
            .send()
            .unwrap()
            .json::<Value>()
            .unwrap(),
        json!([])
    );

    // A set, served byte for byte as the CLI reads it.
    let set = short_set(server, "conf", &["2s", "1s"], work);
    let (status, _) = create_set(server, &body);
    assert_eq!(status, 409, "a second set of the same name");
    let list: Value = client()
        .get(server.url("/api/v1/sets"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(list[0]["name"], "conf");
    assert_eq!(list[0]["credited_secs"], json!([2.0, 1.0]));
    let served = client()
        .get(server.url("/api/v1/sets/conf"))
        .send()
        .unwrap()
        .bytes()
        .unwrap();
    assert_eq!(served.as_ref(), std::fs::read(&set).unwrap());
    assert_eq!(
        client()
            .get(server.url("/api/v1/sets/nope"))
            .send()
            .unwrap()
            .status()
            .as_u16(),
        404
    );

    // An author seals offline and uploads: 202, the same upload again is the same submission.
    let doc = file(work, "paper.txt", b"a paper finished offline\n");
    let bundle = seal(&set, &doc, "3s");
    let bundle_bytes = std::fs::read(&bundle).unwrap();
    let doc_bytes = std::fs::read(&doc).unwrap();
    let (status, first) = upload(server, &bundle_bytes, &doc_bytes);
    assert_eq!(status, 202, "{first}");
    let id = first["id"].as_str().unwrap().to_string();
    let (status, again) = upload(server, &bundle_bytes, &doc_bytes);
    assert_eq!(status, 202);
    assert_eq!(again["id"], first["id"]);
    let v = verdict(server, &id);
    assert_eq!(v["status"], "valid", "{v}");
    assert_eq!(v["set"], "conf");
    assert_eq!(v["credited_secs"], 3.0);
    assert_eq!(v["before_deadline"], true);
    assert_eq!(v["links"].as_array().unwrap().len(), 2);
    let received = humantime::parse_rfc3339(v["received"].as_str().unwrap()).unwrap();
    let predated = humantime::parse_rfc3339(v["predated_to"].as_str().unwrap()).unwrap();
    assert_eq!(received.duration_since(predated).unwrap().as_secs(), 3);

    // The receipt checks offline with the institution's key, for this document only.
    let receipt = client()
        .get(server.url(&format!("/api/v1/submissions/{id}/receipt")))
        .send()
        .unwrap();
    assert_eq!(receipt.status().as_u16(), 200);
    let receipt_path = file(work, "receipt.json", &receipt.bytes().unwrap());
    let institution = file(
        work,
        "institution.pub",
        &client()
            .get(server.url("/institution.pub"))
            .send()
            .unwrap()
            .bytes()
            .unwrap(),
    );
    let log_pub = log_key(server, work);
    let log_pub = log_pub.to_str().unwrap();
    let out = hg(&[
        "submit",
        "check-receipt",
        receipt_path.to_str().unwrap(),
        "--institution",
        institution.to_str().unwrap(),
        "--document",
        doc.to_str().unwrap(),
        "--log-key",
        log_pub,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("authentic") && text.contains("valid") && text.contains("log: entry"),
        "{text}"
    );
    // Version 3: the receipt carries the service's RFC 3161 token over the bundle, whose
    // latest time (genTime plus its accuracy) is the submission's received time (OpenSSL checks
    // that token on its own), and its place in the service's transparency log.
    assert!(std::fs::read_to_string(&receipt_path)
        .unwrap()
        .contains("hourglass-receipt v3"));
    let token = work.join("paper.tsr");
    let out = hg(&[
        "submit",
        "check-receipt",
        receipt_path.to_str().unwrap(),
        "--institution",
        institution.to_str().unwrap(),
        "--extract-token",
        "-o",
        token.to_str().unwrap(),
        "--log-key",
        log_pub,
        "--json",
    ]);
    let checked: Value = serde_json::from_slice(&out.stdout).unwrap();
    // Received is the latest time the token proves: genTime plus the service's 1 s accuracy.
    assert_eq!(
        humantime::parse_rfc3339(checked["timestamp"]["latest"].as_str().unwrap()).unwrap(),
        received,
        "{checked}"
    );
    assert_eq!(
        humantime::parse_rfc3339(checked["timestamp"]["gen_time"].as_str().unwrap()).unwrap()
            + std::time::Duration::from_secs(1),
        received,
        "{checked}"
    );
    let api_token = client()
        .get(server.url(&format!("/api/v1/submissions/{id}/timestamp")))
        .send()
        .unwrap();
    assert_eq!(
        api_token.headers()["content-type"],
        "application/timestamp-reply"
    );
    assert_eq!(
        api_token.bytes().unwrap().as_ref(),
        std::fs::read(&token).unwrap()
    );
    for (route, name) in [("/tsa.pem", "tsa.pem"), ("/tsa-ca.pem", "tsa-ca.pem")] {
        file(
            work,
            name,
            &client()
                .get(server.url(route))
                .send()
                .unwrap()
                .bytes()
                .unwrap(),
        );
    }
    let verified = std::process::Command::new("openssl")
        .args(["ts", "-verify", "-data"])
        .arg(&bundle)
        .arg("-in")
        .arg(&token)
        .arg("-CAfile")
        .arg(work.join("tsa-ca.pem"))
        .arg("-untrusted")
        .arg(work.join("tsa.pem"))
        .output()
        .unwrap();
    assert!(
        String::from_utf8_lossy(&verified.stdout).contains("Verification: OK"),
        "{}",
        String::from_utf8_lossy(&verified.stderr)
    );
    let other = file(work, "other.txt", b"another document\n");
    hg_fail(
        1,
        &[
            "submit",
            "check-receipt",
            receipt_path.to_str().unwrap(),
            "--institution",
            institution.to_str().unwrap(),
            "--document",
            other.to_str().unwrap(),
            "--log-key",
            log_pub,
        ],
    );
    let forged = std::fs::read_to_string(&receipt_path)
        .unwrap()
        .replace("credited-ms: 3000", "credited-ms: 9000");
    let forged = file(work, "forged.json", forged.as_bytes());
    hg_fail(
        1,
        &[
            "submit",
            "check-receipt",
            forged.to_str().unwrap(),
            "--institution",
            institution.to_str().unwrap(),
            "--log-key",
            log_pub,
        ],
    );

    // The bundle with another document: queued, then invalid with a reason and a signed receipt.
    let (status, wrong) = upload(server, &bundle_bytes, b"not the sealed document");
    assert_eq!(status, 202);
    let w = verdict(server, wrong["id"].as_str().unwrap());
    assert_eq!(w["status"], "invalid");
    assert!(w["reason"].as_str().unwrap().contains("document"), "{w}");
    assert_eq!(w["credited_secs"], 0.0);
    assert!(w["receipt"].is_object());
    // Its receipt is authentic, and states an invalid verdict: check-receipt says both and exits
    // 1 (the receipt verified; the submission did not).
    let invalid_receipt = file(
        work,
        "invalid-receipt.json",
        serde_json::to_string(&w["receipt"]).unwrap().as_bytes(),
    );
    let err = hg_fail(
        1,
        &[
            "submit",
            "check-receipt",
            invalid_receipt.to_str().unwrap(),
            "--institution",
            institution.to_str().unwrap(),
            "--log-key",
            log_pub,
        ],
    );
    assert!(
        err.contains("authentic") && err.contains("invalid"),
        "{err}"
    );

    // Bad requests: each its status and a JSON error, and nothing stored.
    let stored = |s: &str| metric(server, &format!("hourglass_submissions{{status=\"{s}\"}}"));
    let before = (stored("valid"), stored("invalid"), stored("queued"));
    assert_eq!(before, (1.0, 1.0, 0.0));
    let post_raw = |content_type: &str, body: Vec<u8>| {
        let r = client()
            .post(server.url("/api/v1/submissions"))
            .header("content-type", content_type)
            .body(body)
            .send()
            .unwrap();
        let status = r.status().as_u16();
        (status, r.json::<Value>().unwrap_or(Value::Null))
    };
    let (status, body) = post_raw("application/json", b"{\"garbage\": true}".to_vec());
    assert_eq!(status, 400, "{body}");
    assert!(body["error"].is_string());
    let (status, body) = post_raw(
        "multipart/form-data; boundary=XyZ",
        b"--XyZ\r\nContent-Disposition: form-data; name=\"bundle\"\r\n\r\n{\"type\"".to_vec(),
    );
    assert_eq!(status, 400, "truncated multipart: {body}");
    let (status, body) = upload(
        server,
        b"{\"type\": \"hourglass-submission-bundle\"}",
        &doc_bytes,
    );
    assert_eq!(status, 400, "{body}");
    assert!(body["error"].as_str().unwrap().contains("bundle"), "{body}");
    let only_doc = reqwest::blocking::multipart::Form::new().part(
        "document",
        reqwest::blocking::multipart::Part::bytes(doc_bytes.clone()),
    );
    let r = client()
        .post(server.url("/api/v1/submissions"))
        .multipart(only_doc)
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    assert!(r.json::<Value>().unwrap()["error"]
        .as_str()
        .unwrap()
        .contains("field bundle"));
    // A document ten times the limit (the servers here allow 64 KiB).
    let (status, body) = upload(server, &bundle_bytes, &vec![b'x'; 640 * 1024]);
    assert_eq!(status, 413, "{body}");
    assert!(
        body["error"].as_str().unwrap().contains("document"),
        "{body}"
    );
    let (status, body) = upload(server, &vec![b' '; (1 << 20) + 1], &doc_bytes);
    assert_eq!(status, 413, "{body}");
    // A bundle for a set this server does not have.
    let foreign_server_set = {
        let d = tempdir();
        let mut other = Server::start(&d.path().join("srv"), &["--workers", "1"]);
        let s = short_set(&other, "elsewhere", &["1s"], work);
        other.stop();
        s
    };
    let foreign_doc = file(work, "foreign.txt", b"for another institution\n");
    let foreign = seal(&foreign_server_set, &foreign_doc, "1s");
    let (status, body) = upload(
        server,
        &std::fs::read(&foreign).unwrap(),
        b"for another institution\n",
    );
    assert_eq!(status, 404, "{body}");
    assert!(body["error"].as_str().unwrap().contains("no set"), "{body}");
    assert_eq!(
        (stored("valid"), stored("invalid"), stored("queued")),
        before,
        "a refused request stored something"
    );
    let (status, body) = submission(server, "0123456789abcdef0123456789abcdef");
    assert_eq!((status, body["error"].is_string()), (404, true));
    let (status, _) = submission(server, "../../etc/passwd");
    assert_eq!(status, 404);

    // Every answer forbids scripts, framing and sniffing (the pages need none of it).
    let r = client().get(server.url("/")).send().unwrap();
    let csp = r.headers()["content-security-policy"]
        .to_str()
        .unwrap()
        .to_string();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("frame-ancestors 'none'"),
        "{csp}"
    );
    assert_eq!(r.headers()["x-content-type-options"], "nosniff");
    assert!(r.text().unwrap().contains("conf"));

    // Health and metrics.
    assert_eq!(
        client()
            .get(server.url("/healthz"))
            .send()
            .unwrap()
            .text()
            .unwrap(),
        "ok\n"
    );
    assert!(metric(server, "hourglass_http_requests_total{method=\"POST\",route=\"/api/v1/submissions\",status=\"202\"}") >= 3.0);
    assert!(metric(server, "hourglass_verification_duration_seconds_count") >= 2.0);
}

#[test]
fn the_api_on_sqlite() {
    let dir = tempdir();
    let server = Server::start(
        &dir.path().join("srv"),
        &["--max-document-bytes", "65536", "--rate-limit", "0"],
    );
    contract(&server, dir.path());
    // Secrets are the owner's only.
    use std::os::unix::fs::PermissionsExt;
    for f in ["admin.token", "vault.key", "receipt.key", "tsa.key"] {
        let mode = std::fs::metadata(dir.path().join("srv").join(f))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o600, "{f}");
    }
}

/// The data directory is its owner's only whatever the umask: the directory 0700, every file
/// in it 0600, the SQLite database and the -wal and -shm files SQLite makes included (under
/// umask 022 hourglass 0.1 left them 0644 in a 0755 directory: every document readable by
/// every local user); `receipt.pub` alone is public. A directory made loose before is
/// tightened at the next start.
#[test]
fn the_data_directory_is_its_owners_only_whatever_the_umask() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir();
    let data = dir.path().join("srv");
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
    let check = |when: &str| {
        assert_eq!(mode(&data), 0o700, "{when}: the data directory");
        let mut seen = Vec::new();
        for entry in std::fs::read_dir(&data).unwrap() {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let public = ["receipt.pub", "tsa.pem", "tsa-ca.pem", "log.pub"];
            let want = if public.contains(&name.as_str()) {
                0o644
            } else {
                0o600
            };
            assert_eq!(mode(&entry.path()), want, "{when}: {name}");
            seen.push(name);
        }
        for name in [
            "hourglass.db",
            "hourglass.db-wal",
            "hourglass.db-shm",
            "receipt.key",
            "tsa.key",
            "tsa.pem",
            "tsa-ca.pem",
            "log.key",
            "log.pub",
        ] {
            assert!(
                seen.iter().any(|s| s == name),
                "{when}: no {name} in {seen:?}"
            );
        }
    };
    let mut server = Server::start_with_umask(&data, &["--rate-limit", "0"], "022");
    // Something written to the database (the WAL), and read back.
    short_set(&server, "conf", &["1s"], dir.path());
    check("first start");
    assert!(server.stop().success());

    // A directory left open to all (by an older hourglass): tightened when the server starts.
    let loosen = |path: &Path, m: u32| {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(m)).unwrap()
    };
    loosen(&data, 0o755);
    for name in ["hourglass.db", "admin.token", "vault.key", "receipt.key"] {
        loosen(&data.join(name), 0o644);
    }
    let server = Server::start_with_umask(&data, &["--rate-limit", "0"], "022");
    assert_eq!(
        client()
            .get(server.url("/api/v1/sets/conf"))
            .send()
            .unwrap()
            .status()
            .as_u16(),
        200
    );
    check("restart");
}

#[test]
fn the_api_on_postgresql() {
    let dir = tempdir();
    let pg = Postgres::start();
    let server = Server::start(
        &dir.path().join("srv"),
        &[
            "--database",
            &pg.url(),
            "--max-document-bytes",
            "65536",
            "--rate-limit",
            "0",
        ],
    );
    contract(&server, dir.path());
    // The sets' private keys are in the database only sealed: no key material in the clear.
    let sealed = pg.sql("SELECT encode(sealed_keys, 'escape') FROM sets");
    assert!(sealed.len() > 100);
    assert!(!sealed.contains("hourglass-puzzle-key") && !sealed.contains("\"d\""));
}

#[test]
fn a_second_server_on_the_same_sqlite_directory_is_refused() {
    let dir = tempdir();
    let _first = Server::start(&dir.path().join("srv"), &[]);
    let out = common::hg_run(&[
        "serve",
        "--data",
        dir.path().join("srv").to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("another `hourglass serve`"));
}

#[test]
fn a_client_over_its_rate_gets_429_with_retry_after() {
    let dir = tempdir();
    let server = Server::start(
        &dir.path().join("srv"),
        &["--rate-limit", "1", "--burst", "3"],
    );
    let statuses: Vec<(u16, bool)> = (0..8)
        .map(|_| {
            let r = client().get(server.url("/api/v1/sets")).send().unwrap();
            (r.status().as_u16(), r.headers().contains_key("retry-after"))
        })
        .collect();
    assert!(statuses[..3].iter().all(|s| s.0 == 200), "{statuses:?}");
    assert!(statuses.contains(&(429, true)), "{statuses:?}");
    // The metrics query the database on every scrape: limited like the rest.
    assert_eq!(
        client()
            .get(server.url("/metrics"))
            .send()
            .unwrap()
            .status()
            .as_u16(),
        429
    );
    // Health checks are never limited.
    assert_eq!(
        client()
            .get(server.url("/healthz"))
            .send()
            .unwrap()
            .status()
            .as_u16(),
        200
    );
}

/// Methods a client invents are counted as `other`, not each as a label of its own (each label
/// set is memory the server keeps for its life: the old server's `/metrics` grew by a series
/// per invented method, 150 lines for these requests), and paths that match no route add
/// nothing either: after 200 requests with random method names, on routes and off them,
/// `/metrics` has at most a few more lines than before.
#[test]
fn invented_methods_and_paths_do_not_grow_the_metrics() {
    let dir = tempdir();
    let server = Server::start(&dir.path().join("srv"), &["--rate-limit", "0"]);
    let lines = || {
        client()
            .get(server.url("/metrics"))
            .send()
            .unwrap()
            .text()
            .unwrap()
            .lines()
            .count()
    };
    // Twice: the first scrape adds its own series.
    lines();
    let before = lines();
    // Names of 8 to 15 capital letters (none is a standard method), from a fixed seed.
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    let paths = [
        "/healthz",
        "/api/v1/sets",
        "/api/v1/submissions/12345",
        "/no/such/page",
    ];
    for i in 0..200 {
        let len = 8 + (next() % 8) as usize;
        let name: String = (0..len)
            .map(|_| (b'A' + (next() % 26) as u8) as char)
            .collect();
        let method = reqwest::Method::from_bytes(name.as_bytes()).unwrap();
        let path = format!(
            "{}{}",
            paths[i % paths.len()],
            if i % 8 == 7 { "/x" } else { "" }
        );
        let r = client().request(method, server.url(&path)).send().unwrap();
        assert!(
            r.status().is_client_error(),
            "{name} {path}: {}",
            r.status()
        );
    }
    let after = lines();
    // At most one series per (route, status) that the invented methods reached.
    assert!(
        after <= before + 6,
        "/metrics grew from {before} to {after} lines"
    );
    assert!(
        metric(
            &server,
            "hourglass_http_requests_total{method=\"other\",route=\"/healthz\",status=\"405\"}"
        ) >= 25.0
    );
}

/// Behind a load balancer every connection comes from the balancer: with `--trusted-proxy` the
/// limit applies to the address the proxy appended to X-Forwarded-For, so one client over its
/// rate does not lock the others out; without it, a client cannot escape its limit by writing
/// the header itself.
#[test]
fn behind_a_trusted_proxy_each_client_has_its_own_limit_and_the_header_is_not_believed_otherwise() {
    let dir = tempdir();
    let get = |server: &Server, forwarded: &str| {
        client()
            .get(server.url("/api/v1/sets"))
            .header("X-Forwarded-For", forwarded)
            .send()
            .unwrap()
            .status()
            .as_u16()
    };
    let proxied = Server::start(
        &dir.path().join("proxied"),
        &[
            "--rate-limit",
            "1",
            "--burst",
            "2",
            "--trusted-proxy",
            "127.0.0.0/8",
        ],
    );
    let first: Vec<u16> = (0..6).map(|_| get(&proxied, "198.51.100.1")).collect();
    assert!(first.contains(&429), "{first:?}");
    // Another client behind the same proxy still has its whole burst.
    assert_eq!(get(&proxied, "198.51.100.2"), 200);
    assert_eq!(get(&proxied, "198.51.100.2"), 200);
    // A client that prepends addresses of its own lands in the bucket of what the proxy added.
    assert_eq!(get(&proxied, "203.0.113.50, 198.51.100.1"), 429);

    let direct = Server::start(
        &dir.path().join("direct"),
        &["--rate-limit", "1", "--burst", "2"],
    );
    let spoofed: Vec<u16> = (0..6)
        .map(|i| get(&direct, &format!("198.51.100.{}", 10 + i)))
        .collect();
    assert!(spoofed.contains(&429), "{spoofed:?}");
    // A malformed range is a usage error.
    let out = common::hg_run(&[
        "serve",
        "--data",
        dir.path().join("bad").to_str().unwrap(),
        "--trusted-proxy",
        "10.0.0.0/40",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("10.0.0.0/40"));
}

/// Documents wait in memory until stored: uploads that together would exceed `--upload-memory`
/// get 503 with Retry-After and store nothing, and the memory comes back when a request ends.
#[test]
fn uploads_beyond_the_upload_memory_wait_their_turn_with_503() {
    let dir = tempdir();
    let document_limit: usize = 600_000;
    let memory = document_limit + (1 << 20);
    let server = Server::start(
        &dir.path().join("srv"),
        &[
            "--max-document-bytes",
            &document_limit.to_string(),
            "--upload-memory",
            &memory.to_string(),
        ],
    );
    // A holds a large bundle field and part of its document, then stalls.
    struct Stalling {
        sent: usize,
        release: std::sync::mpsc::Receiver<()>,
    }
    impl std::io::Read for Stalling {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.sent == 300_000 {
                let _ = self.release.recv();
            }
            if self.sent >= 400_000 {
                return Ok(0);
            }
            let n = buf.len().min(
                if self.sent < 300_000 {
                    300_000
                } else {
                    400_000
                } - self.sent,
            );
            buf[..n].fill(b'a');
            self.sent += n;
            Ok(n)
        }
    }
    let (release, stalled) = std::sync::mpsc::channel();
    let url = server.url("/api/v1/submissions");
    let a = std::thread::spawn(move || {
        let form = reqwest::blocking::multipart::Form::new()
            .part(
                "bundle",
                reqwest::blocking::multipart::Part::bytes(vec![b'{'; 1_000_000]),
            )
            .part(
                "document",
                reqwest::blocking::multipart::Part::reader(Stalling {
                    sent: 0,
                    release: stalled,
                }),
            );
        client()
            .post(url)
            .multipart(form)
            .send()
            .unwrap()
            .status()
            .as_u16()
    });
    std::thread::sleep(std::time::Duration::from_secs(2));
    let document = vec![b'b'; 500_000];
    let form = reqwest::blocking::multipart::Form::new()
        .part(
            "bundle",
            reqwest::blocking::multipart::Part::bytes(b"{}".to_vec()),
        )
        .part(
            "document",
            reqwest::blocking::multipart::Part::bytes(document.clone()),
        );
    let busy = client()
        .post(server.url("/api/v1/submissions"))
        .multipart(form)
        .send()
        .unwrap();
    assert_eq!(busy.status().as_u16(), 503);
    assert!(busy.headers().contains_key("retry-after"));
    release.send(()).unwrap();
    // A's bundle is no bundle: 400 once it has been read whole.
    assert_eq!(a.join().unwrap(), 400);
    // The memory is back: the same upload now gets past the budget (to the bundle's check).
    let (status, body) = upload(&server, b"{}", &document);
    assert_eq!(status, 400, "{body}");
    // A budget that cannot hold one largest upload is refused at start.
    let out = common::hg_run(&[
        "serve",
        "--data",
        dir.path().join("small").to_str().unwrap(),
        "--upload-memory",
        "1000",
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--upload-memory"));
}

#[test]
fn a_public_set_is_verified_from_the_proofs_and_a_forged_link_is_invalid() {
    let dir = tempdir();
    let work = dir.path();
    let server = Server::start(&work.join("srv"), &["--rate-limit", "0"]);
    let (status, body) = create_set(
        &server,
        &json!({ "name": "open", "durations": ["2s", "1s"], "rate": 100000.0, "public": true }),
    );
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["kind"], "public");
    let (status, body) = create_set(
        &server,
        &json!({ "name": "open2", "durations": ["1s"], "rate": 100000.0, "public": true, "bits": 3072 }),
    );
    assert_eq!(status, 400, "{body}");
    let set = download_set(&server, "open", &work.join("open.json"));
    let doc = file(work, "paper.txt", b"sealed on a public set\n");
    let bundle = seal(&set, &doc, "3s");
    let bundle_text = std::fs::read_to_string(&bundle).unwrap();
    let doc_bytes = std::fs::read(&doc).unwrap();
    let (status, ok) = upload(&server, bundle_text.as_bytes(), &doc_bytes);
    assert_eq!(status, 202, "{ok}");
    let v = verdict(&server, ok["id"].as_str().unwrap());
    assert_eq!(v["status"], "valid", "{v}");
    assert_eq!(v["credited_secs"], 3.0);

    // A liar edits the first link's output: the proof no longer matches, the link is invalid.
    let mut forged: Value = serde_json::from_str(&bundle_text).unwrap();
    let y = forged["links"][0]["y"].as_str().unwrap().to_string();
    let flipped = format!(
        "{}{}",
        &y[..y.len() - 1],
        if y.ends_with('1') { '2' } else { '1' }
    );
    forged["links"][0]["y"] = json!(flipped);
    let (status, bad) = upload(&server, forged.to_string().as_bytes(), &doc_bytes);
    assert_eq!(status, 202, "{bad}");
    let v = verdict(&server, bad["id"].as_str().unwrap());
    assert_eq!(v["status"], "invalid", "{v}");
    assert!(v["reason"].as_str().unwrap().starts_with("link 1"), "{v}");
}

#[test]
fn a_bundle_of_many_bogus_links_costs_the_verifier_one_check() {
    // Each link costs the verifier a private-key operation and its maker nothing: a liar with
    // many machines could otherwise keep the workers busy for minutes per upload. Verification
    // stops at the first invalid link; the verdict lists only the links it checked.
    let dir = tempdir();
    let work = dir.path();
    let server = Server::start(&work.join("srv"), &["--rate-limit", "0"]);
    let set = short_set(&server, "conf", &["1s"], work);
    let doc = file(work, "paper.txt", b"a paper\n");
    let bundle = seal(&set, &doc, "1s");
    let mut b: Value = serde_json::from_str(&std::fs::read_to_string(&bundle).unwrap()).unwrap();
    let mut bogus = b["links"][0].clone();
    bogus["c"] = json!("5");
    let links: Vec<Value> = std::iter::once(bogus)
        .chain(std::iter::repeat_n(b["links"][0].clone(), 1499))
        .collect();
    b["links"] = Value::Array(links);
    let (status, body) = upload(
        &server,
        b.to_string().as_bytes(),
        &std::fs::read(&doc).unwrap(),
    );
    assert_eq!(status, 202, "{body}");
    let v = verdict(&server, body["id"].as_str().unwrap());
    assert_eq!(v["status"], "invalid");
    assert_eq!(
        v["links"].as_array().unwrap().len(),
        1,
        "only the first link was checked: {}",
        v["links"]
    );
    assert!(v["reason"].as_str().unwrap().starts_with("link 1"), "{v}");
    // An honest bundle is still checked whole.
    let (_, ok) = upload(
        &server,
        &std::fs::read(&bundle).unwrap(),
        &std::fs::read(&doc).unwrap(),
    );
    assert_eq!(
        verdict(&server, ok["id"].as_str().unwrap())["links"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn check_receipt_refuses_what_is_not_a_receipt_as_an_error() {
    let dir = tempdir();
    let key = dir.path().join("k.pem");
    hg(&[
        "rsa",
        "keygen",
        "--bits",
        "2048",
        "-o",
        key.to_str().unwrap(),
    ]);
    let junk = file(
        dir.path(),
        "junk.json",
        b"{\"type\": \"hourglass-receipt\"}",
    );
    let err = hg_fail(
        2,
        &[
            "submit",
            "check-receipt",
            junk.to_str().unwrap(),
            "--institution",
            key.to_str().unwrap(),
        ],
    );
    assert!(err.contains("not a receipt"), "{err}");
    hg_fail(
        2,
        &[
            "submit",
            "check-receipt",
            "missing.json",
            "--institution",
            key.to_str().unwrap(),
        ],
    );
}

#[test]
fn a_bundle_that_does_not_parse_is_refused_with_400_and_one_proof_has_one_spelling() {
    // A link whose number is not hexadecimal, or is spelled another way (upper case, a leading
    // zero): refused at upload with the field named (docs/API.md), never stored, so one proof
    // cannot become many submissions and receipts.
    let dir = tempdir();
    let work = dir.path();
    let server = Server::start(&work.join("srv"), &["--rate-limit", "0", "--workers", "1"]);
    let set = short_set(&server, "conf", &["1s"], work);
    let doc = file(work, "paper.txt", b"a paper\n");
    let bundle = seal(&set, &doc, "1s");
    let b: Value = serde_json::from_str(&std::fs::read_to_string(&bundle).unwrap()).unwrap();
    let c = b["links"][0]["c"].as_str().unwrap().to_string();
    let doc_bytes = std::fs::read(&doc).unwrap();
    for (spelling, expected) in [
        ("not-hex".to_string(), "field c"),
        (c.to_uppercase(), "canonical"),
        (format!("0{c}"), "canonical"),
    ] {
        let mut edited = b.clone();
        edited["links"][0]["c"] = json!(spelling);
        let (status, body) = upload(&server, edited.to_string().as_bytes(), &doc_bytes);
        assert_eq!(status, 400, "{body}");
        assert!(body["error"].as_str().unwrap().contains(expected), "{body}");
    }
    let (status, ok) = upload(&server, &std::fs::read(&bundle).unwrap(), &doc_bytes);
    assert_eq!(status, 202, "{ok}");
    assert_eq!(
        verdict(&server, ok["id"].as_str().unwrap())["status"],
        "valid"
    );
}

#[test]
fn a_bundle_crediting_more_than_the_time_since_1970_is_dated_to_the_epoch_everywhere() {
    // A public set with a tiny rate (the API accepts it): three squarings credit 95 years. The
    // date saturates at the epoch (a document that existed earlier existed then): the worker
    // records it and moves on, the CLI prints it and exits 0.
    let dir = tempdir();
    let work = dir.path();
    let server = Server::start(&work.join("srv"), &["--rate-limit", "0", "--workers", "1"]);
    let (status, body) = create_set(
        &server,
        &json!({ "name": "slow", "durations": ["100years"], "rate": 1e-9, "public": true,
                 "deadline": "2000-01-01T00:00:00Z" }),
    );
    assert_eq!(status, 201, "{body}");
    let set = download_set(&server, "slow", &work.join("slow.json"));
    let doc = file(work, "old.txt", b"older than the epoch\n");
    let bundle = seal(&set, &doc, "100years");
    let doc_bytes = std::fs::read(&doc).unwrap();
    let (status, ok) = upload(&server, &std::fs::read(&bundle).unwrap(), &doc_bytes);
    assert_eq!(status, 202, "{ok}");
    let v = verdict(&server, ok["id"].as_str().unwrap());
    assert_eq!(v["status"], "valid", "{v}");
    assert_eq!(v["predated_to"], "1970-01-01T00:00:00Z", "{v}");
    assert_eq!(v["before_deadline"], true, "{v}");
    let out = hg(&[
        "submit",
        "verify",
        "--public",
        s(&bundle),
        "--document",
        s(&doc),
        "--set",
        s(&set),
        "--deadline",
        "2000-01-01T00:00:00Z",
        "--json",
    ]);
    let cli: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(cli["predated_to"], "1970-01-01T00:00:00Z", "{cli}");
    assert_eq!(cli["before_deadline"], true);
    // The one worker is free for the next submission.
    let other = file(work, "next.txt", b"next\n");
    let next = seal(&set, &other, "100years");
    let (_, ok) = upload(&server, &std::fs::read(&next).unwrap(), b"next\n");
    assert_eq!(
        verdict(&server, ok["id"].as_str().unwrap())["status"],
        "valid"
    );
}

#[test]
fn a_job_that_keeps_failing_ends_in_error_after_bounded_tries_and_frees_its_worker() {
    // An operator restores the database with another data directory's vault key: the private
    // set's keys no longer open. The job fails, is tried a bounded number of times, and ends in
    // a final `error` state with the reason; the one worker then verifies the next upload.
    let dir = tempdir();
    let work = dir.path();
    let data = work.join("srv");
    let mut server = Server::start(&data, &["--rate-limit", "0", "--workers", "1"]);
    let set = short_set(&server, "conf", &["1s"], work);
    let doc = file(work, "paper.txt", b"a paper\n");
    let bundle = seal(&set, &doc, "1s");
    server.stop();
    std::fs::write(data.join("vault.key"), [7u8; 32]).unwrap();
    let server = Server::start(&data, &["--rate-limit", "0", "--workers", "1"]);
    let (status, stuck) = upload(
        &server,
        &std::fs::read(&bundle).unwrap(),
        &std::fs::read(&doc).unwrap(),
    );
    assert_eq!(status, 202, "{stuck}");
    let v = verdict(&server, stuck["id"].as_str().unwrap());
    assert_eq!(v["status"], "error", "{v}");
    let reason = v["reason"].as_str().unwrap();
    assert!(
        reason.contains("3 tries") && reason.contains("vault"),
        "{reason}"
    );
    assert!(
        v["receipt"].is_null() && v["credited_secs"].is_null(),
        "{v}"
    );
    assert!(metric(&server, "hourglass_submissions{status=\"error\"}") >= 1.0);
    // A public set needs no vault: the freed worker verifies it.
    let (status, body) = create_set(
        &server,
        &json!({ "name": "open", "durations": ["1s"], "rate": 100000.0, "public": true }),
    );
    assert_eq!(status, 201, "{body}");
    let public = download_set(&server, "open", &work.join("open.json"));
    let doc2 = file(work, "public.txt", b"public paper\n");
    let bundle2 = seal(&public, &doc2, "1s");
    let (_, ok) = upload(
        &server,
        &std::fs::read(&bundle2).unwrap(),
        b"public paper\n",
    );
    assert_eq!(
        verdict(&server, ok["id"].as_str().unwrap())["status"],
        "valid"
    );
}

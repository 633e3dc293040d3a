//! RFC 3161 through the command line and the service, with OpenSSL as the independent party:
//! the trustless path (a public set on RSA-2048, a bundle stamped at an OpenSSL TSA, a third
//! party verifying with public files, `openssl ts -verify` and `hourglass submit verify`), and
//! the service as a TSA (`openssl ts -query`, curl, `openssl ts -verify`), with its refusals.

mod common;
mod service;

use std::path::Path;
use std::process::Command;

use common::{file, hg, hg_run, openssl_in as openssl, openssl_tsa, s, tempdir};
use serde_json::Value;
use service::{client, seal, short_set, upload, verdict, Postgres, Server};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// `submit verify --public BUNDLE --document DOC --set SET --timestamp TSR --tsa-ca CA EXTRA...`.
fn verify_stamped([bundle, doc, set, tsr, ca]: [&Path; 5], extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "submit",
        "verify",
        "--public",
        s(bundle),
        "--document",
        s(doc),
        "--set",
        s(set),
        "--timestamp",
        s(tsr),
        "--tsa-ca",
        s(ca),
    ];
    args.extend_from_slice(extra);
    hg_run(&args)
}

#[test]
fn a_third_party_dates_a_public_bundle_with_any_tsa_and_no_institution() {
    let dir = tempdir();
    let d = dir.path();
    // Anyone publishes a public set on RSA-2048 (nobody knows its factors); the author seals.
    hg(&[
        "submit",
        "new-set",
        "--public",
        "--modulus",
        "rsa-2048",
        "--durations",
        "2s,1s",
        "--rate",
        "20000",
        "--name",
        "Open call",
        "-o",
        s(&d.join("pub")),
    ]);
    let doc = file(d, "paper.txt", b"a paper written offline\n");
    hg(&[
        "submit",
        "seal",
        "--set",
        s(&d.join("pub/set.json")),
        "-i",
        s(&doc),
        "--expect",
        "3s",
        "-o",
        s(&d.join("paper.bundle")),
    ]);
    // The bundle goes to a TSA of the author's choice: here OpenSSL's, reached another way.
    let tsa = d.join("tsa");
    std::fs::create_dir(&tsa).unwrap();
    openssl_tsa(&tsa, "Somebody's TSA");
    hg(&[
        "submit",
        "stamp",
        s(&d.join("paper.bundle")),
        "--query",
        "-o",
        s(&tsa.join("q.tsq")),
    ]);
    openssl(
        &[
            "ts",
            "-reply",
            "-queryfile",
            "q.tsq",
            "-config",
            "tsa.cnf",
            "-out",
            "paper.tsr",
        ],
        &tsa,
    );
    // A third party holds only public files: the set, the bundle, the document, the token and
    // the TSA's root.
    let third = tempdir();
    let t = third.path();
    for (from, to) in [
        (d.join("pub/set.json"), "set.json"),
        (d.join("paper.bundle"), "paper.bundle"),
        (doc.clone(), "paper.txt"),
        (tsa.join("paper.tsr"), "paper.tsr"),
        (tsa.join("ca.pem"), "tsa-root.pem"),
    ] {
        std::fs::copy(from, t.join(to)).unwrap();
    }
    let ok = openssl(
        &[
            "ts",
            "-verify",
            "-data",
            "paper.bundle",
            "-in",
            "paper.tsr",
            "-CAfile",
            "tsa-root.pem",
        ],
        t,
    );
    assert!(ok.contains("Verification: OK"), "{ok}");
    let out = {
        let out = verify_stamped(
            [
                &t.join("paper.bundle"),
                &t.join("paper.txt"),
                &t.join("set.json"),
                &t.join("paper.tsr"),
                &t.join("tsa-root.pem"),
            ],
            &["--json"],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        out
    };
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["valid"], true, "{v}");
    assert_eq!(v["received_from"], "timestamps");
    let stamps = v["timestamps"].as_array().unwrap();
    assert_eq!(stamps.len(), 1);
    assert_eq!(stamps[0]["tsa"], "CN=Somebody's TSA");
    assert_eq!(stamps[0]["anchor"], "CN=Somebody's TSA Root");
    assert_eq!(stamps[0]["policy"], "1.3.6.1.4.1.4146.2.3");
    // received is the latest time the token proves (genTime plus OpenSSL's 1 s accuracy), and
    // the document existed 3 s before it.
    assert_eq!(v["received"], stamps[0]["latest"]);
    let gen = humantime::parse_rfc3339(stamps[0]["gen_time"].as_str().unwrap()).unwrap();
    let latest = humantime::parse_rfc3339(stamps[0]["latest"].as_str().unwrap()).unwrap();
    assert_eq!(latest.duration_since(gen).unwrap().as_secs(), 1);
    let received = humantime::parse_rfc3339(v["received"].as_str().unwrap()).unwrap();
    let predated = humantime::parse_rfc3339(v["predated_to"].as_str().unwrap()).unwrap();
    assert_eq!(received.duration_since(predated).unwrap().as_secs(), 3);
    // The same in words.
    let out = {
        let out = verify_stamped(
            [
                &t.join("paper.bundle"),
                &t.join("paper.txt"),
                &t.join("set.json"),
                &t.join("paper.tsr"),
                &t.join("tsa-root.pem"),
            ],
            &[],
        );
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        out
    };
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("by CN=Somebody's TSA (chains to CN=Somebody's TSA Root)"),
        "{text}"
    );
    assert!(text.contains("(timestamps)"), "{text}");

    // Refusals. A token for another bundle: a negative verdict naming it.
    let other_doc = file(d, "other.txt", b"another paper\n");
    hg(&[
        "submit",
        "seal",
        "--set",
        s(&d.join("pub/set.json")),
        "-i",
        s(&other_doc),
        "--expect",
        "1s",
        "-o",
        s(&d.join("other.bundle")),
    ]);
    let out = verify_stamped(
        [
            &d.join("other.bundle"),
            &other_doc,
            &t.join("set.json"),
            &t.join("paper.tsr"),
            &t.join("tsa-root.pem"),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("paper.tsr") && stderr(&out).contains("other data"),
        "{}",
        stderr(&out)
    );
    // A token that does not chain to the CA given: negative, naming it.
    let elsewhere = d.join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    openssl_tsa(&elsewhere, "Another TSA");
    let out = verify_stamped(
        [
            &t.join("paper.bundle"),
            &t.join("paper.txt"),
            &t.join("set.json"),
            &t.join("paper.tsr"),
            &elsewhere.join("ca.pem"),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not chain"), "{}", stderr(&out));
    // Usage errors: --timestamp without --tsa-ca, and with --received.
    let (pb, pt, ps) = (
        t.join("paper.bundle"),
        t.join("paper.txt"),
        t.join("set.json"),
    );
    for extra in [
        &["--timestamp", s(&t.join("paper.tsr"))][..],
        &[
            "--timestamp",
            s(&t.join("paper.tsr")),
            "--tsa-ca",
            s(&t.join("tsa-root.pem")),
            "--received",
            "2027-01-01T00:00:00Z",
        ][..],
    ] {
        let mut args = vec![
            "submit",
            "verify",
            "--public",
            s(&pb),
            "--document",
            s(&pt),
            "--set",
            s(&ps),
        ];
        args.extend_from_slice(extra);
        let out = hg_run(&args);
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
    }
    // A file that is not a token: an error, not a verdict.
    let junk = file(d, "junk.tsr", b"not a token");
    let out = verify_stamped(
        [
            &t.join("paper.bundle"),
            &t.join("paper.txt"),
            &t.join("set.json"),
            &junk,
            &t.join("tsa-root.pem"),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn the_query_stamp_writes_is_the_one_openssl_writes() {
    let dir = tempdir();
    let d = dir.path();
    let bundle = file(d, "b.bundle", b"{\"any\": \"bytes\"}\n");
    hg(&[
        "submit",
        "stamp",
        s(&bundle),
        "--query",
        "--no-nonce",
        "-o",
        s(&d.join("ours.tsq")),
    ]);
    openssl(
        &[
            "ts",
            "-query",
            "-data",
            "b.bundle",
            "-sha256",
            "-cert",
            "-no_nonce",
            "-out",
            "theirs.tsq",
        ],
        d,
    );
    assert_eq!(
        std::fs::read(d.join("ours.tsq")).unwrap(),
        std::fs::read(d.join("theirs.tsq")).unwrap()
    );
    // An existing output is not replaced without --force.
    let out = hg_run(&[
        "submit",
        "stamp",
        s(&bundle),
        "--query",
        "-o",
        s(&d.join("ours.tsq")),
    ]);
    assert_eq!(out.status.code(), Some(2));
}

/// The reply's text as OpenSSL reads it.
fn reply_text(dir: &Path, reply: &[u8]) -> String {
    std::fs::write(dir.join("r.tsr"), reply).unwrap();
    openssl(&["ts", "-reply", "-in", "r.tsr", "-text"], dir)
}

fn post_tsa(server: &Server, body: Vec<u8>, content_type: &str) -> (u16, String, Vec<u8>) {
    let r = client()
        .post(server.url("/tsa"))
        .header("content-type", content_type)
        .body(body)
        .send()
        .unwrap();
    let status = r.status().as_u16();
    let ct = r
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, ct, r.bytes().unwrap().to_vec())
}

fn serial(text: &str) -> String {
    text.lines()
        .find_map(|l| l.strip_prefix("Serial number: "))
        .unwrap()
        .to_string()
}

#[test]
fn the_service_is_a_tsa_that_openssl_uses() {
    let dir = tempdir();
    let d = dir.path();
    let server = Server::start(&d.join("srv"), &["--rate-limit", "0"]);
    for (path, name) in [("/tsa.pem", "tsa.pem"), ("/tsa-ca.pem", "tsa-ca.pem")] {
        let r = client().get(server.url(path)).send().unwrap();
        assert_eq!(r.status().as_u16(), 200);
        std::fs::write(d.join(name), r.bytes().unwrap()).unwrap();
    }
    // The TSA certificate: critical extendedKeyUsage timeStamping, issued by the TSA CA, whose
    // key is the institution's receipt key.
    let cert = openssl(&["x509", "-in", "tsa.pem", "-noout", "-text"], d);
    assert!(
        cert.contains("X509v3 Extended Key Usage: critical"),
        "{cert}"
    );
    assert!(cert.contains("Time Stamping"), "{cert}");
    // The default kind of key: ECDSA P-256.
    assert!(cert.contains("NIST CURVE: P-256"), "{cert}");
    let ca_key = openssl(&["x509", "-in", "tsa-ca.pem", "-noout", "-pubkey"], d);
    let receipt_pub = std::fs::read_to_string(d.join("srv/receipt.pub")).unwrap();
    assert_eq!(ca_key.trim(), receipt_pub.trim());

    // openssl ts -query, curl, openssl ts -verify.
    let data = file(d, "data", b"some bundle");
    let _ = data;
    openssl(
        &[
            "ts", "-query", "-data", "data", "-sha384", "-cert", "-out", "q.tsq",
        ],
        d,
    );
    let curl = Command::new("curl")
        .args([
            "-sS",
            "-f",
            "-H",
            "Content-Type: application/timestamp-query",
            "--data-binary",
        ])
        .arg("@q.tsq")
        .args(["-o", "r.tsr", &server.url("/tsa")])
        .current_dir(d)
        .output()
        .unwrap();
    assert!(
        curl.status.success(),
        "{}",
        String::from_utf8_lossy(&curl.stderr)
    );
    let ok = openssl(
        &[
            "ts",
            "-verify",
            "-queryfile",
            "q.tsq",
            "-in",
            "r.tsr",
            "-CAfile",
            "tsa-ca.pem",
            "-untrusted",
            "tsa.pem",
        ],
        d,
    );
    assert!(ok.contains("Verification: OK"), "{ok}");
    // Serial numbers differ from one token to the next.
    let q = std::fs::read(d.join("q.tsq")).unwrap();
    let (status, ct, first) = post_tsa(&server, q.clone(), "application/timestamp-query");
    assert_eq!((status, ct.as_str()), (200, "application/timestamp-reply"));
    let (_, _, second) = post_tsa(&server, q, "application/timestamp-query");
    assert_ne!(
        serial(&reply_text(d, &first)),
        serial(&reply_text(d, &second))
    );

    // Bad queries: a rejection that names its failInfo, never a 500.
    openssl(
        &[
            "ts", "-query", "-data", "data", "-sha1", "-cert", "-out", "sha1.tsq",
        ],
        d,
    );
    openssl(
        &[
            "ts",
            "-query",
            "-data",
            "data",
            "-sha256",
            "-tspolicy",
            "1.2.3.4",
            "-out",
            "pol.tsq",
        ],
        d,
    );
    for (what, body, fail) in [
        (
            "not DER",
            b"hello".to_vec(),
            "the data submitted has the wrong format",
        ),
        (
            "SHA-1",
            std::fs::read(d.join("sha1.tsq")).unwrap(),
            "unrecognized or unsupported algorithm identifier",
        ),
        (
            "another policy",
            std::fs::read(d.join("pol.tsq")).unwrap(),
            "the requested TSA policy is not supported by the TSA",
        ),
    ] {
        let (status, ct, reply) = post_tsa(&server, body, "application/timestamp-query");
        assert_eq!(
            (status, ct.as_str()),
            (200, "application/timestamp-reply"),
            "{what}"
        );
        let text = reply_text(d, &reply);
        assert!(text.contains("Status: Rejected."), "{what}: {text}");
        assert!(
            text.contains(&format!("Failure info: {fail}")),
            "{what}: {text}"
        );
    }
    // Another media type: 415 with a JSON error; a 10 MB query: 413.
    let (status, _, body) = post_tsa(&server, b"x".to_vec(), "application/json");
    assert_eq!(status, 415);
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert!(
        body["error"].as_str().unwrap().contains("timestamp-query"),
        "{body}"
    );
    std::fs::write(d.join("huge.tsq"), vec![0x30; 10 << 20]).unwrap();
    let curl = Command::new("curl")
        .args(["-sS", "-o", "/dev/null", "-w", "%{http_code}", "-H"])
        .args([
            "Content-Type: application/timestamp-query",
            "--data-binary",
            "@huge.tsq",
        ])
        .arg(server.url("/tsa"))
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&curl.stdout), "413");

    // `submit stamp` against the service, checked against its CA before it is written.
    let bundle = file(d, "paper.bundle", b"{\"a\": \"bundle\"}\n");
    let out = hg(&[
        "submit",
        "stamp",
        s(&bundle),
        "--tsa",
        &server.url("/tsa"),
        "-o",
        s(&d.join("p.tsr")),
        "--tsa-ca",
        s(&d.join("tsa-ca.pem")),
        "--json",
    ]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["verified"], true, "{v}");
    assert_eq!(
        v["policy"],
        "2.25.306263111566275780816363928834165067171.2"
    );
    let ok = openssl(
        &[
            "ts",
            "-verify",
            "-data",
            "paper.bundle",
            "-in",
            "p.tsr",
            "-CAfile",
            "tsa-ca.pem",
            "-untrusted",
            "tsa.pem",
        ],
        d,
    );
    assert!(ok.contains("Verification: OK"), "{ok}");
    // Against another CA it is refused, and nothing is written.
    let other = d.join("other");
    std::fs::create_dir(&other).unwrap();
    openssl_tsa(&other, "Other");
    let out = hg_run(&[
        "submit",
        "stamp",
        s(&bundle),
        "--tsa",
        &server.url("/tsa"),
        "-o",
        s(&d.join("q.tsr")),
        "--tsa-ca",
        s(&other.join("ca.pem")),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(!d.join("q.tsr").exists());
    // A URL that is not a TSA: an error, nothing written.
    let out = hg_run(&[
        "submit",
        "stamp",
        s(&bundle),
        "--tsa",
        &server.url("/healthz"),
        "-o",
        s(&d.join("q.tsr")),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(!d.join("q.tsr").exists());
}

#[test]
fn servers_sharing_one_postgresql_never_repeat_a_serial_number() {
    let dir = tempdir();
    let d = dir.path();
    let pg = Postgres::start();
    let url = pg.url();
    let args = ["--database", url.as_str(), "--rate-limit", "0"];
    let a = Server::start(&d.join("a"), &args);
    // A second server with a log key of its own would sign a second history of the shared log:
    // it refuses to start, naming the key to copy.
    let b_dir = d.join("b");
    let mut own = vec!["serve", "--data", s(&b_dir), "--listen", "127.0.0.1:0"];
    own.extend(args);
    let refused = hg_run(&own);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(stderr(&refused).contains("log.key"), "{}", stderr(&refused));
    std::fs::remove_file(d.join("b/log.key")).unwrap();
    std::fs::copy(d.join("a/log.key"), d.join("b/log.key")).unwrap();
    let b = Server::start(&d.join("b"), &args);
    file(d, "data", b"x");
    openssl(
        &["ts", "-query", "-data", "data", "-sha256", "-out", "q.tsq"],
        d,
    );
    let q = std::fs::read(d.join("q.tsq")).unwrap();
    let mut serials = std::collections::HashSet::new();
    for server in [&a, &b, &a, &b] {
        let (status, _, reply) = post_tsa(server, q.clone(), "application/timestamp-query");
        assert_eq!(status, 200);
        assert!(serials.insert(serial(&reply_text(d, &reply))));
    }
    let instances = pg.sql("SELECT COUNT(*) FROM tsa_instances");
    assert_eq!(instances.trim(), "2");
}

#[test]
fn an_institution_s_own_tsa_certificate_signs_its_tokens_and_receipts() {
    let dir = tempdir();
    let d = dir.path();
    let own = d.join("own");
    std::fs::create_dir(&own).unwrap();
    openssl_tsa(&own, "University TSA");
    let chain = [
        std::fs::read_to_string(own.join("tsa.pem")).unwrap(),
        std::fs::read_to_string(own.join("ca.pem")).unwrap(),
    ]
    .concat();
    let chain_file = file(d, "chain.pem", chain.as_bytes());
    let server = Server::start(
        &d.join("srv"),
        &[
            "--rate-limit",
            "0",
            "--tsa-cert",
            s(&chain_file),
            "--tsa-key",
            s(&own.join("tsa.key")),
            "--tsa-policy",
            "1.2.3.4.99",
        ],
    );
    assert!(
        !d.join("srv/tsa.key").exists(),
        "no TSA key is made when one is given"
    );
    // Tokens from POST /tsa chain to the institution's own root, under its policy.
    file(d, "data", b"x");
    openssl(
        &[
            "ts", "-query", "-data", "data", "-sha256", "-cert", "-out", "q.tsq",
        ],
        d,
    );
    let (status, _, reply) = post_tsa(
        &server,
        std::fs::read(d.join("q.tsq")).unwrap(),
        "application/timestamp-query",
    );
    assert_eq!(status, 200);
    std::fs::write(d.join("r.tsr"), &reply).unwrap();
    let ok = openssl(
        &[
            "ts",
            "-verify",
            "-queryfile",
            "q.tsq",
            "-in",
            "r.tsr",
            "-CAfile",
            "own/ca.pem",
        ],
        d,
    );
    assert!(ok.contains("Verification: OK"), "{ok}");
    assert!(reply_text(d, &reply).contains("Policy OID: 1.2.3.4.99"));
    // A receipt's token chains to that root, not to the receipt key: check-receipt needs the
    // root (--tsa-ca) and refuses the receipt without it (exit 1).
    let set = short_set(&server, "conf", &["1s"], d);
    let doc = file(d, "paper.txt", b"paper\n");
    let bundle = seal(&set, &doc, "1s");
    let (status, body) = upload(&server, &std::fs::read(&bundle).unwrap(), b"paper\n");
    assert_eq!(status, 202, "{body}");
    let v = verdict(&server, body["id"].as_str().unwrap());
    assert_eq!(v["status"], "valid", "{v}");
    let receipt = file(
        d,
        "receipt.json",
        serde_json::to_string(&v["receipt"]).unwrap().as_bytes(),
    );
    let institution = file(
        d,
        "institution.pub",
        &client()
            .get(server.url("/institution.pub"))
            .send()
            .unwrap()
            .bytes()
            .unwrap(),
    );
    let args = [
        "submit",
        "check-receipt",
        s(&receipt),
        "--institution",
        s(&institution),
    ];
    let out = hg_run(&args);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("does not chain"), "{}", stderr(&out));
    let root = own.join("ca.pem");
    let log_pub = service::log_key(&server, d);
    let mut with_root = args.to_vec();
    with_root.extend(["--tsa-ca", s(&root), "--log-key", s(&log_pub)]);
    let out = hg(&with_root);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("chains to CN=University TSA Root"), "{text}");

    // A certificate without the critical timeStamping purpose is refused at start.
    std::fs::write(
        own.join("plain.ext"),
        "keyUsage=critical,digitalSignature\n",
    )
    .unwrap();
    openssl(
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
            "plain.pem",
            "-days",
            "365",
            "-extfile",
            "plain.ext",
        ],
        &own,
    );
    let out = hg_run(&[
        "serve",
        "--data",
        s(&d.join("srv2")),
        "--listen",
        "127.0.0.1:0",
        "--tsa-cert",
        s(&own.join("plain.pem")),
        "--tsa-key",
        s(&own.join("tsa.key")),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("extendedKeyUsage"),
        "{}",
        stderr(&out)
    );
}

//! A data directory the schema-1 service wrote (`crates/hourglass-serve/tests/fixtures/schema1`,
//! made by its `make.py`), served by this one after its migrations ran: the rows verified then
//! keep their verdicts and version 1 receipts (which the CLI checks), and the row still queued
//! takes the path of rows stored before schema 3: verified now, with a version 1 receipt
//! handed out at once, outside the log (it has no timestamp token to enter it with).

mod common;
mod service;

use std::path::{Path, PathBuf};

use common::{hg, hg_fail, s, tempdir};
use serde_json::Value;
use service::{client, submission, verdict, Server};

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../hourglass-serve/tests/fixtures/schema1")
}

fn get(server: &Server, path: &str) -> (u16, String) {
    let r = client().get(server.url(path)).send().unwrap();
    (r.status().as_u16(), r.text().unwrap())
}

#[test]
fn a_schema_1_data_directory_is_served_after_upgrading() {
    let work = tempdir();
    let data = work.path().join("data");
    std::fs::create_dir(&data).unwrap();
    for name in [
        "hourglass.db",
        "receipt.key",
        "receipt.pub",
        "vault.key",
        "admin.token",
    ] {
        std::fs::copy(fixture().join(name), data.join(name)).unwrap();
    }
    let ids: Value =
        serde_json::from_slice(&std::fs::read(fixture().join("ids.json")).unwrap()).unwrap();
    let id = |name: &str| ids[name].as_str().unwrap().to_string();
    let server = Server::start(&data, &[]);

    // Verified by the schema-1 service: its verdict and its receipt, byte for byte.
    let (status, a) = submission(&server, &id("a"));
    assert_eq!(status, 200, "{a}");
    assert_eq!(a["status"], "valid", "{a}");
    assert!(a["credited_secs"].as_f64().unwrap() >= 1.0, "{a}");
    assert!(a.get("reason").is_none(), "{a}");
    let stored = std::fs::read_to_string(fixture().join("a.receipt")).unwrap();
    assert_eq!(
        get(&server, &format!("/api/v1/submissions/{}/receipt", id("a"))),
        (200, stored)
    );
    let (status, b) = submission(&server, &id("b"));
    assert_eq!(status, 200, "{b}");
    assert_eq!(b["status"], "invalid", "{b}");
    assert_eq!(b["credited_secs"], 0.0, "{b}");
    assert!(b["reason"].as_str().unwrap().contains("document"), "{b}");
    assert_eq!(
        get(&server, &format!("/api/v1/submissions/{}/receipt", id("b"))).1,
        std::fs::read_to_string(fixture().join("b.receipt")).unwrap()
    );
    // Their receipts are the institution's: authentic, the first valid, the second invalid.
    let institution = fixture().join("receipt.pub");
    let out = hg(&[
        "submit",
        "check-receipt",
        s(&fixture().join("a.receipt")),
        "--institution",
        s(&institution),
        "--document",
        s(&fixture().join("a.txt")),
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("valid"));
    hg_fail(
        1,
        &[
            "submit",
            "check-receipt",
            s(&fixture().join("b.receipt")),
            "--institution",
            s(&institution),
        ],
    );

    // Queued at the upgrade, stored before schema 3 (no token): verified now, its version 1
    // receipt handed out at once, without waiting for the log, and no token to download.
    let c = verdict(&server, &id("c"));
    assert_eq!(c["status"], "valid", "{c}");
    assert_eq!(c["receipt"]["version"], 1, "{c}");
    let (status, receipt) = get(&server, &format!("/api/v1/submissions/{}/receipt", id("c")));
    assert_eq!(status, 200, "{receipt}");
    let path = work.path().join("c.receipt");
    std::fs::write(&path, receipt).unwrap();
    hg(&[
        "submit",
        "check-receipt",
        s(&path),
        "--institution",
        s(&institution),
        "--document",
        s(&fixture().join("c.txt")),
    ]);
    let (status, body) = get(
        &server,
        &format!("/api/v1/submissions/{}/timestamp", id("c")),
    );
    assert_eq!(status, 404, "{body}");
    assert!(body.contains("before the service stamped"), "{body}");
    // The page shows each row's state.
    let (_, page) = get(&server, &format!("/submissions/{}", id("a")));
    assert!(page.contains("valid"), "{page}");
}

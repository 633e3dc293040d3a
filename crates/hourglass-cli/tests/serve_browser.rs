//! The web page in a real browser: Debian's chromium, driven over WebDriver by chromedriver,
//! with JavaScript switched off (the core flow needs none). An author opens `/`, downloads a set,
//! seals with the CLI, uploads through the form, lands on the submission page and sees `valid`,
//! and downloads a receipt that the CLI checks offline.
//!
//! `HOURGLASS_SCREENSHOTS=DIR` also saves the pages as PNG (desktop and phone widths): the
//! screenshots in docs/ come from `HOURGLASS_SCREENSHOTS=docs/screenshots cargo test -p hourglass
//! --test serve_browser`.

mod common;
mod service;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::{file, hg, tempdir};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::json;
use service::{client, create_set, free_port, seal, Server};

const CHROMIUM: &str = "/usr/bin/chromium";
const CHROMEDRIVER: &str = "/usr/bin/chromedriver";

struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_chromedriver() -> (Driver, u16) {
    for tool in [CHROMIUM, CHROMEDRIVER] {
        assert!(
            Path::new(tool).exists(),
            "{tool} is missing: run `bash scripts/setup-debian.sh` (it installs chromium and chromium-driver)"
        );
    }
    let port = free_port();
    let child = Command::new(CHROMEDRIVER)
        .arg(format!("--port={port}"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("cannot start chromedriver");
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "chromedriver did not listen within 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (Driver(child), port)
}

async fn browser(port: u16, downloads: &Path) -> Client {
    let mut caps = serde_json::Map::new();
    caps.insert(
        "goog:chromeOptions".into(),
        json!({
            "binary": CHROMIUM,
            "args": ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1200,1000"],
            "prefs": {
                "download.default_directory": downloads,
                "download.prompt_for_download": false,
                "profile.managed_default_content_settings.javascript": 2,
            },
        }),
    );
    let connector = hyper_util::client::legacy::connect::HttpConnector::new();
    ClientBuilder::new(connector)
        .capabilities(caps)
        .connect(&format!("http://127.0.0.1:{port}"))
        .await
        .expect("cannot open a chromium session through chromedriver")
}

/// Waits for a file to appear in `dir` (a finished download, not a `.crdownload`).
fn downloaded(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{name} was not downloaded within 30 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    path
}

/// Runs blocking work (the blocking HTTP client, the CLI) on a thread of its own, outside the
/// async runtime.
fn off<T: Send>(f: impl FnOnce() -> T + Send) -> T {
    std::thread::scope(|s| s.spawn(f).join().unwrap())
}

/// Fills the upload form with a bundle and a document and sends it.
async fn upload_through_form(c: &Client, bundle: &Path, document: &Path) {
    for (id, path) in [("bundle", bundle), ("document", document)] {
        c.find(Locator::Id(id))
            .await
            .unwrap()
            .send_keys(path.to_str().unwrap())
            .await
            .unwrap();
    }
    c.find(Locator::Id("submit"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
}

async fn screenshot(c: &Client, name: &str) {
    if let Some(dir) = std::env::var_os("HOURGLASS_SCREENSHOTS") {
        let png = c.screenshot().await.unwrap();
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(Path::new(&dir).join(name), png).unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_author_uploads_through_the_page_and_sees_valid() {
    let dir = tempdir();
    let work = dir.path().to_path_buf();
    let downloads = work.join("downloads");
    std::fs::create_dir_all(&downloads).unwrap();
    let server = Server::start(&work.join("srv"), &["--rate-limit", "0"]);
    let (status, body) = off(|| {
        create_set(
            &server,
            &json!({ "name": "conf-2027", "durations": ["2s", "1s"], "rate": 100000.0, "deadline": "2027-03-01T23:59:59Z" }),
        )
    });
    assert_eq!(status, 201, "{body}");
    let (_driver, port) = start_chromedriver();
    let c = browser(port, &downloads).await;

    // The front page: the open set, its download link, the commands, the form.
    c.goto(&server.url("/")).await.unwrap();
    let page = c.source().await.unwrap();
    assert!(page.contains("conf-2027") && page.contains("2027-03-01T23:59:59Z"));
    assert!(page.contains("hourglass submit seal --set set.json"));
    for input in ["bundle", "document"] {
        let label = c
            .find(Locator::Css(&format!("label[for={input}]")))
            .await
            .unwrap();
        assert!(
            !label.text().await.unwrap().is_empty(),
            "the {input} input has a label"
        );
    }
    screenshot(&c, "index.png").await;
    c.find(Locator::Id("download-conf-2027"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let set = downloaded(&downloads, "set.json");
    let served = off(|| {
        client()
            .get(server.url("/api/v1/sets/conf-2027"))
            .send()
            .unwrap()
            .bytes()
            .unwrap()
    });
    assert_eq!(std::fs::read(&set).unwrap(), served.as_ref());

    // Offline: seal with the CLI.
    let doc = file(&work, "paper.txt", b"the camera-ready paper\n");
    let bundle = off(|| seal(&set, &doc, "3s"));

    // Online again: upload through the form, land on the submission page, see `valid`.
    upload_through_form(&c, &bundle, &doc).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let verdict = loop {
        // The page refreshes itself while queued (a meta refresh, no script).
        if let Ok(e) = c.find(Locator::Id("verdict")).await {
            if let Ok(text) = e.text().await {
                if text != "queued" {
                    break text;
                }
            }
        }
        assert!(
            Instant::now() < deadline,
            "no verdict on the page within 60 s"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert_eq!(verdict, "valid");
    let url = c.current_url().await.unwrap();
    let id = url
        .path()
        .strip_prefix("/submissions/")
        .expect("on the submission page")
        .to_string();
    let credited = c
        .find(Locator::Id("credited"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(credited, "3s");
    screenshot(&c, "submission.png").await;
    c.set_window_size(390, 844).await.unwrap();
    screenshot(&c, "submission-phone.png").await;
    c.goto(&server.url("/")).await.unwrap();
    screenshot(&c, "index-phone.png").await;
    c.set_window_size(1200, 1000).await.unwrap();

    // The receipt, downloaded from the page, checks offline.
    c.goto(&server.url(&format!("/submissions/{id}")))
        .await
        .unwrap();
    c.find(Locator::Id("receipt"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    let receipt = downloaded(&downloads, &format!("receipt-{id}.json"));
    let pem = off(|| {
        client()
            .get(server.url("/institution.pub"))
            .send()
            .unwrap()
            .bytes()
            .unwrap()
    });
    let institution = file(&work, "institution.pub", &pem);
    let log_pub = off(|| service::log_key(&server, &work));
    let out = hg(&[
        "submit",
        "check-receipt",
        receipt.to_str().unwrap(),
        "--institution",
        institution.to_str().unwrap(),
        "--document",
        doc.to_str().unwrap(),
        "--log-key",
        log_pub.to_str().unwrap(),
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("valid"));

    // A bad upload through the form: an error page with its status, in words.
    c.goto(&server.url("/")).await.unwrap();
    let junk = file(&work, "junk.bundle", b"not a bundle");
    upload_through_form(&c, &junk, &doc).await;
    // The form posts and the browser navigates: wait for the error page.
    let alert = c
        .wait()
        .at_most(Duration::from_secs(30))
        .for_element(Locator::Css("[role=alert]"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(alert.contains("field bundle"), "{alert}");
    c.close().await.unwrap();
}

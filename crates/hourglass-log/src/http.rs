//! The HTTP side (feature `http`): a log's resources fetched over HTTP(S) with keep-alive, and a
//! witness's `add-checkpoint` called by a log.

use std::io::Read;
use std::time::Duration;

use crate::client::TileSource;
use crate::error::{LogError, Result};

/// How long one request may take.
pub const TIMEOUT: Duration = Duration::from_secs(30);

fn agent(timeout: Duration) -> ureq::Agent {
    ureq::AgentBuilder::new()
        .timeout(timeout)
        .user_agent(concat!("hourglass/", env!("CARGO_PKG_VERSION")))
        .build()
}

/// Refuses a URL that is not `http://` or `https://`, and drops trailing slashes.
pub fn normalize_url(url: &str) -> Result<String> {
    let lower = url.to_ascii_lowercase();
    if !(lower.starts_with("http://") || lower.starts_with("https://")) || url.len() > 2048 {
        return Err(LogError::malformed(
            "URL",
            format!("'{url}' is not an http:// or https:// URL"),
        ));
    }
    Ok(url.trim_end_matches('/').to_string())
}

/// A log served over HTTP under a prefix (`http://host:8080/log`).
#[derive(Debug, Clone)]
pub struct HttpLog {
    agent: ureq::Agent,
    prefix: String,
}

impl HttpLog {
    /// The log under `prefix`.
    pub fn new(prefix: &str) -> Result<Self> {
        Ok(Self {
            agent: agent(TIMEOUT),
            prefix: normalize_url(prefix)?,
        })
    }

    /// The prefix.
    pub fn prefix(&self) -> &str {
        &self.prefix
    }
}

fn read_limited(response: ureq::Response, url: &str, limit: usize) -> Result<Vec<u8>> {
    let mut body = Vec::new();
    response
        .into_reader()
        .take(limit as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| LogError::Fetch {
            url: url.to_string(),
            why: e.to_string(),
        })?;
    if body.len() > limit {
        return Err(LogError::TooLarge {
            what: "a resource the log served",
            limit,
        });
    }
    Ok(body)
}

impl TileSource for HttpLog {
    fn fetch(&self, path: &str, limit: usize) -> Result<Option<Vec<u8>>> {
        let url = self.name(path);
        let mut tries = 0;
        let response = loop {
            match self.agent.get(&url).call() {
                // A log that asks to slow down (429, 503) is waited for, a few times, as long
                // as it asks (at most 10 s each).
                Err(ureq::Error::Status(429 | 503, r)) if tries < 5 => {
                    tries += 1;
                    let wait = r
                        .header("Retry-After")
                        .and_then(|v| v.trim().parse::<u64>().ok())
                        .unwrap_or(1)
                        .min(10);
                    std::thread::sleep(Duration::from_secs(wait));
                }
                other => break other,
            }
        };
        match response {
            Ok(r) => read_limited(r, &url, limit).map(Some),
            Err(ureq::Error::Status(404, _)) => Ok(None),
            Err(ureq::Error::Status(code, r)) => Err(LogError::Fetch {
                url,
                why: format!("HTTP {code} {}", r.status_text()),
            }),
            Err(ureq::Error::Transport(t)) => Err(LogError::Fetch {
                url,
                why: t.to_string(),
            }),
        }
    }

    fn name(&self, path: &str) -> String {
        format!("{}/{path}", self.prefix)
    }
}

/// A witness's answer to `add-checkpoint`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WitnessAnswer {
    /// 200: its cosignature lines.
    Cosigned(Vec<u8>),
    /// 409 with a size: the witness last cosigned a checkpoint of that size.
    Conflict(u64),
    /// Any other refusal: the status and what the witness said.
    Refused {
        /// The HTTP status.
        status: u16,
        /// The body, as text (cut to 500 characters).
        message: String,
    },
}

/// A client of witnesses (keep-alive connections, `timeout` per request).
#[derive(Debug, Clone)]
pub struct WitnessClient {
    agent: ureq::Agent,
}

impl WitnessClient {
    /// A client whose requests give up after `timeout`.
    pub fn new(timeout: Duration) -> Self {
        Self {
            agent: agent(timeout),
        }
    }

    /// POSTs `body` (an [`crate::witness::AddCheckpoint`]) to `<witness>/add-checkpoint`.
    pub fn add_checkpoint(&self, witness: &str, body: &[u8]) -> Result<WitnessAnswer> {
        let url = format!("{}/add-checkpoint", normalize_url(witness)?);
        let fetch = |why: String| LogError::Fetch {
            url: url.clone(),
            why,
        };
        match self
            .agent
            .post(&url)
            .set("Content-Type", "text/plain; charset=utf-8")
            .send_bytes(body)
        {
            Ok(r) => Ok(WitnessAnswer::Cosigned(read_limited(r, &url, 64 * 1024)?)),
            Err(ureq::Error::Status(409, r)) => {
                let is_size = r.content_type().eq_ignore_ascii_case("text/x.tlog.size");
                let text = String::from_utf8_lossy(&read_limited(r, &url, 64)?).into_owned();
                match text.strip_suffix('\n').and_then(|t| t.parse::<u64>().ok()) {
                    Some(size) if is_size => Ok(WitnessAnswer::Conflict(size)),
                    _ => Ok(WitnessAnswer::Refused {
                        status: 409,
                        message: text.chars().take(500).collect(),
                    }),
                }
            }
            Err(ureq::Error::Status(status, r)) => {
                let text = read_limited(r, &url, 4096)
                    .map(|b| String::from_utf8_lossy(&b).into_owned())
                    .unwrap_or_default();
                Ok(WitnessAnswer::Refused {
                    status,
                    message: text.trim().chars().take(500).collect(),
                })
            }
            Err(ureq::Error::Transport(t)) => Err(fetch(t.to_string())),
        }
    }
}

//! The HTTP side (feature `http`): a log's resources fetched over HTTP(S) with keep-alive, and
//! the log's side of a witness's `add-checkpoint` ([`WitnessClient::cosign`]).

use std::io::Read;
use std::time::Duration;

use crate::checkpoint::SignedCheckpoint;
use crate::client::TileSource;
use crate::cosign::{check_known_size, own_cosignature, WitnessEndpoint, MAX_CONFLICTS};
use crate::error::{LogError, Result};
use crate::keys::VerifierKey;
use crate::tree::{consistency_needs, prove_consistency, HashMemo};
use crate::witness::AddCheckpoint;

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

/// A log served over HTTP under a prefix (`http://host:8080/log`). It asks for gzip
/// (`Accept-Encoding`) and decodes gzip-encoded answers (entry bundles, tlog-tiles); the
/// limits of [`TileSource::fetch`] apply to the decoded bytes.
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

    /// Asks `witness` to cosign `checkpoint` (signed by the log key `log`), as C2SP
    /// tlog-witness has a log do: with a consistency proof from the size the witness is
    /// believed to know (`known`, 0 for a witness never asked), made from the stored hashes
    /// `hashes` returns for the (level, index) pairs asked; after a 409 again from the size
    /// the witness names (told to `learnt`, for the log to remember), at most
    /// [`MAX_CONFLICTS`] times. Returns the witness's cosignature line, verified under its
    /// pinned key; every refusal is an error ([`LogError::WitnessRefused`], or what `hashes`
    /// failed with).
    ///
    /// Blocks for the requests: call it off an async runtime's worker threads.
    pub fn cosign<E: From<LogError>>(
        &self,
        witness: &WitnessEndpoint,
        log: &VerifierKey,
        checkpoint: &SignedCheckpoint,
        known: u64,
        mut hashes: impl FnMut(&[(u8, u64)]) -> std::result::Result<HashMemo, E>,
        mut learnt: impl FnMut(u64),
    ) -> std::result::Result<Vec<u8>, E> {
        let size = checkpoint.size();
        let mut old = known;
        for _ in 0..MAX_CONFLICTS {
            check_known_size(old, checkpoint)?;
            let memo = hashes(&consistency_needs(old, size))?;
            let proof = prove_consistency(&memo, old, size)?;
            let body = AddCheckpoint::encode(old, &proof, checkpoint);
            match self.add_checkpoint(&witness.url, &body)? {
                WitnessAnswer::Cosigned(body) => {
                    return Ok(own_cosignature(checkpoint, log, &witness.key, &body)?)
                }
                WitnessAnswer::Conflict(theirs) => {
                    learnt(theirs);
                    old = theirs;
                }
                WitnessAnswer::Refused { status, message } => {
                    return Err(LogError::WitnessRefused(format!(
                        "the witness refused the checkpoint of size {size}: HTTP {status} {message}"
                    ))
                    .into())
                }
            }
        }
        Err(LogError::WitnessRefused("the witness kept answering 409 Conflict".into()).into())
    }

    /// POSTs `body` (an [`AddCheckpoint`]) to `<witness>/add-checkpoint`.
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

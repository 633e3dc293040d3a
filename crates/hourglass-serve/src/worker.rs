//! Verification workers: claim a queued submission, verify its bundle against its set (with
//! the institution's keys, or publicly), sign a receipt, record the verdict.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use hourglass_arith::entropy::OsEntropy;
use hourglass_timelock::anyset::AnySet;
use hourglass_timelock::public::verify_public;
use hourglass_timelock::receipt::{sign_receipt, ReceiptVerdict, Statement};
use hourglass_timelock::submission::{verify_bundle, Bundle, BundleVerdict};
use hourglass_timelock::PuzzleKey;
use zeroize::Zeroizing;

use crate::error::Error;
use crate::store::{Job, Outcome};
use crate::AppState;

/// How long an idle worker waits before looking at the queue again (other servers of one
/// PostgreSQL add work without waking this one).
const POLL: Duration = Duration::from_millis(500);

/// Private sets' keys, parsed once per set (name and digest) and shared by the workers.
/// Parsing checks each key: primality tests and an inverse on the secret primes, in GMP's
/// variable-time code. Done for every upload, that let anyone who can upload have it repeated
/// at will (on a shared machine, traces of the same secret computation as often as wanted),
/// and took milliseconds per key. The sets are few (made by the admin); the keys stay in memory
/// for the process's life, as the vault's key does.
#[derive(Default)]
pub(crate) struct KeyCache(std::sync::Mutex<KeyMap>);

/// Parsed keys by set name and digest.
type KeyMap = HashMap<(String, String), Arc<Vec<PuzzleKey>>>;

impl KeyCache {
    /// The keys of set `name` with digest `sha256`, parsed by `parse` on the first call.
    fn get_or_parse(
        &self,
        name: &str,
        sha256: &str,
        parse: impl FnOnce() -> Result<Vec<PuzzleKey>, Error>,
    ) -> Result<Arc<Vec<PuzzleKey>>, Error> {
        let key = (name.to_owned(), sha256.to_owned());
        if let Some(keys) = self.lock().get(&key) {
            return Ok(keys.clone());
        }
        // Parsed outside the lock (slow); two workers may both parse a new set once.
        let keys = Arc::new(parse()?);
        Ok(self.lock().entry(key).or_insert(keys).clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, KeyMap> {
        // A panic while holding the lock leaves the map itself consistent.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Runs one worker until the process ends.
pub(crate) async fn run(state: Arc<AppState>) {
    loop {
        match state.store.claim().await {
            Ok(Some(job)) => {
                let id = job.row.id.clone();
                if let Err(e) = verify_and_record(&state, job).await {
                    // The claim is released (rolled back or unlisted): retried later.
                    tracing::error!(submission = %id, error = %e, "verification failed; will retry");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
            }
            Ok(None) => {
                let _ = tokio::time::timeout(POLL, state.queued.notified()).await;
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot read the queue");
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
        }
    }
}

async fn verify_and_record(state: &Arc<AppState>, job: Job) -> Result<(), Error> {
    let set = state
        .store
        .set(&job.row.set_name)
        .await?
        .ok_or_else(|| Error::Vault {
            set: job.row.set_name.clone(),
        })?;
    let sealed = set.sealed_keys.clone();
    let set_sha256 = set.set_sha256.clone();
    let st = state.clone();
    let bundle_text = job.row.bundle.clone();
    let digest = job.row.document_digest.clone();
    let set_json = set.set_json.clone();
    let set_name = set.name.clone();
    let statement_base = Statement {
        institution: String::new(),
        submission: job.row.id.clone(),
        set: set.name.clone(),
        set_sha256: set.set_sha256.clone(),
        document_sha256: job.row.document_sha256.clone(),
        bundle_sha256: job.row.bundle_sha256.clone(),
        received_unix: (job.row.received_ms / 1000).max(0) as u64,
        verdict: ReceiptVerdict::Invalid,
        credited_ms: 0,
        reason: String::new(),
    };
    let (outcome, elapsed) = tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        // A bundle that cannot even be checked (a link whose number does not parse, say) is
        // invalid, with the reason: never an error retried forever, which would let one upload
        // occupy a worker for good.
        let keys = match &sealed {
            Some(sealed) => Some(st.keys.get_or_parse(&set_name, &set_sha256, || {
                parse_keys(&set_name, &st.data.open_sealed(&set_name, sealed)?)
            })?),
            None => None,
        };
        let (verdict, reason) = match verify(&set_json, &set_name, keys, &bundle_text, &digest)? {
            Ok(verdict) => {
                let reason = reason_of(&verdict);
                (verdict, reason)
            }
            Err(why) => (
                BundleVerdict::of(false, Vec::new()),
                Some(format!("the bundle cannot be verified: {why}")),
            ),
        };
        let elapsed = start.elapsed();
        let credited_ms = (verdict.credited_secs * 1000.0).round() as i64;
        let mut statement = statement_base;
        statement.verdict = if verdict.valid {
            ReceiptVerdict::Valid
        } else {
            ReceiptVerdict::Invalid
        };
        statement.credited_ms = credited_ms.max(0) as u64;
        statement.reason = reason.clone().unwrap_or_default();
        let receipt = sign_receipt(&statement, st.data.receipt_key(), &mut OsEntropy)?;
        Ok::<_, Error>((
            Outcome {
                valid: verdict.valid,
                credited_ms,
                links_json: serde_json::to_string(&verdict.links).unwrap_or_default(),
                reason,
                receipt,
                verify_us: elapsed.as_micros() as i64,
            },
            elapsed,
        ))
    })
    .await
    .map_err(|e| Error::Serve(std::io::Error::other(e.to_string())))??;
    state.metrics.verified(elapsed, outcome.valid);
    state
        .store
        .finish(job, &outcome, &state.server_id, now_ms())
        .await
}

/// Verifies a bundle against a stored set, stopping at the first invalid link: a link's
/// verdict depends only on the links before it, so prefixes of 1, 2, 4, ... links are verified
/// until one has an invalid link or the whole bundle is done. A bundle of many bogus links (each
/// costs the verifier a private-key operation or a proof check, and costs its maker nothing)
/// thus costs about one check, while an honest bundle costs at most twice its links' checks.
fn verify(
    set_json: &str,
    set_name: &str,
    keys: Option<Arc<Vec<PuzzleKey>>>,
    bundle: &str,
    digest_hex: &str,
) -> Result<Result<BundleVerdict, hourglass_timelock::Error>, Error> {
    let bundle = match Bundle::from_json(bundle) {
        Ok(b) => b,
        Err(e) => return Ok(Err(e)),
    };
    let digest = hex::decode(digest_hex).unwrap_or_default();
    let set = AnySet::from_json(set_json)?;
    let keys = match &set {
        AnySet::Public(_) => Arc::new(Vec::new()),
        AnySet::Private(_) => keys.ok_or_else(|| Error::Vault {
            set: set_name.into(),
        })?,
    };
    // The bundle's own faults are the inner error; the set and keys are ours (outer).
    let check = |b: &Bundle| -> Result<BundleVerdict, hourglass_timelock::Error> {
        match &set {
            AnySet::Public(set) => verify_public(set, b, &digest),
            AnySet::Private(_) => verify_bundle(b, &digest, &keys, 1, &mut OsEntropy),
        }
    };
    let mut len = 1;
    loop {
        len = len.min(bundle.links.len());
        let mut prefix = bundle.clone();
        prefix.links.truncate(len);
        let verdict = match check(&prefix) {
            Ok(v) => v,
            Err(e) => return Ok(Err(e)),
        };
        let complete = len == bundle.links.len();
        // Complete, or invalid already: the links after an invalid prefix are not checked
        // (nor listed), and nothing is credited.
        if complete || !verdict.valid {
            return Ok(Ok(verdict));
        }
        len *= 2;
    }
}

/// The private keys of set `set_name` from the vault's opened bytes (a JSON list of key files).
fn parse_keys(set_name: &str, opened: &[u8]) -> Result<Vec<PuzzleKey>, Error> {
    let texts: Zeroizing<Vec<String>> =
        Zeroizing::new(serde_json::from_slice(opened).map_err(|_| Error::Vault {
            set: set_name.into(),
        })?);
    Ok(texts
        .iter()
        .map(|t| PuzzleKey::from_json(t))
        .collect::<Result<Vec<_>, _>>()?)
}

/// One sentence for an invalid verdict.
fn reason_of(v: &BundleVerdict) -> Option<String> {
    if v.valid {
        return None;
    }
    if !v.document_matches {
        return Some("the document does not match the bundle's digest".into());
    }
    if v.links.is_empty() {
        return Some("the bundle has no links".into());
    }
    v.links.iter().find(|l| !l.valid).map(|l| {
        format!(
            "link {}: {}",
            l.index + 1,
            l.reason.as_deref().unwrap_or("does not verify")
        )
    })
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_s_keys_are_parsed_once_and_a_failure_is_not_kept() {
        let cache = KeyCache::default();
        let calls = std::cell::Cell::new(0);
        let parse = || {
            calls.set(calls.get() + 1);
            Ok(Vec::new())
        };
        let a = cache.get_or_parse("s", "d1", parse).unwrap();
        let b = cache.get_or_parse("s", "d1", parse).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(calls.get(), 1);
        // Another digest (or name) is another entry.
        cache.get_or_parse("s", "d2", parse).unwrap();
        cache.get_or_parse("t", "d1", parse).unwrap();
        assert_eq!(calls.get(), 3);
        // A set whose keys do not parse is tried again next time.
        let fail = || Err(Error::Vault { set: "u".into() });
        assert!(cache.get_or_parse("u", "d", fail).is_err());
        cache.get_or_parse("u", "d", parse).unwrap();
        assert_eq!(calls.get(), 4);
    }
}

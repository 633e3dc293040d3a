//! Verification workers: claim a queued submission, have the library verify its bundle (with
//! the institution's keys, or publicly), sign a receipt, record the verdict. A job that fails
//! (an internal error, a panic) is tried again a bounded number of times, then ends in its
//! final `error` state with the reason: one upload never holds a worker for good.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use hourglass_arith::entropy::OsEntropy;
use hourglass_timelock::anyset::AnySet;
use hourglass_timelock::public::OriginPins;
use hourglass_timelock::receipt::{sign_receipt, sign_receipt_v1, ReceiptVerdict, Statement};
use hourglass_timelock::verdict::{credited_ms, LinkPolicy, Verifier, VerifyOptions};
use hourglass_timelock::{Bundle, PuzzleKey};
use zeroize::Zeroizing;

use crate::error::Error;
use crate::store::{Issued, Job, JobRow, Outcome, SetRow};
use crate::AppState;

/// How long an idle worker waits before looking at the queue again (other servers of one
/// PostgreSQL add work without waking this one).
const POLL: Duration = Duration::from_millis(500);

/// Each set's verifier, made once (name and digest) and shared by the workers. A private set's
/// verifier holds its parsed keys: parsing checks each key (primality tests and an inverse on
/// the secret primes, in GMP's variable-time code); done for every upload, that let anyone who
/// can upload have it repeated at will (on a shared machine, traces of the same secret
/// computation as often as wanted), and took milliseconds per key. The sets are few (made by
/// the admin); the keys stay in memory for the process's life, as the vault's key does.
#[derive(Default)]
pub(crate) struct VerifierCache(std::sync::Mutex<VerifierMap>);

/// Verifiers by set name and digest.
type VerifierMap = HashMap<(String, String), Verifier>;

impl VerifierCache {
    /// The verifier of set `name` with digest `sha256`, made by `make` on the first call.
    fn get_or_make(
        &self,
        name: &str,
        sha256: &str,
        make: impl FnOnce() -> Result<Verifier, Error>,
    ) -> Result<Verifier, Error> {
        let key = (name.to_owned(), sha256.to_owned());
        if let Some(v) = self.lock().get(&key) {
            return Ok(v.clone());
        }
        // Made outside the lock (slow); two workers may both make a new set's once.
        let verifier = make()?;
        Ok(self.lock().entry(key).or_insert(verifier).clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VerifierMap> {
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
            Ok(Some(job)) => process(&state, job).await,
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

/// Verifies one claimed job and records its verdict, or counts its failure: tried again later,
/// or final (status `error`, with the reason) after the last try.
async fn process(state: &Arc<AppState>, job: Job) {
    let id = job.row.id.clone();
    let failure = match verify_job(state, job.row.clone()).await {
        Ok(outcome) => {
            let took = Duration::from_micros(u64::try_from(outcome.verify_us).unwrap_or(0));
            state.metrics.verified(took, outcome.verdict.valid);
            match state
                .store
                .finish(job, &outcome, &state.server_id, now_ms())
                .await
            {
                Ok(()) => {
                    state.log.wake.notify_one();
                    return;
                }
                // The claim is released: verified again later.
                Err(e) => e.to_string(),
            }
        }
        Err(e) => {
            let reason = e.to_string();
            match state.store.fail(job, &reason, now_ms()).await {
                Ok(true) => {
                    tracing::error!(submission = %id, error = %reason, "verification failed; final");
                    return;
                }
                Ok(false) => reason,
                Err(db) => format!("{reason} (not recorded: {db})"),
            }
        }
    };
    tracing::error!(submission = %id, error = %failure, "verification failed; will retry");
    tokio::time::sleep(Duration::from_secs(1)).await;
}

/// The verifier of a stored set.
fn make_verifier(state: &AppState, set: &SetRow) -> Result<Verifier, Error> {
    let unusable = |source| Error::SetUnusable {
        set: set.name.clone(),
        source,
    };
    match AnySet::from_json(&set.set_json).map_err(unusable)? {
        AnySet::Private(_) => {
            let sealed = set.sealed_keys.as_ref().ok_or_else(|| Error::Vault {
                set: set.name.clone(),
            })?;
            let keys = parse_keys(&set.name, &state.data.open_sealed(&set.name, sealed)?)?;
            Verifier::private(keys).map_err(unusable)
        }
        // The service makes public sets on RSA-2048 only; a set whose origin needs pins it
        // does not hold is refused, never verified as if trusted.
        AnySet::Public(public) => {
            Verifier::public(public, &OriginPins::default()).map_err(unusable)
        }
    }
}

/// Verifies a claimed job and signs its receipt: what [`crate::store::Store::finish`] records.
async fn verify_job(state: &Arc<AppState>, job: JobRow) -> Result<Outcome, Error> {
    let set = state
        .store
        .set(&job.set_name)
        .await?
        .ok_or_else(|| Error::Vault {
            set: job.set_name.clone(),
        })?;
    let document = state.store.document(&job.id).await?;
    let st = state.clone();
    let bundle_text = job.bundle.clone();
    let token = job.timestamp_token.clone();
    let statement_base = Statement {
        institution: String::new(),
        submission: job.id.clone(),
        set: set.name.clone(),
        set_sha256: set.set_sha256.clone(),
        document_sha256: job.document_sha256.clone(),
        bundle_sha256: job.bundle_sha256.clone(),
        received_unix: (job.received_ms / 1000).max(0) as u64,
        timestamp_sha256: None,
        log: Some(state.data.log_key().name().to_string()),
        verdict: ReceiptVerdict::Invalid,
        credited_ms: 0,
        reason: String::new(),
    };
    tokio::task::spawn_blocking(move || {
        let start = Instant::now();
        let verifier = st
            .verifiers
            .get_or_make(&set.name, &set.set_sha256, || make_verifier(&st, &set))?;
        // The upload refused bundles that do not parse; a stored one that no longer does is
        // the database's fault, an error.
        let bundle = Bundle::from_json(&bundle_text)?;
        let digest = verifier
            .digest(document.as_slice())
            .map_err(|e| Error::Serve(std::io::Error::other(e)))?;
        // One thread per worker (the workers run side by side); links checked until the first
        // invalid one (a bundle of many bogus links costs about one check).
        let options = VerifyOptions {
            threads: 1,
            links: LinkPolicy::StopAtFirstInvalid,
        };
        let verdict = verifier.verify(&bundle, &digest, &options, &mut OsEntropy)?;
        let elapsed = start.elapsed();
        let mut statement = statement_base;
        statement.verdict = if verdict.valid {
            ReceiptVerdict::Valid
        } else {
            ReceiptVerdict::Invalid
        };
        statement.credited_ms = credited_ms(verdict.credited_secs);
        statement.reason = verdict.reason.clone().unwrap_or_default();
        // Every receipt goes into the transparency log (version 3: its statement names the
        // log). Rows stored before the service stamped submissions keep a version 1 receipt
        // (the institution's clock), handed out at once outside the log: stamping them now
        // would change their time, and a log entry needs the token's time.
        let issued = match &token {
            Some(token) => {
                let signed =
                    sign_receipt(&statement, token, st.data.receipt_key(), &mut OsEntropy)?;
                let limit = hourglass_log::tiles::MAX_ENTRY_BYTES;
                if signed.entry().len() > limit {
                    return Err(Error::Log(format!(
                        "the signed receipt is {} bytes, more than a log entry holds ({limit}): \
                         is the TSA certificate chain (--tsa-cert) that long?",
                        signed.entry().len()
                    )));
                }
                Issued::ForLog(signed.entry().to_vec())
            }
            None => Issued::Unlogged(
                sign_receipt_v1(&statement, st.data.receipt_key(), &mut OsEntropy)?.unlogged()?,
            ),
        };
        Ok::<_, Error>(Outcome {
            credited_ms: i64::try_from(statement.credited_ms).unwrap_or(i64::MAX),
            verdict,
            issued,
            verify_us: i64::try_from(elapsed.as_micros()).unwrap_or(i64::MAX),
        })
    })
    .await
    .map_err(|e| {
        Error::Serve(std::io::Error::other(format!(
            "the verification stopped: {e}"
        )))
    })?
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

    fn verifier() -> Verifier {
        let set = hourglass_timelock::public::PublicSet::new(
            "cache",
            hourglass_vdf::group::RsaGroup::rsa_2048().modulus().clone(),
            hourglass_timelock::public::ModulusOrigin::Rsa2048,
            vec![10],
            1.0,
            false,
            hourglass_timelock::PuzzleHash::Sha256,
            hourglass_timelock::public::ProofScheme::Wesolowski,
            "2026-11-27T00:00:00Z",
        )
        .unwrap();
        Verifier::public(set, &OriginPins::default()).unwrap()
    }

    #[test]
    fn a_set_s_verifier_is_made_once_and_a_failure_is_not_kept() {
        let cache = VerifierCache::default();
        let calls = std::cell::Cell::new(0);
        let parse = || {
            calls.set(calls.get() + 1);
            Ok(verifier())
        };
        cache.get_or_make("s", "d1", parse).unwrap();
        cache.get_or_make("s", "d1", parse).unwrap();
        assert_eq!(calls.get(), 1);
        // Another digest (or name) is another entry.
        cache.get_or_make("s", "d2", parse).unwrap();
        cache.get_or_make("t", "d1", parse).unwrap();
        assert_eq!(calls.get(), 3);
        // A set whose keys do not parse is tried again next time.
        let fail = || Err(Error::Vault { set: "u".into() });
        assert!(cache.get_or_make("u", "d", fail).is_err());
        cache.get_or_make("u", "d", parse).unwrap();
        assert_eq!(calls.get(), 4);
    }
}

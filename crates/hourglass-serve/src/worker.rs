//! Verification workers: claim a queued submission, have the library verify its bundle (with
//! the institution's keys, or publicly), sign a receipt, record the verdict. A job that fails
//! (an internal error, a panic) is tried again a bounded number of times, then ends in its
//! final `error` state with the reason: one upload never holds a worker for good.

use std::sync::Arc;
use std::time::{Duration, Instant};

use hourglass_arith::entropy::OsEntropy;
use hourglass_receipt::{sign_receipt, sign_receipt_v1, ReceiptVerdict, Statement};
use hourglass_timelock::verdict::{credited_ms, LinkPolicy, VerifyOptions};
use hourglass_timelock::Bundle;

use crate::clock::now_ms;
use crate::error::Error;
use crate::state::AppState;
use crate::store::{Issued, Job, JobRow, Outcome};

/// How long an idle worker waits before looking at the queue again (other servers of one
/// PostgreSQL add work without waking this one).
const POLL: Duration = Duration::from_millis(500);

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
            state.metrics.verified(took, outcome.verdict.is_valid());
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

/// Verifies a claimed job and signs its receipt: what [`crate::store::Store::finish`] records.
async fn verify_job(state: &Arc<AppState>, job: JobRow) -> Result<Outcome, Error> {
    let set = state
        .store
        .set(&job.set_name)
        .await?
        .ok_or_else(|| Error::Vault {
            set: job.set_name.clone(),
        })?;
    // A document that did not match its bundle's digest was not kept: its digest was.
    let (document, recorded) = match &job.discarded_digest {
        Some(digest) => (
            Vec::new(),
            Some(hex::decode(digest).map_err(|_| Error::Corrupt {
                what: format!("the recorded document digest of submission {}", job.id),
            })?),
        ),
        None => (state.store.document(&job.id).await?, None),
    };
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
        let verifier = st.verifiers.of_set(&st.data, &set)?;
        // The upload refused bundles that do not parse; a stored one that no longer does is
        // the database's fault, an error.
        let bundle = Bundle::from_json(&bundle_text)?;
        let digest = match recorded {
            Some(bytes) => verifier.recorded_digest(bytes),
            None => verifier
                .digest(document.as_slice())
                .map_err(|e| Error::Serve(std::io::Error::other(e)))?,
        };
        // One thread per worker (the workers run side by side); links checked until the first
        // invalid one (a bundle of many bogus links costs about one check).
        let options = VerifyOptions {
            threads: 1,
            links: LinkPolicy::StopAtFirstInvalid,
        };
        let verdict = verifier.verify(&bundle, &digest, &options, &mut OsEntropy)?;
        let elapsed = start.elapsed();
        let mut statement = statement_base;
        statement.verdict = if verdict.is_valid() {
            ReceiptVerdict::Valid
        } else {
            ReceiptVerdict::Invalid
        };
        statement.credited_ms = credited_ms(verdict.credited_secs());
        statement.reason = verdict.reason().unwrap_or_default().to_string();
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

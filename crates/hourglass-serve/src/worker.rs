//! Verification workers: claim a queued submission, verify its bundle against its set (with
//! the institution's keys, or publicly), sign a receipt, record the verdict.

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
    let keys = match &set.sealed_keys {
        Some(sealed) => Some(state.data.open_sealed(&set.name, sealed)?),
        None => None,
    };
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
    keys: Option<Zeroizing<Vec<u8>>>,
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
        AnySet::Public(_) => Vec::new(),
        AnySet::Private(_) => {
            let keys = keys.ok_or_else(|| Error::Vault {
                set: set_name.into(),
            })?;
            let texts: Zeroizing<Vec<String>> =
                Zeroizing::new(serde_json::from_slice(&keys).map_err(|_| Error::Vault {
                    set: set_name.into(),
                })?);
            texts
                .iter()
                .map(|t| PuzzleKey::from_json(t))
                .collect::<Result<Vec<_>, _>>()?
        }
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

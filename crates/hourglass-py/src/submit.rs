//! `hourglass.submit`: sealing, the dated verdict on a bundle, and receipts.

use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, SystemTime};

use hourglass_arith::entropy::OsEntropy;
use hourglass_dkg::transcript::certificates_from_pem;
use hourglass_receipt::{check_receipt, ReceiptReport};
use hourglass_timelock::anyset::AnySet;
use hourglass_timelock::bundle::{Bundle, SealEnd, SealOptions};
use hourglass_timelock::dated::{DatedVerdict, Reception};
use hourglass_timelock::public::{CommitteePins, OriginPins};
use hourglass_timelock::verdict::{unix_secs, Verifier, VerifyOptions};
use hourglass_timelock::PuzzleKey;
use hourglass_timestamp::{Evidence, TokenRefused};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::common::{checkpoint, err, text, Watch};
use crate::log::log_pins;
use crate::rsa::PublicKey;
use crate::timestamp::{tsa_anchors, untrusted_certificates};

/// Seals `document` against a published set (`set.json` of either kind): solves a chain of
/// puzzles (a private set) or proof-carrying links (a public set) until `expect_secs` (or
/// `until_secs`) is credited, resuming `bundle` (JSON) when given. `on_link` receives the
/// bundle's JSON after each finished link (save it: it is what you submit, and what resumes).
/// `checkpoint` keeps the link in progress. Returns the bundle (JSON).
#[pyfunction]
#[pyo3(signature = (document, set, checkpoint, expect_secs=None, until_secs=None, bundle=None, on_link=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn submit_seal(
    py: Python<'_>,
    document: &[u8],
    set: &[u8],
    checkpoint: PathBuf,
    expect_secs: Option<f64>,
    until_secs: Option<f64>,
    bundle: Option<&[u8]>,
    on_link: Option<PyObject>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let set = AnySet::from_json(&text(set, "set")?).map_err(err)?;
    let digest = set.hash().digest(document);
    let mut bundle = match bundle {
        Some(b) => {
            let b = Bundle::from_json(&text(b, "bundle")?).map_err(err)?;
            set.check_resume(&b, &digest).map_err(err)?;
            b
        }
        None => set.new_bundle(&digest),
    };
    let options = SealOptions {
        expect_secs,
        until_credited_secs: until_secs,
        open_ended: false,
        checkpoint: self::checkpoint(Some(checkpoint))?
            .ok_or_else(|| err("a checkpoint path is needed"))?,
        checkpoint_every: Duration::from_secs(60),
    };
    let watch = Watch::new(progress);
    let mut saved = |b: &Bundle| -> hourglass_timelock::Result<()> {
        if let Some(cb) = &on_link {
            let json = b.to_json();
            Python::with_gil(|py| cb.call1(py, (json,)).map(drop)).map_err(|e| {
                if let Ok(mut slot) = watch.error.lock() {
                    slot.get_or_insert(e);
                }
                watch.stop.store(true, Ordering::SeqCst);
                hourglass_timelock::Error::OnLink("the on_link callback raised".into())
            })?;
        }
        Ok(())
    };
    let end = py.allow_threads(|| {
        set.seal(
            &mut bundle,
            &options,
            &watch.stop,
            &mut |_, _, p| watch.report(p.done, p.total),
            &mut saved,
        )
    });
    match end {
        Ok(SealEnd::Reached) => Ok(bundle.to_json()),
        Ok(SealEnd::Stopped) => Err(watch.stopped(0, true)),
        Err(e) => Err(watch
            .error
            .lock()
            .ok()
            .and_then(|mut s| s.take())
            .unwrap_or_else(|| err(e))),
    }
}

/// The tokens, the CA certificate files and the untrusted certificate files of
/// `timestamps=`, `tsa_cas=` and `untrusted=`.
type TimestampArgs = (Vec<Vec<u8>>, Vec<Vec<u8>>, Vec<Vec<u8>>);

/// `timestamps=` and `tsa_cas=` held to the CLI's argument rules (`--timestamp` needs
/// `--tsa-ca` and conflicts with `--received`), neither empty; a `ValueError` otherwise.
fn timestamp_args(
    timestamps: Option<Vec<Vec<u8>>>,
    tsa_cas: Option<Vec<Vec<u8>>>,
    untrusted: Option<Vec<Vec<u8>>>,
    received: bool,
) -> PyResult<Option<TimestampArgs>> {
    let refuse = |why: &str| Err(PyValueError::new_err(why.to_string()));
    match (timestamps, tsa_cas) {
        (None, None) => Ok(None),
        (None, Some(_)) => {
            refuse("tsa_cas= is only for timestamps=: pass the timestamps of the bundle too")
        }
        (Some(_), _) if received => refuse(
            "pass timestamps= or received=, not both: the timestamps say when the bundle was received",
        ),
        (Some(t), _) if t.is_empty() => {
            refuse("timestamps= is empty: pass at least one .tsr reply or token")
        }
        (Some(_), None) => refuse(
            "timestamps= needs tsa_cas=: the CA certificates (PEM or DER) the TSAs must chain to",
        ),
        (Some(_), Some(c)) if c.is_empty() => refuse(
            "tsa_cas= is empty: pass the CA certificates (PEM or DER) the TSAs must chain to",
        ),
        (Some(t), Some(c)) => Ok(Some((t, c, untrusted.unwrap_or_default()))),
    }
}

/// Checks `tokens` (named `timestamps[i]`) against the CA certificates `cas` and the bundle
/// file's bytes with the library's [`Evidence::check`]: the evidence, or the token refused as a
/// negative verdict; a refusal that is no verdict (bytes that are not a token) is raised.
fn check_timestamps(
    py: Python<'_>,
    bundle: &[u8],
    (tokens, cas, untrusted): TimestampArgs,
) -> PyResult<Result<Evidence, TokenRefused>> {
    let anchors = tsa_anchors(&cas)?;
    let untrusted = untrusted_certificates(&untrusted)?;
    let named: Vec<(String, Vec<u8>)> = tokens
        .into_iter()
        .enumerate()
        .map(|(i, t)| (format!("timestamps[{i}]"), t))
        .collect();
    match py.allow_threads(|| Evidence::check(bundle, &named, &untrusted, &anchors)) {
        Ok(evidence) => Ok(Ok(evidence)),
        Err(refused) if refused.error.is_verdict() => Ok(Err(refused)),
        Err(e) => Err(err(e)),
    }
}

/// Verifies a bundle for `document` with the library's one verdict: with the institution's
/// private key files (`keys`, the `.key` texts) for a private set, or with the public `set`
/// (and, for a committee's modulus, its signed `transcript` and the members' certificates
/// `committee_certs`, PEM) for a public one. `received` and `deadline` (RFC 3339) date the
/// verdict; or `timestamps` (RFC 3161 replies or tokens over the bundle's bytes, checked
/// against the CA certificates `tsa_cas`) say when the bundle was received. Returns the dated
/// verdict as JSON, the document `hourglass submit verify --json` prints, with
/// `received_from` and `timestamps`.
#[pyfunction]
#[pyo3(signature = (bundle, document, keys=None, set=None, transcript=None, committee_certs=None, received=None, deadline=None, timestamps=None, tsa_cas=None, untrusted=None))]
#[allow(clippy::too_many_arguments)]
fn submit_verify(
    py: Python<'_>,
    bundle: &[u8],
    document: &[u8],
    keys: Option<Vec<Vec<u8>>>,
    set: Option<&[u8]>,
    transcript: Option<&[u8]>,
    committee_certs: Option<Vec<Vec<u8>>>,
    received: Option<&str>,
    deadline: Option<&str>,
    timestamps: Option<Vec<Vec<u8>>>,
    tsa_cas: Option<Vec<Vec<u8>>>,
    untrusted: Option<Vec<Vec<u8>>>,
) -> PyResult<String> {
    let stamps = timestamp_args(timestamps, tsa_cas, untrusted, received.is_some())?;
    let bundle_bytes = bundle;
    let bundle = Bundle::from_json(&text(bundle, "bundle")?).map_err(err)?;
    let verifier = match (keys, set) {
        (Some(keys), None) => {
            let keys = keys
                .iter()
                .map(|k| PuzzleKey::from_json(&text(k, "key")?).map_err(err))
                .collect::<PyResult<Vec<_>>>()?;
            Verifier::private(keys).map_err(err)?
        }
        (None, Some(set)) => {
            let AnySet::Public(set) = AnySet::from_json(&text(set, "set")?).map_err(err)? else {
                return Err(err("a private set is verified with its keys: pass keys="));
            };
            let committee = match transcript {
                Some(t) => Some(CommitteePins {
                    transcript: text(t, "transcript")?,
                    certificates: committee_certs
                        .unwrap_or_default()
                        .iter()
                        .map(|pem| certificates_from_pem(pem).map_err(err))
                        .collect::<PyResult<Vec<_>>>()?
                        .concat(),
                }),
                None => None,
            };
            Verifier::public(set, &OriginPins { committee }).map_err(err)?
        }
        _ => {
            return Err(err(
                "pass keys= (a private set) or set= (a public set), not both",
            ))
        }
    };
    let time = |what: &str, t: Option<&str>| -> PyResult<Option<u64>> {
        t.map(|t| {
            humantime::parse_rfc3339_weak(t)
                .map(unix_secs)
                .map_err(|e| err(format!("{what}: {e}")))
        })
        .transpose()
    };
    let received = time("received", received)?;
    let deadline = time("deadline", deadline)?;
    // Timestamps first, as the CLI: a token that cannot be read is raised before any check.
    let timestamps = stamps
        .map(|args| check_timestamps(py, bundle_bytes, args))
        .transpose()?;
    let digest = verifier.digest(document).map_err(err)?;
    let verdict = py
        .allow_threads(|| {
            verifier.verify(&bundle, &digest, &VerifyOptions::default(), &mut OsEntropy)
        })
        .map_err(err)?;
    let reception = match timestamps {
        Some(checked) => Reception::Timestamps(checked),
        None => Reception::Stated {
            given: received.map(|r| SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(r)),
            now: SystemTime::now(),
        },
    };
    serde_json::to_string(&DatedVerdict::new(verdict, reception, deadline)).map_err(err)
}

/// Checks a receipt (the bytes of a receipt file) with the library's `check_receipt`:
/// the institution's public key (PEM), the CA certificates its token may chain to, and, for a
/// receipt in a transparency log, the log's key and witnesses (key texts) and the quorum.
/// Returns JSON, the library's receipt verdict (`check-receipt --json` prints the same): its
/// statement and evidence with `valid` (and `reason` when not), or, for a receipt that does not
/// check out (forged, another institution's, not in the pinned log, too few cosignatures),
/// `{"valid": false, "authentic": false, "reason": ...}`. Input
/// that cannot be read, or a receipt that claims a log with no `log_key=`, raises.
#[pyfunction]
#[pyo3(signature = (receipt, institution, document=None, tsa_cas=None, log_key=None, witness_keys=None, witness_quorum=None))]
#[allow(clippy::too_many_arguments)]
fn submit_check_receipt(
    py: Python<'_>,
    receipt: &[u8],
    institution: &[u8],
    document: Option<&[u8]>,
    tsa_cas: Option<Vec<Vec<u8>>>,
    log_key: Option<&str>,
    witness_keys: Option<Vec<String>>,
    witness_quorum: Option<usize>,
) -> PyResult<String> {
    let institution = PublicKey::load(institution, None)?.0;
    let cas = tsa_anchors(&tsa_cas.unwrap_or_default())?;
    if log_key.is_none() && (witness_keys.is_some() || witness_quorum.is_some()) {
        return Err(PyValueError::new_err("witness_keys= needs log_key="));
    }
    let pins = log_key
        .map(|k| log_pins(k, witness_keys, witness_quorum))
        .transpose()?;
    let checked = py.allow_threads(|| check_receipt(receipt, &institution, &cas, pins.as_ref()));
    let report = ReceiptReport::judge(checked, |c| {
        document.map(|d| c.statement.document_matches(d).unwrap_or(false))
    })
    .map_err(err)?;
    serde_json::to_string(&report).map_err(err)
}

/// Adds this module's functions and classes to `hourglass._native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(submit_seal, m)?)?;
    m.add_function(wrap_pyfunction!(submit_verify, m)?)?;
    m.add_function(wrap_pyfunction!(submit_check_receipt, m)?)?;
    Ok(())
}

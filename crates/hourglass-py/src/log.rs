//! `hourglass.log`: the audit and search of a transparency log of receipts.

use std::path::PathBuf;

use hourglass_log::checkpoint::LogPins;
use hourglass_log::http::HttpLog;
use hourglass_log::witness::KnownCheckpoint;
use hourglass_receipt::{audit_log, search_log, EntryFilter};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::common::err;
use crate::rsa::PublicKey;

/// The pins of a transparency log from key texts (`name+id+base64`).
pub(crate) fn log_pins(
    log_key: &str,
    witness_keys: Option<Vec<String>>,
    witness_quorum: Option<usize>,
) -> PyResult<LogPins> {
    let witnesses = witness_keys.unwrap_or_default();
    if witness_quorum.is_some_and(|q| q > witnesses.len()) {
        return Err(PyValueError::new_err(
            "witness_quorum= is larger than the number of witness_keys= given",
        ));
    }
    LogPins::parse(log_key, &witnesses, witness_quorum).map_err(err)
}

/// The institution key of `institution=` (PEM), if given.
fn institution_key(institution: Option<&[u8]>) -> PyResult<Option<hourglass_rsa::PublicKey>> {
    institution
        .map(|k| PublicKey::load(k, None).map(|k| k.0))
        .transpose()
}

/// The log under the URL prefix `url`, its pins, and the institution's key (PEM) if given: what
/// an audit and a search start from.
fn pinned_log(
    url: &str,
    log_key: &str,
    witness_keys: Option<Vec<String>>,
    witness_quorum: Option<usize>,
    institution: Option<&[u8]>,
) -> PyResult<(HttpLog, LogPins, Option<hourglass_rsa::PublicKey>)> {
    let pins = log_pins(log_key, witness_keys, witness_quorum)?;
    let institution = institution_key(institution)?;
    let source = HttpLog::new(url).map_err(err)?;
    Ok((source, pins, institution))
}

/// Audits the transparency log under the URL prefix `url` (the library's `audit_log`):
/// its checkpoint under the pinned keys, every entry, and that it extends the checkpoint saved
/// at `state` (a path, read if it exists, written only when the log verifies). Returns JSON:
/// `valid`, `checkpoint`, `previous`, `new_entries` (each summarised as `log verify --json`
/// does; with `institution`, PEM, whether it signed each), `trust`, or `valid` false and
/// `reason` for a log that forks, rewrote its history or does not verify.
#[pyfunction]
#[pyo3(signature = (url, log_key, state=None, witness_keys=None, witness_quorum=None, institution=None))]
fn log_verify(
    py: Python<'_>,
    url: &str,
    log_key: &str,
    state: Option<PathBuf>,
    witness_keys: Option<Vec<String>>,
    witness_quorum: Option<usize>,
    institution: Option<&[u8]>,
) -> PyResult<String> {
    let (source, pins, institution) =
        pinned_log(url, log_key, witness_keys, witness_quorum, institution)?;
    let previous = state
        .as_deref()
        .map(|p| KnownCheckpoint::load(p, pins.log()).map_err(err))
        .transpose()?
        .flatten();
    let audit = py
        .allow_threads(|| audit_log(&source, &pins, previous.as_ref(), institution.as_ref()))
        .map_err(err)?;
    if let (Some(next), Some(path)) = (audit.state_to_save(), &state) {
        next.save(path).map_err(err)?;
    }
    serde_json::to_string(&audit).map_err(err)
}

/// Every receipt in the transparency log under `url` for `document` (its bytes) or for the set
/// named `set`, the whole log verified first (as `log_verify`). Returns JSON: `checkpoint`,
/// `entries_read`, `found` (summaries), `trust`; a log that does not verify raises.
#[pyfunction]
#[pyo3(signature = (url, log_key, document=None, set=None, witness_keys=None, witness_quorum=None, institution=None))]
#[allow(clippy::too_many_arguments)]
fn log_search(
    py: Python<'_>,
    url: &str,
    log_key: &str,
    document: Option<&[u8]>,
    set: Option<String>,
    witness_keys: Option<Vec<String>>,
    witness_quorum: Option<usize>,
    institution: Option<&[u8]>,
) -> PyResult<String> {
    let (source, pins, institution) =
        pinned_log(url, log_key, witness_keys, witness_quorum, institution)?;
    let filter = match (document, set) {
        (Some(d), None) => EntryFilter::document(d).map_err(err)?,
        (None, Some(s)) => EntryFilter::Set(s),
        _ => return Err(PyValueError::new_err("pass document= or set=, one of them")),
    };
    let search = py
        .allow_threads(|| search_log(&source, &pins, &filter, institution.as_ref()))
        .map_err(err)?;
    serde_json::to_string(&search).map_err(err)
}

/// Adds this module's functions and classes to `hourglass._native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(log_verify, m)?)?;
    m.add_function(wrap_pyfunction!(log_search, m)?)?;
    Ok(())
}

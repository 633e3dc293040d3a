//! `hourglass.timestamp`: RFC 3161 tokens verified against the anchors the caller gives.

use hourglass_timestamp::{anchors_from_pem, verdict_json, verify_token_for, Covered, TsaAnchor};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::common::err;

/// The anchors of `tsa_cas`: every certificate of each file (PEM, several per file, or DER),
/// each a CA certificate of any key type.
pub(crate) fn tsa_anchors(tsa_cas: &[Vec<u8>]) -> PyResult<Vec<TsaAnchor>> {
    let mut anchors = Vec::new();
    for (i, file) in tsa_cas.iter().enumerate() {
        anchors.extend(anchors_from_pem(file).map_err(|e| err(format!("tsa_cas[{i}]: {e}")))?);
    }
    Ok(anchors)
}

/// The certificates (DER) of `untrusted`: every certificate of each file.
pub(crate) fn untrusted_certificates(untrusted: &[Vec<u8>]) -> PyResult<Vec<Vec<u8>>> {
    let mut certs = Vec::new();
    for (i, file) in untrusted.iter().enumerate() {
        certs.extend(
            hourglass_x509::pem_certificates(file)
                .map_err(|e| err(format!("untrusted[{i}]: {e}")))?,
        );
    }
    Ok(certs)
}

/// Verifies an RFC 3161 token (or reply) over `data` or `digest` (bytes, made with the token's
/// imprint hash) against the CA certificates `tsa_cas` (PEM or DER: roots, or an intermediate
/// pinned as the end of the path), with `untrusted` certificates to build the path from: the
/// library's verdict as JSON, `hourglass timestamp verify --json`'s document (`valid`, and the
/// token's fields, or `reason`). Input that cannot be read or checked raises.
#[pyfunction]
#[pyo3(signature = (token, tsa_cas, data=None, digest=None, untrusted=None))]
fn timestamp_verify(
    py: Python<'_>,
    token: &[u8],
    tsa_cas: Vec<Vec<u8>>,
    data: Option<&[u8]>,
    digest: Option<&[u8]>,
    untrusted: Option<Vec<Vec<u8>>>,
) -> PyResult<String> {
    let anchors = tsa_anchors(&tsa_cas)?;
    if anchors.is_empty() {
        return Err(PyValueError::new_err(
            "tsa_cas= is empty: pass the CA certificates (PEM or DER) the token must chain to",
        ));
    }
    let untrusted = untrusted_certificates(&untrusted.unwrap_or_default())?;
    let covered = match (data, digest) {
        (Some(d), None) => Covered::Data(d),
        (None, Some(d)) => Covered::Digest(d),
        _ => return Err(PyValueError::new_err("pass data= or digest=, one of them")),
    };
    let result = py.allow_threads(|| verify_token_for(token, covered, &untrusted, &anchors));
    match verdict_json(&result) {
        Some(json) => serde_json::to_string(&json).map_err(err),
        None => Err(err(result
            .err()
            .map_or_else(String::new, |e| e.to_string()))),
    }
}

/// Adds this module's functions and classes to `hourglass._native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(timestamp_verify, m)?)?;
    Ok(())
}

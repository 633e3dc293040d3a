//! `hourglass.vdf`: VDF proofs, made and verified.

use std::path::PathBuf;
use std::time::Duration;

use hourglass_rsa::encoding::decode_key_with_passphrase;
use hourglass_vdf::eval::EvalOptions;
use hourglass_vdf::group::RsaGroup;
use hourglass_vdf::proof_file::{prove_input, ModulusPolicy, ProofFile, ProofScheme, ProveOutcome};
use hourglass_vdf::SecurityLevel;
use pyo3::prelude::*;

use crate::common::{checkpoint, err, Watch};

/// The group of a proof: the RSA-2048 challenge, or the modulus of a key file.
fn group(modulus: Option<&[u8]>) -> PyResult<RsaGroup> {
    match modulus {
        None => Ok(RsaGroup::rsa_2048()),
        Some(data) => {
            let n = match decode_key_with_passphrase(data, b"").map_err(err)? {
                Ok(private) => private.public().n().clone(),
                Err(public) => public.n().clone(),
            };
            RsaGroup::new(n).map_err(err)
        }
    }
}

/// Evaluates the VDF on `input` and proves it; returns the proof file (JSON text).
#[pyfunction]
#[pyo3(signature = (input, iterations, scheme="wesolowski", security_bits=128, modulus=None, checkpoint=None, progress=None))]
#[allow(clippy::too_many_arguments)]
fn vdf_prove(
    py: Python<'_>,
    input: &[u8],
    iterations: u64,
    scheme: &str,
    security_bits: u32,
    modulus: Option<&[u8]>,
    checkpoint: Option<PathBuf>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let scheme = match scheme {
        "wesolowski" => ProofScheme::Wesolowski,
        "pietrzak" => ProofScheme::Pietrzak,
        other => return Err(err(format!("unknown proof scheme {other:?}"))),
    };
    let level = SecurityLevel::from_bits(security_bits).map_err(err)?;
    let group = group(modulus)?;
    let saved = checkpoint.is_some();
    let options = EvalOptions {
        checkpoint: self::checkpoint(checkpoint)?,
        checkpoint_every: Duration::from_secs(60),
        progress_every: Duration::from_millis(250),
    };
    let watch = Watch::new(progress);
    let outcome = py.allow_threads(|| {
        prove_input(
            &group,
            input,
            iterations,
            scheme,
            level,
            &options,
            &watch.stop,
            &mut watch.progress(),
        )
    });
    match outcome.map_err(err)? {
        ProveOutcome::Proved { file, .. } => Ok(file.to_json()),
        ProveOutcome::Stopped { done } => Err(watch.stopped(done, saved)),
    }
}

/// The verdict on a proof file (`hourglass-vdf`'s `ProofVerdict`, the JSON `vdf verify --json`
/// prints): over the RSA-2048 group or the pinned `modulus`, and for `input` when given. A file
/// that is not a proof file is an exception.
#[pyfunction]
#[pyo3(signature = (proof, input=None, modulus=None))]
fn vdf_verify(
    py: Python<'_>,
    proof: &[u8],
    input: Option<&[u8]>,
    modulus: Option<&[u8]>,
) -> PyResult<String> {
    let trusted = group(modulus)?;
    let file = ProofFile::from_json(proof, ModulusPolicy::Secure).map_err(err)?;
    let verdict = py.allow_threads(|| file.verify_against(&trusted, input));
    serde_json::to_string(&verdict).map_err(err)
}

/// Verifies many proof files over one group, on every core: one verdict per file (a file that
/// does not parse is `False`).
#[pyfunction]
#[pyo3(signature = (proofs, modulus=None))]
fn vdf_batch_verify(
    py: Python<'_>,
    proofs: Vec<Vec<u8>>,
    modulus: Option<&[u8]>,
) -> PyResult<Vec<bool>> {
    let trusted = group(modulus)?;
    let threads = hourglass_vdf::available_threads();
    Ok(py.allow_threads(|| {
        hourglass_vdf::parallel_map(&proofs, threads, |text| {
            ProofFile::from_json(text, ModulusPolicy::Secure)
                .is_ok_and(|f| f.verify_against(&trusted, None).is_valid())
        })
    }))
}

/// Adds this module's functions and classes to `hourglass._native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(vdf_prove, m)?)?;
    m.add_function(wrap_pyfunction!(vdf_verify, m)?)?;
    m.add_function(wrap_pyfunction!(vdf_batch_verify, m)?)?;
    Ok(())
}

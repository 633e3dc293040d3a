//! `hourglass.timelock`: time-lock files and time-lock puzzles.

use std::path::PathBuf;

use hourglass_arith::checkpoint::CheckpointFile;
use hourglass_arith::entropy::OsEntropy;
use hourglass_timelock::tlock::{
    check_body, decrypt_body, solve_key, KeyOutcome, SealParams, TlockHeader,
};
use hourglass_timelock::{
    input_from_digest, solve, PuzzleHash, PuzzleKey, PuzzleKeyGen, PuzzlePublicKey, Solution,
    SolveOptions, SolveOutcome,
};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use zeroize::Zeroizing;

use crate::common::{checkpoint, entropy, err, text, Watch};

/// Time-lock encrypts `data` so that opening it takes `squarings` sequential squarings.
#[pyfunction]
#[pyo3(signature = (data, squarings, bits=2048, seed=None))]
fn tlock_seal(
    py: Python<'_>,
    data: &[u8],
    squarings: u64,
    bits: u32,
    seed: Option<&[u8]>,
) -> PyResult<Py<PyBytes>> {
    let mut params = SealParams::new(bits, squarings);
    params.content_len = Some(data.len() as u64);
    let mut rng = entropy(seed);
    let mut out = Vec::new();
    py.allow_threads(|| {
        hourglass_timelock::tlock::seal(&mut &data[..], &mut out, &params, &mut *rng)
    })
    .map_err(err)?;
    Ok(PyBytes::new(py, &out).unbind())
}

/// Whether a checkpoint is kept, the checkpoint file, and the solver's options with it.
fn solve_options(
    checkpoint: Option<PathBuf>,
) -> PyResult<(bool, Option<CheckpointFile>, SolveOptions)> {
    let saved = checkpoint.is_some();
    let ckpt = self::checkpoint(checkpoint)?;
    let options = SolveOptions {
        checkpoint: ckpt.clone(),
        ..SolveOptions::default()
    };
    Ok((saved, ckpt, options))
}

/// Opens time-lock encrypted bytes by doing their squarings (resumable with `checkpoint`).
/// The file's integrity is checked before the squarings.
#[pyfunction]
#[pyo3(signature = (data, checkpoint=None, progress=None))]
fn tlock_open(
    py: Python<'_>,
    data: &[u8],
    checkpoint: Option<PathBuf>,
    progress: Option<PyObject>,
) -> PyResult<Py<PyBytes>> {
    let mut reader = data;
    let header = TlockHeader::read_from(&mut reader).map_err(err)?;
    if header
        .expected_file_len()
        .is_some_and(|len| len != data.len() as u64)
    {
        return Err(err("the time-lock data is truncated or extended"));
    }
    check_body(&header, &mut &reader[..]).map_err(err)?;
    let (saved, ckpt, options) = solve_options(checkpoint)?;
    let watch = Watch::new(progress);
    let outcome = py
        .allow_threads(|| solve_key(&header, &options, &watch.stop, &mut watch.progress()))
        .map_err(err)?;
    let key = match outcome {
        KeyOutcome::Recovered(key) => key,
        KeyOutcome::Stopped { done } => return Err(watch.stopped(done, saved)),
    };
    let mut plain = Zeroizing::new(Vec::new());
    decrypt_body(&header, &key, &mut reader, &mut *plain).map_err(err)?;
    // The finished checkpoint reveals the key: it goes once the content is out.
    if let Some(c) = ckpt {
        c.remove();
    }
    Ok(PyBytes::new(py, &plain).unbind())
}

/// Makes a puzzle key of `squarings` squarings: returns the private key's JSON (keep it
/// secret: it verifies solutions at once) and the public key's JSON (what authors solve).
#[pyfunction]
#[pyo3(signature = (squarings, bits=2048, rate=None, hash="sha256", issuer="", seed=None))]
fn puzzle_keygen(
    py: Python<'_>,
    squarings: u64,
    bits: u32,
    rate: Option<f64>,
    hash: &str,
    issuer: &str,
    seed: Option<&[u8]>,
) -> PyResult<(String, String)> {
    let hash = PuzzleHash::parse(hash).map_err(err)?;
    let mut generator = PuzzleKeyGen::new(bits, squarings).hash(hash).issuer(issuer);
    if let Some(r) = rate {
        generator = generator.rate(r, false);
    }
    let mut rng = entropy(seed);
    let key = py
        .allow_threads(|| generator.generate(&mut *rng))
        .map_err(err)?;
    Ok((key.to_json().to_string(), key.public().to_json()))
}

/// Solves a puzzle (its public key's JSON) for `document`: `t` sequential squarings,
/// error-checked, resumable with `checkpoint`. Returns the solution's JSON.
#[pyfunction]
#[pyo3(signature = (public_key, document, checkpoint=None, progress=None))]
fn puzzle_solve(
    py: Python<'_>,
    public_key: &[u8],
    document: &[u8],
    checkpoint: Option<PathBuf>,
    progress: Option<PyObject>,
) -> PyResult<String> {
    let key = PuzzlePublicKey::from_json(&text(public_key, "public key")?).map_err(err)?;
    // The key fixes the hash; the author does not choose it.
    let hash = key.meta().hash;
    let digest = hash.digest(document);
    let m = input_from_digest(key.n(), &digest).map_err(err)?;
    let (saved, ckpt, options) = solve_options(checkpoint)?;
    let watch = Watch::new(progress);
    let outcome = py
        .allow_threads(|| solve(&key, &m, &options, &watch.stop, &mut watch.progress()))
        .map_err(err)?;
    match outcome {
        SolveOutcome::Solved(c) => {
            let solution = Solution::new(&key, digest, c);
            if let Some(c) = ckpt {
                c.remove();
            }
            Ok(solution.to_json())
        }
        SolveOutcome::Stopped { done } => Err(watch.stopped(done, saved)),
    }
}

/// Whether `solution` (JSON) solves the puzzle of `key` (the private key's JSON) for
/// `document`: one private-key operation.
#[pyfunction]
fn puzzle_verify(key: &[u8], document: &[u8], solution: &[u8]) -> PyResult<bool> {
    let key = PuzzleKey::from_json(&text(key, "key")?).map_err(err)?;
    let solution = Solution::from_json(&text(solution, "solution")?).map_err(err)?;
    let digest = key.public().meta().hash.digest(document);
    Ok(solution
        .verify(&key, &digest, &mut OsEntropy)
        .map_err(err)?
        .is_ok())
}

/// Adds this module's functions and classes to `hourglass._native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(tlock_seal, m)?)?;
    m.add_function(wrap_pyfunction!(tlock_open, m)?)?;
    m.add_function(wrap_pyfunction!(puzzle_keygen, m)?)?;
    m.add_function(wrap_pyfunction!(puzzle_solve, m)?)?;
    m.add_function(wrap_pyfunction!(puzzle_verify, m)?)?;
    Ok(())
}

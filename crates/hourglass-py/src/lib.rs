//! The native half of the `hourglass` Python package (`hourglass._native`): thin bindings over
//! hourglass's Rust crates, with no algorithm of its own. The Python half
//! (`python/hourglass/*.py`) gives it its Pythonic shape; see docs/PYTHON.md.
//!
//! Long calls release the GIL. Progress callbacks and Ctrl-C are served between blocks of
//! squarings: the callback runs with the GIL, and a pending `KeyboardInterrupt` stops the run
//! cleanly (the last verified state is in the checkpoint, if one was given) and is re-raised.
//! Library errors become `hourglass.HourglassError` with the command line's message; nothing
//! here panics on bad input.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use hourglass_arith::checkpoint::{CheckpointFile, CheckpointKey};
use hourglass_arith::entropy::{EntropySource, OsEntropy, SeededEntropy};
use hourglass_arith::mont::MontContext;
use hourglass_arith::squaring::Progress;
use hourglass_arith::Integer;
use hourglass_dkg::transcript::certificates_from_pem;
use hourglass_log::checkpoint::{hash_to_base64, LogPins};
use hourglass_log::client::verify_log;
use hourglass_log::http::HttpLog;
use hourglass_log::witness::KnownCheckpoint;
use hourglass_rsa::encoding::{
    decode_key_with_passphrase, encode_private_key, encode_private_key_encrypted,
    encode_public_key, KeyFormat,
};
use hourglass_rsa::padding::{Oaep, Pkcs1v15Sign, Pss};
use hourglass_rsa::{HashAlg, KeyGenOptions, Variant};
use hourglass_timelock::anyset::AnySet;
use hourglass_timelock::bundle::{Bundle, SealEnd, SealOptions};
use hourglass_timelock::certificate::{ca_certificates, TsaAnchor};
use hourglass_timelock::public::{CommitteePins, OriginPins};
use hourglass_timelock::receipt::{
    check_receipt, EntryFilter, EntrySummary, ReceiptEntry, ReceiptVerdict,
};
use hourglass_timelock::timestamp::{Evidence, TokenRefused};
use hourglass_timelock::tlock::{
    check_body, decrypt_body, solve_key, KeyOutcome, SealParams, TlockHeader,
};
use hourglass_timelock::verdict::{
    unix_secs, DatedVerdict, Dating, ReceivedFrom, Verifier, VerifyOptions,
};
use hourglass_timelock::{
    input_from_digest, solve, PuzzleHash, PuzzleKey, PuzzleKeyGen, PuzzlePublicKey, Solution,
    SolveOptions, SolveOutcome,
};
use hourglass_vdf::eval::EvalOptions;
use hourglass_vdf::group::RsaGroup;
use hourglass_vdf::proof_file::{prove_input, ModulusPolicy, ProofFile, ProofScheme, ProveOutcome};
use hourglass_vdf::SecurityLevel;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use rug::integer::Order;
use zeroize::Zeroizing;

pyo3::create_exception!(
    _native,
    HourglassError,
    PyException,
    "An error from hourglass; the message is the one the command line prints."
);

/// Any library error as a Python exception.
fn err(e: impl std::fmt::Display) -> PyErr {
    HourglassError::new_err(e.to_string())
}

fn int_from(bytes: &[u8]) -> Integer {
    Integer::from_digits(bytes, Order::Msf)
}

fn int_to(x: &Integer) -> Vec<u8> {
    x.to_digits(Order::Msf)
}

fn hash_alg(name: &str) -> PyResult<HashAlg> {
    HashAlg::from_name(name).ok_or_else(|| err(format!("unknown hash {name:?}")))
}

fn entropy(seed: Option<&[u8]>) -> Box<dyn EntropySource> {
    match seed {
        Some(s) => Box::new(SeededEntropy::new(s)),
        None => Box::new(OsEntropy),
    }
}

fn checkpoint(path: Option<PathBuf>) -> PyResult<Option<CheckpointFile>> {
    path.map(|p| {
        Ok(CheckpointFile::new(
            p,
            CheckpointKey::for_user().map_err(err)?,
        ))
    })
    .transpose()
}

/// Serves a long computation running without the GIL: progress reports go to the Python
/// callback (with the GIL), and a pending signal (Ctrl-C) or an exception from the callback
/// raises the stop flag and is kept to be re-raised.
struct Watch {
    callback: Option<PyObject>,
    stop: AtomicBool,
    error: Mutex<Option<PyErr>>,
}

impl Watch {
    fn new(callback: Option<PyObject>) -> Self {
        Self {
            callback,
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
        }
    }

    fn report(&self, done: u64, total: u64) {
        Python::with_gil(|py| {
            let result = py.check_signals().and_then(|()| match &self.callback {
                Some(cb) => cb.call1(py, (done, total)).map(drop),
                None => Ok(()),
            });
            if let Err(e) = result {
                if let Ok(mut slot) = self.error.lock() {
                    slot.get_or_insert(e);
                }
                self.stop.store(true, Ordering::SeqCst);
            }
        });
    }

    fn progress(&self) -> impl FnMut(Progress) + '_ {
        |p| self.report(p.done, p.total)
    }

    /// The exception for a run that stopped after `done` squarings.
    /// A `KeyboardInterrupt` (Ctrl-C) says how far the run got; an exception raised by the
    /// progress callback is re-raised as it is.
    fn stopped(&self, done: u64, saved: bool) -> PyErr {
        let kept = self.error.lock().ok().and_then(|mut slot| slot.take());
        let interrupted = || {
            PyKeyboardInterrupt::new_err(format!(
                "stopped after {done} squarings{}",
                if saved {
                    "; the checkpoint holds them: call again to resume"
                } else {
                    ""
                }
            ))
        };
        match kept {
            Some(e) if Python::with_gil(|py| e.is_instance_of::<PyKeyboardInterrupt>(py)) => {
                interrupted()
            }
            Some(e) => e,
            None => interrupted(),
        }
    }
}

/// `x^(2^t) mod n` by `t` sequential squarings on the fastest kernel for this CPU (`n` odd,
/// `x < n`; integers as big-endian bytes). Ctrl-C stops it between blocks.
#[pyfunction]
fn square_chain(py: Python<'_>, x: &[u8], t: u64, n: &[u8]) -> PyResult<Py<PyBytes>> {
    let (x, n) = (int_from(x), int_from(n));
    if x >= n {
        return Err(err("x must be smaller than n"));
    }
    let ctx = MontContext::new(&n).map_err(err)?;
    let watch = Watch::new(None);
    const BLOCK: u64 = 1 << 20;
    let mut y = x;
    let mut done = 0;
    while done < t {
        let k = BLOCK.min(t - done);
        y = py.allow_threads(|| ctx.square_k_times(&y, k));
        done += k;
        if done < t {
            watch.report(done, t);
            if watch.stop.load(Ordering::SeqCst) {
                return Err(watch.stopped(done, false));
            }
        }
    }
    Ok(PyBytes::new(py, &int_to(&y)).unbind())
}

/// An RSA private key of any variant.
#[pyclass(module = "hourglass._native", frozen)]
struct PrivateKey(hourglass_rsa::PrivateKey);

/// An RSA public key.
#[pyclass(module = "hourglass._native", frozen)]
struct PublicKey(hourglass_rsa::PublicKey);

#[pymethods]
impl PrivateKey {
    /// Generates a key: `variant` is standard, crt, rebalanced, scheme-a or scheme-b.
    #[staticmethod]
    #[pyo3(signature = (bits, variant, seed=None))]
    fn generate(py: Python<'_>, bits: u32, variant: &str, seed: Option<&[u8]>) -> PyResult<Self> {
        let variant = Variant::from_name(variant)
            .ok_or_else(|| err(format!("unknown variant {variant:?}")))?;
        let options = KeyGenOptions::new(bits, variant);
        let mut rng = entropy(seed);
        py.allow_threads(|| options.generate(&mut *rng))
            .map(Self)
            .map_err(err)
    }

    /// Reads a key file's bytes (PEM, DER, hex or JSON; encrypted PKCS#8 with `passphrase`).
    #[staticmethod]
    #[pyo3(signature = (data, passphrase=None))]
    fn load(data: &[u8], passphrase: Option<&[u8]>) -> PyResult<Self> {
        match decode_key_with_passphrase(data, passphrase.unwrap_or_default()).map_err(err)? {
            Ok(key) => Ok(Self(key)),
            Err(_) => Err(err("this is a public key; a private key is needed")),
        }
    }

    /// PKCS#8 PEM, encrypted (PBES2, PBKDF2-HMAC-SHA-256, AES-256-CBC) with a passphrase.
    #[pyo3(signature = (passphrase=None))]
    fn to_pem(&self, py: Python<'_>, passphrase: Option<&[u8]>) -> PyResult<Py<PyBytes>> {
        let pem = match passphrase {
            Some(p) => encode_private_key_encrypted(&self.0, p, &mut OsEntropy),
            None => encode_private_key(&self.0, KeyFormat::Pem),
        }
        .map_err(err)?;
        Ok(PyBytes::new(py, &pem).unbind())
    }

    /// The public half.
    fn public_key(&self) -> PublicKey {
        PublicKey(self.0.public().clone())
    }

    /// OAEP decryption (constant-time, blinded, fault-checked).
    #[pyo3(signature = (ciphertext, hash="sha256", label=None))]
    fn decrypt_oaep(
        &self,
        py: Python<'_>,
        ciphertext: &[u8],
        hash: &str,
        label: Option<&[u8]>,
    ) -> PyResult<Py<PyBytes>> {
        let oaep = Oaep::new(hash_alg(hash)?).label(label.unwrap_or_default());
        let msg = Zeroizing::new(
            oaep.decrypt(&self.0, ciphertext, &mut OsEntropy)
                .map_err(err)?,
        );
        Ok(PyBytes::new(py, &msg).unbind())
    }

    /// A PSS signature of `message` (salt as long as the hash).
    #[pyo3(signature = (message, hash="sha256"))]
    fn sign_pss(&self, py: Python<'_>, message: &[u8], hash: &str) -> PyResult<Py<PyBytes>> {
        let hash = hash_alg(hash)?;
        let sig = Pss::new(hash)
            .sign_digest(&self.0, &hash.digest(message), &mut OsEntropy)
            .map_err(err)?;
        Ok(PyBytes::new(py, &sig).unbind())
    }

    /// A PKCS#1 v1.5 signature of `message`.
    #[pyo3(signature = (message, hash="sha256"))]
    fn sign_pkcs1v15(&self, py: Python<'_>, message: &[u8], hash: &str) -> PyResult<Py<PyBytes>> {
        let hash = hash_alg(hash)?;
        let sig = Pkcs1v15Sign::new(hash)
            .sign_digest(&self.0, &hash.digest(message), &mut OsEntropy)
            .map_err(err)?;
        Ok(PyBytes::new(py, &sig).unbind())
    }

    /// The key's shape and safety, as JSON (what `hourglass rsa inspect --json` prints).
    fn inspect(&self) -> PyResult<String> {
        serde_json::to_string(&hourglass_rsa::inspect::inspect_private(&self.0)).map_err(err)
    }

    /// Modulus size in bits.
    #[getter]
    fn bits(&self) -> u32 {
        self.0.public().bits()
    }

    fn __repr__(&self) -> String {
        format!("PrivateKey({} bits)", self.0.public().bits())
    }
}

#[pymethods]
impl PublicKey {
    /// Reads a key file's bytes (a private key file gives its public half).
    #[staticmethod]
    #[pyo3(signature = (data, passphrase=None))]
    fn load(data: &[u8], passphrase: Option<&[u8]>) -> PyResult<Self> {
        Ok(
            match decode_key_with_passphrase(data, passphrase.unwrap_or_default()).map_err(err)? {
                Ok(key) => Self(key.public().clone()),
                Err(public) => Self(public),
            },
        )
    }

    /// SubjectPublicKeyInfo PEM.
    fn to_pem(&self, py: Python<'_>) -> PyResult<Py<PyBytes>> {
        let pem = encode_public_key(&self.0, KeyFormat::Pem).map_err(err)?;
        Ok(PyBytes::new(py, &pem).unbind())
    }

    /// OAEP encryption.
    #[pyo3(signature = (message, hash="sha256", label=None))]
    fn encrypt_oaep(
        &self,
        py: Python<'_>,
        message: &[u8],
        hash: &str,
        label: Option<&[u8]>,
    ) -> PyResult<Py<PyBytes>> {
        let oaep = Oaep::new(hash_alg(hash)?).label(label.unwrap_or_default());
        let ct = oaep
            .encrypt(&self.0, message, &mut OsEntropy)
            .map_err(err)?;
        Ok(PyBytes::new(py, &ct).unbind())
    }

    /// Whether `signature` is a valid PSS signature of `message` (any salt length).
    #[pyo3(signature = (message, signature, hash="sha256"))]
    fn verify_pss(&self, message: &[u8], signature: &[u8], hash: &str) -> PyResult<bool> {
        let hash = hash_alg(hash)?;
        verdict(Pss::new(hash).verify_digest(&self.0, &hash.digest(message), signature))
    }

    /// Whether `signature` is a valid PKCS#1 v1.5 signature of `message`.
    #[pyo3(signature = (message, signature, hash="sha256"))]
    fn verify_pkcs1v15(&self, message: &[u8], signature: &[u8], hash: &str) -> PyResult<bool> {
        let hash = hash_alg(hash)?;
        verdict(Pkcs1v15Sign::new(hash).verify_digest(&self.0, &hash.digest(message), signature))
    }

    /// The key's shape and safety, as JSON.
    fn inspect(&self) -> PyResult<String> {
        serde_json::to_string(&hourglass_rsa::inspect::inspect_public(&self.0)).map_err(err)
    }

    /// The modulus `n` as big-endian bytes.
    #[getter]
    fn n(&self, py: Python<'_>) -> Py<PyBytes> {
        PyBytes::new(py, &int_to(self.0.n())).unbind()
    }

    /// The public exponent `e` as big-endian bytes.
    #[getter]
    fn e(&self, py: Python<'_>) -> Py<PyBytes> {
        PyBytes::new(py, &int_to(self.0.e())).unbind()
    }

    /// Modulus size in bits.
    #[getter]
    fn bits(&self) -> u32 {
        self.0.bits()
    }

    fn __repr__(&self) -> String {
        format!("PublicKey({} bits)", self.0.bits())
    }
}

/// A verification's result: `false` for an invalid signature, an exception for anything else.
fn verdict(result: hourglass_rsa::Result<()>) -> PyResult<bool> {
    match result {
        Ok(()) => Ok(true),
        Err(hourglass_rsa::Error::Verification | hourglass_rsa::Error::InputOutOfRange { .. }) => {
            Ok(false)
        }
        Err(e) => Err(err(e)),
    }
}

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

/// Whether a proof file is valid, over the RSA-2048 group or the pinned `modulus`, and for
/// `input` when given. A file that is not a proof file is an exception.
#[pyfunction]
#[pyo3(signature = (proof, input=None, modulus=None))]
fn vdf_verify(
    py: Python<'_>,
    proof: &[u8],
    input: Option<&[u8]>,
    modulus: Option<&[u8]>,
) -> PyResult<bool> {
    let trusted = group(modulus)?;
    let file = ProofFile::from_json(proof, ModulusPolicy::Secure).map_err(err)?;
    if file.group != trusted || input.is_some_and(|i| i != file.input) {
        return Ok(false);
    }
    Ok(py.allow_threads(|| file.verify()).is_ok())
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
                .is_ok_and(|f| f.group == trusted && f.verify().is_ok())
        })
    }))
}

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
    let saved = checkpoint.is_some();
    let ckpt = self::checkpoint(checkpoint)?;
    let options = SolveOptions {
        checkpoint: ckpt.clone(),
        ..SolveOptions::default()
    };
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

fn text(data: &[u8], what: &str) -> PyResult<String> {
    String::from_utf8(data.to_vec()).map_err(|_| err(format!("the {what} is not UTF-8 text")))
}

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

/// The anchors of `tsa_cas`: every certificate of each file (PEM, several per file, or DER),
/// each a CA certificate.
fn tsa_anchors(tsa_cas: &[Vec<u8>]) -> PyResult<Vec<TsaAnchor>> {
    let mut anchors = Vec::new();
    for (i, file) in tsa_cas.iter().enumerate() {
        let at = |e| err(format!("tsa_cas[{i}]: {e}"));
        anchors.extend(
            ca_certificates(file)
                .map_err(at)?
                .into_iter()
                .map(TsaAnchor::from),
        );
    }
    Ok(anchors)
}

/// The tokens and the CA certificate files of `timestamps=` and `tsa_cas=`.
type TimestampArgs = (Vec<Vec<u8>>, Vec<Vec<u8>>);

/// `timestamps=` and `tsa_cas=` held to the CLI's argument rules (`--timestamp` needs
/// `--tsa-ca` and conflicts with `--received`), neither empty; a `ValueError` otherwise.
fn timestamp_args(
    timestamps: Option<Vec<Vec<u8>>>,
    tsa_cas: Option<Vec<Vec<u8>>>,
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
        (Some(t), Some(c)) => Ok(Some((t, c))),
    }
}

/// Checks `tokens` (named `timestamps[i]`) against the CA certificates `cas` and the bundle
/// file's bytes with the library's [`Evidence::check`]: the evidence, or the token refused as a
/// negative verdict; a refusal that is no verdict (bytes that are not a token) is raised.
fn check_timestamps(
    py: Python<'_>,
    bundle: &[u8],
    (tokens, cas): TimestampArgs,
) -> PyResult<Result<Evidence, TokenRefused>> {
    let anchors = tsa_anchors(&cas)?;
    let named: Vec<(String, Vec<u8>)> = tokens
        .into_iter()
        .enumerate()
        .map(|(i, t)| (format!("timestamps[{i}]"), t))
        .collect();
    match py.allow_threads(|| Evidence::check(bundle, &named, &anchors)) {
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
#[pyo3(signature = (bundle, document, keys=None, set=None, transcript=None, committee_certs=None, received=None, deadline=None, timestamps=None, tsa_cas=None))]
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
) -> PyResult<String> {
    let stamps = timestamp_args(timestamps, tsa_cas, received.is_some())?;
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
    let mut verdict = py
        .allow_threads(|| {
            verifier.verify(&bundle, &digest, &VerifyOptions::default(), &mut OsEntropy)
        })
        .map_err(err)?;
    let (received, received_from) = match &timestamps {
        // No trusted time: the verdict is undated (see below).
        Some(Err(_)) => (0, None),
        Some(Ok(evidence)) => {
            let (t, from) = ReceivedFrom::pick(Some(evidence), None, SystemTime::now());
            (t, Some(from))
        }
        None => {
            let given =
                received.map(|r| SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(r));
            let (t, from) = ReceivedFrom::pick(None, given, SystemTime::now());
            (t, Some(from))
        }
    };
    if let Some(Err(refused)) = &timestamps {
        // A token refused as a verdict (it does not verify, covers other bytes, or does not
        // chain to a CA given) makes the verification fail: the CLI exits with the invalid
        // status, and this package's convention for a failed verification is a verdict with
        // `valid` false. The bundle's own findings (links, document) are kept.
        verdict.valid = false;
        verdict.credited_secs = 0.0;
        verdict.reason = Some(refused.to_string());
    }
    let mut json = serde_json::to_value(DatedVerdict {
        verdict: &verdict,
        dating: Dating::new(&verdict, received, deadline),
    })
    .map_err(err)?;
    if received_from.is_none() {
        json["received"] = serde_json::Value::Null;
        json["predated_to"] = serde_json::Value::Null;
    }
    json["received_from"] = serde_json::json!(received_from);
    json["timestamps"] = match &timestamps {
        Some(Ok(evidence)) => serde_json::to_value(evidence).map_err(err)?,
        _ => serde_json::Value::Null,
    };
    serde_json::to_string(&json).map_err(err)
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
    let saved = checkpoint.is_some();
    let ckpt = self::checkpoint(checkpoint)?;
    let options = SolveOptions {
        checkpoint: ckpt.clone(),
        ..SolveOptions::default()
    };
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

/// The pins of a transparency log from key texts (`name+id+base64`).
fn log_pins(
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

/// Checks a receipt (the bytes of a receipt file) with the library's `check_receipt`:
/// the institution's public key (PEM), the CA certificates its token may chain to, and, for a
/// receipt in a transparency log, the log's key and witnesses (key texts) and the quorum.
/// Returns JSON: `check-receipt --json`'s document with `valid` (and `reason` when not), or,
/// for a receipt that does not check out (forged, another institution's, not in the pinned
/// log, too few cosignatures), `{"valid": false, "authentic": false, "reason": ...}`. Input
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
    let cas = tsa_cas
        .unwrap_or_default()
        .iter()
        .enumerate()
        .map(|(i, c)| ca_certificates(c).map_err(|e| err(format!("tsa_cas[{i}]: {e}"))))
        .collect::<PyResult<Vec<_>>>()?
        .concat();
    if log_key.is_none() && (witness_keys.is_some() || witness_quorum.is_some()) {
        return Err(PyValueError::new_err("witness_keys= needs log_key="));
    }
    let pins = log_key
        .map(|k| log_pins(k, witness_keys, witness_quorum))
        .transpose()?;
    let checked =
        match py.allow_threads(|| check_receipt(receipt, &institution, &cas, pins.as_ref())) {
            Ok(c) => c,
            Err(e) if e.is_verdict() => {
                return serde_json::to_string(&serde_json::json!({
                    "valid": false, "authentic": false, "reason": e.to_string(),
                }))
                .map_err(err)
            }
            Err(e) => return Err(err(e)),
        };
    let matches = document.map(|d| checked.statement.document_matches(d).unwrap_or(false));
    let mut json = checked.summary(matches);
    let valid = checked.statement.verdict == ReceiptVerdict::Valid && matches != Some(false);
    json["valid"] = valid.into();
    if !valid {
        json["reason"] = if matches == Some(false) {
            "the receipt is authentic but for another document".into()
        } else {
            checked.statement.reason.clone().into()
        };
    }
    serde_json::to_string(&json).map_err(err)
}

/// Verifies the transparency log under the URL prefix `url` (the library's `verify_log`):
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
    let pins = log_pins(log_key, witness_keys, witness_quorum)?;
    let institution = institution_key(institution)?;
    let source = HttpLog::new(url).map_err(err)?;
    let previous = state
        .as_deref()
        .map(|p| KnownCheckpoint::load(p, pins.log()).map_err(err))
        .transpose()?
        .flatten();
    let mut entries = Vec::new();
    let result = py.allow_threads(|| {
        verify_log(&source, &pins, previous.as_ref(), &mut |i, e| {
            entries.push(EntrySummary::of(i, e, institution.as_ref()));
            Ok(())
        })
    });
    let verified = match result {
        Ok(v) => v,
        Err(e) if e.is_verdict() => {
            return serde_json::to_string(
                &serde_json::json!({"valid": false, "reason": e.to_string()}),
            )
            .map_err(err)
        }
        Err(e) => return Err(err(e)),
    };
    let unsigned = entries.iter().filter(|e| e.unsigned()).count();
    let valid = institution.is_none() || unsigned == 0;
    if let (true, Some(path)) = (valid, &state) {
        KnownCheckpoint::of(&verified.checkpoint)
            .save(path)
            .map_err(err)?;
    }
    let mut json = serde_json::json!({
        "valid": valid,
        "checkpoint": verified.checkpoint.summary(),
        "previous": previous.as_ref().map(|p| serde_json::json!({"size": p.size, "root": hash_to_base64(&p.root)})),
        "new_entries": entries,
        "trust": pins.trust(),
    });
    if !valid {
        json["reason"] =
            format!("{unsigned} new entries are not receipts signed by the institution key given")
                .into();
    }
    serde_json::to_string(&json).map_err(err)
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
    let pins = log_pins(log_key, witness_keys, witness_quorum)?;
    let institution = institution_key(institution)?;
    let filter = match (document, set) {
        (Some(d), None) => EntryFilter::document(d).map_err(err)?,
        (None, Some(s)) => EntryFilter::Set(s),
        _ => return Err(PyValueError::new_err("pass document= or set=, one of them")),
    };
    let source = HttpLog::new(url).map_err(err)?;
    let mut found = Vec::new();
    let verified = py
        .allow_threads(|| {
            verify_log(&source, &pins, None, &mut |i, e| {
                if ReceiptEntry::read(e, None).is_ok_and(|r| filter.matches(&r.statement)) {
                    found.push(EntrySummary::of(i, e, institution.as_ref()));
                }
                Ok(())
            })
        })
        .map_err(err)?;
    serde_json::to_string(&serde_json::json!({
        "checkpoint": verified.checkpoint.summary(),
        "entries_read": verified.entries_read,
        "found": found,
        "trust": pins.trust(),
    }))
    .map_err(err)
}

/// The native module: `hourglass._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    hourglass_arith::secret::wipe_gmp_memory();
    m.add("HourglassError", m.py().get_type::<HourglassError>())?;
    m.add_class::<PrivateKey>()?;
    m.add_class::<PublicKey>()?;
    m.add_function(wrap_pyfunction!(square_chain, m)?)?;
    m.add_function(wrap_pyfunction!(vdf_prove, m)?)?;
    m.add_function(wrap_pyfunction!(vdf_verify, m)?)?;
    m.add_function(wrap_pyfunction!(vdf_batch_verify, m)?)?;
    m.add_function(wrap_pyfunction!(tlock_seal, m)?)?;
    m.add_function(wrap_pyfunction!(tlock_open, m)?)?;
    m.add_function(wrap_pyfunction!(submit_seal, m)?)?;
    m.add_function(wrap_pyfunction!(puzzle_keygen, m)?)?;
    m.add_function(wrap_pyfunction!(puzzle_solve, m)?)?;
    m.add_function(wrap_pyfunction!(puzzle_verify, m)?)?;
    m.add_function(wrap_pyfunction!(submit_verify, m)?)?;
    m.add_function(wrap_pyfunction!(submit_check_receipt, m)?)?;
    m.add_function(wrap_pyfunction!(log_verify, m)?)?;
    m.add_function(wrap_pyfunction!(log_search, m)?)?;
    Ok(())
}

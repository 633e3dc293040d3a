//! Shared by every binding: the exception, conversions, entropy, checkpoints, and the watch that serves progress and Ctrl-C while a long call runs without the GIL.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use hourglass_arith::checkpoint::{CheckpointFile, CheckpointKey};
use hourglass_arith::entropy::{EntropySource, OsEntropy, SeededEntropy};
use hourglass_arith::squaring::Progress;
use hourglass_arith::Integer;
use hourglass_rsa::HashAlg;
use pyo3::exceptions::{PyException, PyKeyboardInterrupt};
use pyo3::prelude::*;
use rug::integer::Order;

pyo3::create_exception!(
    _native,
    HourglassError,
    PyException,
    "An error from hourglass; the message is the one the command line prints."
);

/// Any library error as a Python exception.
pub(crate) fn err(e: impl std::fmt::Display) -> PyErr {
    HourglassError::new_err(e.to_string())
}

pub(crate) fn int_from(bytes: &[u8]) -> Integer {
    Integer::from_digits(bytes, Order::Msf)
}

pub(crate) fn int_to(x: &Integer) -> Vec<u8> {
    x.to_digits(Order::Msf)
}

pub(crate) fn hash_alg(name: &str) -> PyResult<HashAlg> {
    HashAlg::from_name(name).ok_or_else(|| err(format!("unknown hash {name:?}")))
}

pub(crate) fn entropy(seed: Option<&[u8]>) -> Box<dyn EntropySource> {
    match seed {
        Some(s) => Box::new(SeededEntropy::new(s)),
        None => Box::new(OsEntropy),
    }
}

pub(crate) fn checkpoint(path: Option<PathBuf>) -> PyResult<Option<CheckpointFile>> {
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
pub(crate) struct Watch {
    pub(crate) callback: Option<PyObject>,
    pub(crate) stop: AtomicBool,
    pub(crate) error: Mutex<Option<PyErr>>,
}

impl Watch {
    pub(crate) fn new(callback: Option<PyObject>) -> Self {
        Self {
            callback,
            stop: AtomicBool::new(false),
            error: Mutex::new(None),
        }
    }

    pub(crate) fn report(&self, done: u64, total: u64) {
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

    pub(crate) fn progress(&self) -> impl FnMut(Progress) + '_ {
        |p| self.report(p.done, p.total)
    }

    /// The exception for a run that stopped after `done` squarings.
    /// A `KeyboardInterrupt` (Ctrl-C) says how far the run got; an exception raised by the
    /// progress callback is re-raised as it is.
    pub(crate) fn stopped(&self, done: u64, saved: bool) -> PyErr {
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

pub(crate) fn text(data: &[u8], what: &str) -> PyResult<String> {
    String::from_utf8(data.to_vec()).map_err(|_| err(format!("the {what} is not UTF-8 text")))
}

/// Adds this module's functions and classes to `hourglass._native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("HourglassError", m.py().get_type::<HourglassError>())?;
    Ok(())
}

//! `hourglass.arith`: sequential squaring.

use std::sync::atomic::Ordering;

use hourglass_arith::mont::MontContext;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::common::{err, int_from, int_to, Watch};

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

/// Adds this module's functions and classes to `hourglass._native`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(square_chain, m)?)?;
    Ok(())
}

//! The native half of the `hourglass` Python package (`hourglass._native`): thin bindings over
//! hourglass's Rust crates, with no algorithm of its own. The Python half
//! (`python/hourglass/*.py`) gives it its Pythonic shape; see docs/PYTHON.md.
//!
//! Long calls release the GIL. Progress callbacks and Ctrl-C are served between blocks of
//! squarings: the callback runs with the GIL, and a pending `KeyboardInterrupt` stops the run
//! cleanly (the last verified state is in the checkpoint, if one was given) and is re-raised.
//! Library errors become `hourglass.HourglassError` with the command line's message; nothing
//! here panics on bad input.
//!
//! One file per Python module (`arith.rs` is `hourglass.arith`, and so on), each adding its
//! functions to `_native` in its `register`; `common.rs` holds what they share.

mod arith;
mod common;
mod log;
mod rsa;
mod submit;
mod timelock;
mod timestamp;
mod vdf;

use pyo3::prelude::*;

/// The native module: `hourglass._native`.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    hourglass_arith::secret::wipe_gmp_memory();
    common::register(m)?;
    arith::register(m)?;
    rsa::register(m)?;
    vdf::register(m)?;
    timelock::register(m)?;
    timestamp::register(m)?;
    submit::register(m)?;
    log::register(m)?;
    Ok(())
}

//! Evaluation: `y = x^(2^T)` by `T` sequential squarings, keeping every `kappa`-th power.
//!
//! The squarings run in the error-checked engine of `hourglass-arith`
//! ([`hourglass_arith::squaring::SquaringRun`]): blocks of `kappa` squarings in the fastest
//! Montgomery kernel, Gerbicz's check with rollback, progress, and checkpoints. The value at
//! every block boundary, `C_i = x^(2^(i kappa))`, is kept once the check has verified it: the
//! provers build their proofs from these powers instead of squaring again.
//!
//! `kappa` is [`stride_for`]`(T)`: 1024, or more for `T > 2^30`, so that at most about 2^20
//! powers are kept (256 MiB at 2048 bits).
//!
//! With a checkpoint file, the kept powers go to a second file beside it (`.powers`: a header
//! binding it to the run, then the powers as fixed-width big-endian numbers); it is flushed to
//! disk before every checkpoint, so a resumed run finds every power the checkpoint covers.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hourglass_arith::checkpoint::Checkpoint;
use hourglass_arith::mont::MontContext;
use hourglass_arith::squaring::{Outcome, Progress, SquaringRun, SquaringState};
use rug::integer::Order;
use rug::Integer;
use sha2::{Digest, Sha256};

use crate::group::RsaGroup;
use crate::{check_iterations, Error, Result, SecurityLevel, Statement};

/// The smallest stride `kappa` between kept powers (and the engine's block size).
pub const MIN_STRIDE: u64 = 1 << 10;
/// About this many powers are kept at most.
pub const MAX_KEPT_POWERS: u64 = 1 << 20;
/// Blocks between the engine's error checks.
const BLOCKS_PER_CHECK: u64 = 256;
const POWERS_MAGIC: &[u8; 8] = b"HGVDFPW1";

/// The stride `kappa` for `T` squarings: a power of two, at least [`MIN_STRIDE`], with at most
/// about [`MAX_KEPT_POWERS`] powers kept.
pub fn stride_for(iterations: u64) -> u64 {
    iterations
        .div_ceil(MAX_KEPT_POWERS)
        .next_power_of_two()
        .max(MIN_STRIDE)
}

/// A finished evaluation: the output and the kept powers.
#[derive(Clone)]
pub struct Evaluation {
    group: RsaGroup,
    x: Integer,
    iterations: u64,
    stride: u64,
    /// `powers[i] = x^(2^(i kappa))` for `i = 0 ..= floor(T / kappa)` (`powers[0] = x`).
    powers: Vec<Integer>,
    /// `x^(2^T) mod N` (not canonicalised).
    y_raw: Integer,
}

impl std::fmt::Debug for Evaluation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluation")
            .field("group", &self.group)
            .field("iterations", &self.iterations)
            .field("stride", &self.stride)
            .field("kept", &self.powers.len())
            .finish_non_exhaustive()
    }
}

impl Evaluation {
    /// An evaluation computed with the group order (the trapdoor): every power is one
    /// exponentiation modulo `N` instead of sequential squarings. For whoever made the modulus
    /// (a trusted setup before it discards the factors) and for tests of very long `T`.
    /// `stride` is `kappa` (any positive value; the provers work with any).
    pub fn with_group_order(
        group: &RsaGroup,
        x: &Integer,
        iterations: u64,
        order: &Integer,
        stride: u64,
    ) -> Result<Self> {
        check_iterations(iterations)?;
        let stride = stride.max(1);
        let n = group.modulus();
        let power = |e: u64| -> Integer {
            let exp = Integer::from(2)
                .pow_mod(&Integer::from(e), order)
                .unwrap_or_else(|_| unreachable!("positive exponent"));
            Integer::from(
                x.pow_mod_ref(&exp, n)
                    .unwrap_or_else(|| unreachable!("exp >= 0")),
            )
        };
        let powers = (0..=iterations / stride)
            .map(|i| power(i * stride))
            .collect();
        Ok(Self {
            group: group.clone(),
            x: x.clone(),
            iterations,
            stride,
            powers,
            y_raw: power(iterations),
        })
    }

    /// The group.
    pub fn group(&self) -> &RsaGroup {
        &self.group
    }

    /// The input element.
    pub fn input(&self) -> &Integer {
        &self.x
    }

    /// `T`.
    pub fn iterations(&self) -> u64 {
        self.iterations
    }

    /// The stride `kappa` between kept powers.
    pub fn stride(&self) -> u64 {
        self.stride
    }

    /// The kept powers `x^(2^(i kappa))`, `i = 0 ..= floor(T / kappa)`.
    pub fn powers(&self) -> &[Integer] {
        &self.powers
    }

    /// The canonical output `y`.
    pub fn output(&self) -> Integer {
        self.group.canonical(&self.y_raw)
    }

    /// The statement this evaluation proves, at `level`.
    pub fn statement(&self, level: SecurityLevel) -> Statement {
        Statement {
            group: self.group.clone(),
            x: self.x.clone(),
            y: self.output(),
            iterations: self.iterations,
            level,
        }
    }

    /// `x^(2^p) mod N` for any `p`, from the nearest kept power below it (at most `kappa`
    /// squarings; beyond `T`, from the output).
    pub fn power_at(&self, p: u64, mont: &MontContext) -> Integer {
        let (base, from) = if p >= self.iterations {
            (&self.y_raw, self.iterations)
        } else {
            let i = (p / self.stride) as usize;
            (&self.powers[i], i as u64 * self.stride)
        };
        if p == from {
            base.clone()
        } else {
            mont.square_k_times(base, p - from)
        }
    }
}

/// Options of a long evaluation.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    /// Checkpoint file (and `FILE.powers` beside it); `None` for no checkpoints.
    pub checkpoint: Option<PathBuf>,
    /// Minimum time between checkpoints.
    pub checkpoint_every: Duration,
    /// Time between progress reports.
    pub progress_every: Duration,
}

impl Default for EvalOptions {
    fn default() -> Self {
        Self {
            checkpoint: None,
            checkpoint_every: Duration::from_secs(60),
            progress_every: Duration::from_millis(250),
        }
    }
}

/// How an evaluation ended.
#[derive(Debug)]
pub enum EvalOutcome {
    /// Done.
    Finished(Box<Evaluation>),
    /// Stopped by the stop flag after `done` verified squarings (saved in the checkpoint).
    Stopped {
        /// Squarings done and saved.
        done: u64,
    },
}

/// The path of the powers file that goes with `checkpoint`.
pub fn powers_path(checkpoint: &Path) -> PathBuf {
    let mut s = checkpoint.as_os_str().to_owned();
    s.push(".powers");
    PathBuf::from(s)
}

/// Evaluates without checkpoints or progress (library use, tests, short `T`).
pub fn evaluate_in_memory(group: &RsaGroup, x: &Integer, iterations: u64) -> Result<Evaluation> {
    match evaluate(
        group,
        x,
        iterations,
        &EvalOptions::default(),
        &AtomicBool::new(false),
        &mut |_| {},
    )? {
        EvalOutcome::Finished(e) => Ok(*e),
        EvalOutcome::Stopped { .. } => unreachable!("nothing raises the stop flag"),
    }
}

/// Evaluates `x^(2^T)`, resuming from `options.checkpoint` if it holds a state of this run.
pub fn evaluate(
    group: &RsaGroup,
    x: &Integer,
    iterations: u64,
    options: &EvalOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<EvalOutcome> {
    check_iterations(iterations)?;
    if !group.is_canonical(x) {
        return Err(Error::InvalidInput(
            "the input is not a canonical group element".into(),
        ));
    }
    let stride = stride_for(iterations);
    let run =
        SquaringRun::new(group.modulus(), x, iterations)?.with_blocks(stride, BLOCKS_PER_CHECK);
    let context = run_context(group, x, iterations, stride);
    let mut powers = vec![x.clone()];
    let mut start = run.initial_state();
    let mut store = match &options.checkpoint {
        Some(path) => {
            let (state, kept, store) = resume(path, &context, &run, group, iterations)?;
            if let Some(state) = state {
                start = state;
            }
            powers.extend(kept);
            Some(store)
        }
        None => None,
    };
    let mut store_error: Option<Error> = None;
    let mut sink = |first: u64, values: &[Integer]| -> hourglass_arith::Result<()> {
        debug_assert_eq!(first, powers.len() as u64 * stride);
        if let Some(store) = store.as_mut() {
            if let Err(e) = store.append(group, values) {
                store_error = Some(e);
                return Err(hourglass_arith::Error::InvalidParameter(
                    "writing the powers file failed".into(),
                ));
            }
        }
        powers.extend_from_slice(values);
        Ok(())
    };
    let checkpoint_path = options.checkpoint.clone();
    let powers_file = checkpoint_path.as_deref().map(powers_path);
    let mut save = |state: &SquaringState| -> hourglass_arith::Result<()> {
        let Some(path) = &checkpoint_path else {
            return Ok(());
        };
        if let Some(pf) = &powers_file {
            File::options()
                .append(true)
                .open(pf)
                .and_then(|f| f.sync_data())
                .map_err(|e| {
                    hourglass_arith::Error::InvalidParameter(format!(
                        "syncing {}: {e}",
                        pf.display()
                    ))
                })?;
        }
        Checkpoint {
            context: context.clone(),
            block: stride,
            total: iterations,
            state: state.clone(),
        }
        .save(path)
    };
    let outcome = run.run_recording(
        start,
        stop,
        options.progress_every,
        options.checkpoint_every,
        progress,
        &mut save,
        Some(&mut sink),
    );
    if let Some(e) = store_error {
        return Err(e);
    }
    match outcome? {
        Outcome::Finished(state) => Ok(EvalOutcome::Finished(Box::new(Evaluation {
            group: group.clone(),
            x: x.clone(),
            iterations,
            stride,
            powers,
            y_raw: state.x,
        }))),
        Outcome::Stopped(state) => {
            save(&state)?;
            Ok(EvalOutcome::Stopped { done: state.done })
        }
    }
}

/// What a checkpoint of this run is bound to.
fn run_context(group: &RsaGroup, x: &Integer, iterations: u64, stride: u64) -> Vec<u8> {
    let mut h = Sha256::new();
    h.update(b"hourglass-vdf-v1/evaluation\0");
    h.update(group.modulus_bytes());
    h.update(group.encode(x));
    h.update(iterations.to_be_bytes());
    h.update(stride.to_be_bytes());
    h.finalize().to_vec()
}

/// The append-only file of kept powers beside a checkpoint.
struct PowersStore {
    file: File,
}

impl PowersStore {
    fn append(&mut self, group: &RsaGroup, values: &[Integer]) -> Result<()> {
        let mut buf = Vec::with_capacity(values.len() * group.element_bytes());
        for v in values {
            buf.extend_from_slice(&group.encode(v));
        }
        self.file
            .write_all(&buf)
            .map_err(|e| Error::Checkpoint(format!("writing the powers file: {e}")))
    }
}

fn header(context: &[u8], element_bytes: usize) -> Vec<u8> {
    let mut h = POWERS_MAGIC.to_vec();
    h.extend_from_slice(context);
    h.extend_from_slice(&(element_bytes as u32).to_be_bytes());
    h
}

type Resumed = (Option<SquaringState>, Vec<Integer>, PowersStore);

/// Loads the checkpoint and its powers (if any), truncates the powers file to what the
/// checkpoint covers, and opens it for appending.
fn resume(
    path: &Path,
    context: &[u8],
    run: &SquaringRun<'_>,
    group: &RsaGroup,
    iterations: u64,
) -> Result<Resumed> {
    let pf = powers_path(path);
    let head = header(context, group.element_bytes());
    let size = group.element_bytes() as u64;
    let io = |e: std::io::Error| Error::Checkpoint(format!("{}: {e}", pf.display()));
    let checkpoint = Checkpoint::load(path)?;
    let Some(ckpt) = checkpoint else {
        // A fresh run: a fresh powers file.
        let mut file = File::create(&pf).map_err(io)?;
        file.write_all(&head).map_err(io)?;
        return Ok((None, Vec::new(), PowersStore { file }));
    };
    ckpt.check_belongs(context, run.block(), iterations)?;
    run.validate_state(&ckpt.state)?;
    let want = ckpt.state.done / run.block();
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(&pf)
        .map_err(|e| {
            Error::Checkpoint(format!(
                "{} is missing or unreadable ({e}); the checkpoint cannot be resumed without it: delete {} and start again",
                pf.display(),
                path.display()
            ))
        })?;
    let mut got_head = vec![0u8; head.len()];
    let len = file.metadata().map_err(io)?.len();
    if len < head.len() as u64 + want * size {
        return Err(Error::Checkpoint(format!(
            "{} holds fewer powers than the checkpoint covers: delete {} and start again",
            pf.display(),
            path.display()
        )));
    }
    file.read_exact(&mut got_head).map_err(io)?;
    if got_head != head {
        return Err(Error::Checkpoint(format!(
            "{} belongs to another evaluation",
            pf.display()
        )));
    }
    let mut raw = vec![0u8; (want * size) as usize];
    file.read_exact(&mut raw).map_err(io)?;
    let kept = raw
        .chunks(size as usize)
        .map(|c| Integer::from_digits(c, Order::Msf))
        .collect::<Vec<_>>();
    if kept.iter().any(|v| v >= group.modulus()) {
        return Err(Error::Checkpoint(format!("{} is corrupt", pf.display())));
    }
    let end = head.len() as u64 + want * size;
    file.set_len(end).map_err(io)?;
    file.seek(SeekFrom::Start(end)).map_err(io)?;
    Ok((Some(ckpt.state), kept, PowersStore { file }))
}

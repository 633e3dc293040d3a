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
//! disk before every checkpoint, so a resumed run finds every power the checkpoint covers. The
//! checkpoint is authenticated with the user's key and carries the SHA-256 of the powers it
//! covers, so neither file can be planted or edited: a mismatch sets the checkpoint aside and
//! the evaluation starts over.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hourglass_arith::checkpoint::{Checkpoint, CheckpointFile};
use hourglass_arith::modular::{pow2_mod_ct, pow_mod_ct};
use hourglass_arith::mont::MontContext;
use hourglass_arith::secret::SecretInt;
use hourglass_arith::squaring::{Outcome, Progress, SquaringRun, SquaringState};
use rug::integer::Order;
use rug::Integer;
use sha2::{Digest, Sha256};

use crate::error::{Error, InputError, Result};
use crate::group::RsaGroup;
use crate::hash_prime::SecurityLevel;
use crate::statement::{check_iterations, Statement};

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
    /// `stride` is `kappa` (any positive value; the provers work with any). The order is
    /// secret (it factors `N`): `2^e mod order` and `x^(2^e mod order)` are constant-time
    /// exponentiations.
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
        let power = |e: u64| -> Result<Integer> {
            let exp = SecretInt::new(pow2_mod_ct(e, order)?);
            Ok(pow_mod_ct(x, exp.expose(), n)?)
        };
        let powers = (0..=iterations / stride)
            .map(|i| power(i * stride))
            .collect::<Result<_>>()?;
        Ok(Self {
            group: group.clone(),
            x: x.clone(),
            iterations,
            stride,
            powers,
            y_raw: power(iterations)?,
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
    pub checkpoint: Option<CheckpointFile>,
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
        return Err(InputError::NotCanonical.into());
    }
    let stride = stride_for(iterations);
    let run =
        SquaringRun::new(group.modulus(), x, iterations)?.with_blocks(stride, BLOCKS_PER_CHECK);
    let context = run_context(group, x, iterations, stride);
    let mut powers = vec![x.clone()];
    let mut start = run.initial_state();
    // SHA-256 of the kept powers after `x`, bound to every checkpoint.
    let powers_digest = std::cell::RefCell::new(Sha256::new());
    let mut store = match &options.checkpoint {
        Some(file) => {
            let resumed = resume(file, &context, &run, group)?;
            if let Some(state) = resumed.state {
                start = state;
            }
            for v in &resumed.kept {
                powers_digest.borrow_mut().update(group.encode(v));
            }
            powers.extend(resumed.kept);
            Some(resumed.store)
        }
        None => None,
    };
    let mut store_error: Option<Error> = None;
    let powers_file = options.checkpoint.as_ref().map(|f| powers_path(f.path()));
    let mut sink = |first: u64, values: &[Integer]| -> hourglass_arith::Result<()> {
        debug_assert_eq!(first, powers.len() as u64 * stride);
        if let Some(store) = store.as_mut() {
            if let Err(e) = store.append(group, values) {
                // The caller reports `store_error`; this only stops the run.
                let io = std::io::Error::other("writing the powers file failed");
                store_error = Some(e);
                return Err(hourglass_arith::Error::Io {
                    path: powers_file.clone().unwrap_or_default(),
                    source: io,
                });
            }
            let mut digest = powers_digest.borrow_mut();
            for v in values {
                digest.update(group.encode(v));
            }
        }
        powers.extend_from_slice(values);
        Ok(())
    };
    let checkpoint = options.checkpoint.clone();
    let mut save = |state: &SquaringState| -> hourglass_arith::Result<()> {
        let Some(file) = &checkpoint else {
            return Ok(());
        };
        if let Some(pf) = &powers_file {
            File::options()
                .append(true)
                .open(pf)
                .and_then(|f| f.sync_data())
                .map_err(|source| hourglass_arith::Error::Io {
                    path: pf.clone(),
                    source,
                })?;
        }
        file.save(&Checkpoint {
            context: context.clone(),
            block: stride,
            total: iterations,
            state: state.clone(),
            aux: powers_digest.borrow().clone().finalize().to_vec(),
        })
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
    path: PathBuf,
}

impl PowersStore {
    fn append(&mut self, group: &RsaGroup, values: &[Integer]) -> Result<()> {
        let mut buf = Vec::with_capacity(values.len() * group.element_bytes());
        for v in values {
            buf.extend_from_slice(&group.encode(v));
        }
        self.file
            .write_all(&buf)
            .map_err(|source| Error::PowersFile {
                path: self.path.clone(),
                source,
            })
    }
}

fn header(context: &[u8], element_bytes: usize) -> Vec<u8> {
    let mut h = POWERS_MAGIC.to_vec();
    h.extend_from_slice(context);
    h.extend_from_slice(&(element_bytes as u32).to_be_bytes());
    h
}

/// What a resumed evaluation starts from.
struct Resumed {
    /// The checkpoint's state (`None`: start from `x`).
    state: Option<SquaringState>,
    /// The powers the checkpoint covers.
    kept: Vec<Integer>,
    /// The powers file, positioned for appending.
    store: PowersStore,
}

/// Loads the authentic checkpoint and its powers (if any), truncates the powers file to what the
/// checkpoint covers, and opens it for appending. Powers that do not match the digest the
/// checkpoint carries (edited, planted, lost) set the checkpoint aside: the run starts over.
fn resume(
    file: &CheckpointFile,
    context: &[u8],
    run: &SquaringRun<'_>,
    group: &RsaGroup,
) -> Result<Resumed> {
    let pf = powers_path(file.path());
    let head = header(context, group.element_bytes());
    let io = |source: std::io::Error| Error::PowersFile {
        path: pf.clone(),
        source,
    };
    if let Some(ckpt) = file.resume_with_aux(run, context)? {
        match read_powers(&pf, &head, ckpt.state.done / run.block(), group, &ckpt.aux) {
            Ok((kept, file)) => {
                return Ok(Resumed {
                    state: Some(ckpt.state),
                    kept,
                    store: PowersStore {
                        file,
                        path: pf.clone(),
                    },
                })
            }
            Err(why) => file.reject(&format!("{} {why}", pf.display()))?,
        }
    }
    // A fresh run: a fresh powers file.
    let mut out = File::create(&pf).map_err(io)?;
    out.write_all(&head).map_err(io)?;
    Ok(Resumed {
        state: None,
        kept: Vec::new(),
        store: PowersStore {
            file: out,
            path: pf,
        },
    })
}

/// Why a powers file cannot serve a checkpoint (the checkpoint is then set aside).
#[derive(Debug, thiserror::Error)]
enum PowersProblem {
    /// The file cannot be opened.
    #[error("cannot be read ({0})")]
    Unreadable(std::io::Error),
    /// Reading, truncating or seeking failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Fewer powers than the checkpoint covers.
    #[error("holds fewer powers than the checkpoint covers")]
    Short,
    /// The header of another evaluation.
    #[error("belongs to another evaluation")]
    Foreign,
    /// Powers that do not match the checkpoint's digest.
    #[error("does not hold the powers the checkpoint vouches for (edited or replaced)")]
    Edited,
}

/// Reads the first `want` powers of `pf` and checks them against `digest`; returns them and
/// the file positioned after them (truncated there). The error says what is wrong.
fn read_powers(
    pf: &Path,
    head: &[u8],
    want: u64,
    group: &RsaGroup,
    digest: &[u8],
) -> std::result::Result<(Vec<Integer>, File), PowersProblem> {
    let size = group.element_bytes() as u64;
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .open(pf)
        .map_err(PowersProblem::Unreadable)?;
    let len = file.metadata()?.len();
    if len < head.len() as u64 + want * size {
        return Err(PowersProblem::Short);
    }
    let mut got_head = vec![0u8; head.len()];
    file.read_exact(&mut got_head)?;
    if got_head != head {
        return Err(PowersProblem::Foreign);
    }
    let mut raw = vec![0u8; (want * size) as usize];
    file.read_exact(&mut raw)?;
    if Sha256::digest(&raw).as_slice() != digest {
        return Err(PowersProblem::Edited);
    }
    let kept = raw
        .chunks(size as usize)
        .map(|c| Integer::from_digits(c, Order::Msf))
        .collect::<Vec<_>>();
    let end = head.len() as u64 + want * size;
    file.set_len(end)?;
    file.seek(SeekFrom::Start(end))?;
    Ok((kept, file))
}

#[cfg(test)]
mod tests {
    use super::*;
    use hourglass_arith::checkpoint::CheckpointKey;
    use std::sync::{Arc, Mutex};

    /// A planted or edited powers file never feeds a proof: the checkpoint that vouches for other
    /// powers is set aside (with a notice naming the file) and the evaluation starts over.
    #[test]
    fn edited_powers_set_the_checkpoint_aside_and_the_run_starts_over() {
        let group = RsaGroup::rsa_2048();
        let x = group.hash_to_element(b"powers test").unwrap();
        let dir = std::env::temp_dir().join(format!("hg-vdf-eval-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("eval.ckpt");
        let heard = Arc::new(Mutex::new(Vec::<String>::new()));
        let sink = heard.clone();
        let file = CheckpointFile::new(&path, CheckpointKey::from_bytes([6u8; 32]))
            .with_notice(move |m| sink.lock().unwrap().push(m.to_string()));
        let options = EvalOptions {
            checkpoint: Some(file),
            checkpoint_every: Duration::ZERO,
            ..EvalOptions::default()
        };
        let run = || match evaluate(
            &group,
            &x,
            5000,
            &options,
            &AtomicBool::new(false),
            &mut |_| {},
        )
        .unwrap()
        {
            EvalOutcome::Finished(e) => e,
            EvalOutcome::Stopped { .. } => panic!("stopped"),
        };
        let first = run();
        // Resuming from the finished checkpoint gives the same powers without complaint.
        let again = run();
        assert_eq!(again.powers, first.powers);
        assert!(heard.lock().unwrap().is_empty());
        // Edit one kept power in place.
        let pf = powers_path(&path);
        let mut bytes = std::fs::read(&pf).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 1;
        std::fs::write(&pf, &bytes).unwrap();
        let redone = run();
        assert_eq!(redone.powers, first.powers);
        assert_eq!(redone.y_raw, first.y_raw);
        let heard = heard.lock().unwrap();
        assert_eq!(heard.len(), 1, "{heard:?}");
        assert!(heard[0].contains(".powers") && heard[0].contains("edited"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

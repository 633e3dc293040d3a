//! Sequential modular squaring: the engine behind time-lock puzzles and VDF evaluation.
//!
//! [`SquaringRun`] computes `x0^(2^t) mod n` by `t` sequential squarings, in blocks, with:
//!
//! - **error checking** (Gerbicz's check, as GIMPS uses for PRP tests): besides the running value
//!   `x_i = x0^(2^i)` the run keeps `d_K = x_0 * x_B * x_2B * ... * x_KB`, the product of the
//!   values at block boundaries (one multiplication per block of `B` squarings). Because
//!   `d_(K+1) = x0 * d_K^(2^B)`, recomputing the right side (`B` more squarings) every `L` blocks
//!   detects any wrong squaring or multiplication since the last verified state; the run then
//!   rolls back to that state. The cost is about `1/B + 1/L` of the work (under 0.5% with
//!   the defaults). The final partial block is computed twice and compared;
//! - **checkpoints**: only verified states are handed out ([`SquaringState`]), so a resumed
//!   run never starts from a corrupted value;
//! - **progress and cancellation** callbacks for long runs.
//!
//! Squaring itself runs in [`crate::mont`]: a block of `B` squarings stays in Montgomery form
//! in the fastest kernel for the modulus size (MULX/ADX assembly on x86_64 with BMI2 and ADX, a
//! portable Rust kernel elsewhere). [`square_k_times`] is the GMP reference (`mpz_powm` with
//! exponent `2^k`) that tests and benchmarks compare against.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rug::Integer;

use crate::mont::MontContext;
use crate::{Error, Result};

/// Squarings per block (`B`): one multiplication into the check product per block, and one
/// GMP call (whose set-up costs a few dozen multiplications) per block.
pub const DEFAULT_BLOCK: u64 = 1 << 14;
/// Blocks between checks (`L`): each check costs `B` squarings, so checking costs `1/L`.
/// A check also happens whenever a checkpoint is due, so checkpoints are never late.
pub const DEFAULT_BLOCKS_PER_CHECK: u64 = 1 << 8;
/// Largest modulus the squaring engine (every Montgomery kernel) supports, in bits. Formats and
/// key generators above refuse larger moduli up front, before any long work.
pub const MAX_MODULUS_BITS: u32 = crate::mont::MAX_BITS;

/// Checks that a modulus of `bits` bits fits the squaring engine, with an error that says so.
pub fn check_modulus_bits(bits: u32) -> Result<()> {
    if bits > MAX_MODULUS_BITS {
        return Err(Error::ModulusTooLarge {
            bits,
            max: MAX_MODULUS_BITS,
        });
    }
    Ok(())
}

/// A fault that reappears this many times at the same place stops the run.
const MAX_REPEATED_FAULTS: u32 = 3;

/// A verified point of a run: `x = x0^(2^done) mod n` and the check product at that point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SquaringState {
    /// Squarings done.
    pub done: u64,
    /// `x0^(2^done) mod n`.
    pub x: Integer,
    /// The check product `d` at `done` (a multiple of the block size, or the end).
    pub check: Integer,
}

/// Progress report passed to the progress callback.
#[derive(Debug, Clone, Copy)]
pub struct Progress {
    /// Squarings done (verified or not).
    pub done: u64,
    /// Total squarings of the run.
    pub total: u64,
    /// Squarings per second over the current session.
    pub rate: f64,
    /// Faults detected and rolled back so far.
    pub faults: u32,
}

/// Receives verified block-boundary values: see [`SquaringRun::run_recording`].
pub type BlockSink<'a> = &'a mut dyn FnMut(u64, &[Integer]) -> Result<()>;

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// All `total` squarings are done and verified; `state.x` is the result.
    Finished(SquaringState),
    /// The stop flag was raised; `state` is the last verified state.
    Stopped(SquaringState),
}

/// Sequential squaring of `x0` modulo `n`, `total` times, with error checking.
pub struct SquaringRun<'a> {
    n: &'a Integer,
    mont: MontContext,
    x0: Integer,
    total: u64,
    block: u64,
    blocks_per_check: u64,
    #[cfg(test)]
    fault_at_block: std::cell::Cell<Option<u64>>,
}

impl std::fmt::Debug for SquaringRun<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SquaringRun")
            .field("total", &self.total)
            .field("block", &self.block)
            .finish_non_exhaustive()
    }
}

/// `x^(2^k) mod n` by `k` squarings (GMP, Montgomery inside).
pub fn square_k_times(x: &Integer, k: u64, n: &Integer) -> Integer {
    if k == 0 {
        return Integer::from(x.modulo_ref(n));
    }
    let exp = Integer::from(1) << u32::try_from(k).unwrap_or(u32::MAX);
    Integer::from(
        x.pow_mod_ref(&exp, n)
            .unwrap_or_else(|| unreachable!("positive exponent")),
    )
}

impl<'a> SquaringRun<'a> {
    /// A run computing `x0^(2^total) mod n`. `n` must be odd and greater than 3; `x0` is reduced.
    pub fn new(n: &'a Integer, x0: &Integer, total: u64) -> Result<Self> {
        if *n <= 3 || n.is_even() {
            return Err(Error::UnsuitableModulus(
                "the modulus must be odd and greater than 3",
            ));
        }
        Ok(Self {
            n,
            mont: MontContext::new(n)?,
            x0: Integer::from(x0.modulo_ref(n)),
            total,
            block: DEFAULT_BLOCK,
            blocks_per_check: DEFAULT_BLOCKS_PER_CHECK,
            #[cfg(test)]
            fault_at_block: std::cell::Cell::new(None),
        })
    }

    /// Changes the block size `B` and the check interval `L` (in blocks). Small values are for
    /// tests; a checkpoint is only valid for the same block size.
    pub fn with_blocks(mut self, block: u64, blocks_per_check: u64) -> Self {
        self.block = block.max(1);
        self.blocks_per_check = blocks_per_check.max(1);
        self
    }

    /// The block size `B`.
    pub fn block(&self) -> u64 {
        self.block
    }

    /// The total squarings of the run.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The state before any squaring.
    pub fn initial_state(&self) -> SquaringState {
        SquaringState {
            done: 0,
            x: self.x0.clone(),
            check: self.x0.clone(),
        }
    }

    /// Checks that `state` can belong to this run (position on a block boundary or at the end,
    /// values reduced). It cannot prove the values right; the run's checks do that as it goes.
    pub fn validate_state(&self, state: &SquaringState) -> Result<()> {
        let aligned = state.done.is_multiple_of(self.block) || state.done == self.total;
        if state.done > self.total
            || !aligned
            || state.x >= *self.n
            || state.check >= *self.n
            || state.x < 0
            || state.check < 0
        {
            return Err(Error::StateMismatch);
        }
        if state.done == 0 && (state.x != self.x0 || state.check != self.x0) {
            return Err(Error::StateInput);
        }
        Ok(())
    }

    fn advance(&self, x: &Integer, k: u64) -> Integer {
        #[allow(unused_mut)]
        let mut y = self.mont.square_k_times(x, k);
        #[cfg(test)]
        if k == self.block && self.fault_at_block.take().is_some() {
            y.toggle_bit(3);
        }
        y
    }

    /// Continues from `state` until done, or until `stop` is raised. Calls `progress` about
    /// every `progress_every` and `checkpoint` with each newly verified state, at most every
    /// `checkpoint_every`.
    pub fn run(
        &self,
        state: SquaringState,
        stop: &AtomicBool,
        progress_every: Duration,
        checkpoint_every: Duration,
        progress: &mut dyn FnMut(Progress),
        checkpoint: &mut dyn FnMut(&SquaringState) -> Result<()>,
    ) -> Result<Outcome> {
        self.run_recording(
            state,
            stop,
            progress_every,
            checkpoint_every,
            progress,
            checkpoint,
            None,
        )
    }

    /// Like [`SquaringRun::run`], and hands every block-boundary value to `blocks` once the
    /// error check has verified it: `blocks(first, values)` receives
    /// `values[i] = x0^(2^(first + i B))` for consecutive `i`, in order, each exactly once
    /// (starting after the state the run resumed from), and always before `checkpoint` is
    /// called with a state that covers them. VDF provers keep these values to build their proofs.
    #[allow(clippy::too_many_arguments)]
    pub fn run_recording(
        &self,
        state: SquaringState,
        stop: &AtomicBool,
        progress_every: Duration,
        checkpoint_every: Duration,
        progress: &mut dyn FnMut(Progress),
        checkpoint: &mut dyn FnMut(&SquaringState) -> Result<()>,
        mut blocks: Option<BlockSink<'_>>,
    ) -> Result<Outcome> {
        self.validate_state(&state)?;
        let n = self.n;
        let mut verified = state;
        let mut x = verified.x.clone();
        let mut d = verified.check.clone();
        let mut done = verified.done;
        let mut blocks_since_check = 0u64;
        let mut faults = 0u32;
        let mut faults_here = 0u32;
        let session_start = Instant::now();
        let session_base = done;
        let mut last_progress = Instant::now();
        let mut last_checkpoint = Instant::now();
        let mut last_verified = Instant::now();
        let full_end = self.total - self.total % self.block;
        // Block values computed since the last verified state (only when recording).
        let mut pending: Vec<Integer> = Vec::new();
        let report = |done: u64, faults: u32| Progress {
            done,
            total: self.total,
            rate: (done - session_base) as f64 / session_start.elapsed().as_secs_f64().max(1e-9),
            faults,
        };
        while done < full_end {
            if stop.load(Ordering::Relaxed) {
                return Ok(Outcome::Stopped(verified));
            }
            let d_prev = d.clone();
            x = self.advance(&x, self.block);
            done += self.block;
            d *= &x;
            d %= n;
            if blocks.is_some() {
                pending.push(x.clone());
            }
            blocks_since_check += 1;
            let due = last_verified.elapsed() >= checkpoint_every;
            if blocks_since_check == self.blocks_per_check || done == full_end || due {
                let mut expected = self.mont.square_k_times(&d_prev, self.block) * &self.x0;
                expected %= n;
                if expected == d {
                    if let Some(sink) = blocks.as_mut() {
                        sink(verified.done + self.block, &pending)?;
                        pending.clear();
                    }
                    verified = SquaringState {
                        done,
                        x: x.clone(),
                        check: d.clone(),
                    };
                    faults_here = 0;
                    last_verified = Instant::now();
                    if last_checkpoint.elapsed() >= checkpoint_every {
                        checkpoint(&verified)?;
                        last_checkpoint = Instant::now();
                    }
                } else {
                    faults += 1;
                    faults_here += 1;
                    if faults_here >= MAX_REPEATED_FAULTS {
                        return Err(Error::RecurringFaults {
                            done: verified.done,
                        });
                    }
                    x = verified.x.clone();
                    d = verified.check.clone();
                    done = verified.done;
                    pending.clear();
                }
                blocks_since_check = 0;
            }
            if last_progress.elapsed() >= progress_every {
                progress(report(done, faults));
                last_progress = Instant::now();
            }
        }
        // The final partial block: computed twice, compared.
        let rest = self.total - done;
        if rest > 0 {
            loop {
                let a = self.advance(&x, rest);
                let b = self.advance(&x, rest);
                if a == b {
                    x = a;
                    break;
                }
                faults += 1;
                faults_here += 1;
                if faults_here >= MAX_REPEATED_FAULTS {
                    return Err(Error::RecurringFaults { done });
                }
            }
            done = self.total;
            verified = SquaringState { done, x, check: d };
        }
        progress(report(done, faults));
        checkpoint(&verified)?;
        Ok(Outcome::Finished(verified))
    }
}

/// Measures this machine's sequential squarings per second modulo `n` (with the kernel the
/// solver uses) for about `duration`.
pub fn measure_rate(n: &Integer, duration: Duration) -> f64 {
    let Ok(mont) = MontContext::new(n) else {
        return 0.0;
    };
    let mut x = Integer::from(n / 3u32);
    let mut count = 0u64;
    let mut k = 1024u64;
    let start = Instant::now();
    while start.elapsed() < duration {
        x = mont.square_k_times(&x, k);
        count += k;
        k = (k * 2).min(1 << 16);
    }
    count as f64 / start.elapsed().as_secs_f64()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn modulus() -> Integer {
        let p: Integer = (Integer::from(1) << 255u32) + 95u32;
        let p = p.next_prime();
        let q: Integer = Integer::from(1) << 256u32;
        let q = q.next_prime();
        p * q
    }

    fn run_all(run: &SquaringRun<'_>) -> (SquaringState, Vec<SquaringState>) {
        let stop = AtomicBool::new(false);
        let mut saved = Vec::new();
        let out = run
            .run(
                run.initial_state(),
                &stop,
                Duration::ZERO,
                Duration::ZERO,
                &mut |_| {},
                &mut |s| {
                    saved.push(s.clone());
                    Ok(())
                },
            )
            .unwrap();
        match out {
            Outcome::Finished(s) => (s, saved),
            Outcome::Stopped(_) => panic!("not stopped"),
        }
    }

    #[test]
    fn matches_direct_exponentiation_for_many_lengths() {
        let n = modulus();
        let x0 = Integer::from(123456789u64);
        for t in [0u64, 1, 2, 7, 8, 9, 63, 64, 65, 1000, 4097] {
            let run = SquaringRun::new(&n, &x0, t).unwrap().with_blocks(8, 4);
            let (end, _) = run_all(&run);
            assert_eq!(end.x, square_k_times(&x0, t, &n), "t = {t}");
            assert_eq!(end.done, t);
        }
    }

    #[test]
    fn resuming_from_any_checkpoint_gives_the_same_result() {
        let n = modulus();
        let x0 = Integer::from(5u32);
        let run = SquaringRun::new(&n, &x0, 3000).unwrap().with_blocks(16, 4);
        let (end, saved) = run_all(&run);
        assert!(saved.len() > 10);
        for s in saved.iter().step_by(7) {
            let stop = AtomicBool::new(false);
            let out = run
                .run(
                    s.clone(),
                    &stop,
                    Duration::ZERO,
                    Duration::from_secs(3600),
                    &mut |_| {},
                    &mut |_| Ok(()),
                )
                .unwrap();
            assert_eq!(out, Outcome::Finished(end.clone()));
        }
    }

    #[test]
    fn injected_fault_is_detected_and_rolled_back() {
        let n = modulus();
        let x0 = Integer::from(7u32);
        let run = SquaringRun::new(&n, &x0, 5000).unwrap().with_blocks(16, 8);
        run.fault_at_block.set(Some(0));
        let stop = AtomicBool::new(false);
        let mut max_faults = 0;
        let out = run
            .run(
                run.initial_state(),
                &stop,
                Duration::ZERO,
                Duration::ZERO,
                &mut |p| max_faults = max_faults.max(p.faults),
                &mut |_| Ok(()),
            )
            .unwrap();
        assert_eq!(max_faults, 1, "exactly one fault seen");
        assert_eq!(
            out,
            Outcome::Finished(SquaringState {
                done: 5000,
                x: square_k_times(&x0, 5000, &n),
                check: match &out {
                    Outcome::Finished(s) => s.check.clone(),
                    _ => unreachable!(),
                }
            })
        );
        // Without the check the same fault would have produced a wrong answer.
        let bad = {
            let mut x = x0.clone();
            x = square_k_times(&x, 16, &n);
            x.toggle_bit(3);
            square_k_times(&x, 5000 - 16, &n)
        };
        assert_ne!(bad, square_k_times(&x0, 5000, &n));
    }

    #[test]
    fn recorded_block_values_are_verified_and_complete_across_a_fault() {
        let n = modulus();
        let x0 = Integer::from(11u32);
        let run = SquaringRun::new(&n, &x0, 1000).unwrap().with_blocks(16, 4);
        run.fault_at_block.set(Some(0));
        let stop = AtomicBool::new(false);
        let mut seen: Vec<(u64, Integer)> = Vec::new();
        let mut sink = |first: u64, values: &[Integer]| {
            for (i, v) in values.iter().enumerate() {
                seen.push((first + 16 * i as u64, v.clone()));
            }
            Ok(())
        };
        run.run_recording(
            run.initial_state(),
            &stop,
            Duration::ZERO,
            Duration::from_secs(3600),
            &mut |_| {},
            &mut |_| Ok(()),
            Some(&mut sink),
        )
        .unwrap();
        // Every full block once, in order, with the right value despite the injected fault.
        assert_eq!(seen.len(), 1000 / 16);
        for (k, (pos, v)) in seen.iter().enumerate() {
            assert_eq!(*pos, 16 * (k as u64 + 1));
            assert_eq!(*v, square_k_times(&x0, *pos, &n), "block at {pos}");
        }
    }

    #[test]
    fn stop_flag_returns_a_verified_state() {
        let n = modulus();
        let run = SquaringRun::new(&n, &Integer::from(3u32), 100_000)
            .unwrap()
            .with_blocks(16, 2);
        let stop = AtomicBool::new(true);
        let out = run
            .run(
                run.initial_state(),
                &stop,
                Duration::ZERO,
                Duration::ZERO,
                &mut |_| {},
                &mut |_| Ok(()),
            )
            .unwrap();
        assert_eq!(out, Outcome::Stopped(run.initial_state()));
    }

    #[test]
    fn foreign_states_are_rejected() {
        let n = modulus();
        let run = SquaringRun::new(&n, &Integer::from(3u32), 1000)
            .unwrap()
            .with_blocks(16, 2);
        let bad = SquaringState {
            done: 17,
            x: Integer::from(1),
            check: Integer::from(1),
        };
        assert!(run.validate_state(&bad).is_err());
        let bad = SquaringState {
            done: 0,
            x: Integer::from(4),
            check: Integer::from(4),
        };
        assert!(run.validate_state(&bad).is_err());
        let bad = SquaringState {
            done: 16,
            x: n.clone(),
            check: Integer::from(1),
        };
        assert!(run.validate_state(&bad).is_err());
    }
}

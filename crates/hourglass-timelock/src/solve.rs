//! Solving a puzzle: `c = m^(2^t) * m^z mod n` with error checking and checkpoints.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hourglass_arith::checkpoint::Checkpoint;
use hourglass_arith::modular::pow_mod_vartime;
use hourglass_arith::squaring::{Outcome, Progress, SquaringRun, SquaringState};
use hourglass_arith::Integer;
use rug::integer::Order;

use crate::key::PuzzlePublicKey;
use crate::{Error, Result};

/// How to run a solve.
#[derive(Debug, Clone)]
pub struct SolveOptions {
    /// Checkpoint file (resumed from if it exists and belongs to this puzzle and input).
    pub checkpoint: Option<PathBuf>,
    /// Longest time between checkpoints.
    pub checkpoint_every: Duration,
    /// Time between progress reports.
    pub progress_every: Duration,
}

impl Default for SolveOptions {
    fn default() -> Self {
        Self {
            checkpoint: None,
            checkpoint_every: Duration::from_secs(60),
            progress_every: Duration::from_millis(250),
        }
    }
}

/// How a solve ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SolveOutcome {
    /// The solution `c`.
    Solved(Integer),
    /// Stopped by the flag after `done` verified squarings (saved in the checkpoint, if any).
    Stopped {
        /// Verified squarings so far.
        done: u64,
    },
}

/// The bytes that bind a checkpoint to this puzzle and input.
pub(crate) fn checkpoint_context(key: &PuzzlePublicKey, m: &Integer) -> Vec<u8> {
    let mut ctx = b"hourglass-puzzle-solve-v1\0".to_vec();
    ctx.extend_from_slice(&key.fingerprint());
    ctx.extend_from_slice(&m.to_digits::<u8>(Order::Msf));
    ctx
}

/// Solves the puzzle for input `m` (`1 < m < n`), resuming from `options.checkpoint` when it
/// holds a state of this very run. `stop` interrupts cleanly (the last verified state is saved).
pub fn solve(
    key: &PuzzlePublicKey,
    m: &Integer,
    options: &SolveOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<SolveOutcome> {
    let n = key.n();
    if *m <= 1 || *m >= Integer::from(n - 1u32) {
        return Err(Error::InvalidParameters(
            "the puzzle input must satisfy 1 < m < n - 1".into(),
        ));
    }
    let run = SquaringRun::new(n, m, key.t())?;
    let context = checkpoint_context(key, m);
    let mut start: SquaringState = run.initial_state();
    if let Some(path) = &options.checkpoint {
        if let Some(ckpt) = Checkpoint::load(path)? {
            ckpt.check_belongs(&context, run.block(), key.t())?;
            run.validate_state(&ckpt.state)?;
            start = ckpt.state;
        }
    }
    let mut save = |state: &SquaringState| -> hourglass_arith::Result<()> {
        match &options.checkpoint {
            Some(path) => Checkpoint {
                context: context.clone(),
                block: run.block(),
                total: key.t(),
                state: state.clone(),
            }
            .save(path),
            None => Ok(()),
        }
    };
    match run.run(
        start,
        stop,
        options.progress_every,
        options.checkpoint_every,
        progress,
        &mut save,
    )? {
        Outcome::Finished(state) => {
            let beta = pow_mod_vartime(m, key.z(), n)?;
            Ok(SolveOutcome::Solved(state.x * beta % n))
        }
        Outcome::Stopped(state) => {
            save(&state)?;
            Ok(SolveOutcome::Stopped { done: state.done })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{document_input, PuzzleHash, PuzzleKeyGen};
    use hourglass_arith::entropy::SeededEntropy;

    #[test]
    fn solves_verifies_and_resumes() {
        let mut rng = SeededEntropy::new(b"solve");
        let key = PuzzleKeyGen::new(512, 50_000).generate(&mut rng).unwrap();
        let public = key.public_key();
        let m = document_input(&public, PuzzleHash::Sha256, b"document").unwrap();
        let dir = std::env::temp_dir().join(format!("hg-solve-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ckpt = dir.join("s.ckpt");
        let opts = SolveOptions {
            checkpoint: Some(ckpt.clone()),
            checkpoint_every: Duration::ZERO,
            ..SolveOptions::default()
        };
        // Stop at once: the initial state is saved.
        let stopped = solve(&public, &m, &opts, &AtomicBool::new(true), &mut |_| {}).unwrap();
        assert_eq!(stopped, SolveOutcome::Stopped { done: 0 });
        let SolveOutcome::Solved(c) =
            solve(&public, &m, &opts, &AtomicBool::new(false), &mut |_| {}).unwrap()
        else {
            panic!("not solved")
        };
        assert!(key.verify(&m, &c, &mut rng).unwrap());
        // The checkpoint now holds the finished state; running again gives the same answer.
        let again = solve(&public, &m, &opts, &AtomicBool::new(false), &mut |_| {}).unwrap();
        assert_eq!(again, SolveOutcome::Solved(c));
        // Another document with the same checkpoint file is refused.
        let other = document_input(&public, PuzzleHash::Sha256, b"other").unwrap();
        assert!(solve(&public, &other, &opts, &AtomicBool::new(false), &mut |_| {}).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

//! Solving a puzzle: `c = m^(2^t) * m^z mod n` with error checking and checkpoints.

use std::sync::atomic::AtomicBool;

use hourglass_arith::modular::pow_mod_vartime;
use hourglass_arith::squaring::Progress;
use hourglass_arith::Integer;
use rug::integer::Order;

use crate::key::PuzzlePublicKey;
use crate::rsw::{solve_rsw_in_context, RswPuzzle, SolveOptions, SolveOutcome};
use crate::{ParamError, Result};

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
        return Err(ParamError::PuzzleInput.into());
    }
    let puzzle = RswPuzzle::new(n.clone(), m.clone(), key.t())?;
    match solve_rsw_in_context(
        &puzzle,
        &checkpoint_context(key, m),
        options,
        stop,
        progress,
    )? {
        SolveOutcome::Solved(alpha) => {
            let beta = pow_mod_vartime(m, key.z(), n)?;
            Ok(SolveOutcome::Solved(alpha * beta % n))
        }
        stopped => Ok(stopped),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{document_input, PuzzleHash, PuzzleKeyGen};
    use hourglass_arith::checkpoint::{CheckpointFile, CheckpointKey};
    use hourglass_arith::entropy::SeededEntropy;
    use std::time::Duration;

    fn test_key() -> CheckpointKey {
        CheckpointKey::from_bytes([3u8; 32])
    }

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
            checkpoint: Some(CheckpointFile::new(&ckpt, test_key())),
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

//! Rivest-Shamir-Wagner time-lock puzzles: `w = a^(2^t) mod n` by `t` sequential squarings.
//!
//! This is the puzzle behind Rivest's LCS35 (1999) and the CSAIL2019 puzzle: the puzzle gives
//! `n`, a base `a` (2 in both), `t` and a number `z`; whoever computes `w` learns the hidden
//! message `w XOR z` ([`xor_message`]). Time-lock encryption ([`crate::tlock`]) is the same
//! computation with `w` hiding a symmetric key.
//!
//! Solving runs on the error-checked squaring engine of `hourglass-arith`, with checkpoints
//! bound to the puzzle (a checkpoint of another puzzle is refused) and clean stops.
//!
//! ```
//! use hourglass_arith::Integer;
//! use hourglass_timelock::rsw::{solve_rsw, xor_message, RswPuzzle};
//! use hourglass_timelock::{SolveOptions, SolveOutcome};
//! use std::sync::atomic::AtomicBool;
//!
//! // A toy puzzle (n = 1000003 * 1000033 is trivially factored: an example only).
//! let n = Integer::from(1000003u64 * 1000033u64);
//! let puzzle = RswPuzzle::new(n.clone(), Integer::from(2), 1000).unwrap();
//! let stop = AtomicBool::new(false);
//! let SolveOutcome::Solved(w) =
//!     solve_rsw(&puzzle, &SolveOptions::default(), &stop, &mut |_| {}).unwrap()
//! else {
//!     unreachable!("not stopped")
//! };
//! let by_exponent = Integer::from(2).pow_mod(&(Integer::from(1) << 1000u32), &n).unwrap();
//! assert_eq!(w, by_exponent);
//! // Hide "hi" under w, then read it back.
//! let z = Integer::from(0x6869) ^ &w;
//! assert_eq!(xor_message(&w, &z), b"hi");
//! ```

use std::sync::atomic::AtomicBool;
use std::time::Duration;

use hourglass_arith::checkpoint::CheckpointFile;
use hourglass_arith::squaring::{Outcome, Progress, SquaringRun, SquaringState};
use hourglass_arith::Integer;
use rug::integer::Order;

use crate::{ParamError, Result};

/// How to run a solve.
#[derive(Debug, Clone)]
pub struct SolveOptions {
    /// Checkpoint file (resumed from if it is authentic and belongs to this puzzle and input).
    pub checkpoint: Option<CheckpointFile>,
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

/// The largest number of squarings accepted anywhere (`2^60`): about 36,000 years at a million
/// squarings per second. Anything above is taken as a mistake. (CSAIL2019 uses `t = 2^56`.)
pub const MAX_SQUARINGS: u64 = 1 << 60;

/// A Rivest-Shamir-Wagner puzzle: compute `base^(2^t) mod n`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RswPuzzle {
    n: Integer,
    base: Integer,
    t: u64,
}

impl RswPuzzle {
    /// A puzzle, checked: `n` odd and greater than 3, `1 < base < n - 1` (0, 1 and `n - 1`
    /// square to trivial values), `1 <= t <= MAX_SQUARINGS`.
    pub fn new(n: Integer, base: Integer, t: u64) -> Result<Self> {
        if n <= 3 || n.is_even() {
            return Err(ParamError::RswModulus.into());
        }
        hourglass_arith::squaring::check_modulus_bits(n.significant_bits())?;
        if base <= 1 || base >= Integer::from(&n - 1u32) {
            return Err(ParamError::RswBase.into());
        }
        check_squarings(t)?;
        Ok(Self { n, base, t })
    }

    /// The modulus `n`.
    pub fn n(&self) -> &Integer {
        &self.n
    }

    /// The base `a`.
    pub fn base(&self) -> &Integer {
        &self.base
    }

    /// The number of squarings `t`.
    pub fn t(&self) -> u64 {
        self.t
    }

    /// The bytes that bind a checkpoint to this puzzle: a label, then `n` and the base as
    /// length-prefixed big-endian bytes, then `t`.
    pub fn checkpoint_context(&self) -> Vec<u8> {
        let mut ctx = b"hourglass-rsw-v1\0".to_vec();
        for x in [&self.n, &self.base] {
            let bytes = x.to_digits::<u8>(Order::Msf);
            ctx.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
            ctx.extend_from_slice(&bytes);
        }
        ctx.extend_from_slice(&self.t.to_be_bytes());
        ctx
    }
}

/// Checks `1 <= t <= MAX_SQUARINGS`.
pub fn check_squarings(t: u64) -> Result<()> {
    match squarings_problem(t) {
        Some(why) => Err(why.into()),
        None => Ok(()),
    }
}

/// What is wrong with `t` squarings, if anything (see [`check_squarings`]).
pub(crate) fn squarings_problem(t: u64) -> Option<ParamError> {
    if t == 0 {
        return Some(ParamError::ZeroSquarings);
    }
    if t > MAX_SQUARINGS {
        return Some(ParamError::TooManySquarings {
            t,
            max: MAX_SQUARINGS,
        });
    }
    None
}

/// Solves `puzzle`: `w = base^(2^t) mod n` by `t` sequential, error-checked squarings, resuming
/// from `options.checkpoint` when it holds a state of this puzzle. `stop` interrupts cleanly
/// (the last verified state is saved).
pub fn solve_rsw(
    puzzle: &RswPuzzle,
    options: &SolveOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<SolveOutcome> {
    solve_rsw_in_context(
        puzzle,
        &puzzle.checkpoint_context(),
        options,
        stop,
        progress,
    )
}

/// Like [`solve_rsw`], with checkpoints bound to `context` instead of to the puzzle alone
/// (time-lock files bind them to the whole file header). A checkpoint whose context, block size
/// or total differs is refused with an error; one whose values do not fit the run too.
pub fn solve_rsw_in_context(
    puzzle: &RswPuzzle,
    context: &[u8],
    options: &SolveOptions,
    stop: &AtomicBool,
    progress: &mut dyn FnMut(Progress),
) -> Result<SolveOutcome> {
    let run = SquaringRun::new(&puzzle.n, &puzzle.base, puzzle.t)?;
    let start = match &options.checkpoint {
        Some(file) => file.resume(&run, context)?,
        None => run.initial_state(),
    };
    let mut save = |state: &SquaringState| -> hourglass_arith::Result<()> {
        match &options.checkpoint {
            Some(file) => file.save_state(&run, context, state),
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
        Outcome::Finished(state) => Ok(SolveOutcome::Solved(state.x)),
        Outcome::Stopped(state) => {
            save(&state)?;
            Ok(SolveOutcome::Stopped { done: state.done })
        }
    }
}

/// The hidden message of an LCS35/CSAIL2019-style puzzle: `w XOR z` as big-endian bytes,
/// without leading zero bytes.
pub fn xor_message(w: &Integer, z: &Integer) -> Vec<u8> {
    Integer::from(w ^ z).to_digits::<u8>(Order::Msf)
}

/// `bytes` as text when it is UTF-8 without control characters other than tab, CR and LF;
/// `None` otherwise (show it in hex).
pub fn printable_text(bytes: &[u8]) -> Option<&str> {
    let text = std::str::from_utf8(bytes).ok()?;
    text.chars()
        .all(|c| !c.is_control() || matches!(c, '\n' | '\r' | '\t'))
        .then_some(text)
}

/// Parses a non-negative integer written in decimal or, with a `0x` prefix, in hexadecimal
/// (as Rivest's puzzle texts and most tools print them). Surrounding whitespace is ignored;
/// signs, empty strings and anything over 100,000 characters are refused.
pub fn parse_integer(s: &str) -> Option<Integer> {
    let s = s.trim();
    if s.len() > 100_000 {
        return None;
    }
    let (digits, radix) = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => (hex, 16),
        None => (s, 10),
    };
    if digits.is_empty() || !digits.bytes().all(|b| (b as char).is_digit(radix)) {
        return None;
    }
    Integer::from_str_radix(digits, radix as i32).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hourglass_arith::checkpoint::{CheckpointFile, CheckpointKey};
    use hourglass_arith::squaring::square_k_times;
    use std::time::Duration;

    fn toy_modulus() -> Integer {
        let p = (Integer::from(1) << 200u32).next_prime();
        let q = (Integer::from(3) << 199u32).next_prime();
        p * q
    }

    #[test]
    fn solves_stops_and_resumes_only_its_own_checkpoint() {
        let n = toy_modulus();
        let puzzle = RswPuzzle::new(n.clone(), Integer::from(2), 40_000).unwrap();
        let dir = std::env::temp_dir().join(format!("hg-rsw-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ckpt = dir.join("rsw.ckpt");
        let opts = SolveOptions {
            checkpoint: Some(CheckpointFile::new(
                &ckpt,
                CheckpointKey::from_bytes([5u8; 32]),
            )),
            checkpoint_every: Duration::ZERO,
            ..SolveOptions::default()
        };
        let stopped = solve_rsw(&puzzle, &opts, &AtomicBool::new(true), &mut |_| {}).unwrap();
        assert_eq!(stopped, SolveOutcome::Stopped { done: 0 });
        let solved = solve_rsw(&puzzle, &opts, &AtomicBool::new(false), &mut |_| {}).unwrap();
        assert_eq!(
            solved,
            SolveOutcome::Solved(square_k_times(&Integer::from(2), 40_000, &n))
        );
        let other = RswPuzzle::new(n, Integer::from(3), 40_000).unwrap();
        let err = solve_rsw(&other, &opts, &AtomicBool::new(false), &mut |_| {}).unwrap_err();
        assert!(err.to_string().contains("another"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn bad_puzzles_are_refused() {
        let n = toy_modulus();
        assert!(RswPuzzle::new(n.clone(), Integer::from(2), 0).is_err());
        assert!(RswPuzzle::new(n.clone(), Integer::from(2), MAX_SQUARINGS + 1).is_err());
        assert!(RswPuzzle::new(n.clone(), Integer::from(2), MAX_SQUARINGS).is_ok());
        assert!(RswPuzzle::new(n.clone(), Integer::from(1), 5).is_err());
        assert!(RswPuzzle::new(n.clone(), Integer::from(&n - 1u32), 5).is_err());
        assert!(RswPuzzle::new(n.clone() + 1u32, Integer::from(2), 5).is_err());
        assert!(RswPuzzle::new(Integer::from(3), Integer::from(2), 5).is_err());
    }

    #[test]
    fn integers_parse_in_decimal_and_hex() {
        assert_eq!(parse_integer("1234"), Some(Integer::from(1234)));
        assert_eq!(parse_integer(" 0xff\n"), Some(Integer::from(255)));
        assert_eq!(parse_integer("0XFF"), Some(Integer::from(255)));
        for bad in ["", "0x", "-5", "+5", "12a", "0xfg", "1 2", "ff"] {
            assert_eq!(parse_integer(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn messages_decode_and_classify() {
        let w = Integer::from(0xf0f0_f0f0u32);
        let z = Integer::from(0x4142_4344u32) ^ &w;
        assert_eq!(xor_message(&w, &z), b"ABCD");
        assert_eq!(printable_text(b"ABCD\n"), Some("ABCD\n"));
        assert_eq!(printable_text(b"AB\x00"), None);
        assert_eq!(printable_text(b"\xff\xfe"), None);
    }
}

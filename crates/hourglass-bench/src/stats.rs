//! Summary statistics and timing loops for the benchmarks.

use std::time::Instant;

use serde::Serialize;

/// Summary of a set of timings (milliseconds).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Summary {
    /// Number of samples.
    pub n: usize,
    /// Median.
    pub median: f64,
    /// Mean.
    pub mean: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Smallest.
    pub min: f64,
    /// Largest.
    pub max: f64,
}

impl Summary {
    /// Summarises `samples` (not empty).
    pub fn of(samples: &[f64]) -> Self {
        let mut s = samples.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len().max(1);
        let pick = |q: f64| {
            s.get(((n - 1) as f64 * q).round() as usize)
                .copied()
                .unwrap_or(f64::NAN)
        };
        let median = if n % 2 == 1 || s.len() < 2 {
            pick(0.5)
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        Self {
            n: s.len(),
            median,
            mean: s.iter().sum::<f64>() / n as f64,
            p90: pick(0.9),
            min: s.first().copied().unwrap_or(f64::NAN),
            max: s.last().copied().unwrap_or(f64::NAN),
        }
    }
}

/// Runs `f` `runs` times after one warm-up call and returns each duration in milliseconds.
pub fn time_ms<E>(runs: usize, mut f: impl FnMut() -> Result<(), E>) -> Result<Vec<f64>, E> {
    f()?;
    let mut out = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        f()?;
        out.push(t.elapsed().as_secs_f64() * 1e3);
    }
    Ok(out)
}

/// Times `f` and `g` alternately, `runs` rounds after one warm-up call of each, and returns each
/// one's durations in milliseconds, round by round. A comparison of two implementations on a
/// shared machine should use this: load from elsewhere that comes and goes then falls on both
/// alike, where timing one after the other lets it fall on one alone.
pub fn time_alternately_ms<E>(
    runs: usize,
    mut f: impl FnMut() -> Result<(), E>,
    mut g: impl FnMut() -> Result<(), E>,
) -> Result<(Vec<f64>, Vec<f64>), E> {
    let [tf, tg] = time_round_robin_ms(runs, [&mut f, &mut g])?;
    Ok((tf, tg))
}

/// [`time_alternately_ms`] for any number of functions: each round calls every one once, in
/// order.
pub fn time_round_robin_ms<E, const K: usize>(
    runs: usize,
    mut fs: [&mut dyn FnMut() -> Result<(), E>; K],
) -> Result<[Vec<f64>; K], E> {
    for f in fs.iter_mut() {
        f()?;
    }
    let mut out: [Vec<f64>; K] = std::array::from_fn(|_| Vec::with_capacity(runs));
    for _ in 0..runs {
        for (f, times) in fs.iter_mut().zip(out.iter_mut()) {
            let t = Instant::now();
            f()?;
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(out)
}

/// The median over rounds of `num[i] / den[i]` (timings from [`time_alternately_ms`]).
pub fn median_ratio(num: &[f64], den: &[f64]) -> f64 {
    let ratios: Vec<f64> = num.iter().zip(den).map(|(n, d)| n / d).collect();
    Summary::of(&ratios).median
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn summary_of_known_values() {
        let s = Summary::of(&[5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!(s.median, 3.0);
        assert_eq!(s.mean, 3.0);
        assert_eq!(s.min, 1.0);
        assert_eq!(s.max, 5.0);
        let s = Summary::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.median, 2.5);
    }

    #[test]
    fn median_ratio_is_taken_round_by_round() {
        // A slow phase that hits both sides of rounds 2 and 3 leaves the ratio at 2.
        let ours = [1.0, 1.0, 5.0, 5.0, 1.0];
        let theirs = [2.0, 2.0, 10.0, 10.0, 2.0];
        assert_eq!(median_ratio(&theirs, &ours), 2.0);
        assert_eq!(median_ratio(&[3.0, 1.0, 8.0], &[1.0, 1.0, 2.0]), 3.0);
    }

    #[test]
    fn alternate_timing_calls_each_side_once_per_round_after_a_warm_up() {
        let (mut a, mut b) = (0, 0);
        let (ta, tb) = time_alternately_ms::<()>(
            4,
            || {
                a += 1;
                Ok(())
            },
            || {
                b += 1;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!((a, b, ta.len(), tb.len()), (5, 5, 4, 4));
        assert!(time_alternately_ms(3, || Ok(()), || Err("no")).is_err());
    }

    #[test]
    fn round_robin_keeps_the_order_within_each_round() {
        let calls = std::cell::RefCell::new(Vec::new());
        let f = |k: usize| {
            calls.borrow_mut().push(k);
            Ok::<(), ()>(())
        };
        let [t0, t1, t2] = time_round_robin_ms(2, [&mut || f(0), &mut || f(1), &mut || f(2)])
            .map_err(|_| ())
            .unwrap();
        assert_eq!((t0.len(), t1.len(), t2.len()), (2, 2, 2));
        assert_eq!(*calls.borrow(), [0, 1, 2, 0, 1, 2, 0, 1, 2]);
    }
}

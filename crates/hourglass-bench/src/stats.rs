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
}

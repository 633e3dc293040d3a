//! Progress display for long computations: a bar with percent, rate and ETA on a terminal,
//! a line every 10 s otherwise, JSON lines with `--json`, nothing with `--quiet`.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use hourglass_arith::checkpoint::{CheckpointFile, CheckpointKey};
use hourglass_arith::squaring::Progress;

use crate::cli_error::CliError;

/// Options shared by every long computation: where checkpoints go, how often, and how
/// progress is shown.
#[derive(clap::Args, Debug, Clone)]
pub struct LongRunArgs {
    /// Checkpoint file (default: the output file's name plus `.ckpt`).
    #[arg(long, value_name = "FILE")]
    pub checkpoint: Option<std::path::PathBuf>,
    /// Seconds between checkpoints.
    #[arg(long, value_name = "SECONDS", default_value_t = 60)]
    pub checkpoint_every: u64,
    /// No progress output.
    #[arg(long)]
    pub quiet: bool,
    /// Progress as JSON lines on stderr, result as JSON on stdout.
    #[arg(long)]
    pub json: bool,
}

impl LongRunArgs {
    /// How progress is shown.
    pub fn mode(&self) -> ProgressMode {
        ProgressMode::from_flags(self.quiet, self.json)
    }

    /// The checkpoint interval (at least one second).
    pub fn every(&self) -> Duration {
        Duration::from_secs(self.checkpoint_every.max(1))
    }

    /// The checkpoint file: `--checkpoint`, or `default_base` plus `.ckpt`.
    pub fn checkpoint_path(&self, default_base: &std::path::Path) -> std::path::PathBuf {
        self.checkpoint.clone().unwrap_or_else(|| {
            let mut s = default_base.as_os_str().to_owned();
            s.push(".ckpt");
            std::path::PathBuf::from(s)
        })
    }

    /// The authenticated checkpoint at [`Self::checkpoint_path`].
    pub fn checkpoint_file(
        &self,
        default_base: &std::path::Path,
    ) -> Result<CheckpointFile, CliError> {
        checkpoint_file(self.checkpoint_path(default_base))
    }
}

/// The checkpoint at `path`, authenticated with this user's key (created on first use in the
/// state directory); an untrusted file is set aside with a warning on stderr.
pub fn checkpoint_file(path: std::path::PathBuf) -> Result<CheckpointFile, CliError> {
    let key = CheckpointKey::for_user().map_err(|e| {
        CliError::from(e).with_hint(
            "checkpoints are authenticated with a key in $HOURGLASS_STATE_DIR (default ~/.local/state/hourglass)",
        )
    })?;
    Ok(CheckpointFile::new(path, key).with_notice(|msg| eprintln!("hourglass: warning: {msg}")))
}

/// How progress is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProgressMode {
    /// A redrawn bar (terminal) or periodic lines (not a terminal).
    Human,
    /// One JSON object per line on stderr, every 5 s.
    Json,
    /// Nothing.
    Quiet,
}

impl ProgressMode {
    /// From the usual `--quiet` / `--json` flags.
    pub fn from_flags(quiet: bool, json: bool) -> Self {
        if quiet {
            Self::Quiet
        } else if json {
            Self::Json
        } else {
            Self::Human
        }
    }
}

/// Draws progress for one computation.
pub struct ProgressDisplay {
    mode: ProgressMode,
    label: String,
    terminal: bool,
    last: Option<Instant>,
    drew_bar: bool,
}

/// `3h02m10s`-style duration.
pub fn format_secs(secs: f64) -> String {
    if !secs.is_finite() {
        return "?".into();
    }
    let s = secs.round() as u64;
    let (h, m, sec) = (s / 3600, (s % 3600) / 60, s % 60);
    if h > 0 {
        format!("{h}h{m:02}m{sec:02}s")
    } else if m > 0 {
        format!("{m}m{sec:02}s")
    } else if secs < 10.0 {
        format!("{secs:.2}s")
    } else {
        format!("{sec}s")
    }
}

/// `1.23 M` style rate.
pub fn format_rate(rate: f64) -> String {
    if rate >= 1e6 {
        format!("{:.2} M", rate / 1e6)
    } else if rate >= 1e3 {
        format!("{:.1} k", rate / 1e3)
    } else {
        format!("{rate:.0} ")
    }
}

impl ProgressDisplay {
    /// A display for a computation described by `label`.
    pub fn new(mode: ProgressMode, label: &str) -> Self {
        Self {
            mode,
            label: label.to_string(),
            terminal: std::io::stderr().is_terminal(),
            last: None,
            drew_bar: false,
        }
    }

    /// Shows `p` (rate-limited).
    pub fn update(&mut self, p: Progress) {
        let interval = match (self.mode, self.terminal) {
            (ProgressMode::Quiet, _) => return,
            (ProgressMode::Json, _) => Duration::from_secs(5),
            (ProgressMode::Human, true) => Duration::from_millis(200),
            (ProgressMode::Human, false) => Duration::from_secs(10),
        };
        let finished = p.done >= p.total;
        if !finished && self.last.is_some_and(|t| t.elapsed() < interval) {
            return;
        }
        self.last = Some(Instant::now());
        let frac = if p.total == 0 {
            1.0
        } else {
            p.done as f64 / p.total as f64
        };
        let eta = if p.rate > 0.0 {
            (p.total - p.done) as f64 / p.rate
        } else {
            f64::INFINITY
        };
        let mut err = std::io::stderr().lock();
        match self.mode {
            ProgressMode::Json => {
                let _ = writeln!(
                    err,
                    "{}",
                    serde_json::json!({"progress": self.label, "done": p.done, "total": p.total, "rate": p.rate, "eta_secs": eta, "faults_corrected": p.faults})
                );
            }
            ProgressMode::Human if self.terminal => {
                let width = 30;
                let filled = ((frac * width as f64) as usize).min(width);
                let _ = write!(
                    err,
                    "\r{} [{}{}] {:5.1}%  {}sq/s  ETA {}{}   ",
                    self.label,
                    "#".repeat(filled),
                    ".".repeat(width - filled),
                    frac * 100.0,
                    format_rate(p.rate),
                    format_secs(eta),
                    if p.faults > 0 {
                        format!("  ({} faults corrected)", p.faults)
                    } else {
                        String::new()
                    }
                );
                self.drew_bar = true;
            }
            _ => {
                let _ = writeln!(
                    err,
                    "{}: {:.1}% ({} of {} squarings), {}sq/s, ETA {}",
                    self.label,
                    frac * 100.0,
                    p.done,
                    p.total,
                    format_rate(p.rate),
                    format_secs(eta)
                );
            }
        }
        let _ = err.flush();
    }

    /// Ends the bar line.
    pub fn finish(&mut self) {
        if self.drew_bar {
            eprintln!();
            self.drew_bar = false;
        }
    }
}

/// A stop flag raised by Ctrl-C (SIGINT) and SIGTERM; the handler is installed once.
pub fn stop_flag() -> &'static std::sync::atomic::AtomicBool {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::OnceLock;
    static FLAG: AtomicBool = AtomicBool::new(false);
    static INSTALLED: OnceLock<()> = OnceLock::new();
    INSTALLED.get_or_init(|| {
        let _ = ctrlc::set_handler(|| {
            if FLAG.swap(true, Ordering::SeqCst) {
                // Second Ctrl-C: give up at once (the last checkpoint is still on disk).
                std::process::exit(130);
            }
            eprintln!(
                "\nhourglass: stopping after the current block (Ctrl-C again to quit at once)..."
            );
        });
    });
    &FLAG
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_and_rates_format() {
        assert_eq!(format_secs(3723.0), "1h02m03s");
        assert_eq!(format_secs(75.0), "1m15s");
        assert_eq!(format_secs(1.5), "1.50s");
        assert_eq!(format_secs(f64::INFINITY), "?");
        assert_eq!(format_rate(1_500_000.0), "1.50 M");
        assert_eq!(format_rate(2500.0), "2.5 k");
    }
}

/// How a command that is not a squaring run reports: `--quiet` (errors and warnings only) and
/// `--json` (the result as one JSON object on standard output, nothing else there).
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct ReportArgs {
    /// Print nothing but errors and warnings.
    #[arg(long, conflicts_with = "json")]
    pub quiet: bool,
    /// Print the result as JSON on standard output.
    #[arg(long)]
    pub json: bool,
}

impl ReportArgs {
    /// Says what is happening or what was done, on standard error (not with --quiet or --json).
    pub fn info(&self, message: impl std::fmt::Display) {
        if !self.quiet && !self.json {
            eprintln!("hourglass: {message}");
        }
    }

    /// Prints the result as JSON on standard output (with --json only).
    pub fn result(&self, value: serde_json::Value) {
        if self.json {
            println!("{value}");
        }
    }
}

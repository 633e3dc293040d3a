//! `hourglass bench keygen`: the RSAtron experiment (time each of many key generations, plot
//! them in order and sorted), with OpenSSL's key generation timed in the same run.

use std::path::PathBuf;
use std::time::Instant;

use clap::Args;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::openssl_baseline;
use crate::plot::write_plot;
use crate::plot::{render, Panel, Series};
use crate::stats::Summary;
use hourglass_arith::atomic::Existing;
use hourglass_arith::entropy::EntropyArgs;
use hourglass_rsa::cli::KeygenShape;

/// Arguments of `hourglass bench keygen`.
#[derive(Args, Debug)]
pub struct KeygenBenchArgs {
    #[command(flatten)]
    shape: KeygenShape,
    /// How many keys to generate.
    #[arg(long, default_value_t = 20)]
    count: usize,
    /// How many OpenSSL keys to generate for the comparison (0 to skip; default: --count).
    #[arg(long)]
    openssl_count: Option<usize>,
    /// Write an SVG plot (each generation in order, and sorted) here.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// No progress messages on standard error (the tables still print).
    #[arg(long, conflicts_with = "json")]
    quiet: bool,
    #[command(flatten)]
    entropy: EntropyArgs,
}

#[derive(Serialize)]
struct Report {
    bits: u32,
    variant: String,
    threads: usize,
    count: usize,
    hourglass_ms: Vec<f64>,
    hourglass: Summary,
    openssl_version: &'static str,
    openssl_ms: Vec<f64>,
    openssl: Option<Summary>,
    median_ratio_openssl_over_hourglass: Option<f64>,
}

/// Runs the benchmark.
pub fn run(a: KeygenBenchArgs, existing: Existing) -> Result<()> {
    if !a.json {
        crate::machine::print_line();
    }
    if a.count == 0 {
        return Err(Error::ZeroCount { option: "--count" });
    }
    crate::plot::check_plot(a.plot.as_deref(), existing)?;
    let opts = a.shape.options()?;
    let mut rng = a.entropy.source()?;
    let mut ours = Vec::with_capacity(a.count);
    // A counter redrawn in place on a terminal; a line every 10 s otherwise (logs, pipes).
    let terminal = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let mut last_line = Instant::now();
    for i in 0..a.count {
        let t = Instant::now();
        let key = opts.generate(&mut *rng)?;
        ours.push(t.elapsed().as_secs_f64() * 1e3);
        drop(key);
        if !a.json && !a.quiet {
            if terminal {
                eprint!("\rhourglass: generated {}/{} keys", i + 1, a.count);
            } else if last_line.elapsed().as_secs() >= 10 || i + 1 == a.count {
                eprintln!("hourglass: generated {}/{} keys", i + 1, a.count);
                last_line = Instant::now();
            }
        }
    }
    if !a.json && !a.quiet && terminal {
        eprintln!();
    }
    let ossl_count = a.openssl_count.unwrap_or(a.count);
    let theirs = if ossl_count > 0 {
        if !a.json && !a.quiet {
            eprintln!("hourglass: timing {ossl_count} OpenSSL key generations...");
        }
        openssl_baseline::keygen_ms(opts.bits(), ossl_count)?
    } else {
        Vec::new()
    };
    let ours_s = Summary::of(&ours);
    let theirs_s = (!theirs.is_empty()).then(|| Summary::of(&theirs));
    let report = Report {
        bits: opts.bits(),
        variant: opts.variant().to_string(),
        threads: a.shape_threads(),
        count: a.count,
        hourglass: ours_s,
        openssl_version: openssl_baseline::version(),
        median_ratio_openssl_over_hourglass: theirs_s.map(|t| t.median / ours_s.median),
        openssl: theirs_s,
        hourglass_ms: ours.clone(),
        openssl_ms: theirs.clone(),
    };
    if let Some(path) = &a.plot {
        let mut sorted_ours = ours.clone();
        sorted_ours.sort_by(|x, y| y.total_cmp(x));
        let mut sorted_theirs = theirs.clone();
        sorted_theirs.sort_by(|x, y| y.total_cmp(x));
        let title_order = format!(
            "{}-bit {} key generation, in order (ms)",
            report.bits, report.variant
        );
        let title_sorted = "sorted from longest to shortest (ms)".to_string();
        let mut s1 = vec![Series {
            name: "hourglass",
            values: &ours,
        }];
        let mut s2 = vec![Series {
            name: "hourglass",
            values: &sorted_ours,
        }];
        if !theirs.is_empty() {
            s1.push(Series {
                name: "OpenSSL",
                values: &theirs,
            });
            s2.push(Series {
                name: "OpenSSL",
                values: &sorted_theirs,
            });
        }
        let svg = render(&[
            Panel {
                title: &title_order,
                x_label: "generation",
                y_label: "milliseconds",
                x_ticks: vec![],
                series: s1,
                log_y: false,
            },
            Panel {
                title: &title_sorted,
                x_label: "rank",
                y_label: "milliseconds",
                x_ticks: vec![],
                series: s2,
                log_y: false,
            },
        ]);
        write_plot(path, &svg, existing)?;
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
        return Ok(());
    }
    println!(
        "key generation: {} bits, variant {}, {} thread(s), entropy: {}",
        report.bits,
        report.variant,
        report.threads,
        rng.describe()
    );
    println!(
        "{:<22} {:>6} {:>10} {:>10} {:>10} {:>10} {:>10}",
        "", "n", "mean ms", "median ms", "p90 ms", "min ms", "max ms"
    );
    let row = |name: &str, s: &Summary| {
        println!(
            "{:<22} {:>6} {:>10.1} {:>10.1} {:>10.1} {:>10.1} {:>10.1}",
            name, s.n, s.mean, s.median, s.p90, s.min, s.max
        );
    };
    row("hourglass", &ours_s);
    if let Some(t) = &theirs_s {
        row("OpenSSL", t);
        println!(
            "median ratio OpenSSL / hourglass: {:.2}x ({}; {})",
            t.median / ours_s.median,
            if t.median >= ours_s.median {
                "hourglass is faster"
            } else {
                "hourglass is slower"
            },
            report.openssl_version
        );
    }
    println!("RSAtron post (4096 bits, 12 M-R rounds, 2017 i5): mean 80 712 ms");
    if let Some(p) = &a.plot {
        println!("plot written to {}", p.display());
    }
    Ok(())
}

impl KeygenBenchArgs {
    fn shape_threads(&self) -> usize {
        self.shape.threads()
    }
}

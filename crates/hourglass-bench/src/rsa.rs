//! `hourglass bench rsa`: the RSA-variants paper's table (encryption and decryption time of
//! standard, CRT, rebalanced, scheme A and scheme B), the cost of the countermeasures, and
//! OpenSSL's private and public operations on keys of the same sizes in the same run.

use std::path::PathBuf;

use clap::Args;
use hourglass_arith::entropy::{random_below, EntropySource};
use hourglass_arith::Integer;
use hourglass_rsa::padding::i2osp;
use hourglass_rsa::{Countermeasures, KeyGenOptions, PrivateKey, Variant};
use serde::Serialize;

use crate::args::parse_bits_list;
use crate::error::{Error, Result};
use crate::openssl_baseline::{self, OpensslKey};
use crate::plot::write_plot;
use crate::plot::{render, Panel, Series};
use crate::stats::{median_ratio, time_alternately_ms, time_ms, time_round_robin_ms, Summary};
use hourglass_arith::atomic::Existing;
use hourglass_arith::entropy::EntropyArgs;

/// Arguments of `hourglass bench rsa`.
#[derive(Args, Debug)]
pub struct RsaBenchArgs {
    /// Modulus sizes, comma-separated.
    #[arg(long, default_value = "1024,2048,3072,4096", value_parser = parse_bits_list)]
    bits: std::vec::Vec<u32>,
    /// Timed runs per operation (the median is reported).
    #[arg(long, default_value_t = 31)]
    runs: usize,
    /// Skip the OpenSSL comparison.
    #[arg(long)]
    no_openssl: bool,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// No progress messages on standard error (the tables still print).
    #[arg(long, conflicts_with = "json")]
    quiet: bool,
    /// Write an SVG plot of decryption and encryption times.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    #[command(flatten)]
    entropy: EntropyArgs,
}

/// The paper's Table 1 (Java 7, 1.6 GHz laptop), milliseconds: (bits, variant, enc, dec).
const PAPER: &[(u32, Variant, f64, f64)] = &[
    (1024, Variant::Standard, 34.2, 138.2),
    (1024, Variant::Crt, 37.8, 37.4),
    (1024, Variant::Rebalanced, 137.4, 19.0),
    (1024, Variant::SchemeA, 31.2, 40.4),
    (1024, Variant::SchemeB, 84.6, 37.4),
    (2048, Variant::Standard, 225.0, 672.0),
    (2048, Variant::Crt, 281.4, 227.8),
    (2048, Variant::Rebalanced, 649.8, 31.0),
];

fn paper(bits: u32, v: Variant) -> Option<(f64, f64)> {
    PAPER
        .iter()
        .find(|(b, pv, _, _)| *b == bits && *pv == v)
        .map(|&(_, _, e, d)| (e, d))
}

#[derive(Serialize, Clone)]
struct Row {
    variant: Variant,
    e_bits: u32,
    dp_bits: u32,
    encrypt_ms: Summary,
    decrypt_ms: Summary,
    decrypt_no_fault_check_ms: Summary,
    decrypt_no_countermeasures_ms: Summary,
    /// The fault check's cost, `dec / (dec -fc) - 1`: the median of the ratios of round-robin
    /// rounds.
    fault_check_cost: f64,
    paper_encrypt_ms: Option<f64>,
    paper_decrypt_ms: Option<f64>,
}

#[derive(Serialize)]
struct SizeReport {
    bits: u32,
    rows: Vec<Row>,
    openssl_private_ms: Option<Summary>,
    openssl_public_ms: Option<Summary>,
    /// Our CRT decryption's time over OpenSSL's private operation: the median of the ratios of
    /// alternate rounds.
    crt_over_openssl_private: Option<f64>,
    /// OpenSSL's private operation time over ours (CRT decryption), likewise: above 1 we are
    /// faster.
    speedup_over_openssl_private: Option<f64>,
    /// OpenSSL's private operation time over our rebalanced decryption, likewise.
    openssl_private_over_rebalanced: Option<f64>,
    /// Whether our private operations ran on the AVX-512 IFMA kernel (false on CPUs without it
    /// and with `HOURGLASS_NO_IFMA` set).
    ifma: bool,
}

/// The encryption and the three decryptions (default countermeasures, blinding only, neither)
/// of `key`, timed round-robin so that load from elsewhere falls on all alike: their summaries,
/// and the fault check's cost as the median over rounds of `dec / (dec -fc)`, minus one.
fn measure(
    key: &PrivateKey,
    runs: usize,
    rng: &mut dyn EntropySource,
) -> Result<(Summary, [Summary; 3], f64)> {
    let n = key.public().n().clone();
    let m = random_below(rng, &n)?;
    let c = key.public().public_op(&m)?;
    let keys = [
        Countermeasures::default(),
        Countermeasures {
            blinding: true,
            fault_check: false,
        },
        Countermeasures {
            blinding: false,
            fault_check: false,
        },
    ]
    .map(|cm| {
        let mut k = key.clone();
        k.set_countermeasures(cm);
        k
    });
    // Each decryption draws its blinding from the same source, one after the other.
    let rng = std::cell::RefCell::new(rng);
    let dec = |k: &PrivateKey| decrypt_checked(k, &c, &m, &mut **rng.borrow_mut());
    let [enc, dec, dec_nf, dec_none] = time_round_robin_ms(
        runs,
        [
            &mut || Ok(key.public().public_op(&m).map(|_| ())?),
            &mut || dec(&keys[0]),
            &mut || dec(&keys[1]),
            &mut || dec(&keys[2]),
        ],
    )?;
    let fault_check_cost = median_ratio(&dec, &dec_nf) - 1.0;
    Ok((
        Summary::of(&enc),
        [&dec, &dec_nf, &dec_none].map(|t| Summary::of(t)),
        fault_check_cost,
    ))
}

/// One private operation of `key` on `c`, which must give `m`.
fn decrypt_checked(
    key: &PrivateKey,
    c: &Integer,
    m: &Integer,
    rng: &mut dyn EntropySource,
) -> Result<()> {
    if key.private_op(c, rng)? != *m {
        return Err(Error::WrongDecryption);
    }
    Ok(())
}

/// Our private operation with `key` (default countermeasures) and OpenSSL's private operation,
/// timed alternately round by round: their durations in milliseconds.
fn against_openssl(
    key: &PrivateKey,
    openssl: &OpensslKey,
    input: &[u8],
    runs: usize,
    rng: &mut dyn EntropySource,
) -> Result<(Vec<f64>, Vec<f64>)> {
    let m = random_below(rng, key.public().n())?;
    let c = key.public().public_op(&m)?;
    time_alternately_ms(
        runs,
        || decrypt_checked(key, &c, &m, rng),
        || openssl.private_op(input),
    )
}

/// Runs the benchmark.
pub fn run(a: RsaBenchArgs, existing: Existing) -> Result<()> {
    if !a.json {
        crate::machine::print_line();
    }
    if a.runs == 0 {
        return Err(Error::ZeroCount { option: "--runs" });
    }
    crate::plot::check_plot(a.plot.as_deref(), existing)?;
    let mut rng = a.entropy.source()?;
    let mut reports = Vec::new();
    for &bits in &a.bits {
        if !(1024..=8192).contains(&bits) {
            return Err(Error::RsaBitsOutOfRange {
                bits,
                min: 1024,
                max: 8192,
            });
        }
        let mut rows = Vec::new();
        let (mut crt_key, mut rebalanced_key) = (None, None);
        for v in Variant::ALL {
            if !a.json && !a.quiet {
                eprintln!("hourglass: {bits}-bit {v}: generating key...");
            }
            let key = KeyGenOptions::new(bits, v).threads(2).generate(&mut *rng)?;
            let (enc, [dec, dec_nf, dec_none], fault_check_cost) =
                measure(&key, a.runs, &mut *rng)?;
            let [_, _, _, dp, _, _] = key.secret_components();
            let p = paper(bits, v);
            rows.push(Row {
                variant: v,
                e_bits: key.public().e().significant_bits(),
                dp_bits: dp.expose().significant_bits(),
                encrypt_ms: enc,
                decrypt_ms: dec,
                decrypt_no_fault_check_ms: dec_nf,
                decrypt_no_countermeasures_ms: dec_none,
                fault_check_cost,
                paper_encrypt_ms: p.map(|x| x.0),
                paper_decrypt_ms: p.map(|x| x.1),
            });
            match v {
                Variant::Crt => crt_key = Some(key),
                Variant::Rebalanced => rebalanced_key = Some(key),
                _ => {}
            }
        }
        let (mut ossl_priv, mut ossl_pub) = (None, None);
        let (mut crt_over, mut speedup, mut over_rebalanced) = (None, None, None);
        if !a.no_openssl {
            if let Some(key) = &crt_key {
                let ok = OpensslKey::import(key)?;
                let m = random_below(&mut *rng, key.public().n())?;
                let input = i2osp(&m, key.size())?;
                // The ratios come from alternate rounds (ours, OpenSSL's, ours, ...), the median
                // of each round's ratio, so that load from elsewhere falls on both alike.
                let (ours, theirs) = against_openssl(key, &ok, &input, a.runs, &mut *rng)?;
                crt_over = Some(median_ratio(&ours, &theirs));
                speedup = Some(median_ratio(&theirs, &ours));
                ossl_priv = Some(Summary::of(&theirs));
                if let Some(reb) = &rebalanced_key {
                    let (ours, theirs) = against_openssl(reb, &ok, &input, a.runs, &mut *rng)?;
                    over_rebalanced = Some(median_ratio(&theirs, &ours));
                }
                ossl_pub = Some(Summary::of(&time_ms(a.runs, || ok.public_op(&input))?));
            }
        }
        reports.push(SizeReport {
            bits,
            crt_over_openssl_private: crt_over,
            speedup_over_openssl_private: speedup,
            openssl_private_over_rebalanced: over_rebalanced,
            rows,
            openssl_private_ms: ossl_priv,
            openssl_public_ms: ossl_pub,
            ifma: ifma_in_use(),
        });
    }
    if let Some(path) = &a.plot {
        plot_times(path, &reports, existing)?;
    }
    if a.json {
        let j = serde_json::json!({ "openssl_version": openssl_baseline::version(), "runs": a.runs, "sizes": reports });
        println!("{}", serde_json::to_string_pretty(&j)?);
        return Ok(());
    }
    print_report(&reports, a.runs);
    Ok(())
}

fn print_report(reports: &[SizeReport], runs: usize) {
    println!("RSA variants: median of {runs} runs, milliseconds (raw m^e and c^d; decryption constant-time; each variant's four operations timed round-robin)");
    println!("dec = blinding + fault check (default); -fc = blinding only; bare = neither. Paper: Java 7, 1.6 GHz laptop (2013).");
    for r in reports {
        println!();
        println!("{} bits", r.bits);
        println!(
            "{:<11} {:>6} {:>6} {:>10} {:>10} {:>10} {:>10} {:>11} {:>11}",
            "variant", "e", "d_p", "enc", "dec", "dec -fc", "dec bare", "paper enc", "paper dec"
        );
        for row in &r.rows {
            let p = |x: Option<f64>| x.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".into());
            println!(
                "{:<11} {:>6} {:>6} {:>10.3} {:>10.3} {:>10.3} {:>10.3} {:>11} {:>11}",
                row.variant.name(),
                row.e_bits,
                row.dp_bits,
                row.encrypt_ms.median,
                row.decrypt_ms.median,
                row.decrypt_no_fault_check_ms.median,
                row.decrypt_no_countermeasures_ms.median,
                p(row.paper_encrypt_ms),
                p(row.paper_decrypt_ms)
            );
        }
        let fc: Vec<String> = r
            .rows
            .iter()
            .map(|row| {
                format!(
                    "{} {:+.1}%",
                    row.variant.name(),
                    row.fault_check_cost * 100.0
                )
            })
            .collect();
        println!(
            "fault-check cost (median of {runs} round-robin rounds' ratios): {}",
            fc.join(", ")
        );
        if let (Some(o), Some(pb)) = (r.openssl_private_ms, r.openssl_public_ms) {
            println!(
                "{:<11} {:>6} {:>6} {:>10.3} {:>10.3}   (OpenSSL CRT key: blinding + result check)",
                "openssl", 17, "-", pb.median, o.median
            );
        }
        if let (Some(x), Some(speedup)) =
            (r.crt_over_openssl_private, r.speedup_over_openssl_private)
        {
            let target = if r.ifma {
                "target >= 1.3x at 2048, 3072 and 4096 on IFMA CPUs"
            } else {
                "without IFMA the target is >= 1.0x; on an IFMA CPU run with HOURGLASS_NO_IFMA=1 \
                 OPENSSL_ia32cap=':~0x200000' to mask both sides' IFMA code"
            };
            println!(
                "ratio crt dec / OpenSSL private op: {x:.2}x, i.e. {speedup:.2}x OpenSSL's speed ({target}; \
                 median of {runs} alternate rounds' ratios)"
            );
        }
        if let Some(x) = r.openssl_private_over_rebalanced {
            println!("ratio OpenSSL private op / rebalanced dec: {x:.2}x (target >= 2x at 4096)");
        }
        print_speedups(r);
    }
}

fn print_speedups(r: &SizeReport) {
    let get = |v: Variant| r.rows.iter().find(|x| x.variant == v);
    let (Some(std), Some(crt), Some(reb), Some(a), Some(b)) = (
        get(Variant::Standard),
        get(Variant::Crt),
        get(Variant::Rebalanced),
        get(Variant::SchemeA),
        get(Variant::SchemeB),
    ) else {
        return;
    };
    let ratio = |x: f64, y: f64| x / y;
    let paper_ratio = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => format!("{:.2}x", x / y),
        _ => "-".into(),
    };
    println!("speed-ups (ours / paper):");
    let lines = [
        (
            "rebalanced dec vs standard dec",
            ratio(std.decrypt_ms.median, reb.decrypt_ms.median),
            paper_ratio(std.paper_decrypt_ms, reb.paper_decrypt_ms),
        ),
        (
            "rebalanced dec vs crt dec",
            ratio(crt.decrypt_ms.median, reb.decrypt_ms.median),
            paper_ratio(crt.paper_decrypt_ms, reb.paper_decrypt_ms),
        ),
        (
            "scheme-a enc vs rebalanced enc",
            ratio(reb.encrypt_ms.median, a.encrypt_ms.median),
            paper_ratio(reb.paper_encrypt_ms, a.paper_encrypt_ms),
        ),
        (
            "scheme-b enc vs rebalanced enc",
            ratio(reb.encrypt_ms.median, b.encrypt_ms.median),
            paper_ratio(reb.paper_encrypt_ms, b.paper_encrypt_ms),
        ),
        (
            "scheme-a dec slowdown vs rebalanced",
            ratio(a.decrypt_ms.median, reb.decrypt_ms.median),
            paper_ratio(a.paper_decrypt_ms, reb.paper_decrypt_ms),
        ),
        (
            "scheme-b dec slowdown vs rebalanced",
            ratio(b.decrypt_ms.median, reb.decrypt_ms.median),
            paper_ratio(b.paper_decrypt_ms, reb.paper_decrypt_ms),
        ),
    ];
    for (name, ours, theirs) in lines {
        println!("  {name:<36} {ours:>7.2}x   paper {theirs}");
    }
}

fn plot_times(path: &std::path::Path, reports: &[SizeReport], existing: Existing) -> Result<()> {
    let ticks: Vec<String> = reports.iter().map(|r| r.bits.to_string()).collect();
    // One median per variant and size (NaN where a size lacks the variant).
    let per_variant = |pick: fn(&Row) -> f64| -> Vec<(Variant, Vec<f64>)> {
        Variant::ALL
            .iter()
            .map(|&v| {
                let medians = reports
                    .iter()
                    .map(|r| {
                        r.rows
                            .iter()
                            .find(|x| x.variant == v)
                            .map_or(f64::NAN, pick)
                    })
                    .collect();
                (v, medians)
            })
            .collect()
    };
    let dec = per_variant(|x| x.decrypt_ms.median);
    let enc = per_variant(|x| x.encrypt_ms.median);
    let ossl: Vec<f64> = reports
        .iter()
        .map(|r| r.openssl_private_ms.map(|s| s.median).unwrap_or(f64::NAN))
        .collect();
    fn series(data: &[(Variant, Vec<f64>)]) -> Vec<Series<'_>> {
        data.iter()
            .map(|(v, vals)| Series {
                name: v.name(),
                values: vals,
            })
            .collect()
    }
    let mut dec_series = series(&dec);
    dec_series.push(Series {
        name: "openssl private",
        values: &ossl,
    });
    let svg = render(&[
        Panel {
            title: "decryption (median ms, log scale)",
            x_label: "modulus bits",
            y_label: "ms",
            x_ticks: ticks.clone(),
            series: dec_series,
            log_y: true,
        },
        Panel {
            title: "encryption (median ms, log scale)",
            x_label: "modulus bits",
            y_label: "ms",
            x_ticks: ticks,
            series: series(&enc),
            log_y: true,
        },
    ]);
    write_plot(path, &svg, existing)
}

/// Whether this process's private operations use the AVX-512 IFMA kernel.
fn ifma_in_use() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        hourglass_arith::mont::ifma::available()
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

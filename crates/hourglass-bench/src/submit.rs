//! `hourglass bench submit`: trustless offline submission on a public set. Seals a bundle of
//! proof-carrying links on the RSA-2048 modulus, reports the proofs' cost against the squarings
//! they prove (measured in the same run), then times public verification of the whole bundle and,
//! for comparison, the institution's trapdoor verification of a private bundle of the same shape.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use clap::Args;
use hourglass_arith::checkpoint::{CheckpointFile, CheckpointKey};
use hourglass_arith::entropy::OsEntropy;
use hourglass_timelock::bundle::{Bundle, SealOptions, SetKind};
use hourglass_timelock::public::{seal_public, ModulusOrigin, OriginPins, ProofScheme, PublicSet};
use hourglass_timelock::submission::{seal, PuzzleSet};
use hourglass_timelock::verdict::{Verifier, VerifyOptions};
use hourglass_timelock::{PuzzleHash, PuzzleKeyGen};
use hourglass_vdf::eval::evaluate_in_memory;
use hourglass_vdf::group::RsaGroup;
use hourglass_vdf::{Pietrzak, Vdf, Wesolowski};
use serde::Serialize;

use crate::stats::{time_ms, Summary};
use crate::{Error, Result};

/// Options of `hourglass bench submit`.
#[derive(Args, Debug)]
pub struct SubmitBenchArgs {
    /// Links in the bundle.
    #[arg(long, default_value_t = 10)]
    links: usize,
    /// Squarings per link.
    #[arg(long, default_value_t = 1 << 20)]
    squarings: u64,
    /// Timed verifications of the whole bundle (after one warm-up).
    #[arg(long, default_value_t = 101)]
    runs: usize,
    /// The proof the links carry.
    #[arg(long, value_enum, default_value = "wesolowski")]
    proof: ProofScheme,
    /// Skip the private-set comparison (it makes a 2048-bit puzzle key per link).
    #[arg(long)]
    no_private: bool,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
    /// No progress messages on standard error (the tables still print).
    #[arg(long, conflicts_with = "json")]
    quiet: bool,
}

#[derive(Serialize)]
struct Report {
    bits: u32,
    links: usize,
    squarings_per_link: u64,
    seal_seconds: f64,
    link_squaring_seconds: f64,
    link_proof_seconds: f64,
    proof_overhead_percent: f64,
    public_verify_ms: Summary,
    private_verify_ms: Option<Summary>,
}

/// Runs the benchmark.
pub fn run(a: SubmitBenchArgs) -> Result<()> {
    if !a.json {
        crate::machine::print_line();
    }
    if a.links == 0 || a.links > 1000 || a.squarings == 0 || a.runs == 0 {
        return Err(Error::NotPositive {
            options: "--links (1 to 1000), --squarings and --runs",
        });
    }
    let group = RsaGroup::rsa_2048();
    let set = PublicSet::new(
        "bench",
        group.modulus().clone(),
        ModulusOrigin::Rsa2048,
        vec![a.squarings],
        1.0,
        false,
        PuzzleHash::Sha256,
        a.proof,
        "",
    )?;
    const DOCUMENT: &[u8] = b"hourglass bench submit";
    let digest = PuzzleHash::Sha256.digest(DOCUMENT);
    let dir = tempfile::tempdir().map_err(Error::TempDir)?;
    let key = CheckpointKey::ephemeral()?;
    let options = |until: f64| SealOptions {
        expect_secs: None,
        until_credited_secs: Some(until),
        open_ended: false,
        checkpoint: CheckpointFile::new(dir.path().join("bench.ckpt"), key.clone()),
        checkpoint_every: Duration::from_secs(3600),
    };
    if !a.json && !a.quiet {
        eprintln!(
            "hourglass: sealing {} links of {} squarings on RSA-2048 with {} proofs...",
            a.links,
            a.squarings,
            set.proof.name()
        );
    }
    let until = (a.links as u64 * a.squarings) as f64;
    let mut bundle = Bundle::new_public(PuzzleHash::Sha256, &digest);
    let start = Instant::now();
    seal_public(
        &set,
        &mut bundle,
        &options(until),
        &AtomicBool::new(false),
        &mut |_, _, _| {},
        &mut |_| Ok(()),
    )?;
    let seal_secs = start.elapsed().as_secs_f64();
    // The proof's cost against the squarings it proves: one link, evaluated (the same
    // error-checked engine, keeping the prover's powers) then proved, best of three.
    let x = group.hash_to_element(b"hourglass bench submit, one link")?;
    let (mut squaring_secs, mut proof_secs) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        let t = Instant::now();
        let evaluation = evaluate_in_memory(&group, &x, a.squarings)?;
        squaring_secs = squaring_secs.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        match set.proof {
            ProofScheme::Wesolowski => Wesolowski::default().prove(&evaluation).map(drop),
            ProofScheme::Pietrzak => Pietrzak::default().prove(&evaluation).map(drop),
        }?;
        proof_secs = proof_secs.min(t.elapsed().as_secs_f64());
    }
    // Verification as every surface does it: the library's one verifier, every link, on two
    // threads (the figures of earlier stops).
    let verify_options = VerifyOptions {
        threads: 2,
        ..VerifyOptions::default()
    };
    let verifier = Verifier::public(set.clone(), &OriginPins::default())?;
    let document = verifier.digest(DOCUMENT).map_err(Error::Io)?;
    let public_samples = time_ms(a.runs, || -> Result<()> {
        let v = verifier.verify(&bundle, &document, &verify_options, &mut OsEntropy)?;
        if v.is_valid() {
            Ok(())
        } else {
            Err(Error::BundleRejected {
                set: SetKind::Public,
            })
        }
    })?;
    let private = if a.no_private {
        None
    } else {
        if !a.json && !a.quiet {
            eprintln!(
                "hourglass: making a 2048-bit puzzle key and a private bundle of the same shape for comparison..."
            );
        }
        let mut rng = OsEntropy;
        let keys = vec![PuzzleKeyGen::new(2048, a.squarings)
            .rate(1.0, false)
            .generate(&mut rng)?];
        let pset = PuzzleSet::new("bench", keys.iter().map(|k| k.public_key()).collect())?;
        let mut pbundle = Bundle::new(PuzzleHash::Sha256, &digest);
        seal(
            &pset,
            &mut pbundle,
            &SealOptions {
                expect_secs: None,
                ..options(until)
            },
            &AtomicBool::new(false),
            &mut |_, _, _| {},
            &mut |_| Ok(()),
        )?;
        let verifier = Verifier::private(keys)?;
        let document = verifier.digest(DOCUMENT).map_err(Error::Io)?;
        let samples = time_ms(a.runs, || -> Result<()> {
            let v = verifier.verify(&pbundle, &document, &verify_options, &mut rng)?;
            if v.is_valid() {
                Ok(())
            } else {
                Err(Error::BundleRejected {
                    set: SetKind::Private,
                })
            }
        })?;
        Some(Summary::of(&samples))
    };
    let report = Report {
        bits: 2048,
        links: bundle.links.len(),
        squarings_per_link: a.squarings,
        seal_seconds: seal_secs,
        link_squaring_seconds: squaring_secs,
        link_proof_seconds: proof_secs,
        proof_overhead_percent: 100.0 * proof_secs / squaring_secs.max(1e-9),
        public_verify_ms: Summary::of(&public_samples),
        private_verify_ms: private,
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).unwrap_or_default()
        );
        return Ok(());
    }
    println!(
        "public set on RSA-2048: {} links of {} squarings, {} proofs",
        report.links,
        report.squarings_per_link,
        set.proof.name()
    );
    println!(
        "sealing the bundle: {:.2} s; one link: squarings {:.3} s ({:.2} M/s), proof {:.3} s: proof overhead {:.1}% of the squarings (target < 10%)",
        report.seal_seconds,
        report.link_squaring_seconds,
        report.squarings_per_link as f64 / report.link_squaring_seconds.max(1e-9) / 1e6,
        report.link_proof_seconds,
        report.proof_overhead_percent
    );
    let v = report.public_verify_ms;
    println!(
        "public verification of the whole bundle (no secret): median {:.2} ms, p90 {:.2} ms, min {:.2} ms over {} runs (target < 20 ms); {:.2} ms per link",
        v.median,
        v.p90,
        v.min,
        v.n,
        v.median / report.links as f64
    );
    if let Some(p) = report.private_verify_ms {
        println!(
            "for comparison, the institution's trapdoor verification of a private bundle of {} links (2048-bit keys, 2 threads): median {:.2} ms",
            report.links, p.median
        );
    }
    Ok(())
}

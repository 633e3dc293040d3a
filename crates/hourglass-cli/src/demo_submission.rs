//! The offline-submission demo (see `demo.rs`).

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime};

use hourglass_arith::entropy::OsEntropy;
use hourglass_arith::prime::random_modulus;
use hourglass_arith::squaring::measure_rate;
use hourglass_rsa::{KeyGenOptions, Variant};
use hourglass_timelock::bundle::{Bundle, Link, SealOptions};
use hourglass_timelock::certificate::{CaCertificate, CertificateOptions, PuzzleCertificate};
use hourglass_timelock::submission::{credited_secs, seal, PuzzleSet};
use hourglass_timelock::verdict::{rfc3339, unix_secs, Dating, Verdict, Verifier};
use hourglass_timelock::PuzzleKeyGen;

use crate::cli_error::{CliError, DemoFailure, OutputProblem, Usage};
use crate::files::{write_output_replacing, Sensitivity};
use crate::progress::{format_rate, format_secs, ProgressDisplay, ProgressMode};

fn step(title: &str) {
    println!("\n== {title}");
}

fn err(e: impl std::error::Error + Send + Sync + 'static) -> CliError {
    CliError::Demo(DemoFailure::Step(Box::new(e)))
}

/// Runs the demo with puzzles of `scale` times the default durations.
pub fn run(bits: u32, scale: f64, keep: Option<&Path>) -> Result<(), CliError> {
    if !(1024..=4096).contains(&bits) {
        return Err(Usage::range("--bits", "be within 1024..=4096").into());
    }
    in_directory(scale, keep, |dir| flow(bits, scale, dir))
}

/// Runs `demo` in `keep` (kept) or a temporary directory (removed afterwards).
pub fn in_directory(
    scale: f64,
    keep: Option<&Path>,
    demo: impl FnOnce(&Path) -> Result<(), CliError>,
) -> Result<(), CliError> {
    if !(0.05..=100.0).contains(&scale) {
        return Err(Usage::range("--scale", "be within 0.05..=100").into());
    }
    let tmp;
    let dir = match keep {
        Some(d) => {
            // The demo's files replace those of an earlier demo, never a user's own files.
            let non_empty = std::fs::read_dir(d).is_ok_and(|mut e| e.next().is_some());
            if non_empty
                && crate::files::existing_policy() == hourglass_arith::atomic::Existing::Refuse
            {
                return Err(CliError::output(d, OutputProblem::NotEmpty)
                    .with_hint("pass --force to let the demo replace its files there, or choose another --keep directory"));
            }
            std::fs::create_dir_all(d).map_err(err)?;
            d.to_path_buf()
        }
        None => {
            tmp = std::env::temp_dir().join(format!("hourglass-demo-{}", std::process::id()));
            std::fs::create_dir_all(&tmp).map_err(err)?;
            tmp.clone()
        }
    };
    let result = demo(&dir);
    if keep.is_none() {
        let _ = std::fs::remove_dir_all(&dir);
    } else {
        println!("\nfiles kept in {}", dir.display());
    }
    result
}

fn flow(bits: u32, scale: f64, dir: &Path) -> Result<(), CliError> {
    let mut rng = OsEntropy;
    let total = Instant::now();
    println!("hourglass demo: offline submission with RSA time-lock puzzles ({bits}-bit keys)");
    println!("An author finishes a paper just before a 23:59 deadline but is offline; a chain of");
    println!("puzzles solved for the paper proves, once online again, that it was final in time.");

    step("Institution: measure this machine's sequential squaring rate (the reference S)");
    let n = random_modulus(bits, &mut rng)?;
    let rate = measure_rate(&n, Duration::from_secs(1));
    println!("$ hourglass puzzle bench --bits {bits}");
    println!("   S = {}squarings/s at {bits} bits", format_rate(rate));

    step("Institution: publish a puzzle set calibrated to S");
    let durations: Vec<f64> = [16.0, 8.0, 4.0, 2.0].iter().map(|d| d * scale).collect();
    println!(
        "$ hourglass submit new-set --durations {} --rate {rate:.0} -o keys/",
        durations
            .iter()
            .map(|d| format!("{d}s"))
            .collect::<Vec<_>>()
            .join(",")
    );
    let keygen = Instant::now();
    let mut keys = Vec::new();
    for d in &durations {
        let t = (d * rate).round() as u64;
        keys.push(
            PuzzleKeyGen::new(bits, t)
                .rate(rate, true)
                .issuer("Demo Conference 2027")
                .generate(&mut rng)
                .map_err(err)?,
        );
    }
    let set = PuzzleSet::new(
        "Demo Conference 2027 deadline",
        keys.iter().map(|k| k.public_key()).collect(),
    )
    .map_err(err)?;
    write_output_replacing(
        &dir.join("set.json"),
        set.to_json().as_bytes(),
        Sensitivity::Public,
    )?;
    for k in &keys {
        println!(
            "   puzzle {:>6}: t = {:>10} squarings, fingerprint {}",
            format_secs(k.public().credited_secs()),
            k.public().t(),
            &k.public().fingerprint_hex()[..16]
        );
    }
    println!(
        "   {} keys made in {:.0} ms (r = 2^t mod phi(n) by one exponentiation each)",
        keys.len(),
        keygen.elapsed().as_secs_f64() * 1e3
    );

    step(
        "Institution: make a CA and certify each puzzle key (X.509, exponent E = z*2^65 + 2t + 1)",
    );
    println!("$ hourglass ca new --name 'Demo Conference CA' -o CA");
    let ca_key = KeyGenOptions::new(2048, Variant::Crt)
        .threads(2)
        .generate(&mut rng)?;
    let ca = CaCertificate::self_signed(
        &ca_key,
        &CertificateOptions::days("Demo Conference CA", 30),
        &mut rng,
    )
    .map_err(err)?;
    write_output_replacing(
        &dir.join("CA.crt"),
        ca.to_pem().as_bytes(),
        Sensitivity::Public,
    )?;
    let mut checked = 0;
    for (i, k) in keys.iter().enumerate() {
        let cert = PuzzleCertificate::issue(
            k.public(),
            &ca,
            &ca_key,
            &CertificateOptions::days("Demo Conference 2027 puzzle", 30),
            &mut rng,
        )
        .map_err(err)?;
        let path = dir.join(format!("puzzle-{i}.crt"));
        write_output_replacing(&path, cert.to_pem().as_bytes(), Sensitivity::Public)?;
        // The author's side: a certificate is only trusted after checking it against the CA.
        let back = PuzzleCertificate::from_bytes(cert.to_pem().as_bytes())
            .and_then(|c| c.verify(&ca, SystemTime::now()))
            .map_err(err)?;
        if back == k.public_key() {
            checked += 1;
        }
    }
    println!("$ hourglass puzzle certify -k keys/puzzle-16s.key --ca-key CA.key --ca-cert CA.crt -o puzzle-16s.crt   (x{})", keys.len());
    println!("   {checked} of {} certificates verified against CA.crt (openssl verify -CAfile CA.crt accepts them too)", keys.len());

    step("Author: the paper is final; the network is down. Seal it, expecting to be offline ~22 s");
    let paper = b"Title: On the Punctuality of Authors.\nAbstract: ...\n".to_vec();
    write_output_replacing(&dir.join("paper.txt"), &paper, Sensitivity::Public)?;
    let finished_at = SystemTime::now();
    let digest = set.hash().digest(&paper);
    let expect = 22.0 * scale;
    println!("$ hourglass submit seal --set set.json -i paper.txt --expect {expect}s --until {expect}s -o paper.bundle");
    let mut bundle = Bundle::new(set.hash(), &digest);
    let options = SealOptions {
        expect_secs: Some(expect),
        until_credited_secs: Some(expect),
        open_ended: false,
        checkpoint: crate::progress::checkpoint_file(dir.join("paper.bundle.ckpt"))?,
        checkpoint_every: Duration::from_secs(5),
    };
    let mut display: Option<(usize, ProgressDisplay)> = None;
    seal(
        &set,
        &mut bundle,
        &options,
        &AtomicBool::new(false),
        &mut |i, key, p| {
            if display.as_ref().is_none_or(|(j, _)| *j != i) {
                if let Some((_, d)) = display.as_mut() {
                    d.finish();
                }
                display = Some((
                    i,
                    ProgressDisplay::new(
                        ProgressMode::Human,
                        &format!("   link {} ({})", i + 1, format_secs(key.credited_secs())),
                    ),
                ));
            }
            if let Some((_, d)) = display.as_mut() {
                d.update(p);
            }
        },
        &mut |b| {
            write_output_replacing(
                &dir.join("paper.bundle"),
                b.to_json().as_bytes(),
                Sensitivity::Public,
            )
            .map_err(|e| hourglass_timelock::Error::OnLink(e.to_string()))
        },
    )
    .map_err(err)?;
    if let Some((_, d)) = display.as_mut() {
        d.finish();
    }
    println!(
        "   bundle: {} links, {} of puzzles",
        bundle.links.len(),
        format_secs(credited_secs(&set, &bundle))
    );

    step("Institution: the paper arrives after the deadline; verify the bundle with the private keys");
    let deadline = finished_at + Duration::from_secs(1);
    let received = SystemTime::now();
    println!("$ hourglass submit verify --keys keys/ -i paper.txt paper.bundle --deadline <finish time + 1 s>");
    let t = Instant::now();
    let verifier = Verifier::private(keys).map_err(err)?;
    let verify = |b: &Bundle, document: &[u8]| -> Result<Verdict, CliError> {
        verifier
            .verify_bytes(b, document, &mut OsEntropy)
            .map_err(err)
    };
    let verdict = verify(&bundle, &paper)?;
    let verify_ms = t.elapsed().as_secs_f64() * 1e3;
    for l in verdict.links() {
        println!(
            "   link {}: {} ({})",
            l.index() + 1,
            if l.is_valid() { "valid" } else { "INVALID" },
            format_secs(l.credited_secs())
        );
    }
    let dating = Dating::new(&verdict, unix_secs(received), Some(unix_secs(deadline)));
    println!(
        "   verified in {verify_ms:.1} ms: credited {}; received {} after the deadline {}; the paper provably existed by {} -> {}",
        format_secs(verdict.credited_secs()),
        rfc3339(dating.received()),
        rfc3339(deadline),
        rfc3339(dating.predated_to()),
        if dating.before_deadline == Some(true) { "ACCEPTED (predated)" } else { "rejected" }
    );
    if !verdict.is_valid() {
        return Err(CliError::Demo(DemoFailure::Check(
            "demo: the bundle did not verify",
        )));
    }

    step("Institution: tampering is caught");
    let mut other = paper.clone();
    other.extend_from_slice(b"(a late edit)\n");
    let v = verify(&bundle, &other)?;
    println!(
        "   an edited paper: {}",
        if v.is_valid() {
            "accepted (BUG)"
        } else {
            "rejected: the digest differs"
        }
    );
    let mut forged = bundle.clone();
    if let Some(Link::Puzzle { c, .. }) = forged.links.last_mut() {
        let flipped = if c.ends_with('0') { '1' } else { '0' };
        c.pop();
        c.push(flipped);
    }
    let v = verify(&forged, &paper)?;
    println!(
        "   an altered solution: {}",
        if v.is_valid() {
            "accepted (BUG)"
        } else {
            "rejected: c^d != m"
        }
    );
    if v.is_valid() {
        return Err(CliError::Demo(DemoFailure::Check(
            "demo: a forged bundle verified",
        )));
    }

    step("Author, alternative (section IV-C): open-ended squaring for 4 s, no puzzle chosen in advance");
    println!("$ hourglass submit seal --set set.json -i paper.txt --open-ended -o open.bundle   (Ctrl-C when online)");
    let mut open = Bundle::new(set.hash(), &digest);
    let options = SealOptions {
        expect_secs: None,
        until_credited_secs: Some(4.0 * scale),
        open_ended: true,
        checkpoint: crate::progress::checkpoint_file(dir.join("open.bundle.ckpt"))?,
        checkpoint_every: Duration::from_secs(5),
    };
    let mut d = ProgressDisplay::new(ProgressMode::Human, "   squaring");
    seal(
        &set,
        &mut open,
        &options,
        &AtomicBool::new(false),
        &mut |_, _, p| d.update(p),
        &mut |_| Ok(()),
    )
    .map_err(err)?;
    d.finish();
    let v = verify(&open, &paper)?;
    println!(
        "   {} squarings verified with the trapdoor (m^(2^t mod phi(n)) == c): {}, credited {}",
        open.total_squarings(),
        if v.is_valid() { "valid" } else { "INVALID" },
        format_secs(v.credited_secs())
    );
    println!(
        "\ndemo finished in {}.",
        format_secs(total.elapsed().as_secs_f64())
    );
    Ok(())
}

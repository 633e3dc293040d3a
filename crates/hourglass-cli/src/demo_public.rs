//! `hourglass demo --public`: trustless offline submission end to end, in about a minute. A
//! three-party committee generates a 2048-bit modulus over loopback TLS (three `hourglass dkg
//! party` processes), the institution publishes a public set on it, the author seals a paper
//! with proof-carrying links, and a third party, holding only public files, verifies the bundle
//! in milliseconds. Every step prints its command and its time.

use std::path::Path;
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant, SystemTime};

use hourglass_arith::checkpoint::{CheckpointFile, CheckpointKey};
use hourglass_arith::entropy::OsEntropy;
use hourglass_arith::squaring::measure_rate;
use hourglass_dkg::transcript::{read_certificates, PublicTranscript};
use hourglass_timelock::bundle::{Bundle, Link, SealOptions};
use hourglass_timelock::public::{
    seal_public, CommitteePins, ModulusOrigin, OriginPins, ProofScheme, PublicSet,
};
use hourglass_timelock::verdict::{unix_secs, Dating, Verdict, Verifier};
use hourglass_timelock::PuzzleHash;

use crate::cli_error::{CliError, DemoFailure, LocalRun};
use crate::files::{write_output_replacing, Sensitivity};
use crate::progress::{format_rate, format_secs, ProgressDisplay, ProgressMode};

fn step(title: &str) {
    println!("\n== {title}");
}

fn err(e: impl std::error::Error + Send + Sync + 'static) -> CliError {
    CliError::Demo(DemoFailure::Step(Box::new(e)))
}

/// Runs the public demo in `dir`, with link lengths `scale` times the default.
pub fn flow(scale: f64, dir: &Path) -> Result<(), CliError> {
    let total = Instant::now();
    println!("hourglass demo --public: trustless offline submission on a committee's modulus");
    println!(
        "Nobody, not even the institution, knows the factors of the modulus; every link of the"
    );
    println!("author's bundle carries a proof, so anyone can verify it and nobody can forge one.");

    step("Committee: three parties generate a 2048-bit modulus over loopback TLS");
    let committee = dir.join("committee");
    println!("$ hourglass dkg local --parties 3 --bits 2048 -o committee");
    let t = Instant::now();
    let exe = std::env::current_exe().map_err(err)?;
    let out = Command::new(exe)
        .args([
            "dkg",
            "local",
            "--parties",
            "3",
            "--bits",
            "2048",
            "--json",
            "-o",
        ])
        .arg(&committee)
        .output()
        .map_err(|source| LocalRun::Start {
            action: "start the committee",
            source,
        })?;
    if !out.status.success() {
        return Err(LocalRun::Committee {
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        }
        .into());
    }
    let transcript_text =
        std::fs::read_to_string(committee.join("transcript.json")).map_err(err)?;
    let transcript = PublicTranscript::from_json(&transcript_text).map_err(err)?;
    println!(
        "   three party processes agreed on N in {} (each holds a share of d; no one holds p or q)",
        format_secs(t.elapsed().as_secs_f64())
    );
    println!(
        "   published: committee/public.pem and committee/transcript.json (fingerprint {}...)",
        &transcript.fingerprint_hex()[..16]
    );

    step("Institution: measure the squaring rate and publish a public set on N (no key to keep)");
    let t = Instant::now();
    let rate = measure_rate(&transcript.n, Duration::from_secs(1));
    let durations: Vec<f64> = [12.0, 6.0, 3.0].iter().map(|d| d * scale).collect();
    let squarings: Vec<u64> = durations
        .iter()
        .map(|d| ((d * rate).round() as u64).max(1))
        .collect();
    let set = PublicSet::new(
        "hourglass demo",
        transcript.n.clone(),
        ModulusOrigin::Dkg {
            committee: format!(
                "cluster '{}', members {:?}",
                transcript.cluster, transcript.members
            ),
            transcript: transcript.fingerprint_hex(),
        },
        squarings,
        rate,
        true,
        PuzzleHash::Sha256,
        ProofScheme::Wesolowski,
        &humantime::format_rfc3339_seconds(SystemTime::now()).to_string(),
    )
    .map_err(err)?;
    let pub_dir = dir.join("pub");
    std::fs::create_dir_all(&pub_dir).map_err(err)?;
    write_output_replacing(
        &pub_dir.join("set.json"),
        set.to_json().as_bytes(),
        Sensitivity::Public,
    )?;
    println!(
        "$ hourglass submit new-set --public --modulus committee/transcript.json --durations {} -o pub/",
        durations
            .iter()
            .map(|d| format!("{d}s"))
            .collect::<Vec<_>>()
            .join(",")
    );
    println!(
        "   S = {}squarings/s; links of {} published in pub/set.json ({})",
        format_rate(rate),
        durations
            .iter()
            .map(|d| format_secs(*d))
            .collect::<Vec<_>>()
            .join(", "),
        format_secs(t.elapsed().as_secs_f64())
    );

    step("Author, offline: seal the paper with proof-carrying links, expecting ~21 s offline");
    let paper = b"Title: Punctuality Without Trust.\nAbstract: ...\n".to_vec();
    write_output_replacing(&dir.join("paper.txt"), &paper, Sensitivity::Public)?;
    let finished_at = SystemTime::now();
    let expect = 21.0 * scale;
    println!("$ hourglass submit seal --set pub/set.json -i paper.txt --expect {expect}s --until {expect}s -o paper.bundle");
    let mut bundle = Bundle::new_public(set.hash, &set.hash.digest(&paper));
    let options = SealOptions {
        expect_secs: Some(expect),
        until_credited_secs: Some(expect),
        open_ended: false,
        checkpoint: CheckpointFile::new(dir.join("paper.bundle.ckpt"), CheckpointKey::ephemeral()?),
        checkpoint_every: Duration::from_secs(5),
    };
    let t = Instant::now();
    let mut display: Option<(usize, ProgressDisplay)> = None;
    seal_public(
        &set,
        &mut bundle,
        &options,
        &AtomicBool::new(false),
        &mut |index, link_t, p| {
            if display.as_ref().is_none_or(|(i, _)| *i != index) {
                if let Some((_, d)) = display.as_mut() {
                    d.finish();
                }
                let label = format!(
                    "   link {} ({}, squarings then proof)",
                    index + 1,
                    format_secs(set.credited_secs(link_t))
                );
                display = Some((index, ProgressDisplay::new(ProgressMode::Human, &label)));
            }
            if let Some((_, d)) = display.as_mut() {
                d.update(p);
            }
        },
        &mut |_| Ok(()),
    )
    .map_err(err)?;
    if let Some((_, d)) = display.as_mut() {
        d.finish();
    }
    write_output_replacing(
        &dir.join("paper.bundle"),
        bundle.to_json().as_bytes(),
        Sensitivity::Public,
    )?;
    println!(
        "   bundle: {} links with their proofs, {} credited, sealed in {}",
        bundle.links.len(),
        format_secs(hourglass_timelock::public::credited_secs(&set, &bundle)),
        format_secs(t.elapsed().as_secs_f64())
    );

    step("A third party (a reviewer, a court): verify with public files only");
    println!(
        "   it holds pub/set.json, paper.bundle, paper.txt, committee/transcript.json and the"
    );
    println!("   members' certificates it trusts (committee/certs/): no key, no share");
    println!("$ hourglass submit verify --public paper.bundle --document paper.txt --set pub/set.json --transcript committee/transcript.json --committee-cert committee/certs");
    let received = SystemTime::now();
    let t = Instant::now();
    let reread = PublicSet::from_json(&set.to_json()).map_err(err)?;
    let pins = OriginPins {
        committee: Some(CommitteePins {
            transcript: transcript_text,
            certificates: read_certificates(&committee.join("certs")).map_err(err)?,
        }),
    };
    let verifier = Verifier::public(reread, &pins).map_err(err)?;
    let verify = |b: &Bundle, document: &[u8]| -> Result<Verdict, CliError> {
        verifier
            .verify_bytes(b, document, &mut OsEntropy)
            .map_err(err)
    };
    let verdict = verify(&bundle, &paper)?;
    let ms = t.elapsed().as_secs_f64() * 1e3;
    println!("   trust: {}", verdict.trust().assumption());
    for l in verdict.links() {
        println!(
            "   link {}: {} ({} squarings, {})",
            l.index() + 1,
            if l.is_valid() { "valid" } else { "INVALID" },
            l.t(),
            format_secs(l.credited_secs())
        );
    }
    let dating = Dating::new(&verdict, unix_secs(received), None);
    println!(
        "   verified in {ms:.1} ms: {}, {} credited: the paper existed by {} (it was final at {})",
        if verdict.is_valid() {
            "valid"
        } else {
            "INVALID"
        },
        format_secs(verdict.credited_secs()),
        humantime::format_rfc3339_seconds(dating.predated_to()),
        humantime::format_rfc3339_seconds(finished_at)
    );
    if !verdict.is_valid() || !verdict.trust().trustless() {
        return Err(CliError::Demo(DemoFailure::Check(
            "the demo bundle did not verify",
        )));
    }

    step("Forgeries are caught, by anyone");
    let other = verify(&bundle, b"another paper")?;
    println!(
        "   the bundle with another paper: {}",
        if other.is_valid() {
            "ACCEPTED (bug)"
        } else {
            "rejected: the digest differs"
        }
    );
    let mut forged = bundle.clone();
    if let Some(Link::Vdf { t, .. }) = forged.links.last_mut() {
        *t *= 4;
    }
    let v = verify(&forged, &paper)?;
    println!(
        "   a link claiming 4x its squarings: {}",
        v.reason()
            .map_or("ACCEPTED (bug)".into(), |r| format!("rejected: {r}"))
    );
    println!(
        "\ndemo finished in {}.",
        format_secs(total.elapsed().as_secs_f64())
    );
    Ok(())
}

//! `hourglass demo`: the whole offline-submission flow in about half a minute, and
//! `hourglass demo --rsa`: a tour of the RSA variants.
//!
//! The offline-submission demo plays both parties on this machine: the institution measures
//! the squaring rate and publishes a puzzle set calibrated to it; the author, "offline" at the
//! deadline, seals a document by solving a chain of puzzles; the institution verifies the
//! bundle, credits the solving time and predates the document. It then shows that a changed
//! document or an altered solution is rejected, and runs the open-ended mode. Every step prints
//! the equivalent command.

use std::time::Instant;

use clap::Args;
use hourglass_arith::entropy::OsEntropy;
use hourglass_rsa::encoding::{decode_private_key, encode_private_key, KeyFormat};
use hourglass_rsa::inspect::inspect_private;
use hourglass_rsa::padding::{Oaep, Pss};
use hourglass_rsa::{HashAlg, KeyGenOptions, Variant};

use crate::cli_error::{CliError, DemoFailure, Usage};

/// Arguments of `hourglass demo`.
#[derive(Args, Debug)]
#[command(
    after_help = "Examples:\n  hourglass demo\n  hourglass demo --scale 3      (three times longer puzzles)\n  hourglass demo --public       (trustless: a committee's modulus, proofs, public verification)\n  hourglass demo --rsa"
)]
pub struct DemoArgs {
    /// Modulus size.
    #[arg(long, default_value_t = 2048)]
    bits: u32,
    /// Multiply the puzzle durations (1 = about 30 s in all).
    #[arg(long, default_value_t = 1.0)]
    scale: f64,
    /// Tour the RSA variants instead.
    #[arg(long, conflicts_with = "public")]
    rsa: bool,
    /// Trustless submission instead: a 3-party committee's modulus, a public set, proof-carrying
    /// links, and verification by a third party with public files only (about a minute).
    #[arg(long)]
    public: bool,
    /// Keep the demo's files in this directory (default: a temporary directory, removed).
    #[arg(long, value_name = "DIR")]
    keep: Option<std::path::PathBuf>,
}

/// Runs the demo.
pub fn run(a: DemoArgs) -> Result<(), CliError> {
    if a.rsa {
        return rsa_tour(&a);
    }
    if a.public {
        return crate::demo_submission::in_directory(a.scale, a.keep.as_deref(), |dir| {
            crate::demo_public::flow(a.scale, dir)
        });
    }
    crate::demo_submission::run(a.bits, a.scale, a.keep.as_deref())
}

fn rsa_tour(a: &DemoArgs) -> Result<(), CliError> {
    if !(1024..=4096).contains(&a.bits) {
        return Err(Usage::range("--bits for the demo", "be within 1024..=4096").into());
    }
    let mut rng = OsEntropy;
    println!("hourglass demo: the RSA foundation on {}-bit keys", a.bits);
    println!("(entropy: OS CSPRNG; every step has a command-line equivalent shown after '$')\n");
    let message = b"The deadline was 23:59; this document was final at 23:41.";
    for v in Variant::ALL {
        println!("== {v}");
        println!(
            "$ hourglass rsa keygen --variant {v} --bits {} -o {v}.pem",
            a.bits
        );
        let t = Instant::now();
        let key = KeyGenOptions::new(a.bits, v)
            .threads(2)
            .generate(&mut rng)?;
        let gen = t.elapsed();
        let [_, _, _, dp, _, _] = key.secret_components();
        println!(
            "   generated in {:.0} ms: e has {} bits, d_p has {} bits",
            gen.as_secs_f64() * 1e3,
            key.public().e().significant_bits(),
            dp.expose().significant_bits()
        );
        let public = key.public_key();
        let t = Instant::now();
        let ct = Oaep::new(HashAlg::Sha256).encrypt(&public, message, &mut rng)?;
        let enc = t.elapsed();
        let t = Instant::now();
        let pt = Oaep::new(HashAlg::Sha256).decrypt(&key, &ct, &mut rng)?;
        let dec = t.elapsed();
        if pt != message {
            return Err(CliError::Demo(DemoFailure::Check(
                "demo: OAEP round trip failed",
            )));
        }
        println!(
            "$ hourglass rsa encrypt/decrypt (OAEP-SHA256): encrypt {:.3} ms, decrypt {:.3} ms (blinded, fault-checked)",
            enc.as_secs_f64() * 1e3,
            dec.as_secs_f64() * 1e3
        );
        let sig = Pss::new(HashAlg::Sha256).sign(&key, message, &mut rng)?;
        Pss::new(HashAlg::Sha256).verify(&public, message, &sig)?;
        let mut tampered = message.to_vec();
        tampered[4] ^= 1;
        let rejected = Pss::new(HashAlg::Sha256)
            .verify(&public, &tampered, &sig)
            .is_err();
        println!("$ hourglass rsa sign/verify (PSS-SHA256): valid signature accepted, tampered document rejected: {rejected}");
        let pem = encode_private_key(&key, KeyFormat::Pem)?;
        let back = decode_private_key(&pem)?;
        println!(
            "   PKCS#8 PEM round trip: {} (openssl pkey reads the same file)",
            back.public() == key.public()
        );
        let report = inspect_private(&key);
        println!(
            "$ hourglass rsa inspect -i {v}.pem: {} -> verdict {:?}\n",
            report.shape, report.verdict
        );
    }
    println!("== a key with the paper's own sizes (1024 bits, 160-bit d_p), allowed only with --allow-insecure");
    let weak = KeyGenOptions::new(1024, Variant::Rebalanced)
        .dp_bits(160)
        .allow_insecure(true)
        .generate(&mut rng)?;
    let report = inspect_private(&weak);
    println!(
        "$ hourglass rsa inspect -i paper.pem: verdict {:?}",
        report.verdict
    );
    for f in report
        .findings
        .iter()
        .filter(|f| f.severity != hourglass_rsa::inspect::Severity::Info)
    {
        println!("   - {}", f.message);
    }
    println!(
        "\nNext: `hourglass bench rsa` reproduces the variants paper's table against OpenSSL."
    );
    Ok(())
}

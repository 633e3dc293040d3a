//! `hourglass demo`: a short tour on small built-in defaults.
//!
//! Until the time-lock flow lands, the tour covers the RSA foundation: it generates a key of
//! each variant, encrypts, decrypts, signs and verifies, writes and re-reads key files, and
//! inspects a deliberately weak key, printing the equivalent commands as it goes.

use std::time::Instant;

use clap::Args;
use hourglass_arith::entropy::OsEntropy;
use hourglass_rsa::encoding::{decode_private_key, encode_private_key, KeyFormat};
use hourglass_rsa::inspect::inspect_private;
use hourglass_rsa::padding::{Oaep, Pss};
use hourglass_rsa::{HashAlg, KeyGenOptions, Variant};

use crate::cli_error::CliError;

/// Arguments of `hourglass demo`.
#[derive(Args, Debug)]
pub struct DemoArgs {
    /// Modulus size for the tour.
    #[arg(long, default_value_t = 2048)]
    bits: u32,
}

/// Runs the tour.
pub fn run(a: DemoArgs) -> Result<(), CliError> {
    if !(1024..=4096).contains(&a.bits) {
        return Err(CliError::usage(
            "--bits for the demo must be within 1024..=4096",
        ));
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
            return Err(CliError::new("demo: OAEP round trip failed"));
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

//! Writes seed corpora for the fuzz targets: small insecure keys of every variant, private and
//! public, in every form hourglass writes (PKCS#8 / SPKI PEM, PKCS#1 PEM, DER, hex, JSON), plus
//! bare PKCS#1 DER (which the decoder accepts but never writes) and a few near-miss inputs.
//!
//! Run from the repository root or from `fuzz/`:
//!
//! ```text
//! cargo run --manifest-path fuzz/Cargo.toml --example gen_corpus
//! ```
//!
//! The keys are deterministic (fixed seeds), so the corpus is the same on every run.

use std::path::{Path, PathBuf};

use hourglass_arith::entropy::SeededEntropy;
use hourglass_rsa::encoding::{encode_private_key, encode_public_key, KeyFormat};
use hourglass_rsa::{KeyGenOptions, Variant};

const TARGETS: [&str; 3] = ["decode_private_key", "decode_public_key", "decode_key"];

fn format_name(f: KeyFormat) -> &'static str {
    match f {
        KeyFormat::Pem => "pkcs8",
        KeyFormat::Pkcs1 => "pkcs1",
        KeyFormat::Der => "der",
        KeyFormat::Hex => "hex",
        KeyFormat::Json => "json",
    }
}

fn main() {
    let root: PathBuf = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus");
    let mut seeds: Vec<(String, Vec<u8>)> = Vec::new();
    for variant in Variant::ALL {
        let mut rng = SeededEntropy::new(format!("hourglass fuzz corpus {variant}").as_bytes());
        let key = match KeyGenOptions::new(512, variant)
            .allow_insecure(true)
            .generate(&mut rng)
        {
            Ok(k) => k,
            Err(e) => panic!("cannot generate a 512-bit {variant} key: {e}"),
        };
        for format in hourglass_fuzz::FORMATS {
            let private = encode_private_key(&key, format).expect("encode private");
            let public = encode_public_key(key.public(), format).expect("encode public");
            seeds.push((
                format!("{variant}-{}-private", format_name(format)),
                private.to_vec(),
            ));
            seeds.push((
                format!("{variant}-{}-public", format_name(format)),
                public.clone(),
            ));
            if format == KeyFormat::Pkcs1 {
                let (_, der) = pem_rfc7468::decode_vec(&private).expect("PKCS#1 PEM");
                seeds.push((format!("{variant}-pkcs1der-private"), der));
                let (_, der) = pem_rfc7468::decode_vec(&public).expect("PKCS#1 PEM");
                seeds.push((format!("{variant}-pkcs1der-public"), der));
            }
        }
    }
    // Near misses that exercise the error paths.
    for (name, bytes) in [
        ("empty", &b""[..]),
        (
            "encrypted",
            b"-----BEGIN ENCRYPTED PRIVATE KEY-----\nMAA=\n-----END ENCRYPTED PRIVATE KEY-----\n",
        ),
        (
            "certificate",
            b"-----BEGIN CERTIFICATE-----\nMAA=\n-----END CERTIFICATE-----\n",
        ),
        ("json-empty", b"{}"),
        ("hex-public-min", b"n = 10000000000000001\ne = 3\n"),
        ("hex-variant-only", b"variant = crt\n"),
    ] {
        seeds.push((name.to_string(), bytes.to_vec()));
    }
    for target in TARGETS {
        let dir = root.join(target);
        std::fs::create_dir_all(&dir).expect("create corpus directory");
        for (name, bytes) in &seeds {
            std::fs::write(dir.join(format!("seed-{name}")), bytes).expect("write seed");
        }
    }
    println!(
        "wrote {} seeds into each of {:?} under {}",
        seeds.len(),
        TARGETS,
        root.display()
    );
}

//! `hourglass ca ...` and `hourglass puzzle certify`: an institution's certificate authority and
//! time-lock certificates for puzzle keys (paper section V-A).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use clap::{Args, Subcommand};
use hourglass_rsa::encoding::{encode_private_key, encode_private_key_encrypted, KeyFormat};
use hourglass_rsa::{KeyGenOptions, Variant};
use hourglass_timelock::certificate::{
    CaCertificate, CertificateError, CertificateOptions, PuzzleCertificate, ValidityPeriod,
};
use hourglass_x509::name::check_common_name;
use hourglass_x509::BACKDATE;

use crate::cli_error::{CliError, SelfCheck, Usage};
use crate::files::{check_output, read_input, with_ext, write_output, Sensitivity};
use crate::key_files::{load_private, new_passphrase, passphrase_given};
use crate::progress::ReportArgs;
use crate::puzzle_files::load_puzzle_key;
use hourglass_arith::entropy::EntropyArgs;

/// Longest validity accepted on the command line (100 years).
const MAX_DAYS: u32 = 36_500;

/// Arguments of `hourglass ca`.
#[derive(Args, Debug)]
pub struct CaArgs {
    #[command(subcommand)]
    command: CaCommand,
}

#[derive(Subcommand, Debug)]
enum CaCommand {
    /// Make a self-signed institution CA: NAME.key (RSA private key, PKCS#8 PEM, 0600; encrypted
    /// with --encrypt or --passphrase-file) and NAME.crt (X.509 v3 CA certificate, PEM).
    #[command(after_help = "Examples:
  hourglass ca new -o example-ca --name 'Example University'
  hourglass ca new -o example-ca --name 'Example University' --days 3650 --bits 4096
Then certify puzzle keys with it, and let authors check them:
  hourglass puzzle certify -k deadline.key --ca-key example-ca.key --ca-cert example-ca.crt -o deadline.crt
  hourglass puzzle solve -p deadline.crt --ca example-ca.crt -i paper.pdf -o paper.sol
  openssl verify -CAfile example-ca.crt deadline.crt")]
    New(NewArgs),
}

#[derive(Args, Debug)]
struct NewArgs {
    /// Output name: writes NAME.key and NAME.crt (an existing NAME.key is never overwritten).
    #[arg(short, long, value_name = "NAME")]
    out: PathBuf,
    /// The CA's name: the certificate's common name (1 to 64 characters).
    #[arg(long, default_value = "hourglass time-lock CA")]
    name: String,
    /// Days the CA certificate is valid.
    #[arg(long, default_value_t = 3650)]
    days: u32,
    /// Size of the CA's RSA modulus in bits (2048 to 8192).
    #[arg(long, default_value_t = 3072)]
    bits: u32,
    /// Encrypt NAME.key with a passphrase (PKCS#8 PBES2, as `rsa keygen --encrypt`): from
    /// --passphrase-file, or asked twice. Implied by --passphrase-file.
    #[arg(long)]
    encrypt: bool,
    #[command(flatten)]
    report: ReportArgs,
    #[command(flatten)]
    entropy: EntropyArgs,
}

/// Arguments of `hourglass puzzle certify`.
#[derive(Args, Debug)]
pub struct CertifyArgs {
    /// The puzzle private key (NAME.key from `hourglass puzzle keygen`).
    #[arg(short, long, value_name = "FILE")]
    key: PathBuf,
    /// The CA's private key (CA.key from `hourglass ca new`).
    #[arg(long, value_name = "FILE")]
    ca_key: PathBuf,
    /// The CA's certificate (CA.crt from `hourglass ca new`).
    #[arg(long, value_name = "FILE")]
    ca_cert: PathBuf,
    /// Where to write the time-lock certificate (PEM).
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    /// Days the certificate is valid (0 expires at once: for tests).
    #[arg(long, default_value_t = 365)]
    days: u32,
    /// Common name of the subject (default: the puzzle key's issuer, else the key file's name).
    #[arg(long)]
    name: Option<String>,
    #[command(flatten)]
    report: ReportArgs,
    #[command(flatten)]
    entropy: EntropyArgs,
}

/// Runs `hourglass ca ...`.
pub fn run(args: CaArgs) -> Result<(), CliError> {
    match args.command {
        CaCommand::New(a) => new_ca(a),
    }
}

/// Loads and checks a CA certificate (PEM or DER).
pub(crate) fn load_ca_certificate(path: &Path) -> Result<CaCertificate, CliError> {
    let bytes = read_input(path, "CA certificate")?;
    CaCertificate::from_bytes(&bytes).map_err(|e| {
        let malformed = matches!(e, CertificateError::Malformed(_));
        let err = CliError::from(e).with_path(path);
        if malformed || err.hint().is_none() {
            err.with_hint("--ca and --ca-cert take the CA certificate (NAME.crt, PEM or DER) written by `hourglass ca new`")
        } else {
            err
        }
    })
}

fn check_days(days: u32, min: u32) -> Result<(), CliError> {
    if !(min..=MAX_DAYS).contains(&days) {
        return Err(Usage::range("--days", format!("be within {min}..={MAX_DAYS}")).into());
    }
    Ok(())
}

fn rfc3339(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t).to_string()
}

fn new_ca(a: NewArgs) -> Result<(), CliError> {
    if !(2048..=8192).contains(&a.bits) {
        return Err(
            CliError::from(Usage::range("--bits", "be within 2048..=8192")).with_hint(
                "a CA key signs certificates for years: 3072 bits or more is the usual choice",
            ),
        );
    }
    check_days(a.days, 1)?;
    check_common_name(&a.name).map_err(CliError::from)?;
    let (key_path, crt_path) = (with_ext(&a.out, ".key"), with_ext(&a.out, ".crt"));
    check_output(&key_path)?;
    check_output(&crt_path)?;
    // A passphrase is the intent to encrypt the CA's key (asked before the work).
    let encrypt = a.encrypt || passphrase_given();
    let passphrase = if encrypt {
        Some(new_passphrase(&key_path)?)
    } else {
        None
    };
    let mut rng = a.entropy.source()?;
    if !a.report.json && !a.report.quiet {
        eprintln!(
            "hourglass: generating a {}-bit RSA key for the CA '{}'...",
            a.bits, a.name
        );
    }
    let key = KeyGenOptions::new(a.bits, Variant::Crt).generate(&mut *rng)?;
    let options = CertificateOptions {
        common_name: a.name.clone(),
        validity: ValidityPeriod::days_from_now(a.days),
    };
    let cert = CaCertificate::self_signed(&key, &options, &mut *rng).map_err(CliError::from)?;
    let key_pem = match &passphrase {
        Some(p) => encode_private_key_encrypted(&key, p.as_bytes(), &mut *rng)?,
        None => encode_private_key(&key, KeyFormat::Pem)?,
    };
    write_output(&key_path, &key_pem, Sensitivity::Secret)?;
    if let Err(e) = write_output(&crt_path, cert.to_pem().as_bytes(), Sensitivity::Public) {
        // Never leave half a CA behind.
        let _ = std::fs::remove_file(&key_path);
        return Err(e);
    }
    if a.report.json {
        println!(
            "{}",
            serde_json::json!({"key": key_path, "certificate": crt_path, "subject": cert.subject(), "bits": a.bits, "encrypted": encrypt, "not_after": rfc3339(cert.not_after()), "serial": cert.serial_hex(), "sha256": cert.sha256_hex()})
        );
    } else if !a.report.quiet {
        eprintln!(
            "hourglass: wrote {} (private{}) and {} (CA certificate): {}, {}-bit RSA, valid until {}, SHA-256 fingerprint {}",
            key_path.display(),
            if encrypt { ", encrypted" } else { "" },
            crt_path.display(),
            cert.subject(),
            a.bits,
            rfc3339(cert.not_after()),
            cert.sha256_hex()
        );
    }
    Ok(())
}

/// The default common name: the puzzle's issuer, else the key file's name without `.key`.
fn default_common_name(issuer: &str, key_path: &Path) -> String {
    if !issuer.is_empty() {
        return issuer.to_string();
    }
    let name = key_path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    name.strip_suffix(".key").unwrap_or(&name).to_string()
}

/// Runs `hourglass puzzle certify`.
pub(crate) fn certify(a: CertifyArgs) -> Result<(), CliError> {
    check_days(a.days, 0)?;
    check_output(&a.out)?;
    let puzzle = load_puzzle_key(&a.key)?;
    let public = puzzle.public();
    let common_name = a
        .name
        .clone()
        .unwrap_or_else(|| default_common_name(&public.meta().issuer, &a.key));
    check_common_name(&common_name).map_err(|e| {
        CliError::from(e).with_hint(if a.name.is_some() {
            "--name takes 1 to 64 characters"
        } else {
            "the puzzle's issuer or file name is not a usable common name: pass --name"
        })
    })?;
    let ca = load_ca_certificate(&a.ca_cert)?;
    let ca_key = load_private(&a.ca_key)?;
    let mut rng = a.entropy.source()?;
    let options = CertificateOptions {
        common_name,
        validity: ValidityPeriod::days_from_now(a.days),
    };
    let cert = PuzzleCertificate::issue(public, &ca, &ca_key, &options, &mut *rng)
        .map_err(CliError::from)?;
    // Read back what was written, at the moment of issue, before anyone else relies on it.
    let issued_at = cert.not_before() + BACKDATE;
    let back = cert
        .verify(&ca, issued_at)
        .map_err(|e| CliError::SelfCheck(SelfCheck::Certificate(e)))?;
    if back != *public {
        return Err(CliError::SelfCheck(SelfCheck::CertificateKey));
    }
    write_output(&a.out, cert.to_pem().as_bytes(), Sensitivity::Public)?;
    if cert.not_after() > ca.not_after() && !a.report.json && !a.report.quiet {
        eprintln!(
            "hourglass: warning: the certificate is valid until {}, but the CA certificate only until {}",
            rfc3339(cert.not_after()),
            rfc3339(ca.not_after())
        );
    }
    if a.report.json {
        println!(
            "{}",
            serde_json::json!({"certificate": a.out, "subject": cert.subject(), "issuer": cert.issuer(), "not_after": rfc3339(cert.not_after()), "serial": cert.serial_hex(), "fingerprint": public.fingerprint_hex(), "t": public.t()})
        );
    } else if !a.report.quiet {
        eprintln!(
            "hourglass: wrote {}: time-lock certificate for puzzle {} (t = {} squarings), CN={}, issued by {}, valid until {}",
            a.out.display(),
            &public.fingerprint_hex()[..16],
            public.t(),
            cert.common_name().unwrap_or_default(),
            cert.issuer(),
            rfc3339(cert.not_after())
        );
    }
    Ok(())
}

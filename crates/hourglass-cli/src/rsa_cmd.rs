//! `hourglass rsa ...`: keys and operations for the five variants.

use std::io::Read;
use std::path::PathBuf;

use clap::{Args, Subcommand, ValueEnum};
use hourglass_rsa::cli::KeygenShape;
use hourglass_rsa::encoding::{
    encode_private_key, encode_private_key_encrypted, encode_public_key, KeyFormat,
};
use hourglass_rsa::hazmat::{raw_decrypt, raw_encrypt};
use hourglass_rsa::inspect::{inspect_private, inspect_public, Inspection, Severity};
use hourglass_rsa::padding::{Oaep, Pkcs1v15Sign, Pss};
use hourglass_rsa::HashAlg;

use crate::cli_error::{CliError, IoOp, Usage};
use crate::files::{check_output, open_input, read_input, write_output, Sensitivity};
use crate::key_files::{load_private, load_public, new_passphrase, passphrase_given, read_key};
use crate::progress::ReportArgs;
use hourglass_arith::entropy::EntropyArgs;

/// Arguments of `hourglass rsa`.
#[derive(Args, Debug)]
pub struct RsaArgs {
    #[command(subcommand)]
    command: RsaCommand,
}

#[derive(Subcommand, Debug)]
enum RsaCommand {
    /// Generate a private key of any variant.
    #[command(after_help = "Examples:
  hourglass rsa keygen -o key.pem                               (CRT, 3072 bits, e = 65537)
  hourglass rsa keygen --variant rebalanced --bits 4096 -o fast-decrypt.pem
  hourglass rsa keygen --variant scheme-b --bits 2048 --e-bits 576 --dp-bits 576 -o k.pem
  hourglass rsa keygen --bits 4096 --mr-rounds 12 --entropy /dev/hwrng --format hex -o k.hex
  hourglass rsa keygen --variant rebalanced --bits 1024 --dp-bits 160 --allow-insecure -o paper.pem")]
    Keygen(KeygenArgs),
    /// Write the public half of a key.
    #[command(after_help = "Example:\n  hourglass rsa pubkey -i key.pem -o pub.pem")]
    Pubkey(PubkeyArgs),
    /// Encrypt a short message (OAEP by default).
    #[command(
        after_help = "Examples:\n  hourglass rsa encrypt -k pub.pem -i secret.txt -o secret.bin\n  echo -n hi | hourglass rsa encrypt -k pub.pem -i - -o - --hash sha1 > ct.bin"
    )]
    Encrypt(CryptArgs),
    /// Decrypt a ciphertext.
    #[command(
        after_help = "Example:\n  hourglass rsa decrypt -k key.pem -i secret.bin -o secret.txt"
    )]
    Decrypt(CryptArgs),
    /// Sign a file (PSS with SHA-256 by default).
    #[command(
        after_help = "Examples:\n  hourglass rsa sign -k key.pem -i paper.pdf -s paper.sig\n  hourglass rsa sign -k key.pem -i paper.pdf -s paper.sig --pkcs1v15"
    )]
    Sign(SignArgs),
    /// Verify a signature (exit 0 valid, 1 invalid).
    #[command(
        after_help = "Example:\n  hourglass rsa verify -k pub.pem -i paper.pdf -s paper.sig"
    )]
    Verify(SignArgs),
    /// Name a key's variant, its sizes, and judge its safety (works on OpenSSL keys too).
    #[command(
        after_help = "Examples:\n  hourglass rsa inspect -i key.pem\n  hourglass rsa inspect -i pub.pem --json\n  hourglass rsa inspect -i key.pem --fail-on weak"
    )]
    Inspect(InspectArgs),
}

/// Key file formats on the command line.
#[derive(ValueEnum, Debug, Clone, Copy)]
enum FormatArg {
    /// PEM PKCS#8 (private) / SubjectPublicKeyInfo (public).
    Pem,
    /// PEM PKCS#1.
    Pkcs1,
    /// DER PKCS#8 / SubjectPublicKeyInfo.
    Der,
    /// `name = hex` lines (RSAtron style), records the variant.
    Hex,
    /// JSON with hexadecimal integers, records the variant.
    Json,
}

/// The name of a format as written on the command line (`hex`).
fn format_name(f: FormatArg) -> String {
    f.to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

impl From<FormatArg> for KeyFormat {
    fn from(f: FormatArg) -> Self {
        match f {
            FormatArg::Pem => KeyFormat::Pem,
            FormatArg::Pkcs1 => KeyFormat::Pkcs1,
            FormatArg::Der => KeyFormat::Der,
            FormatArg::Hex => KeyFormat::Hex,
            FormatArg::Json => KeyFormat::Json,
        }
    }
}

#[derive(ValueEnum, Debug, Clone, Copy)]
enum HashArg {
    Sha1,
    Sha256,
    Sha384,
    Sha512,
}

impl From<HashArg> for HashAlg {
    fn from(h: HashArg) -> Self {
        match h {
            HashArg::Sha1 => HashAlg::Sha1,
            HashArg::Sha256 => HashAlg::Sha256,
            HashArg::Sha384 => HashAlg::Sha384,
            HashArg::Sha512 => HashAlg::Sha512,
        }
    }
}

#[derive(Args, Debug)]
struct KeygenArgs {
    #[command(flatten)]
    shape: KeygenShape,
    /// Key file format.
    #[arg(long, value_enum, default_value = "pem")]
    format: FormatArg,
    /// Output private key file (mode 0600); `-` for stdout.
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    /// Also write the public key here.
    #[arg(long, value_name = "FILE")]
    pubout: Option<PathBuf>,
    /// Encrypt the private key with a passphrase (PKCS#8 PBES2: PBKDF2-HMAC-SHA-256 and
    /// AES-256-CBC, as `openssl pkey -aes256` writes): from --passphrase-file, or asked twice.
    /// Implied by --passphrase-file: a given passphrase always encrypts the key.
    #[arg(long)]
    encrypt: bool,
    #[command(flatten)]
    entropy: EntropyArgs,
    #[command(flatten)]
    report: ReportArgs,
}

#[derive(Args, Debug)]
struct PubkeyArgs {
    /// Private (or public) key file.
    #[arg(short, long, value_name = "FILE")]
    input: PathBuf,
    /// Output public key file; `-` for stdout.
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value = "pem")]
    format: FormatArg,
}

#[derive(Args, Debug)]
struct CryptArgs {
    /// Key file (public suffices for encrypt).
    #[arg(short, long, value_name = "FILE")]
    key: PathBuf,
    /// Input file; `-` for stdin.
    #[arg(short, long, value_name = "FILE")]
    input: PathBuf,
    /// Output file; `-` for stdout.
    #[arg(short, long, value_name = "FILE")]
    out: PathBuf,
    /// OAEP hash (for both the label hash and MGF1).
    #[arg(long, value_enum, default_value = "sha256")]
    hash: HashArg,
    /// OAEP label (text).
    #[arg(long, value_name = "TEXT")]
    label: Option<String>,
    /// TEXTBOOK RSA without padding (m^e mod n): malleable and deterministic, for research
    /// and the RSAtron experiment only.
    #[arg(long, conflicts_with_all = ["label"])]
    raw: bool,
    #[command(flatten)]
    entropy: EntropyArgs,
}

#[derive(Args, Debug)]
struct SignArgs {
    /// Key file (public suffices for verify).
    #[arg(short, long, value_name = "FILE")]
    key: PathBuf,
    /// The signed file; `-` for stdin.
    #[arg(short, long, value_name = "FILE")]
    input: PathBuf,
    /// Signature file (written by sign, read by verify); `-` for stdout/stdin.
    #[arg(
        short,
        long = "sig",
        visible_alias = "signature",
        alias = "out",
        value_name = "FILE"
    )]
    sig: PathBuf,
    /// Hash function.
    #[arg(long, value_enum, default_value = "sha256")]
    hash: HashArg,
    /// PKCS#1 v1.5 signatures instead of PSS.
    #[arg(long, conflicts_with = "raw")]
    pkcs1v15: bool,
    /// PSS salt length in bytes (default: the hash length; verify accepts any unless given).
    #[arg(long, value_name = "BYTES", conflicts_with_all = ["pkcs1v15", "raw"])]
    salt_len: Option<usize>,
    /// TEXTBOOK RSA: the input bytes themselves, as an integer, are signed (s = m^d mod n);
    /// no hashing, no padding. Research only.
    #[arg(long)]
    raw: bool,
    #[command(flatten)]
    entropy: EntropyArgs,
}

#[derive(Args, Debug)]
struct InspectArgs {
    /// Key file (private or public, any supported format, including OpenSSL's).
    #[arg(short, long, value_name = "FILE")]
    input: PathBuf,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
    /// Refuse the key (exit status 2, an error: the key is not fit for use) if the verdict is at
    /// least this bad.
    #[arg(long, value_enum)]
    fail_on: Option<FailOn>,
}

#[derive(ValueEnum, Debug, Clone, Copy)]
enum FailOn {
    Weak,
    Broken,
}

/// Runs `hourglass rsa ...`.
pub fn run(args: RsaArgs) -> Result<(), CliError> {
    match args.command {
        RsaCommand::Keygen(a) => keygen(a),
        RsaCommand::Pubkey(a) => pubkey(a),
        RsaCommand::Encrypt(a) => encrypt(a),
        RsaCommand::Decrypt(a) => decrypt(a),
        RsaCommand::Sign(a) => sign(a),
        RsaCommand::Verify(a) => verify(a),
        RsaCommand::Inspect(a) => inspect(a),
    }
}

fn keygen(a: KeygenArgs) -> Result<(), CliError> {
    let opts = a.shape.options()?;
    if a.report.json && a.out.as_os_str() == "-" {
        return Err(CliError::from(Usage::Conflict(
            "--json prints the result on standard output, where -o - would put the key",
        ))
        .with_hint("write the key to a file: -o FILE"));
    }
    // A passphrase is the intent to encrypt: with --passphrase-file the key is encrypted
    // whether or not --encrypt was given, and a format that cannot be encrypted is refused.
    let encrypt = a.encrypt || passphrase_given();
    if encrypt && !matches!(a.format, FormatArg::Pem) {
        let why = if a.encrypt {
            "--encrypt"
        } else {
            "--passphrase-file (it encrypts the key, as --encrypt does)"
        };
        return Err(Usage::EncryptedPemOnly {
            why,
            format: format_name(a.format),
        }
        .into());
    }
    check_output(&a.out)?;
    if let Some(p) = &a.pubout {
        check_output(p)?;
    }
    // Asked before the work, so that a mistyped passphrase costs no key generation.
    let passphrase = if encrypt {
        Some(new_passphrase(&a.out)?)
    } else {
        None
    };
    let mut rng = a.entropy.source()?;
    let start = std::time::Instant::now();
    let key = opts.generate(&mut *rng)?;
    let elapsed = start.elapsed();
    let bytes = match &passphrase {
        Some(p) => encode_private_key_encrypted(&key, p.as_bytes(), &mut *rng)?,
        None => encode_private_key(&key, a.format.into())?,
    };
    write_output(&a.out, &bytes, Sensitivity::Secret)?;
    if let Some(p) = &a.pubout {
        write_output(
            p,
            &encode_public_key(key.public(), a.format.into())?,
            Sensitivity::Public,
        )?;
    }
    let [_, _, _, dp, dq, _] = key.secret_components();
    let (dp_bits, dq_bits) = (
        dp.expose().significant_bits(),
        dq.expose().significant_bits(),
    );
    a.report.info(format_args!(
        "generated a {}-bit {} key in {:.2} s (e: {} bits, d_p/d_q: {dp_bits}/{dq_bits} bits, entropy: {})",
        key.public().bits(),
        opts.variant(),
        elapsed.as_secs_f64(),
        key.public().e().significant_bits(),
        rng.describe()
    ));
    a.report.result(serde_json::json!({
        "key": a.out, "public": a.pubout, "variant": opts.variant().to_string(),
        "bits": key.public().bits(), "e_bits": key.public().e().significant_bits(),
        "dp_bits": dp_bits, "dq_bits": dq_bits, "encrypted": encrypt,
        "seconds": elapsed.as_secs_f64(), "entropy": rng.describe(),
    }));
    Ok(())
}

fn pubkey(a: PubkeyArgs) -> Result<(), CliError> {
    let key = load_public(&a.input)?;
    write_output(
        &a.out,
        &encode_public_key(&key, a.format.into())?,
        Sensitivity::Public,
    )
}

fn encrypt(a: CryptArgs) -> Result<(), CliError> {
    let key = load_public(&a.key)?;
    let msg = zeroize::Zeroizing::new(read_input(&a.input, "input")?);
    let mut rng = a.entropy.source()?;
    let ct = if a.raw {
        eprintln!(
            "hourglass: warning: --raw is TEXTBOOK RSA (no padding): deterministic and malleable"
        );
        raw_encrypt(&key, &msg)?
    } else {
        oaep(&a).encrypt(&key, &msg, &mut *rng)?
    };
    write_output(&a.out, &ct, Sensitivity::Public)
}

fn oaep(a: &CryptArgs) -> Oaep {
    let o = Oaep::new(a.hash.into());
    match &a.label {
        Some(l) => o.label(l.as_bytes()),
        None => o,
    }
}

fn decrypt(a: CryptArgs) -> Result<(), CliError> {
    let key = load_private(&a.key)?;
    let ct = read_input(&a.input, "ciphertext")?;
    let mut rng = a.entropy.source()?;
    let msg = if a.raw {
        let mut m = raw_decrypt(&key, &ct, &mut *rng)?;
        let first = m.iter().position(|&b| b != 0).unwrap_or(m.len());
        m.drain(..first);
        m
    } else {
        oaep(&a).decrypt(&key, &ct, &mut *rng)?
    };
    let msg = zeroize::Zeroizing::new(msg);
    write_output(&a.out, &msg, Sensitivity::Secret)
}

fn digest_input(a: &SignArgs) -> Result<Vec<u8>, CliError> {
    let hash: HashAlg = a.hash.into();
    let mut hasher = hash.hasher();
    let mut input = open_input(&a.input, "input")?;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = input
            .read(&mut buf)
            .map_err(|e| CliError::io(IoOp::Reading, &a.input, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().into_vec())
}

fn sign(a: SignArgs) -> Result<(), CliError> {
    let key = load_private(&a.key)?;
    let mut rng = a.entropy.source()?;
    let sig = if a.raw {
        eprintln!("hourglass: warning: --raw is TEXTBOOK RSA (no hashing, no padding)");
        let msg = read_input(&a.input, "input")?;
        raw_decrypt(&key, &msg, &mut *rng)?
    } else {
        let digest = digest_input(&a)?;
        if a.pkcs1v15 {
            Pkcs1v15Sign::new(a.hash.into()).sign_digest(&key, &digest, &mut *rng)?
        } else {
            pss(&a).sign_digest(&key, &digest, &mut *rng)?
        }
    };
    write_output(&a.sig, &sig, Sensitivity::Public)
}

fn pss(a: &SignArgs) -> Pss {
    let p = Pss::new(a.hash.into());
    match a.salt_len {
        Some(s) => p.salt_len(s),
        None => p,
    }
}

fn verify(a: SignArgs) -> Result<(), CliError> {
    let key = load_public(&a.key)?;
    let sig = read_input(&a.sig, "signature")?;
    let result = if a.raw {
        let msg = read_input(&a.input, "input")?;
        let m = hourglass_rsa::padding::os2ip(&msg);
        let s = hourglass_rsa::padding::os2ip(&sig);
        match key.public_op(&s) {
            Ok(v) if v == m && sig.len() == key.size() => Ok(()),
            _ => Err(hourglass_rsa::Error::Verification),
        }
    } else {
        let digest = digest_input(&a)?;
        if a.pkcs1v15 {
            Pkcs1v15Sign::new(a.hash.into()).verify_digest(&key, &digest, &sig)
        } else {
            pss(&a).verify_digest(&key, &digest, &sig)
        }
    };
    match result {
        Ok(()) => {
            eprintln!("hourglass: signature OK");
            Ok(())
        }
        Err(e) => Err(CliError::from(e)),
    }
}

fn inspect(a: InspectArgs) -> Result<(), CliError> {
    let report = match read_key(&a.input, "key")? {
        Ok(private) => inspect_private(&private),
        Err(public) => inspect_public(&public),
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(CliError::Json)?
        );
    } else {
        print_inspection(&report);
    }
    let limit = match a.fail_on {
        Some(FailOn::Weak) => Some(Severity::Weak),
        Some(FailOn::Broken) => Some(Severity::Broken),
        None => None,
    };
    if let Some(limit) = limit {
        if report.verdict >= limit {
            return Err(CliError::KeyPolicy {
                verdict: report.verdict,
            });
        }
    }
    Ok(())
}

fn print_inspection(r: &Inspection) {
    println!(
        "key:          {}, {} bits (about {}-bit security)",
        r.kind, r.bits, r.security_level
    );
    match r.recorded_variant {
        Some(v) => println!("variant:      {v} (recorded in the file)"),
        None => println!("variant:      not recorded in the file"),
    }
    println!("shape:        {}", r.shape);
    match &r.e {
        Some(e) => println!("e:            {e} ({} bits)", r.e_bits),
        None => println!("e:            {} bits", r.e_bits),
    }
    if let Some(d) = r.d_bits {
        println!("d:            {d} bits");
    }
    if let Some((p, q)) = r.prime_bits {
        println!("p, q:         {p} / {q} bits");
    }
    if let Some((dp, dq)) = r.crt_exponent_bits {
        println!("d_p, d_q:     {dp} / {dq} bits");
    }
    println!("fingerprint:  SHA256:{}", r.fingerprint);
    let verdict = match r.verdict {
        Severity::Info => "OK",
        Severity::Weak => "WEAK",
        Severity::Broken => "BROKEN",
    };
    println!("verdict:      {verdict}");
    for f in &r.findings {
        let tag = match f.severity {
            Severity::Info => "info",
            Severity::Weak => "weak",
            Severity::Broken => "BROKEN",
        };
        println!("  [{tag}] {}", f.message);
    }
}

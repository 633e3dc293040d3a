//! RFC 3161 timestamps on the command line: `hourglass timestamp verify | stamp | inspect` for
//! any file and any authority, `hourglass submit stamp` for bundles, and the files that
//! `submit verify --timestamp` and `submit check-receipt --tsa-ca` read. The protocol's rules
//! and every verdict are [`hourglass_timestamp`]'s; this module moves files and HTTP bodies,
//! and prints.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::{Args, Subcommand};
use hourglass_rsa::HashAlg;
use hourglass_timestamp::{
    anchors_from_pem, verdict_json, verify_token, verify_token_for, Covered, Inspection, PolicyId,
    Query, TimestampError, TsaAnchor, VerifiedToken, MAX_TOKEN_BYTES,
};
use hourglass_x509::{pem_certificates, MAX_CERTIFICATE_FILE};

use crate::cli_error::{CliError, InputProblem, IoOp, Usage};
use crate::files::{open_input, read_input_limited, write_output, Sensitivity};

/// How long a TSA may take to answer.
const TSA_TIMEOUT: Duration = Duration::from_secs(30);

/// Arguments of `hourglass timestamp`.
#[derive(Args, Debug)]
pub struct TimestampArgs {
    #[command(subcommand)]
    command: TimestampCommand,
}

#[derive(Subcommand, Debug)]
enum TimestampCommand {
    /// Verify an RFC 3161 token (or reply) over a file or a digest, against the authority's CA
    /// you trust: exit 0 valid, 1 not (other data, a bad signature, no path to the anchor, a
    /// certificate not valid at genTime), 2 an error.
    #[command(after_help = "Examples:
  hourglass timestamp verify paper.tsr --data paper.pdf --tsa-ca freetsa-root.pem
  hourglass timestamp verify sig.tsr --digest fbcc00da...19bb --tsa-ca sigstore-root.pem \\
      --untrusted sigstore-chain.pem --json
  hourglass timestamp verify token.der --data x --tsa-ca issuing-ca.pem   (an intermediate as anchor)
Like `openssl ts -verify -in T -data F -CAfile CA -untrusted CHAIN`, but the path is checked at
the token's genTime (a certificate that expired since is fine, as RFC 3161 intends) and with
-partial_chain's freedom to pin an intermediate. It prints the latest time the token proves:
genTime plus its accuracy.")]
    Verify(VerifyArgs),
    /// Timestamp any file at an RFC 3161 authority; the reply is checked (status, nonce,
    /// imprint, and the signature and path with --tsa-ca) before it is written.
    #[command(after_help = "Examples:
  hourglass timestamp stamp paper.pdf --tsa https://freetsa.org/tsr -o paper.tsr --tsa-ca freetsa-root.pem
  hourglass timestamp stamp paper.pdf --tsa http://127.0.0.1:8080/tsa -o paper.tsr --hash sha512
  hourglass timestamp stamp paper.pdf --query -o paper.tsq   (the query alone, as openssl ts -query writes)")]
    Stamp(StampArgs),
    /// Print what a token or reply states, unverified (as `openssl ts -reply -text`).
    #[command(after_help = "Examples:
  hourglass timestamp inspect paper.tsr
  hourglass timestamp inspect token.der --json")]
    Inspect(InspectArgs),
}

/// Runs `hourglass timestamp`.
pub fn run(a: TimestampArgs) -> Result<(), CliError> {
    match a.command {
        TimestampCommand::Verify(a) => verify(a),
        TimestampCommand::Stamp(a) => stamp(a, None),
        TimestampCommand::Inspect(a) => inspect(a),
    }
}

/// The imprint hashes a query may use.
#[derive(clap::ValueEnum, Debug, Clone, Copy)]
pub enum ImprintArg {
    /// SHA-256.
    Sha256,
    /// SHA-384.
    Sha384,
    /// SHA-512.
    Sha512,
}

impl ImprintArg {
    fn hash(self) -> HashAlg {
        match self {
            ImprintArg::Sha256 => HashAlg::Sha256,
            ImprintArg::Sha384 => HashAlg::Sha384,
            ImprintArg::Sha512 => HashAlg::Sha512,
        }
    }
}

/// The anchors and untrusted certificates a verifier names.
#[derive(Args, Debug, Clone)]
pub struct TrustArgs {
    /// A CA certificate the token must chain to (PEM, several per file, or DER; repeat for
    /// several files): the authority's root, or an intermediate pinned as the end of the path.
    #[arg(long = "tsa-ca", value_name = "FILE")]
    pub tsa_ca: Vec<PathBuf>,
    /// Certificates to build the path from, not trusted (PEM or DER; repeat): the authority's
    /// certificate when the token does not carry it, and its intermediates.
    #[arg(long, value_name = "FILE")]
    pub untrusted: Vec<PathBuf>,
}

impl TrustArgs {
    /// The anchors of `--tsa-ca`.
    pub fn anchors(&self) -> Result<Vec<TsaAnchor>, CliError> {
        let mut anchors = Vec::new();
        for path in &self.tsa_ca {
            let bytes =
                read_input_limited(path, "TSA CA certificate", MAX_CERTIFICATE_FILE as u64)?;
            anchors.extend(
                anchors_from_pem(&bytes)
                    .map_err(|e| CliError::from(TimestampError::from(e)).with_path(path))?,
            );
        }
        Ok(anchors)
    }

    /// The certificates of `--untrusted`, DER.
    pub fn untrusted(&self) -> Result<Vec<Vec<u8>>, CliError> {
        let mut certs = Vec::new();
        for path in &self.untrusted {
            let bytes = read_input_limited(path, "certificate", MAX_CERTIFICATE_FILE as u64)?;
            certs.extend(
                pem_certificates(&bytes)
                    .map_err(|e| CliError::from(TimestampError::from(e)).with_path(path))?,
            );
        }
        Ok(certs)
    }
}

/// Arguments of `hourglass timestamp verify`.
#[derive(Args, Debug)]
pub struct VerifyArgs {
    /// The token (DER, as `openssl ts -reply -token_out` writes) or reply (.tsr).
    #[arg(value_name = "TOKEN")]
    token: PathBuf,
    /// The timestamped file (`-` for standard input).
    #[arg(
        long,
        value_name = "FILE",
        required_unless_present = "digest",
        conflicts_with = "digest"
    )]
    data: Option<PathBuf>,
    /// The timestamped digest, hex (made with the token's imprint hash).
    #[arg(long, value_name = "HEX")]
    digest: Option<String>,
    #[command(flatten)]
    trust: TrustArgs,
    /// Machine-readable output: the verdict, and the token's fields when valid.
    #[arg(long)]
    json: bool,
}

fn verify(a: VerifyArgs) -> Result<(), CliError> {
    let token = read_input_limited(&a.token, "timestamp", MAX_TOKEN_BYTES as u64)?;
    let anchors = a.trust.anchors()?;
    if anchors.is_empty() {
        return Err(Usage::Give("--tsa-ca CA.pem: the authority's CA you trust").into());
    }
    let untrusted = a.trust.untrusted()?;
    let result = match (&a.data, &a.digest) {
        (Some(path), _) => {
            // The token's imprint hash decides the hash of the data, streamed.
            let hash = match hourglass_timestamp::TokenInfo::of_token(&token) {
                Ok(info) => info.hash(),
                Err(e) => return Err(CliError::from(e).with_path(&a.token)),
            };
            let digest = digest_file(path, hash)?;
            verify_token_for(&token, Covered::Digest(&digest), &untrusted, &anchors)
        }
        (None, Some(hex_digest)) => {
            let digest = hex::decode(hex_digest.trim()).map_err(|_| Usage::Value {
                flag: "--digest",
                value: hex_digest.clone(),
                problem: "not hexadecimal".into(),
            })?;
            verify_token_for(&token, Covered::Digest(&digest), &untrusted, &anchors)
        }
        (None, None) => return Err(Usage::Give("--data FILE or --digest HEX").into()),
    };
    if a.json {
        if let Some(json) = verdict_json(&result) {
            println!(
                "{}",
                serde_json::to_string_pretty(&json).unwrap_or_default()
            );
        }
    }
    let verified = result.map_err(|e| CliError::from(e).with_path(&a.token))?;
    if !a.json {
        print_verified(&verified);
    }
    Ok(())
}

/// The SHA-2 digest of a file (or standard input), streamed.
fn digest_file(path: &Path, hash: HashAlg) -> Result<Vec<u8>, CliError> {
    let mut input = open_input(path, "data")?;
    let mut h = hash.hasher();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = input
            .read(&mut buf)
            .map_err(|e| CliError::io(IoOp::Read("data"), path, e))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(h.finalize().into_vec())
}

fn accuracy_text(micros: Option<u64>) -> String {
    match micros {
        None => "no accuracy stated: the end of the genTime second".into(),
        Some(m) => format!("accuracy {} s", m as f64 / 1e6),
    }
}

fn print_verified(v: &VerifiedToken) {
    let i = v.info();
    println!("timestamp: valid");
    println!(
        "gen time:  {} ({})",
        i.gen_time_rfc3339(),
        accuracy_text(i.accuracy_micros())
    );
    println!(
        "latest:    {} (the data existed no later than this)",
        humantime::format_rfc3339_seconds(i.latest())
    );
    println!("authority: {}", v.tsa());
    println!("signature: {}", v.signature());
    println!(
        "imprint:   {} {}",
        hourglass_timestamp::signature::hash_name(i.hash()),
        hex::encode(i.imprint())
    );
    println!("serial:    {}, policy {}", i.serial_hex(), i.policy());
    println!("path:      {} (anchor)", v.path().join("\n        <- "));
}

/// Arguments of `hourglass timestamp stamp` and `hourglass submit stamp`.
#[derive(Args, Debug)]
pub struct StampArgs {
    /// The file to timestamp (`submit stamp`: a sealed bundle).
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The TSA's URL (RFC 3161 over HTTP: the hourglass service's /tsa, or any other TSA).
    #[arg(long, value_name = "URL", required_unless_present = "query")]
    tsa: Option<String>,
    /// Write the query alone (a .tsq, as `openssl ts -query -data FILE -sha256 -cert`
    /// writes), for a TSA reached another way.
    #[arg(long, conflicts_with = "tsa")]
    query: bool,
    /// Where to write the reply (.tsr), or the query with --query.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    trust: TrustArgs,
    /// The imprint's hash.
    #[arg(long, value_enum, default_value = "sha256")]
    hash: ImprintArg,
    /// Ask for this policy (an OID); the reply must be under it.
    #[arg(long, value_name = "OID")]
    policy: Option<String>,
    /// Send no nonce (the query is then the same bytes every time, as `openssl ts -query
    /// -no_nonce` writes).
    #[arg(long)]
    no_nonce: bool,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

/// Runs `hourglass timestamp stamp`, or `hourglass submit stamp` when `max` limits the file
/// (a bundle).
pub fn stamp(a: StampArgs, max: Option<u64>) -> Result<(), CliError> {
    // An output in the way is refused before the TSA is asked (a token it grants is a record).
    crate::files::check_output(&a.output)?;
    let hash = a.hash.hash();
    let digest = match max {
        Some(max) => hash.digest(&read_input_limited(&a.file, "bundle", max)?),
        None => digest_file(&a.file, hash)?,
    };
    let policy = a
        .policy
        .as_deref()
        .map(PolicyId::parse)
        .transpose()
        .map_err(|e| Usage::Value {
            flag: "--policy",
            value: a.policy.clone().unwrap_or_default(),
            problem: e.to_string().into(),
        })?;
    let anchors = a.trust.anchors()?;
    let untrusted = a.trust.untrusted()?;
    let query = Query::new(
        hash,
        &digest,
        !a.no_nonce,
        policy,
        &mut hourglass_arith::entropy::OsEntropy,
    )?;
    let Some(url) = a.tsa else {
        write_output(&a.output, query.to_der(), Sensitivity::Public)?;
        if !a.json {
            eprintln!("query written to {}", a.output.display());
        }
        return Ok(());
    };
    let reply = post_query(&url, query.to_der())?;
    let token = query.token_of_reply(&reply)?;
    let verified = if anchors.is_empty() {
        None
    } else {
        Some(verify_token(&token, &untrusted, &anchors)?)
    };
    write_output(&a.output, &reply, Sensitivity::Public)?;
    let info = hourglass_timestamp::TokenInfo::of_token(&token)?;
    if a.json {
        let mut v = serde_json::json!({
            "output": a.output,
            "gen_time": info.gen_time_rfc3339(),
            "gen_time_text": info.gen_time_text(),
            "latest": humantime::format_rfc3339_seconds(info.latest()).to_string(),
            "policy": info.policy(),
            "serial": info.serial_hex(),
            "verified": verified.is_some(),
        });
        if let Some(t) = &verified {
            v["token"] = serde_json::to_value(t).unwrap_or_default();
        }
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        println!(
            "timestamp: {} at {} ({}; policy {}, serial {})",
            a.output.display(),
            info.gen_time_rfc3339(),
            accuracy_text(info.accuracy_micros()),
            info.policy(),
            info.serial_hex()
        );
        match &verified {
            Some(t) => println!(
                "signed by: {} with {} (chains to {})",
                t.tsa(),
                t.signature(),
                t.anchor()
            ),
            None => println!(
                "signed by: not checked (pass --tsa-ca CA.pem to check the TSA's signature now; \
                 `hourglass timestamp verify` and `submit verify --timestamp` always do)"
            ),
        }
    }
    Ok(())
}

/// Sends a query to a TSA over HTTP and returns its reply's body (at most
/// [`MAX_TOKEN_BYTES`]).
fn post_query(url: &str, query: &[u8]) -> Result<Vec<u8>, CliError> {
    let agent = ureq::AgentBuilder::new().timeout(TSA_TIMEOUT).build();
    let fail = |why: String| CliError::Remote {
        url: url.to_string(),
        why,
    };
    let response = agent
        .post(url)
        .set("Content-Type", "application/timestamp-query")
        .send_bytes(query)
        .map_err(|e| match e {
            ureq::Error::Status(code, r) => fail(format!(
                "HTTP {code} {}",
                r.into_string().unwrap_or_default().trim()
            )),
            ureq::Error::Transport(t) => fail(t.to_string()),
        })?;
    let media = response.content_type().to_ascii_lowercase();
    if media != "application/timestamp-reply" {
        return Err(fail(format!(
            "answered {media}, not application/timestamp-reply (is it a TSA's URL?)"
        )));
    }
    let mut body = Vec::new();
    response
        .into_reader()
        .take(MAX_TOKEN_BYTES as u64 + 1)
        .read_to_end(&mut body)
        .map_err(|e| fail(e.to_string()))?;
    if body.len() > MAX_TOKEN_BYTES {
        return Err(fail(format!("a reply over {MAX_TOKEN_BYTES} bytes")));
    }
    Ok(body)
}

/// Arguments of `hourglass timestamp inspect`.
#[derive(Args, Debug)]
pub struct InspectArgs {
    /// The token (DER) or reply (.tsr).
    #[arg(value_name = "TOKEN")]
    token: PathBuf,
    /// Machine-readable output.
    #[arg(long)]
    json: bool,
}

fn inspect(a: InspectArgs) -> Result<(), CliError> {
    let bytes = read_input_limited(&a.token, "timestamp", MAX_TOKEN_BYTES as u64)?;
    let t = Inspection::of(&bytes).map_err(|e| CliError::from(e).with_path(&a.token))?;
    if a.json {
        println!("{}", serde_json::to_string_pretty(&t).unwrap_or_default());
        return Ok(());
    }
    let i = t.info();
    println!(
        "{} (not verified: `hourglass timestamp verify` judges it)",
        if t.is_reply() {
            "Status: granted"
        } else {
            "A bare token"
        }
    );
    println!("Version: 1");
    println!("Policy OID: {}", i.policy());
    println!(
        "Hash Algorithm: {}",
        hourglass_timestamp::signature::hash_name(i.hash())
    );
    println!("Message data: {}", hex::encode(i.imprint()));
    println!("Serial number: 0x{}", i.serial_hex().to_ascii_uppercase());
    println!(
        "Time stamp: {} ({})",
        i.gen_time_rfc3339(),
        i.gen_time_text()
    );
    println!("Accuracy: {}", accuracy_text(i.accuracy_micros()));
    println!(
        "Latest time proved: {}",
        humantime::format_rfc3339_seconds(i.latest())
    );
    println!("Ordering: {}", if i.ordering() { "yes" } else { "no" });
    println!(
        "Nonce: {}",
        i.nonce()
            .map_or_else(|| "unspecified".into(), |n| format!("0x{}", hex::encode(n)))
    );
    println!("TSA: {}", i.tsa_name().unwrap_or("unspecified"));
    println!("Signer: {}", t.signer());
    println!("Digest: {}, signature: {}", t.digest(), t.signature());
    if t.certificates().is_empty() {
        println!("Certificates: none (give the authority's with --untrusted when verifying)");
    } else {
        println!("Certificates:");
        for c in t.certificates() {
            println!("  {c}");
        }
    }
    Ok(())
}

/// The tokens of `paths`, each named by its file.
pub fn load_tokens(paths: &[PathBuf]) -> Result<Vec<(String, Vec<u8>)>, CliError> {
    paths
        .iter()
        .map(|p| {
            let bytes = read_input_limited(p, "timestamp", MAX_TOKEN_BYTES as u64)?;
            Ok((p.display().to_string(), bytes))
        })
        .collect()
}

/// The error for a receipt asked for a token it does not carry.
pub fn no_token(receipt: &Path) -> CliError {
    CliError::input(receipt, InputProblem::NoTimestamp)
}

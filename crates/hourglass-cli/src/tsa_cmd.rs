//! RFC 3161 timestamps on the command line: `hourglass submit stamp` (a query to any TSA, its
//! reply checked before it is written) and the files `submit verify --timestamp` and
//! `submit check-receipt --tsa-ca` read. The protocol's rules are
//! [`hourglass_timelock::timestamp`]'s; this module moves files and HTTP bodies.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use hourglass_rsa::HashAlg;
use hourglass_timelock::bundle::MAX_BUNDLE_BYTES;
use hourglass_timelock::certificate::{ca_certificates, CaCertificate, TsaAnchor};
use hourglass_timelock::timestamp::{verify_token, PolicyId, Query, MAX_TOKEN_BYTES};
use hourglass_timelock::verdict::rfc3339;

use crate::cli_error::{CliError, InputProblem, Usage};
use crate::files::read_input_limited;
use crate::files::{write_output, Sensitivity};

/// How long a TSA may take to answer.
const TSA_TIMEOUT: Duration = Duration::from_secs(30);

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

/// Arguments of `hourglass submit stamp`.
#[derive(Args, Debug)]
pub struct StampArgs {
    /// The file to timestamp (a sealed bundle).
    #[arg(value_name = "BUNDLE")]
    bundle: PathBuf,
    /// The TSA's URL (RFC 3161 over HTTP: the hourglass service's /tsa, or any other TSA).
    #[arg(long, value_name = "URL", required_unless_present = "query")]
    tsa: Option<String>,
    /// Write the query alone (a .tsq, as `openssl ts -query -data BUNDLE -sha256 -cert`
    /// writes), for a TSA reached another way.
    #[arg(long, conflicts_with = "tsa")]
    query: bool,
    /// Where to write the reply (.tsr), or the query with --query.
    #[arg(short, long, value_name = "FILE")]
    output: PathBuf,
    /// Check the reply's signature and chain against this CA certificate before writing it
    /// (PEM or DER; repeat for several).
    #[arg(long = "tsa-ca", value_name = "FILE")]
    tsa_ca: Vec<PathBuf>,
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

/// Runs `hourglass submit stamp`.
pub fn stamp(a: StampArgs) -> Result<(), CliError> {
    // An output in the way is refused before the TSA is asked (a token it grants is a record).
    crate::files::check_output(&a.output)?;
    let bundle = read_input_limited(&a.bundle, "bundle", MAX_BUNDLE_BYTES)?;
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
    let anchors = load_tsa_cas(&a.tsa_ca)?
        .into_iter()
        .map(TsaAnchor::from)
        .collect::<Vec<_>>();
    let mut rng = hourglass_arith::entropy::OsEntropy;
    let query = Query::for_data(a.hash.hash(), &bundle, !a.no_nonce, policy, &mut rng)?;
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
        Some(verify_token(&token, &[], &anchors)?)
    };
    write_output(&a.output, &reply, Sensitivity::Public)?;
    let info = hourglass_timelock::timestamp::TokenInfo::of_token(&token)?;
    if a.json {
        let mut v = serde_json::json!({
            "output": a.output,
            "gen_time": rfc3339(info.gen_time),
            "gen_time_text": info.gen_time_text,
            "policy": info.policy,
            "serial": info.serial_hex,
            "verified": verified.is_some(),
        });
        if let Some(t) = &verified {
            v["tsa"] = t.tsa.clone().into();
            v["anchor"] = t.anchor.clone().into();
        }
        println!("{}", serde_json::to_string_pretty(&v).unwrap_or_default());
    } else {
        println!(
            "timestamp: {} at {} (policy {}, serial {})",
            a.output.display(),
            rfc3339(info.gen_time),
            info.policy,
            info.serial_hex
        );
        match &verified {
            Some(t) => println!("signed by: {} (chains to {})", t.tsa, t.anchor),
            None => println!(
                "signed by: not checked (pass --tsa-ca CA.pem to check the TSA's signature now; \
                 `submit verify --timestamp` always does)"
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

/// The CA certificates of `paths` (each a PEM file of one or more, or one DER certificate).
pub fn load_tsa_cas(paths: &[PathBuf]) -> Result<Vec<CaCertificate>, CliError> {
    let mut cas = Vec::new();
    for path in paths {
        let bytes = read_input_limited(path, "TSA CA certificate", 1 << 20)?;
        cas.extend(ca_certificates(&bytes).map_err(|e| CliError::from(e).with_path(path))?);
    }
    Ok(cas)
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

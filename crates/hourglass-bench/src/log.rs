//! `hourglass bench log`: the transparency log of receipts.
//!
//! 1. **Appending**: N real signed receipts (RSA-3072 PSS, an RFC 3161 token, as a worker
//!    signs them) wait in a SQLite database as after N verdicts; the service's own sequencer
//!    (`hourglass_serve::bench`) sequences them in batches, then a checkpoint is signed and
//!    published and every receipt is written with its inclusion proof. Baseline: the same rows
//!    inserted into a table, in the same batches, without any hashing.
//! 2. **An inclusion proof verified**: in a tree of N leaves, the audit path alone, the
//!    checkpoint (log signature and two witness cosignatures) with it, and a whole receipt
//!    (`check_receipt`: RSA-PSS, token, log evidence).
//! 3. **`log verify` from scratch**: a log of M receipts (made as in 1) served by a real
//!    `hourglass serve` (this executable) on loopback, read and verified by the client
//!    `hourglass log verify` uses, every entry read as a receipt. Baseline: the same entry
//!    bundles downloaded without verifying anything.

use std::time::{Instant, SystemTime};

use clap::Args;
use hourglass_arith::entropy::SeededEntropy;
use hourglass_log::checkpoint::{LogPins, SignedCheckpoint};
use hourglass_log::client::{verify_log, TileSource};
use hourglass_log::http::HttpLog;
use hourglass_log::keys::{KeyRole, SigningKey, VerifierKey};
use hourglass_log::tiles::bundles_for;
use hourglass_log::tree::{append, leaf_hash, prove_inclusion, root, HashMemo};
use hourglass_receipt::{
    check_receipt, sign_receipt, ReceiptEntry, ReceiptVerdict, SignedReceipt, Statement,
};
use hourglass_rsa::{HashAlg, KeyGenOptions, PrivateKey, Variant};
use hourglass_timestamp::{PolicyId, Query, Tsa, TsaCertificate, TsaKey};
use hourglass_x509::{CaCertificate, CertificateOptions};
use serde::Serialize;

use crate::stats::Summary;
use crate::{Error, Result};

/// The issue's targets, on a 2-core machine.
const TARGET_APPEND_SECS: f64 = 10.0;
const TARGET_PROOF_MS: f64 = 1.0;
const TARGET_VERIFY_SECS: f64 = 10.0;

/// Options of `hourglass bench log`.
#[derive(Args, Debug)]
pub struct LogBenchArgs {
    /// Entries appended through the sequencer.
    #[arg(long, default_value_t = 10_000)]
    entries: u64,
    /// Entries of the log that `log verify` reads from scratch.
    #[arg(long, default_value_t = 100_000)]
    verify_entries: u64,
    /// Inclusion proofs verified (the median is reported).
    #[arg(long, default_value_t = 2001)]
    proofs: usize,
    /// Print the results as JSON.
    #[arg(long)]
    json: bool,
    /// No progress messages on standard error (the tables still print).
    #[arg(long, conflicts_with = "json")]
    quiet: bool,
}

#[derive(Serialize)]
struct Append {
    entries: u64,
    entry_bytes: usize,
    sequence_secs: f64,
    publish_secs: f64,
    receipts_secs: f64,
    insert_only_secs: f64,
    ratio_to_insert_only: f64,
    /// The target applies to the appending row, not to the making of the served log.
    target_secs: Option<f64>,
    target_met: Option<bool>,
}

#[derive(Serialize)]
struct Proofs {
    tree_size: u64,
    path_hashes: usize,
    proof_only_us: Summary,
    checkpoint_and_proof_us: Summary,
    whole_receipt_us: Summary,
    target_ms: f64,
    target_met: bool,
}

#[derive(Serialize)]
struct VerifyFromScratch {
    entries: u64,
    bytes: u64,
    prepare: Append,
    verify_secs: f64,
    download_only_secs: f64,
    ratio_to_download_only: f64,
    target_secs: f64,
    target_met: bool,
}

#[derive(Serialize)]
struct Report {
    append: Append,
    proofs: Proofs,
    verify: VerifyFromScratch,
}

fn log_error(why: impl std::fmt::Display) -> Error {
    Error::Log(why.to_string())
}

/// A signed receipt as the service's workers sign it: RSA-3072 institution key, an RFC 3161
/// token over the bundle from a TSA whose CA is made with that key, a version 3 statement
/// naming the log. Returns the entry and the institution key.
fn real_receipt(origin: &str) -> Result<(SignedReceipt, PrivateKey)> {
    let mut rng = SeededEntropy::new(b"hourglass bench log");
    let institution = KeyGenOptions::new(3072, Variant::Crt).generate(&mut rng)?;
    let ca = CaCertificate::self_signed(
        &institution,
        &CertificateOptions::days("bench TSA CA", 3650),
        &mut rng,
    )
    .map_err(log_error)?;
    let tsa_key = TsaKey::Rsa(KeyGenOptions::new(3072, Variant::Crt).generate(&mut rng)?);
    let cert = TsaCertificate::issue(
        tsa_key.spki().map_err(log_error)?,
        &ca,
        &institution,
        &CertificateOptions::days("bench TSA", 3650),
        &mut rng,
    )
    .map_err(log_error)?;
    let tsa = Tsa::new(
        tsa_key,
        cert,
        vec![ca.certificate().clone()],
        PolicyId::hourglass(),
    )
    .map_err(log_error)?;
    let bundle_sha256 = HashAlg::Sha256.digest(b"a bundle");
    let query = Query::for_digest(HashAlg::Sha256, &bundle_sha256, None, None)?;
    let token = tsa.stamp(&query, &[1], SystemTime::now(), &mut rng)?;
    let statement = Statement {
        institution: String::new(),
        submission: "0123456789abcdef0123456789abcdef".into(),
        set: "conf-2027".into(),
        set_sha256: "11".repeat(32),
        document_sha256: "22".repeat(32),
        bundle_sha256: hex_of(&bundle_sha256),
        received_unix: 0,
        timestamp_sha256: None,
        log: Some(origin.into()),
        verdict: ReceiptVerdict::Valid,
        credited_ms: 14_400_000,
        reason: String::new(),
    };
    let signed = sign_receipt(&statement, &token, &institution, &mut rng).map_err(log_error)?;
    Ok((signed, institution))
}

fn hex_of(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn append_row(
    t: &hourglass_serve::bench::SequencerTimes,
    entry_bytes: usize,
    target: Option<f64>,
) -> Append {
    let sequence = t.sequence.as_secs_f64();
    Append {
        entries: t.entries,
        entry_bytes,
        sequence_secs: sequence,
        publish_secs: t.publish.as_secs_f64(),
        receipts_secs: t.receipts.as_secs_f64(),
        insert_only_secs: t.insert_only.as_secs_f64(),
        ratio_to_insert_only: sequence / t.insert_only.as_secs_f64().max(1e-9),
        target_secs: target,
        target_met: target.map(|t| sequence <= t),
    }
}

/// Times `f` `runs` times, in microseconds.
fn time_us(runs: usize, mut f: impl FnMut() -> Result<()>) -> Result<Summary> {
    let mut samples = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        f()?;
        samples.push(t.elapsed().as_secs_f64() * 1e6);
    }
    Ok(Summary::of(&samples))
}

fn proofs(
    a: &LogBenchArgs,
    signed: &SignedReceipt,
    institution: &PrivateKey,
    origin: &str,
) -> Result<Proofs> {
    let n = a.entries.max(2);
    let mut rng = SeededEntropy::new(b"bench log proofs");
    let log = SigningKey::generate(origin, KeyRole::Log, &mut rng).map_err(log_error)?;
    let witnesses: Vec<SigningKey> = ["w1.example", "w2.example"]
        .iter()
        .map(|w| SigningKey::generate(w, KeyRole::Witness, &mut rng))
        .collect::<hourglass_log::Result<_>>()
        .map_err(log_error)?;
    // Leaf n - 1 is the receipt; the others are distinct.
    let mut leaves: Vec<_> = (0..n - 1)
        .map(|i| leaf_hash(format!("entry {i}").as_bytes()))
        .collect();
    leaves.push(leaf_hash(signed.entry()));
    let mut memo = HashMemo::new();
    append(&mut memo, 0, &leaves).map_err(log_error)?;
    let tree_root = root(&memo, n).map_err(log_error)?;
    let mut cp = SignedCheckpoint::sign(origin, n, tree_root, &log).map_err(log_error)?;
    for w in &witnesses {
        let line = cp.cosignature_line(w, 1_800_000_000).map_err(log_error)?;
        cp = cp.with_signature_lines(&line).map_err(log_error)?;
    }
    let pins = LogPins::new(
        log.verifier(),
        witnesses
            .iter()
            .map(SigningKey::verifier)
            .collect::<Vec<VerifierKey>>(),
        2,
    )
    .map_err(log_error)?;
    let note = cp.to_bytes();
    let index = n - 1;
    let proof = prove_inclusion(&memo, n, index).map_err(log_error)?;
    let receipt = signed.logged(index, &proof, &cp).map_err(log_error)?;
    let entry = signed.entry();
    let proof_only = time_us(a.proofs, || {
        proof.verify(entry, &tree_root).map_err(log_error)
    })?;
    let with_checkpoint = time_us(a.proofs, || {
        let v = SignedCheckpoint::parse(&note)
            .and_then(|c| c.verify(&pins))
            .map_err(log_error)?;
        proof.verify(entry, &v.root).map_err(log_error)
    })?;
    let whole = time_us(a.proofs.div_ceil(10), || {
        check_receipt(receipt.as_bytes(), institution.public(), &[], Some(&pins))
            .map(|_| ())
            .map_err(log_error)
    })?;
    Ok(Proofs {
        tree_size: n,
        path_hashes: proof.path.len(),
        target_ms: TARGET_PROOF_MS,
        target_met: proof_only.median / 1e3 <= TARGET_PROOF_MS,
        proof_only_us: proof_only,
        checkpoint_and_proof_us: with_checkpoint,
        whole_receipt_us: whole,
    })
}

/// Downloads every entry bundle of `source`'s tree of `size` entries, verifying nothing.
fn download_only(source: &HttpLog, size: u64) -> Result<u64> {
    let mut bytes = 0;
    for b in bundles_for(0, size, size) {
        bytes += source
            .fetch(&b.path(), b.max_bytes())
            .map_err(log_error)?
            .map_or(0, |v| v.len() as u64);
    }
    Ok(bytes)
}

fn verify_from_scratch(
    a: &LogBenchArgs,
    signed: &SignedReceipt,
    origin: &str,
    say: &dyn Fn(&str),
) -> Result<VerifyFromScratch> {
    let dir = tempfile::tempdir().map_err(Error::TempDir)?;
    let data = dir.path().join("data");
    say(&format!(
        "making a log of {} receipts for the service to serve...",
        a.verify_entries
    ));
    let prepared =
        hourglass_serve::bench::log_sequencer(&data, origin, a.verify_entries, signed.entry())
            .map_err(log_error)?;
    let served = crate::served::serve(Some(&data), &[])?;
    let prefix = format!("{}/log", served.base);
    let source = HttpLog::new(&prefix).map_err(log_error)?;
    let key_text = source
        .fetch("key", 1024)
        .map_err(log_error)?
        .ok_or_else(|| log_error("the service serves no /log/key"))?;
    let key = VerifierKey::parse(&String::from_utf8_lossy(&key_text)).map_err(log_error)?;
    let pins = LogPins::log_only(key).map_err(log_error)?;
    say("log verify, from scratch...");
    let mut receipts = 0u64;
    let t = Instant::now();
    let verified = verify_log(&source, &pins, None, &mut |_, entry| {
        // What `log verify` does with each new entry: read it as a receipt.
        if ReceiptEntry::read(entry, None).is_ok() {
            receipts += 1;
        }
        Ok(())
    })
    .map_err(log_error)?;
    let verify = t.elapsed().as_secs_f64();
    if receipts != a.verify_entries || verified.checkpoint.size != a.verify_entries {
        return Err(log_error(format!(
            "read {receipts} receipts of a log of {}",
            verified.checkpoint.size
        )));
    }
    say("the same bundles, downloaded only...");
    let t = Instant::now();
    let bytes = download_only(&source, verified.checkpoint.size)?;
    let download = t.elapsed().as_secs_f64();
    Ok(VerifyFromScratch {
        entries: verified.checkpoint.size,
        bytes,
        prepare: append_row(&prepared, signed.entry().len(), None),
        verify_secs: verify,
        download_only_secs: download,
        ratio_to_download_only: verify / download.max(1e-9),
        target_secs: TARGET_VERIFY_SECS,
        target_met: verify <= TARGET_VERIFY_SECS,
    })
}

/// Runs `hourglass bench log`.
pub fn run(a: LogBenchArgs) -> Result<()> {
    if !a.json {
        crate::machine::print_line();
    }
    let quiet = a.quiet || a.json;
    let say = |m: &str| {
        if !quiet {
            eprintln!("bench log: {m}");
        }
    };
    let origin = "bench.hourglass.example/log";
    say("signing a receipt as the service does (RSA-3072, RFC 3161 token)...");
    let (signed, institution) = real_receipt(origin)?;
    say(&format!(
        "{} entries of {} bytes through the sequencer on SQLite...",
        a.entries,
        signed.entry().len()
    ));
    let dir = tempfile::tempdir().map_err(Error::TempDir)?;
    let times = hourglass_serve::bench::log_sequencer(
        &dir.path().join("data"),
        origin,
        a.entries,
        signed.entry(),
    )
    .map_err(log_error)?;
    let append = append_row(&times, signed.entry().len(), Some(TARGET_APPEND_SECS));
    drop(dir);
    say("inclusion proofs...");
    let proofs = proofs(&a, &signed, &institution, origin)?;
    let verify = verify_from_scratch(&a, &signed, origin, &say)?;
    let report = Report {
        append,
        proofs,
        verify,
    };
    if a.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&report).map_err(|e| log_error(e.to_string()))?
        );
        return Ok(());
    }
    print_report(&report);
    Ok(())
}

fn yes(met: bool) -> &'static str {
    if met {
        "met"
    } else {
        "NOT met"
    }
}

fn print_append(what: &str, r: &Append) {
    let target = match (r.target_secs, r.target_met) {
        (Some(t), Some(met)) => format!(" (target {t} s: {})", yes(met)),
        _ => String::new(),
    };
    println!(
        "{what}: {} entries of {} bytes sequenced in {:.2} s{target}; \
         checkpoint published in {:.0} ms; receipts with proofs written in {:.2} s",
        r.entries,
        r.entry_bytes,
        r.sequence_secs,
        r.publish_secs * 1e3,
        r.receipts_secs,
    );
    println!(
        "  baseline: the same rows inserted without hashing: {:.2} s (sequencer / baseline = {:.2})",
        r.insert_only_secs, r.ratio_to_insert_only
    );
}

fn print_report(r: &Report) {
    println!("hourglass bench log (SQLite, loopback; this machine)");
    print_append("append through the sequencer", &r.append);
    let p = &r.proofs;
    println!(
        "inclusion proof in a tree of {} ({} hashes): {:.1} us median (target {} ms: {}); \
         with the checkpoint's signature and 2 cosignatures: {:.1} us; a whole receipt \
         (RSA-PSS, token, log): {:.0} us",
        p.tree_size,
        p.path_hashes,
        p.proof_only_us.median,
        p.target_ms,
        yes(p.target_met),
        p.checkpoint_and_proof_us.median,
        p.whole_receipt_us.median,
    );
    let v = &r.verify;
    print_append("  (the served log, made the same way)", &v.prepare);
    println!(
        "log verify from scratch: {} entries ({:.1} MB) in {:.2} s (target {} s: {}); \
         baseline: downloading the same bundles only: {:.2} s (verify / download = {:.2})",
        v.entries,
        v.bytes as f64 / 1e6,
        v.verify_secs,
        v.target_secs,
        yes(v.target_met),
        v.download_only_secs,
        v.ratio_to_download_only,
    );
}

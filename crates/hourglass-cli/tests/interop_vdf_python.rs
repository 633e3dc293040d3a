//! Interoperability of `hourglass vdf` with an independent Python verifier,
//! `tests/python/vdf_verify.py`, written only from docs/FORMATS.md section 15 and the committed
//! vectors (not from the Rust source): it tests that the specification is precise enough for a
//! compatible implementation.
//!
//! - The known-answer values of `crates/hourglass-vdf/tests/vectors/kat.json` (`x`, and `l` for
//!   Wesolowski) are recomputed in Python, which also regenerates every vector byte for byte.
//! - Every committed vector and fresh proofs made by `hourglass vdf eval` verify in Python.
//! - Tampered proofs (a digit of the output, `pi`, `l` or a `mu`; `T` off by one; another
//!   input; the non-canonical negation `N - y`; format violations of section 15.7) are rejected
//!   by Python and by `hourglass vdf verify` (exit status 1).
//!
//! Requires `python3` with `pycryptodome` (the KAT mode cross-checks the script's own
//! Baillie-PSW test against it); without it the tests fail with a hint to run
//! `bash scripts/setup-debian.sh`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

/// RSA-2048, the RSA Factoring Challenge number (the built-in modulus `rsa-2048`), in hex.
const RSA_2048_HEX: &str = concat!(
    "c7970ceedcc3b0754490201a7aa613cd73911081c790f5f1a8726f463550bb5b7ff0db8e1ea1189ec72f93d1650011bd",
    "721aeeacc2acde32a04107f0648c2813a31f5b0b7765ff8b44b4b6ffc93384b646eb09c7cf5e8592d40ea33c80039f35",
    "b4f14a04b51f7bfd781be4d1673164ba8eb991c2c4d730bbbe35f592bdef524af7e8daefd26c66fc02c479af89d64d37",
    "3f442709439de66ceb955f3ea37d5159f6135809f85334b5cb1813addc80cd05609f10ac6a95ad65872c909525bdad32",
    "bc729592642920f24c61dc5b3c3b7923e56b16a4d9d373d8721f24a3fc0f1b3131f55615172866bccc30f95054c824e7",
    "33a5eb6817f7bc16399d48c6361cc7e5",
);

fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/vdf_verify.py")
}

fn vectors_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../hourglass-vdf/tests/vectors")
}

fn require_libs() {
    require_python(&["hashlib", "json", "Crypto.Math.Primality"]);
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs `vdf_verify.py ARGS` and returns its output, whatever the status.
fn py(args: &[&str]) -> Output {
    Command::new("python3")
        .arg(script())
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}); {SETUP_HINT}"))
}

/// `--modulus-n HEX` when the proof is over a modulus other than `rsa-2048` (the committed
/// vectors use a 1024-bit test modulus; this test trusts it explicitly).
fn modulus_args(proof: &Path) -> Vec<String> {
    let doc: serde_json::Value = serde_json::from_slice(&read(proof)).unwrap();
    match doc["modulus"].as_str().expect("modulus field") {
        "rsa-2048" => vec![],
        hex => vec!["--modulus-n".to_string(), hex.to_string()],
    }
}

/// Requires the Python verifier to print `valid` and exit 0.
fn py_valid(proof: &Path) {
    py_valid_with(proof, &modulus_args(proof));
}

/// Like [`py_valid`] with explicit extra arguments.
fn py_valid_with(proof: &Path, extra: &[String]) {
    let mut args = vec![s(proof)];
    args.extend(extra.iter().map(String::as_str));
    let out = py(&args);
    assert!(
        out.status.success() && text(&out.stdout).trim() == "valid",
        "vdf_verify.py {args:?} should accept the proof (status {:?}):\n{}{}",
        out.status.code(),
        text(&out.stdout),
        text(&out.stderr)
    );
}

/// Requires the Python verifier to print `invalid: REASON` and exit 1; returns REASON.
fn py_invalid(args: &[&str]) -> String {
    let out = py(args);
    let stdout = text(&out.stdout);
    assert!(
        out.status.code() == Some(1) && stdout.starts_with("invalid: "),
        "vdf_verify.py {args:?} should reject the proof with status 1 (status {:?}):\n{stdout}{}",
        out.status.code(),
        text(&out.stderr)
    );
    stdout.trim()["invalid: ".len()..].to_string()
}

/// The committed proof files (everything but `kat.json`), sorted.
fn vector_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(vectors_dir())
        .expect("the vectors directory")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .filter(|p| p.file_name().is_some_and(|n| n != "kat.json"))
        .collect();
    files.sort();
    files
}

/// The number of Pietrzak rounds for `t` (section 15.6: halve, rounding up, while above 64).
fn pietrzak_rounds(mut t: u64) -> usize {
    let mut rounds = 0;
    while t > 64 {
        t = t.div_ceil(2);
        rounds += 1;
    }
    rounds
}

/// Makes a fresh proof with `hourglass vdf eval` (default modulus `rsa-2048`).
fn eval(dir: &Path, scheme: &str, t: u64, k: u32, input: &str) -> PathBuf {
    let path = dir.join(format!("{scheme}-t{t}-k{k}.json"));
    let (t, k) = (t.to_string(), k.to_string());
    hg(&[
        "vdf",
        "eval",
        "--input",
        input,
        "--iterations",
        &t,
        "--proof",
        scheme,
        "--security",
        &k,
        "-o",
        s(&path),
        "--quiet",
    ]);
    path
}

/// `text` with the single occurrence of `from` replaced by `to`.
fn replace_once(text: &str, from: &str, to: &str) -> String {
    assert_eq!(
        text.matches(from).count(),
        1,
        "{from:?} should occur exactly once in the proof file"
    );
    assert_ne!(from, to);
    text.replacen(from, to, 1)
}

/// `hex` with the digit in the middle changed (value xor 1), still lowercase hex.
fn flip_digit(hex: &str) -> String {
    let pos = hex.len() / 2;
    let digit = u8::from_str_radix(&hex[pos..=pos], 16).expect("hex digit") ^ 1;
    format!("{}{digit:x}{}", &hex[..pos], &hex[pos + 1..])
}

/// `N - v` for the big-endian hex strings `n` and `v` of equal length, as hex of that length.
fn negate(n: &str, v: &str) -> String {
    let (n, v) = (hex::decode(n).unwrap(), hex::decode(v).unwrap());
    assert_eq!(n.len(), v.len());
    let mut out = vec![0u8; n.len()];
    let mut borrow = 0i16;
    for i in (0..n.len()).rev() {
        let mut d = i16::from(n[i]) - i16::from(v[i]) - borrow;
        borrow = i16::from(d < 0);
        if d < 0 {
            d += 256;
        }
        out[i] = u8::try_from(d).unwrap();
    }
    assert_eq!(borrow, 0, "v > N");
    hex::encode(out)
}

/// Requires both the Python verifier and `hourglass vdf verify` to reject each variant (exit
/// status 1 for a proof that does not verify, 2 for a file that is not a proof);
/// `canonical` lists the variants that must be rejected as non-canonical.
fn both_reject(dir: &Path, tag: &str, variants: &[(String, String)], canonical: &[&str]) {
    for (i, (name, body)) in variants.iter().enumerate() {
        let path = file(dir, &format!("{tag}-tampered-{i}.json"), body.as_bytes());
        let reason = py_invalid(&[s(&path)]);
        let out = hg_run(&["vdf", "verify", s(&path)]);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            matches!(out.status.code(), Some(1 | 2)),
            "{tag} {name}: status {:?}\n{stderr}",
            out.status.code()
        );
        if canonical.contains(&name.as_str()) {
            assert!(
                reason.contains("canonical"),
                "{tag} {name}: Python should reject it as non-canonical, said {reason:?}"
            );
            assert!(
                stderr.contains("canonical"),
                "{tag} {name}: hourglass should reject it as non-canonical:\n{stderr}"
            );
        }
    }
}

#[test]
fn kat_values_match_python() {
    require_libs();
    let kat = vectors_dir().join("kat.json");
    let entries: Vec<serde_json::Value> = serde_json::from_slice(&read(&kat)).unwrap();
    let out = py(&["--kat", s(&kat), s(&vectors_dir())]);
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "vdf_verify.py --kat failed (status {:?}):\n{stdout}{}",
        out.status.code(),
        text(&out.stderr)
    );
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(lines.len(), entries.len(), "one line per vector:\n{stdout}");
    for (entry, line) in entries.iter().zip(&lines) {
        let name = entry["file"].as_str().unwrap();
        assert!(
            line.starts_with(&format!("{name}: x ok")),
            "KAT line for {name}: {line}"
        );
        assert!(line.ends_with("regenerated byte for byte"), "{line}");
        if name.starts_with("wesolowski") {
            assert!(line.contains("l ok"), "{line}");
        }
    }
    // Every committed vector has a kat.json entry.
    for path in vector_files() {
        let name = path.file_name().unwrap().to_str().unwrap();
        assert!(
            entries.iter().any(|e| e["file"] == name),
            "{name} has no entry in kat.json"
        );
    }
}

#[test]
fn committed_vectors_are_valid_in_python() {
    require_libs();
    let files = vector_files();
    assert!(
        files.len() >= 6,
        "expected the committed vectors, found {files:?}"
    );
    for scheme in ["wesolowski", "pietrzak"] {
        assert!(
            files
                .iter()
                .any(|p| p.file_name().unwrap().to_str().unwrap().starts_with(scheme)),
            "no {scheme} vector"
        );
    }
    for path in &files {
        py_valid(path);
        // A modulus other than rsa-2048 proves nothing unless the verifier names it.
        if !modulus_args(path).is_empty() {
            let reason = py_invalid(&[s(path)]);
            assert!(reason.contains("modulus"), "{}: {reason}", path.display());
        }
    }
}

#[test]
fn fresh_proofs_are_valid_in_python() {
    require_libs();
    let dir = tempdir();
    let cases = [
        ("wesolowski", 1000, 128),
        ("wesolowski", 4097, 256),
        ("wesolowski", 65, 128),
        ("wesolowski", 1, 256),
        ("pietrzak", 1000, 128),
        ("pietrzak", 4097, 256),
        ("pietrzak", 65, 128),
        ("pietrzak", 64, 256),
    ];
    for (scheme, t, k) in cases {
        let path = eval(
            dir.path(),
            scheme,
            t,
            k,
            &format!("interop {scheme} T={t} k={k}"),
        );
        hg(&["vdf", "verify", s(&path)]);
        py_valid(&path);
        // Naming the trusted modulus explicitly: the script's RSA-2048 (from the decimal
        // digits) must equal this file's hex form of it.
        py_valid_with(&path, &["--modulus-n".into(), RSA_2048_HEX.into()]);
        let doc: serde_json::Value = serde_json::from_slice(&read(&path)).unwrap();
        assert_eq!(doc["modulus"], "rsa-2048");
        assert_eq!(doc["iterations"], t);
        assert_eq!(doc["security_bits"], k);
        if scheme == "pietrzak" {
            let mu = doc["proof"]["mu"].as_array().expect("mu list");
            assert_eq!(mu.len(), pietrzak_rounds(t), "rounds for T = {t}");
        } else {
            let l = doc["proof"]["l"].as_str().expect("l");
            assert_eq!(l.len(), 2 * 2 * k as usize / 8, "l has 2k bits");
        }
    }
}

/// The tampered variants common to both schemes.
fn common_tampering(body: &str, doc: &serde_json::Value, t: u64) -> Vec<(String, String)> {
    let output = doc["output"].as_str().unwrap();
    let input = doc["input"].as_str().unwrap();
    let iterations = format!("\"iterations\": {t},");
    vec![
        (
            "output digit".into(),
            replace_once(body, output, &flip_digit(output)),
        ),
        (
            "output N - y".into(),
            replace_once(body, output, &negate(RSA_2048_HEX, output)),
        ),
        (
            "iterations + 1".into(),
            replace_once(body, &iterations, &format!("\"iterations\": {},", t + 1)),
        ),
        (
            "iterations - 1".into(),
            replace_once(body, &iterations, &format!("\"iterations\": {},", t - 1)),
        ),
        (
            "input".into(),
            replace_once(
                body,
                &format!("\"input\": \"{input}\""),
                &format!("\"input\": \"{}\"", hex::encode("another input")),
            ),
        ),
    ]
}

#[test]
fn tampered_wesolowski_proofs_are_rejected() {
    require_libs();
    let dir = tempdir();
    for (t, k) in [(1000, 128), (4097, 256)] {
        let path = eval(dir.path(), "wesolowski", t, k, "tamper with me");
        hg(&["vdf", "verify", s(&path)]);
        py_valid(&path);
        let body = String::from_utf8(read(&path)).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        let pi = doc["proof"]["pi"].as_str().unwrap();
        let l = doc["proof"]["l"].as_str().unwrap();
        let mut variants = common_tampering(&body, &doc, t);
        variants.push(("pi digit".into(), replace_once(&body, pi, &flip_digit(pi))));
        variants.push((
            "pi N - pi".into(),
            replace_once(&body, pi, &negate(RSA_2048_HEX, pi)),
        ));
        variants.push(("l digit".into(), replace_once(&body, l, &flip_digit(l))));
        both_reject(
            dir.path(),
            &format!("wesolowski-t{t}"),
            &variants,
            &["output N - y", "pi N - pi"],
        );
    }
}

#[test]
fn tampered_pietrzak_proofs_are_rejected() {
    require_libs();
    let dir = tempdir();
    for (t, k) in [(1000, 128), (4097, 256)] {
        let path = eval(dir.path(), "pietrzak", t, k, "tamper with me");
        hg(&["vdf", "verify", s(&path)]);
        py_valid(&path);
        let body = String::from_utf8(read(&path)).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        let mus: Vec<&str> = doc["proof"]["mu"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m.as_str().unwrap())
            .collect();
        assert!(mus.len() >= 4, "T = {t} has several rounds");
        let mut variants = common_tampering(&body, &doc, t);
        for (i, mu) in mus.iter().enumerate() {
            variants.push((
                format!("mu_{i} digit"),
                replace_once(&body, mu, &flip_digit(mu)),
            ));
        }
        variants.push((
            "mu_0 N - mu".into(),
            replace_once(&body, mus[0], &negate(RSA_2048_HEX, mus[0])),
        ));
        // One round too few: drop the last mu.
        let last = mus[mus.len() - 1];
        variants.push((
            "last mu dropped".into(),
            replace_once(&body, &format!(",\n      \"{last}\""), ""),
        ));
        both_reject(
            dir.path(),
            &format!("pietrzak-t{t}"),
            &variants,
            &["output N - y", "mu_0 N - mu"],
        );
    }
}

#[test]
fn format_violations_are_rejected_by_python_and_hourglass() {
    // Section 15.7: "Readers refuse unknown fields, other versions, upper-case hex, hex of the
    // wrong length, a proof object that does not match `scheme`".
    require_libs();
    let dir = tempdir();
    let w = eval(dir.path(), "wesolowski", 100, 128, "format");
    let p = eval(dir.path(), "pietrzak", 100, 128, "format");
    for (path, scheme, other) in [
        (&w, "wesolowski", "pietrzak"),
        (&p, "pietrzak", "wesolowski"),
    ] {
        let body = String::from_utf8(read(path)).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
        let output = doc["output"].as_str().unwrap();
        let variants: Vec<(String, String)> = vec![
            (
                "unknown field".into(),
                replace_once(
                    &body,
                    "\"version\": 1,",
                    "\"version\": 1,\n  \"note\": \"x\",",
                ),
            ),
            (
                "version 2".into(),
                replace_once(&body, "\"version\": 1,", "\"version\": 2,"),
            ),
            (
                "upper-case output".into(),
                replace_once(&body, output, &output.to_uppercase()),
            ),
            (
                "output one byte short".into(),
                replace_once(&body, output, &output[2..]),
            ),
            (
                "proof object of the other scheme".into(),
                replace_once(
                    &body,
                    &format!("\"scheme\": \"{scheme}\""),
                    &format!("\"scheme\": \"{other}\""),
                ),
            ),
            (
                "security level 192".into(),
                replace_once(&body, "\"security_bits\": 128", "\"security_bits\": 192"),
            ),
        ];
        both_reject(dir.path(), &format!("format-{scheme}"), &variants, &[]);
    }
}

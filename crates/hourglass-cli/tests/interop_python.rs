//! Interoperability with two independent Python RSA implementations: pyca `cryptography`
//! (OpenSSL underneath) and `pycryptodome` (its own RSA code), through
//! `tests/python/rsa_oracle.py`. Python reads hourglass's PEM files; OAEP and PSS are checked
//! in both directions, and tampered data is rejected by both sides.
//!
//! The keys are the unusual ones: a 2048-bit scheme-b key (576-bit e) and a 4096-bit
//! rebalanced key (e of about 4096 bits). OpenSSL refuses public exponents over 64 bits for
//! moduli over 3072 bits, so `cryptography` can only do the private-key half with the 4096-bit
//! key; `pycryptodome` is the oracle for its public-key half.
//!
//! Requires `python3` with both packages; without them the tests fail with a hint to run
//! `bash scripts/setup-debian.sh`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;

const MSG: &[u8] = b"hourglass <-> Python: 0123456789abcdef0123456789abcdef";

fn oracle_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/python/rsa_oracle.py")
}

/// Runs `rsa_oracle.py LIB ARGS...`, the arguments given as an [`argv`] template.
fn py(lib: &str, template: &str, paths: &[&Path]) -> Output {
    Command::new("python3")
        .arg(oracle_script())
        .arg(lib)
        .args(argv(template, paths))
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 ({e}); {SETUP_HINT}"))
}

/// Runs the oracle and requires success.
fn py_ok(lib: &str, template: &str, paths: &[&Path]) -> Output {
    let out = py(lib, template, paths);
    assert!(
        out.status.success(),
        "rsa_oracle.py {lib} {template} {paths:?} failed ({:?}):\n{}{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// Runs the oracle and requires the "verification/decryption failed" status 1.
fn py_rejects(lib: &str, template: &str, paths: &[&Path]) {
    let out = py(lib, template, paths);
    assert_eq!(
        out.status.code(),
        Some(1),
        "rsa_oracle.py {lib} {template} {paths:?} should have rejected the input:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn require_libs() {
    require_python(&[
        "cryptography.hazmat.primitives.asymmetric.rsa",
        "Crypto.PublicKey.RSA",
        "Crypto.Signature.pss",
    ]);
}

/// The directions a library can do with a key.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ops {
    /// Encrypt, decrypt, sign and verify.
    All,
    /// Only decrypt and sign (the library refuses this key's public exponent).
    PrivateOnly,
}

/// A key pair made by hourglass, with the sizes `inspect` reports.
struct Pair {
    key: PathBuf,
    public: PathBuf,
    bits: u64,
    e_bits: u64,
}

fn make_pair(d: &Path, variant: &str, bits: u32) -> Pair {
    let (key, public) = keygen(d, variant, variant, bits, &[]);
    let out = hg(&argv("rsa inspect -i {} --json", &[&key]));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    Pair {
        key,
        public,
        bits: report["bits"].as_u64().unwrap(),
        e_bits: report["e_bits"].as_u64().unwrap(),
    }
}

fn interop(lib: &str, d: &Path, pair: &Pair, ops: Ops) {
    let (key, public) = (pair.key.as_path(), pair.public.as_path());
    let tag = format!("{lib}-{}", pair.bits);
    let msg = file(d, &format!("msg-{tag}.txt"), MSG);
    let path = |name: &str| d.join(format!("{name}-{tag}"));

    // Python reads both files, and its own consistency checks accept them.
    let sizes = format!("bits={} e_bits={}", pair.bits, pair.e_bits);
    let info = py_ok(lib, "info --key {}", &[key]).stdout;
    assert_eq!(
        String::from_utf8(info).unwrap().trim(),
        format!("{sizes} private=1"),
        "{tag}"
    );
    let info = py_ok(lib, "info --key {}", &[public]).stdout;
    assert_eq!(
        String::from_utf8(info).unwrap().trim(),
        format!("{sizes} private=0"),
        "{tag}"
    );

    // OAEP-SHA256, hourglass -> Python; a flipped bit is rejected.
    let (ct, m) = (path("ct"), path("m"));
    hg(&argv("rsa encrypt -k {} -i {} -o {}", &[public, &msg, &ct]));
    py_ok(lib, "decrypt --key {} --in {} --out {}", &[key, &ct, &m]);
    assert_eq!(
        read(&m),
        MSG,
        "{tag}: Python decrypted hourglass's OAEP ciphertext"
    );
    let bad = flipped(&ct, d, &format!("ct-{tag}.bad"), 8 * 17 + 2);
    py_rejects(
        lib,
        "decrypt --key {} --in {} --out {}",
        &[key, &bad, &path("bad")],
    );

    // OAEP-SHA512 with a label, hourglass -> Python; without the label it fails.
    let (ct512, m512) = (path("ct512"), path("m512"));
    let opts = "--hash sha512 --label L";
    hg(&argv(
        &format!("rsa encrypt -k {{}} -i {{}} -o {{}} {opts}"),
        &[public, &msg, &ct512],
    ));
    py_rejects(
        lib,
        "decrypt --key {} --in {} --out {} --hash sha512",
        &[key, &ct512, &m512],
    );
    py_ok(
        lib,
        &format!("decrypt --key {{}} --in {{}} --out {{}} {opts}"),
        &[key, &ct512, &m512],
    );
    assert_eq!(read(&m512), MSG, "{tag}: OAEP-SHA512 with a label");

    // PSS-SHA256, Python -> hourglass; a flipped bit is rejected.
    let sig = path("sig");
    py_ok(lib, "sign --key {} --in {} --out {}", &[key, &msg, &sig]);
    hg(&argv(
        "rsa verify -k {} -i {} -s {} --salt-len 32",
        &[public, &msg, &sig],
    ));
    let bad = flipped(&sig, d, &format!("sig-{tag}.bad"), 8 * 40 + 5);
    hg_fail(
        1,
        &argv("rsa verify -k {} -i {} -s {}", &[public, &msg, &bad]),
    );

    if ops == Ops::PrivateOnly {
        return;
    }

    // OAEP-SHA256, Python -> hourglass; a flipped bit is rejected and nothing is written.
    let (ct2, m2) = (path("ct2"), path("m2"));
    py_ok(
        lib,
        "encrypt --key {} --in {} --out {}",
        &[public, &msg, &ct2],
    );
    hg(&argv("rsa decrypt -k {} -i {} -o {}", &[key, &ct2, &m2]));
    assert_eq!(
        read(&m2),
        MSG,
        "{tag}: hourglass decrypted Python's OAEP ciphertext"
    );
    let bad = flipped(&ct2, d, &format!("ct2-{tag}.bad"), 8 * 30 + 1);
    let bad_out = path("bad2");
    hg_fail(
        2,
        &argv("rsa decrypt -k {} -i {} -o {}", &[key, &bad, &bad_out]),
    );
    assert!(!bad_out.exists());

    // PSS-SHA256, hourglass -> Python; tampered signature and other message are rejected.
    let verify32 = "verify --key {} --in {} --sig {} --salt-len 32";
    let sig2 = path("sig2");
    hg(&argv("rsa sign -k {} -i {} -s {}", &[key, &msg, &sig2]));
    py_ok(lib, verify32, &[public, &msg, &sig2]);
    let bad = flipped(&sig2, d, &format!("sig2-{tag}.bad"), 8 * 60 + 6);
    py_rejects(lib, verify32, &[public, &msg, &bad]);
    let other = file(d, &format!("other-{tag}.txt"), b"a different message");
    py_rejects(lib, verify32, &[public, &other, &sig2]);

    // A 20-byte salt, and SHA-384.
    let sig20 = path("sig20");
    hg(&argv(
        "rsa sign -k {} -i {} -s {} --salt-len 20",
        &[key, &msg, &sig20],
    ));
    py_ok(
        lib,
        "verify --key {} --in {} --sig {} --salt-len 20",
        &[public, &msg, &sig20],
    );
    let sig384 = path("sig384");
    hg(&argv(
        "rsa sign -k {} -i {} -s {} --hash sha384",
        &[key, &msg, &sig384],
    ));
    py_ok(
        lib,
        "verify --key {} --in {} --sig {} --hash sha384",
        &[public, &msg, &sig384],
    );
    py_rejects(
        lib,
        "verify --key {} --in {} --sig {} --hash sha256",
        &[public, &msg, &sig384],
    );
}

#[test]
fn scheme_b_2048_with_cryptography_and_pycryptodome() {
    require_libs();
    let dir = tempdir();
    let pair = make_pair(dir.path(), "scheme-b", 2048);
    assert!(
        (256..1024).contains(&pair.e_bits),
        "scheme B has a short e, got {} bits",
        pair.e_bits
    );
    interop("cryptography", dir.path(), &pair, Ops::All);
    interop("pycryptodome", dir.path(), &pair, Ops::All);
}

#[test]
fn rebalanced_4096_with_pycryptodome_and_cryptography() {
    require_libs();
    let dir = tempdir();
    let pair = make_pair(dir.path(), "rebalanced", 4096);
    assert!(
        pair.e_bits > 4000,
        "a rebalanced key's e is about as long as n, got {} bits",
        pair.e_bits
    );
    interop("pycryptodome", dir.path(), &pair, Ops::All);
    // OpenSSL (under `cryptography`) refuses this e for public-key operations.
    interop("cryptography", dir.path(), &pair, Ops::PrivateOnly);
}

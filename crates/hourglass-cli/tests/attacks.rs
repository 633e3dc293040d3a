//! Attacks on the verdicts the command line prints, as an adversary would mount them: each test
//! reproduces an attack that worked against hourglass 0.1 and checks that it no longer does.
//!
//! - A planted checkpoint made a forged delayed signature verify without any squaring.
//! - A planted or edited checkpoint is never resumed by any long command: it is set aside (kept
//!   as `FILE.untrusted`), named in a warning, and the work starts over with a correct result.

mod common;

use std::path::{Path, PathBuf};

use common::{file, hg, hg_run, read, s, tempdir};
use hourglass_arith::checkpoint::{Checkpoint, CheckpointKey};
use hourglass_arith::modular::{inverse, pow_mod_vartime};
use hourglass_arith::squaring::{SquaringState, DEFAULT_BLOCK};
use hourglass_arith::Integer;
use hourglass_rsa::hazmat::pss_encode;
use hourglass_rsa::HashAlg;
use hourglass_timelock::PuzzlePublicKey;
use rug::integer::Order;
use sha2::{Digest, Sha256};

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn with_ext(p: &Path, ext: &str) -> PathBuf {
    let mut s = p.as_os_str().to_owned();
    s.push(ext);
    PathBuf::from(s)
}

/// The unauthenticated checkpoint of hourglass 0.1: the fields, then their SHA-256, which
/// anyone can compute.
fn old_format_checkpoint(context: &[u8], total: u64, x: &Integer) -> Vec<u8> {
    let mut out = b"HGCKPT01".to_vec();
    out.extend_from_slice(&(context.len() as u32).to_be_bytes());
    out.extend_from_slice(context);
    out.extend_from_slice(&DEFAULT_BLOCK.to_be_bytes());
    out.extend_from_slice(&total.to_be_bytes());
    out.extend_from_slice(&total.to_be_bytes()); // done = total: "all the work is done"
    for v in [x, &Integer::from(1)] {
        let bytes = v.to_digits::<u8>(Order::Msf);
        out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(&bytes);
    }
    let digest = Sha256::digest(&out);
    out.extend_from_slice(&digest);
    out
}

/// A delayed signature forged without the key: the attacker picks any `s`, encodes a valid PSS
/// message `EM` for the document, and plants a finished checkpoint claiming `s^(2^t) = EM /
/// s^z`; the verifier then multiplies by `s^z` and finds `EM`. hourglass 0.1 printed "valid
/// delayed signature" for it after zero squarings. Now the planted file is refused (in the old
/// format and under another user's key alike), the squarings are really done, and the forgery
/// is invalid.
#[test]
fn a_planted_checkpoint_does_not_make_a_forged_delayed_signature_valid() {
    let dir = tempdir();
    let d = dir.path();
    let key = d.join("deputy");
    hg(&[
        "puzzle",
        "keygen",
        "--bits",
        "1024",
        "--squarings",
        "60000",
        "--seed",
        "attack",
        "-o",
        s(&key),
    ]);
    let public =
        PuzzlePublicKey::from_json(&String::from_utf8(read(&with_ext(&key, ".pub"))).unwrap())
            .unwrap();
    let doc = file(d, "contract.txt", b"I owe the attacker everything.\n");
    let digest = Sha256::digest(read(&doc));
    let n = public.n().clone();
    let k = public.bits().div_ceil(8) as usize;

    // The forgery: any s, a PSS encoding of the document, x = EM * s^(-z).
    let forged_s = Integer::from_digits(&Sha256::digest(b"any value"), Order::Msf) << 700u32;
    let em = pss_encode(HashAlg::Sha256, &digest, &[7u8; 32], public.bits() - 1).unwrap();
    let em = Integer::from_digits(&em, Order::Msf);
    let s_z = pow_mod_vartime(&forged_s, public.z(), &n).unwrap();
    let x = Integer::from(&em * &inverse(&s_z, &n).unwrap()) % &n;
    let mut context = b"hourglass-puzzle-solve-v1\0".to_vec();
    context.extend_from_slice(&public.fingerprint());
    context.extend_from_slice(&forged_s.to_digits::<u8>(Order::Msf));
    let mut sig_bytes = forged_s.to_digits::<u8>(Order::Msf);
    while sig_bytes.len() < k {
        sig_bytes.insert(0, 0);
    }
    let sig = file(d, "contract.sig", &sig_bytes);
    let ckpt = with_ext(&sig, ".ckpt");

    let attacker_key = CheckpointKey::from_bytes([0x42; 32]);
    let under_attacker_key = Checkpoint {
        context: context.clone(),
        block: DEFAULT_BLOCK,
        total: public.t(),
        state: SquaringState {
            done: public.t(),
            x: x.clone(),
            check: Integer::from(1),
        },
        aux: Vec::new(),
    }
    .to_bytes(&attacker_key);
    for planted in [
        old_format_checkpoint(&context, public.t(), &x),
        under_attacker_key,
    ] {
        std::fs::write(&ckpt, &planted).unwrap();
        let out = hg_run(&[
            "puzzle",
            "verify-signature",
            "-p",
            s(&with_ext(&key, ".pub")),
            "-i",
            s(&doc),
            "-s",
            s(&sig),
            "--quiet",
        ]);
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(!String::from_utf8_lossy(&out.stdout).contains("valid delayed signature"));
        assert!(
            err.contains("ignoring checkpoint") && err.contains("contract.sig.ckpt"),
            "{err}"
        );
        assert!(err.contains("invalid signature"), "{err}");
        // The planted file is kept aside, not trusted and not destroyed.
        assert_eq!(read(&with_ext(&ckpt, ".untrusted")), planted);
    }

    // Not vacuous: the real signature of the same document verifies.
    let real = d.join("real.sig");
    hg(&[
        "puzzle",
        "sign",
        "-k",
        s(&with_ext(&key, ".key")),
        "-i",
        s(&doc),
        "-o",
        s(&real),
    ]);
    let out = hg(&[
        "puzzle",
        "verify-signature",
        "-p",
        s(&with_ext(&key, ".pub")),
        "-i",
        s(&doc),
        "-s",
        s(&real),
        "--quiet",
    ]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("valid delayed signature"));
}

/// Replaces `path` with a checkpoint of the same run's shape written under another key.
fn plant(path: &Path) -> Vec<u8> {
    let bytes = Checkpoint {
        context: b"whatever the attacker likes".to_vec(),
        block: DEFAULT_BLOCK,
        total: 1,
        state: SquaringState {
            done: 1,
            x: Integer::from(4),
            check: Integer::from(4),
        },
        aux: Vec::new(),
    }
    .to_bytes(&CheckpointKey::from_bytes([0x13; 32]));
    std::fs::write(path, &bytes).unwrap();
    bytes
}

/// Every resumable command refuses a checkpoint it did not write, names it, keeps it aside, and
/// still produces the right result by doing the work.
#[test]
fn every_long_command_refuses_a_planted_checkpoint_and_redoes_the_work() {
    let dir = tempdir();
    let d = dir.path();
    let doc = file(d, "paper.txt", b"a paper\n");
    let check = |out: &std::process::Output, ckpt: &Path, planted: &[u8]| {
        let err = stderr(out);
        assert!(out.status.success(), "{err}");
        assert!(
            err.contains("ignoring checkpoint") && err.contains(s(ckpt)),
            "{err}"
        );
        assert_eq!(read(&with_ext(ckpt, ".untrusted")), planted);
    };

    // puzzle solve, then the institution verifies the solution.
    let key = d.join("p");
    hg(&[
        "puzzle",
        "keygen",
        "--bits",
        "1024",
        "--squarings",
        "40000",
        "--seed",
        "planted",
        "-o",
        s(&key),
    ]);
    let sol = d.join("paper.sol");
    let ckpt = with_ext(&sol, ".ckpt");
    let planted = plant(&ckpt);
    let out = hg_run(&[
        "puzzle",
        "solve",
        "-p",
        s(&with_ext(&key, ".pub")),
        "-i",
        s(&doc),
        "-o",
        s(&sol),
        "--quiet",
    ]);
    check(&out, &ckpt, &planted);
    hg(&[
        "puzzle",
        "verify",
        "-k",
        s(&with_ext(&key, ".key")),
        "-i",
        s(&doc),
        "-s",
        s(&sol),
    ]);

    // timelock open: the content comes back intact.
    let sealed = d.join("paper.tlock");
    hg(&[
        "timelock",
        "seal",
        "-i",
        s(&doc),
        "-o",
        s(&sealed),
        "--squarings",
        "40000",
        "--bits",
        "1024",
    ]);
    let opened = d.join("paper.opened");
    let ckpt = with_ext(&opened, ".ckpt");
    let planted = plant(&ckpt);
    let out = hg_run(&[
        "timelock",
        "open",
        "-i",
        s(&sealed),
        "-o",
        s(&opened),
        "--quiet",
    ]);
    check(&out, &ckpt, &planted);
    assert_eq!(read(&opened), read(&doc));

    // vdf eval: the proof verifies.
    let proof = d.join("x.proof");
    let ckpt = with_ext(&proof, ".ckpt");
    let planted = plant(&ckpt);
    let out = hg_run(&[
        "vdf",
        "eval",
        "--input",
        "beacon",
        "--iterations",
        "30000",
        "-o",
        s(&proof),
        "--quiet",
    ]);
    check(&out, &ckpt, &planted);
    hg(&["vdf", "verify", s(&proof)]);

    // submit seal --open-ended: the institution verifies the bundle.
    let set = d.join("set");
    hg(&[
        "submit",
        "new-set",
        "--durations",
        "2s,1s",
        "--rate",
        "20000",
        "--bits",
        "1024",
        "--seed",
        "planted set",
        "-o",
        s(&set),
    ]);
    let bundle = d.join("paper.bundle");
    let ckpt = with_ext(&bundle, ".ckpt");
    let planted = plant(&ckpt);
    let out = hg_run(&[
        "submit",
        "seal",
        "--set",
        s(&set.join("set.json")),
        "-i",
        s(&doc),
        "--open-ended",
        "--until",
        "1s",
        "-o",
        s(&bundle),
        "--quiet",
    ]);
    check(&out, &ckpt, &planted);
    hg(&[
        "submit",
        "verify",
        "--keys",
        s(&set),
        "-i",
        s(&doc),
        s(&bundle),
    ]);
}

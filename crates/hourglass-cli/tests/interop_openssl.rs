//! Interoperability with the `openssl` command line (OpenSSL 3): key files, OAEP, PSS and
//! PKCS#1 v1.5 in both directions, for every hourglass variant at 2048 bits, and OpenSSL's own
//! keys read by hourglass. Requires `openssl`; without it the tests fail with a hint to run
//! `bash scripts/setup-debian.sh`.

mod common;

use std::path::Path;

use common::*;

/// What gets encrypted and signed (a 32-byte secret plus context, well under the OAEP limit).
const MSG: &[u8] = b"hourglass <-> OpenSSL: 0123456789abcdef0123456789abcdef";

/// `-pkeyopt` arguments for OAEP with `hash` for both the label hash and MGF1.
fn oaep_opts(hash: &str) -> Vec<String> {
    vec![
        "-pkeyopt".into(),
        "rsa_padding_mode:oaep".into(),
        "-pkeyopt".into(),
        format!("rsa_oaep_md:{hash}"),
        "-pkeyopt".into(),
        format!("rsa_mgf1_md:{hash}"),
    ]
}

fn pkeyutl(
    op: &str,
    key: &Path,
    public: bool,
    input: &Path,
    out: &Path,
    opts: &[String],
) -> std::process::Output {
    let mut args: Vec<String> = vec!["pkeyutl".into(), op.into()];
    if public {
        args.push("-pubin".into());
    }
    args.extend(["-inkey", s(key), "-in", s(input), "-out", s(out)].map(String::from));
    args.extend_from_slice(opts);
    openssl_run(&args)
}

/// `openssl dgst -sha256 -sign|-verify` with optional PSS salt length (None: PKCS#1 v1.5).
fn dgst(
    op: &str,
    key: &Path,
    msg: &Path,
    sig: &Path,
    pss_salt: Option<&str>,
) -> std::process::Output {
    let mut args: Vec<String> = vec!["dgst".into(), "-sha256".into(), op.into(), s(key).into()];
    if let Some(salt) = pss_salt {
        args.extend(["-sigopt", "rsa_padding_mode:pss", "-sigopt"].map(String::from));
        args.push(format!("rsa_pss_saltlen:{salt}"));
    }
    if op == "-sign" {
        args.extend(["-out", s(sig)].map(String::from));
    } else {
        args.extend(["-signature", s(sig)].map(String::from));
    }
    args.push(s(msg).into());
    openssl_run(&args)
}

fn assert_verified(out: &std::process::Output, what: &str) {
    assert!(
        out.status.success() && String::from_utf8_lossy(&out.stdout).contains("Verified OK"),
        "{what}: OpenSSL did not verify: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn assert_rejected(out: &std::process::Output, what: &str) {
    assert!(
        !out.status.success(),
        "{what}: OpenSSL accepted tampered data"
    );
}

/// Everything for one hourglass variant.
fn variant_interop(variant: &str) {
    require_openssl();
    let dir = tempdir();
    let d = dir.path();
    // Scheme A's prime search takes seconds for some seeds; this one ends quickly.
    let seed = match variant {
        "scheme-a" => "interop scheme-a e".to_string(),
        _ => format!("interop openssl {variant}"),
    };
    let (key, public) = keygen_seeded(d, "key", &seed, variant, 2048, &[]);
    let (key1, _) = keygen_seeded(d, "key1", &seed, variant, 2048, &["--format", "pkcs1"]);
    let msg = file(d, "msg.txt", MSG);

    // Key files: OpenSSL validates both forms and re-encodes them to the very same bytes.
    for k in [&key, &key1] {
        let out = openssl(&argv("pkey -check -noout -in {}", &[k]));
        assert!(
            String::from_utf8_lossy(&out.stdout).contains("Key is valid"),
            "{variant}: {}",
            k.display()
        );
    }
    assert!(read(&key).starts_with(b"-----BEGIN PRIVATE KEY-----\n"));
    assert!(read(&key1).starts_with(b"-----BEGIN RSA PRIVATE KEY-----\n"));
    assert_eq!(
        openssl(&argv("pkey -in {}", &[&key])).stdout,
        read(&key),
        "{variant}: PKCS#8 re-encoded"
    );
    assert_eq!(
        openssl(&argv("pkey -in {} -traditional", &[&key])).stdout,
        read(&key1),
        "{variant}: PKCS#1 form"
    );
    assert_eq!(
        openssl(&argv("pkey -in {} -pubout", &[&key1])).stdout,
        read(&public),
        "{variant}: SPKI public key"
    );
    let pub1 = d.join("pub1.pem");
    hg(&argv(
        "rsa pubkey -i {} -o {} --format pkcs1",
        &[&key, &pub1],
    ));
    assert_eq!(
        openssl(&argv("rsa -pubin -in {} -RSAPublicKey_out", &[&public])).stdout,
        read(&pub1),
        "{variant}: PKCS#1 public key"
    );

    // OAEP-SHA256, hourglass -> OpenSSL (with both private key forms).
    let ct1 = d.join("ct1.bin");
    hg(&argv(
        "rsa encrypt -k {} -i {} -o {}",
        &[&public, &msg, &ct1],
    ));
    assert_eq!(read(&ct1).len(), 256);
    for (i, k) in [&key, &key1].into_iter().enumerate() {
        let m = d.join(format!("m1-{i}.txt"));
        let out = pkeyutl("-decrypt", k, false, &ct1, &m, &oaep_opts("sha256"));
        assert!(
            out.status.success(),
            "{variant}: OpenSSL OAEP decrypt: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            read(&m),
            MSG,
            "{variant}: OpenSSL decrypted hourglass's ciphertext"
        );
    }
    // ... and OpenSSL -> hourglass (with both private key forms).
    let ct2 = d.join("ct2.bin");
    let out = pkeyutl("-encrypt", &public, true, &msg, &ct2, &oaep_opts("sha256"));
    assert!(
        out.status.success(),
        "{variant}: OpenSSL OAEP encrypt: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    for (i, k) in [&key, &key1].into_iter().enumerate() {
        let m = d.join(format!("m2-{i}.txt"));
        hg(&argv("rsa decrypt -k {} -i {} -o {}", &[k, &ct2, &m]));
        assert_eq!(
            read(&m),
            MSG,
            "{variant}: hourglass decrypted OpenSSL's ciphertext"
        );
    }
    // OAEP-SHA1 with a label, hourglass -> OpenSSL.
    let ct3 = d.join("ct3.bin");
    hg(&argv(
        "rsa encrypt -k {} -i {} -o {} --hash sha1 --label hourglass",
        &[&public, &msg, &ct3],
    ));
    let mut opts = oaep_opts("sha1");
    opts.extend([
        "-pkeyopt".to_string(),
        format!("rsa_oaep_label:{}", hex::encode("hourglass")),
    ]);
    let m3 = d.join("m3.txt");
    let out = pkeyutl("-decrypt", &key, false, &ct3, &m3, &opts);
    assert!(
        out.status.success(),
        "{variant}: OAEP-SHA1: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(read(&m3), MSG);
    // Without the label OpenSSL must refuse it.
    let out = pkeyutl(
        "-decrypt",
        &key,
        false,
        &ct3,
        &d.join("m3-nolabel.txt"),
        &oaep_opts("sha1"),
    );
    assert_rejected(&out, "OAEP label mismatch");

    // A flipped ciphertext bit is rejected by both sides.
    let bad1 = flipped(&ct1, d, "ct1.bad", 8 * 100 + 3);
    assert_rejected(
        &pkeyutl(
            "-decrypt",
            &key,
            false,
            &bad1,
            &d.join("bad1.txt"),
            &oaep_opts("sha256"),
        ),
        "ciphertext",
    );
    let bad2 = flipped(&ct2, d, "ct2.bad", 8 * 100 + 3);
    let bad_out = d.join("bad2.txt");
    hg_fail(
        2,
        &argv("rsa decrypt -k {} -i {} -o {}", &[&key, &bad2, &bad_out]),
    );
    assert!(!bad_out.exists(), "a failed decryption left an output file");

    // PSS-SHA256: hourglass -> OpenSSL (salt = hash length), OpenSSL -> hourglass.
    let sig1 = d.join("sig1.bin");
    hg(&argv("rsa sign -k {} -i {} -s {}", &[&key, &msg, &sig1]));
    assert_verified(
        &dgst("-verify", &public, &msg, &sig1, Some("32")),
        "PSS hourglass -> OpenSSL",
    );
    let sig2 = d.join("sig2.bin");
    assert!(dgst("-sign", &key, &msg, &sig2, Some("-1"))
        .status
        .success());
    hg(&argv(
        "rsa verify -k {} -i {} -s {}",
        &[&public, &msg, &sig2],
    ));
    hg(&argv(
        "rsa verify -k {} -i {} -s {} --salt-len 32",
        &[&public, &msg, &sig2],
    ));
    // OpenSSL's maximal salt: accepted by default (any salt length), refused when 32 is required.
    let sig_max = d.join("sig-max.bin");
    assert!(dgst("-sign", &key1, &msg, &sig_max, Some("max"))
        .status
        .success());
    hg(&argv(
        "rsa verify -k {} -i {} -s {}",
        &[&public, &msg, &sig_max],
    ));
    hg_fail(
        1,
        &argv(
            "rsa verify -k {} -i {} -s {} --salt-len 32",
            &[&public, &msg, &sig_max],
        ),
    );
    // Tampering.
    let bad = flipped(&sig1, d, "sig1.bad", 8 * 200);
    assert_rejected(
        &dgst("-verify", &public, &msg, &bad, Some("32")),
        "PSS signature",
    );
    let bad = flipped(&sig2, d, "sig2.bad", 8 * 200);
    hg_fail(
        1,
        &argv("rsa verify -k {} -i {} -s {}", &[&public, &msg, &bad]),
    );

    // PKCS#1 v1.5 is deterministic: both sides produce the same bytes.
    let sig3 = d.join("sig3.bin");
    hg(&argv(
        "rsa sign -k {} -i {} -s {} --pkcs1v15",
        &[&key, &msg, &sig3],
    ));
    let sig4 = d.join("sig4.bin");
    assert!(dgst("-sign", &key1, &msg, &sig4, None).status.success());
    assert_eq!(
        read(&sig3),
        read(&sig4),
        "{variant}: PKCS#1 v1.5 signatures differ"
    );
    assert_verified(
        &dgst("-verify", &public, &msg, &sig3, None),
        "PKCS#1 v1.5 hourglass -> OpenSSL",
    );
    hg(&argv(
        "rsa verify -k {} -i {} -s {} --pkcs1v15",
        &[&public, &msg, &sig4],
    ));
    let bad = flipped(&sig3, d, "sig3.bad", 8 * 255 + 7);
    assert_rejected(
        &dgst("-verify", &public, &msg, &bad, None),
        "PKCS#1 v1.5 signature",
    );
    hg_fail(
        1,
        &argv(
            "rsa verify -k {} -i {} -s {} --pkcs1v15",
            &[&public, &msg, &bad],
        ),
    );
    // A PSS signature is not a PKCS#1 v1.5 signature.
    hg_fail(
        1,
        &argv(
            "rsa verify -k {} -i {} -s {} --pkcs1v15",
            &[&public, &msg, &sig2],
        ),
    );
}

#[test]
fn standard_key_interoperates_with_openssl() {
    variant_interop("standard");
}

#[test]
fn crt_key_interoperates_with_openssl() {
    variant_interop("crt");
}

#[test]
fn rebalanced_key_interoperates_with_openssl() {
    variant_interop("rebalanced");
}

#[test]
fn scheme_a_key_interoperates_with_openssl() {
    variant_interop("scheme-a");
}

#[test]
fn scheme_b_key_interoperates_with_openssl() {
    variant_interop("scheme-b");
}

#[test]
fn openssl_keys_work_in_hourglass() {
    require_openssl();
    let dir = tempdir();
    let d = dir.path();
    let key8 = d.join("ossl8.pem");
    let key1 = d.join("ossl1.pem");
    let public = d.join("ossl.pub.pem");
    openssl(&argv(
        "genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out {}",
        &[&key8],
    ));
    openssl(&argv("pkey -in {} -traditional -out {}", &[&key8, &key1]));
    openssl(&argv("pkey -in {} -pubout -out {}", &[&key8, &public]));
    assert!(read(&key8).starts_with(b"-----BEGIN PRIVATE KEY-----"));
    assert!(read(&key1).starts_with(b"-----BEGIN RSA PRIVATE KEY-----"));
    let msg = file(d, "msg.txt", MSG);

    let ct = d.join("ct.bin");
    let out = pkeyutl("-encrypt", &public, true, &msg, &ct, &oaep_opts("sha256"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let reference_v15 = d.join("ref-v15.sig");
    assert!(dgst("-sign", &key8, &msg, &reference_v15, None)
        .status
        .success());

    for (form, key) in [("pkcs8", &key8), ("pkcs1", &key1)] {
        // inspect: a plain 2048-bit key with e = 65537 and nothing wrong.
        let out = hg(&argv("rsa inspect -i {} --json --fail-on weak", &[key]));
        let report: serde_json::Value =
            serde_json::from_slice(&out.stdout).expect("inspect --json is JSON");
        assert_eq!(report["kind"], "private", "{form}");
        assert_eq!(report["bits"], 2048, "{form}");
        assert_eq!(report["e"], "65537", "{form}");
        assert_eq!(report["verdict"], "info", "{form}: {report}");
        assert!(report["recorded_variant"].is_null(), "{form}");
        assert!(
            report["shape"].as_str().unwrap().contains("standard"),
            "{form}: {report}"
        );
        let text = hg(&argv("rsa inspect -i {}", &[key]));
        assert!(
            String::from_utf8_lossy(&text.stdout).contains("verdict:      OK"),
            "{form}"
        );

        // pubkey reproduces OpenSSL's SubjectPublicKeyInfo byte for byte.
        let p = d.join(format!("pub-{form}.pem"));
        hg(&argv("rsa pubkey -i {} -o {}", &[key, &p]));
        assert_eq!(read(&p), read(&public), "{form}: public key");

        // decrypt OpenSSL's OAEP ciphertext.
        let m = d.join(format!("m-{form}.txt"));
        hg(&argv("rsa decrypt -k {} -i {} -o {}", &[key, &ct, &m]));
        assert_eq!(read(&m), MSG, "{form}");

        // sign: PSS verified by OpenSSL, PKCS#1 v1.5 identical to OpenSSL's.
        let sig = d.join(format!("pss-{form}.sig"));
        hg(&argv("rsa sign -k {} -i {} -s {}", &[key, &msg, &sig]));
        assert_verified(&dgst("-verify", &public, &msg, &sig, Some("32")), form);
        let v15 = d.join(format!("v15-{form}.sig"));
        hg(&argv(
            "rsa sign -k {} -i {} -s {} --pkcs1v15",
            &[key, &msg, &v15],
        ));
        assert_eq!(
            read(&v15),
            read(&reference_v15),
            "{form}: PKCS#1 v1.5 signature"
        );
    }

    // OpenSSL's public key file.
    let out = hg(&argv("rsa inspect -i {} --json", &[&public]));
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["kind"], "public");
    assert_eq!(report["bits"], 2048);

    // A passphrase-protected PKCS#8 file written by OpenSSL (PBES2, PBKDF2, AES-256-CBC): read
    // with the passphrase (the same key), refused without one or with a wrong one.
    let encrypted = d.join("encrypted.pem");
    openssl(&argv(
        "pkey -in {} -aes256 -passout pass:secret -out {}",
        &[&key8, &encrypted],
    ));
    let pass = file(d, "pass.txt", b"secret\n");
    let wrong = file(d, "wrong.txt", b"Secret\n");
    let plain_pub = d.join("plain.pub.pem");
    hg(&argv("rsa pubkey -i {} -o {}", &[&key8, &plain_pub]));
    let from_encrypted = d.join("enc.pub.pem");
    hg(&argv(
        "rsa pubkey -i {} -o {} --passphrase-file {}",
        &[&encrypted, &from_encrypted, &pass],
    ));
    assert_eq!(read(&from_encrypted), read(&plain_pub));
    let stderr = hg_fail(2, &argv("rsa inspect -i {}", &[&encrypted]));
    assert!(stderr.contains("--passphrase-file"), "{stderr}");
    let stderr = hg_fail(
        2,
        &argv(
            "rsa inspect -i {} --passphrase-file {}",
            &[&encrypted, &wrong],
        ),
    );
    assert!(stderr.contains("passphrase does not decrypt"), "{stderr}");

    // hourglass's encrypted keys: OpenSSL reads them and signs what hourglass verifies.
    let ours = d.join("ours-encrypted.pem");
    hg(&argv(
        "rsa keygen --bits 2048 --encrypt --passphrase-file {} -o {}",
        &[&pass, &ours],
    ));
    assert!(
        String::from_utf8_lossy(&read(&ours)).starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----")
    );
    let text = openssl(&argv("asn1parse -in {}", &[&ours]));
    let text = String::from_utf8_lossy(&text.stdout);
    for want in ["PBES2", "PBKDF2", "hmacWithSHA256", "aes-256-cbc"] {
        assert!(text.contains(want), "{want} missing in:\n{text}");
    }
    let sig = d.join("ours.sig");
    openssl(&argv(
        "dgst -sha256 -sign {} -passin pass:secret -out {} {}",
        &[&ours, &sig, &msg],
    ));
    hg(&argv(
        "rsa verify -k {} -i {} -s {} --pkcs1v15 --passphrase-file {}",
        &[&ours, &msg, &sig, &pass],
    ));
    assert!(
        !openssl_run(&argv("pkey -in {} -passin pass:wrong -noout", &[&ours]))
            .status
            .success()
    );
}

/// A passphrase is the intent to encrypt: `--passphrase-file` without `--encrypt` writes an
/// encrypted key (hourglass 0.1 wrote it in the clear and said nothing), which OpenSSL opens
/// with the passphrase only; `ca new` does the same for the CA's key, which `puzzle certify`
/// then reads with it. A command whose keys cannot be encrypted refuses the passphrase (exit 2,
/// naming `--encrypt`) before writing anything.
#[test]
fn a_passphrase_encrypts_every_private_key_written() {
    let dir = tempdir();
    let d = dir.path();
    let pass = file(d, "pass.txt", b"secret\n");
    let is_encrypted_pem = |path: &Path| {
        String::from_utf8_lossy(&read(path)).starts_with("-----BEGIN ENCRYPTED PRIVATE KEY-----")
    };
    let opens_with = |path: &Path, passin: &str| {
        openssl_run(&argv(
            &format!("pkey -in {{}} -passin pass:{passin} -noout"),
            &[path],
        ))
        .status
        .success()
    };
    use std::os::unix::fs::PermissionsExt;
    let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;

    // rsa keygen: encrypted without --encrypt, and said so in --json.
    let key = d.join("key.pem");
    let out = hg(&argv(
        "rsa keygen --bits 2048 --passphrase-file {} -o {} --json",
        &[&pass, &key],
    ));
    assert!(is_encrypted_pem(&key), "the key was written in the clear");
    assert_eq!(mode(&key), 0o600);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["encrypted"], true, "{report}");
    assert!(opens_with(&key, "secret"));
    assert!(!opens_with(&key, "wrong"));
    let stderr = hg_fail(2, &argv("rsa inspect -i {}", &[&key]));
    assert!(stderr.contains("--passphrase-file"), "{stderr}");
    hg(&argv(
        "rsa inspect -i {} --passphrase-file {}",
        &[&key, &pass],
    ));

    // A format that cannot be encrypted is refused, before any work, and nothing is written.
    let hex = d.join("key.hex");
    let stderr = hg_fail(
        2,
        &argv(
            "rsa keygen --bits 2048 --format hex --passphrase-file {} -o {}",
            &[&pass, &hex],
        ),
    );
    assert!(stderr.contains("--encrypt"), "{stderr}");
    assert!(!hex.exists());

    // ca new: the CA's key is encrypted too; puzzle certify reads it with the passphrase.
    let ca = d.join("ca");
    hg(&argv(
        "ca new -o {} --bits 2048 --name Test --passphrase-file {} --quiet",
        &[&ca, &pass],
    ));
    let ca_key = d.join("ca.key");
    assert!(
        is_encrypted_pem(&ca_key),
        "the CA key was written in the clear"
    );
    assert_eq!(mode(&ca_key), 0o600);
    assert!(opens_with(&ca_key, "secret"));
    let puzzle = d.join("p");
    hg(&argv(
        "puzzle keygen --bits 1024 --squarings 1000 -o {} --quiet",
        &[&puzzle],
    ));
    let crt = d.join("p.crt");
    hg(&argv(
        "puzzle certify -k {} --ca-key {} --ca-cert {} -o {} --passphrase-file {} --quiet",
        &[&d.join("p.key"), &ca_key, &d.join("ca.crt"), &crt, &pass],
    ));
    openssl(&argv("verify -CAfile {} {}", &[&d.join("ca.crt"), &crt]));

    // Keys hourglass cannot encrypt: the passphrase is refused, not ignored.
    let refused: Vec<(Vec<String>, std::path::PathBuf)> = vec![
        (
            argv(
                "puzzle keygen --bits 1024 --squarings 1000 -o {} --passphrase-file {}",
                &[&d.join("q"), &pass],
            ),
            d.join("q.key"),
        ),
        (
            argv(
                "submit new-set --durations 1s --rate 1000 -o {} --passphrase-file {}",
                &[&d.join("set"), &pass],
            ),
            d.join("set"),
        ),
        (
            argv(
                "dkg init --parties 3 -o {} --passphrase-file {}",
                &[&d.join("cluster"), &pass],
            ),
            d.join("cluster"),
        ),
        (
            argv(
                "serve --data {} --listen 127.0.0.1:0 --passphrase-file {}",
                &[&d.join("srv"), &pass],
            ),
            d.join("srv"),
        ),
    ];
    for (args, output) in &refused {
        let stderr = hg_fail(2, args);
        assert!(
            stderr.contains("cannot be encrypted") && stderr.contains("--encrypt"),
            "{args:?}: {stderr}"
        );
        assert!(!output.exists(), "{args:?} wrote {}", output.display());
    }
}

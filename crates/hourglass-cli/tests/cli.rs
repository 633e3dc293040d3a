//! Command-line scenarios for `hourglass rsa ...`: help texts, malformed inputs, atomic and
//! permission-correct outputs, standard input and output, entropy files, the insecure-size
//! guard, `inspect`, `verify` exit codes, and the hex and JSON key formats.

mod common;

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use common::*;

const MSG: &[u8] = b"a short secret, such as a 32-byte symmetric key";

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o777
}

/// No temporary files (hidden names, as atomic writers use) were left in `dir`.
fn assert_no_temporaries(dir: &Path) {
    let leftovers: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(
        leftovers.is_empty(),
        "temporary files left behind: {leftovers:?}"
    );
}

fn inspect_json(key: &Path) -> serde_json::Value {
    let out = hg(&argv("rsa inspect -i {} --json", &[key]));
    serde_json::from_slice(&out.stdout).expect("inspect --json prints JSON")
}

#[test]
fn help_of_every_rsa_subcommand_shows_an_example() {
    for sub in [
        "keygen", "pubkey", "encrypt", "decrypt", "sign", "verify", "inspect",
    ] {
        let out = hg(&["rsa", sub, "--help"]);
        let help = String::from_utf8(out.stdout).unwrap();
        assert!(
            help.contains("Example"),
            "`hourglass rsa {sub} --help` has no example:\n{help}"
        );
        assert!(
            help.contains(&format!("hourglass rsa {sub} ")),
            "`hourglass rsa {sub} --help` example does not show the command:\n{help}"
        );
    }
    let out = hg(&["rsa", "--help"]);
    let help = String::from_utf8(out.stdout).unwrap();
    for sub in [
        "keygen", "pubkey", "encrypt", "decrypt", "sign", "verify", "inspect",
    ] {
        assert!(
            help.contains(sub),
            "`hourglass rsa --help` does not list {sub}"
        );
    }
}

#[test]
fn malformed_key_files_are_clear_errors() {
    let dir = tempdir();
    let d = dir.path();
    let (key, public) = keygen(d, "good", "crt", 2048, &[]);
    let msg = file(d, "msg.txt", MSG);
    let ct = d.join("ct.bin");
    hg(&argv(
        "rsa encrypt -k {} -i {} -o {}",
        &[&public, &msg, &ct],
    ));

    let pem = String::from_utf8(read(&key)).unwrap();
    let lines: Vec<&str> = pem.lines().collect();
    let mut missing_line = lines.clone();
    missing_line.remove(lines.len() / 2);
    let seed = "hourglass tests: good crt 2048"; // the seed keygen() used for good.pem
    let (json_key, _) = keygen_seeded(d, "good-json", seed, "crt", 2048, &["--format", "json"]);
    let mut json: serde_json::Value = serde_json::from_slice(&read(&json_key)).unwrap();
    let mut wrong_kind = json.clone();
    wrong_kind["type"] = "x509-certificate".into();
    json["n"] = 12345.into(); // a number where a hex string belongs
    let (hex_key, _) = keygen_seeded(d, "good-hex", seed, "crt", 2048, &["--format", "hex"]);
    let hex_text = String::from_utf8(read(&hex_key)).unwrap();
    let d_line = hex_text.lines().find(|l| l.starts_with("d = ")).unwrap();
    let last = d_line.chars().last().unwrap();
    let bumped = if last == '0' { '2' } else { '0' };
    let inconsistent =
        hex_text.replace(d_line, &format!("{}{bumped}", &d_line[..d_line.len() - 1]));

    let bad: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated.pem",
            pem.as_bytes()[..pem.len() / 2].to_vec(),
            "PEM",
        ),
        ("missing-line.pem", missing_line.join("\n").into_bytes(), ""),
        (
            "garbage.bin",
            (0u8..=255).rev().cycle().take(700).collect(),
            "",
        ),
        ("garbage.txt", b"this is not a key\n".to_vec(), ""),
        ("empty.pem", Vec::new(), "empty"),
        (
            "wrong-type.json",
            serde_json::to_vec(&wrong_kind).unwrap(),
            "type",
        ),
        (
            "wrong-field-type.json",
            serde_json::to_vec(&json).unwrap(),
            "JSON",
        ),
        ("inconsistent.hex", inconsistent.into_bytes(), "invalid key"),
    ];
    for (name, bytes, says) in &bad {
        let path = file(d, name, bytes);
        let out = d.join(format!("{name}.out"));
        let stderr = hg_fail(2, &argv("rsa inspect -i {}", &[&path]));
        assert!(
            stderr.contains(name),
            "{name}: the error does not name the file:\n{stderr}"
        );
        assert!(
            stderr.contains(says),
            "{name}: expected '{says}' in:\n{stderr}"
        );
        hg_fail(
            2,
            &argv("rsa decrypt -k {} -i {} -o {}", &[&path, &ct, &out]),
        );
        hg_fail(
            2,
            &argv("rsa encrypt -k {} -i {} -o {}", &[&path, &msg, &out]),
        );
        hg_fail(2, &argv("rsa sign -k {} -i {} -s {}", &[&path, &msg, &out]));
        hg_fail(2, &argv("rsa pubkey -i {} -o {}", &[&path, &out]));
        assert!(
            !out.exists(),
            "{name}: a failed command wrote {}",
            out.display()
        );
    }

    // A public key where a private one is needed.
    let out = d.join("plain.txt");
    let stderr = hg_fail(
        2,
        &argv("rsa decrypt -k {} -i {} -o {}", &[&public, &ct, &out]),
    );
    assert!(stderr.contains("public key"), "{stderr}");
    hg_fail(
        2,
        &argv("rsa sign -k {} -i {} -s {}", &[&public, &msg, &out]),
    );
    assert!(!out.exists());

    // A missing key file.
    let stderr = hg_fail(2, &argv("rsa inspect -i {}", &[&d.join("nonexistent.pem")]));
    assert!(stderr.contains("nonexistent.pem"), "{stderr}");
    assert_no_temporaries(d);
}

#[test]
fn failed_commands_leave_no_output_behind() {
    let dir = tempdir();
    let d = dir.path();
    let (key, public) = keygen(d, "k", "rebalanced", 2048, &[]);
    let msg = file(d, "msg.txt", MSG);
    let ct = d.join("ct.bin");
    hg(&argv(
        "rsa encrypt -k {} -i {} -o {}",
        &[&public, &msg, &ct],
    ));

    // Decryption of a tampered ciphertext: no file, and an existing file is left untouched.
    let tampered = flipped(&ct, d, "ct.bad", 1000);
    let out = d.join("plain.txt");
    let stderr = hg_fail(
        2,
        &argv("rsa decrypt -k {} -i {} -o {}", &[&key, &tampered, &out]),
    );
    assert!(stderr.contains("decryption failed"), "{stderr}");
    assert!(!out.exists());
    let existing = file(d, "existing.txt", b"previous contents");
    hg_fail(
        2,
        &argv(
            "rsa decrypt -k {} -i {} -o {}",
            &[&key, &tampered, &existing],
        ),
    );
    assert_eq!(read(&existing), b"previous contents");
    // The wrong OAEP hash is a decryption failure too.
    hg_fail(
        2,
        &argv(
            "rsa decrypt -k {} -i {} -o {} --hash sha1",
            &[&key, &ct, &out],
        ),
    );
    assert!(!out.exists());

    // Key generation refused as insecure writes neither the key nor the public key.
    let (k2, p2) = (d.join("paper.pem"), d.join("paper.pub.pem"));
    let refuse = "rsa keygen --variant rebalanced --bits 1024 --dp-bits 160 -o {} --pubout {}";
    hg_fail(2, &argv(refuse, &[&k2, &p2]));
    assert!(!k2.exists() && !p2.exists());
    hg_fail(2, &argv("rsa keygen --bits 512 -o {} --seed x", &[&k2]));
    assert!(!k2.exists());
    // Bad usage: exit status 2, nothing written.
    let usage = hg_run(&argv(
        "rsa keygen --variant crt --dp-bits 300 -o {}",
        &[&k2],
    ));
    assert_eq!(usage.status.code(), Some(2));
    assert!(!k2.exists());

    // A message too long for OAEP.
    let long = file(d, "long.txt", &[7u8; 300]);
    let ct_out = d.join("long.ct");
    let stderr = hg_fail(
        2,
        &argv("rsa encrypt -k {} -i {} -o {}", &[&public, &long, &ct_out]),
    );
    assert!(stderr.contains("too long"), "{stderr}");
    assert!(!ct_out.exists());

    // Output into a directory that does not exist.
    let nowhere = d.join("no/such/dir/key.pem");
    let stderr = hg_fail(
        2,
        &argv("rsa keygen --bits 2048 --seed x -o {}", &[&nowhere]),
    );
    assert!(stderr.contains("no/such/dir/key.pem"), "{stderr}");
    assert_no_temporaries(d);
}

#[test]
fn private_files_are_0600_and_public_files_0644() {
    let dir = tempdir();
    let d = dir.path();
    // An existing world-readable file is refused; with --force it is replaced by a private
    // one, not reused.
    let key = file(d, "k.pem", b"old");
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let public = d.join("k.pub.pem");
    let err = hg_fail(
        2,
        &argv("rsa keygen --bits 2048 --seed modes -o {}", &[&key]),
    );
    assert!(
        err.contains("already exists") && err.contains("--force"),
        "{err}"
    );
    assert_eq!(read(&key), b"old");
    hg(&argv(
        "rsa keygen --bits 2048 --seed modes --force -o {} --pubout {}",
        &[&key, &public],
    ));
    assert_eq!(mode(&key), 0o600, "private key");
    assert_eq!(mode(&public), 0o644, "public key from --pubout");

    let public2 = d.join("k2.pub.pem");
    hg(&argv("rsa pubkey -i {} -o {}", &[&key, &public2]));
    assert_eq!(mode(&public2), 0o644, "public key from pubkey");

    let msg = file(d, "msg.txt", MSG);
    let (ct, plain, sig) = (d.join("ct.bin"), d.join("plain.txt"), d.join("msg.sig"));
    hg(&argv(
        "rsa encrypt -k {} -i {} -o {}",
        &[&public, &msg, &ct],
    ));
    hg(&argv("rsa decrypt -k {} -i {} -o {}", &[&key, &ct, &plain]));
    hg(&argv("rsa sign -k {} -i {} -s {}", &[&key, &msg, &sig]));
    assert_eq!(mode(&ct), 0o644, "ciphertext");
    assert_eq!(mode(&plain), 0o600, "decrypted plaintext");
    assert_eq!(mode(&sig), 0o644, "signature");
    assert_eq!(read(&plain), MSG);

    for format in ["hex", "json", "der", "pkcs1"] {
        let (k, p) = (d.join(format!("k.{format}")), d.join(format!("p.{format}")));
        let template =
            format!("rsa keygen --bits 2048 --seed modes --format {format} -o {{}} --pubout {{}}");
        hg(&argv(&template, &[&k, &p]));
        assert_eq!((mode(&k), mode(&p)), (0o600, 0o644), "{format}");
    }
    assert_no_temporaries(d);
}

#[test]
fn dash_means_standard_input_and_output() {
    let dir = tempdir();
    let d = dir.path();
    let out = hourglass()
        .args(argv(
            "rsa keygen --variant scheme-b --bits 2048 --seed stdio -o -",
            &[],
        ))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.starts_with(b"-----BEGIN PRIVATE KEY-----\n"));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--seed"),
        "the --seed warning goes to stderr"
    );
    let key = file(d, "key.pem", &out.stdout);

    let public = hourglass()
        .args(argv("rsa pubkey -i - -o -", &[]))
        .write_stdin(read(&key))
        .output()
        .unwrap();
    assert!(public.status.success());
    assert!(public.stdout.starts_with(b"-----BEGIN PUBLIC KEY-----\n"));
    let pub_path = file(d, "pub.pem", &public.stdout);
    let reference = d.join("pub-ref.pem");
    hg(&argv("rsa pubkey -i {} -o {}", &[&key, &reference]));
    assert_eq!(read(&reference), public.stdout);

    let ct = hourglass()
        .args(argv("rsa encrypt -k {} -i - -o -", &[&pub_path]))
        .write_stdin(MSG)
        .output()
        .unwrap();
    assert!(ct.status.success());
    assert_eq!(ct.stdout.len(), 256);
    let plain = hourglass()
        .args(argv("rsa decrypt -k {} -i - -o -", &[&key]))
        .write_stdin(ct.stdout.clone())
        .output()
        .unwrap();
    assert!(plain.status.success());
    assert_eq!(plain.stdout, MSG);

    let sig = hourglass()
        .args(argv("rsa sign -k {} -i - -s -", &[&key]))
        .write_stdin(MSG)
        .output()
        .unwrap();
    assert!(sig.status.success());
    assert_eq!(sig.stdout.len(), 256);
    let msg = file(d, "msg.txt", MSG);
    let sig_path = file(d, "msg.sig", &sig.stdout);
    hourglass()
        .args(argv("rsa verify -k {} -i {} -s -", &[&pub_path, &msg]))
        .write_stdin(sig.stdout.clone())
        .assert()
        .success();
    hourglass()
        .args(argv("rsa verify -k {} -i - -s {}", &[&pub_path, &sig_path]))
        .write_stdin(MSG)
        .assert()
        .success();
    hourglass()
        .args(argv("rsa verify -k {} -i - -s {}", &[&pub_path, &sig_path]))
        .write_stdin(&b"another message"[..])
        .assert()
        .code(1);
    // A key read from standard input.
    hourglass()
        .args(argv("rsa inspect -i -", &[]))
        .write_stdin(read(&key))
        .assert()
        .success()
        .stdout(predicates::str::contains("short-e"));
}

#[test]
fn entropy_files_must_be_large_enough_and_are_deterministic() {
    let dir = tempdir();
    let d = dir.path();
    let short = file(d, "short.bin", &[0x5a; 64]);
    let out = d.join("short.pem");
    let stderr = hg_fail(
        2,
        &argv("rsa keygen --bits 2048 --entropy {} -o {}", &[&short, &out]),
    );
    assert!(stderr.contains("ran out"), "{stderr}");
    assert!(stderr.contains("short.bin"), "{stderr}");
    assert!(
        stderr.contains("hourglass: hint: the entropy file ran out"),
        "{stderr}"
    );
    assert!(!out.exists());

    let mut random = vec![0u8; 1 << 20];
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(&mut random)
        .unwrap();
    let pool = file(d, "pool.bin", &random);
    let copy = file(d, "pool-copy.bin", &random);
    let (a, b) = (d.join("a.pem"), d.join("b.pem"));
    hg(&argv(
        "rsa keygen --bits 2048 --entropy {} -o {}",
        &[&pool, &a],
    ));
    hg(&argv(
        "rsa keygen --bits 2048 --entropy {} -o {}",
        &[&copy, &b],
    ));
    assert_eq!(read(&a), read(&b), "the same entropy gives the same key");
    random[0] ^= 1;
    let other = file(d, "pool-other.bin", &random);
    let c = d.join("c.pem");
    hg(&argv(
        "rsa keygen --bits 2048 --entropy {} -o {}",
        &[&other, &c],
    ));
    assert_ne!(
        read(&a),
        read(&c),
        "different entropy gives a different key"
    );
    assert_eq!(inspect_json(&a)["verdict"], "info");

    // --entropy and --seed exclude each other; a missing file is an error.
    let usage = hg_run(&argv(
        "rsa keygen --entropy {} --seed x -o {}",
        &[&pool, &c],
    ));
    assert_eq!(usage.status.code(), Some(2));
    let stderr = hg_fail(
        2,
        &argv(
            "rsa keygen --bits 2048 --entropy {} -o {}",
            &[&d.join("none.bin"), &out],
        ),
    );
    assert!(stderr.contains("none.bin"), "{stderr}");
    assert!(!out.exists());
}

#[test]
fn paper_sizes_need_allow_insecure_and_inspect_says_broken() {
    let dir = tempdir();
    let d = dir.path();
    let key = d.join("paper.pem");
    let paper = "rsa keygen --variant rebalanced --bits 1024 --dp-bits 160 --seed paper -o {}";
    let stderr = hg_fail(2, &argv(paper, &[&key]));
    assert!(stderr.contains("insecure"), "{stderr}");
    assert!(
        stderr.contains("--allow-insecure"),
        "the refusal should name the override:\n{stderr}"
    );
    assert!(!key.exists());

    let out = hg(&argv(&format!("{paper} --allow-insecure"), &[&key]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("INSECURE"), "{stderr}");
    assert!(
        stderr.contains("d_p of 160 bits"),
        "the warning should explain why:\n{stderr}"
    );

    let report = inspect_json(&key);
    assert_eq!(report["verdict"], "broken");
    assert_eq!(report["bits"], 1024);
    assert_eq!(report["crt_exponent_bits"], serde_json::json!([160, 160]));
    assert!(
        report["shape"].as_str().unwrap().contains("rebalanced"),
        "{report}"
    );
    let findings = report["findings"].as_array().unwrap();
    assert!(
        findings.iter().any(|f| f["severity"] == "broken"),
        "{report}"
    );
    for level in ["broken", "weak"] {
        let stderr = hg_fail(2, &["rsa", "inspect", "-i", s(&key), "--fail-on", level]);
        assert!(stderr.contains("broken"), "{stderr}");
    }
    hg(&argv("rsa inspect -i {}", &[&key]));
    // The public half alone is only weak (1024 bits): the small d_p is invisible without p.
    let public = d.join("paper.pub.pem");
    hg(&argv("rsa pubkey -i {} -o {}", &[&key, &public]));
    assert_eq!(inspect_json(&public)["verdict"], "weak");

    // Scheme B at the paper's sizes is refused too; the safe default passes --fail-on weak.
    let b = d.join("b.pem");
    let stderr = hg_fail(
        2,
        &argv(
            "rsa keygen --variant scheme-b --bits 1024 --e-bits 512 --dp-bits 198 --seed b -o {}",
            &[&b],
        ),
    );
    assert!(stderr.contains("insecure"), "{stderr}");
    assert!(!b.exists());
    hg(&argv(
        "rsa keygen --variant scheme-b --bits 2048 --seed b -o {}",
        &[&b],
    ));
    hg(&argv("rsa inspect -i {} --fail-on weak", &[&b]));
}

#[test]
fn verify_exits_0_for_good_and_1_for_tampered() {
    let dir = tempdir();
    let d = dir.path();
    let (key, public) = keygen(d, "v", "crt", 2048, &[]);
    let (_, other_public) = keygen(d, "w", "standard", 2048, &[]);
    let msg = file(d, "paper.txt", b"the paper, version 1\n");
    for extra in ["", "--pkcs1v15", "--hash sha512"] {
        let sig = d.join("paper.sig");
        hg(&argv(
            &format!("rsa sign -k {{}} -i {{}} -s {{}} --force {extra}"),
            &[&key, &msg, &sig],
        ));
        let verify = |k: &Path, m: &Path, sg: &Path| {
            hg_run(&argv(
                &format!("rsa verify -k {{}} -i {{}} -s {{}} {extra}"),
                &[k, m, sg],
            ))
        };
        let ok = verify(&public, &msg, &sig);
        assert_eq!(ok.status.code(), Some(0), "{extra:?}");
        assert!(String::from_utf8_lossy(&ok.stderr).contains("signature OK"));
        // The private key file works for verification too.
        assert_eq!(verify(&key, &msg, &sig).status.code(), Some(0));

        let tampered_file = file(d, "paper2.txt", b"the paper, version 2\n");
        let appended = file(d, "paper3.txt", b"the paper, version 1\n\n");
        let tampered_sig = flipped(&sig, d, "paper.sig.bad", 77);
        for (k, m, sg) in [
            (&public, &tampered_file, &sig),
            (&public, &appended, &sig),
            (&public, &msg, &tampered_sig),
            (&other_public, &msg, &sig),
        ] {
            let out = verify(k, m, sg);
            assert_eq!(out.status.code(), Some(1), "{extra:?} {}", m.display());
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(stderr.contains("hourglass: invalid signature"), "{stderr}");
            assert!(
                !stderr.contains("error"),
                "a negative verdict is not an error: {stderr}"
            );
        }
        // A truncated signature is rejected, not misread.
        let short = file(d, "short.sig", &read(&sig)[..100]);
        assert_eq!(verify(&public, &msg, &short).status.code(), Some(1));
    }
}

#[test]
fn hex_and_json_formats_round_trip() {
    let dir = tempdir();
    let d = dir.path();
    let seed = "formats";
    let mut keys = Vec::new();
    for format in ["pem", "hex", "json", "der", "pkcs1"] {
        let (k, p) = (
            d.join(format!("key.{format}")),
            d.join(format!("pub.{format}")),
        );
        let template = format!(
            "rsa keygen --variant rebalanced --bits 2048 --seed {seed} --format {format} \
             -o {{}} --pubout {{}}"
        );
        hg(&argv(&template, &[&k, &p]));
        keys.push((format, k, p));
    }
    let hex_key = String::from_utf8(read(&d.join("key.hex"))).unwrap();
    assert!(hex_key.contains("variant = rebalanced"), "{hex_key}");
    for field in ["n", "e", "d", "p", "q", "dp", "dq", "qinv"] {
        assert!(
            hex_key
                .lines()
                .any(|l| l.starts_with(&format!("{field} = "))),
            "hex key lacks {field}"
        );
    }
    let json_key: serde_json::Value = serde_json::from_slice(&read(&d.join("key.json"))).unwrap();
    assert_eq!(json_key["type"], "hourglass-rsa-private-key");
    assert_eq!(json_key["variant"], "rebalanced");
    assert_eq!(json_key["bits"], 2048);
    let json_pub: serde_json::Value = serde_json::from_slice(&read(&d.join("pub.json"))).unwrap();
    assert_eq!(json_pub["type"], "hourglass-rsa-public-key");
    assert_eq!(json_pub["n"], json_key["n"]);
    assert_eq!(json_pub["e"], json_key["e"]);
    assert!(hex_key.contains(&format!("n = {}\n", json_key["n"].as_str().unwrap())));

    // Every private and public form yields the same public key in every output format.
    let reference = d.join("pub.pem");
    let fingerprint = inspect_json(&reference)["fingerprint"].clone();
    for (format, k, p) in &keys {
        for src in [k, p] {
            for (out_format, expected) in [
                ("pem", "pub.pem"),
                ("hex", "pub.hex"),
                ("json", "pub.json"),
                ("der", "pub.der"),
            ] {
                let out = d.join(format!("conv-{format}-{out_format}"));
                let template = format!("rsa pubkey -i {{}} -o {{}} --format {out_format} --force");
                hg(&argv(&template, &[src, &out]));
                assert_eq!(
                    read(&out),
                    read(&d.join(expected)),
                    "{} -> {out_format}",
                    src.display()
                );
            }
            let report = inspect_json(src);
            assert_eq!(report["fingerprint"], fingerprint, "{}", src.display());
        }
        let report = inspect_json(k);
        assert_eq!(report["kind"], "private");
        let recorded = if matches!(*format, "hex" | "json") {
            serde_json::json!("rebalanced")
        } else {
            serde_json::Value::Null
        };
        assert_eq!(report["recorded_variant"], recorded, "{format}");
        assert_eq!(
            report["crt_exponent_bits"],
            serde_json::json!([320, 320]),
            "{format}"
        );
    }

    // Keys in different formats work together.
    let msg = file(d, "msg.txt", MSG);
    let (ct, plain, sig) = (d.join("ct"), d.join("plain"), d.join("sig"));
    hg(&argv(
        "rsa encrypt -k {} -i {} -o {}",
        &[&d.join("pub.json"), &msg, &ct],
    ));
    hg(&argv(
        "rsa decrypt -k {} -i {} -o {}",
        &[&d.join("key.hex"), &ct, &plain],
    ));
    assert_eq!(read(&plain), MSG);
    hg(&argv(
        "rsa sign -k {} -i {} -s {}",
        &[&d.join("key.json"), &msg, &sig],
    ));
    hg(&argv(
        "rsa verify -k {} -i {} -s {}",
        &[&d.join("pub.hex"), &msg, &sig],
    ));
    hg(&argv(
        "rsa verify -k {} -i {} -s {}",
        &[&d.join("pub.der"), &msg, &sig],
    ));
}

#[test]
fn pipes_and_devices_are_written_in_place() {
    use std::os::unix::fs::FileTypeExt;
    let dir = tempdir();
    let d = dir.path();
    let fifo = d.join("pipe");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo (coreutils)");
    assert!(made.success());
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    hg(&argv("rsa keygen --bits 2048 --seed fifo -o {}", &[&fifo]));
    // Renaming a temporary file over the target would have replaced the pipe (or, for
    // `-o /dev/null` as root, the device node) with a regular file.
    let kind = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(
        kind.is_fifo(),
        "the named pipe was replaced by a regular file"
    );
    let key = reader.join().unwrap();
    assert!(key.starts_with(b"-----BEGIN PRIVATE KEY-----\n"));
    let key = file(d, "key.pem", &key);
    hg(&argv("rsa inspect -i {}", &[&key]));
}

#[test]
fn a_planted_symlink_does_not_redirect_a_secret_output() {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let dir = tempdir();
    let d = dir.path();
    let (key, public) = keygen(d, "k", "crt", 2048, &[]);
    let msg = file(d, "msg.txt", MSG);
    let ct = d.join("ct.bin");
    hg(&argv(
        "rsa encrypt -k {} -i {} -o {}",
        &[&public, &msg, &ct],
    ));

    // Another user of a shared directory plants links at the names an atomic writer might use
    // for its temporary file (hidden, derived from the output name and the process id), aimed
    // at a file they can read. hourglass must not write the plaintext through them.
    let victim = file(d, "victim.txt", b"untouched");
    let out = d.join("plain.txt");
    let mut child = Command::new(env!("CARGO_BIN_EXE_hourglass"))
        .env("HOURGLASS_STATE_DIR", common::state_dir())
        .args(argv("rsa decrypt -k {} -i - -o {}", &[&key, &out]))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    for name in [format!(".plain.txt.{pid}.tmp"), format!(".plain.txt.{pid}")] {
        std::os::unix::fs::symlink(&victim, d.join(name)).unwrap();
    }
    child.stdin.take().unwrap().write_all(&read(&ct)).unwrap();
    let result = child.wait_with_output().unwrap();
    assert_eq!(
        read(&victim),
        b"untouched",
        "the plaintext was written through a planted symlink"
    );
    if result.status.success() {
        assert_eq!(read(&out), MSG);
        assert_eq!(mode(&out), 0o600);
        assert!(!std::fs::symlink_metadata(&out)
            .unwrap()
            .file_type()
            .is_symlink());
    } else {
        assert!(!out.exists());
    }
}

/// Completion scripts for the shells users have, and a man page per subcommand.
#[test]
fn completions_and_man_pages() {
    for (shell, marker) in [
        ("bash", "_hourglass()"),
        ("zsh", "#compdef hourglass"),
        ("fish", "complete -c hourglass"),
    ] {
        let out = common::hg(&["completions", shell]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains(marker),
            "{shell}: {}",
            &text[..text.len().min(200)]
        );
        assert!(
            text.contains("verify-signature") && text.contains("new-set"),
            "{shell}"
        );
    }
    let out = common::hg_run(&["completions", "tcsh"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("possible values"));
    let dir = common::tempdir();
    let man = dir.path().join("man1");
    common::hg(&["man", "-o", common::s(&man)]);
    let page = std::fs::read_to_string(man.join("hourglass-submit-verify.1")).unwrap();
    assert!(
        page.starts_with(".ie") || page.contains(".TH"),
        "{}",
        &page[..page.len().min(200)]
    );
    assert!(page.contains("public"));
    assert!(man.join("hourglass.1").exists());
}

/// A closed standard output (`hourglass ... | head`) ends the process quietly: no panic, no
/// error message.
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::io::Read;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_hourglass"))
        .env("HOURGLASS_STATE_DIR", common::state_dir())
        .args(["completions", "bash"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap(); // then the pipe closes
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!err.contains("panicked") && err.trim().is_empty(), "{err}");
    assert_ne!(out.status.code(), Some(101));
}

/// `--version` says what was built: version, commit, features, and the squaring kernel chosen
/// for this CPU.
#[test]
fn version_names_commit_features_and_kernel() {
    let out = common::hg(&["--version"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.starts_with(&format!("hourglass {}", env!("CARGO_PKG_VERSION"))),
        "{text}"
    );
    for part in [
        "commit ",
        "features: ",
        "squaring kernel for 2048-bit moduli on this CPU: ",
    ] {
        assert!(text.contains(part), "{part} missing in {text}");
    }
    let kernel = text.lines().last().unwrap_or_default();
    assert!(
        ["portable", "x86-64 adx", "x86-64 avx512-ifma"]
            .iter()
            .any(|k| kernel.ends_with(k)),
        "{kernel}"
    );
}

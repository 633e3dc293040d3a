//! RFC 3161 timestamps against OpenSSL, both ways: OpenSSL's `ts` as the client and verifier
//! of our TSA's replies, and OpenSSL's TSA (`openssl ts -reply`) as the authority whose tokens
//! we verify; then the refusals: rejected queries with their failInfo, tokens for other data,
//! foreign CAs, altered tokens, weak imprints and replies without a token.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hourglass_arith::entropy::SeededEntropy;
use hourglass_rsa::{HashAlg, KeyGenOptions, PrivateKey, Variant};
use hourglass_timestamp::path::PathProblem;
use hourglass_timestamp::{
    token_of, verify_token, Evidence, PolicyId, Query, TimestampError, Tsa, TsaAnchor,
    TsaCertificate, TsaKey, DEFAULT_POLICY, MAX_QUERY_BYTES,
};
use hourglass_x509::{CaCertificate, CertificateOptions, ValidityPeriod};

fn rsa_key(seed: &str, bits: u32) -> PrivateKey {
    KeyGenOptions::new(bits, Variant::Crt)
        .generate(&mut SeededEntropy::new(seed.as_bytes()))
        .unwrap()
}

/// Our TSA: a CA and a TSA certificate it issued, and their PEM files for OpenSSL.
struct Ours {
    tsa: Tsa,
    ca: CaCertificate,
    dir: tempfile::TempDir,
}

impl Ours {
    fn ca_pem(&self) -> PathBuf {
        self.dir.path().join("tsa-ca.pem")
    }

    fn tsa_pem(&self) -> PathBuf {
        self.dir.path().join("tsa.pem")
    }
}

fn ours() -> &'static Ours {
    static OURS: OnceLock<Ours> = OnceLock::new();
    OURS.get_or_init(|| {
        let mut rng = SeededEntropy::new(b"timestamp tests: our TSA");
        let ca_key = rsa_key("timestamp tests: CA", 2048);
        let ca = CaCertificate::self_signed(
            &ca_key,
            &CertificateOptions::days("Test TSA CA", 3650),
            &mut rng,
        )
        .unwrap();
        let key = TsaKey::Rsa(rsa_key("timestamp tests: TSA", 2048));
        let cert = TsaCertificate::issue(
            key.spki().unwrap(),
            &ca,
            &ca_key,
            &CertificateOptions::days("Test TSA", 3650),
            &mut rng,
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tsa-ca.pem"), ca.to_pem()).unwrap();
        std::fs::write(dir.path().join("tsa.pem"), cert.to_pem()).unwrap();
        let tsa = Tsa::new(
            key,
            cert,
            vec![ca.certificate().clone()],
            PolicyId::hourglass(),
        )
        .unwrap();
        Ours { tsa, ca, dir }
    })
}

fn openssl(args: &[&str], dir: &Path) -> (bool, String) {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs (scripts/setup-debian.sh installs it)");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

fn now() -> SystemTime {
    UNIX_EPOCH
        + Duration::from_secs(
            SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .unwrap()
                .as_secs(),
        )
}

fn rng() -> SeededEntropy {
    SeededEntropy::new(b"timestamp tests")
}

#[test]
fn openssl_verifies_the_tokens_our_tsa_grants() {
    let ours = ours();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), b"a sealed bundle, say").unwrap();
    for hash in ["-sha256", "-sha384", "-sha512"] {
        let (ok, out) = openssl(
            &[
                "ts", "-query", "-data", "data", hash, "-cert", "-out", "q.tsq",
            ],
            dir.path(),
        );
        assert!(ok, "{out}");
        let query = std::fs::read(dir.path().join("q.tsq")).unwrap();
        let reply = ours.tsa.reply(&query, &[0x12, 0x34], now(), &mut rng());
        std::fs::write(dir.path().join("r.tsr"), &reply).unwrap();
        let ca = ours.ca_pem();
        let tsa = ours.tsa_pem();
        let (ca, tsa) = (ca.to_str().unwrap(), tsa.to_str().unwrap());
        for check in [
            &["-data", "data"][..],
            &["-queryfile", "q.tsq"][..], // the nonce, the imprint and the policy asked
        ] {
            let mut args = vec![
                "ts",
                "-verify",
                "-in",
                "r.tsr",
                "-CAfile",
                ca,
                "-untrusted",
                tsa,
            ];
            args.extend_from_slice(check);
            let (ok, out) = openssl(&args, dir.path());
            assert!(
                ok && out.contains("Verification: OK"),
                "{hash} {check:?}: {out}"
            );
        }
        // OpenSSL reads what the token says as we wrote it.
        let (ok, text) = openssl(&["ts", "-reply", "-in", "r.tsr", "-text"], dir.path());
        assert!(ok, "{text}");
        assert!(text.contains("Status: Granted."), "{text}");
        assert!(
            text.contains(&format!("Policy OID: {DEFAULT_POLICY}")),
            "{text}"
        );
        assert!(text.contains("Serial number: 0x1234"), "{text}");
        assert!(text.contains("Accuracy: 0x01 seconds"), "{text}");
        // Another bundle does not verify under it.
        std::fs::write(dir.path().join("other"), b"another bundle").unwrap();
        let (ok, out) = openssl(
            &[
                "ts",
                "-verify",
                "-in",
                "r.tsr",
                "-CAfile",
                ca,
                "-untrusted",
                tsa,
                "-data",
                "other",
            ],
            dir.path(),
        );
        assert!(!ok && !out.contains("Verification: OK"), "{out}");
    }
}

#[test]
fn our_query_is_the_one_openssl_writes() {
    let dir = tempfile::tempdir().unwrap();
    let data = b"the bundle's bytes";
    std::fs::write(dir.path().join("data"), data).unwrap();
    for (flag, hash) in [
        ("-sha256", HashAlg::Sha256),
        ("-sha384", HashAlg::Sha384),
        ("-sha512", HashAlg::Sha512),
    ] {
        let (ok, out) = openssl(
            &[
                "ts",
                "-query",
                "-data",
                "data",
                flag,
                "-cert",
                "-no_nonce",
                "-out",
                "q.tsq",
            ],
            dir.path(),
        );
        assert!(ok, "{out}");
        let theirs = std::fs::read(dir.path().join("q.tsq")).unwrap();
        let mine = Query::for_data(hash, data, false, None, &mut rng()).unwrap();
        assert_eq!(mine.to_der(), theirs.as_slice(), "{flag}");
    }
    // With a nonce, OpenSSL reads ours and finds a 64-bit nonce and the certificate request.
    let q = Query::for_data(HashAlg::Sha256, data, true, None, &mut rng()).unwrap();
    std::fs::write(dir.path().join("n.tsq"), q.to_der()).unwrap();
    let (ok, text) = openssl(&["ts", "-query", "-in", "n.tsq", "-text"], dir.path());
    assert!(ok, "{text}");
    assert!(text.contains("Certificate required: yes"), "{text}");
    assert!(text.contains("Nonce: 0x"), "{text}");
    assert!(q.nonce().map_or(0, <[u8]>::len) >= 8);
}

/// OpenSSL as the TSA: a CA and a TSA certificate made by OpenSSL (critical
/// extendedKeyUsage timeStamping), and `openssl ts -reply` answering.
struct TheirTsa {
    dir: tempfile::TempDir,
}

impl TheirTsa {
    fn new(ess_cert_id_alg: &str, precision_digits: u32) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let run = |args: &[&str]| {
            let (ok, out) = openssl(args, d);
            assert!(ok, "openssl {args:?}: {out}");
        };
        run(&[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.pem",
            "-subj",
            "/CN=OpenSSL Test TSA CA",
            "-days",
            "3650",
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ]);
        run(&[
            "req",
            "-new",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "tsa.key",
            "-out",
            "tsa.csr",
            "-subj",
            "/CN=OpenSSL Test TSA",
        ]);
        std::fs::write(
            d.join("tsa.ext"),
            "extendedKeyUsage=critical,timeStamping\nkeyUsage=critical,digitalSignature,nonRepudiation\n",
        )
        .unwrap();
        run(&[
            "x509",
            "-req",
            "-in",
            "tsa.csr",
            "-CA",
            "ca.pem",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "tsa.pem",
            "-days",
            "365",
            "-extfile",
            "tsa.ext",
        ]);
        std::fs::write(d.join("tsaserial"), "01\n").unwrap();
        std::fs::write(
            d.join("tsa.cnf"),
            format!(
                "[ tsa ]\ndefault_tsa = tsa1\n[ tsa1 ]\nserial = ./tsaserial\ncrypto_device = builtin\n\
                 signer_cert = ./tsa.pem\nsigner_key = ./tsa.key\ncerts = ./ca.pem\nsigner_digest = sha256\n\
                 default_policy = 1.2.3.4.1\nother_policies = 1.2.3.4.5\ndigests = sha1, sha256, sha384, sha512\n\
                 accuracy = secs:1, millisecs:500\nclock_precision_digits = {precision_digits}\nordering = no\n\
                 tsa_name = yes\ness_cert_id_chain = no\ness_cert_id_alg = {ess_cert_id_alg}\n"
            ),
        )
        .unwrap();
        Self { dir }
    }

    /// OpenSSL's reply to `query`.
    fn reply(&self, query: &[u8]) -> Vec<u8> {
        let d = self.dir.path();
        std::fs::write(d.join("q.tsq"), query).unwrap();
        let (ok, out) = openssl(
            &[
                "ts",
                "-reply",
                "-queryfile",
                "q.tsq",
                "-config",
                "tsa.cnf",
                "-out",
                "r.tsr",
            ],
            d,
        );
        assert!(ok, "{out}");
        std::fs::read(d.join("r.tsr")).unwrap()
    }

    fn ca(&self) -> CaCertificate {
        CaCertificate::from_bytes(&std::fs::read(self.dir.path().join("ca.pem")).unwrap()).unwrap()
    }
}

#[test]
fn we_verify_tokens_of_openssl_s_tsa() {
    let data = b"a bundle stamped at somebody else's TSA";
    for ess in ["sha1", "sha256"] {
        let theirs = TheirTsa::new(ess, 0);
        let query = Query::for_data(HashAlg::Sha256, data, true, None, &mut rng()).unwrap();
        let reply = theirs.reply(query.to_der());
        let token = query.token_of_reply(&reply).unwrap();
        let anchors = [TsaAnchor::from(theirs.ca())];
        let v = verify_token(&reply, &[], &anchors).unwrap();
        assert_eq!(v.tsa(), "CN=OpenSSL Test TSA");
        assert_eq!(v.anchor(), "CN=OpenSSL Test TSA CA");
        assert_eq!(v.info().policy(), "1.2.3.4.1");
        assert!(v.info().covers(data));
        assert_eq!(v.info().accuracy_micros(), Some(1_500_000));
        let age = now()
            .duration_since(v.info().gen_time())
            .unwrap_or_default();
        assert!(
            age < Duration::from_secs(120),
            "{ess}: genTime {:?}",
            v.info().gen_time()
        );
        // A bare token verifies the same.
        assert_eq!(
            verify_token(&token, &[], &anchors).unwrap().info(),
            v.info()
        );
        // The evidence for the bundle dates it at the latest time the token proves: genTime
        // (whole seconds here) plus the 1.5 s accuracy, rounded up.
        let e = Evidence::check(data, &[("r.tsr".into(), reply.clone())], &[], &anchors).unwrap();
        let gen = v
            .info()
            .gen_time()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        assert_eq!(e.received_unix(), Some(gen + 2));
        // Under our CA, or for other data, it does not.
        let err = verify_token(&reply, &[], &[TsaAnchor::from(ours().ca.clone())]).unwrap_err();
        assert!(
            matches!(
                err,
                TimestampError::Path {
                    problem: PathProblem::NoPath { .. },
                    ..
                }
            ),
            "{err}"
        );
        assert!(err.is_verdict());
        let err =
            Evidence::check(b"other bytes", &[("r.tsr".into(), reply)], &[], &anchors).unwrap_err();
        assert_eq!(err.name, "r.tsr");
        assert!(
            matches!(*err.error, TimestampError::ImprintMismatch { .. }),
            "{err}"
        );
    }
}

/// OpenSSL's TSA with three digits of precision writes a fractional genTime: the latest time
/// its token proves is that instant plus the 1.5 s accuracy, rounded up to the second.
#[test]
fn a_fractional_gen_time_counts_with_its_accuracy_rounded_up() {
    let theirs = TheirTsa::new("sha256", 3);
    let query = Query::for_data(HashAlg::Sha256, b"x", true, None, &mut rng()).unwrap();
    let reply = theirs.reply(query.to_der());
    let v = verify_token(&reply, &[], &[TsaAnchor::from(theirs.ca())]).unwrap();
    let info = v.info();
    let text = info.gen_time_text();
    let whole = info
        .gen_time_whole()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs();
    // The fraction's digits, as milliseconds (OpenSSL drops trailing zeros, or the fraction).
    let millis: u64 = text.split_once('.').map_or(0, |(_, f)| {
        format!("{:0<3}", f.trim_end_matches('Z'))[..3]
            .parse()
            .unwrap()
    });
    let expected = whole + (millis + 1500).div_ceil(1000);
    assert_eq!(info.latest_unix(), expected, "{text}");
    let printed = humantime::format_rfc3339_seconds(info.gen_time_whole())
        .to_string()
        .replace(['-', ':', 'T'], "");
    assert_eq!(&printed[..14], &text[..14], "{text}");
}

#[test]
fn openssl_reads_our_rejections_and_their_fail_info() {
    let ours = ours();
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), b"data").unwrap();
    let query = |args: &[&str]| {
        let mut a = vec!["ts", "-query", "-data", "data", "-cert", "-out", "q.tsq"];
        a.extend_from_slice(args);
        let (ok, out) = openssl(&a, dir.path());
        assert!(ok, "{out}");
        std::fs::read(dir.path().join("q.tsq")).unwrap()
    };
    let good = query(&["-sha256", "-no_nonce"]);
    // The imprint one byte short, the lengths around it adjusted (a hand-made query).
    let mut short = good.clone();
    let at = short.windows(2).position(|w| w == [0x04, 0x20]).unwrap();
    short[at + 1] = 0x1f;
    short.remove(at + 2);
    short[1] -= 1;
    short[3 + 3] -= 1; // the MessageImprint SEQUENCE (after the version INTEGER 02 01 01)
    let mut huge_nonce = good[..good.len() - 3].to_vec(); // without certReq
    huge_nonce.extend_from_slice(&[0x02, 0x41, 0x01]);
    huge_nonce.extend_from_slice(&[0x5a; 64]);
    huge_nonce[1] += 67 - 3;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "not DER",
            b"not a query".to_vec(),
            "the data submitted has the wrong format",
        ),
        (
            "SHA-1",
            query(&["-sha1"]),
            "unrecognized or unsupported algorithm identifier",
        ),
        (
            "MD5",
            query(&["-md5"]),
            "unrecognized or unsupported algorithm identifier",
        ),
        (
            "short imprint",
            short,
            "the data submitted has the wrong format",
        ),
        (
            "another policy",
            query(&["-sha256", "-tspolicy", "1.2.3.4.5"]),
            "the requested TSA policy is not supported by the TSA",
        ),
        (
            "huge nonce",
            huge_nonce,
            "transaction not permitted or supported",
        ),
        (
            "larger than a query",
            vec![0x30; MAX_QUERY_BYTES + 1],
            "the data submitted has the wrong format",
        ),
    ];
    for (what, q, fail) in cases {
        let reply = ours.tsa.reply(&q, &[1], now(), &mut rng());
        std::fs::write(dir.path().join("r.tsr"), &reply).unwrap();
        let (ok, text) = openssl(&["ts", "-reply", "-in", "r.tsr", "-text"], dir.path());
        assert!(ok, "{what}: {text}");
        assert!(text.contains("Status: Rejected."), "{what}: {text}");
        assert!(
            text.contains(&format!("Failure info: {fail}")),
            "{what}: {text}"
        );
        assert!(
            matches!(token_of(&reply), Err(TimestampError::Refused { .. })),
            "{what}"
        );
    }
    // The same query with a good imprint is granted.
    let reply = ours.tsa.reply(&good, &[1], now(), &mut rng());
    assert!(token_of(&reply).is_ok());
}

#[test]
fn tokens_with_weak_imprints_or_no_token_are_refused() {
    let theirs = TheirTsa::new("sha1", 0);
    let anchors = [TsaAnchor::from(theirs.ca())];
    let dir = theirs.dir.path();
    std::fs::write(dir.join("data"), b"data").unwrap();
    for (flag, alg) in [("-sha1", "SHA-1"), ("-md5", "MD5")] {
        let (ok, out) = openssl(
            &[
                "ts", "-query", "-data", "data", flag, "-cert", "-out", "w.tsq",
            ],
            dir,
        );
        assert!(ok, "{out}");
        let q = std::fs::read(dir.join("w.tsq")).unwrap();
        if flag == "-md5" {
            // OpenSSL's TSA is configured without MD5: it rejects; nothing to verify.
            let reply = theirs.reply(&q);
            assert!(matches!(
                token_of(&reply),
                Err(TimestampError::Refused { .. })
            ));
            continue;
        }
        let reply = theirs.reply(&q);
        let err = verify_token(&reply, &[], &anchors).unwrap_err();
        assert!(
            matches!(err, TimestampError::WeakImprint { alg: a } if a == alg),
            "{err}"
        );
    }
    // Granted, without a token.
    let granted_empty = [0x30, 0x05, 0x30, 0x03, 0x02, 0x01, 0x00];
    assert!(matches!(
        token_of(&granted_empty),
        Err(TimestampError::NoToken)
    ));
    assert!(matches!(
        verify_token(&granted_empty, &[], &anchors),
        Err(TimestampError::NoToken)
    ));
    // No anchor at all is an error, not a verdict.
    assert!(matches!(
        verify_token(&granted_empty, &[], &[]),
        Err(TimestampError::NoAnchor)
    ));
}

#[test]
fn an_altered_token_does_not_verify() {
    let ours = ours();
    // A query without certReq (as `openssl ts -query` writes without -cert): the token holds no
    // certificate, every byte of it is signed or checked; the TSA's certificate is given apart.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("data"), b"bundle").unwrap();
    let (ok, out) = openssl(
        &["ts", "-query", "-data", "data", "-sha256", "-out", "q.tsq"],
        dir.path(),
    );
    assert!(ok, "{out}");
    let query = std::fs::read(dir.path().join("q.tsq")).unwrap();
    let reply = ours.tsa.reply(&query, &[7], now(), &mut rng());
    let token = token_of(&reply).unwrap();
    let anchors = [TsaAnchor::from(ours.ca.clone())];
    let leaf = vec![ours.tsa.certificate().to_der().to_vec()];
    let good = verify_token(&token, &leaf, &anchors).unwrap();
    assert!(good.info().covers(b"bundle"));
    assert!(matches!(
        verify_token(&token, &[], &anchors),
        Err(TimestampError::NoSignerCertificate)
    ));
    // Flip each bit of every byte in turn: every altered token is refused.
    for i in 0..token.len() {
        for bit in 0..8 {
            let mut bad = token.clone();
            bad[i] ^= 1 << bit;
            if let Ok(v) = verify_token(&bad, &leaf, &anchors) {
                panic!(
                    "byte {i} bit {bit} altered, and it verifies: {:?}",
                    v.info()
                );
            }
        }
    }
}

#[test]
fn tsa_certificates_outside_their_validity_at_gen_time_are_refused() {
    let mut rng = rng();
    let ca_key = rsa_key("timestamp tests: CA", 2048);
    let ca = ours().ca.clone();
    let key = rsa_key("timestamp tests: short-lived TSA", 2048);
    let t0 = now();
    let day = Duration::from_secs(86_400);
    for (validity, expired) in [
        (
            ValidityPeriod {
                not_before: t0 - 10 * day,
                not_after: t0 - day,
            },
            true,
        ),
        (
            ValidityPeriod {
                not_before: t0 + day,
                not_after: t0 + 10 * day,
            },
            false,
        ),
    ] {
        let cert = TsaCertificate::issue(
            TsaKey::Rsa(key.clone()).spki().unwrap(),
            &ca,
            &ca_key,
            &CertificateOptions {
                common_name: "Short-lived TSA".into(),
                validity,
            },
            &mut rng,
        )
        .unwrap();
        let tsa = Tsa::new(
            TsaKey::Rsa(key.clone()),
            cert,
            vec![],
            PolicyId::hourglass(),
        )
        .unwrap();
        let q = Query::for_data(HashAlg::Sha256, b"b", false, None, &mut rng).unwrap();
        let reply = tsa.reply(q.to_der(), &[1], t0, &mut rng);
        let err = verify_token(&reply, &[], &[TsaAnchor::from(ca.clone())]).unwrap_err();
        match err {
            TimestampError::Path {
                problem: PathProblem::NotValidAt { expired: e, .. },
                ..
            } => assert_eq!(e, expired),
            other => panic!("{other}"),
        }
    }
}

#[test]
fn the_institution_key_alone_pins_the_chain() {
    let ours = ours();
    let ca_key = rsa_key("timestamp tests: CA", 2048);
    let q = Query::for_data(HashAlg::Sha256, b"b", true, None, &mut rng()).unwrap();
    let reply = ours.tsa.reply(q.to_der(), &[2], now(), &mut rng());
    let by_key = TsaAnchor::Key {
        key: ca_key.public().clone(),
        name: "institution key".into(),
    };
    assert_eq!(
        verify_token(&reply, &[], &[by_key]).unwrap().anchor(),
        "institution key"
    );
    let other = TsaAnchor::Key {
        key: rsa_key("timestamp tests: someone else", 2048)
            .public()
            .clone(),
        name: "someone else".into(),
    };
    assert!(verify_token(&reply, &[], &[other])
        .unwrap_err()
        .is_verdict());
}

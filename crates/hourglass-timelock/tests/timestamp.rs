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
use hourglass_timelock::certificate::{
    CaCertificate, CertificateError, CertificateOptions, TsaAnchor, TsaCertificate, ValidityPeriod,
};
use hourglass_timelock::timestamp::{
    token_of, verify_token, Evidence, PolicyId, Query, TimestampError, TokenInfo, Tsa,
    DEFAULT_POLICY, MAX_QUERY_BYTES,
};

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
        let key = rsa_key("timestamp tests: TSA", 2048);
        let cert = TsaCertificate::issue(
            key.public(),
            &ca,
            &ca_key,
            &CertificateOptions::days("Test TSA", 3650),
            &mut rng,
        )
        .unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("tsa-ca.pem"), ca.to_pem()).unwrap();
        std::fs::write(dir.path().join("tsa.pem"), cert.to_pem()).unwrap();
        let tsa = Tsa::new(key, cert, vec![ca.clone()], PolicyId::hourglass()).unwrap();
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
        assert_eq!(v.tsa, "CN=OpenSSL Test TSA");
        assert_eq!(v.anchor, "CN=OpenSSL Test TSA CA");
        assert_eq!(v.info.policy, "1.2.3.4.1");
        assert!(v.info.covers(data));
        assert_eq!(v.info.accuracy_micros, Some(1_500_000));
        let age = now().duration_since(v.info.gen_time).unwrap_or_default();
        assert!(
            age < Duration::from_secs(120),
            "{ess}: genTime {:?}",
            v.info.gen_time
        );
        // A bare token verifies the same.
        assert_eq!(verify_token(&token, &[], &anchors).unwrap().info, v.info);
        // The evidence for the bundle dates it at genTime.
        let e = Evidence::check(data, &[("r.tsr".into(), reply.clone())], &anchors).unwrap();
        assert_eq!(
            e.received_unix(),
            Some(
                v.info
                    .gen_time
                    .duration_since(UNIX_EPOCH)
                    .unwrap()
                    .as_secs()
            )
        );
        // Under our CA, or for other data, it does not.
        let err = verify_token(&reply, &[], &[TsaAnchor::from(ours().ca.clone())]).unwrap_err();
        assert!(
            matches!(
                err,
                TimestampError::Certificate(CertificateError::NoPathToAnchor { .. })
            ),
            "{err}"
        );
        assert!(err.is_verdict());
        let err =
            Evidence::check(b"other bytes", &[("r.tsr".into(), reply)], &anchors).unwrap_err();
        assert_eq!(err.name, "r.tsr");
        assert!(
            matches!(*err.error, TimestampError::ImprintMismatch { .. }),
            "{err}"
        );
    }
}

#[test]
fn a_fractional_gen_time_is_rounded_up_not_down() {
    let theirs = TheirTsa::new("sha256", 3);
    let query = Query::for_data(HashAlg::Sha256, b"x", true, None, &mut rng()).unwrap();
    let reply = theirs.reply(query.to_der());
    let info = TokenInfo::of_token(&reply).unwrap();
    let v = verify_token(&reply, &[], &[TsaAnchor::from(theirs.ca())]).unwrap();
    if let Some(dot) = info.gen_time_text.find('.') {
        // 20261127101010.123Z: the whole second after.
        let whole = &info.gen_time_text[..dot];
        let secs = v
            .info
            .gen_time
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let printed = humantime::format_rfc3339_seconds(UNIX_EPOCH + Duration::from_secs(secs - 1))
            .to_string()
            .replace(['-', ':', 'T'], "");
        assert_eq!(&printed[..14], whole, "{}", info.gen_time_text);
    }
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
    assert!(good.info.covers(b"bundle"));
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
                panic!("byte {i} bit {bit} altered, and it verifies: {:?}", v.info);
            }
        }
    }
}

#[test]
fn tsa_certificates_outside_their_validity_at_gen_time_are_refused() {
    let mut rng = rng();
    let ca_key = rsa_key("timestamp tests: CA", 2048);
    let ca = ours().ca.clone();
    let key = rsa_key("timestamp tests: short-lived TSA", 1024);
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
            key.public(),
            &ca,
            &ca_key,
            &CertificateOptions {
                common_name: "Short-lived TSA".into(),
                validity,
            },
            &mut rng,
        )
        .unwrap();
        let tsa = Tsa::new(key.clone(), cert, vec![], PolicyId::hourglass()).unwrap();
        let q = Query::for_data(HashAlg::Sha256, b"b", false, None, &mut rng).unwrap();
        let reply = tsa.reply(q.to_der(), &[1], t0, &mut rng);
        let err = verify_token(&reply, &[], &[TsaAnchor::from(ca.clone())]).unwrap_err();
        match err {
            TimestampError::Certificate(CertificateError::Expired { .. }) => assert!(expired),
            TimestampError::Certificate(CertificateError::NotYetValid { .. }) => assert!(!expired),
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
        verify_token(&reply, &[], &[by_key]).unwrap().anchor,
        "institution key"
    );
    let other = TsaAnchor::Key {
        key: rsa_key("timestamp tests: someone else", 1024)
            .public()
            .clone(),
        name: "someone else".into(),
    };
    assert!(verify_token(&reply, &[], &[other])
        .unwrap_err()
        .is_verdict());
}

/// The committed vectors of docs/FORMATS.md section 18: a TSA (1024-bit keys from fixed seeds,
/// fixed validity), its token for a fixed query at a fixed time, and a version 2 receipt with
/// that token. Everything is deterministic (PKCS#1 v1.5 signatures, a seeded PSS salt), so the
/// files are compared byte for byte; `HOURGLASS_WRITE_VECTORS=1` writes them anew.
#[test]
fn the_committed_timestamp_and_receipt_vectors_are_what_this_build_makes() {
    use hourglass_timelock::receipt::{check_receipt, sign_receipt, ReceiptVerdict, Statement};
    let t = |secs: u64| UNIX_EPOCH + Duration::from_secs(secs);
    let institution = rsa_key("vector: institution", 1024);
    let tsa_key = rsa_key("vector: TSA", 1024);
    let mut rng = SeededEntropy::new(b"vector: serials and salt");
    let validity = ValidityPeriod {
        not_before: t(1_767_225_600), // 2026-01-01
        not_after: t(2_082_758_400),  // 2036-01-01
    };
    let ca = CaCertificate::self_signed(
        &institution,
        &CertificateOptions {
            common_name: "Vector TSA CA".into(),
            validity,
        },
        &mut rng,
    )
    .unwrap();
    let cert = TsaCertificate::issue(
        tsa_key.public(),
        &ca,
        &institution,
        &CertificateOptions {
            common_name: "Vector TSA".into(),
            validity,
        },
        &mut rng,
    )
    .unwrap();
    let tsa = Tsa::new(
        tsa_key,
        cert.clone(),
        vec![ca.clone()],
        PolicyId::hourglass(),
    )
    .unwrap();
    let bundle = b"{\"type\": \"hourglass-submission-bundle\"}\n";
    let query = Query::for_digest(
        HashAlg::Sha256,
        &HashAlg::Sha256.digest(bundle),
        Some(vec![0x01, 0x02, 0x03, 0x04]),
        None,
    )
    .unwrap();
    let gen_time = t(1_800_000_000); // 2027-01-15T08:00:00Z
    let token = tsa.stamp(&query, &[0x2a], gen_time, &mut rng).unwrap();
    let statement = Statement {
        institution: String::new(),
        submission: "0123456789abcdef0123456789abcdef".into(),
        set: "Vector set".into(),
        set_sha256: "11".repeat(32),
        document_sha256: "22".repeat(32),
        bundle_sha256: hex::encode(HashAlg::Sha256.digest(bundle)),
        received_unix: 0,
        timestamp_sha256: None,
        log: None,
        verdict: ReceiptVerdict::Valid,
        credited_ms: 3_600_000,
        reason: String::new(),
    };
    let receipt = sign_receipt(&statement, &token, &institution, &mut rng)
        .unwrap()
        .unlogged()
        .unwrap();
    let vectors = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors");
    let files: [(&str, Vec<u8>); 6] = [
        ("tsa-ca.pem", ca.to_pem().into_bytes()),
        ("tsa.pem", cert.to_pem().into_bytes()),
        ("tsa-bundle.json", bundle.to_vec()),
        ("tsa-query.tsq", query.to_der().to_vec()),
        ("tsa-token.der", token.clone()),
        ("receipt-v2.json", receipt.clone().into_bytes()),
    ];
    for (name, bytes) in &files {
        let path = vectors.join(name);
        if std::env::var_os("HOURGLASS_WRITE_VECTORS").is_some() {
            std::fs::write(&path, bytes).unwrap();
        }
        assert_eq!(
            &std::fs::read(&path).unwrap(),
            bytes,
            "{name} differs from this build's"
        );
    }
    // The committed receipt checks, at the token's time, under the institution key alone.
    let checked = check_receipt(receipt.as_bytes(), institution.public(), &[], None).unwrap();
    assert_eq!(checked.statement.received_unix, 1_800_000_000);
    assert!(
        receipt.contains("received: 2027-01-15T08:00:00Z"),
        "{receipt}"
    );
    assert!(
        receipt.contains("predated-to: 2027-01-15T07:00:00Z"),
        "{receipt}"
    );
    // Version 3: the same statement naming a log, entry 0 of a one-entry log whose key (and
    // checkpoint, Ed25519 being deterministic) come from a seed.
    {
        use hourglass_log::checkpoint::{LogPins, SignedCheckpoint};
        use hourglass_log::keys::{KeyRole, SigningKey};
        use hourglass_log::tree::{append, leaf_hash, prove_inclusion, root, HashMemo};
        let log = SigningKey::generate(
            "receipts.example.org/log",
            KeyRole::Log,
            &mut SeededEntropy::new(b"receipt vector log"),
        )
        .unwrap();
        let mut logged = statement.clone();
        logged.log = Some(log.name().to_string());
        let signed = sign_receipt(&logged, &token, &institution, &mut rng).unwrap();
        let mut memo = HashMemo::new();
        append(&mut memo, 0, &[leaf_hash(signed.entry())]).unwrap();
        let cp = SignedCheckpoint::sign(log.name(), 1, root(&memo, 1).unwrap(), &log).unwrap();
        let v3 = signed
            .logged(0, &prove_inclusion(&memo, 1, 0).unwrap(), &cp)
            .unwrap();
        for (name, bytes) in [
            ("receipt-v3.json", v3.clone().into_bytes()),
            (
                "log.pub",
                format!("{}\n", log.verifier().encode()).into_bytes(),
            ),
        ] {
            let path = vectors.join(name);
            if std::env::var_os("HOURGLASS_WRITE_VECTORS").is_some() {
                std::fs::write(&path, &bytes).unwrap();
            }
            assert_eq!(
                std::fs::read(&path).unwrap(),
                bytes,
                "{name} differs from this build's"
            );
        }
        let pins = LogPins::log_only(log.verifier()).unwrap();
        let checked = check_receipt(v3.as_bytes(), institution.public(), &[], Some(&pins)).unwrap();
        assert_eq!(checked.log.unwrap().index, 0);
    }
    // OpenSSL verifies the committed token against the committed CA, for the committed bundle.
    let dir = tempfile::tempdir().unwrap();
    let ok = {
        let (ok, out) = openssl(
            &[
                "ts",
                "-verify",
                "-token_in",
                "-in",
                vectors.join("tsa-token.der").to_str().unwrap(),
                "-data",
                vectors.join("tsa-bundle.json").to_str().unwrap(),
                "-CAfile",
                vectors.join("tsa-ca.pem").to_str().unwrap(),
            ],
            dir.path(),
        );
        ok && out.contains("Verification: OK")
    };
    assert!(ok);
}

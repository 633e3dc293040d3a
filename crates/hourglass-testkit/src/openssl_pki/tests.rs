//! Each shape of hierarchy and token, and OpenSSL's verdict on it both ways.

use super::*;

const DATA: &[u8] = b"a sealed bundle, say";
const OTHER: &[u8] = b"another bundle";

/// A reply of OpenSSL's TSA over `pki` (default options) for DATA, the query asking for the
/// TSA's certificate.
fn stamp(pki: &Pki, options: &TsaOptions) -> Vec<u8> {
    let tsa = Tsa::new(pki, options).expect("the TSA is set up");
    let query = ts_query(DATA, Digest::Sha256, true).expect("openssl ts -query");
    tsa.reply(&query).expect("openssl ts -reply")
}

fn build(spec: &HierarchySpec) -> Pki {
    Pki::build(spec).expect("openssl makes the hierarchy")
}

/// OpenSSL accepts `reply` for DATA and refuses it for OTHER.
fn accepted_for_its_data_only(verify: &TsVerify, reply: &[u8], shape: &str) {
    let (ok, out) = verify.reply(reply, Imprint::Data(DATA));
    assert!(ok, "{shape}: {out}");
    let (ok, out) = verify.reply(reply, Imprint::Data(OTHER));
    assert!(
        !ok && out.contains("message imprint mismatch"),
        "{shape}: {out}"
    );
}

/// OpenSSL refuses `reply` for DATA, saying `why`.
fn refused(verify: &TsVerify, reply: &[u8], why: &str, shape: &str) {
    let (ok, out) = verify.reply(reply, Imprint::Data(DATA));
    assert!(!ok && out.contains(why), "{shape}: expected {why:?}: {out}");
}

#[test]
fn keys_of_every_kind() {
    for kind in [
        KeyKind::Rsa(2048),
        KeyKind::P256,
        KeyKind::P384,
        KeyKind::P521,
        KeyKind::Ed25519,
    ] {
        let key = Key::generate(kind).expect("openssl genpkey");
        let private = std::fs::read_to_string(key.path()).expect("the key is written");
        let public = std::fs::read_to_string(key.public_path()).expect("the public key too");
        assert!(
            private.starts_with("-----BEGIN PRIVATE KEY-----"),
            "{kind:?}"
        );
        assert!(public.starts_with("-----BEGIN PUBLIC KEY-----"), "{kind:?}");
        assert_eq!(key.kind(), kind);
    }
}

#[test]
fn openssl_accepts_rsa_and_ec_tsas_under_rsa_ec_and_ed25519_roots() {
    use KeyKind::*;
    let foreign = build(&HierarchySpec::new(
        CertSpec::root(P256),
        CertSpec::tsa(P256),
    ));
    for (root, tsa, digest) in [
        (Rsa(2048), P256, Digest::Sha256),
        (Rsa(2048), P384, Digest::Sha384),
        (P256, P256, Digest::Sha256),
        (P384, P384, Digest::Sha384),
        (P384, Rsa(2048), Digest::Sha512),
        (P256, P521, Digest::Sha512),
        (Ed25519, P256, Digest::Sha256),
    ] {
        let shape = format!("{tsa:?} TSA under a {root:?} root, {digest:?}");
        let spec = HierarchySpec::new(
            CertSpec::root(root),
            CertSpec::tsa(tsa).signed_with(digest, false),
        );
        let pki = build(&spec);
        let options = TsaOptions {
            signer_digest: digest,
            ..TsaOptions::default()
        };
        let reply = stamp(&pki, &options);
        accepted_for_its_data_only(&pki.ts_verify(), &reply, &shape);
        let other_root = TsVerify::new(foreign.ca_pem());
        refused(
            &other_root,
            &reply,
            "self-signed certificate in certificate chain",
            &shape,
        );
    }
}

#[test]
fn tokens_bare_and_by_digest_and_query() {
    let pki = build(&HierarchySpec::rsa());
    let tsa = Tsa::new(&pki, &TsaOptions::default()).expect("the TSA is set up");
    let query = ts_query(DATA, Digest::Sha384, true).expect("openssl ts -query");
    let token = tsa.token(&query).expect("openssl ts -reply -token_out");
    let verify = pki.ts_verify();
    let (ok, out) = verify.token(&token, Imprint::Data(DATA));
    assert!(ok, "{out}");
    let (ok, out) = verify.token(&token, Imprint::Query(&query));
    assert!(ok, "{out}");
    let other = ts_query(DATA, Digest::Sha384, true).expect("openssl ts -query");
    let (ok, out) = verify.token(&token, Imprint::Query(&other));
    assert!(!ok && out.contains("nonce mismatch"), "{out}");
    // The digest, as `ts -reply -text` prints it ("0000 - 58 91 ..."), read back.
    let text = token_text(&token).expect("openssl ts -reply -token_in -text");
    let imprint: Vec<u8> = text
        .lines()
        .skip_while(|l| !l.starts_with("Message data:"))
        .skip(1)
        .take_while(|l| l.starts_with("    00"))
        .flat_map(|l| l[11..58].split([' ', '-']).filter(|s| !s.is_empty()))
        .map(|h| u8::from_str_radix(h, 16).expect("hex"))
        .collect();
    assert_eq!(imprint.len(), 48, "{text}");
    let (ok, out) = verify.token(&token, Imprint::Digest(&imprint));
    assert!(ok, "{out}");
    let (ok, out) = verify.token(&token, Imprint::Digest(&[0; 48]));
    assert!(!ok && out.contains("message imprint mismatch"), "{out}");
}

#[test]
fn what_the_tsa_options_say_is_in_the_token() {
    let pki = build(&HierarchySpec::new(
        CertSpec::root(KeyKind::P256),
        CertSpec::tsa(KeyKind::P256),
    ));
    let text = |options: &TsaOptions| {
        let reply = stamp(&pki, options);
        accepted_for_its_data_only(&pki.ts_verify(), &reply, &format!("{options:?}"));
        reply_text(&reply).expect("openssl ts -reply -text")
    };
    let t = text(&TsaOptions {
        accuracy: Some("secs:600".into()),
        clock_precision_digits: 3,
        policy: "1.2.3.4.99".into(),
        tsa_name: true,
        ess_cert_id_alg: EssCertIdAlg::Sha1,
        ..TsaOptions::default()
    });
    assert!(t.contains("Status: Granted."), "{t}");
    assert!(t.contains("Accuracy: 0x0258 seconds"), "{t}");
    assert!(t.contains("Policy OID: 1.2.3.4.99"), "{t}");
    assert!(t.contains("TSA: DirName:/CN=OpenSSL Test TSA"), "{t}");
    let gentime = t
        .lines()
        .find(|l| l.starts_with("Time stamp:"))
        .unwrap_or("");
    assert!(gentime.contains('.'), "three digits of a second: {t}");
    let t = text(&TsaOptions {
        accuracy: None,
        ..TsaOptions::default()
    });
    assert!(t.contains("Accuracy: unspecified"), "{t}");
    assert!(t.contains("TSA: unspecified"), "{t}");
    assert!(!t.contains("Accuracy: 0x"), "{t}");
    let gentime = t
        .lines()
        .find(|l| l.starts_with("Time stamp:"))
        .unwrap_or("");
    assert!(
        !gentime.is_empty() && !gentime.contains('.'),
        "whole seconds: {t}"
    );
}

#[test]
fn ess_attribute_and_signer_digest_as_configured() {
    let pki = build(&HierarchySpec::new(
        CertSpec::root(KeyKind::P256),
        CertSpec::tsa(KeyKind::P384),
    ));
    let query = ts_query(DATA, Digest::Sha256, true).expect("openssl ts -query");
    for (ess, digest, attribute) in [
        (
            EssCertIdAlg::Sha1,
            Digest::Sha384,
            "object: id-smime-aa-signingCertificate ",
        ),
        (
            EssCertIdAlg::Sha256,
            Digest::Sha512,
            "object: id-smime-aa-signingCertificateV2 ",
        ),
    ] {
        let options = TsaOptions {
            ess_cert_id_alg: ess,
            signer_digest: digest,
            ..TsaOptions::default()
        };
        let token = Tsa::new(&pki, &options)
            .and_then(|tsa| tsa.token(&query))
            .expect("an OpenSSL token");
        let printed = cms_print(&token);
        assert!(printed.contains(attribute), "{ess:?}: {printed}");
        let signer_digest = printed
            .lines()
            .skip_while(|l| l.trim() != "digestAlgorithm:")
            .nth(1)
            .unwrap_or("");
        let expected = format!("algorithm: {} ", digest.name());
        assert!(signer_digest.contains(&expected), "{digest:?}: {printed}");
        let (ok, out) = pki.ts_verify().token(&token, Imprint::Data(DATA));
        assert!(ok, "{ess:?}: {out}");
        let (ok, out) = pki.ts_verify().token(&token, Imprint::Data(OTHER));
        assert!(!ok, "{ess:?}: {out}");
    }
}

#[test]
fn files_of_a_hierarchy() {
    let pki = p256_pki(BasicConstraints::Ca(None), &[BasicConstraints::Ca(None); 2]);
    let file = |path: std::path::PathBuf| std::fs::read_to_string(path).expect("a PEM file");
    let (ca1, ca2) = (file(pki.intermediate_pem(0)), file(pki.intermediate_pem(1)));
    assert_eq!(
        file(pki.chain_pem()),
        format!("{ca2}{ca1}"),
        "TSA-side first"
    );
    let (tsa, root) = (file(pki.tsa_pem()), file(pki.ca_pem()));
    assert_eq!(file(pki.all_pem()), format!("{tsa}{ca2}{ca1}{root}"));
    assert!(file(pki.tsa_key()).starts_with("-----BEGIN PRIVATE KEY-----"));
    let subject = |pem: std::path::PathBuf| {
        let args = [
            "x509".as_ref(),
            "-noout".as_ref(),
            "-subject".as_ref(),
            "-in".as_ref(),
            pem.as_os_str(),
        ];
        super::command::run(None, &args).expect("openssl x509 -subject")
    };
    assert_eq!(
        subject(pki.intermediate_pem(1)).trim(),
        format!("subject=CN = {INTERMEDIATE_NAME} 2")
    );
    assert_eq!(
        subject(pki.tsa_pem()).trim(),
        "subject=CN = OpenSSL Test TSA"
    );
}

#[test]
fn chains_of_three() {
    let spec = HierarchySpec::new(
        CertSpec::root(KeyKind::Rsa(2048)),
        CertSpec::tsa(KeyKind::P256),
    )
    .with_intermediate(CertSpec::intermediate(KeyKind::P384));
    let pki = build(&spec);
    let all = std::fs::read_to_string(pki.all_pem()).expect("all.pem");
    assert_eq!(all.matches("BEGIN CERTIFICATE").count(), 3);
    let der = pki
        .der(&pki.intermediate_pem(0))
        .expect("openssl x509 -outform DER");
    assert_eq!(der.first(), Some(&0x30), "a DER SEQUENCE");
    assert!(pki.der(&pki.chain_pem()).is_ok() && pki.der(&pki.dir().join("none")).is_err());
    // The token carries the intermediate: the root alone suffices.
    let reply = stamp(&pki, &TsaOptions::default());
    accepted_for_its_data_only(&TsVerify::new(pki.ca_pem()), &reply, "chain in the token");
    // It carries the TSA's certificate only: the intermediate must come from -untrusted.
    let bare = TsaOptions {
        include_chain: false,
        ..TsaOptions::default()
    };
    let reply = stamp(&pki, &bare);
    let shape = "TSA certificate only";
    refused(
        &TsVerify::new(pki.ca_pem()),
        &reply,
        "unable to get local issuer certificate",
        shape,
    );
    accepted_for_its_data_only(&pki.ts_verify(), &reply, shape);
    // The intermediate as the trust anchor: only with -partial_chain.
    let mut anchored = TsVerify::new(pki.intermediate_pem(0));
    refused(
        &anchored,
        &reply,
        "unable to get issuer certificate",
        "intermediate anchor",
    );
    anchored.partial_chain = true;
    accepted_for_its_data_only(&anchored, &reply, "intermediate anchor, -partial_chain");
}

/// A hierarchy of P-256 keys: a root with `root_bc`, CAs with these basicConstraints, a TSA.
fn p256_pki(root_bc: BasicConstraints, cas: &[BasicConstraints]) -> Pki {
    let mut spec = HierarchySpec::new(
        CertSpec::root(KeyKind::P256).basic_constraints(root_bc),
        CertSpec::tsa(KeyKind::P256),
    );
    for &bc in cas {
        spec = spec.with_intermediate(CertSpec::intermediate(KeyKind::P256).basic_constraints(bc));
    }
    build(&spec)
}

#[test]
fn path_length_constraints() {
    use BasicConstraints::Ca;
    let exceeded = "path length constraint exceeded";
    for (root, cas, refusal) in [
        (Ca(Some(0)), &[][..], None),
        (Ca(Some(0)), &[Ca(None)][..], Some(exceeded)),
        (Ca(Some(0)), &[Ca(None), Ca(None)][..], Some(exceeded)),
        (Ca(Some(1)), &[Ca(None)][..], None),
        (Ca(Some(1)), &[Ca(None), Ca(None)][..], Some(exceeded)),
        (Ca(None), &[Ca(Some(0))][..], None),
        (Ca(None), &[Ca(Some(0)), Ca(None)][..], Some(exceeded)),
    ] {
        let shape = format!("root {root:?}, CAs {cas:?}");
        let pki = p256_pki(root, cas);
        let reply = stamp(&pki, &TsaOptions::default());
        match refusal {
            None => accepted_for_its_data_only(&pki.ts_verify(), &reply, &shape),
            Some(why) => refused(&pki.ts_verify(), &reply, why, &shape),
        }
    }
}

#[test]
fn self_issued_cas_are_not_counted_in_path_lengths() {
    // Two CAs of the same name under a pathlen:1 root: the second is self-issued (its issuer's
    // name is its own), which RFC 5280 and OpenSSL leave out of the count.
    let ca = |name: &str| CertSpec {
        common_name: name.into(),
        ..CertSpec::intermediate(KeyKind::P256)
    };
    let exceeded = Some("path length constraint exceeded");
    for (second, refusal) in [("Same CA", None), ("Other CA", exceeded)] {
        let spec = HierarchySpec::new(
            CertSpec::root(KeyKind::P256).basic_constraints(BasicConstraints::Ca(Some(1))),
            CertSpec::tsa(KeyKind::P256),
        )
        .with_intermediate(ca("Same CA"))
        .with_intermediate(ca(second));
        let pki = build(&spec);
        let reply = stamp(&pki, &TsaOptions::default());
        match refusal {
            None => accepted_for_its_data_only(&pki.ts_verify(), &reply, second),
            Some(why) => refused(&pki.ts_verify(), &reply, why, second),
        }
    }
}

#[test]
fn issuers_that_are_not_cas() {
    use BasicConstraints::*;
    let pki = p256_pki(Ca(None), &[NotCa]);
    let reply = stamp(&pki, &TsaOptions::default());
    refused(
        &pki.ts_verify(),
        &reply,
        "invalid CA certificate",
        "issuer CA:FALSE",
    );
    // No basicConstraints, though keyUsage keyCertSign: no CA to OpenSSL 3.0 either.
    let pki = p256_pki(Ca(None), &[Absent]);
    let reply = stamp(&pki, &TsaOptions::default());
    let shape = "issuer without basicConstraints";
    refused(&pki.ts_verify(), &reply, "invalid CA certificate", shape);
    // With basicConstraints CA:TRUE it is (the control).
    let pki = p256_pki(Ca(None), &[Ca(None)]);
    let reply = stamp(&pki, &TsaOptions::default());
    accepted_for_its_data_only(&pki.ts_verify(), &reply, "issuer CA:TRUE");
    // No basicConstraints and no keyUsage: no CA.
    let mut spec = HierarchySpec::new(CertSpec::root(KeyKind::P256), CertSpec::tsa(KeyKind::P256));
    spec = spec.with_intermediate(CertSpec {
        key_usage: None,
        ..CertSpec::intermediate(KeyKind::P256).basic_constraints(Absent)
    });
    let pki = build(&spec);
    let reply = stamp(&pki, &TsaOptions::default());
    refused(
        &pki.ts_verify(),
        &reply,
        "invalid CA certificate",
        "issuer without either",
    );
    // The trust anchor is checked too: CA:FALSE is refused; no basicConstraints (keyUsage
    // keyCertSign) is tolerated in a root, unless -x509_strict.
    let pki = p256_pki(NotCa, &[]);
    let reply = stamp(&pki, &TsaOptions::default());
    refused(
        &pki.ts_verify(),
        &reply,
        "invalid CA certificate",
        "root CA:FALSE",
    );
    let pki = p256_pki(Absent, &[]);
    let reply = stamp(&pki, &TsaOptions::default());
    accepted_for_its_data_only(&pki.ts_verify(), &reply, "root without basicConstraints");
    let strict = TsVerify {
        x509_strict: true,
        ..pki.ts_verify()
    };
    refused(&strict, &reply, "invalid CA certificate", "-x509_strict");
    let pki = p256_pki(Ca(None), &[]);
    let reply = stamp(&pki, &TsaOptions::default());
    let strict = TsVerify {
        x509_strict: true,
        ..pki.ts_verify()
    };
    accepted_for_its_data_only(&strict, &reply, "root CA:TRUE, -x509_strict");
}

#[test]
fn validity_periods_against_the_time_of_checking() {
    let now = unix_now();
    let day = 86_400;
    let tsa = |nb, na| {
        build(&HierarchySpec::new(
            CertSpec::root(KeyKind::P256),
            CertSpec::tsa(KeyKind::P256).validity(nb, na),
        ))
    };
    // Valid now, expired by the time of checking.
    let pki = tsa(now - day, now + day);
    let reply = stamp(&pki, &TsaOptions::default());
    accepted_for_its_data_only(&pki.ts_verify(), &reply, "valid");
    refused(
        &pki.ts_verify().at(now + 2 * day),
        &reply,
        "certificate has expired",
        "later",
    );
    // Expired already: ts -reply signs anyway; ts -verify checks at the present time.
    let pki = tsa(now - 10 * day, now - day);
    let reply = stamp(&pki, &TsaOptions::default());
    refused(
        &pki.ts_verify(),
        &reply,
        "certificate has expired",
        "expired",
    );
    accepted_for_its_data_only(
        &pki.ts_verify().at(now - 2 * day),
        &reply,
        "expired, -attime",
    );
    // Not yet valid.
    let pki = tsa(now + day, now + 10 * day);
    let reply = stamp(&pki, &TsaOptions::default());
    refused(
        &pki.ts_verify(),
        &reply,
        "certificate is not yet valid",
        "not yet valid",
    );
    accepted_for_its_data_only(
        &pki.ts_verify().at(now + 2 * day),
        &reply,
        "future, -attime",
    );
}

#[test]
fn rsa_pss_certificates() {
    let rsa = KeyKind::Rsa(2048);
    let spec = HierarchySpec::new(
        CertSpec::root(rsa).signed_with(Digest::Sha384, true),
        CertSpec::tsa(KeyKind::P256).signed_with(Digest::Sha256, true),
    )
    .with_intermediate(CertSpec::intermediate(rsa).signed_with(Digest::Sha512, true));
    let pki = build(&spec);
    let text = |pem| {
        super::command::run(
            None,
            &[
                "x509".as_ref(),
                "-in".as_ref(),
                pki.dir().join(pem).as_os_str(),
                "-noout".as_ref(),
                "-text".as_ref(),
            ],
        )
        .expect("openssl x509 -text")
    };
    for (pem, hash) in [
        ("root.pem", "sha384"),
        ("ca1.pem", "sha512"),
        ("tsa.pem", "sha256"),
    ] {
        let t = text(pem);
        assert!(t.contains("Signature Algorithm: rsassaPss"), "{pem}: {t}");
        assert!(t.contains(&format!("Hash Algorithm: {hash}")), "{pem}: {t}");
    }
    let reply = stamp(&pki, &TsaOptions::default());
    accepted_for_its_data_only(&pki.ts_verify(), &reply, "PSS-signed certificates");
    // PSS belongs to RSA: an EC issuer cannot.
    let spec = HierarchySpec::new(
        CertSpec::root(KeyKind::P256),
        CertSpec::tsa(rsa).signed_with(Digest::Sha256, true),
    );
    let err = Pki::build(&spec).expect_err("no PSS with an EC key");
    assert!(err.output.contains("rsa_padding_mode"), "{err}");
}

#[test]
fn a_tsa_certificate_without_critical_timestamping_cannot_sign() {
    for eku in [Some("timeStamping"), None] {
        let pki = build(&HierarchySpec::new(
            CertSpec::root(KeyKind::P256),
            CertSpec {
                extended_key_usage: eku.map(String::from),
                ..CertSpec::tsa(KeyKind::P256)
            },
        ));
        let tsa = Tsa::new(&pki, &TsaOptions::default()).expect("the TSA is set up");
        let query = ts_query(DATA, Digest::Sha256, true).expect("openssl ts -query");
        let err = tsa
            .reply(&query)
            .expect_err("OpenSSL refuses such a signer");
        assert!(
            err.output.contains("invalid signer certificate purpose"),
            "{eku:?}: {err}"
        );
    }
}

/// What `openssl cms -cmsout -print` shows of a DER ContentInfo.
fn cms_print(token: &[u8]) -> String {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let path = dir.path().join("token");
    std::fs::write(&path, token).expect("the token is written");
    let args = ["cms", "-cmsout", "-print", "-inform", "DER", "-in"];
    let mut args: Vec<&std::ffi::OsStr> = args.iter().map(std::ffi::OsStr::new).collect();
    args.push(path.as_os_str());
    super::command::run(None, &args).expect("openssl cms -cmsout -print")
}

#[test]
fn rsa_pss_tokens_by_cms() {
    let spec = HierarchySpec::rsa().with_intermediate(CertSpec::intermediate(KeyKind::P384));
    let pki = build(&spec);
    let tsa = Tsa::new(&pki, &TsaOptions::default()).expect("the TSA is set up");
    let query = ts_query(DATA, Digest::Sha256, true).expect("openssl ts -query");
    let token = tsa.token(&query).expect("openssl ts -reply -token_out");
    let tst = tst_info(&token, &pki.tsa_pem()).expect("the TSTInfo");
    assert_eq!(tst.first(), Some(&0x30), "a DER SEQUENCE");
    let foreign = build(&HierarchySpec::new(
        CertSpec::root(KeyKind::P256),
        CertSpec::tsa(KeyKind::P256),
    ));
    for md in [Digest::Sha256, Digest::Sha384, Digest::Sha512] {
        let pss = pki
            .cms_token(&tst, &CmsOptions::pss(md))
            .expect("openssl cms -sign");
        assert_eq!(tst_info(&pss, &pki.tsa_pem()).expect("its TSTInfo"), tst);
        let printed = cms_print(&pss);
        for field in [
            "eContentType: id-smime-ct-TSTInfo",
            "id-smime-aa-signingCertificateV2",
            "algorithm: rsassaPss",
            &format!("algorithm: {} ", md.name()),
        ] {
            assert!(printed.contains(field), "{md:?}: {field}: {printed}");
        }
        let (ok, out) = CmsVerify::new(pki.ca_pem()).verify(&pss);
        assert!(ok, "{md:?}: {out}");
        let (ok, out) = CmsVerify::new(foreign.ca_pem()).verify(&pss);
        assert!(
            !ok && out.contains("unable to get local issuer certificate"),
            "{md:?}: {out}"
        );
        let mut damaged = pss.clone();
        let last = damaged.len() - 1;
        damaged[last] ^= 1;
        let (ok, out) = CmsVerify::new(pki.ca_pem()).verify(&damaged);
        assert!(!ok, "{md:?} damaged: {out}");
        // Without the intermediate in the token it is refused, even with the intermediate as
        // -certfile, which OpenSSL 3.0 uses to find the signer only, not to build the chain.
        let bare = CmsOptions {
            include_chain: false,
            ..CmsOptions::pss(md)
        };
        let bare = pki.cms_token(&tst, &bare).expect("openssl cms -sign");
        for certfile in [None, Some(pki.chain_pem())] {
            let verify = CmsVerify {
                certfile: certfile.clone(),
                ..pki.cms_verify()
            };
            let (ok, out) = verify.verify(&bare);
            let why = "unable to get local issuer certificate";
            assert!(!ok && out.contains(why), "{md:?} {certfile:?}: {out}");
        }
        // ts -verify does not do PSS.
        let (ok, out) = pki.ts_verify().token(&pss, Imprint::Data(DATA));
        assert!(!ok && out.contains("signature failure"), "{md:?}: {out}");
        // The same by PKCS #1 v1.5 it accepts.
        let plain = pki
            .cms_token(&tst, &CmsOptions::plain(Some(md)))
            .expect("openssl cms -sign");
        let (ok, out) = pki.ts_verify().token(&plain, Imprint::Data(DATA));
        assert!(ok, "{md:?}: {out}");
        let (ok, out) = pki.ts_verify().token(&plain, Imprint::Data(OTHER));
        assert!(
            !ok && out.contains("message imprint mismatch"),
            "{md:?}: {out}"
        );
    }
}

#[test]
fn ed25519_tsas_are_beyond_openssl_3_0() {
    let pki = build(&HierarchySpec::new(
        CertSpec::root(KeyKind::Ed25519),
        CertSpec::tsa(KeyKind::Ed25519),
    ));
    let tsa = Tsa::new(&pki, &TsaOptions::default()).expect("the TSA is set up");
    let query = ts_query(DATA, Digest::Sha256, true).expect("openssl ts -query");
    let reply = tsa
        .reply(&query)
        .expect("ts -reply answers, with a rejection");
    let text = reply_text(&reply).expect("openssl ts -reply -text");
    assert!(
        text.contains("Status: Rejected.") && text.contains("Error during signature generation."),
        "{text}"
    );
    let err = tsa.token(&query).expect_err("no token");
    assert!(
        err.output
            .contains("signing not supported for this key type"),
        "{err}"
    );
    let rsa = build(&HierarchySpec::rsa());
    let tst = tst_info(
        &Tsa::new(&rsa, &TsaOptions::default())
            .and_then(|t| t.token(&query))
            .expect("an RSA token"),
        &rsa.tsa_pem(),
    )
    .expect("its TSTInfo");
    let err = pki
        .cms_token(&tst, &CmsOptions::plain(None))
        .expect_err("no Ed25519 CMS in 3.0");
    assert!(err.output.contains("no default digest"), "{err}");
    let err = pki
        .cms_token(&tst, &CmsOptions::plain(Some(Digest::Sha512)))
        .expect_err("nor with SHA-512");
    assert!(err.output.contains("invalid digest"), "{err}");
}

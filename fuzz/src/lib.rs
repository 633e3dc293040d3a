//! Shared oracles for the hourglass fuzz targets.
//!
//! Every target feeds arbitrary bytes to a decoder. Decoding must never panic; whenever it
//! succeeds, the key must survive re-encoding in every [`KeyFormat`] and decoding again
//! unchanged, and a private key must actually work (`private_op(public_op(m)) == m`).
//!
//! The RFC 3161 targets share one fixed timestamp authority ([`fuzz_tsa`]), also used by the
//! corpus generator, and their oracles: [`check_timestamp_query`] and
//! [`check_timestamp_token`].

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hourglass_arith::entropy::SeededEntropy;
use hourglass_rsa::encoding::{
    decode_key, decode_private_key, decode_public_key, encode_private_key, encode_public_key,
    KeyFormat,
};
use hourglass_rsa::{Integer, KeyGenOptions, PrivateKey, PublicKey, Variant};
use hourglass_timestamp::{
    anchors_from_pem, granted_reply, token_of, verify_token, FailInfo, PolicyId, Query,
    TimestampError, TokenInfo, Tsa, TsaAnchor, TsaCertificate, TsaKey, TsaKeyType,
};
use hourglass_x509::{pem_certificates, CaCertificate, CertificateOptions, ValidityPeriod};

/// Every output form.
pub const FORMATS: [KeyFormat; 5] = [
    KeyFormat::Pem,
    KeyFormat::Pkcs1,
    KeyFormat::Der,
    KeyFormat::Hex,
    KeyFormat::Json,
];

/// Same modulus, exponents, primes, CRT exponents and coefficient.
pub fn same_private(a: &PrivateKey, b: &PrivateKey) -> bool {
    a.public() == b.public() && a.secret_components() == b.secret_components()
}

/// Re-encodes a decoded private key in every form and checks that it decodes to the same key
/// (with the variant, in the forms that record it), that its public half round-trips too, and
/// that the private operation inverts the public one.
pub fn check_private(key: &PrivateKey) {
    for format in FORMATS {
        let bytes = encode_private_key(key, format)
            .unwrap_or_else(|e| panic!("{format:?}: cannot encode a decoded private key: {e}"));
        let back = decode_private_key(&bytes)
            .unwrap_or_else(|e| panic!("{format:?}: cannot decode a re-encoded private key: {e}"));
        assert!(
            same_private(key, &back),
            "{format:?}: private key changed on round trip"
        );
        if matches!(format, KeyFormat::Hex | KeyFormat::Json) {
            assert_eq!(key.variant(), back.variant(), "{format:?}: variant changed");
        }
        let public = decode_public_key(&bytes)
            .unwrap_or_else(|e| panic!("{format:?}: no public half from a private key file: {e}"));
        assert_eq!(&public, key.public(), "{format:?}: public half differs");
        // Re-encoding the re-decoded key gives the same bytes (the encoding is canonical).
        let again = encode_private_key(&back, format).expect("encode again");
        assert_eq!(*bytes, *again, "{format:?}: encoding is not canonical");
    }
    check_public(key.public());
    let n = key.public().n();
    let mut rng = SeededEntropy::new(b"hourglass fuzz private_op");
    for m in [Integer::from(2), Integer::from(n - 2u32)] {
        let c = key.public().public_op(&m).expect("public_op");
        let back = key
            .private_op(&c, &mut rng)
            .expect("private_op on a decoded key");
        assert_eq!(back, m, "private_op(public_op(m)) != m");
    }
}

/// Re-encodes a decoded public key in every form and checks that it decodes to itself, and that
/// `decode_private_key` refuses it.
pub fn check_public(key: &PublicKey) {
    for format in FORMATS {
        let bytes = encode_public_key(key, format)
            .unwrap_or_else(|e| panic!("{format:?}: cannot encode a decoded public key: {e}"));
        let back = decode_public_key(&bytes)
            .unwrap_or_else(|e| panic!("{format:?}: cannot decode a re-encoded public key: {e}"));
        assert_eq!(&back, key, "{format:?}: public key changed on round trip");
        assert!(
            decode_private_key(&bytes).is_err(),
            "{format:?}: public key decoded as private"
        );
        match decode_key(&bytes) {
            Ok(Err(p)) => assert_eq!(&p, key),
            other => panic!("{format:?}: decode_key gave {other:?} for a public key"),
        }
    }
}

/// Forces the error message to be built (a `Display` impl must not panic either).
pub fn touch_error(e: &hourglass_rsa::Error) {
    let s = e.to_string();
    assert!(!s.is_empty());
}

/// The raw key of the checkpoint target.
pub const CHECKPOINT_KEY: [u8; 32] = [0x5a; 32];

/// `body` followed by its HMAC-SHA-256 under [`CHECKPOINT_KEY`] (docs/FORMATS.md section
/// 12.7), computed here independently of `hourglass-arith`: lets the checkpoint target explore
/// the field parser behind the authentication check.
pub fn authenticate_checkpoint(body: &[u8]) -> Vec<u8> {
    use hmac::Mac;
    let mut mac = <hmac::Hmac<sha2::Sha256> as Mac>::new_from_slice(&CHECKPOINT_KEY)
        .expect("HMAC takes any key length");
    mac.update(body);
    let mut out = body.to_vec();
    out.extend_from_slice(&mac.finalize().into_bytes());
    out
}

/// `genTime` of every token the fixed TSA signs: 2027-01-15T08:00:00Z.
pub const TSA_TIME_UNIX: u64 = 1_800_000_000;

/// The fixed certificates' validity: 2023-11-14 to 2036-07-18 (around [`TSA_TIME_UNIX`] and
/// the time the corpus generator has OpenSSL sign tokens, so that both verify).
pub const TSA_VALIDITY_UNIX: (u64, u64) = (1_700_000_000, 2_100_000_000);

/// The time of [`TSA_TIME_UNIX`].
pub fn tsa_time() -> SystemTime {
    UNIX_EPOCH + Duration::from_secs(TSA_TIME_UNIX)
}

/// The timestamp authorities of the `timestamp_*` targets: a 2048-bit CA, and under it an
/// RSA-2048 and an ECDSA P-384 authority (insecure, fixed seeds), each a [`Tsa`] serving
/// [`PolicyId::hourglass`] with that chain; and, beside the CA, the anchors of six real
/// authorities (crates/hourglass-timestamp/tests/data/tsa: sigstore's ECDSA P-384 in production
/// and staging, FreeTSA, DigiCert, GlobalSign and Microsoft on RSA), so that mutations of their
/// tokens reach every signature and path check.
pub struct FuzzTsa {
    /// The CA's key (the corpus generator hands it to OpenSSL to certify its own TSA key).
    pub ca_key: PrivateKey,
    /// The self-signed CA certificate.
    pub ca: CaCertificate,
    /// The RSA authority.
    pub tsa: Tsa,
    /// The ECDSA P-384 authority.
    pub ec_tsa: Tsa,
    /// The fixed CA, then the real authorities' anchors.
    pub anchors: Vec<TsaAnchor>,
    /// The certificates a verifier is given beside the tokens (sigstore production's chain).
    pub untrusted: Vec<Vec<u8>>,
}

/// The anchors of the real authorities' tokens, and the certificates their tokens lack.
const REAL_ANCHORS: [&[u8]; 6] = [
    include_bytes!("../../crates/hourglass-timestamp/tests/data/tsa/sigstore-prod-2026-ecdsa-p384-nocert/ca.pem"),
    include_bytes!("../../crates/hourglass-timestamp/tests/data/tsa/sigstage-2025-ecdsa-p384-sha384-embedded/ca.pem"),
    include_bytes!("../../crates/hourglass-timestamp/tests/data/tsa/freetsa-2025-rsa4096-embedded/ca.pem"),
    include_bytes!("../../crates/hourglass-timestamp/tests/data/tsa/digicert-2025-rsa4096-sha512/ca.pem"),
    include_bytes!("../../crates/hourglass-timestamp/tests/data/tsa/globalsign-advanced-g4-2021-4certs-crosscert/ca.pem"),
    include_bytes!("../../crates/hourglass-timestamp/tests/data/tsa/microsoft-2024-rsa4096-fractional-gentime/ca.pem"),
];
const REAL_UNTRUSTED: &[u8] = include_bytes!(
    "../../crates/hourglass-timestamp/tests/data/tsa/sigstore-prod-2026-ecdsa-p384-nocert/chain.pem"
);

/// The fixed authorities, made once per process (the same keys and certificates in every
/// process: they come from [`SeededEntropy`] with fixed seeds).
pub fn fuzz_tsa() -> &'static FuzzTsa {
    static TSA: OnceLock<FuzzTsa> = OnceLock::new();
    TSA.get_or_init(|| {
        let mut rng = SeededEntropy::new(b"hourglass fuzz timestamp authority");
        let ca_key = KeyGenOptions::new(2048, Variant::Crt)
            .generate(&mut rng)
            .expect("the fuzz CA key");
        let tsa_key = TsaKey::Rsa(
            KeyGenOptions::new(2048, Variant::Crt)
                .generate(&mut rng)
                .expect("the fuzz TSA key"),
        );
        let ec_key = TsaKey::generate(TsaKeyType::EcdsaP384, &mut rng).expect("the fuzz EC key");
        let validity = ValidityPeriod {
            not_before: UNIX_EPOCH + Duration::from_secs(TSA_VALIDITY_UNIX.0),
            not_after: UNIX_EPOCH + Duration::from_secs(TSA_VALIDITY_UNIX.1),
        };
        let options = |cn: &str| CertificateOptions {
            common_name: cn.to_string(),
            validity,
        };
        let ca = CaCertificate::self_signed(&ca_key, &options("hourglass fuzz TSA CA"), &mut rng)
            .expect("the fuzz CA certificate");
        let mut authority = |key: TsaKey, cn: &str| {
            let cert = TsaCertificate::issue(
                key.spki().expect("the fuzz key's SPKI"),
                &ca,
                &ca_key,
                &options(cn),
                &mut rng,
            )
            .expect("the fuzz TSA certificate");
            Tsa::new(
                key,
                cert,
                vec![ca.certificate().clone()],
                PolicyId::hourglass(),
            )
            .expect("the fuzz TSA")
        };
        let tsa = authority(tsa_key, "hourglass fuzz TSA");
        let ec_tsa = authority(ec_key, "hourglass fuzz EC TSA");
        let mut anchors = vec![TsaAnchor::from(ca.clone())];
        for pem in REAL_ANCHORS {
            anchors.extend(anchors_from_pem(pem).expect("a real authority's anchor"));
        }
        FuzzTsa {
            ca_key,
            ca,
            tsa,
            ec_tsa,
            anchors,
            untrusted: pem_certificates(REAL_UNTRUSTED).expect("sigstore's chain"),
        }
    })
}

/// The `timestamp_query` oracle. `Query::parse` never panics, and a query that parses
/// re-encodes: `Query::for_digest` of its hash, imprint, nonce and policy parses again to the
/// same four. The fixed TSA answers the input without panicking, and its reply reads with
/// `token_of` as exactly one of: a granted token, when the query parses and asks for no other
/// policy (the token then verifies against the fixed CA, states the query's imprint, nonce,
/// the TSA's policy and [`TSA_TIME_UNIX`], agrees with `TokenInfo::of_token`, and passes
/// `Query::token_of_reply`); or `TimestampError::Refused`, naming the failInfo `Query::parse`
/// gave (or unacceptedPolicy).
pub fn check_timestamp_query(data: &[u8]) {
    let parsed = Query::parse(data);
    if let Ok(q) = &parsed {
        let again = Query::for_digest(
            q.hash(),
            q.imprint(),
            q.nonce().map(<[u8]>::to_vec),
            q.policy().cloned(),
        )
        .unwrap_or_else(|e| panic!("a parsed query does not re-encode: {e}"));
        let back = Query::parse(again.to_der())
            .unwrap_or_else(|e| panic!("a re-encoded query does not parse: {e}"));
        assert_eq!(back.hash(), q.hash(), "hash changed on re-encoding");
        assert_eq!(
            back.imprint(),
            q.imprint(),
            "imprint changed on re-encoding"
        );
        assert_eq!(back.nonce(), q.nonce(), "nonce changed on re-encoding");
        assert_eq!(back.policy(), q.policy(), "policy changed on re-encoding");
    }

    let fixed = fuzz_tsa();
    for tsa in [&fixed.tsa, &fixed.ec_tsa] {
        check_reply(data, &parsed, tsa, fixed);
    }
}

/// One fixed authority's reply to a query, checked as [`check_timestamp_query`] says.
fn check_reply(
    data: &[u8],
    parsed: &Result<Query, hourglass_timestamp::Rejection>,
    tsa: &Tsa,
    fixed: &FuzzTsa,
) {
    let mut rng = SeededEntropy::new(data);
    let reply = tsa.reply(data, &[1], tsa_time(), &mut rng);
    let other_policy = parsed
        .as_ref()
        .is_ok_and(|q| q.policy().is_some_and(|p| p != tsa.policy()));
    match token_of(&reply) {
        Ok(token) => {
            let q = parsed
                .as_ref()
                .expect("the TSA granted a query Query::parse refuses");
            assert!(!other_policy, "the TSA granted another policy than its own");
            // Without certReq the token carries no certificate: the verifier is given it.
            let extra = if q.cert_req() {
                Vec::new()
            } else {
                assert!(matches!(
                    verify_token(&token, &[], &fixed.anchors),
                    Err(TimestampError::NoSignerCertificate)
                ));
                vec![tsa.certificate().to_der().to_vec()]
            };
            let verified = verify_token(&token, &extra, &fixed.anchors)
                .unwrap_or_else(|e| panic!("the TSA's own token does not verify: {e}"));
            let info = verified.info();
            assert_eq!(info.hash(), q.hash());
            assert_eq!(
                info.imprint(),
                q.imprint(),
                "the token's imprint is not the query's"
            );
            assert_eq!(info.nonce(), q.nonce(), "the nonce is not echoed");
            assert_eq!(info.policy(), tsa.policy().to_string());
            assert_eq!(info.gen_time(), tsa_time());
            assert_eq!(
                info.latest(),
                tsa_time() + Duration::from_secs(1),
                "the latest time is genTime plus the 1 s accuracy"
            );
            assert_eq!(&TokenInfo::of_token(&reply).expect("reads the reply"), info);
            assert_eq!(&TokenInfo::of_token(&token).expect("reads the token"), info);
            q.token_of_reply(&reply)
                .unwrap_or_else(|e| panic!("the TSA's reply does not answer its query: {e}"));
        }
        Err(TimestampError::Refused { fail_info, .. }) => {
            let fail = match parsed {
                Err(rejection) => rejection.fail.name(),
                Ok(_) if other_policy => FailInfo::UnacceptedPolicy.name(),
                Ok(_) => panic!("the TSA refused a query that parses, under its own policy"),
            };
            assert_eq!(
                fail_info.map(|f| f.to_ascii_lowercase()),
                Some(fail.to_ascii_lowercase()),
                "the reply names another failInfo than the parser"
            );
        }
        Err(e) => panic!("the TSA's reply does not read: {e}"),
    }
}

/// The `timestamp_token` oracle: `verify_token` (against the fixed CA and the real authorities'
/// anchors), `TokenInfo::of_token` and `token_of` never panic, and agree: what verifies reads,
/// with the same `TokenInfo`, and chains to one of the anchors along a path that starts at its
/// signer; what reads has a token, and a latest time no earlier than its genTime. `token_of`
/// is idempotent, and a token wrapped by `granted_reply` comes back unchanged.
pub fn check_timestamp_token(data: &[u8]) {
    let fixed = fuzz_tsa();
    let verified = verify_token(data, &fixed.untrusted, &fixed.anchors);
    let info = TokenInfo::of_token(data);
    let token = token_of(data);
    match &verified {
        Ok(v) => {
            assert_eq!(
                info.as_ref().ok(),
                Some(v.info()),
                "verified but reads otherwise"
            );
            assert!(
                fixed.anchors.iter().any(|a| a.name() == v.anchor()),
                "verified under an anchor nobody pinned"
            );
            assert_eq!(v.path().first().map(String::as_str), Some(v.tsa()));
            assert_eq!(v.path().last().map(String::as_str), Some(v.anchor()));
        }
        Err(e) => touch_timestamp_error(e),
    }
    match &info {
        Ok(i) => {
            assert!(token.is_ok(), "TokenInfo reads what token_of refuses");
            assert!(i.latest() >= i.gen_time_whole(), "latest before genTime");
        }
        Err(e) => touch_timestamp_error(e),
    }
    match &token {
        Ok(t) => {
            let again = token_of(t).unwrap_or_else(|e| panic!("token_of is not idempotent: {e}"));
            assert_eq!(&again, t, "token_of changed a token");
            let reply = granted_reply(t).unwrap_or_else(|e| panic!("cannot wrap a token: {e}"));
            assert_eq!(
                token_of(&reply).ok().as_ref(),
                Some(t),
                "a wrapped token changed"
            );
        }
        Err(e) => touch_timestamp_error(e),
    }
}

/// Builds an error's message and verdict class (neither may panic).
fn touch_timestamp_error(e: &TimestampError) {
    assert!(!e.to_string().is_empty());
    let _ = e.is_verdict();
}

/// The transparency log targets' fixed pins: a log key (and a witness key, not required) from
/// fixed seeds.
pub fn log_pins() -> (
    &'static hourglass_log::checkpoint::LogPins,
    &'static hourglass_log::keys::VerifierKey,
) {
    let f = log_fixture();
    (&f.pins, f.pins.log())
}

/// A small honest tiled log: 300 entries, every tile and bundle and its checkpoint by path, and
/// the checkpoint of its first 100 entries as a client's saved state.
pub struct LogFixture {
    /// The log, as it is served.
    pub log: hourglass_log::memory::MemoryLog,
    /// The log's pins (its key alone).
    pub pins: hourglass_log::checkpoint::LogPins,
    /// What a client that read the first 100 entries saved.
    pub known: hourglass_log::witness::KnownCheckpoint,
}

/// The fixed log of the transparency log targets (made once per process).
pub fn log_fixture() -> &'static LogFixture {
    use hourglass_log::checkpoint::{LogPins, SignedCheckpoint};
    use hourglass_log::keys::{KeyRole, SigningKey};
    use hourglass_log::memory::MemoryLog;
    use hourglass_log::witness::KnownCheckpoint;
    static FIXTURE: OnceLock<LogFixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let key = SigningKey::generate(
            "fuzz.example/log",
            KeyRole::Log,
            &mut SeededEntropy::new(b"fuzz log key"),
        )
        .unwrap();
        let entries: Vec<Vec<u8>> = (0..300).map(|i| format!("entry {i}").into_bytes()).collect();
        let pins = LogPins::log_only(key.verifier()).unwrap();
        let early = MemoryLog::new(&entries[..100], &key).unwrap();
        let early = SignedCheckpoint::parse(&early.files()["checkpoint"])
            .unwrap()
            .verify(&pins)
            .unwrap();
        LogFixture {
            log: MemoryLog::new(&entries, &key).unwrap(),
            pins,
            known: KnownCheckpoint::of(&early),
        }
    })
}

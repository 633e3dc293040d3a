//! Robustness of the key-file parsers (`hourglass_rsa::encoding`), on stable Rust.
//!
//! A property test mutates valid encodings of small insecure keys in every form (bit flips,
//! truncation, byte insertion and deletion, duplicated/dropped/swapped lines, changed JSON
//! fields) and checks that decoding never panics and either fails or yields a key that is
//! internally consistent. Hand-written cases check that specific defects are rejected with a
//! message that names the defect. The fuzz targets in `fuzz/` explore the same ground at depth.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;

use der::asn1::{AnyRef, UintRef};
use der::Encode;
use hourglass_arith::entropy::SeededEntropy;
use hourglass_rsa::encoding::{
    decode_key, decode_private_key, decode_public_key, encode_private_key, encode_public_key,
    KeyFormat, MAX_KEY_FILE,
};
use hourglass_rsa::{Integer, KeyGenOptions, PrivateKey, PublicKey, Variant};
use proptest::prelude::*;
use proptest::sample::Index;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use rug::integer::Order;

const FORMATS: [KeyFormat; 5] = [
    KeyFormat::Pem,
    KeyFormat::Pkcs1,
    KeyFormat::Der,
    KeyFormat::Hex,
    KeyFormat::Json,
];

fn small_key(variant: Variant, seed: &[u8]) -> PrivateKey {
    KeyGenOptions::new(512, variant)
        .allow_insecure(true)
        .generate(&mut SeededEntropy::new(seed))
        .expect("512-bit test key")
}

/// Two small keys: a CRT key with e = 65537 and a rebalanced key (large e, small CRT exponents).
static KEYS: LazyLock<Vec<PrivateKey>> = LazyLock::new(|| {
    vec![
        small_key(Variant::Crt, b"parser robustness: crt"),
        small_key(Variant::Rebalanced, b"parser robustness: rebalanced"),
    ]
});

/// Valid encodings of [`KEYS`]: private and public, in every form, plus bare PKCS#1 DER.
static SEEDS: LazyLock<Vec<Vec<u8>>> = LazyLock::new(|| {
    let mut seeds = Vec::new();
    for key in KEYS.iter() {
        for format in FORMATS {
            seeds.push(encode_private_key(key, format).unwrap().to_vec());
            seeds.push(encode_public_key(key.public(), format).unwrap());
        }
        let (_, der) =
            pem_rfc7468::decode_vec(&encode_private_key(key, KeyFormat::Pkcs1).unwrap()).unwrap();
        seeds.push(der);
        let (_, der) =
            pem_rfc7468::decode_vec(&encode_public_key(key.public(), KeyFormat::Pkcs1).unwrap())
                .unwrap();
        seeds.push(der);
    }
    seeds
});

fn same_private(a: &PrivateKey, b: &PrivateKey) -> bool {
    a.public() == b.public() && a.secret_components() == b.secret_components()
}

/// A decoded public key is consistent when it round-trips through every form.
fn assert_public_consistent(key: &PublicKey) {
    for format in FORMATS {
        let bytes = encode_public_key(key, format).expect("encode a decoded public key");
        let back = decode_public_key(&bytes).expect("decode a re-encoded public key");
        assert_eq!(&back, key, "{format:?}: public key changed on round trip");
    }
}

/// A decoded private key is consistent when its public half round-trips, the key itself
/// round-trips, and the private operation inverts the public one.
fn assert_private_consistent(key: &PrivateKey) {
    assert_public_consistent(key.public());
    for format in FORMATS {
        let bytes = encode_private_key(key, format).expect("encode a decoded private key");
        let back = decode_private_key(&bytes).expect("decode a re-encoded private key");
        assert!(
            same_private(key, &back),
            "{format:?}: private key changed on round trip"
        );
    }
    let n = key.public().n();
    let mut rng = SeededEntropy::new(b"parser robustness: private_op");
    for m in [
        Integer::from(2),
        Integer::from(0xdead_beef_u32),
        Integer::from(n - 1u32),
    ] {
        let c = key.public().public_op(&m).unwrap();
        assert_eq!(
            key.private_op(&c, &mut rng).unwrap(),
            m,
            "private_op(public_op(m)) != m"
        );
    }
}

/// What an input decoded to.
#[derive(Debug, Clone, Copy)]
enum Outcome {
    Private = 0,
    Public = 1,
    Error = 2,
}

/// Decodes with all three entry points; they must agree, and whatever decodes must be sound.
fn check_input(bytes: &[u8]) -> Outcome {
    let private = decode_private_key(bytes);
    let public = decode_public_key(bytes);
    match decode_key(bytes) {
        Ok(Ok(key)) => {
            assert!(same_private(
                &key,
                &private.expect("decode_key found a private key")
            ));
            assert_eq!(&public.expect("public half"), key.public());
            assert_private_consistent(&key);
            Outcome::Private
        }
        Ok(Err(key)) => {
            assert!(private.is_err(), "a public key decoded as private");
            assert_eq!(public.expect("decode_key found a public key"), key);
            assert_public_consistent(&key);
            Outcome::Public
        }
        Err(e) => {
            assert!(!e.to_string().is_empty());
            assert!(private.is_err() && public.is_err(), "decoders disagree");
            Outcome::Error
        }
    }
}

/// One change to a key file.
#[derive(Debug, Clone)]
enum Mutation {
    FlipBit(Index, u8),
    Overwrite(Index, u8),
    Truncate(Index),
    Insert(Index, u8),
    Delete(Index, usize),
    DuplicateLine(Index),
    DropLine(Index),
    SwapLines(Index, Index),
    Json(usize, JsonChange),
}

/// A change to one field of a JSON key file.
#[derive(Debug, Clone)]
enum JsonChange {
    Remove,
    Null,
    Number(i64),
    Text(String),
    /// Add a small integer to the field's hexadecimal value.
    Add(i64),
    /// Give the field another field's value.
    CopyFrom(usize),
}

const JSON_FIELDS: [&str; 13] = [
    "type", "version", "variant", "bits", "n", "e", "d", "p", "q", "dp", "dq", "qinv", "comment",
];

fn mutation() -> impl Strategy<Value = Mutation> {
    let text = prop_oneof![
        Just(String::new()),
        Just("hourglass-rsa-private-key".to_string()),
        Just("hourglass-rsa-public-key".to_string()),
        Just("standard".to_string()),
        Just("crt".to_string()),
        Just("rebalanced".to_string()),
        Just("scheme-a".to_string()),
        Just("scheme-b".to_string()),
        "[0-9a-fA-Fx+ -]{0,12}",
    ];
    let json = prop_oneof![
        Just(JsonChange::Remove),
        Just(JsonChange::Null),
        any::<i64>().prop_map(JsonChange::Number),
        (0i64..1025).prop_map(JsonChange::Number),
        text.prop_map(JsonChange::Text),
        (-4i64..5).prop_map(JsonChange::Add),
        (0..JSON_FIELDS.len()).prop_map(JsonChange::CopyFrom),
    ];
    prop_oneof![
        3 => (any::<Index>(), 0u8..8).prop_map(|(i, b)| Mutation::FlipBit(i, b)),
        1 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Overwrite(i, b)),
        1 => any::<Index>().prop_map(Mutation::Truncate),
        2 => (any::<Index>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        2 => (any::<Index>(), 1usize..16).prop_map(|(i, n)| Mutation::Delete(i, n)),
        2 => any::<Index>().prop_map(Mutation::DuplicateLine),
        1 => any::<Index>().prop_map(Mutation::DropLine),
        1 => (any::<Index>(), any::<Index>()).prop_map(|(a, b)| Mutation::SwapLines(a, b)),
        3 => ((0..JSON_FIELDS.len()), json).prop_map(|(f, c)| Mutation::Json(f, c)),
    ]
}

fn split_lines(bytes: &[u8]) -> Vec<Vec<u8>> {
    bytes
        .split_inclusive(|&b| b == b'\n')
        .map(<[u8]>::to_vec)
        .collect()
}

fn apply_json(bytes: &[u8], field: usize, change: &JsonChange) -> Option<Vec<u8>> {
    let mut value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    let object = value.as_object_mut()?;
    let name = JSON_FIELDS[field];
    let new = match change {
        JsonChange::Remove => {
            object.remove(name);
            None
        }
        JsonChange::Null => Some(serde_json::Value::Null),
        JsonChange::Number(x) => Some((*x).into()),
        JsonChange::Text(s) => Some(s.clone().into()),
        JsonChange::Add(k) => {
            let old = object.get(name)?.as_str()?;
            let x = Integer::from_str_radix(old, 16).ok()? + *k;
            Some(format!("{:x}", x.abs()).into())
        }
        JsonChange::CopyFrom(other) => Some(object.get(JSON_FIELDS[*other])?.clone()),
    };
    if let Some(new) = new {
        object.insert(name.to_string(), new);
    }
    serde_json::to_vec_pretty(&value).ok()
}

fn apply(bytes: &mut Vec<u8>, m: &Mutation) {
    let len = bytes.len();
    match m {
        Mutation::FlipBit(i, bit) if len > 0 => bytes[i.index(len)] ^= 1 << bit,
        Mutation::Overwrite(i, b) if len > 0 => bytes[i.index(len)] = *b,
        Mutation::Truncate(i) => bytes.truncate(i.index(len + 1)),
        Mutation::Insert(i, b) => bytes.insert(i.index(len + 1), *b),
        Mutation::Delete(i, n) if len > 0 => {
            let at = i.index(len);
            bytes.drain(at..(at + n).min(len));
        }
        Mutation::DuplicateLine(i) | Mutation::DropLine(i) => {
            let mut lines = split_lines(bytes);
            if lines.is_empty() {
                return;
            }
            let at = i.index(lines.len());
            if matches!(m, Mutation::DuplicateLine(_)) {
                let line = lines[at].clone();
                lines.insert(at, line);
            } else {
                lines.remove(at);
            }
            *bytes = lines.concat();
        }
        Mutation::SwapLines(a, b) => {
            let mut lines = split_lines(bytes);
            if lines.is_empty() {
                return;
            }
            let (a, b) = (a.index(lines.len()), b.index(lines.len()));
            lines.swap(a, b);
            *bytes = lines.concat();
        }
        Mutation::Json(field, change) => {
            if let Some(new) = apply_json(bytes, *field, change) {
                *bytes = new;
            }
        }
        _ => {}
    }
}

fn config(cases: u32, seed: u64) -> Config {
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        ..Config::default()
    }
}

/// Mutated key files never make a decoder panic, and whatever still decodes is sound. The
/// outcomes are counted, so the test fails if the mutations stop reaching the success paths.
#[test]
fn mutated_key_files_decode_safely() {
    let counts = [
        AtomicUsize::new(0),
        AtomicUsize::new(0),
        AtomicUsize::new(0),
    ];
    let strategy = (0..SEEDS.len(), prop::collection::vec(mutation(), 1..5));
    let mut runner = TestRunner::new(config(4096, 0x686f_7572_676c_6173));
    runner
        .run(&strategy, |(seed, mutations)| {
            let mut bytes = SEEDS[seed].clone();
            for m in &mutations {
                apply(&mut bytes, m);
            }
            let outcome = check_input(&bytes);
            counts[outcome as usize].fetch_add(1, Ordering::Relaxed);
            Ok(())
        })
        .unwrap();
    let [private, public, error] = counts.map(AtomicUsize::into_inner);
    eprintln!("mutated inputs: {private} private keys, {public} public keys, {error} errors");
    assert!(
        private >= 50 && public >= 100 && error >= 1000,
        "{private} {public} {error}"
    );
}

proptest! {
    #![proptest_config(config(256, 0x7061_7273_6572))]

    /// Arbitrary short inputs, alone and behind each form's leading bytes.
    #[test]
    fn arbitrary_bytes_decode_safely(
        prefix in prop_oneof![
            Just(&b""[..]),
            Just(&b"-----BEGIN PRIVATE KEY-----\n"[..]),
            Just(&b"-----BEGIN RSA PUBLIC KEY-----\n"[..]),
            Just(&b"{"[..]),
            Just(&b"\x30\x82"[..]),
            Just(&b"n = "[..]),
        ],
        body in prop::collection::vec(any::<u8>(), 0..300),
    ) {
        let mut bytes = prefix.to_vec();
        bytes.extend_from_slice(&body);
        check_input(&bytes);
    }
}

#[test]
fn unmutated_seeds_decode_to_the_keys() {
    assert_eq!(SEEDS.len(), KEYS.len() * 12);
    for (i, seed) in SEEDS.iter().enumerate() {
        let key = &KEYS[i / 12];
        let _ = check_input(seed);
        assert_eq!(&decode_public_key(seed).unwrap(), key.public());
        let private = i % 12 < 10 && i % 2 == 0 || i % 12 == 10;
        assert_eq!(decode_private_key(seed).is_ok(), private, "seed {i}");
    }
}

// ---------------------------------------------------------------------------------------------
// Hand-written cases: each defect must be an error whose message names it.

/// `n, e, d, p, q, dp, dq, qinv` of a key, as plain integers.
fn components(key: &PrivateKey) -> [Integer; 8] {
    let [d, p, q, dp, dq, qinv] = key.secret_components();
    [
        key.public().n().clone(),
        key.public().e().clone(),
        d.expose_owned(),
        p.expose_owned(),
        q.expose_owned(),
        dp.expose_owned(),
        dq.expose_owned(),
        qinv.expose_owned(),
    ]
}

fn be(x: &Integer) -> Vec<u8> {
    if *x == 0 {
        vec![0]
    } else {
        x.to_digits::<u8>(Order::Msf)
    }
}

/// PKCS#1 `RSAPrivateKey` DER from arbitrary components, optionally with `otherPrimeInfos`.
fn pkcs1_private_der(c: &[Integer; 8], other_primes: Option<&[Integer; 3]>) -> Vec<u8> {
    let bytes: Vec<Vec<u8>> = c.iter().map(be).collect();
    let other: Option<Vec<Vec<u8>>> = other_primes.map(|o| o.iter().map(be).collect());
    fn u(b: &[u8]) -> UintRef<'_> {
        UintRef::new(b).unwrap()
    }
    let infos = other.as_ref().map(|o| {
        vec![pkcs1::OtherPrimeInfo {
            prime: u(&o[0]),
            exponent: u(&o[1]),
            coefficient: u(&o[2]),
        }]
    });
    pkcs1::RsaPrivateKey {
        modulus: u(&bytes[0]),
        public_exponent: u(&bytes[1]),
        private_exponent: u(&bytes[2]),
        prime1: u(&bytes[3]),
        prime2: u(&bytes[4]),
        exponent1: u(&bytes[5]),
        exponent2: u(&bytes[6]),
        coefficient: u(&bytes[7]),
        other_prime_infos: infos,
    }
    .to_der()
    .unwrap()
}

fn pkcs8_der(pkcs1: &[u8], oid: der::asn1::ObjectIdentifier) -> Vec<u8> {
    let algorithm = pkcs8::AlgorithmIdentifierRef {
        oid,
        parameters: Some(AnyRef::NULL),
    };
    pkcs8::PrivateKeyInfo::new(algorithm, pkcs1)
        .to_der()
        .unwrap()
}

fn pem(label: &str, der: &[u8]) -> Vec<u8> {
    pem_rfc7468::encode_string(label, pem_rfc7468::LineEnding::LF, der)
        .unwrap()
        .into_bytes()
}

const NAMES: [&str; 8] = ["n", "e", "d", "p", "q", "dp", "dq", "qinv"];

fn hex_file(c: &[Integer; 8]) -> Vec<u8> {
    let mut s = String::new();
    for (name, x) in NAMES.iter().zip(c) {
        s.push_str(&format!("{name} = {x:x}\n"));
    }
    s.into_bytes()
}

fn json_file(c: &[Integer; 8]) -> Vec<u8> {
    let mut object = serde_json::Map::new();
    object.insert("type".into(), "hourglass-rsa-private-key".into());
    object.insert("version".into(), 1.into());
    object.insert("variant".into(), serde_json::Value::Null);
    object.insert("bits".into(), c[0].significant_bits().into());
    for (name, x) in NAMES.iter().zip(c) {
        object.insert((*name).into(), format!("{x:x}").into());
    }
    serde_json::to_vec_pretty(&object).unwrap()
}

/// The same components in every private form: PKCS#8 PEM and DER, PKCS#1 PEM and bare DER,
/// hex, JSON.
fn every_private_form(c: &[Integer; 8]) -> Vec<(&'static str, Vec<u8>)> {
    let pkcs1 = pkcs1_private_der(c, None);
    let pkcs8 = pkcs8_der(&pkcs1, pkcs1::ALGORITHM_OID);
    vec![
        ("pkcs8 pem", pem("PRIVATE KEY", &pkcs8)),
        ("pkcs8 der", pkcs8),
        ("pkcs1 pem", pem("RSA PRIVATE KEY", &pkcs1)),
        ("pkcs1 der", pkcs1),
        ("hex", hex_file(c)),
        ("json", json_file(c)),
    ]
}

#[track_caller]
fn assert_err_mentions(what: &str, bytes: &[u8], needle: &str) {
    match decode_private_key(bytes) {
        Ok(_) => panic!("{what}: decoded, but it should be rejected ({needle})"),
        Err(e) => {
            let msg = e.to_string();
            assert!(
                msg.contains(needle),
                "{what}: message {msg:?} does not mention {needle:?}"
            );
        }
    }
    assert!(
        decode_public_key(bytes).is_err(),
        "{what}: decode_public_key accepted it"
    );
    assert!(decode_key(bytes).is_err(), "{what}: decode_key accepted it");
}

#[track_caller]
fn assert_every_form_rejected(what: &str, c: &[Integer; 8], needle: &str) {
    for (form, bytes) in every_private_form(c) {
        assert_err_mentions(&format!("{what} ({form})"), &bytes, needle);
    }
}

fn crt_components() -> [Integer; 8] {
    components(&KEYS[0])
}

#[test]
fn hand_built_forms_of_the_valid_key_decode() {
    // The builders above are right, so the rejections below are due to the defect alone.
    for (form, bytes) in every_private_form(&crt_components()) {
        let key = decode_private_key(&bytes).unwrap_or_else(|e| panic!("{form}: {e}"));
        assert!(same_private(&key, &KEYS[0]), "{form}");
    }
}

#[test]
fn pem_with_a_wrong_label_is_rejected() {
    let pkcs8 = pkcs8_der(
        &pkcs1_private_der(&crt_components(), None),
        pkcs1::ALGORITHM_OID,
    );
    for label in [
        "CERTIFICATE",
        "EC PRIVATE KEY",
        "OPENSSH PRIVATE KEY",
        "RSA KEY",
    ] {
        assert_err_mentions(
            label,
            &pem(label, &pkcs8),
            &format!("PEM label '{label}' is not an RSA key"),
        );
    }
    // The label of a PKCS#1 structure on a PKCS#8 body (and vice versa) is malformed DER.
    assert_err_mentions(
        "PKCS#8 body, PKCS#1 label",
        &pem("RSA PRIVATE KEY", &pkcs8),
        "malformed RSAPrivateKey",
    );
    let pkcs1 = pkcs1_private_der(&crt_components(), None);
    assert_err_mentions(
        "PKCS#1 body, PKCS#8 label",
        &pem("PRIVATE KEY", &pkcs1),
        "malformed PKCS#8",
    );
}

#[test]
fn encrypted_pkcs8_needs_a_passphrase() {
    // Without a passphrase the label alone says the key is encrypted; with one, a body that is
    // not an EncryptedPrivateKeyInfo is a parse error, never a panic or another key.
    let bytes = pem("ENCRYPTED PRIVATE KEY", &[0x30, 0x00]);
    assert_err_mentions("encrypted PKCS#8", &bytes, "encrypted with a passphrase");
    let err = hourglass_rsa::encoding::decode_key_with_passphrase(&bytes, b"pw").unwrap_err();
    assert!(err.to_string().contains("malformed encrypted key"), "{err}");
}

#[test]
fn multi_prime_pkcs1_is_rejected() {
    let c = crt_components();
    // A genuine three-prime key: n = p q r, d modulo lcm(p-1, q-1, r-1).
    let r = Integer::from(&c[4] + 1000u32).next_prime();
    let n = Integer::from(&c[0] * &r);
    let lambda = {
        let pq = Integer::from(&c[3] - 1u32).lcm(&Integer::from(&c[4] - 1u32));
        pq.lcm(&Integer::from(&r - 1u32))
    };
    let d = Integer::from(c[1].invert_ref(&lambda).unwrap());
    let dp = &d % Integer::from(&c[3] - 1u32);
    let dq = &d % Integer::from(&c[4] - 1u32);
    let dr = &d % Integer::from(&r - 1u32);
    let pq = Integer::from(&c[3] * &c[4]);
    let tr = Integer::from(pq.invert_ref(&r).unwrap());
    let three = [
        n,
        c[1].clone(),
        d,
        c[3].clone(),
        c[4].clone(),
        dp,
        dq,
        c[7].clone(),
    ];
    let der = pkcs1_private_der(&three, Some(&[r, dr, tr]));
    let needle = "multi-prime RSA keys are not supported";
    assert_err_mentions(
        "multi-prime PKCS#1 PEM",
        &pem("RSA PRIVATE KEY", &der),
        needle,
    );
    assert_err_mentions("multi-prime PKCS#1 DER", &der, needle);
    let pkcs8 = pkcs8_der(&der, pkcs1::ALGORITHM_OID);
    assert_err_mentions(
        "multi-prime PKCS#8 PEM",
        &pem("PRIVATE KEY", &pkcs8),
        needle,
    );
    assert_err_mentions("multi-prime PKCS#8 DER", &pkcs8, needle);
}

#[test]
fn modulus_not_p_times_q_is_rejected() {
    let mut c = crt_components();
    c[4] = Integer::from(&c[4] + 2u32).next_prime();
    assert_every_form_rejected("n != p*q", &c, "n != p * q");
}

#[test]
fn wrong_crt_exponents_are_rejected() {
    let base = crt_components();
    let mut c = base.clone();
    c[5] += 2u32;
    assert_every_form_rejected("d_p + 2", &c, "d_p != d mod (p-1)");
    // Congruent but not reduced: still not the canonical CRT exponent.
    let mut c = base.clone();
    c[5] += Integer::from(&c[3] - 1u32);
    assert_every_form_rejected("d_p + (p-1)", &c, "d_p != d mod (p-1)");
    let mut c = base.clone();
    c[6] -= 2u32;
    assert_every_form_rejected("d_q - 2", &c, "d_q != d mod (q-1)");
    let mut c = base;
    c[2] += 2u32;
    assert_every_form_rejected("d + 2", &c, "e * d != 1");
}

#[test]
fn wrong_coefficient_is_rejected() {
    let mut c = crt_components();
    c[7] += 1u32;
    assert_every_form_rejected("qinv + 1", &c, "coefficient != q^-1 mod p");
    // p and q swapped (with their CRT exponents) leaves the coefficient for the old order.
    let mut c = crt_components();
    c.swap(3, 4);
    c.swap(5, 6);
    assert_every_form_rejected("p and q swapped", &c, "coefficient != q^-1 mod p");
}

#[test]
fn composite_prime_is_rejected() {
    let base = crt_components();
    let mut c = base.clone();
    c[3] = Integer::from(&base[3] * 15u32);
    c[0] = Integer::from(&c[3] * &c[4]);
    assert_every_form_rejected("p composite", &c, "p or q is not prime");
    // A Carmichael-style trap for weak tests is the square of a base-2 Wieferich prime:
    // it is a base-2 strong probable prime, so only the Lucas half of BPSW catches it.
    let mut c = base;
    c[3] = Integer::from(1093u32 * 1093);
    c[0] = Integer::from(&c[3] * &c[4]);
    assert_every_form_rejected("p = 1093^2", &c, "p or q is not prime");
}

#[test]
fn even_public_exponent_is_rejected() {
    let mut c = crt_components();
    c[1] += 1u32;
    assert_every_form_rejected("e even", &c, "public exponent must be odd");
    let n = KEYS[0].public().n();
    let public = format!("n = {n:x}\ne = 10000\n");
    assert_err_mentions(
        "public e even (hex)",
        public.as_bytes(),
        "public exponent must be odd",
    );
}

#[test]
fn oversize_input_is_rejected() {
    // A valid key followed by comment lines, just over the limit: the size check comes first.
    let mut bytes = encode_private_key(&KEYS[0], KeyFormat::Hex)
        .unwrap()
        .to_vec();
    while bytes.len() <= MAX_KEY_FILE {
        bytes.extend_from_slice(b"# padding padding padding padding padding padding padding\n");
    }
    assert_err_mentions("over 1 MiB", &bytes, "larger than 1048576 bytes");
    // Exactly at the limit is still parsed (and this one is a valid key).
    let mut bytes = encode_private_key(&KEYS[0], KeyFormat::Hex)
        .unwrap()
        .to_vec();
    bytes.resize(MAX_KEY_FILE, b'\n');
    assert!(same_private(&decode_private_key(&bytes).unwrap(), &KEYS[0]));
}

#[test]
fn oversize_integers_are_rejected_in_every_form() {
    // d + k lcm(p-1, q-1) is still a valid private exponent, but one over 4096 bytes (8192 hex
    // digits) is refused in every form, so that whatever decodes can be re-encoded in any form.
    let mut c = crt_components();
    let lambda = Integer::from(&c[3] - 1u32).lcm(&Integer::from(&c[4] - 1u32));
    c[2] += lambda * (Integer::from(1) << 33000u32);
    assert_every_form_rejected("d of 33000 bits", &c, "integers are limited to 4096 bytes");
    // The same for public keys, and for a modulus: 4097-byte n in SPKI, PKCS#1 and hex.
    let big_n = (Integer::from(1) << (8 * 4096 + 7u32)) + 1u32;
    let n_bytes = big_n.to_digits::<u8>(Order::Msf);
    let e_bytes = [1u8, 0, 1];
    let pkcs1 = pkcs1::RsaPublicKey {
        modulus: UintRef::new(&n_bytes).unwrap(),
        public_exponent: UintRef::new(&e_bytes).unwrap(),
    }
    .to_der()
    .unwrap();
    assert_err_mentions(
        "4097-byte n (PKCS#1 DER)",
        &pkcs1,
        "field n: 4097-byte integer",
    );
    let needle = "integers are limited to 4096 bytes";
    assert_err_mentions(
        "4097-byte n (PKCS#1 PEM)",
        &pem("RSA PUBLIC KEY", &pkcs1),
        needle,
    );
    let hex = format!("n = {big_n:x}\ne = 10001\n");
    assert_err_mentions("4097-byte n (hex)", hex.as_bytes(), needle);
}

#[test]
fn pem_tolerates_surrounding_whitespace_only() {
    let pem = String::from_utf8(
        encode_private_key(&KEYS[0], KeyFormat::Pem)
            .unwrap()
            .to_vec(),
    )
    .unwrap();
    for ok in [
        format!("\n\n{pem}\n\n"),
        format!("  {pem} \t\r\n"),
        pem.trim_end().to_string(),
        pem.replace('\n', "\r\n"),
    ] {
        let key = decode_private_key(ok.as_bytes()).unwrap_or_else(|e| panic!("{ok:?}: {e}"));
        assert!(same_private(&key, &KEYS[0]));
    }
    // Anything else around the block, or a body wrapped at another width, is malformed PEM.
    let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
    let wrapped76: Vec<&str> = body
        .as_bytes()
        .chunks(76)
        .map(|c| std::str::from_utf8(c).unwrap())
        .collect();
    for bad in [
        format!("{pem}junk\n"),
        format!("{pem}{pem}"),
        format!(
            "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
            wrapped76.join("\n")
        ),
        pem.replace("END PRIVATE KEY", "END RSA PRIVATE KEY"),
    ] {
        assert_err_mentions("PEM with extra text", bad.as_bytes(), "malformed PEM");
    }
}

#[test]
fn empty_input_is_rejected() {
    for bytes in [&b""[..], b" ", b"\n\n\t \r\n"] {
        assert_err_mentions("empty", bytes, "the file is empty");
    }
}

#[test]
fn other_defects_are_named() {
    let c = crt_components();
    // PKCS#8 for another algorithm (id-ecPublicKey).
    let ec = der::asn1::ObjectIdentifier::new_unwrap("1.2.840.10045.2.1");
    let pkcs8 = pkcs8_der(&pkcs1_private_der(&c, None), ec);
    assert_err_mentions(
        "EC PKCS#8 PEM",
        &pem("PRIVATE KEY", &pkcs8),
        "is not rsaEncryption",
    );
    assert_err_mentions("EC PKCS#8 DER", &pkcs8, "is not rsaEncryption");
    // JSON: unknown version, wrong bit count, unknown field, wrong type, unknown variant.
    let json: serde_json::Value = serde_json::from_slice(&json_file(&c)).unwrap();
    let with = |field: &str, value: serde_json::Value| {
        let mut j = json.clone();
        j[field] = value;
        serde_json::to_vec(&j).unwrap()
    };
    assert_err_mentions(
        "JSON version 2",
        &with("version", 2.into()),
        "unsupported JSON key version 2",
    );
    assert_err_mentions(
        "JSON bits",
        &with("bits", 511.into()),
        "bits says 511 but n has 512",
    );
    assert_err_mentions(
        "JSON extra field",
        &with("comment", "x".into()),
        "unknown field `comment`",
    );
    assert_err_mentions(
        "JSON type",
        &with("type", "rsa".into()),
        "JSON \"type\" is 'rsa'",
    );
    assert_err_mentions(
        "JSON variant",
        &with("variant", "fast".into()),
        "unknown variant `fast`",
    );
    assert_err_mentions(
        "JSON non-hex",
        &with("p", "0x12".into()),
        "field p: expected hexadecimal digits",
    );
    // Hex: a field twice, an unknown field, a missing prime.
    let hex = String::from_utf8(hex_file(&c)).unwrap();
    let first = hex.lines().next().unwrap();
    assert_err_mentions(
        "hex duplicate",
        format!("{hex}{first}\n").as_bytes(),
        "field 'n' appears twice",
    );
    assert_err_mentions(
        "hex unknown",
        format!("{hex}r = 5\n").as_bytes(),
        "unknown field 'r'",
    );
    let no_q: String = hex
        .lines()
        .filter(|l| !l.starts_with("q "))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_err_mentions(
        "hex without q",
        no_q.as_bytes(),
        "hex private key lacks field 'q'",
    );
    assert_err_mentions(
        "hex variant",
        format!("variant = fast\n{hex}").as_bytes(),
        "unknown variant 'fast'",
    );
}

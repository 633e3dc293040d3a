//! Known-answer tests against RSA Laboratories' published PKCS #1 vectors (see
//! `tests/vectors/README.md` for provenance and license).
//!
//! One table-driven test walks every example of every file and checks that the deterministic
//! parts of our padding reproduce the published bytes exactly, and that the randomized
//! front-ends (`Oaep::decrypt`, `Pss::verify`, `Pkcs1v15Sign`) accept them. The number of
//! examples checked is compared with the number the files announce, so a parser that silently
//! reads nothing fails.

use std::collections::HashMap;
use std::path::PathBuf;

use hourglass_arith::entropy::SeededEntropy;
use hourglass_rsa::encoding::{decode_private_key, decode_public_key};
use hourglass_rsa::hazmat::{oaep_encode, pss_encode, raw_decrypt, raw_encrypt};
use hourglass_rsa::padding::{os2ip, Oaep, Pkcs1v15Sign, Pss};
use hourglass_rsa::{HashAlg, PrivateKey, Variant};

/// Examples in `oaep-vect.txt`: 10 keys x 6 messages.
const OAEP_EXAMPLES: usize = 60;
/// Examples in `pss-vect.txt`: 10 keys x 6 messages.
const PSS_EXAMPLES: usize = 60;
/// Examples in `pkcs1v15sign-vectors.txt`: 15 keys x 20 messages.
const PKCS1V15_EXAMPLES: usize = 300;
/// Keys in the three files above.
const KEYS: usize = 10 + 10 + 15;

fn vector_file(name: &str) -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// A `# Label:` line followed by the bytes of the hex lines under it.
#[derive(Debug)]
struct Section {
    label: String,
    data: Vec<u8>,
}

/// Splits a vector file into labelled sections. Comment lines (`# ...`) start a section, except
/// rules made only of `-` or `=`; lines made only of two-digit hex tokens add bytes to the
/// current section; anything else (prose) is skipped. Handles CRLF and trailing whitespace.
fn sections(text: &str) -> Vec<Section> {
    let mut out: Vec<Section> = Vec::new();
    for raw in text.lines() {
        let line = raw.trim();
        if let Some(comment) = line.strip_prefix('#') {
            let label = comment.trim().trim_end_matches(':').trim();
            if !label.is_empty() && label.chars().all(|c| c == '-' || c == '=') {
                continue;
            }
            out.push(Section {
                label: label.to_string(),
                data: Vec::new(),
            });
            continue;
        }
        let tokens: Vec<&str> = line.split_whitespace().collect();
        let is_hex = !tokens.is_empty()
            && tokens
                .iter()
                .all(|t| t.len() == 2 && t.bytes().all(|b| b.is_ascii_hexdigit()));
        if !is_hex {
            continue;
        }
        if let Some(current) = out.last_mut() {
            for t in tokens {
                current
                    .data
                    .push(u8::from_str_radix(t, 16).expect("checked hex"));
            }
        }
    }
    out
}

/// Key components as published (big-endian bytes).
#[derive(Default, Clone, Debug)]
struct KeyParts {
    n: Vec<u8>,
    e: Vec<u8>,
    d: Vec<u8>,
    p: Vec<u8>,
    q: Vec<u8>,
    dp: Vec<u8>,
    dq: Vec<u8>,
    qinv: Vec<u8>,
}

impl KeyParts {
    /// Records a key field if `label` names one; `private` tells the vect files' two meanings
    /// of "Exponent" apart (e in the public-key block, d in the private-key block).
    fn take(&mut self, label: &str, data: &[u8], private: bool) -> bool {
        let slot = match label {
            "Modulus" => &mut self.n,
            "Exponent" if !private => &mut self.e,
            "Exponent" | "Private exponent" => &mut self.d,
            "Public exponent" => &mut self.e,
            "Prime 1" => &mut self.p,
            "Prime 2" => &mut self.q,
            "Prime exponent 1" => &mut self.dp,
            "Prime exponent 2" => &mut self.dq,
            "Coefficient" => &mut self.qinv,
            _ => return false,
        };
        *slot = data.to_vec();
        true
    }

    /// Builds the key through the checked constructor and compares the coefficient too.
    fn build(&self, variant: Option<Variant>) -> PrivateKey {
        for (name, v) in [
            ("n", &self.n),
            ("e", &self.e),
            ("d", &self.d),
            ("p", &self.p),
            ("q", &self.q),
            ("dp", &self.dp),
            ("dq", &self.dq),
            ("qinv", &self.qinv),
        ] {
            assert!(
                !v.is_empty(),
                "key component {name} missing from the vector file"
            );
        }
        let key = PrivateKey::from_components(
            os2ip(&self.n),
            os2ip(&self.e),
            os2ip(&self.d),
            os2ip(&self.p),
            os2ip(&self.q),
            Some(os2ip(&self.dp)),
            Some(os2ip(&self.dq)),
            variant,
        )
        .expect("published key is consistent");
        assert_eq!(
            *key.secret_components()[5].expose(),
            os2ip(&self.qinv),
            "coefficient (q^-1 mod p) differs from the published one"
        );
        key
    }
}

/// One example: its name, the key it belongs to, and its labelled fields.
struct Example {
    name: String,
    key: KeyParts,
    fields: HashMap<String, Vec<u8>>,
}

impl Example {
    fn get(&self, label: &str) -> &[u8] {
        self.fields
            .get(label)
            .unwrap_or_else(|| panic!("{}: field '{label}' missing", self.name))
    }
}

/// Walks a `*-vect.txt` file: key blocks start with `Example N: ...`, examples with a label
/// starting with `example_prefix` (e.g. `OAEP Example`), and an example ends with its
/// `last_field`. Returns the examples and the number of key blocks seen.
fn parse_vect(text: &str, example_prefix: &str, last_field: &str) -> (Vec<Example>, usize) {
    let mut key = KeyParts::default();
    let mut keys = 0;
    let mut private = false;
    let mut current: Option<Example> = None;
    let mut done = Vec::new();
    for s in sections(text) {
        let label = s.label.as_str();
        if label.starts_with("Example ") {
            key = KeyParts::default();
            keys += 1;
            private = false;
            current = None;
        } else if label == "Public key" {
            private = false;
        } else if label == "Private key" {
            private = true;
        } else if label.starts_with(example_prefix) {
            current = Some(Example {
                name: label.to_string(),
                key: key.clone(),
                fields: HashMap::new(),
            });
        } else if let Some(ex) = current.as_mut() {
            if !s.data.is_empty() {
                ex.fields.insert(label.to_string(), s.data.clone());
            }
            if label == last_field {
                done.push(current.take().expect("current example"));
            }
        } else if !s.data.is_empty() {
            key.take(label, &s.data, private);
        }
    }
    assert!(
        current.is_none(),
        "the last example lacks its '{last_field}' field"
    );
    (done, keys)
}

/// A key built twice: with the CRT (the default private operation) and without it.
fn both_paths(parts: &KeyParts) -> [PrivateKey; 2] {
    [parts.build(None), parts.build(Some(Variant::Standard))]
}

fn check_oaep(ex: &Example, rng: &mut SeededEntropy) {
    let (msg, seed, ct) = (ex.get("Message"), ex.get("Seed"), ex.get("Encryption"));
    let keys = both_paths(&ex.key);
    let public = keys[0].public_key();
    let k = public.size();
    assert_eq!(ct.len(), k, "{}: ciphertext length", ex.name);
    let em = oaep_encode(HashAlg::Sha1, b"", msg, seed, k).unwrap();
    assert_eq!(em.len(), k);
    assert_eq!(em[0], 0, "{}: EM must start with a zero byte", ex.name);
    assert_eq!(
        raw_encrypt(&public, &em).unwrap(),
        ct,
        "{}: ciphertext",
        ex.name
    );
    let oaep = Oaep::new(HashAlg::Sha1);
    for key in &keys {
        assert_eq!(
            raw_decrypt(key, ct, rng).unwrap(),
            em,
            "{}: EM = c^d mod n",
            ex.name
        );
        assert_eq!(
            oaep.decrypt(key, ct, rng).unwrap(),
            msg,
            "{}: decryption",
            ex.name
        );
    }
    // The wrong label, hash or a flipped bit must all fail.
    assert!(Oaep::new(HashAlg::Sha1)
        .label(b"x")
        .decrypt(&keys[0], ct, rng)
        .is_err());
    assert!(Oaep::new(HashAlg::Sha256)
        .decrypt(&keys[0], ct, rng)
        .is_err());
    let mut bad = ct.to_vec();
    bad[k / 2] ^= 0x10;
    assert!(
        oaep.decrypt(&keys[0], &bad, rng).is_err(),
        "{}: tampered ciphertext accepted",
        ex.name
    );
    // And our own randomized encryption round-trips with this key.
    let again = oaep.encrypt(&public, msg, rng).unwrap();
    assert_ne!(again, ct, "fresh seeds give a fresh ciphertext");
    assert_eq!(oaep.decrypt(&keys[0], &again, rng).unwrap(), msg);
}

fn check_pss(ex: &Example, rng: &mut SeededEntropy) {
    let (msg, salt, sig) = (
        ex.get("Message to be signed"),
        ex.get("Salt"),
        ex.get("Signature"),
    );
    let keys = both_paths(&ex.key);
    let public = keys[0].public_key();
    let k = public.size();
    assert_eq!(sig.len(), k, "{}: signature length", ex.name);
    let em_bits = public.bits() - 1;
    let em = pss_encode(HashAlg::Sha1, &HashAlg::Sha1.digest(msg), salt, em_bits).unwrap();
    assert_eq!(em.len(), em_bits.div_ceil(8) as usize);
    for key in &keys {
        assert_eq!(
            raw_decrypt(key, &em, rng).unwrap(),
            sig,
            "{}: signature = EM^d mod n",
            ex.name
        );
    }
    let mut em_k = vec![0u8; k - em.len()];
    em_k.extend_from_slice(&em);
    assert_eq!(
        raw_encrypt(&public, sig).unwrap(),
        em_k,
        "{}: s^e mod n = EM",
        ex.name
    );
    assert!(
        Pss::new(HashAlg::Sha1).verify(&public, msg, sig).is_ok(),
        "{}: verify",
        ex.name
    );
    assert!(Pss::new(HashAlg::Sha1)
        .salt_len(salt.len())
        .verify(&public, msg, sig)
        .is_ok());
    assert!(Pss::new(HashAlg::Sha1)
        .salt_len(salt.len() + 1)
        .verify(&public, msg, sig)
        .is_err());
    assert!(Pss::new(HashAlg::Sha256).verify(&public, msg, sig).is_err());
    let mut other = msg.to_vec();
    other[0] ^= 1;
    assert!(
        Pss::new(HashAlg::Sha1)
            .verify(&public, &other, sig)
            .is_err(),
        "{}: other message",
        ex.name
    );
    let mut bad = sig.to_vec();
    bad[k - 1] ^= 1;
    assert!(
        Pss::new(HashAlg::Sha1).verify(&public, msg, &bad).is_err(),
        "{}: tampered",
        ex.name
    );
}

fn check_pkcs1v15(ex: &Example, rng: &mut SeededEntropy) {
    let (msg, sig) = (ex.get("Message to be signed"), ex.get("Signature"));
    let keys = both_paths(&ex.key);
    let public = keys[0].public_key();
    let v15 = Pkcs1v15Sign::new(HashAlg::Sha1);
    for key in &keys {
        assert_eq!(
            v15.sign(key, msg, rng).unwrap(),
            sig,
            "{}: signature",
            ex.name
        );
    }
    assert!(v15.verify(&public, msg, sig).is_ok(), "{}: verify", ex.name);
    assert!(Pkcs1v15Sign::new(HashAlg::Sha256)
        .verify(&public, msg, sig)
        .is_err());
    let mut bad = sig.to_vec();
    bad[0] ^= 0x01;
    assert!(
        v15.verify(&public, msg, &bad).is_err(),
        "{}: tampered",
        ex.name
    );
}

/// The `*-int.txt` files: one example each, with the intermediate encoded message.
fn parse_int(text: &str) -> (KeyParts, HashMap<String, Vec<u8>>, Vec<Section>) {
    let all = sections(text);
    let ber_start = all
        .iter()
        .position(|s| s.label.starts_with("BER encoding"))
        .unwrap_or(all.len());
    let mut key = KeyParts::default();
    let mut fields = HashMap::new();
    for s in &all[..ber_start] {
        if s.data.is_empty() {
            continue;
        }
        if !key.take(&s.label, &s.data, true) {
            fields
                .entry(s.label.clone())
                .or_insert_with(|| s.data.clone());
        }
    }
    let rest = all.into_iter().skip(ber_start).collect();
    (key, fields, rest)
}

/// The bytes of all sections from the one labelled `from` up to (not including) the first
/// whose label starts with `until`: a DER structure printed with comments between its fields.
fn der_between(rest: &[Section], from: &str, until: &str) -> Vec<u8> {
    let start = rest
        .iter()
        .position(|s| s.label == from)
        .unwrap_or_else(|| panic!("no '{from}' block"));
    rest[start..]
        .iter()
        .take_while(|s| s.label == from || !s.label.starts_with(until))
        .flat_map(|s| s.data.iter().copied())
        .collect()
}

/// Returns the number of examples checked (1).
fn check_oaep_int(rng: &mut SeededEntropy) -> usize {
    let (parts, f, rest) = parse_int(&vector_file("pkcs-1v2-1d2-vec/oaep-int.txt"));
    let key = parts.build(None);
    let public = key.public_key();
    let msg = &f["Message to be encrypted"];
    let em = oaep_encode(HashAlg::Sha1, b"", msg, &f["seed"], public.size()).unwrap();
    // The file prints EM without RFC 8017's leading zero byte (PKCS #1 v2.0 layout).
    assert_eq!(em[0], 0);
    assert_eq!(
        em[1..],
        f["EM = maskedSeed || maskedDB"][..],
        "oaep-int: EM"
    );
    let ct = &f["Ciphertext, the RSA encryption of EM"];
    assert_eq!(
        raw_encrypt(&public, &em).unwrap(),
        *ct,
        "oaep-int: ciphertext"
    );
    assert_eq!(
        Oaep::new(HashAlg::Sha1).decrypt(&key, ct, rng).unwrap(),
        *msg
    );

    // The file's DER RSAPublicKey and RSAPrivateKey decode to the same key.
    let public_der = der_between(&rest, "RSAPublicKey", "RSAPrivateKey");
    assert_eq!(
        decode_public_key(&public_der).unwrap(),
        public,
        "oaep-int: RSAPublicKey DER"
    );
    let private_der = der_between(&rest, "RSAPrivateKey", "PrivateKeyInfo");
    let decoded = decode_private_key(&private_der).expect("oaep-int: RSAPrivateKey DER");
    assert_eq!(decoded.public(), key.public());
    for (a, b) in decoded
        .secret_components()
        .iter()
        .zip(key.secret_components())
    {
        assert_eq!(
            a.expose(),
            b.expose(),
            "oaep-int: RSAPrivateKey DER component"
        );
    }
    1
}

/// Returns the number of examples checked (1).
fn check_pss_int(rng: &mut SeededEntropy) -> usize {
    let (parts, f, _) = parse_int(&vector_file("pkcs-1v2-1d2-vec/pss-int.txt"));
    let key = parts.build(None);
    let public = key.public_key();
    let msg = &f["Message to be signed"];
    let digest = HashAlg::Sha1.digest(msg);
    assert_eq!(digest, f["Message hash"], "pss-int: SHA-1 of the message");
    let em = pss_encode(HashAlg::Sha1, &digest, &f["salt"], public.bits() - 1).unwrap();
    assert_eq!(em, f["EM = maskedDB || hash || bc"], "pss-int: EM");
    let sig = &f["Signature, the RSA decryption of EM"];
    assert_eq!(
        raw_decrypt(&key, &em, rng).unwrap(),
        *sig,
        "pss-int: signature"
    );
    assert!(Pss::new(HashAlg::Sha1).verify(&public, msg, sig).is_ok());
    1
}

#[test]
fn published_pkcs1_vectors() {
    let mut rng = SeededEntropy::new(b"kat");
    type Check = fn(&Example, &mut SeededEntropy);
    let table: [(&str, &str, &str, usize, usize, Check); 3] = [
        (
            "pkcs-1v2-1d2-vec/oaep-vect.txt",
            "OAEP Example",
            "Encryption",
            OAEP_EXAMPLES,
            10,
            check_oaep,
        ),
        (
            "pkcs-1v2-1d2-vec/pss-vect.txt",
            "PSS Example",
            "Signature",
            PSS_EXAMPLES,
            10,
            check_pss,
        ),
        (
            "pkcs1v15sign-vectors.txt",
            "PKCS#1 v1.5 Signature Example",
            "Signature",
            PKCS1V15_EXAMPLES,
            15,
            check_pkcs1v15,
        ),
    ];
    let mut total = 0;
    let mut total_keys = 0;
    let mut sizes = std::collections::BTreeSet::new();
    for (file, prefix, last, expected, expected_keys, check) in table {
        let (examples, keys) = parse_vect(&vector_file(file), prefix, last);
        assert_eq!(keys, expected_keys, "{file}: key blocks parsed");
        assert_eq!(examples.len(), expected, "{file}: examples parsed");
        for ex in &examples {
            sizes.insert(os2ip(&ex.key.n).significant_bits());
            check(ex, &mut rng);
        }
        total += examples.len();
        total_keys += keys;
    }
    total += check_oaep_int(&mut rng);
    total += check_pss_int(&mut rng);
    assert_eq!(total_keys, KEYS);
    assert_eq!(total, OAEP_EXAMPLES + PSS_EXAMPLES + PKCS1V15_EXAMPLES + 2);
    // The odd sizes (1025..1031 bits) exercise emLen = k - 1 in PSS and the top-bit masking.
    assert_eq!(
        sizes.into_iter().collect::<Vec<_>>(),
        [1024, 1025, 1026, 1027, 1028, 1029, 1030, 1031, 1536, 2048]
    );
}

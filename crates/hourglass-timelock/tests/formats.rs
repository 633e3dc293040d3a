//! The committed format vectors (docs/FORMATS.md): they parse, verify, and re-serialise to the
//! same bytes, so the specification, the files and the code cannot drift apart.

use hourglass_arith::entropy::SeededEntropy;
use hourglass_timelock::submission::PuzzleSet;
use hourglass_timelock::verdict::{Verdict, Verifier, VerifyOptions};
use hourglass_timelock::{Bundle, PuzzleHash, PuzzleKey, PuzzlePublicKey, Solution};

/// The one verdict on `bundle` for `document` with a verifier's keys or public set.
fn verdict(
    verifier: &Verifier,
    bundle: &Bundle,
    document: &[u8],
    rng: &mut SeededEntropy,
) -> Verdict {
    let digest = verifier.digest(document).unwrap();
    verifier
        .verify(bundle, &digest, &VerifyOptions::default(), rng)
        .unwrap()
}

fn vector(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/vectors")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("missing vector {}: {e}", path.display()))
}

#[test]
fn puzzle_vectors_parse_verify_and_round_trip() {
    let mut rng = SeededEntropy::new(b"format test");
    let document = vector("document.txt");
    let digest = PuzzleHash::Sha256.digest(document.as_bytes());

    let public_text = vector("puzzle-2s.pub");
    let public = PuzzlePublicKey::from_json(&public_text).unwrap();
    assert_eq!(public.to_json(), public_text);
    let key2 = PuzzleKey::from_json(&vector("puzzle-2s.key")).unwrap();
    let key1 = PuzzleKey::from_json(&vector("puzzle-1s.key")).unwrap();
    assert_eq!(key2.public(), &public);
    assert_eq!(*key2.to_json(), vector("puzzle-2s.key"));

    let solution_text = vector("document.sol");
    let solution = Solution::from_json(&solution_text).unwrap();
    assert_eq!(solution.to_json(), solution_text);
    assert_eq!(solution.verify(&key2, &digest, &mut rng).unwrap(), Ok(()));
    assert!(solution
        .verify(&key2, &PuzzleHash::Sha256.digest(b"another"), &mut rng)
        .unwrap()
        .is_err());
    assert!(solution.verify(&key1, &digest, &mut rng).unwrap().is_err());

    let set_text = vector("set.json");
    let set = PuzzleSet::from_json(&set_text).unwrap();
    assert_eq!(set.to_json(), set_text);
    assert_eq!(set.puzzles.len(), 2);

    let bundle_text = vector("document.bundle");
    let bundle = Bundle::from_json(&bundle_text).unwrap();
    assert_eq!(bundle.to_json(), bundle_text);
    let verifier = Verifier::private(vec![key1, key2]).unwrap();
    let verdict = verdict(&verifier, &bundle, document.as_bytes(), &mut rng);
    assert!(verdict.is_valid(), "{verdict:?}");
    assert!((verdict.credited_secs() - 3.0).abs() < 1e-9);
}

#[test]
fn edited_vectors_are_rejected() {
    let public_text = vector("puzzle-2s.pub");
    for (from, to) in [
        ("\"t\": 20000", "\"t\": 20001"),
        ("\"version\": 2", "\"version\": 3"),
        ("hourglass-puzzle-public-key", "hourglass-puzzle-set"),
    ] {
        assert!(
            PuzzlePublicKey::from_json(&public_text.replacen(from, to, 1)).is_err(),
            "{from} -> {to}"
        );
    }
    let key_text = vector("puzzle-2s.key");
    // Change one hex digit of d: the key no longer matches e and z.
    let pos = key_text.find("\"d\": \"").unwrap() + 7;
    let mut edited = key_text.clone();
    let c = edited.as_bytes()[pos];
    edited.replace_range(pos..pos + 1, if c == b'1' { "2" } else { "1" });
    assert!(PuzzleKey::from_json(&edited).is_err());
    let bundle_text = vector("document.bundle");
    assert!(Bundle::from_json(&bundle_text.replacen("\"puzzle\"", "\"puzzel\"", 1)).is_err());
    assert!(Solution::from_json(&vector("document.sol").replacen(
        "\"hash\": \"sha256\"",
        "\"hash\": \"md5\"",
        1
    ))
    .is_err());
}

#[test]
fn certificate_vector_verifies_against_its_ca_and_names_the_puzzle() {
    use hourglass_timelock::certificate::{verify_puzzle_certificate, CaCertificate};
    let ca = CaCertificate::from_bytes(vector("ca.crt").as_bytes()).unwrap();
    let cert = vector("puzzle-2s.crt");
    // Valid until 2036; checked at a fixed time inside the validity period.
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_900_000_000);
    let public = verify_puzzle_certificate(cert.as_bytes(), &ca, at).unwrap();
    assert_eq!(
        public,
        PuzzlePublicKey::from_json(&vector("puzzle-2s.pub")).unwrap()
    );
    let mut edited = cert.into_bytes();
    let mid = edited.len() / 2;
    edited[mid] = if edited[mid] == b'A' { b'B' } else { b'A' };
    assert!(verify_puzzle_certificate(&edited, &ca, at).is_err());
}

/// The full-domain input vectors of docs/FORMATS.md: `inputs.json` holds (n, digest, m) for the
/// document link and (n, previous c, m) for a chain link.
#[derive(serde::Deserialize)]
struct InputVector {
    kind: String,
    dst: String,
    n: String,
    msg: String,
    m: String,
}

fn input_vectors() -> Vec<InputVector> {
    serde_json::from_str(&vector("inputs.json")).unwrap()
}

#[test]
fn input_mapping_vectors_match() {
    use hourglass_arith::hash_to_int::hash_to_residue;
    use hourglass_timelock::bundle::{chain_input, CHAIN_INPUT_DST};
    use hourglass_timelock::{input_from_digest, DOCUMENT_INPUT_DST};
    let vectors = input_vectors();
    assert_eq!(vectors.len(), 3);
    let public = PuzzlePublicKey::from_json(&vector("puzzle-2s.pub")).unwrap();
    for v in &vectors {
        let n = hourglass_arith::integer_from_hex(&v.n).unwrap();
        let msg = hex::decode(&v.msg).unwrap();
        let m = hourglass_arith::integer_from_hex(&v.m).unwrap();
        assert_eq!(hash_to_residue(&msg, v.dst.as_bytes(), &n).unwrap(), m);
        match v.kind.as_str() {
            "document" => {
                assert_eq!(v.dst.as_bytes(), DOCUMENT_INPUT_DST);
                assert_eq!(input_from_digest(&n, &msg).unwrap(), m);
            }
            "chain" => {
                assert_eq!(v.dst.as_bytes(), CHAIN_INPUT_DST);
                assert_eq!(*public.n(), n);
                let c = hourglass_arith::Integer::from_digits(&msg, rug::integer::Order::Msf);
                assert_eq!(chain_input(&c, public.n()).unwrap(), m);
            }
            other => panic!("unknown kind {other}"),
        }
        // Full-domain: within a few bits of the modulus.
        assert!(m.significant_bits() + 16 > n.significant_bits());
    }
}

/// An independent implementation (Python's hashlib, written from docs/FORMATS.md) computes the
/// same inputs.
#[test]
fn independent_python_implementation_agrees() {
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/input_mapping.py");
    let vectors =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vectors/inputs.json");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg(&vectors)
        .output()
        .expect("python3 is installed by scripts/setup-debian.sh");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("3 vectors agree"));
}

/// Files of format version 1 (small inputs, fingerprints without the metadata) are refused with
/// a message that names the version: nothing is silently verified under the old rules.
#[test]
fn version_1_files_are_refused_by_name() {
    let old = |name: &str| vector(&format!("v1/{name}"));
    let errors = [
        PuzzlePublicKey::from_json(&old("puzzle-2s.pub")).unwrap_err(),
        PuzzleSet::from_json(&old("set.json")).unwrap_err(),
        Bundle::from_json(&old("document.bundle")).unwrap_err(),
        Solution::from_json(&old("document.sol")).unwrap_err(),
    ];
    for e in errors {
        let text = e.to_string();
        assert!(
            text.contains("format version 1") && text.contains("reads only version 2"),
            "{text}"
        );
    }
    use hourglass_timelock::certificate::{verify_puzzle_certificate, CaCertificate};
    let ca = CaCertificate::from_bytes(old("ca.crt").as_bytes()).unwrap();
    let at = std::time::UNIX_EPOCH + std::time::Duration::from_secs(1_900_000_000);
    let err = verify_puzzle_certificate(old("puzzle-2s.crt").as_bytes(), &ca, at).unwrap_err();
    assert!(err.to_string().contains("version 1"), "{err}");
}

/// Every field that changes a verdict or the credited time is covered by the fingerprint: an
/// edited field makes the file fail to load (the attack: credit more time by editing the rate).
#[test]
fn editing_any_metadata_field_is_detected() {
    let text = vector("puzzle-2s.pub");
    let public = PuzzlePublicKey::from_json(&text).unwrap();
    let edits = [
        ("\"rate\": 10000.0", "\"rate\": 100.0"),
        ("\"duration_secs\": 2.0", "\"duration_secs\": 200.0"),
        ("\"hash\": \"sha256\"", "\"hash\": \"sha512\""),
        ("\"rate_measured\": false", "\"rate_measured\": true"),
        ("\"issuer\": \"vector issuer\"", "\"issuer\": \"another\""),
        ("\"t\": 20000", "\"t\": 2000"),
    ];
    for (from, to) in edits {
        assert!(text.contains(from), "vector lacks {from}");
        let err = PuzzlePublicKey::from_json(&text.replacen(from, to, 1)).unwrap_err();
        assert!(err.to_string().contains("fingerprint"), "{from}: {err}");
    }
    let created = format!("\"created\": \"{}\"", public.meta().created);
    let err = PuzzlePublicKey::from_json(&text.replacen(
        &created,
        "\"created\": \"2020-01-01T00:00:00Z\"",
        1,
    ))
    .unwrap_err();
    assert!(err.to_string().contains("fingerprint"), "{err}");
}

/// The verifier decides the hash: a bundle that names a weaker or different hash than the set
/// fixes is refused, and SHA-1 / RIPEMD-160 are not accepted anywhere.
#[test]
fn the_hash_is_the_verifiers_choice() {
    let mut rng = SeededEntropy::new(b"hash choice");
    let document = vector("document.txt");
    let digest = PuzzleHash::Sha256.digest(document.as_bytes());
    let keys = [
        PuzzleKey::from_json(&vector("puzzle-1s.key")).unwrap(),
        PuzzleKey::from_json(&vector("puzzle-2s.key")).unwrap(),
    ];
    // The same links, claiming a SHA-512 digest: refused with the reason.
    let mut bundle = Bundle::from_json(&vector("document.bundle")).unwrap();
    bundle.hash = PuzzleHash::Sha512;
    bundle.digest = hex::encode(PuzzleHash::Sha512.digest(document.as_bytes()));
    let verifier = Verifier::private(keys.to_vec()).unwrap();
    let verdict = verdict(&verifier, &bundle, document.as_bytes(), &mut rng);
    assert!(!verdict.is_valid());
    assert!(
        verdict.reason().unwrap().contains("fixes sha256"),
        "{verdict:?}"
    );
    // Weak hashes are refused in every file, with the reason.
    let weak = vector("document.bundle").replacen("\"hash\": \"sha256\"", "\"hash\": \"sha1\"", 1);
    let err = Bundle::from_json(&weak).unwrap_err().to_string();
    assert!(err.contains("not accepted"), "{err}");
    let weak_set =
        vector("set.json").replacen("\"hash\": \"sha256\"", "\"hash\": \"ripemd160\"", 1);
    assert!(PuzzleSet::from_json(&weak_set)
        .unwrap_err()
        .to_string()
        .contains("not accepted"));
    // A solution naming another hash than its key is refused for that reason (not merely for
    // failing later: with the rule gone, it would be refused as a wrong solution).
    let mut solution = Solution::from_json(&vector("document.sol")).unwrap();
    solution.hash = PuzzleHash::Blake2b;
    solution.digest = PuzzleHash::Blake2b.digest(document.as_bytes());
    assert_eq!(
        solution
            .verify(&keys[1], &solution.digest.clone(), &mut rng)
            .unwrap(),
        Err(hourglass_timelock::Rejection::WrongHash)
    );
    let _ = digest;
}

/// The public-set vectors of docs/FORMATS.md section 12.10: the set and its proof-carrying
/// bundle parse, re-serialise byte for byte, and verify with public data only.
#[test]
fn public_set_vectors_verify_without_any_secret() {
    use hourglass_timelock::public::{ModulusOrigin, OriginPins, PublicSet};
    let set_text = vector("public-set.json");
    let set = PublicSet::from_json(&set_text).unwrap();
    assert_eq!(set.to_json(), set_text);
    assert_eq!(set.origin, ModulusOrigin::Rsa2048);
    let bundle_text = vector("public.bundle");
    let bundle = Bundle::from_json(&bundle_text).unwrap();
    assert_eq!(bundle.to_json(), bundle_text);
    assert!(bundle.is_public());
    let verifier = Verifier::public(set, &OriginPins::default()).unwrap();
    let mut rng = SeededEntropy::new(b"public vectors");
    let verdict = verdict(
        &verifier,
        &bundle,
        vector("document.txt").as_bytes(),
        &mut rng,
    );
    assert!(verdict.trust().trustless(), "{verdict:?}");
    assert!(verdict.is_valid(), "{verdict:?}");
    assert!((verdict.credited_secs() - 3.0).abs() < 1e-9);
}

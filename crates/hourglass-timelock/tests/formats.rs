//! The committed format vectors (docs/FORMATS.md): they parse, verify, and re-serialise to the
//! same bytes, so the specification, the files and the code cannot drift apart.

use hourglass_arith::entropy::SeededEntropy;
use hourglass_timelock::submission::{verify_bundle, Bundle, PuzzleSet};
use hourglass_timelock::{PuzzleHash, PuzzleKey, PuzzlePublicKey, Solution};

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
    let verdict = verify_bundle(&bundle, &digest, &[key1, key2], 2, &mut rng).unwrap();
    assert!(verdict.valid, "{verdict:?}");
    assert!((verdict.credited_secs - 3.0).abs() < 1e-9);
}

#[test]
fn edited_vectors_are_rejected() {
    let public_text = vector("puzzle-2s.pub");
    for (from, to) in [
        ("\"t\": 20000", "\"t\": 20001"),
        ("\"version\": 1", "\"version\": 2"),
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

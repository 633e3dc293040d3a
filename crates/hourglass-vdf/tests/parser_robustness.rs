//! The proof-file parser survives arbitrary damage to the committed vectors: it never panics,
//! whatever parses round-trips, and a damaged file that still parses verifies only if it says
//! exactly what the original said (proofs are unique: any other statement or proof fails).

use hourglass_vdf::proof_file::{ModulusPolicy, ProofFile};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

const FILES: &[&str] = &[
    "wesolowski-n1024-t3.json",
    "pietrzak-n1024-t65.json",
    "wesolowski-rsa2048-t1000.json",
    "pietrzak-rsa2048-t1000.json",
];

fn vector(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/vectors")
            .join(name),
    )
    .unwrap()
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    Delete(usize),
    /// Replaces a lowercase hex digit (in any field) by another one: the file stays well formed
    /// and says something else.
    Digit(usize, u8),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        any::<usize>().prop_map(Mutation::Delete),
        (any::<usize>(), 0u8..16).prop_map(|(i, d)| Mutation::Digit(i, d)),
        (any::<usize>(), 0u8..16).prop_map(|(i, d)| Mutation::Digit(i, d)),
    ]
}

fn apply(mut data: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for m in muts {
        let len = data.len().max(1);
        match *m {
            Mutation::Flip(i, b) if !data.is_empty() => data[i % len] ^= 1 << b,
            Mutation::Truncate(i) => data.truncate(i % len),
            Mutation::Insert(i, b) => data.insert(i % (data.len() + 1), b),
            Mutation::Delete(i) if !data.is_empty() => {
                data.remove(i % len);
            }
            Mutation::Digit(i, d) if !data.is_empty() => {
                let i = i % len;
                if data[i].is_ascii_hexdigit() && !data[i].is_ascii_uppercase() {
                    data[i] = b"0123456789abcdef"[usize::from(d)];
                }
            }
            _ => {}
        }
    }
    data
}

#[test]
fn damaged_proof_files_never_panic_and_never_verify_a_different_claim() {
    let originals: Vec<ProofFile> = FILES
        .iter()
        .map(|f| ProofFile::from_json(&vector(f), ModulusPolicy::Secure).unwrap())
        .collect();
    let config = Config {
        cases: 1000,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[7; 32]));
    let strategy = (0..FILES.len(), proptest::collection::vec(mutation(), 1..4));
    let parsed_count = std::cell::Cell::new(0usize);
    runner
        .run(&strategy, |(which, muts)| {
            let data = apply(vector(FILES[which]), &muts);
            if let Ok(p) = ProofFile::from_json(&data, ModulusPolicy::AllowInsecure) {
                parsed_count.set(parsed_count.get() + 1);
                prop_assert_eq!(
                    ProofFile::from_json(p.to_json().as_bytes(), ModulusPolicy::AllowInsecure).ok(),
                    Some(p.clone())
                );
                let verdict = p.verify();
                if p == originals[which] {
                    prop_assert!(verdict.is_ok(), "same content, must verify");
                } else {
                    prop_assert!(verdict.is_err(), "a different claim verified: {:?}", muts);
                }
            }
            Ok(())
        })
        .unwrap();
    let parsed = parsed_count.get();
    assert!(
        parsed > 100,
        "mutations that keep the file parseable were tried ({parsed})"
    );
}

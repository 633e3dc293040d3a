//! The proof-file parser survives arbitrary damage to the committed vectors: it never panics,
//! whatever parses round-trips, and a damaged file that still parses verifies only if it says
//! exactly what the original said (proofs are unique: any other statement or proof fails).

use hourglass_testkit::{damage, mutation};
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
            let data = damage(vector(FILES[which]), &muts);
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

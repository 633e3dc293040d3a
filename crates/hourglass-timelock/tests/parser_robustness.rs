//! Every puzzle-file parser survives arbitrary damage: random mutations of the committed vectors
//! (and the checkpoint format) never panic, and whatever still parses is self-consistent.

use hourglass_arith::checkpoint::{Checkpoint, CheckpointKey};
use hourglass_arith::squaring::SquaringState;
use hourglass_arith::Integer;
use hourglass_testkit::{damage, mutation};
use hourglass_timelock::submission::PuzzleSet;
use hourglass_timelock::Bundle;
use hourglass_timelock::{PuzzleKey, PuzzlePublicKey, Solution};
use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

fn vector(name: &str) -> Vec<u8> {
    std::fs::read(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/vectors")
            .join(name),
    )
    .unwrap()
}

fn key() -> CheckpointKey {
    CheckpointKey::from_bytes([2u8; 32])
}

fn checkpoint_bytes() -> Vec<u8> {
    Checkpoint {
        context: b"ctx".to_vec(),
        block: 16384,
        total: 1 << 20,
        state: SquaringState {
            done: 16384,
            x: Integer::from(12345u32) << 900u32,
            check: Integer::from(777u32),
        },
        aux: Vec::new(),
    }
    .to_bytes(&key())
}

/// Damaged files never panic, and whatever still parses round-trips. The run counts the damaged
/// files that still parsed and fails if there were none, so it cannot pass without checking a
/// round trip (hex-digit changes keep most files well formed).
#[test]
fn mutated_files_never_panic() {
    let config = Config {
        cases: 400,
        rng_algorithm: RngAlgorithm::ChaCha,
        failure_persistence: None,
        ..Config::default()
    };
    let mut runner =
        TestRunner::new_with_rng(config, TestRng::from_seed(RngAlgorithm::ChaCha, &[5; 32]));
    let parsed = std::cell::Cell::new(0usize);
    runner
        .run(&prop::collection::vec(mutation(), 1..4), |muts| {
            for name in [
                "puzzle-2s.pub",
                "puzzle-2s.key",
                "document.sol",
                "set.json",
                "document.bundle",
            ] {
                let data = damage(vector(name), &muts);
                let text = String::from_utf8_lossy(&data);
                if let Ok(p) = PuzzlePublicKey::from_json(&text) {
                    parsed.set(parsed.get() + 1);
                    prop_assert_eq!(PuzzlePublicKey::from_json(&p.to_json()).unwrap(), p);
                }
                if let Ok(k) = PuzzleKey::from_json(&text) {
                    parsed.set(parsed.get() + 1);
                    prop_assert_eq!(
                        PuzzleKey::from_json(&k.to_json()).unwrap().public_key(),
                        k.public_key()
                    );
                }
                if let Ok(s) = Solution::from_json(&text) {
                    parsed.set(parsed.get() + 1);
                    prop_assert_eq!(Solution::from_json(&s.to_json()).unwrap(), s);
                }
                if let Ok(s) = PuzzleSet::from_json(&text) {
                    parsed.set(parsed.get() + 1);
                    prop_assert_eq!(PuzzleSet::from_json(&s.to_json()).unwrap(), s);
                }
                if let Ok(b) = Bundle::from_json(&text) {
                    parsed.set(parsed.get() + 1);
                    prop_assert_eq!(Bundle::from_json(&b.to_json()).unwrap(), b);
                }
            }
            let ck = damage(checkpoint_bytes(), &muts);
            if let Ok(c) = Checkpoint::from_bytes(&ck, &key()) {
                // Only an unchanged checkpoint passes the integrity hash.
                prop_assert_eq!(c.to_bytes(&key()), checkpoint_bytes());
            }
            Ok(())
        })
        .unwrap();
    assert!(
        parsed.get() >= 100,
        "only {} damaged files parsed: the round trips were hardly checked",
        parsed.get()
    );
}

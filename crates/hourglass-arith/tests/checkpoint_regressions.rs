//! Inputs the `checkpoint` fuzz target found (fuzz/README.md), kept as regression tests: each
//! file is a checkpoint body that the test authenticates itself (as the fuzz target does), so
//! the field parser behind the MAC sees it. Whatever parses must re-encode to the same bytes.

use hmac::Mac;
use hourglass_arith::checkpoint::{Checkpoint, CheckpointKey};

const KEY: [u8; 32] = [0x5a; 32];

fn authenticated(body: &[u8]) -> Vec<u8> {
    let mut mac = <hmac::Hmac<sha2::Sha256> as Mac>::new_from_slice(&KEY).unwrap();
    mac.update(body);
    let mut out = body.to_vec();
    out.extend_from_slice(&mac.finalize().into_bytes());
    out
}

#[test]
fn fuzz_findings_parse_canonically_or_not_at_all() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/regressions");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let file = authenticated(&std::fs::read(&path).unwrap());
        let key = CheckpointKey::from_bytes(KEY);
        if let Ok(c) = Checkpoint::from_bytes(&file, &key) {
            assert_eq!(c.to_bytes(&key), file, "{}", path.display());
        }
        seen += 1;
    }
    assert!(seen >= 1);
}

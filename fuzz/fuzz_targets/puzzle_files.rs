//! The puzzle file parsers on arbitrary bytes: public and private puzzle keys, solutions, sets,
//! public sets and bundles (format version 2, and the refusal of version 1). None may panic;
//! whatever parses serialises and parses back to the same value.
#![no_main]

use hourglass_timelock::public::PublicSet;
use hourglass_timelock::submission::PuzzleSet;
use hourglass_timelock::Bundle;
use hourglass_timelock::{PuzzleKey, PuzzlePublicKey, Solution};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    if let Ok(p) = PuzzlePublicKey::from_json(&text) {
        assert_eq!(PuzzlePublicKey::from_json(&p.to_json()).unwrap(), p);
    }
    if let Ok(k) = PuzzleKey::from_json(&text) {
        assert_eq!(PuzzleKey::from_json(&k.to_json()).unwrap().public_key(), k.public_key());
    }
    if let Ok(s) = Solution::from_json(&text) {
        assert_eq!(Solution::from_json(&s.to_json()).unwrap(), s);
    }
    if let Ok(s) = PuzzleSet::from_json(&text) {
        assert_eq!(PuzzleSet::from_json(&s.to_json()).unwrap(), s);
    }
    if let Ok(s) = PublicSet::from_json(&text) {
        assert_eq!(PublicSet::from_json(&s.to_json()).unwrap(), s);
    }
    if let Ok(b) = Bundle::from_json(&text) {
        assert_eq!(Bundle::from_json(&b.to_json()).unwrap(), b);
    }
});

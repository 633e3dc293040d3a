//! Every time-lock file parser on arbitrary bytes: puzzle public and private keys, solutions,
//! sets, bundles, checkpoints, X.509 puzzle and CA certificates and `.tlock` headers. None may
//! panic; whatever parses must serialise and parse back to the same value.
#![no_main]

use hourglass_arith::checkpoint::Checkpoint;
use hourglass_timelock::certificate::{CaCertificate, PuzzleCertificate};
use hourglass_timelock::submission::{Bundle, PuzzleSet};
use hourglass_timelock::tlock::TlockHeader;
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
    if let Ok(b) = Bundle::from_json(&text) {
        assert_eq!(Bundle::from_json(&b.to_json()).unwrap(), b);
    }
    if let Ok(c) = Checkpoint::from_bytes(data) {
        assert_eq!(c.to_bytes(), data);
    }
    let _ = PuzzleCertificate::from_bytes(data);
    let _ = CaCertificate::from_bytes(data);
    let _ = TlockHeader::read_from(&mut &data[..]);
});

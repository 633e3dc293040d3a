//! The VDF proof-file parser on arbitrary bytes: never panics; whatever parses serialises
//! (pretty and compact) and parses back to the same value, and verifying it never panics.
#![no_main]

use hourglass_vdf::proof_file::{ModulusPolicy, ProofFile};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = ProofFile::from_json(data, ModulusPolicy::AllowInsecure) {
        let again = ProofFile::from_json(p.to_json().as_bytes(), ModulusPolicy::AllowInsecure);
        assert_eq!(again.as_ref().ok(), Some(&p));
        let line = ProofFile::from_json(p.to_json_line().as_bytes(), ModulusPolicy::AllowInsecure);
        assert_eq!(line.as_ref().ok(), Some(&p));
        let _ = p.verify();
    }
});

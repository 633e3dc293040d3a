//! The transparency log's text parsers on arbitrary input: checkpoints (signed notes),
//! verifier and signer keys, witness `add-checkpoint` requests and state files. Nothing may
//! panic; what parses re-encodes to exactly the input; verifying under fixed pins never panics,
//! and a verified checkpoint is one the fixed log key signed.
#![no_main]

use hourglass_fuzz::log_pins;
use hourglass_log::checkpoint::SignedCheckpoint;
use hourglass_log::keys::{SigningKey, VerifierKey};
use hourglass_log::witness::{AddCheckpoint, KnownCheckpoint};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let (pins, log_key) = log_pins();
    if let Ok(cp) = SignedCheckpoint::parse(data) {
        assert_eq!(cp.to_bytes(), data, "a checkpoint that does not re-encode to itself");
        if let Ok(v) = cp.verify(pins) {
            assert_eq!(v.origin, log_key.name());
            assert_eq!(v.note, data);
        }
    }
    if let Ok(req) = AddCheckpoint::parse(data) {
        assert_eq!(
            AddCheckpoint::encode(req.old_size, &req.proof, &req.checkpoint),
            data,
            "a request that does not re-encode to itself"
        );
    }
    let _ = KnownCheckpoint::from_json(data, pins.log());
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(k) = VerifierKey::parse(text) {
            assert_eq!(VerifierKey::parse(&k.encode()).ok(), Some(k.clone()));
            assert_eq!(k.encode(), text.trim());
        }
        if let Ok(k) = SigningKey::parse(text) {
            assert_eq!(&*k.encode(), text.trim());
        }
    }
});

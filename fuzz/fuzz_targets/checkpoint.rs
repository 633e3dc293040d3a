//! The checkpoint parser on arbitrary bytes, twice: as a whole file (the MAC check refuses
//! nearly everything, and must never panic), and as a body that the fuzzer's own key
//! authenticates, so the field parser behind the MAC is explored too. Whatever parses
//! re-serialises to exactly the input.
#![no_main]

use hourglass_arith::checkpoint::{Checkpoint, CheckpointKey};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let key = CheckpointKey::from_bytes(hourglass_fuzz::CHECKPOINT_KEY);
    if let Ok(c) = Checkpoint::from_bytes(data, &key) {
        assert_eq!(c.to_bytes(&key), data);
    }
    let authentic = hourglass_fuzz::authenticate_checkpoint(data);
    if let Ok(c) = Checkpoint::from_bytes(&authentic, &key) {
        assert_eq!(c.to_bytes(&key), authentic);
    }
});

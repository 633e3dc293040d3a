//! Any bytes → `decode_private_key`: never panics; a decoded key round-trips in every format.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    match hourglass_rsa::encoding::decode_private_key(data) {
        Ok(key) => hourglass_fuzz::check_private(&key),
        Err(e) => hourglass_fuzz::touch_error(&e),
    }
});

//! The `.tlock` header parser on arbitrary bytes: never panics; a header that parses
//! re-serialises to exactly the bytes it was read from.
#![no_main]

use hourglass_timelock::tlock::TlockHeader;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut rest = data;
    if let Ok(h) = TlockHeader::read_from(&mut rest) {
        let used = data.len() - rest.len();
        assert_eq!(h.as_bytes(), &data[..used]);
    }
});

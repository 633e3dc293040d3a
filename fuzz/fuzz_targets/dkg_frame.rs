//! The distributed key generation's wire frames on arbitrary bytes: `Frame::decode` never
//! panics and whatever decodes re-encodes to exactly the input; the payload reader
//! (`wire::Reader`) never panics on the payload or on the raw input, whatever it is asked to
//! read, and byte strings it reads to the end re-encode to what it read.
#![no_main]

use hourglass_dkg::wire::{Frame, Reader, Writer};
use hourglass_dkg::Integer;
use libfuzzer_sys::fuzz_target;

/// Reads `bytes` as byte strings until the end or an error; if it reached the end, writing
/// the same strings again gives back `bytes`. (A failed read may already have consumed its
/// length prefix, so `end()` after an error says nothing: callers stop at the first error.)
fn read_all_bytes(bytes: &[u8]) {
    let mut r = Reader::new(bytes);
    let mut w = Writer::new();
    loop {
        if r.end().is_ok() {
            assert_eq!(w.finish(), bytes);
            return;
        }
        match r.bytes() {
            Ok(b) => {
                w.bytes(b);
            }
            Err(_) => return,
        }
    }
}

/// Reads `bytes` as integers below `2^bound_bits`, singly and `count` at a time.
fn read_all_ints(bytes: &[u8], bound_bits: u32, count: usize) {
    let bound = Integer::from(1) << bound_bits;
    let mut r = Reader::new(bytes);
    while let Ok(x) = r.int_below(&bound) {
        assert!(x >= 0 && x < bound);
    }
    let _ = r.end();
    let mut r = Reader::new(bytes);
    while let Ok(xs) = r.ints_below(count, &bound) {
        assert_eq!(xs.len(), count);
        if count == 0 {
            break;
        }
    }
    let _ = r.end();
}

fuzz_target!(|data: &[u8]| {
    read_all_bytes(data);
    read_all_ints(data, 2048, 3);
    if let Ok(frame) = Frame::decode(data) {
        assert_eq!(frame.encode(), data);
        read_all_bytes(&frame.payload);
        // Bounds and counts from the header, so the fuzzer steers them: 0 to 4095 bits,
        // 0 to 15 integers at a time.
        let bits = u32::from(frame.tag.step % 4096);
        read_all_ints(&frame.payload, bits, (frame.sender % 16) as usize);
    }
});

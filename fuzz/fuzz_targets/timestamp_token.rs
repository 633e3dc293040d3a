//! RFC 3161 tokens and replies on arbitrary bytes: `verify_token` (against the fixed TSA's CA),
//! `TokenInfo::of_token` and `token_of` never panic and agree with each other. The oracle is
//! `hourglass_fuzz::check_timestamp_token`; seeds are tokens of the fixed TSA and of OpenSSL's
//! (`gen_corpus`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hourglass_fuzz::check_timestamp_token(data);
});

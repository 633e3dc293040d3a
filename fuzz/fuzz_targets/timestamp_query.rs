//! RFC 3161 queries on arbitrary bytes: `Query::parse` never panics and what parses re-encodes
//! through `Query::for_digest`; a fixed TSA answers every input, and its reply is a token that
//! verifies and answers the query, or a rejection naming the parser's failInfo. The oracle is
//! `hourglass_fuzz::check_timestamp_query`.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    hourglass_fuzz::check_timestamp_query(data);
});

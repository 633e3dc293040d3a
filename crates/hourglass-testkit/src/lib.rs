//! Test support shared by hourglass's crates (a dev-dependency only): random damage to files
//! for the parser robustness tests, which check that parsers never panic on it and that
//! whatever still parses is consistent; the import cycles among a crate's files
//! ([`import_cycles`]), which a crate's test keeps at none; and certificate hierarchies, RFC 3161
//! timestamp authorities and verdicts made by the `openssl` command line ([`openssl_pki`]), for
//! the tests that check a verifier agrees with OpenSSL.
//!
//! ```
//! use hourglass_testkit::{damage, Mutation};
//!
//! let damaged = damage(b"{\"n\": \"ab\"}".to_vec(), &[Mutation::Digit(8, 15), Mutation::Delete(0)]);
//! assert_eq!(damaged, b"\"n\": \"af\"}");
//! ```

#![forbid(unsafe_code)]

use proptest::prelude::*;

mod imports;
pub use imports::{import_cycles, import_graph};
pub mod openssl_pki;

/// One change to a file's bytes. Positions wrap around the current length.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mutation {
    /// Flip bit `b` (0 to 7) of byte `i`.
    Flip(usize, u8),
    /// Keep the first `i` bytes.
    Truncate(usize),
    /// Insert a byte before position `i`.
    Insert(usize, u8),
    /// Remove byte `i`.
    Delete(usize),
    /// Replace byte `i`, if it is a lowercase hex digit, by hex digit `d` (0 to 15): the file
    /// stays well formed and says something else.
    Digit(usize, u8),
}

/// A random [`Mutation`], hex-digit changes included.
pub fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        1 => (any::<usize>(), 0u8..8).prop_map(|(i, b)| Mutation::Flip(i, b)),
        1 => any::<usize>().prop_map(Mutation::Truncate),
        1 => (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        1 => any::<usize>().prop_map(Mutation::Delete),
        2 => (any::<usize>(), 0u8..16).prop_map(|(i, d)| Mutation::Digit(i, d)),
    ]
}

/// `data` after `mutations`, in order.
pub fn damage(mut data: Vec<u8>, mutations: &[Mutation]) -> Vec<u8> {
    for m in mutations {
        let len = data.len().max(1);
        match *m {
            Mutation::Flip(i, b) if !data.is_empty() => data[i % len] ^= 1 << (b % 8),
            Mutation::Truncate(i) => data.truncate(i % len),
            Mutation::Insert(i, b) => data.insert(i % (data.len() + 1), b),
            Mutation::Delete(i) if !data.is_empty() => {
                data.remove(i % len);
            }
            Mutation::Digit(i, d) if !data.is_empty() => {
                let i = i % len;
                if data[i].is_ascii_digit() || (b'a'..=b'f').contains(&data[i]) {
                    data[i] = b"0123456789abcdef"[usize::from(d % 16)];
                }
            }
            _ => {}
        }
    }
    data
}

//! Signed receipts of `hourglass serve`'s verdicts: an institution's RSA-PSS signature over a canonical statement of its verdict
//! on a submission (docs/FORMATS.md section 17).
//!
//! A receipt is JSON `{"type": "hourglass-receipt", "version": 2, "statement": TEXT,
//! "signature": BASE64, "timestamp": BASE64}`. `TEXT` is the canonical statement: fixed lines
//! `key: value` in a fixed order, ending in a newline, and the signature is RSASSA-PSS with
//! SHA-256 (MGF1-SHA-256, any salt length) over exactly those bytes. The verifier fixes the
//! algorithm and supplies the institution's public key; it reads every fact from the signed text
//! and nothing from the JSON around it, so nothing outside the signature can change what a
//! receipt says.
//!
//! Version 2 carries the RFC 3161 token (DER) of the institution's TSA over the bundle file:
//! `received` is that token's `genTime`, the statement names the token's SHA-256, and
//! [`check_receipt`] verifies the token (imprint, time, the chain to the institution's key or a
//! TSA CA the verifier names), so `openssl ts -verify` can check the same time on its own.
//! Version 1 (no token) is still read.
//!
//! Version 3 adds the service's transparency log (docs/FORMATS.md section 19): the statement
//! names the log (`log: <origin>`), so the institution's signature commits to the receipt being
//! public, and the file carries the receipt's entry index, its inclusion proof and the log's
//! checkpoint (signed by the log, cosigned by witnesses). The **entry** the log holds is the
//! receipt without its `log` member, as compact JSON ([`SignedReceipt::entry`]); a receipt that
//! claims a log is checked only against a log key the verifier pins ([`LogPins`](hourglass_log::checkpoint::LogPins)).

#![forbid(unsafe_code)]

mod audit;
mod check;
mod entry;
mod error;
mod json;
mod sign;
mod statement;
#[cfg(test)]
mod tests;
mod verdict;

pub use audit::{audit_log, search_log, LogAudit, LogSearch};
pub use check::{check_receipt, CheckedReceipt, LoggedReceipt, MAX_RECEIPT_BYTES};
pub use entry::{EntryFilter, EntrySummary, ReceiptEntry};
pub use error::ReceiptError;
pub use sign::{sign_receipt, sign_receipt_v1, SignedReceipt};
pub use statement::{institution_fingerprint, ReceiptVerdict, Statement};
pub use verdict::ReceiptReport;

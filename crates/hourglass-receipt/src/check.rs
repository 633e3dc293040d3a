//! Checking receipts: the institution's signature first, then the statement, its token against
//! the anchors the checker pins, and the log evidence under the pinned keys.

use hourglass_log::checkpoint::{hash_from_base64, LogPins, SignedCheckpoint, VerifiedCheckpoint};
use hourglass_log::tree::InclusionProof;
use hourglass_rsa::padding::Pss;
use hourglass_rsa::{HashAlg, PublicKey};
use hourglass_timelock::verdict::{unix_secs, Dating};
use hourglass_timestamp::{verify_token, TsaAnchor, VerifiedToken};
use sha2::{Digest, Sha256};

use crate::error::ReceiptError;
use crate::json::{base64_decode, LogJson, ReceiptJson, RECEIPT_TYPE};
use crate::statement::{institution_fingerprint, ReceiptVerdict, Statement};

/// The largest receipt file read: the largest entry a log holds (64 KiB), the largest
/// checkpoint (64 KiB), each escaped once more in JSON, and the longest proof.
pub const MAX_RECEIPT_BYTES: usize = 320 * 1024;

/// A receipt's place in a transparency log, verified.
#[derive(Debug, Clone)]
pub struct LoggedReceipt {
    /// The entry's index in the log.
    pub index: u64,
    /// The checkpoint its inclusion proof leads to, verified under the pinned keys.
    pub checkpoint: VerifiedCheckpoint,
    /// Whom the log evidence is trusted on (the pinned log key, and the witnesses).
    pub trust: String,
}

/// A checked receipt: what it states and, in version 2 and 3, its verified timestamp token;
/// in version 3, its verified place in the log.
#[derive(Debug, Clone)]
pub struct CheckedReceipt {
    /// The statement.
    pub statement: Statement,
    /// The token (DER) and what it states, verified (version 2).
    pub timestamp: Option<(Vec<u8>, VerifiedToken)>,
    /// Its entry in the log, verified (when the receipt carries log evidence).
    pub log: Option<LoggedReceipt>,
}

impl CheckedReceipt {
    /// The receipt's verdict placed in time. With a token, received is the latest time the
    /// token proves (`genTime + accuracy`): receipts signed before that rule state the bare
    /// `genTime`, one second (the service's accuracy) earlier than the token proves, and are
    /// dated by the token, never by that line. Without a token (version 1), the statement's
    /// word.
    pub fn dating(&self, deadline_unix: Option<u64>) -> Dating {
        let s = &self.statement;
        match &self.timestamp {
            Some((_, t)) => Dating::of_credit(
                s.verdict == ReceiptVerdict::Valid,
                s.credited_ms,
                t.info().latest_unix(),
                deadline_unix,
            ),
            None => s.dating(deadline_unix),
        }
    }
}

/// Checks a receipt against the institution's public key and returns what it states. A version
/// 2 or 3 receipt's token must be the one the statement names, chain to one of `tsa_anchors`
/// when the verifier names any, else to the institution's key (the service's TSA CA is made
/// with it), cover the statement's bundle hash, and state the statement's `received` as the
/// latest time it proves (`genTime + accuracy`; receipts signed before that rule: `genTime`).
///
/// `log` pins a transparency log (its key, and witnesses with a quorum). A receipt that carries
/// log evidence is checked only against pins ([`ReceiptError::LogNotPinned`] without them): its
/// checkpoint must verify under them, name the log the statement names, and the inclusion
/// proof must lead from the receipt's entry to the checkpoint's root. With pins, a receipt that
/// carries no log evidence is refused ([`ReceiptError::NotLogged`]).
pub fn check_receipt(
    receipt: &[u8],
    institution: &PublicKey,
    tsa_anchors: &[TsaAnchor],
    log: Option<&LogPins>,
) -> Result<CheckedReceipt, ReceiptError> {
    if receipt.len() > MAX_RECEIPT_BYTES {
        return Err(ReceiptError::Malformed {
            why: "larger than any receipt",
        });
    }
    let json: ReceiptJson =
        serde_json::from_slice(receipt).map_err(|_| ReceiptError::Malformed {
            why: "not JSON with exactly the fields type, version, statement, signature (and timestamp, log)",
        })?;
    let (statement, timestamp) = check_signed(&json, institution, tsa_anchors)?;
    if (json.version == 3) != json.log.is_some() {
        return Err(ReceiptError::Malformed {
            why: "a version 3 receipt, and only one, carries its log entry",
        });
    }
    let logged = match (&json.log, log) {
        (Some(evidence), None) => {
            let origin = statement.log.clone().unwrap_or_else(|| {
                SignedCheckpoint::parse(evidence.checkpoint.as_bytes())
                    .map(|c| c.origin().to_string())
                    .unwrap_or_default()
            });
            return Err(ReceiptError::LogNotPinned { origin });
        }
        (None, Some(_)) => return Err(ReceiptError::NotLogged),
        (None, None) => None,
        (Some(evidence), Some(pins)) => Some(check_log(&json, evidence, &statement, pins)?),
    };
    Ok(CheckedReceipt {
        statement,
        timestamp,
        log: logged,
    })
}

/// The receipt's signature, statement, institution and token.
#[allow(clippy::type_complexity)]
fn check_signed(
    json: &ReceiptJson,
    institution: &PublicKey,
    tsa_anchors: &[TsaAnchor],
) -> Result<(Statement, Option<(Vec<u8>, VerifiedToken)>), ReceiptError> {
    if json.kind != RECEIPT_TYPE {
        return Err(ReceiptError::Malformed {
            why: "its type is not hourglass-receipt",
        });
    }
    if !(1..=3).contains(&json.version) {
        return Err(ReceiptError::UnsupportedVersion {
            found: json.version,
        });
    }
    if (json.version >= 2) != json.timestamp.is_some() {
        return Err(ReceiptError::Malformed {
            why: "a receipt of version 2 or 3, and only one, carries a timestamp",
        });
    }
    let signature = base64_decode(&json.signature).ok_or(ReceiptError::Malformed {
        why: "the signature is not base64",
    })?;
    // The verifier's algorithm, over the exact signed bytes, before anything is believed.
    Pss::new(HashAlg::Sha256)
        .verify(institution, json.statement.as_bytes(), &signature)
        .map_err(|_| ReceiptError::BadSignature)?;
    let statement = Statement::parse(&json.statement, json.version)?;
    let given = institution_fingerprint(institution)?;
    if statement.institution != given {
        return Err(ReceiptError::OtherInstitution {
            named: statement.institution,
            given,
        });
    }
    let timestamp = match (&json.timestamp, &statement.timestamp_sha256) {
        (Some(b64), Some(named)) => {
            let token = base64_decode(b64).ok_or(ReceiptError::Malformed {
                why: "the timestamp is not base64",
            })?;
            if hex::encode(Sha256::digest(&token)) != *named {
                return Err(ReceiptError::TimestampMismatch {
                    why: "the token is not the one the statement names",
                });
            }
            // The anchors the verifier names, and only those; the institution's key when it
            // names none.
            let anchors = if tsa_anchors.is_empty() {
                vec![TsaAnchor::Key {
                    key: institution.clone(),
                    name: format!("institution key {}", &given[..16]),
                }]
            } else {
                tsa_anchors.to_vec()
            };
            let verified = verify_token(&token, &[], &anchors).map_err(ReceiptError::Timestamp)?;
            let info = verified.info();
            if info.hash() != HashAlg::Sha256
                || hex::encode(info.imprint()) != statement.bundle_sha256
            {
                return Err(ReceiptError::TimestampMismatch {
                    why: "the token covers another bundle than the statement's",
                });
            }
            let gen_time = unix_secs(info.gen_time_whole())
                + u64::from(info.gen_time() != info.gen_time_whole());
            if ![info.latest_unix(), gen_time].contains(&statement.received_unix) {
                return Err(ReceiptError::TimestampMismatch {
                    why: "the statement's received time is neither the latest time the token proves nor its genTime",
                });
            }
            Some((token, verified))
        }
        _ => None,
    };
    Ok((statement, timestamp))
}

/// The receipt's log evidence under the pinned keys.
fn check_log(
    json: &ReceiptJson,
    evidence: &LogJson,
    statement: &Statement,
    pins: &LogPins,
) -> Result<LoggedReceipt, ReceiptError> {
    let checkpoint = SignedCheckpoint::parse(evidence.checkpoint.as_bytes())
        .map_err(ReceiptError::Log)?
        .verify(pins)
        .map_err(ReceiptError::Log)?;
    if let Some(named) = &statement.log {
        if *named != checkpoint.origin {
            return Err(ReceiptError::LogMismatch {
                why: "the statement names another log than the checkpoint's",
            });
        }
    }
    let path = evidence
        .proof
        .iter()
        .map(|h| hash_from_base64(h, "inclusion proof"))
        .collect::<Result<Vec<_>, _>>()
        .map_err(ReceiptError::Log)?;
    let proof = InclusionProof {
        index: evidence.index,
        size: checkpoint.size,
        path,
    };
    proof
        .verify(&json.entry(), &checkpoint.root)
        .map_err(ReceiptError::Log)?;
    Ok(LoggedReceipt {
        index: evidence.index,
        checkpoint,
        trust: pins.trust(),
    })
}

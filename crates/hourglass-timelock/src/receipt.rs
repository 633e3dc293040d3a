//! Signed receipts: an institution's RSA-PSS signature over a canonical statement of its verdict
//! on a submission (docs/FORMATS.md section 17).
//!
//! A receipt is JSON `{"type": "hourglass-receipt", "version": 1, "statement": TEXT,
//! "signature": BASE64}`. `TEXT` is the canonical statement: fixed lines `key: value` in a fixed
//! order, ending in a newline, and the signature is RSASSA-PSS with SHA-256 (MGF1-SHA-256, any
//! salt length) over exactly those bytes. The verifier fixes the algorithm and supplies the
//! institution's public key; it reads every fact from the signed text and nothing from the
//! JSON around it, so nothing outside the signature can change what a receipt says.

use std::time::SystemTime;

use hourglass_arith::entropy::EntropySource;
use hourglass_rsa::encoding::{encode_public_key, KeyFormat};
use hourglass_rsa::padding::Pss;
use hourglass_rsa::{HashAlg, PrivateKey, PublicKey};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::verdict::{rfc3339, Dating};

const RECEIPT_TYPE: &str = "hourglass-receipt";
const RECEIPT_VERSION: u32 = 1;
/// The first line of every statement.
const STATEMENT_HEADER: &str = "hourglass-receipt v1";
/// The largest receipt file we parse.
pub const MAX_RECEIPT_BYTES: usize = 64 * 1024;
/// The longest reason a statement carries (longer ones are cut).
const MAX_REASON_CHARS: usize = 500;

/// Why a receipt was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReceiptError {
    /// The file is not a receipt (not JSON of the receipt's shape, or too large).
    #[error("not a receipt: {why}")]
    Malformed {
        /// What is wrong.
        why: &'static str,
    },
    /// The receipt names a version this build does not read.
    #[error("receipt version {found} is not supported (this build reads version 1)")]
    UnsupportedVersion {
        /// The version found.
        found: u32,
    },
    /// The statement is not in canonical form.
    #[error("the receipt's statement is not canonical: line {line} should be `{expected}: ...`")]
    NotCanonical {
        /// The 1-based line that is wrong.
        line: usize,
        /// The key expected there.
        expected: &'static str,
    },
    /// A field of the statement has a value outside its form.
    #[error("the receipt's statement has an invalid {field}")]
    BadField {
        /// The field.
        field: &'static str,
    },
    /// The signature does not verify under the institution's key (forged or altered receipt,
    /// or another institution's).
    #[error("the receipt's signature does not verify under this institution key")]
    BadSignature,
    /// The statement names another institution key than the one given.
    #[error("the receipt was signed for institution key {named}, not the one given ({given})")]
    OtherInstitution {
        /// The fingerprint the statement names.
        named: String,
        /// The fingerprint of the key given.
        given: String,
    },
    /// Signing failed.
    #[error(transparent)]
    Rsa(#[from] hourglass_rsa::Error),
}

/// The verdict a receipt states.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReceiptVerdict {
    /// The bundle verified for the document.
    Valid,
    /// It did not.
    Invalid,
}

impl ReceiptVerdict {
    /// `valid` or `invalid`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReceiptVerdict::Valid => "valid",
            ReceiptVerdict::Invalid => "invalid",
        }
    }
}

/// What a receipt states, in signing order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Statement {
    /// SHA-256 fingerprint (hex) of the institution's public key (its SPKI DER).
    pub institution: String,
    /// The submission's id at the institution.
    pub submission: String,
    /// The set's name.
    pub set: String,
    /// SHA-256 (hex) of the set file as published.
    pub set_sha256: String,
    /// SHA-256 (hex) of the document.
    pub document_sha256: String,
    /// SHA-256 (hex) of the bundle file.
    pub bundle_sha256: String,
    /// When the institution received the submission (whole seconds since the Unix epoch).
    pub received_unix: u64,
    /// The verdict.
    pub verdict: ReceiptVerdict,
    /// Time credited, in milliseconds (0 unless valid).
    pub credited_ms: u64,
    /// Why the bundle is invalid (empty when valid).
    pub reason: String,
}

const KEYS: [&str; 11] = [
    "institution",
    "submission",
    "set",
    "set-sha256",
    "document-sha256",
    "bundle-sha256",
    "received",
    "verdict",
    "credited-ms",
    "predated-to",
    "reason",
];

impl Statement {
    /// The statement's verdict placed in time (the one rule every surface dates with).
    pub fn dating(&self, deadline_unix: Option<u64>) -> Dating {
        Dating::of_credit(
            self.verdict == ReceiptVerdict::Valid,
            self.credited_ms,
            self.received_unix,
            deadline_unix,
        )
    }

    /// When the document provably existed: received minus the credited time, not before the
    /// epoch.
    pub fn predated_to(&self) -> SystemTime {
        self.dating(None).predated_to()
    }

    /// When the submission was received.
    pub fn received(&self) -> SystemTime {
        self.dating(None).received()
    }

    /// Whether `document` is the one the statement names (its SHA-256), streaming.
    pub fn document_matches(&self, mut document: impl std::io::Read) -> std::io::Result<bool> {
        let mut h = Sha256::new();
        std::io::copy(&mut document, &mut h)?;
        Ok(hex::encode(h.finalize()) == self.document_sha256)
    }

    /// The canonical text that is signed.
    pub fn canonical(&self) -> String {
        let predated = self.predated_to();
        let values: [String; 11] = [
            self.institution.clone(),
            self.submission.clone(),
            one_line(&self.set),
            self.set_sha256.clone(),
            self.document_sha256.clone(),
            self.bundle_sha256.clone(),
            rfc3339(self.received()),
            self.verdict.as_str().into(),
            self.credited_ms.to_string(),
            rfc3339(predated),
            one_line(&self.reason),
        ];
        let mut text = String::from(STATEMENT_HEADER);
        text.push('\n');
        for (k, v) in KEYS.iter().zip(values) {
            text.push_str(k);
            text.push_str(": ");
            text.push_str(&v);
            text.push('\n');
        }
        text
    }

    /// Parses canonical text: every line in order, and the text must re-encode to itself.
    fn parse(text: &str) -> Result<Self, ReceiptError> {
        let mut lines = text.split('\n');
        if lines.next() != Some(STATEMENT_HEADER) {
            return Err(ReceiptError::NotCanonical {
                line: 1,
                expected: "hourglass-receipt v1",
            });
        }
        let mut values = Vec::with_capacity(KEYS.len());
        for (i, key) in KEYS.iter().enumerate() {
            let bad = ReceiptError::NotCanonical {
                line: i + 2,
                expected: key,
            };
            let line = lines.next().ok_or(bad)?;
            let value = line
                .strip_prefix(key)
                .and_then(|r| r.strip_prefix(": "))
                .ok_or(ReceiptError::NotCanonical {
                    line: i + 2,
                    expected: key,
                })?;
            values.push(value);
        }
        if lines.next() != Some("") || lines.next().is_some() {
            return Err(ReceiptError::Malformed {
                why: "the statement has lines after the reason",
            });
        }
        let hex64 = |field: &'static str, v: &str| {
            if v.len() == 64
                && v.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
            {
                Ok(v.to_string())
            } else {
                Err(ReceiptError::BadField { field })
            }
        };
        let received = humantime::parse_rfc3339(values[6])
            .map_err(|_| ReceiptError::BadField { field: "received" })?;
        let received_unix = received
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_err(|_| ReceiptError::BadField { field: "received" })?
            .as_secs();
        let verdict = match values[7] {
            "valid" => ReceiptVerdict::Valid,
            "invalid" => ReceiptVerdict::Invalid,
            _ => return Err(ReceiptError::BadField { field: "verdict" }),
        };
        let credited_ms: u64 = values[8].parse().map_err(|_| ReceiptError::BadField {
            field: "credited-ms",
        })?;
        let statement = Statement {
            institution: hex64("institution", values[0])?,
            submission: values[1].to_string(),
            set: values[2].to_string(),
            set_sha256: hex64("set-sha256", values[3])?,
            document_sha256: hex64("document-sha256", values[4])?,
            bundle_sha256: hex64("bundle-sha256", values[5])?,
            received_unix,
            verdict,
            credited_ms,
            reason: values[10].to_string(),
        };
        // One text per statement: anything that would not re-encode byte for byte (a leading
        // zero, another time zone spelling, a predated time that does not follow) is refused.
        if statement.canonical() != text {
            return Err(ReceiptError::Malformed {
                why: "the statement does not re-encode to the signed text",
            });
        }
        Ok(statement)
    }
}

/// Newlines and control characters become spaces; long text is cut.
fn one_line(s: &str) -> String {
    s.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .take(MAX_REASON_CHARS)
        .collect()
}

/// SHA-256 (hex) of a public key's SPKI DER: the fingerprint receipts name.
pub fn institution_fingerprint(key: &PublicKey) -> Result<String, ReceiptError> {
    let der = encode_public_key(key, KeyFormat::Der)?;
    Ok(hex::encode(Sha256::digest(&der)))
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReceiptJson {
    #[serde(rename = "type")]
    kind: String,
    version: u32,
    statement: String,
    signature: String,
}

/// Signs `statement` (its `institution` field is set from `key`) and returns the receipt JSON.
pub fn sign_receipt(
    statement: &Statement,
    key: &PrivateKey,
    rng: &mut dyn EntropySource,
) -> Result<String, ReceiptError> {
    let mut statement = statement.clone();
    statement.institution = institution_fingerprint(key.public())?;
    statement.reason = one_line(&statement.reason);
    statement.set = one_line(&statement.set);
    let text = statement.canonical();
    let signature = Pss::new(HashAlg::Sha256).sign(key, text.as_bytes(), rng)?;
    let json = ReceiptJson {
        kind: RECEIPT_TYPE.into(),
        version: RECEIPT_VERSION,
        statement: text,
        signature: base64_encode(&signature),
    };
    Ok(serde_json::to_string_pretty(&json).unwrap_or_default() + "\n")
}

/// Checks a receipt against the institution's public key and returns what it states.
pub fn check_receipt(receipt: &[u8], institution: &PublicKey) -> Result<Statement, ReceiptError> {
    if receipt.len() > MAX_RECEIPT_BYTES {
        return Err(ReceiptError::Malformed {
            why: "larger than any receipt",
        });
    }
    let json: ReceiptJson =
        serde_json::from_slice(receipt).map_err(|_| ReceiptError::Malformed {
            why: "not JSON with exactly the fields type, version, statement, signature",
        })?;
    if json.kind != RECEIPT_TYPE {
        return Err(ReceiptError::Malformed {
            why: "its type is not hourglass-receipt",
        });
    }
    if json.version != RECEIPT_VERSION {
        return Err(ReceiptError::UnsupportedVersion {
            found: json.version,
        });
    }
    let signature = base64_decode(&json.signature).ok_or(ReceiptError::Malformed {
        why: "the signature is not base64",
    })?;
    // The verifier's algorithm, over the exact signed bytes, before anything is believed.
    Pss::new(HashAlg::Sha256)
        .verify(institution, json.statement.as_bytes(), &signature)
        .map_err(|_| ReceiptError::BadSignature)?;
    let statement = Statement::parse(&json.statement)?;
    let given = institution_fingerprint(institution)?;
    if statement.institution != given {
        return Err(ReceiptError::OtherInstitution {
            named: statement.institution,
            given,
        });
    }
    Ok(statement)
}

fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn base64_decode(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use hourglass_arith::entropy::SeededEntropy;
    use hourglass_rsa::{KeyGenOptions, Variant};

    fn key(seed: u8) -> PrivateKey {
        let mut rng = SeededEntropy::new(&[seed; 32]);
        KeyGenOptions::new(2048, Variant::Crt)
            .generate(&mut rng)
            .unwrap()
    }

    fn statement() -> Statement {
        Statement {
            institution: String::new(),
            submission: "0123abcd".into(),
            set: "Conf 2027".into(),
            set_sha256: "11".repeat(32),
            document_sha256: "22".repeat(32),
            bundle_sha256: "33".repeat(32),
            received_unix: 1_800_000_000,
            verdict: ReceiptVerdict::Valid,
            credited_ms: 14_400_000,
            reason: String::new(),
        }
    }

    #[test]
    fn a_signed_receipt_checks_and_states_what_was_signed() {
        let k = key(1);
        let mut rng = SeededEntropy::new(&[9; 32]);
        let r = sign_receipt(&statement(), &k, &mut rng).unwrap();
        let s = check_receipt(r.as_bytes(), k.public()).unwrap();
        assert_eq!(s.submission, "0123abcd");
        assert_eq!(s.verdict, ReceiptVerdict::Valid);
        assert_eq!(s.credited_ms, 14_400_000);
        assert_eq!(rfc3339(s.predated_to()), "2027-01-15T04:00:00Z");
    }

    #[test]
    fn another_institution_key_or_any_edit_is_refused() {
        let k = key(1);
        let mut rng = SeededEntropy::new(&[9; 32]);
        let r = sign_receipt(&statement(), &k, &mut rng).unwrap();
        assert!(matches!(
            check_receipt(r.as_bytes(), key(2).public()),
            Err(ReceiptError::BadSignature)
        ));
        let edited = r.replace("verdict: valid", "verdict: invalid");
        assert_ne!(edited, r);
        assert!(matches!(
            check_receipt(edited.as_bytes(), k.public()),
            Err(ReceiptError::BadSignature)
        ));
        let edited = r.replace("credited-ms: 14400000", "credited-ms: 94400000");
        assert!(check_receipt(edited.as_bytes(), k.public()).is_err());
    }

    #[test]
    fn a_signed_but_non_canonical_statement_is_refused() {
        // Even a statement the institution's key signed is refused unless canonical, so one
        // verdict has one text.
        let k = key(1);
        let mut rng = SeededEntropy::new(&[9; 32]);
        let mut s = statement();
        s.institution = institution_fingerprint(k.public()).unwrap();
        let text = s
            .canonical()
            .replace("credited-ms: 14400000", "credited-ms: 014400000");
        let sig = Pss::new(HashAlg::Sha256)
            .sign(&k, text.as_bytes(), &mut rng)
            .unwrap();
        let json = serde_json::json!({
            "type": RECEIPT_TYPE, "version": 1, "statement": text, "signature": base64_encode(&sig),
        })
        .to_string();
        assert!(matches!(
            check_receipt(json.as_bytes(), k.public()),
            Err(ReceiptError::Malformed { .. })
        ));
    }

    #[test]
    fn reasons_stay_on_one_line() {
        let k = key(1);
        let mut rng = SeededEntropy::new(&[9; 32]);
        let mut s = statement();
        s.verdict = ReceiptVerdict::Invalid;
        s.credited_ms = 0;
        s.reason = "link 2\nverdict: valid".into();
        let r = sign_receipt(&s, &k, &mut rng).unwrap();
        let back = check_receipt(r.as_bytes(), k.public()).unwrap();
        assert_eq!(back.verdict, ReceiptVerdict::Invalid);
        assert_eq!(back.reason, "link 2 verdict: valid");
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let k = key(1);
        for input in [
            &b""[..],
            b"{}",
            b"[1]",
            &[0xff; 10],
            b"{\"type\":\"hourglass-receipt\",\"version\":2,\"statement\":\"\",\"signature\":\"\"}",
        ] {
            assert!(check_receipt(input, k.public()).is_err());
        }
    }
}

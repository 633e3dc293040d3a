//! The public transcript of a generation: what a committee publishes so that anyone can name
//! and check its modulus (for example as the modulus of a public puzzle set).
//!
//! Every member derives the same transcript from the public fields of its share: the cluster's
//! name, the session id, the members and the public key. Its fingerprint is what an institution
//! records in a public set (docs/FORMATS.md sections 12.10 and 16.6):
//!
//! ```json
//! {"format": "hourglass-dkg-transcript-v1", "cluster": "conf-2027", "session": "<32 hex>",
//!  "members": [1, 2, 3], "n": "<hex>", "e": 65537, "fingerprint": "<64 hex>"}
//! ```

use hourglass_arith::Integer;
use rug::integer::Order;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::keyshare::KeyShare;
use crate::transport::PartyId;
use crate::{Error, Result, ShareError, TranscriptProblem};

/// The format tag of transcript files.
pub const TRANSCRIPT_FORMAT: &str = "hourglass-dkg-transcript-v1";

/// The public record of one generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicTranscript {
    /// The cluster's name.
    pub cluster: String,
    /// The session that generated the key.
    pub session: [u8; 16],
    /// Every party holding a share, sorted.
    pub members: Vec<PartyId>,
    /// The modulus.
    pub n: Integer,
    /// The public exponent.
    pub e: u64,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TranscriptFile {
    format: String,
    cluster: String,
    session: String,
    members: Vec<PartyId>,
    n: String,
    e: u64,
    fingerprint: String,
}

impl PublicTranscript {
    /// The transcript of the generation that produced `share` (its public fields only).
    pub fn of(share: &KeyShare) -> Self {
        Self {
            cluster: share.cluster.clone(),
            session: share.session,
            members: share.members.clone(),
            n: share.public.n().clone(),
            e: share.public.e().to_u64().unwrap_or(0),
        }
    }

    /// SHA-256 over the length-prefixed fields: the tag, the cluster name, the session, the
    /// members (`u16be` each), `N` (minimal big-endian) and `u64be(e)`.
    pub fn fingerprint(&self) -> [u8; 32] {
        let mut h = Sha256::new();
        let mut field = |bytes: &[u8]| {
            h.update((bytes.len() as u32).to_be_bytes());
            h.update(bytes);
        };
        field(TRANSCRIPT_FORMAT.as_bytes());
        field(self.cluster.as_bytes());
        field(&self.session);
        let members: Vec<u8> = self.members.iter().flat_map(|m| m.to_be_bytes()).collect();
        field(&members);
        field(&self.n.to_digits::<u8>(Order::Msf));
        field(&self.e.to_be_bytes());
        h.finalize().into()
    }

    /// The fingerprint in hex.
    pub fn fingerprint_hex(&self) -> String {
        hex::encode(self.fingerprint())
    }

    /// The transcript file.
    pub fn to_json(&self) -> String {
        let file = TranscriptFile {
            format: TRANSCRIPT_FORMAT.into(),
            cluster: self.cluster.clone(),
            session: hex::encode(self.session),
            members: self.members.clone(),
            n: self.n.to_string_radix(16),
            e: self.e,
            fingerprint: self.fingerprint_hex(),
        };
        let mut s = serde_json::to_string_pretty(&file).unwrap_or_default();
        s.push('\n');
        s
    }

    /// Parses a transcript file, checking its fingerprint.
    pub fn from_json(text: &str) -> Result<Self> {
        let bad = |why: TranscriptProblem| Error::from(ShareError::Transcript(why));
        let file: TranscriptFile =
            serde_json::from_str(text).map_err(|e| bad(TranscriptProblem::Json(e)))?;
        if file.format != TRANSCRIPT_FORMAT {
            return Err(bad(TranscriptProblem::Format { found: file.format }));
        }
        let session: [u8; 16] = hex::decode(&file.session)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| bad(TranscriptProblem::Session))?;
        let n = hourglass_arith::integer_from_hex(&file.n)
            .ok_or_else(|| bad(TranscriptProblem::NotHex))?;
        let t = Self {
            cluster: file.cluster,
            session,
            members: file.members,
            n,
            e: file.e,
        };
        if t.fingerprint_hex() != file.fingerprint.to_ascii_lowercase() {
            return Err(bad(TranscriptProblem::Fingerprint));
        }
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PublicTranscript {
        PublicTranscript {
            cluster: "conf".into(),
            session: [7; 16],
            members: vec![1, 2, 3],
            n: Integer::from(0xabcdefu32) << 1000u32,
            e: 65537,
        }
    }

    #[test]
    fn round_trips_and_detects_edits() {
        let t = sample();
        let text = t.to_json();
        assert_eq!(PublicTranscript::from_json(&text).unwrap(), t);
        for (from, to) in [
            ("\"conf\"", "\"conf2\""),
            ("65537", "3"),
            ("\"members\": [\n    1,", "\"members\": [\n    4,"),
        ] {
            assert!(text.contains(from), "{from}");
            assert!(PublicTranscript::from_json(&text.replacen(from, to, 1)).is_err());
        }
        assert!(PublicTranscript::from_json("{}").is_err());
    }
}

//! A party's share of the private key, and its file.
//!
//! The file (`docs/FORMATS.md` section 16) is strict JSON, written with mode 0600:
//!
//! ```json
//! {"format": "hourglass-dkg-share-v1", "cluster": "test-cluster", "session": "<32 hex>",
//!  "party": 2, "members": [1, 2, 3], "n": "<hex>", "e": 65537, "d_share": "-<hex>"}
//! ```
//!
//! `d_share` is signed (the shares of all but the first member are negative). The signature
//! of `m` is `prod_j m^(d_j) mod N` over all members.

use std::path::Path;

use hourglass_arith::secret::SecretInt;
use hourglass_rsa::PublicKey;
use rug::Integer;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::transport::PartyId;
use crate::{Error, IoOp, Result, ShareError, ShareField};

/// The format tag of share files.
pub const SHARE_FORMAT: &str = "hourglass-dkg-share-v1";

/// One party's share of a jointly generated RSA key.
pub struct KeyShare {
    /// The cluster name.
    pub cluster: String,
    /// The session that generated the key.
    pub session: [u8; 16],
    /// This party.
    pub party: PartyId,
    /// Every party holding a share, sorted.
    pub members: Vec<PartyId>,
    /// The public key.
    pub public: PublicKey,
    d_share: SecretInt,
}

impl std::fmt::Debug for KeyShare {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyShare")
            .field("cluster", &self.cluster)
            .field("party", &self.party)
            .field("members", &self.members)
            .field("bits", &self.public.bits())
            .finish_non_exhaustive()
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ShareFile {
    format: String,
    cluster: String,
    session: String,
    party: PartyId,
    members: Vec<PartyId>,
    n: String,
    e: u64,
    d_share: String,
}

impl KeyShare {
    /// A share (from the protocol).
    pub fn new(
        cluster: String,
        session: [u8; 16],
        party: PartyId,
        members: Vec<PartyId>,
        public: PublicKey,
        d_share: SecretInt,
    ) -> Self {
        KeyShare {
            cluster,
            session,
            party,
            members,
            public,
            d_share,
        }
    }

    /// The secret exponent share.
    pub fn d_share(&self) -> &Integer {
        self.d_share.expose()
    }

    /// This party's 1-based position among the members.
    pub fn position(&self) -> usize {
        self.members
            .iter()
            .position(|&m| m == self.party)
            .map_or(0, |i| i + 1)
    }

    /// The file contents (secret: write with mode 0600).
    pub fn to_json(&self) -> Zeroizing<String> {
        let share = self.d_share.expose();
        let d = if *share < 0 {
            format!("-{}", Integer::from(-share).to_string_radix(16))
        } else {
            share.to_string_radix(16)
        };
        let file = ShareFile {
            format: SHARE_FORMAT.into(),
            cluster: self.cluster.clone(),
            session: hex::encode(self.session),
            party: self.party,
            members: self.members.clone(),
            n: self.public.n().to_string_radix(16),
            e: self.public.e().to_u64().unwrap_or(0),
            d_share: d,
        };
        let mut s = serde_json::to_string_pretty(&file).unwrap_or_default();
        s.push('\n');
        let mut d_field = file.d_share;
        zeroize::Zeroize::zeroize(&mut d_field);
        Zeroizing::new(s)
    }

    /// Parses a share file.
    pub fn from_json(text: &str) -> Result<Self> {
        let mut file: ShareFile = serde_json::from_str(text).map_err(ShareError::Json)?;
        if file.format != SHARE_FORMAT {
            return Err(ShareError::Format { found: file.format }.into());
        }
        let session: [u8; 16] = hex::decode(&file.session)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or(ShareError::Session)?;
        let mut members = file.members.clone();
        members.sort_unstable();
        members.dedup();
        if members != file.members || members.len() < 3 || !members.contains(&file.party) {
            return Err(ShareError::Members.into());
        }
        let hex_int = |s: &str, field: ShareField| {
            let (neg, digits) = match s.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, s),
            };
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(ShareError::NotHex { field });
            }
            let v =
                Integer::from_str_radix(digits, 16).map_err(|_| ShareError::NotHex { field })?;
            Ok(if neg { -v } else { v })
        };
        let n = hex_int(&file.n, ShareField::N)?;
        if n <= 0 {
            return Err(ShareError::NonPositiveModulus.into());
        }
        let public = PublicKey::new(n, Integer::from(file.e)).map_err(ShareError::PublicKey)?;
        let d_share = SecretInt::new(hex_int(&file.d_share, ShareField::DShare)?);
        zeroize::Zeroize::zeroize(&mut file.d_share);
        if d_share.expose().significant_bits() > public.bits() + 64 {
            return Err(ShareError::ShareTooLarge.into());
        }
        Ok(KeyShare {
            cluster: file.cluster,
            session,
            party: file.party,
            members,
            public,
            d_share,
        })
    }

    /// Reads a share file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = Zeroizing::new(
            std::fs::read_to_string(path)
                .map_err(|e| Error::io(IoOp::ReadShare(path.to_path_buf()), e))?,
        );
        Self::from_json(&text).map_err(|e| match e {
            Error::Share(problem) => ShareError::File {
                path: path.to_path_buf(),
                problem: Box::new(problem),
            }
            .into(),
            other => other,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn share_file_errors_name_the_file_and_the_cause() {
        let dir = std::env::temp_dir().join(format!("hg-share-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("party-1.share.json");
        std::fs::write(
            &path,
            r#"{"format": "other", "cluster": "c", "session": "00", "party": 1,
                "members": [1, 2, 3], "n": "ff", "e": 65537, "d_share": "1"}"#,
        )
        .unwrap();
        let err = KeyShare::load(&path).unwrap_err();
        std::fs::remove_dir_all(&dir).unwrap();
        match &err {
            Error::Share(ShareError::File { path: at, problem }) => {
                assert_eq!(at, &path);
                assert!(
                    matches!(&**problem, ShareError::Format { found } if found == "other"),
                    "{problem:?}"
                );
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            err.to_string(),
            format!(
                "key share: {}: format \"other\", expected \"{SHARE_FORMAT}\"",
                path.display()
            )
        );
        let err = KeyShare::from_json(
            r#"{"format": "hourglass-dkg-share-v1", "cluster": "c",
                "session": "000102030405060708090a0b0c0d0e0f", "party": 1,
                "members": [1, 2, 3], "n": "xyz", "e": 65537, "d_share": "1"}"#,
        )
        .unwrap_err();
        assert!(
            matches!(
                err,
                Error::Share(ShareError::NotHex {
                    field: ShareField::N
                })
            ),
            "{err:?}"
        );
    }
}

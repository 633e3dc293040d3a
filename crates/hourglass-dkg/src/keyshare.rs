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
use crate::{Error, Result};

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
        d_share: Integer,
    ) -> Self {
        KeyShare {
            cluster,
            session,
            party,
            members,
            public,
            d_share: SecretInt::new(d_share),
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
        let mut file: ShareFile = serde_json::from_str(text)
            .map_err(|e| Error::Share(format!("not a share file: {e}")))?;
        if file.format != SHARE_FORMAT {
            return Err(Error::Share(format!(
                "format {:?}, expected {SHARE_FORMAT:?}",
                file.format
            )));
        }
        let session: [u8; 16] = hex::decode(&file.session)
            .ok()
            .and_then(|b| b.try_into().ok())
            .ok_or_else(|| Error::Share("session must be 32 hex digits".into()))?;
        let mut members = file.members.clone();
        members.sort_unstable();
        members.dedup();
        if members != file.members || members.len() < 3 || !members.contains(&file.party) {
            return Err(Error::Share(
                "members must be at least 3 sorted distinct ids including this party".into(),
            ));
        }
        let hex_int = |s: &str, what: &str| {
            let (neg, digits) = match s.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, s),
            };
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Err(Error::Share(format!("{what} is not a hex number")));
            }
            let v = Integer::from_str_radix(digits, 16)
                .map_err(|_| Error::Share(format!("{what} is not a hex number")))?;
            Ok(if neg { -v } else { v })
        };
        let n = hex_int(&file.n, "n")?;
        if n <= 0 {
            return Err(Error::Share("n must be positive".into()));
        }
        let public = PublicKey::new(n, Integer::from(file.e))
            .map_err(|e| Error::Share(format!("public key: {e}")))?;
        let d_share = SecretInt::new(hex_int(&file.d_share, "d_share")?);
        zeroize::Zeroize::zeroize(&mut file.d_share);
        if d_share.expose().significant_bits() > public.bits() + 64 {
            return Err(Error::Share("d_share is larger than the modulus".into()));
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
                .map_err(|e| Error::io(format!("reading share {}", path.display()), e))?,
        );
        Self::from_json(&text).map_err(|e| {
            Error::Share(format!(
                "{}: {}",
                path.display(),
                e.to_string().trim_start_matches("key share: ")
            ))
        })
    }
}

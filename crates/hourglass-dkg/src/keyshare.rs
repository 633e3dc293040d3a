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
//!
//! A reshare turns these n-of-n files into version 2 files (section 16.7), holding a party's
//! threshold share ([`ThresholdShare`]): any `t + 1` members sign. [`AnyShare`] reads either.

use std::path::Path;

use hourglass_arith::secret::SecretInt;
use hourglass_rsa::PublicKey;
use rug::Integer;
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::threshold::{Claim, ThresholdPublic, ThresholdShare};
use crate::transport::PartyId;
use crate::{Error, IoOp, Result, ShareError, ShareField};

pub(crate) mod error;
pub use crate::formats::{SHARE_FORMAT, THRESHOLD_SHARE_FORMAT};

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
        let session = session_of(&file.session)?;
        let members = members_of(&file.members, file.party)?;
        let public = public_key(&file.n, file.e)?;
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
        read_share(path, Self::from_json)
    }
}

/// Reads the share file at `path` with `parse`, naming the file in a parse error.
fn read_share<T>(path: &Path, parse: impl FnOnce(&str) -> Result<T>) -> Result<T> {
    let text = Zeroizing::new(
        std::fs::read_to_string(path)
            .map_err(|e| Error::io(IoOp::ReadShare(path.to_path_buf()), e))?,
    );
    parse(&text).map_err(|e| match e {
        Error::Share(problem) => ShareError::File {
            path: path.to_path_buf(),
            problem: Box::new(problem),
        }
        .into(),
        other => other,
    })
}

/// A signed hexadecimal integer field (`-` for negative, lowercase or uppercase digits).
fn hex_int(s: &str, field: ShareField) -> std::result::Result<Integer, ShareError> {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(ShareError::NotHex { field });
    }
    let v = Integer::from_str_radix(digits, 16).map_err(|_| ShareError::NotHex { field })?;
    Ok(if neg { -v } else { v })
}

/// A value below `n` and above 0 (a verification base or key).
fn unit_of(s: &str, field: ShareField, n: &Integer) -> std::result::Result<Integer, ShareError> {
    let v = hex_int(s, field)?;
    if v <= 0 || v >= *n {
        return Err(ShareError::OutOfRange { field });
    }
    Ok(v)
}

fn session_of(s: &str) -> std::result::Result<[u8; 16], ShareError> {
    hex::decode(s)
        .ok()
        .and_then(|b| b.try_into().ok())
        .ok_or(ShareError::Session)
}

fn members_of(listed: &[PartyId], party: PartyId) -> std::result::Result<Vec<PartyId>, ShareError> {
    let mut members = listed.to_vec();
    members.sort_unstable();
    members.dedup();
    if members != listed || members.len() < 3 || !members.contains(&party) {
        return Err(ShareError::Members);
    }
    Ok(members)
}

fn public_key(n: &str, e: u64) -> std::result::Result<PublicKey, ShareError> {
    let n = hex_int(n, ShareField::N)?;
    if n <= 0 {
        return Err(ShareError::NonPositiveModulus);
    }
    PublicKey::new(n, Integer::from(e)).map_err(ShareError::PublicKey)
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct ThresholdShareFile {
    format: String,
    cluster: String,
    session: String,
    party: PartyId,
    members: Vec<PartyId>,
    threshold: usize,
    epoch: u32,
    epoch_session: String,
    n: String,
    e: u64,
    share: String,
    verification_base: String,
    verification_keys: Vec<String>,
}

impl ThresholdShare {
    /// The version 2 file contents (secret: write with mode 0600).
    pub fn to_json(&self) -> Zeroizing<String> {
        let p = &self.public;
        let hex = |v: &Integer| v.to_string_radix(16);
        let file = ThresholdShareFile {
            format: THRESHOLD_SHARE_FORMAT.into(),
            cluster: p.cluster.clone(),
            session: hex::encode(p.session),
            party: self.party,
            members: p.members.clone(),
            threshold: p.threshold,
            epoch: p.epoch,
            epoch_session: hex::encode(p.epoch_session),
            n: hex(p.public.n()),
            e: p.public.e().to_u64().unwrap_or(0),
            share: hex(self.share()),
            verification_base: hex(&p.base),
            verification_keys: p.keys.iter().map(hex).collect(),
        };
        let mut s = serde_json::to_string_pretty(&file).unwrap_or_default();
        s.push('\n');
        let mut share_field = file.share;
        zeroize::Zeroize::zeroize(&mut share_field);
        Zeroizing::new(s)
    }

    /// Parses a version 2 share file.
    pub fn from_json(text: &str) -> Result<Self> {
        let mut file: ThresholdShareFile = serde_json::from_str(text).map_err(ShareError::Json)?;
        if file.format != THRESHOLD_SHARE_FORMAT {
            return Err(ShareError::Format { found: file.format }.into());
        }
        let session = session_of(&file.session)?;
        let epoch_session = session_of(&file.epoch_session)?;
        let members = members_of(&file.members, file.party)?;
        let public = public_key(&file.n, file.e)?;
        let sizes = crate::threshold::Sizes::new(public.bits(), members.len(), file.threshold)
            .map_err(|_| ShareError::Threshold {
                threshold: file.threshold,
                members: members.len(),
            })?;
        if file.epoch == 0 {
            return Err(ShareError::Epoch.into());
        }
        if file.verification_keys.len() != members.len() {
            return Err(ShareError::VerificationKeys {
                keys: file.verification_keys.len(),
                members: members.len(),
            }
            .into());
        }
        let n = public.n().clone();
        let base = unit_of(&file.verification_base, ShareField::VerificationBase, &n)?;
        let keys = file
            .verification_keys
            .iter()
            .zip(&members)
            .map(|(k, &member)| unit_of(k, ShareField::VerificationKey { member }, &n))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let share = SecretInt::new(hex_int(&file.share, ShareField::Share)?);
        zeroize::Zeroize::zeroize(&mut file.share);
        if *share.expose() <= 0 || share.expose().significant_bits() > sizes.share_bits {
            return Err(ShareError::OutOfRange {
                field: ShareField::Share,
            }
            .into());
        }
        let public = ThresholdPublic {
            cluster: file.cluster,
            session,
            members,
            threshold: file.threshold,
            epoch: file.epoch,
            epoch_session,
            public,
            base,
            keys,
        };
        Ok(ThresholdShare::new(public, file.party, share))
    }

    /// Reads a version 2 share file.
    pub fn load(path: &Path) -> Result<Self> {
        read_share(path, Self::from_json)
    }
}

/// A share file of either version: an n-of-n share (v1, from a generation) or a threshold one
/// (v2, from a reshare or refresh).
#[derive(Debug)]
pub enum AnyShare {
    /// A version 1 file: every member signs.
    Additive(KeyShare),
    /// A version 2 file: any `t + 1` members sign.
    Threshold(ThresholdShare),
}

impl AnyShare {
    /// Parses a share file of either version (by its `format`).
    pub fn from_json(text: &str) -> Result<Self> {
        #[derive(Deserialize)]
        struct Format {
            format: String,
        }
        let format: Format = serde_json::from_str(text).map_err(ShareError::Json)?;
        match format.format.as_str() {
            SHARE_FORMAT => KeyShare::from_json(text).map(AnyShare::Additive),
            THRESHOLD_SHARE_FORMAT => ThresholdShare::from_json(text).map(AnyShare::Threshold),
            _ => Err(ShareError::Format {
                found: format.format,
            }
            .into()),
        }
    }

    /// Reads a share file of either version.
    pub fn load(path: &Path) -> Result<Self> {
        read_share(path, Self::from_json)
    }

    /// The party whose share it is.
    pub fn party(&self) -> PartyId {
        match self {
            AnyShare::Additive(s) => s.party,
            AnyShare::Threshold(s) => s.party,
        }
    }

    /// The members holding a share.
    pub fn members(&self) -> &[PartyId] {
        match self {
            AnyShare::Additive(s) => &s.members,
            AnyShare::Threshold(s) => &s.public.members,
        }
    }

    /// The public key.
    pub fn public(&self) -> &PublicKey {
        match self {
            AnyShare::Additive(s) => &s.public,
            AnyShare::Threshold(s) => &s.public.public,
        }
    }

    /// What its holder claims ([`Claim`]): for an n-of-n share, its cluster with threshold
    /// and epoch 0 and no public fingerprint.
    pub fn claim(&self) -> Claim {
        match self {
            AnyShare::Additive(s) => Claim {
                cluster_id: crate::threshold::cluster_id(&s.cluster, &s.session, &s.public),
                session: s.session,
                modulus: crate::threshold::modulus_hash(&s.public),
                threshold: 0,
                epoch: 0,
                threshold_share: false,
                fingerprint: [0; 32],
            },
            AnyShare::Threshold(s) => s.public.claim(),
        }
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
                "key share: {}: format \"other\", expected \"{SHARE_FORMAT}\" or \"{THRESHOLD_SHARE_FORMAT}\"",
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

//! The tokens that date one file: each verified against the verifier's anchors and covering
//! the file's bytes; the file provably existed at the earliest time any of them proves.

use crate::anchor::TsaAnchor;
use crate::error::TimestampError;
use crate::verify::{verify_token_for, Covered, VerifiedToken};

/// A verified token and the name it was given by (its file). Its JSON is `name`, then the
/// verified token's fields ([`VerifiedToken`]'s JSON).
#[derive(Clone, Debug, serde::Serialize)]
pub struct NamedToken {
    name: String,
    #[serde(flatten)]
    token: VerifiedToken,
}

impl NamedToken {
    /// The token's name (its file).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The token, verified.
    pub fn token(&self) -> &VerifiedToken {
        &self.token
    }
}

/// The tokens that date one file: every one verified against the verifier's anchors and
/// covering the file's bytes.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(transparent)]
pub struct Evidence {
    tokens: Vec<NamedToken>,
}

/// Why a token does not date a file: which token, and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("timestamp {name}: {error}")]
pub struct TokenRefused {
    /// The token's name (its file).
    pub name: String,
    /// What is wrong.
    #[source]
    pub error: Box<TimestampError>,
}

impl TokenRefused {
    /// Whether the refusal is a negative verdict (the token does not date the file) rather
    /// than an error (it could not be read or checked).
    pub fn is_verdict(&self) -> bool {
        self.error.is_verdict()
    }
}

impl Evidence {
    /// Verifies every `(name, token)` against `anchors` (with `untrusted` certificates to build
    /// paths from) and checks that each covers `data`. The first token that fails is named.
    pub fn check(
        data: &[u8],
        tokens: &[(String, Vec<u8>)],
        untrusted: &[Vec<u8>],
        anchors: &[TsaAnchor],
    ) -> std::result::Result<Self, TokenRefused> {
        let mut verified = Vec::with_capacity(tokens.len());
        for (name, token) in tokens {
            let token = verify_token_for(token, Covered::Data(data), untrusted, anchors).map_err(
                |error| TokenRefused {
                    name: name.clone(),
                    error: Box::new(error),
                },
            )?;
            verified.push(NamedToken {
                name: name.clone(),
                token,
            });
        }
        Ok(Self { tokens: verified })
    }

    /// The tokens, in the order given.
    pub fn tokens(&self) -> &[NamedToken] {
        &self.tokens
    }

    /// When the file provably existed: the earliest of the tokens' latest times
    /// ([`crate::TokenInfo::latest`]: `genTime + accuracy`, rounded up to a whole second), in
    /// seconds since the epoch. `None` without tokens.
    pub fn received_unix(&self) -> Option<u64> {
        self.tokens
            .iter()
            .map(|t| t.token.info().latest_unix())
            .min()
    }
}

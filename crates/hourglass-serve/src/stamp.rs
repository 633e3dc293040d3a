//! Stamping an upload with the service's own TSA: the token over its bundle, whose latest time
//! is the submission's received time.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hourglass_arith::entropy::OsEntropy;
use hourglass_rsa::HashAlg;
use hourglass_timestamp::{Query, TokenInfo};

use crate::error::Error;
use crate::state::AppState;

/// Now, in whole seconds (a token's genTime).
pub(crate) fn now_whole() -> SystemTime {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    UNIX_EPOCH + Duration::from_secs(secs)
}

/// Stamps a bundle being stored: the token over its SHA-256 and, in milliseconds, the latest
/// time it proves (`genTime + accuracy`: the submission's received time, as every verifier of
/// the token will date it).
pub(crate) async fn stamp_bundle(
    state: &Arc<AppState>,
    bundle_sha256: &[u8],
) -> Result<(Vec<u8>, i64), Error> {
    let query = Query::for_digest(HashAlg::Sha256, bundle_sha256, None, None)?;
    let st = state.clone();
    tokio::task::spawn_blocking(move || {
        let now = now_whole();
        let token = st
            .data
            .tsa()
            .tsa
            .stamp(&query, &st.serials.next(), now, &mut OsEntropy)?;
        let latest = TokenInfo::of_token(&token)?.latest_unix();
        Ok((
            token,
            i64::try_from(latest.saturating_mul(1000)).unwrap_or(i64::MAX),
        ))
    })
    .await
    .map_err(|e| Error::Serve(std::io::Error::other(format!("the TSA stopped: {e}"))))?
}

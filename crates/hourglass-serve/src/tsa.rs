//! The service as an RFC 3161 timestamp authority: `POST /tsa`, its certificates, the token of
//! every stored submission, and the serial numbers (unique across the servers of one database).
//!
//! Every rule of the protocol (what a query may ask, what a token holds, how it is signed) is
//! [`hourglass_timelock::timestamp`]'s; this module only moves bytes over HTTP.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use hourglass_arith::entropy::OsEntropy;
use hourglass_rsa::HashAlg;
use hourglass_timelock::timestamp::{granted_reply, Query};

use crate::api::{find_submission, ApiError};
use crate::error::Error;
use crate::AppState;

/// The media type of a query (RFC 3161 section 3.4).
const QUERY_TYPE: &str = "application/timestamp-query";
/// The media type of a reply (RFC 3161 section 3.4).
const REPLY_TYPE: &str = "application/timestamp-reply";

/// The serial numbers of one server start: its instance number (taken from the database) in
/// the high 64 bits, a counter in the low 64.
pub(crate) struct Serials {
    instance: u64,
    next: AtomicU64,
}

impl Serials {
    pub(crate) fn new(instance: u64) -> Self {
        Self {
            instance,
            next: AtomicU64::new(1),
        }
    }

    /// The next serial number, unsigned big-endian.
    fn next(&self) -> [u8; 16] {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let mut serial = [0u8; 16];
        serial[..8].copy_from_slice(&self.instance.to_be_bytes());
        serial[8..].copy_from_slice(&n.to_be_bytes());
        serial
    }
}

/// Now, in whole seconds (a token's genTime).
fn now_whole() -> SystemTime {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    UNIX_EPOCH + Duration::from_secs(secs)
}

fn reply(body: Vec<u8>) -> Response {
    ([(header::CONTENT_TYPE, REPLY_TYPE)], body).into_response()
}

/// `POST /tsa`: answers a `TimeStampReq` with a `TimeStampResp` (granted, or a rejection that
/// names its failInfo). A body of another media type is refused with 415.
pub(crate) async fn post_tsa(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Bytes,
) -> Result<Response, ApiError> {
    let media = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .map(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        });
    if media.as_deref() != Some(QUERY_TYPE) {
        return Err(ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            format!("send a DER TimeStampReq with Content-Type: {QUERY_TYPE}"),
        ));
    }
    let st = state.clone();
    let answer = tokio::task::spawn_blocking(move || {
        st.data
            .tsa()
            .tsa
            .reply(&body, &st.serials.next(), now_whole(), &mut OsEntropy)
    })
    .await
    .map_err(|e| Error::Serve(std::io::Error::other(format!("the TSA stopped: {e}"))))?;
    Ok(reply(answer))
}

/// Stamps a bundle being stored: the token over its SHA-256 and its genTime in milliseconds
/// (the submission's received time).
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
        let ms = now.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis());
        Ok((token, i64::try_from(ms).unwrap_or(i64::MAX)))
    })
    .await
    .map_err(|e| Error::Serve(std::io::Error::other(format!("the TSA stopped: {e}"))))?
}

/// `GET /tsa.pem`: the TSA certificate.
pub(crate) async fn tsa_pem(State(state): State<Arc<AppState>>) -> Response {
    pem(state.data.tsa().cert_pem.clone())
}

/// `GET /tsa-ca.pem`: the TSA's CA certificates (404 when an institution's own TSA
/// certificate came without them).
pub(crate) async fn tsa_ca_pem(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    match &state.data.tsa().ca_pem {
        Some(p) => Ok(pem(p.clone())),
        None => Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "this server's TSA certificate was given without its CA (--tsa-cert held one certificate)",
        )),
    }
}

fn pem(text: String) -> Response {
    (
        [(header::CONTENT_TYPE, "application/pem-certificate-chain")],
        text,
    )
        .into_response()
}

/// `GET /api/v1/submissions/{id}/timestamp`: the submission's token as a granted
/// `TimeStampResp` (what `openssl ts -verify -in` reads).
pub(crate) async fn get_timestamp(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let row = find_submission(&state, &id).await?;
    let token = state.store.timestamp_token(&row.id).await?.ok_or_else(|| {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "this submission was stored before the service stamped submissions",
        )
    })?;
    let body = granted_reply(&token).map_err(Error::from)?;
    Ok((
        [
            (header::CONTENT_TYPE, REPLY_TYPE.to_string()),
            (
                header::CONTENT_DISPOSITION,
                format!("attachment; filename=\"{id}.tsr\""),
            ),
        ],
        body,
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serial_numbers_carry_the_instance_and_never_repeat() {
        let a = Serials::new(7);
        let b = Serials::new(8);
        let (a1, a2, b1) = (a.next(), a.next(), b.next());
        assert_ne!(a1, a2);
        assert_ne!(a1, b1);
        assert_eq!(&a1[..8], &7u64.to_be_bytes());
        assert_eq!(&b1[8..], &1u64.to_be_bytes());
    }
}

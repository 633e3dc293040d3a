//! The service as an RFC 3161 timestamp authority over HTTP: `POST /tsa`, its certificates,
//! the token of every stored submission.
//!
//! Every rule of the protocol (what a query may ask, what a token holds, how it is signed) is
//! [`hourglass_timestamp`]'s; this module only moves bytes over HTTP.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use hourglass_arith::entropy::OsEntropy;
use hourglass_timestamp::granted_reply;

use crate::api::find_submission;
use crate::api_error::ApiError;
use crate::error::Error;
use crate::stamp::now_whole;
use crate::state::AppState;

/// The media type of a query (RFC 3161 section 3.4).
const QUERY_TYPE: &str = "application/timestamp-query";
/// The media type of a reply (RFC 3161 section 3.4).
const REPLY_TYPE: &str = "application/timestamp-reply";

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

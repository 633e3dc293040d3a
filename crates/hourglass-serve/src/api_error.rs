//! The JSON error answer every route gives (`{"error": "..."}` with its status), and how the
//! service's internal errors become one (a 500 that says nothing of the cause, which is logged).

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use crate::error::Error;

/// An error answer: a status and `{"error": "..."}`.
#[derive(Debug)]
pub(crate) struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// Seconds after which the client may try again (`Retry-After`; a 503 says 5 without it).
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An answer with `status` saying `message`.
    pub(crate) fn new(status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            retry_after: None,
        }
    }

    /// A 429 saying `message`, to be tried again after `wait` (at least a second).
    pub(crate) fn too_many(message: impl Into<String>, wait: std::time::Duration) -> Self {
        Self {
            retry_after: Some(wait.as_secs().max(1)),
            ..Self::new(StatusCode::TOO_MANY_REQUESTS, message)
        }
    }
    /// A 400 saying `message`.
    pub(crate) fn bad(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message)
    }
}

impl From<Error> for ApiError {
    fn from(e: Error) -> Self {
        tracing::error!(error = %e, "request failed");
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal error (logged on the server)",
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut r = (self.status, Json(json!({ "error": self.message }))).into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            r.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"hourglass admin\""),
            );
        }
        let retry_after = self
            .retry_after
            .or((self.status == StatusCode::SERVICE_UNAVAILABLE).then_some(5));
        if let Some(secs) = retry_after {
            r.headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        r
    }
}

//! The web pages, rendered on the server (no JavaScript needed): the open sets with the
//! author's three commands and an upload form, and a submission's verdict and receipt.

use std::sync::Arc;
use std::time::Duration;

use askama::Template;
use axum::extract::multipart::MultipartRejection;
use axum::extract::{Multipart, Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::Extension;
use hourglass_receipt::institution_fingerprint;

use hourglass_timelock::verdict::rfc3339;

use crate::api::{accept_upload, find_submission, set_summary};
use crate::api_error::ApiError;
use crate::clock::rfc3339_ms;
use crate::proxy::ClientAddress;
use crate::state::AppState;
use crate::submission::Status;

struct SetView {
    name: String,
    kind: String,
    deadline: String,
    durations: String,
}

#[derive(Template)]
#[template(path = "index.html")]
struct IndexPage {
    sets: Vec<SetView>,
    base: String,
    institution: String,
}

struct LinkView {
    index: usize,
    verdict: &'static str,
    t: u64,
    credited: String,
}

#[derive(Template)]
#[template(path = "submission.html")]
struct SubmissionPage {
    id: String,
    status: &'static str,
    queued: bool,
    /// Verified, and its receipt waits for the log's next checkpoint.
    receipt_waits: bool,
    set: String,
    received: String,
    credited: String,
    predated: String,
    deadline: String,
    before_deadline: String,
    trust: String,
    reason: String,
    links: Vec<LinkView>,
    has_receipt: bool,
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage {
    title: String,
    message: String,
}

/// `4h`, `10min`, `1h 30min 2s`: seconds for people.
fn human_secs(secs: f64) -> String {
    if secs <= 0.0 {
        return "0s".into();
    }
    humantime::format_duration(Duration::from_secs(secs.round().max(1.0) as u64)).to_string()
}

fn render(t: &impl Template) -> Response {
    match t.render() {
        Ok(html) => Html(html).into_response(),
        Err(e) => {
            tracing::error!(error = %e, "template");
            (StatusCode::INTERNAL_SERVER_ERROR, "page rendering failed").into_response()
        }
    }
}

fn error_page(e: ApiError) -> Response {
    let title = match e.status {
        StatusCode::NOT_FOUND => "Not found",
        StatusCode::PAYLOAD_TOO_LARGE => "Too large",
        StatusCode::TOO_MANY_REQUESTS => "Too many requests",
        s if s.is_server_error() => "Server error",
        _ => "Not accepted",
    };
    let mut r = render(&ErrorPage {
        title: title.into(),
        message: e.message,
    });
    *r.status_mut() = e.status;
    if let Some(secs) = e.retry_after {
        r.headers_mut()
            .insert(header::RETRY_AFTER, axum::http::HeaderValue::from(secs));
    }
    r
}

/// `GET /`.
pub(crate) async fn index(State(state): State<Arc<AppState>>, headers: HeaderMap) -> Response {
    let sets = match state.store.sets().await {
        Ok(s) => s,
        Err(e) => return error_page(e.into()),
    };
    let views = sets
        .iter()
        .map(|row| {
            let summary = set_summary(row, false);
            let durations = summary["credited_secs"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_f64())
                        .map(human_secs)
                        .collect::<Vec<_>>()
                        .join(", ")
                })
                .unwrap_or_default();
            SetView {
                name: row.name.clone(),
                kind: row.kind.clone(),
                deadline: row
                    .deadline_ms
                    .map(rfc3339_ms)
                    .unwrap_or_else(|| "none".into()),
                durations,
            }
        })
        .collect();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .filter(|h| h.bytes().all(|b| b.is_ascii_graphic()))
        .unwrap_or("localhost");
    render(&IndexPage {
        sets: views,
        base: format!("http://{host}"),
        institution: institution_fingerprint(state.data.receipt_key().public()).unwrap_or_default(),
    })
}

/// `POST /submissions`: the form's upload; on success, to the submission's page.
pub(crate) async fn upload(
    State(state): State<Arc<AppState>>,
    Extension(ClientAddress(client)): Extension<ClientAddress>,
    multipart: Result<Multipart, MultipartRejection>,
) -> Response {
    match accept_upload(&state, client, multipart).await {
        Ok((id, _)) => Redirect::to(&format!("/submissions/{id}")).into_response(),
        Err(e) => error_page(e),
    }
}

/// `GET /submissions/{id}`.
pub(crate) async fn submission(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Response {
    let row = match find_submission(&state, &id).await {
        Ok(r) => r,
        Err(e) => return error_page(e),
    };
    let deadline_ms = match state.store.set(&row.set_name).await {
        Ok(s) => s.and_then(|s| s.deadline_ms),
        Err(e) => return error_page(e.into()),
    };
    let dating = row.dating(deadline_ms);
    let links = row
        .verdict()
        .map(|v| {
            v.links()
                .iter()
                .map(|l| LinkView {
                    index: l.index() + 1,
                    verdict: if l.is_valid() { "valid" } else { "invalid" },
                    t: l.t(),
                    credited: human_secs(l.credited_secs()),
                })
                .collect()
        })
        .unwrap_or_default();
    render(&SubmissionPage {
        id: row.id.clone(),
        status: row.status().as_str(),
        queued: row.status() == Status::Queued,
        set: row.set_name.clone(),
        received: rfc3339_ms(row.received_ms),
        credited: human_secs(dating.map_or(0.0, |d| d.credited_ms as f64 / 1000.0)),
        predated: dating.map(|d| rfc3339(d.predated_to())).unwrap_or_default(),
        deadline: deadline_ms.map(rfc3339_ms).unwrap_or_default(),
        before_deadline: match dating.and_then(|d| d.before_deadline) {
            Some(true) => "provably before it".into(),
            Some(false) => "not proven before it".into(),
            None => String::new(),
        },
        trust: row
            .verdict()
            .map(|v| v.trust().assumption())
            .unwrap_or_default(),
        reason: row.reason().unwrap_or_default().to_string(),
        links,
        has_receipt: row.receipt().is_some(),
        receipt_waits: row.receipt_waits(),
    })
}

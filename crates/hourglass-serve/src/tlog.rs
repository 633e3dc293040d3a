//! The transparency log over HTTP (C2SP tlog-tiles): its newest published checkpoint, its key,
//! and the tiles and entry bundles of the published tree. What is published is decided by the
//! sequencer ([`crate::sequencer`]); these routes only read it.

use std::sync::Arc;

use axum::extract::{Path, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use hourglass_log::tiles::{encode_bundle, parse_path, Resource, TileKind};

use crate::api_error::ApiError;
use crate::error::Error;
use crate::state::AppState;

/// `GET /log/checkpoint`: the newest published checkpoint (not cacheable).
pub(crate) async fn get_checkpoint(
    State(state): State<Arc<AppState>>,
) -> Result<Response, ApiError> {
    let Some((_, note)) = state.store.latest_checkpoint().await? else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "no checkpoint published yet (the witnesses have not cosigned one)",
        ));
    };
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("text/plain; charset=utf-8"),
            ),
            (header::CACHE_CONTROL, HeaderValue::from_static("no-cache")),
        ],
        note,
    )
        .into_response())
}

/// `GET /log/key`: the log's verifier key.
pub(crate) async fn get_key(State(state): State<Arc<AppState>>) -> Response {
    (
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{}\n", state.data.log_key().verifier().encode()),
    )
        .into_response()
}

/// `GET /log/tile/...`: a hash tile or an entry bundle within the published tree (immutable).
pub(crate) async fn get_tile(
    State(state): State<Arc<AppState>>,
    Path(rest): Path<String>,
) -> Result<Response, ApiError> {
    let not_found = || ApiError::new(StatusCode::NOT_FOUND, "no such tile in the published log");
    let Ok(Resource::Tile(tile)) = parse_path(&format!("tile/{rest}")) else {
        return Err(not_found());
    };
    let published = state.store.log_state().await?.published_size;
    if !tile.within(published) {
        return Err(not_found());
    }
    let body = match tile.kind {
        TileKind::Hashes(_) => {
            state
                .store
                .hash_run(tile.tree_level(), tile.first(), tile.width)
                .await?
        }
        TileKind::Entries => match state.store.entry_run(tile.first(), tile.width).await? {
            Some(entries) => Some(
                encode_bundle(entries.iter().map(Vec::as_slice))
                    .map_err(|e| Error::Log(e.to_string()))?,
            ),
            None => None,
        },
    };
    let body = body.ok_or_else(not_found)?;
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/octet-stream"),
            ),
            (
                header::CACHE_CONTROL,
                HeaderValue::from_static("public, max-age=31536000, immutable"),
            ),
        ],
        body,
    )
        .into_response())
}

//! The transparency log over HTTP (C2SP tlog-tiles): its newest published checkpoint, its key,
//! and the tiles and entry bundles of the published tree. What is published is decided by the
//! sequencer ([`crate::sequencer`]); these routes only read it. Entry bundles are sent
//! gzip-encoded to a client that accepts gzip (tlog-tiles: they SHOULD be compressed); hash
//! tiles, random-looking bytes, never are.

use std::sync::Arc;

use std::io::Write;

use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
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
    request: HeaderMap,
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
    let mut body = body.ok_or_else(not_found)?;
    let mut headers = HeaderMap::new();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/octet-stream"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("public, max-age=31536000, immutable"),
    );
    if tile.kind == TileKind::Entries {
        // A cache must not hand the gzip-encoded bundle to a client that did not ask for it.
        headers.insert(header::VARY, HeaderValue::from_static("accept-encoding"));
        if accepts_gzip(&request) {
            body = tokio::task::spawn_blocking(move || gzip(&body))
                .await
                .map_err(|e| Error::Log(format!("compressing an entry bundle: {e}")))?
                .map_err(|e| Error::Log(format!("compressing an entry bundle: {e}")))?;
            headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
        }
    }
    Ok((headers, body).into_response())
}

/// Whether the request's `Accept-Encoding` lists `gzip` (or `*`) with a weight other than 0
/// (RFC 9110, section 12.5.3).
fn accepts_gzip(request: &HeaderMap) -> bool {
    request
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|item| {
            let mut parts = item.split(';').map(str::trim);
            let coding = parts.next().unwrap_or("");
            let refused = parts.any(|p| {
                p.strip_prefix("q=")
                    .or_else(|| p.strip_prefix("Q="))
                    .and_then(|q| q.trim().parse::<f32>().ok())
                    .is_some_and(|q| q <= 0.0)
            });
            (coding.eq_ignore_ascii_case("gzip") || coding == "*") && !refused
        })
}

/// `bytes` gzip-encoded.
fn gzip(bytes: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut encoder = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 2),
        flate2::Compression::default(),
    );
    encoder.write_all(bytes)?;
    encoder.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(values: &[&str]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for v in values {
            h.append(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
        }
        h
    }

    #[test]
    fn gzip_is_sent_only_to_whom_accepts_it() {
        for yes in [
            &["gzip"][..],
            &["deflate, gzip;q=0.5"],
            &["br", "GZIP"],
            &["*"],
            &["gzip ; q=1"],
        ] {
            assert!(accepts_gzip(&with(yes)), "{yes:?}");
        }
        for no in [
            &[][..],
            &["identity"],
            &["gzip;q=0"],
            &["x-gzips, deflate"],
            &["gzip;q=0.0, br"],
        ] {
            assert!(!accepts_gzip(&with(no)), "{no:?}");
        }
    }

    #[test]
    fn a_gzip_bundle_decodes_to_the_bundle() {
        use std::io::Read;
        let bundle =
            hourglass_log::tiles::encode_bundle([&b"entry one"[..], b"entry two"]).unwrap();
        let packed = gzip(&bundle).unwrap();
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&packed[..])
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out, bundle);
    }
}

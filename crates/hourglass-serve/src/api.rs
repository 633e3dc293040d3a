//! The JSON API under `/api/v1`, and the upload handling the web form shares with it.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::extract::multipart::{Field, MultipartRejection};
use axum::extract::{Multipart, Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use axum::Json;
use hourglass_arith::entropy::OsEntropy;
use hourglass_timelock::anyset::AnySet;
use hourglass_timelock::public::OriginPins;
use hourglass_timelock::public::{ModulusOrigin, ProofScheme, PublicSet};
use hourglass_timelock::submission::{generate_set, squarings_for};
use hourglass_timelock::verdict::{rfc3339, Verifier};
use hourglass_timelock::{Bundle, PuzzleHash, PuzzleKey, SetKind};
use hourglass_vdf::group::RsaGroup;
use serde::Deserialize;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use zeroize::Zeroizing;

use crate::api_error::ApiError;
use crate::clock::{now_ms, rfc3339_ms};
use crate::error::Error;
use crate::proxy::ClientAddress;
use crate::stamp::stamp_bundle;
use crate::state::AppState;
use crate::store::{NewSubmission, SetRow};
use crate::submission::{Status, Submission};

/// Refuses a request without the admin token.
fn require_admin(state: &AppState, headers: &HeaderMap) -> Result<(), ApiError> {
    let presented = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    match presented {
        Some(token) if state.data.is_admin(token) => Ok(()),
        Some(_) => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "the admin token is wrong",
        )),
        None => Err(ApiError::new(
            StatusCode::UNAUTHORIZED,
            "this needs the admin token: Authorization: Bearer TOKEN",
        )),
    }
}

/// `POST /api/v1/sets`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct NewSet {
    name: String,
    durations: Vec<String>,
    bits: Option<u32>,
    rate: Option<f64>,
    hash: Option<String>,
    deadline: Option<String>,
    #[serde(default)]
    public: bool,
    proof: Option<String>,
}

/// Whether `name` is a set name: 1 to 64 of `A-Z a-z 0-9 . _ -`, not starting with a dot.
pub(crate) fn valid_set_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

/// An admin's JSON request: the token checked, then the body parsed (`what` names it in the
/// 400).
fn admin_request<T>(
    state: &AppState,
    headers: &HeaderMap,
    body: Result<Json<T>, axum::extract::rejection::JsonRejection>,
    what: &str,
) -> Result<T, ApiError> {
    require_admin(state, headers)?;
    let Json(req) =
        body.map_err(|e| ApiError::bad(format!("malformed {what}: {}", e.body_text())))?;
    Ok(req)
}

/// Refuses a set name that is not [`valid_set_name`].
fn check_set_name(name: &str) -> Result<(), ApiError> {
    if valid_set_name(name) {
        Ok(())
    } else {
        Err(ApiError::bad(
            "field name: 1 to 64 of letters, digits, '.', '_' and '-'",
        ))
    }
}

pub(crate) async fn create_set(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Json<NewSet>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let req = admin_request(&state, &headers, body, "set request")?;
    check_set_name(&req.name)?;
    if req.durations.is_empty() || req.durations.len() > 16 {
        return Err(ApiError::bad("field durations: give 1 to 16 durations"));
    }
    let durations = req
        .durations
        .iter()
        .map(|d| {
            humantime::parse_duration(d).map_err(|_| {
                ApiError::bad(format!(
                    "field durations: '{d}' is not a duration like 4h or 10min"
                ))
            })
        })
        .collect::<Result<Vec<Duration>, _>>()?;
    let hash = match &req.hash {
        Some(h) => PuzzleHash::parse(h).map_err(|e| ApiError::bad(format!("field hash: {e}")))?,
        None => PuzzleHash::Sha256,
    };
    let deadline_ms = parse_deadline(req.deadline.as_deref())?;
    let bits = req.bits.unwrap_or(2048);
    if req.public && req.bits.is_some_and(|b| b != 2048) {
        return Err(ApiError::bad(
            "field bits: a public set uses the RSA-2048 challenge modulus",
        ));
    }
    if !(1024..=8192).contains(&bits) {
        return Err(ApiError::bad("field bits: within 1024..=8192"));
    }
    if req.rate.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
        return Err(ApiError::bad(
            "field rate: a positive number of squarings per second",
        ));
    }
    let proof = match req.proof.as_deref() {
        None => ProofScheme::Wesolowski,
        Some(name) => name
            .parse::<ProofScheme>()
            .map_err(|e| ApiError::bad(format!("field proof: {e}")))?,
    };
    if req.proof.is_some() && !req.public {
        return Err(ApiError::bad("field proof: only for public sets"));
    }
    if state.store.set(&req.name).await?.is_some() {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("a set named '{}' exists", req.name),
        ));
    }
    let name = req.name.clone();
    let public = req.public;
    let rate = req.rate;
    let made = tokio::task::spawn_blocking(move || -> Result<_, ApiError> {
        let n_bits = if public { 2048 } else { bits };
        let rate = match rate {
            Some(r) => (r, false),
            None => {
                let n = hourglass_arith::prime::random_modulus(n_bits, &mut OsEntropy)
                    .map_err(Error::from)?;
                (
                    hourglass_arith::squaring::measure_rate(&n, Duration::from_secs(2)),
                    true,
                )
            }
        };
        if public {
            let squarings = durations
                .iter()
                .map(|d| {
                    squarings_for(*d, rate.0).ok_or_else(|| {
                        ApiError::bad("field durations: too short for any squaring at this rate")
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            let created = humantime::format_rfc3339_seconds(SystemTime::now()).to_string();
            let set = PublicSet::new(
                &name,
                RsaGroup::rsa_2048().modulus().clone(),
                ModulusOrigin::Rsa2048,
                squarings,
                rate.0,
                rate.1,
                hash,
                proof,
                &created,
            )
            .map_err(|e| ApiError::bad(e.to_string()))?;
            Ok((set.to_json(), None, vec![set.fingerprint_hex()]))
        } else {
            let (set, keys) = generate_set(&name, &durations, bits, rate, hash, &mut OsEntropy)
                .map_err(|e| match e {
                    hourglass_timelock::Error::InvalidParameters(p) => {
                        ApiError::bad(format!("field durations: {p}"))
                    }
                    other => ApiError::from(Error::from(other)),
                })?;
            let texts: Zeroizing<Vec<String>> =
                Zeroizing::new(keys.iter().map(|k| k.to_json().to_string()).collect());
            let plain = Zeroizing::new(serde_json::to_vec(&*texts).unwrap_or_default());
            let fps = set.puzzles.iter().map(|p| p.fingerprint_hex()).collect();
            Ok((set.to_json(), Some(plain), fps))
        }
    })
    .await
    .map_err(|_| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "set generation failed"))??;
    let (set_json, plain_keys, fingerprints) = made;
    let kind = if public {
        SetKind::Public
    } else {
        SetKind::Private
    };
    let checked = (kind, set_json, plain_keys, fingerprints);
    store_set(&state, &req.name, checked, deadline_ms, "set created").await
}

/// `deadline`: an RFC 3339 time, in Unix milliseconds.
fn parse_deadline(deadline: Option<&str>) -> Result<Option<i64>, ApiError> {
    deadline
        .map(|d| {
            humantime::parse_rfc3339_weak(d)
                .map_err(|_| {
                    ApiError::bad("field deadline: not an RFC 3339 time like 2027-03-01T23:59:59Z")
                })?
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_err(|_| ApiError::bad("field deadline: before 1970"))
                .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        })
        .transpose()
}

/// Stores a new set (its keys sealed) and answers 201 with its summary, 409 if the name is taken.
async fn store_set(
    state: &AppState,
    name: &str,
    set: Checked,
    deadline_ms: Option<i64>,
    what: &str,
) -> Result<Response, ApiError> {
    let (kind, set_json, plain_keys, fingerprints) = set;
    let sealed_keys = match plain_keys {
        Some(p) => Some(state.data.seal(name, &p)?),
        None => None,
    };
    let row = SetRow {
        name: name.to_string(),
        kind: kind.name().into(),
        set_sha256: hex::encode(Sha256::digest(set_json.as_bytes())),
        set_json,
        sealed_keys,
        deadline_ms,
        created_ms: now_ms(),
    };
    if !state.store.insert_set(&row, &fingerprints).await? {
        return Err(ApiError::new(
            StatusCode::CONFLICT,
            format!("a set named '{}' exists", row.name),
        ));
    }
    tracing::info!(set = %row.name, kind = %row.kind, "{what}");
    Ok((StatusCode::CREATED, Json(set_summary(&row, true))).into_response())
}

/// `POST /api/v1/sets/import`: a set made elsewhere (`hourglass submit new-set`).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ImportedSet {
    name: String,
    /// The set file (either kind), as JSON.
    set: Value,
    /// A private set's key files (`.key`), one per puzzle of the set.
    keys: Option<Vec<Value>>,
    deadline: Option<String>,
}

pub(crate) async fn import_set(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    body: Result<Json<ImportedSet>, axum::extract::rejection::JsonRejection>,
) -> Result<Response, ApiError> {
    let req = admin_request(&state, &headers, body, "import request")?;
    check_set_name(&req.name)?;
    let deadline_ms = parse_deadline(req.deadline.as_deref())?;
    let keys = req
        .keys
        .map(|keys| keys.iter().map(Value::to_string).collect::<Vec<_>>());
    let set_text = req.set.to_string();
    let checked = tokio::task::spawn_blocking(move || check_import(&set_text, keys))
        .await
        .map_err(|_| ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "set import failed"))??;
    store_set(&state, &req.name, checked, deadline_ms, "set imported").await
}

/// A set ready to store: its kind, its file, a private set's key files (a JSON list, sealed
/// before storing) and the fingerprints its bundles' links name.
type Checked = (SetKind, String, Option<Zeroizing<Vec<u8>>>, Vec<String>);

/// What an import stores, checked as the workers will use it: the set parses, and the library
/// makes a verifier of it (a private set's keys are exactly its puzzles', fixing one hash; a
/// public set's origin needs no pin the service lacks).
fn check_import(set_text: &str, keys: Option<Vec<String>>) -> Result<Checked, ApiError> {
    let bad = |e: hourglass_timelock::Error| ApiError::bad(format!("field set: {e}"));
    match (AnySet::from_json(set_text).map_err(bad)?, keys) {
        (AnySet::Private(set), Some(keys)) => {
            let parsed = keys
                .iter()
                .map(|k| PuzzleKey::from_json(k))
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| ApiError::bad(format!("field keys: {e}")))?;
            let mut theirs: Vec<String> = parsed
                .iter()
                .map(|k| k.public().fingerprint_hex())
                .collect();
            let mut ours: Vec<String> = set.puzzles.iter().map(|p| p.fingerprint_hex()).collect();
            theirs.sort();
            ours.sort();
            if theirs != ours {
                return Err(ApiError::bad(
                    "field keys: give exactly the private key of every puzzle of the set",
                ));
            }
            Verifier::private(parsed).map_err(|e| ApiError::bad(format!("field keys: {e}")))?;
            let plain = Zeroizing::new(serde_json::to_vec(&keys).unwrap_or_default());
            Ok((SetKind::Private, set.to_json(), Some(plain), ours))
        }
        (AnySet::Private(_), None) => Err(ApiError::bad(
            "field keys: a private set is verified with its keys; give its .key files",
        )),
        (AnySet::Public(set), None) => {
            let fingerprint = set.fingerprint_hex();
            let json = set.to_json();
            Verifier::public(set, &OriginPins::default())
                .map_err(|e| ApiError::bad(format!("field set: {e}")))?;
            Ok((SetKind::Public, json, None, vec![fingerprint]))
        }
        (AnySet::Public(_), Some(_)) => Err(ApiError::bad("field keys: a public set has no keys")),
    }
}

/// What the API says of a set.
pub(crate) fn set_summary(row: &SetRow, with_set: bool) -> Value {
    let set = AnySet::from_json(&row.set_json).ok();
    let credited: Vec<f64> = match &set {
        Some(AnySet::Private(s)) => s.puzzles.iter().map(|p| p.credited_secs()).collect(),
        Some(AnySet::Public(s)) => s.squarings.iter().map(|&t| s.credited_secs(t)).collect(),
        None => Vec::new(),
    };
    let mut v = json!({
        "name": row.name,
        "kind": row.kind,
        "deadline": row.deadline_ms.map(rfc3339_ms),
        "created": rfc3339_ms(row.created_ms),
        "credited_secs": credited,
        "set_sha256": row.set_sha256,
        "url": format!("/api/v1/sets/{}", row.name),
    });
    if with_set {
        v["set"] = serde_json::from_str(&row.set_json).unwrap_or(Value::Null);
    }
    v
}

pub(crate) async fn list_sets(State(state): State<Arc<AppState>>) -> Result<Json<Value>, ApiError> {
    let sets = state.store.sets().await?;
    Ok(Json(Value::Array(
        sets.iter().map(|s| set_summary(s, false)).collect(),
    )))
}

#[derive(Deserialize)]
pub(crate) struct DownloadQuery {
    download: Option<String>,
}

/// `GET /api/v1/sets/{name}`: the very set.json `hourglass submit seal --set` reads.
pub(crate) async fn get_set(
    State(state): State<Arc<AppState>>,
    Path(name): Path<String>,
    Query(q): Query<DownloadQuery>,
) -> Result<Response, ApiError> {
    let Some(set) = state.store.set(&name).await? else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            format!("no set named '{name}'"),
        ));
    };
    let mut r = ([(header::CONTENT_TYPE, "application/json")], set.set_json).into_response();
    if q.download.is_some() {
        r.headers_mut().insert(
            header::CONTENT_DISPOSITION,
            HeaderValue::from_static("attachment; filename=\"set.json\""),
        );
    }
    Ok(r)
}

/// Reads one multipart field. Past `limit` bytes it reads on without keeping anything, to
/// the end of the request (which the body limit bounds), so that the client, still sending,
/// receives the 413 instead of a reset connection; then `Ok(None)`.
/// How reading a field ended short.
enum FieldError {
    /// Over the field's limit (the rest was read and dropped).
    TooLarge,
    /// The server's upload memory is in use by other requests.
    Busy,
    /// The body is malformed.
    Bad(ApiError),
}

/// Reads one field, holding its bytes against the server's upload memory (`held` keeps the
/// permits until the request ends).
async fn read_field(
    field: &mut Field<'_>,
    limit: u64,
    budget: &Arc<Semaphore>,
    held: &mut Option<OwnedSemaphorePermit>,
) -> Result<Vec<u8>, FieldError> {
    let mut out = Vec::new();
    let mut over = false;
    loop {
        match field.chunk().await {
            Ok(Some(chunk)) => {
                if over || out.len() as u64 + chunk.len() as u64 > limit {
                    over = true;
                    out = Vec::new();
                } else {
                    let bytes = u32::try_from(chunk.len()).map_err(|_| FieldError::TooLarge)?;
                    let permit = budget
                        .clone()
                        .try_acquire_many_owned(bytes)
                        .map_err(|_| FieldError::Busy)?;
                    match held {
                        Some(h) => h.merge(permit),
                        None => *held = Some(permit),
                    }
                    out.extend_from_slice(&chunk);
                }
            }
            Ok(None) if over => return Err(FieldError::TooLarge),
            Ok(None) => return Ok(out),
            Err(e) => return Err(FieldError::Bad(multipart_error(&e))),
        }
    }
}

/// Reads the rest of a refused request (bounded by the body limit), keeping nothing.
async fn drain(multipart: &mut Multipart) {
    while let Ok(Some(mut field)) = multipart.next_field().await {
        while let Ok(Some(_)) = field.chunk().await {}
    }
}

fn multipart_error(e: &axum::extract::multipart::MultipartError) -> ApiError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "the request body is larger than the limits",
        )
    } else {
        ApiError::bad(format!("malformed multipart body: {}", e.body_text()))
    }
}

/// Stores an upload (bundle + document) and returns its id and whether it is new.
pub(crate) async fn accept_upload(
    state: &Arc<AppState>,
    client: IpAddr,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<(String, bool), ApiError> {
    let mut multipart = multipart.map_err(|e| {
        ApiError::bad(format!(
            "expected a multipart/form-data body with fields bundle and document: {}",
            e.body_text()
        ))
    })?;
    let mut bundle = None;
    let mut document = None;
    // The upload memory this request holds, released when it returns (after the store).
    let mut held = None;
    loop {
        let mut field = match multipart.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return Err(multipart_error(&e)),
        };
        let name = field.name().unwrap_or("").to_string();
        let (slot, limit) = match name.as_str() {
            "bundle" => (&mut bundle, state.limits.max_bundle_bytes),
            "document" => (&mut document, state.limits.max_document_bytes),
            other => {
                return Err(ApiError::bad(format!(
                    "unexpected field '{other}': send bundle and document"
                )))
            }
        };
        if slot.is_some() {
            return Err(ApiError::bad(format!("field {name}: given twice")));
        }
        match read_field(&mut field, limit, &state.upload_budget, &mut held).await {
            Ok(bytes) => *slot = Some(bytes),
            Err(FieldError::Bad(e)) => return Err(e),
            Err(FieldError::TooLarge) => {
                drop(field);
                drain(&mut multipart).await;
                return Err(ApiError::new(
                    StatusCode::PAYLOAD_TOO_LARGE,
                    format!("field {name}: larger than the limit of {limit} bytes"),
                ));
            }
            Err(FieldError::Busy) => {
                drop(field);
                drop(held);
                drain(&mut multipart).await;
                return Err(ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "the server is receiving too many uploads at once; nothing was stored, \
                     send it again in a few seconds",
                ));
            }
        }
    }
    let bundle = bundle.ok_or_else(|| ApiError::bad("field bundle: missing"))?;
    let document = document.ok_or_else(|| ApiError::bad("field document: missing"))?;
    let bundle_text =
        String::from_utf8(bundle).map_err(|_| ApiError::bad("field bundle: not a text file"))?;
    let parsed =
        Bundle::from_json(&bundle_text).map_err(|e| ApiError::bad(format!("field bundle: {e}")))?;
    let first = parsed
        .links
        .first()
        .ok_or_else(|| ApiError::bad("field bundle: it has no links yet"))?;
    let Some(set) = state.store.set_of(first.puzzle()).await? else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "field bundle: no set on this server has the puzzle its first link names",
        ));
    };
    // Off the async threads: the document's hashes (it may be large) and, at a set's first
    // upload, its verifier. A document that does not match the bundle's digest gets an invalid
    // verdict whatever it holds: its digest is kept, not its content. When the set's verifier
    // cannot be made here, the document is kept and the worker reports why.
    let st = state.clone();
    let (document, document_sha256, parsed) = tokio::task::spawn_blocking(move || {
        let sha256 = hex::encode(Sha256::digest(&document));
        let mismatch = st
            .verifiers
            .of_set(&st.data, &set)
            .ok()
            .and_then(|v| v.digest(document.as_slice()).ok())
            .filter(|digest| !digest.matches(&parsed))
            .map(|digest| hex::encode(digest.bytes()));
        let document_bytes = document.len() as u64;
        let kept = match mismatch {
            Some(digest) => Err(digest),
            None => Ok(document),
        };
        ((kept, document_bytes), sha256, (parsed, set.name))
    })
    .await
    .map_err(|e| Error::Serve(std::io::Error::other(format!("hashing the upload: {e}"))))?;
    let ((document, document_bytes), (_, set_name)) = (document, parsed);
    let bundle_hash = Sha256::digest(bundle_text.as_bytes());
    let bundle_sha256 = hex::encode(bundle_hash);
    let id = submission_id(&bundle_sha256, &document_sha256);
    let stored_bytes = bundle_text.len() as u64 + document.as_ref().map_or(0, |d| d.len() as u64);
    if let Some(quota) = &state.upload_quota {
        quota.charge(client, stored_bytes).map_err(|wait| {
            ApiError::too_many(
                "this address has stored its hourly quota of uploads; nothing was stored, send \
                 it again later",
                wait,
            )
        })?;
    }
    // The TSA's token over the bundle dates the submission: `received` is the latest time it
    // proves (genTime + accuracy).
    let (timestamp_token, received_ms) = stamp_bundle(state, &bundle_hash).await?;
    let new = NewSubmission {
        id: id.clone(),
        set_name,
        received_ms,
        timestamp_token,
        bundle: bundle_text,
        bundle_sha256,
        document_sha256,
        document_bytes,
        document,
    };
    let set_name = new.set_name.clone();
    let inserted = state.committer.insert(new).await?;
    if inserted {
        state.queued.notify_one();
        tracing::info!(submission = %id, set = %set_name, "submission queued");
    }
    Ok((id, inserted))
}

/// The id of a submission: the same bundle and document always give the same id.
fn submission_id(bundle_sha256: &str, document_sha256: &str) -> String {
    let h = Sha256::new()
        .chain_update(b"hourglass-submission-id-v1\n")
        .chain_update(bundle_sha256.as_bytes())
        .chain_update(b"\n")
        .chain_update(document_sha256.as_bytes())
        .finalize();
    hex::encode(&h[..16])
}

/// Whether `id` looks like a submission id (32 lowercase hex digits).
pub(crate) fn valid_id(id: &str) -> bool {
    id.len() == 32
        && id
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

pub(crate) async fn post_submission(
    State(state): State<Arc<AppState>>,
    Extension(ClientAddress(client)): Extension<ClientAddress>,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Response, ApiError> {
    let (id, inserted) = accept_upload(&state, client, multipart).await?;
    // A new submission was queued by the commit that stored it; one sent again is where the
    // worker left it.
    let status = if inserted {
        Status::Queued
    } else {
        let row = state.store.submission(&id).await?;
        row.map_or(Status::Queued, |r| r.status())
    };
    let status = status.as_str();
    Ok((
        StatusCode::ACCEPTED,
        Json(json!({ "id": id, "status": status, "url": format!("/api/v1/submissions/{id}") })),
    )
        .into_response())
}

/// Looks a submission up, 404 if unknown.
pub(crate) async fn find_submission(state: &AppState, id: &str) -> Result<Submission, ApiError> {
    let not_found = || ApiError::new(StatusCode::NOT_FOUND, format!("no submission '{id}'"));
    if !valid_id(id) {
        return Err(not_found());
    }
    state.store.submission(id).await?.ok_or_else(not_found)
}

/// What the API says of a submission: its status, the library's verdict (links, whom it
/// trusts) and its dating.
pub(crate) fn submission_json(row: &Submission, deadline_ms: Option<i64>) -> Value {
    let dating = row.dating(deadline_ms);
    let links = row
        .verdict()
        .map_or_else(|| json!([]), |v| json!(v.links()));
    let mut v = json!({
        "id": row.id,
        "status": row.status().as_str(),
        "set": row.set_name,
        "received": rfc3339_ms(row.received_ms),
        "document_bytes": row.document_bytes,
        "credited_secs": dating.map(|d| d.credited_ms as f64 / 1000.0),
        "predated_to": dating.map(|d| rfc3339(d.predated_to())),
        "links": links,
    });
    if let Some(verdict) = row.verdict() {
        for (key, value) in verdict.trust().json_fields() {
            v[key] = value;
        }
    }
    if let (Some(deadline), Some(d)) = (deadline_ms, dating) {
        v["deadline"] = json!(rfc3339_ms(deadline));
        v["before_deadline"] = json!(d.before_deadline);
    }
    if let Some(reason) = row.reason() {
        v["reason"] = json!(reason);
    }
    if let Some(receipt) = row.receipt() {
        v["receipt"] = serde_json::from_str(receipt).unwrap_or(Value::Null);
    }
    v
}

pub(crate) async fn get_submission(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    let row = find_submission(&state, &id).await?;
    let deadline = state
        .store
        .set(&row.set_name)
        .await?
        .and_then(|s| s.deadline_ms);
    Ok(Json(submission_json(&row, deadline)))
}

/// `GET /api/v1/submissions/{id}/receipt`: the receipt file.
pub(crate) async fn get_receipt(
    State(state): State<Arc<AppState>>,
    Path(id): Path<String>,
) -> Result<Response, ApiError> {
    let row = find_submission(&state, &id).await?;
    if let Some(why) = row.no_receipt_why() {
        return Err(ApiError::new(StatusCode::NOT_FOUND, why));
    }
    let receipt = row.receipt().unwrap_or_default().to_string();
    Ok((
        [
            (
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            ),
            (
                header::CONTENT_DISPOSITION,
                HeaderValue::from_str(&format!("attachment; filename=\"receipt-{id}.json\""))
                    .unwrap_or(HeaderValue::from_static("attachment")),
            ),
        ],
        receipt,
    )
        .into_response())
}

/// `GET /institution.pub`: the key receipts are checked with.
pub(crate) async fn institution_pub(State(state): State<Arc<AppState>>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/x-pem-file")],
        state.data.receipt_pub_pem().to_string(),
    )
        .into_response()
}

pub(crate) async fn healthz(State(state): State<Arc<AppState>>) -> Response {
    match state.store.ping().await {
        Ok(()) => (StatusCode::OK, "ok\n").into_response(),
        Err(e) => {
            tracing::error!(error = %e, "health check: database");
            (StatusCode::SERVICE_UNAVAILABLE, "database unavailable\n").into_response()
        }
    }
}

pub(crate) async fn metrics(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let counts = state.store.counts().await?;
    Ok((
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.render(&counts),
    )
        .into_response())
}

pub(crate) async fn not_found() -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "no such resource")
}

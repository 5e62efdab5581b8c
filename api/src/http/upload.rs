//! `POST /api/v1/images`: a multipart upload with a `file` part (png, jpg
//! or webp, found from its bytes), an optional `meta` JSON part and an
//! optional `album_id` part (the folder it goes into). Any other part is
//! 400, and every error, a body that is not multipart included, is JSON.

use super::bearer;
use super::errors::HttpError;
use crate::state::AppState;
use axum::extract::multipart::{MultipartError, MultipartRejection};
use axum::extract::{Multipart, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use lightbox_core::auth::{Caller, Via};
use lightbox_core::domain::error::{AuthFailure, Denial};
use lightbox_core::images::upload::{Rejected, Upload};
use lightbox_core::images::Meta;
use lightbox_core::limits::storage::Reserved;
use lightbox_core::Error;

const META_LIMIT: usize = 64 << 10;

fn invalid(reason: &str) -> HttpError {
    HttpError::with_status(Error::invalid("file", reason), StatusCode::BAD_REQUEST)
}

fn too_large() -> HttpError {
    let e = Error::invalid("file", "over the upload maximum");
    HttpError::with_status(e, StatusCode::PAYLOAD_TOO_LARGE)
}

fn broken(e: MultipartError) -> HttpError {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        too_large()
    } else {
        Error::invalid("body", e.body_text()).into()
    }
}

fn rejected(r: Rejected) -> HttpError {
    match r {
        Rejected::Invalid(reason) => invalid(reason),
        Rejected::TooLarge => too_large(),
        Rejected::Failed(e) => e.into(),
    }
}

fn parse_meta(text: &[u8]) -> Result<Meta, Error> {
    let value = serde_json::from_slice(text).map_err(|e| Error::invalid("meta", e.to_string()))?;
    crate::params::decode(value).map_err(|e| match e {
        Error::Validation(mut fields) => {
            for f in &mut fields {
                f.field = format!("meta.{}", f.field);
            }
            Error::Validation(fields)
        }
        other => other,
    })
}

/// `POST /api/v1/images`. An error found while the client is still
/// sending is answered once the rest of the body is drained (bounded), so
/// the client reads the answer instead of a reset.
pub async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    form: Result<Multipart, MultipartRejection>,
) -> Response {
    let mut form = match form {
        Ok(form) => form,
        Err(r) => return not_multipart(&state, &headers, r).await.into_response(),
    };
    match receive(&state, &headers, &mut form).await {
        Ok(response) => response,
        Err(e) => crate::server::drain::multipart(form, e.into_response()).await,
    }
}

/// A body that is not multipart: the credentials are checked first (as
/// for any upload), then 400 with the reason, as JSON.
async fn not_multipart(state: &AppState, headers: &HeaderMap, r: MultipartRejection) -> HttpError {
    if let Err(e) = uploader(state, headers).await {
        return e;
    }
    let e = Error::invalid("body", r.body_text());
    HttpError::with_status(e, StatusCode::BAD_REQUEST)
}

/// The caller, who must hold a session or a PAT with `write`.
async fn uploader(state: &AppState, headers: &HeaderMap) -> Result<Caller, HttpError> {
    let caller = bearer::resolve(state, headers)
        .await?
        .ok_or(Error::auth(AuthFailure::Missing))?;
    if matches!(
        caller.via,
        Via::Pat {
            can_write: false,
            ..
        }
    ) {
        let denied = Error::Denied {
            reason: Denial::Scope,
            required: "write",
        };
        return Err(denied.into());
    }
    Ok(caller)
}

async fn receive(
    state: &AppState,
    headers: &HeaderMap,
    form: &mut Multipart,
) -> Result<Response, HttpError> {
    let caller = uploader(state, headers).await?;
    let Ok(slot) = state.guards.uploads.try_start(&caller.user_id.to_string()) else {
        let e = Error::RateLimited { retry_after_s: 1 };
        return Err(e.into());
    };
    owner_budget(state, caller.user_id, 0)
        .await
        .map_err(budget_refusal)?;
    let (id, mut upload) = state.images.start_upload(caller.user_id).await?;
    let mut parts = Parts::default();
    read_parts(form, &mut upload, &mut parts).await?;
    if !parts.has_file {
        return Err(invalid("the file part is missing"));
    }
    // The rest runs on its own task, which a client gone now (or the idle
    // watchdog closing its connection) cannot cancel between the object's
    // completion and its row: that left an original no row names.
    // Tracked by the store, so shutdown waits for it too.
    let state = state.clone();
    let settling = state.store.clone().spawn_tracked(async move {
        let _slot = slot;
        settle(&state, caller.user_id, id, upload, parts).await
    });
    settling
        .await
        .map_err(|e| Error::Internal(anyhow::anyhow!("an upload's settling stopped: {e}")))?
}

/// Completes the stored original, checks the owner's budget with its size,
/// and records it.
async fn settle(
    state: &AppState,
    owner: uuid::Uuid,
    id: uuid::Uuid,
    upload: Upload,
    parts: Parts,
) -> Result<Response, HttpError> {
    let accepted = upload.finish().await.map_err(rejected)?;
    // Held until the row is in: the quota counts it from then on.
    let _promised = match owner_budget(state, owner, accepted.size).await {
        Ok(promised) => promised,
        Err(e) => {
            state.store.delete(&accepted.key).await?;
            return Err(budget_refusal(e));
        }
    };
    let dto = state
        .images
        .ingest(owner, id, accepted, parts.meta, parts.album_id)
        .await?;
    Ok((StatusCode::CREATED, Json(dto)).into_response())
}

#[derive(Default)]
struct Parts {
    has_file: bool,
    has_meta: bool,
    meta: Meta,
    album_id: Option<uuid::Uuid>,
}

/// A text part read whole, refused (2002 on `name`) past `limit` bytes.
async fn small_part(
    field: &mut axum::extract::multipart::Field<'_>,
    name: &str,
    limit: usize,
    too_long: &str,
) -> Result<Vec<u8>, HttpError> {
    let mut text = Vec::new();
    while let Some(chunk) = field.chunk().await.map_err(broken)? {
        text.extend_from_slice(&chunk);
        if text.len() > limit {
            return Err(Error::invalid(name, too_long).into());
        }
    }
    Ok(text)
}

/// Reads the parts: streams the file, parses `meta` and `album_id`.
async fn read_parts(
    form: &mut Multipart,
    upload: &mut Upload,
    parts: &mut Parts,
) -> Result<(), HttpError> {
    while let Some(mut field) = form.next_field().await.map_err(broken)? {
        match field.name() {
            Some("file") if !parts.has_file => {
                parts.has_file = true;
                while let Some(chunk) = field.chunk().await.map_err(broken)? {
                    upload.push(&chunk).await.map_err(rejected)?;
                }
            }
            Some("meta") if !parts.has_meta => {
                parts.has_meta = true;
                let text = small_part(&mut field, "meta", META_LIMIT, "over 64 KiB").await?;
                parts.meta = parse_meta(&text)?;
                parts.meta.validate()?;
            }
            Some("album_id") if parts.album_id.is_none() => {
                let text = small_part(&mut field, "album_id", 64, "must be a UUID").await?;
                let text = std::str::from_utf8(&text).unwrap_or("");
                parts.album_id = Some(lightbox_core::ids::parse("album_id", text)?);
            }
            Some("file" | "album_id" | "meta") => {
                let name = field.name().unwrap_or_default().to_owned();
                return Err(Error::invalid(&name, "given more than once").into());
            }
            other => {
                let name = other.unwrap_or("(unnamed)");
                let e = Error::invalid(name, "unknown form field: only file, meta and album_id");
                return Err(e.into());
            }
        }
    }
    Ok(())
}

async fn owner_budget(
    state: &AppState,
    owner: uuid::Uuid,
    incoming: u64,
) -> Result<Option<Reserved>, Error> {
    let storage = (state.config.limits.storage_per_owner, &state.guards.storage);
    lightbox_core::images::quota::check_upload(
        state.repo.as_ref(),
        &state.images.resources,
        storage,
        owner,
        incoming,
    )
    .await
}

/// Over the storage quota: 413; over the pending cap: 429 with `Retry-After`.
fn budget_refusal(e: Error) -> HttpError {
    match e {
        e @ Error::Validation(_) => HttpError::with_status(e, StatusCode::PAYLOAD_TOO_LARGE),
        e => e.into(),
    }
}

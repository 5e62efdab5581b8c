//! Downloads by signed link: `GET /api/v1/images/{id}/archive?token=…`
//! (a zip of the original and every render). The link names owner and
//! image; both are checked again against the database on every request.

use super::errors::error;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use lightbox_core::auth::links::Link;
use lightbox_core::{archive, Error};
use serde::Deserialize;
use tokio_stream::wrappers::ReceiverStream;
use uuid::Uuid;

#[derive(Deserialize)]
pub struct TokenQuery {
    token: Option<String>,
}

/// A valid link of `kind` for the image in the path: 401 for no, a bad, an
/// expired or another image's link; 404 for a path that is no image id.
fn check_link(
    state: &AppState,
    kind: &str,
    id: &str,
    token: Option<&str>,
) -> Result<(Link, Uuid), Error> {
    let link = token
        .and_then(|t| state.signer.verify_link(t))
        .filter(|l| l.kind == kind);
    let Some(link) = link else {
        return Err(Error::unauthorized());
    };
    let Ok(id) = Uuid::parse_str(id) else {
        return Err(Error::NotFound);
    };
    if link.subject != id {
        return Err(Error::unauthorized());
    }
    Ok((link, id))
}

/// `GET`/`HEAD /api/v1/images/{id}/download?token=…`: the file the link
/// names, if it is still exactly that file; otherwise 409 with 2006 and
/// `data.state` (`stale` once the render has moved on).
pub async fn download(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<TokenQuery>,
) -> Response {
    let (link, id) = match check_link(&state, "download", &id, q.token.as_deref()) {
        Ok(found) => found,
        Err(e) => return super::errors::from_error(e),
    };
    let variant = link.variant.as_deref().unwrap_or_default();
    let file = match state
        .images
        .resolve_download(link.owner, id, variant, link.crop.as_deref(), link.spec)
        .await
    {
        Ok(f) => f,
        Err(e @ Error::DownloadNotReady { .. }) => return error(StatusCode::CONFLICT, &e),
        // The link's crop no longer exists.
        Err(Error::Validation(_)) => {
            return error(
                StatusCode::CONFLICT,
                &Error::DownloadNotReady {
                    state: "unavailable",
                },
            )
        }
        Err(e) => return super::errors::from_error(e),
    };
    let stream = match state.store.get_stream(&file.key, None).await {
        Ok(s) => s,
        Err(e) => return super::errors::from_error(e),
    };
    let headers = [
        (header::CONTENT_TYPE, file.mime.to_owned()),
        (header::CONTENT_LENGTH, file.size_bytes.to_string()),
        (
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{}\"", file.filename),
        ),
        (header::CACHE_CONTROL, "private, no-store".to_owned()),
    ];
    (StatusCode::OK, headers, Body::from_stream(stream)).into_response()
}

pub async fn archive(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<TokenQuery>,
) -> Response {
    let (link, id) = match check_link(&state, "archive", &id, q.token.as_deref()) {
        Ok(found) => found,
        Err(e) => return super::errors::from_error(e),
    };
    let entries = match state.images.archive_entries(link.owner, id).await {
        Ok(e) => e,
        Err(e @ Error::DownloadNotReady { .. }) => return error(StatusCode::CONFLICT, &e),
        Err(e) => return super::errors::from_error(e),
    };
    zip_response(&state, entries, &format!("image-{id}.zip"))
}

/// `GET`/`HEAD /api/v1/albums/{id}/download?token=…`: a zip of the folder's
/// visible photos in the link's variant, streamed; ownership and content
/// are checked again on every request (409 with 2006 when nothing is left).
pub async fn album(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<TokenQuery>,
) -> Response {
    let (link, id) = match check_link(&state, "album_download", &id, q.token.as_deref()) {
        Ok(found) => found,
        Err(e) => return super::errors::from_error(e),
    };
    let variant = link.variant.as_deref().unwrap_or_default();
    let entries = match state.albums.archive_entries(link.owner, id, variant).await {
        Ok(e) => e,
        Err(e @ Error::DownloadNotReady { .. }) => return error(StatusCode::CONFLICT, &e),
        Err(e) => return super::errors::from_error(e),
    };
    zip_response(&state, entries, &format!("album-{id}-{variant}.zip"))
}

/// A zip of `entries` streamed from the blob store as it is written; never
/// cached, never sending a referrer on.
pub(crate) fn zip_response(state: &AppState, entries: Vec<archive::Entry>, name: &str) -> Response {
    let body = Body::from_stream(ReceiverStream::new(archive::stream(
        state.store.clone(),
        entries,
    )));
    let headers = [
        (header::CONTENT_TYPE, "application/zip".to_owned()),
        (
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        ),
        (header::CACHE_CONTROL, "private, no-store".to_owned()),
        (header::REFERRER_POLICY, "no-referrer".to_owned()),
    ];
    (StatusCode::OK, headers, body).into_response()
}

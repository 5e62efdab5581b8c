//! Downloads by signed link (`lightbox_core::auth::links`): an image's
//! archive, one file of an image, or a folder zip. The link names owner and
//! subject; both are checked again against the database on every request.

use super::errors::HttpError;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, StatusCode, Version};
use axum::response::{IntoResponse, Response};
use lightbox_core::archive;
use lightbox_core::domain::downloads::DownloadState;
use lightbox_core::domain::error::AuthFailure;
use lightbox_core::domain::links::LinkKind;
use lightbox_core::limits::zips::{ZipBusy, ZipPermit, RETRY_AFTER_S};
use lightbox_core::store::Reads;
use lightbox_core::Error;
use uuid::Uuid;

/// A link's `token` from the query string: absent, or exactly one. Two
/// are malformed (1001), answered like any other bad link (JSON, or the
/// HTML page for a browser), never as a plain-text extractor error.
fn token_of(query: Option<&str>) -> Result<Option<String>, Error> {
    let mut found = None;
    for (key, value) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
        if key == "token" {
            if found.is_some() {
                return Err(Error::auth(AuthFailure::Malformed));
            }
            found = Some(value.into_owned());
        }
    }
    Ok(found)
}

/// `GET`/`HEAD /api/v1/images/{id}/download?token=…`: the file the link
/// names, if it is still exactly that file; otherwise 409 with 2006 and
/// `data.state` (`stale` once the render has moved on).
pub async fn download(
    State(state): State<AppState>,
    Path(id): Path<String>,
    version: Version,
    RawQuery(query): RawQuery,
) -> Result<Response, HttpError> {
    let link = state.signer.open_link(
        LinkKind::Download,
        &id,
        token_of(query.as_deref())?.as_deref(),
    )?;
    let variant = link.variant.ok_or(Error::auth(AuthFailure::Malformed))?;
    let file = state
        .images
        .resolve_download(
            link.owner,
            link.subject,
            variant,
            link.crop.as_deref(),
            link.spec,
        )
        .await
        .map_err(|e| match e {
            // The link's crop no longer exists.
            Error::Validation(_) => Error::DownloadNotReady {
                state: DownloadState::Unavailable,
            },
            e => e,
        })?;
    if !link.in_scope(file.album_id, file.membership) {
        return Err(Error::DownloadNotReady {
            state: DownloadState::Stale,
        }
        .into());
    }
    let stream = state
        .store
        .get_stream(&file.key, file.range.clone(), reads_for(version))
        .await?;
    let length = [(header::CONTENT_LENGTH, file.size_bytes.to_string())];
    let headers = attachment(file.mime, &file.filename);
    Ok((StatusCode::OK, headers, length, Body::from_stream(stream)).into_response())
}

pub async fn archive(
    State(state): State<AppState>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, HttpError> {
    let link = state.signer.open_link(
        LinkKind::Archive,
        &id,
        token_of(query.as_deref())?.as_deref(),
    )?;
    let permit = zip_permit(&state, link.subject)?;
    let entries = state
        .images
        .archive_entries(link.owner, link.subject)
        .await?;
    Ok(zip_response(
        &state,
        entries,
        &format!("image-{}.zip", link.subject),
        permit,
    ))
}

/// `GET`/`HEAD /api/v1/albums/{id}/download?token=…`: a zip of the folder's
/// visible photos in the link's variant, streamed; ownership and content
/// are checked again on every request (409 with 2006 when nothing is left).
pub async fn album(
    State(state): State<AppState>,
    Path(id): Path<String>,
    RawQuery(query): RawQuery,
) -> Result<Response, HttpError> {
    let link = state.signer.open_link(
        LinkKind::AlbumDownload,
        &id,
        token_of(query.as_deref())?.as_deref(),
    )?;
    let variant = link.variant.ok_or(Error::auth(AuthFailure::Malformed))?;
    let permit = zip_permit(&state, link.subject)?;
    let entries = state
        .albums
        .archive_entries(link.owner, link.subject, variant)
        .await?;
    let name = format!("album-{}-{variant}.zip", link.subject);
    Ok(zip_response(&state, entries, &name, permit))
}

/// A zip of `entries` streamed from the blob store as it is written.
pub(crate) fn zip_response(
    state: &AppState,
    entries: Vec<archive::Entry>,
    name: &str,
    permit: ZipPermit,
) -> Response {
    let body = Body::from_stream(archive::stream(
        state.store.clone(),
        entries,
        state.config.limits.zip_send_timeout,
        permit,
    ));
    (StatusCode::OK, attachment("application/zip", name), body).into_response()
}

/// The headers of every file a download sends. An original is the
/// uploader's bytes, which may carry anything after the image (an HTML
/// page, a zip): it is saved, never shown (`attachment`), a browser must
/// not guess another type from its bytes (`nosniff`), and if it is opened
/// in a tab anyway it runs nothing and reaches no origin (`sandbox`).
/// Never cached, never sending a referrer on.
fn attachment(mime: &str, name: &str) -> [(header::HeaderName, String); 6] {
    [
        (header::CONTENT_TYPE, mime.to_owned()),
        (
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"{name}\""),
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
        (header::CONTENT_SECURITY_POLICY, "sandbox".to_owned()),
        (header::CACHE_CONTROL, "private, no-store".to_owned()),
        (header::REFERRER_POLICY, "no-referrer".to_owned()),
    ]
}

/// A slot for one zip of `subject` (a folder, or the photo of an
/// archive), keyed by its id and not by the path's spelling of it (a UUID
/// parses in upper case and other forms too); over its share 429, over the
/// server's 503, both with `Retry-After`.
pub(crate) fn zip_permit(state: &AppState, subject: Uuid) -> Result<ZipPermit, HttpError> {
    state
        .guards
        .zips
        .try_start(&subject.to_string())
        .map_err(|busy| {
            let status = match busy {
                ZipBusy::Key => StatusCode::TOO_MANY_REQUESTS,
                ZipBusy::All => StatusCode::SERVICE_UNAVAILABLE,
            };
            let e = Error::RateLimited {
                retry_after_s: RETRY_AFTER_S,
            };
            HttpError::with_status(e, status)
        })
}

/// HTTP/2 carries many downloads on one connection: each is read within
/// the process's budget of unsent bytes (`store::unsent`).
fn reads_for(version: Version) -> Reads {
    if version >= Version::HTTP_2 {
        Reads::Paced
    } else {
        Reads::Whole
    }
}

//! Album pages for visitors: `/s/{token}` (unlisted), `/a/{alias}` and
//! `/albums/{id}` (public), each with `feed.xml` and `download.zip`
//! beside it, and the stylesheet they share. The markup comes from
//! `lightbox_core::sharing`; this module adds the headers. Anything not
//! live is the same bare 404.

use super::downloads::zip_response;
use super::errors::{not_found, HttpError};
use super::pages::csp;
use crate::state::AppState;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{FromRequestParts, Path, Query, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use lightbox_core::domain::urls;
use lightbox_core::sharing::html::{FAVICON, STYLESHEET};
use lightbox_core::sharing::visitors::{Address, Served, Visit};
use lightbox_core::Error;
use serde::Deserialize;
use std::collections::HashMap;
use uuid::Uuid;

#[derive(Deserialize)]
pub struct Paging {
    after: Option<String>,
}

/// A folder page by its paging query. A query that does not parse
/// (`after` twice, say) names no photo, like a stale cursor: the folder
/// starts again.
async fn paged(
    state: AppState,
    address: Option<Address>,
    q: Result<Query<Paging>, QueryRejection>,
) -> Answer {
    match (q, address) {
        (Ok(Query(q)), address) => page(state, address, q.after, None).await,
        (Err(_), Some(address)) => redirect(StatusCode::SEE_OTHER, &address.path()),
        (Err(_), None) => not_found(),
    }
}

/// Unlisted pages carry their token in the address: keep them out of
/// indexes, referrers and shared caches.
fn page_headers(state: &AppState, unlisted: bool) -> Vec<(header::HeaderName, String)> {
    let mut h = vec![
        (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
        (
            header::CONTENT_SECURITY_POLICY,
            csp(&state.images.image_host, "'self'"),
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
    ];
    if unlisted {
        h.push((header::REFERRER_POLICY, "no-referrer".to_owned()));
        h.push((
            header::HeaderName::from_static("x-robots-tag"),
            "noindex".to_owned(),
        ));
        h.push((header::CACHE_CONTROL, "private, no-store".to_owned()));
    } else {
        h.push((
            header::REFERRER_POLICY,
            "strict-origin-when-cross-origin".to_owned(),
        ));
        h.push((header::CACHE_CONTROL, "no-cache".to_owned()));
    }
    h
}

/// A folder page, or (with `photo`) one photo's page within it.
async fn page(
    state: AppState,
    address: Option<Address>,
    after: Option<String>,
    photo: Option<&str>,
) -> Result<Response, HttpError> {
    let Some(address) = address else {
        return not_found();
    };
    let visit = match photo {
        None => state.sharing.visit(&address, after.as_deref()).await,
        Some(p) => match Uuid::parse_str(p) {
            Ok(id) => state.sharing.visit_photo(&address, id).await,
            Err(_) => return not_found(),
        },
    };
    match visit {
        Ok(Visit::Page { html, unlisted }) => {
            let mut res = html.into_response();
            for (name, value) in page_headers(&state, unlisted) {
                if let Ok(v) = HeaderValue::from_str(&value) {
                    res.headers_mut().insert(name, v);
                }
            }
            Ok(res)
        }
        Ok(Visit::Redirect(to)) => redirect(StatusCode::MOVED_PERMANENTLY, &to),
        // A cursor photo that is gone: start the folder again.
        Err(Error::CursorStale | Error::Validation(_)) => {
            redirect(StatusCode::SEE_OTHER, &address.path())
        }
        Err(e) => Err(HttpError::visitor(e)),
    }
}

/// Addresses come from the path; one that is no header value is a 404.
fn redirect(status: StatusCode, to: &str) -> Result<Response, HttpError> {
    match HeaderValue::from_str(to) {
        Ok(v) => Ok((status, [(header::LOCATION, v)]).into_response()),
        Err(_) => not_found(),
    }
}

async fn feed(state: AppState, address: Option<Address>) -> Result<Response, HttpError> {
    let Some(address) = address else {
        return not_found();
    };
    let xml = match state.sharing.feed(&address).await {
        Ok(Served::Here(xml)) => xml,
        Ok(Served::Moved(to)) => return redirect(StatusCode::MOVED_PERMANENTLY, &urls::feed(&to)),
        Err(e) => return Err(HttpError::visitor(e)),
    };
    let headers = [
        (header::CONTENT_TYPE, "application/atom+xml; charset=utf-8"),
        (header::CACHE_CONTROL, "no-cache"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
    ];
    Ok((headers, xml).into_response())
}

async fn zip(state: AppState, address: Option<Address>) -> Result<Response, HttpError> {
    let Some(address) = address else {
        return not_found();
    };
    let album = match state.sharing.downloadable(&address).await {
        Ok(Served::Here(album)) => album,
        Ok(Served::Moved(to)) => return redirect(StatusCode::MOVED_PERMANENTLY, &urls::zip(&to)),
        Err(e) => return Err(HttpError::visitor(e)),
    };
    // By id: every spelling of its alias, token or id is the one folder.
    let permit = super::downloads::zip_permit(&state, album.id)?;
    let entries = state
        .sharing
        .visitor_archive(album)
        .await
        .map_err(HttpError::visitor)?;
    Ok(zip_response(&state, entries, "photos.zip", permit))
}

type Answer = Result<Response, HttpError>;

/// The album a visitor's path names (`/s/{token}`, `/a/{alias}` or
/// `/albums/{id}`, whichever the route has), and the `{photo}` within it
/// if the route has one. An id that is no UUID names no album.
pub struct Visited {
    address: Option<Address>,
    photo: Option<String>,
}

impl<S: Send + Sync> FromRequestParts<S> for Visited {
    type Rejection = PathRejection;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, PathRejection> {
        let Path(mut params) =
            Path::<HashMap<String, String>>::from_request_parts(parts, state).await?;
        let address = match (params.remove("token"), params.remove("alias")) {
            (Some(token), _) => Some(Address::Token(token)),
            (None, Some(alias)) => Some(Address::Alias(alias)),
            (None, None) => params
                .remove("id")
                .and_then(|id| Uuid::parse_str(&id).ok())
                .map(Address::Album),
        };
        let photo = params.remove("photo");
        Ok(Visited { address, photo })
    }
}

/// An album's page.
pub async fn album(
    State(state): State<AppState>,
    Visited { address, .. }: Visited,
    q: Result<Query<Paging>, QueryRejection>,
) -> Answer {
    paged(state, address, q).await
}

/// A photo's page within its album.
pub async fn photo(State(state): State<AppState>, visited: Visited) -> Answer {
    let photo = visited.photo.as_deref();
    page(state, visited.address, None, photo).await
}

pub async fn album_feed(State(state): State<AppState>, visited: Visited) -> Answer {
    feed(state, visited.address).await
}

pub async fn album_zip(State(state): State<AppState>, visited: Visited) -> Answer {
    zip(state, visited.address).await
}

pub async fn favicon() -> Response {
    (
        [
            (header::CONTENT_TYPE, "image/svg+xml"),
            (header::CACHE_CONTROL, "public, max-age=86400"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        FAVICON,
    )
        .into_response()
}

pub async fn stylesheet() -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/css; charset=utf-8"),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        STYLESHEET,
    )
        .into_response()
}

//! Server-rendered pages for visitors: `/p/{id}`, a public photo (folder
//! pages are in `visitors`). Built with askama, which escapes every value;
//! no script, a strict CSP, and a plain 404 that says nothing for anything
//! that is not public.

use crate::state::AppState;
use askama::Template;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use lightbox_core::sharing::view::{facts, whole_frames};
use uuid::Uuid;

#[derive(Template)]
#[template(path = "photo.html")]
struct PhotoPage {
    title: String,
    description: String,
    og_image: Option<String>,
    src: Option<String>,
    srcset: String,
    width: u32,
    height: u32,
    facts: Vec<(&'static str, String)>,
}

pub(crate) fn not_found() -> Response {
    let headers = [
        (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
        (header::CACHE_CONTROL, "no-store"),
    ];
    (StatusCode::NOT_FOUND, headers, "not found\n").into_response()
}

/// `default-src 'none'`: images only from this service and its image
/// host, styles as `styles` says, no script at all.
pub(crate) fn csp(image_host: &str, styles: &str) -> String {
    format!(
        "default-src 'none'; img-src 'self' {image_host}; style-src {styles}; \
         base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
}

pub async fn photo(State(state): State<AppState>, Path(id): Path<String>) -> Response {
    let Ok(id) = Uuid::parse_str(&id) else {
        return not_found();
    };
    let Ok(public) = state.images.get_public(id).await else {
        return not_found();
    };
    let frames = whole_frames(public.width, public.height, &public.renders);
    let main = frames.last().copied();
    let page = PhotoPage {
        title: public.title.clone(),
        description: public.description.clone(),
        og_image: main.map(|r| r.url.clone()),
        src: main.map(|r| r.url.clone()),
        srcset: frames
            .iter()
            .map(|r| format!("{} {}w", r.url, r.width))
            .collect::<Vec<_>>()
            .join(", "),
        width: main.map_or(0, |r| r.width),
        height: main.map_or(0, |r| r.height),
        facts: facts(&public.exif),
    };
    let html = match page.render() {
        Ok(h) => h,
        Err(e) => return super::errors::from_error(lightbox_core::Error::Internal(e.into())),
    };
    let headers = [
        (header::CONTENT_TYPE, "text/html; charset=utf-8".to_owned()),
        (
            header::CONTENT_SECURITY_POLICY,
            csp(&state.images.image_host, "'unsafe-inline'"),
        ),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
        (
            header::REFERRER_POLICY,
            "strict-origin-when-cross-origin".to_owned(),
        ),
        (header::CACHE_CONTROL, "no-cache".to_owned()),
    ];
    (StatusCode::OK, headers, html).into_response()
}

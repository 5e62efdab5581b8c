//! `/p/{id}`, a public photo's page (folder pages are in `visitors`). The
//! markup comes from `lightbox_core::sharing`; this module adds headers: no
//! script, a strict CSP, and a bare 404 for anything that is not public.

use super::errors::{not_found, HttpError};
use crate::state::AppState;
use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use lightbox_core::sharing::visitors::photo_page;
use uuid::Uuid;

/// `default-src 'none'`: images only from this service and its image
/// host (and `data:`, for the placeholders painted server-side), styles as
/// `styles` says, no script at all.
pub(crate) fn csp(image_host: &str, styles: &str) -> String {
    format!(
        "default-src 'none'; img-src 'self' {image_host} data:; style-src {styles}; \
         base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    )
}

pub async fn photo(
    State(state): State<AppState>,
    Path(id): Path<String>,
) -> Result<Response, HttpError> {
    let Ok(id) = Uuid::parse_str(&id) else {
        return not_found();
    };
    // Whatever the reason, a photo that cannot be shown says nothing more.
    let html = photo_page(&state.images, &state.sharing, id)
        .await
        .map_err(|_| HttpError::NotFound)?;
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
    Ok((StatusCode::OK, headers, html).into_response())
}

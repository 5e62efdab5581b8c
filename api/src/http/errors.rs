//! Error bodies of the plain HTTP routes: the same codes and messages as
//! JSON-RPC errors, under `error`, with a fitting HTTP status.

use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use lightbox_core::Error;
use serde_json::json;

pub fn error(status: StatusCode, e: &Error) -> Response {
    lightbox_core::metrics::METRICS.error(e.code());
    if let Error::Internal(inner) = e {
        tracing::error!(error = format!("{inner:#}"), "request failed");
    }
    let body = json!({ "error": { "code": e.code(), "message": e.message(), "data": e.data() } });
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response()
}

/// The status an error answers with on a plain HTTP route.
pub fn status_of(e: &Error) -> StatusCode {
    match e {
        Error::Unauthorized { .. } => StatusCode::UNAUTHORIZED,
        Error::Forbidden => StatusCode::FORBIDDEN,
        Error::NotFound => StatusCode::NOT_FOUND,
        Error::Validation(_) => StatusCode::BAD_REQUEST,
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

pub fn from_error(e: Error) -> Response {
    error(status_of(&e), &e)
}

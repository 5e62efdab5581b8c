//! The one error of the plain HTTP routes. A library error answers with the
//! same code and message as over JSON-RPC, under `error`, with the HTTP
//! status that fits it; a visitor route's miss is a bare 404 that says
//! nothing. Handlers return `Result<Response, HttpError>` and use `?`.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use lightbox_core::Error;
use serde_json::json;

#[derive(Debug)]
pub enum HttpError {
    /// A library error, with the status it answers with.
    Api(StatusCode, Error),
    /// What a visitor gets for anything that is not there for them.
    NotFound,
}

/// The status an error answers with on a plain HTTP route.
pub fn status_of(e: &Error) -> StatusCode {
    match e {
        Error::Unauthorized { .. } | Error::Throttled { .. } => StatusCode::UNAUTHORIZED,
        Error::Forbidden | Error::Denied { .. } => StatusCode::FORBIDDEN,
        Error::NotFound | Error::TakenDown => StatusCode::NOT_FOUND,
        Error::Validation(_)
        | Error::CursorStale
        | Error::CustomCropLimit
        | Error::AlbumRuleLimit { .. } => StatusCode::BAD_REQUEST,
        Error::DownloadNotReady { .. } => StatusCode::CONFLICT,
        Error::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        Error::Timeout => StatusCode::SERVICE_UNAVAILABLE,
        Error::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

impl From<Error> for HttpError {
    fn from(e: Error) -> Self {
        HttpError::Api(status_of(&e), e)
    }
}

impl HttpError {
    /// The same error with another status.
    pub fn with_status(e: Error, status: StatusCode) -> Self {
        HttpError::Api(status, e)
    }

    /// On a visitor route a library miss says nothing: bare 404.
    pub fn visitor(e: Error) -> Self {
        match e {
            Error::NotFound => HttpError::NotFound,
            e => e.into(),
        }
    }
}

/// A visitor route's miss, as a `Result` error.
pub fn not_found<T>() -> Result<T, HttpError> {
    Err(HttpError::NotFound)
}

fn retry_after(e: &Error) -> Option<u64> {
    match e {
        Error::RateLimited { retry_after_s } => Some(*retry_after_s),
        Error::Unauthorized { retry_after_s, .. } => *retry_after_s,
        Error::Throttled { retry_after_s } => Some(*retry_after_s),
        _ => None,
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let (status, e) = match self {
            HttpError::NotFound => {
                let headers = [
                    (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                    (header::CACHE_CONTROL, "no-store"),
                ];
                return (StatusCode::NOT_FOUND, headers, "not found\n").into_response();
            }
            HttpError::Api(status, e) => (status, e),
        };
        lightbox_core::metrics::METRICS.error(e.code());
        if let Error::Internal(inner) = &e {
            tracing::error!(error = format!("{inner:#}"), "request failed");
        }
        let body =
            json!({ "error": { "code": e.code(), "message": e.message(), "data": e.data() } });
        let mut response = (
            status,
            [(header::CONTENT_TYPE, "application/json")],
            body.to_string(),
        )
            .into_response();
        if let Some(s) = retry_after(&e) {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(s));
        }
        response
    }
}

//! JSON-RPC 2.0 over `POST /rpc` (single or batch) and `POST /rpc/{method}`
//! (single only). Framing in `envelope`, running in `dispatch`, the method
//! table in `methods`, handlers in one module per method family.

pub mod account;
pub mod admin;
pub mod albums;
pub mod auth;
pub mod ctx;
pub mod discover;
pub mod dispatch;
pub mod envelope;
pub mod images;
pub mod jobs;
pub mod methods;
pub mod schemas;
pub mod sharing;
pub mod tokens;

use crate::http::bearer;
use crate::server::logging::RpcMethods;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;
use envelope::{Body as Parsed, Entry, Rejection};
use futures::StreamExt;
use lightbox_core::domain::urls::routes;
use serde_json::{json, Value};
use std::time::Duration;

/// The request body limit of `/rpc` and the authentication methods.
pub const BODY_LIMIT: usize = 1 << 20;
/// The time a call's body may take, whatever its pace: the connection's
/// least pace (1 KiB/s) and its 300 s deadline are for uploads, and let a
/// megabyte of JSON at 4 KB/s hold a connection slot for over four minutes.
pub const BODY_TIME: Duration = Duration::from_secs(30);

pub fn routes() -> Router<AppState> {
    Router::new()
        .route(routes::RPC, post(root))
        .route(routes::RPC_NAMED, post(named))
}

async fn root(State(state): State<AppState>, req: Request) -> Response {
    handle(state, req, None).await
}

async fn named(
    State(state): State<AppState>,
    Path(method): Path<String>,
    req: Request,
) -> Response {
    handle(state, req, Some(method)).await
}

fn json_response(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

fn reject(status: StatusCode, r: Rejection) -> Response {
    json_response(status, r.body().to_string())
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|m| m.trim().eq_ignore_ascii_case("application/json"))
}

enum Read {
    Bytes(Vec<u8>),
    TooLarge,
    TooSlow,
    Broken,
}

/// Reads at most `BODY_LIMIT` bytes within `BODY_TIME`, stopping as soon
/// as either is passed.
async fn read_limited(headers: &HeaderMap, body: Body) -> Read {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > BODY_LIMIT as u64) {
        return Read::TooLarge;
    }
    let mut buf = Vec::with_capacity(declared.unwrap_or(0) as usize);
    let mut stream = body.into_data_stream();
    let deadline = tokio::time::Instant::now() + BODY_TIME;
    loop {
        let chunk = match tokio::time::timeout_at(deadline, stream.next()).await {
            Err(_) => return Read::TooSlow,
            Ok(None) => break,
            Ok(Some(chunk)) => chunk,
        };
        let Ok(chunk) = chunk else {
            return Read::Broken;
        };
        if buf.len() + chunk.len() > BODY_LIMIT {
            return Read::TooLarge;
        }
        buf.extend_from_slice(&chunk);
    }
    Read::Bytes(buf)
}

/// A body refused before it was read whole: -32600, and the connection
/// closes (the rest of the body would otherwise be read as a request).
fn unread(status: StatusCode, message: &str, data: Value) -> Response {
    let body = envelope::error_object(Value::Null, envelope::INVALID_REQUEST, message, Some(data));
    let mut response = json_response(status, body.to_string());
    response.headers_mut().insert(
        header::CONNECTION,
        axum::http::HeaderValue::from_static("close"),
    );
    response
}

async fn handle(state: AppState, req: Request, path_method: Option<String>) -> Response {
    let client = bearer::client_addr(&req);
    let (parts, body) = req.into_parts();
    if !is_json(&parts.headers) {
        let body = envelope::error_object(
            Value::Null,
            envelope::INVALID_REQUEST,
            "invalid request: Content-Type must be application/json",
            None,
        );
        return json_response(StatusCode::UNSUPPORTED_MEDIA_TYPE, body.to_string());
    }
    let bytes = match read_limited(&parts.headers, body).await {
        Read::Bytes(b) => b,
        Read::TooLarge => {
            let message = "invalid request: body over 1 MiB";
            let data = json!({ "limit_bytes": BODY_LIMIT });
            return unread(StatusCode::PAYLOAD_TOO_LARGE, message, data);
        }
        Read::TooSlow => {
            let limit = BODY_TIME.as_secs();
            let message = format!("invalid request: body not received within {limit} s");
            return unread(
                StatusCode::REQUEST_TIMEOUT,
                &message,
                json!({ "limit_s": limit }),
            );
        }
        Read::Broken => return reject(StatusCode::BAD_REQUEST, Rejection::Parse),
    };
    let parsed = match envelope::parse(&bytes) {
        Ok(p) => p,
        Err(r) => return reject(StatusCode::BAD_REQUEST, r),
    };
    if let Some(method) = &path_method {
        match &parsed {
            Parsed::Batch(_) => return reject(StatusCode::BAD_REQUEST, Rejection::BatchNotAllowed),
            Parsed::Single(Entry::Call(c)) if &c.method != method => {
                return reject(StatusCode::BAD_REQUEST, Rejection::MethodMismatch)
            }
            _ => {}
        }
    }
    let auth = bearer::resolve(&state, &parts.headers).await;
    let origin = ctx::Origin::new(client, &parts.headers);
    let (names, body, outcome) = match parsed {
        Parsed::Single(entry) => {
            let names = dispatch::log_names(std::iter::once(&entry));
            match dispatch::single(&state, &auth, &origin, entry).await {
                Some(a) => (names, Some(a.text), a.outcome),
                None => (names, None, String::new()),
            }
        }
        Parsed::Batch(entries) => {
            let names = dispatch::log_names(entries.iter());
            // A batch's calls are answered together: held ones would add up.
            let origin = ctx::Origin {
                wait: None,
                ..origin
            };
            let answers = dispatch::batch(&state, &auth, &origin, entries).await;
            let outcomes: Vec<&str> = answers.iter().map(|a| a.outcome.as_str()).collect();
            let texts: Vec<&str> = answers.iter().map(|a| a.text.as_str()).collect();
            let body = (!answers.is_empty()).then(|| format!("[{}]", texts.join(",")));
            (names, body, outcomes.join(","))
        }
    };
    let mut response = match body {
        Some(body) => json_response(StatusCode::OK, body),
        None => StatusCode::NO_CONTENT.into_response(),
    };
    response
        .extensions_mut()
        .insert(RpcMethods { names, outcome });
    response
}

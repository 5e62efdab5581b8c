//! One log line per request: method, route (the template, never the raw
//! path, which may hold a share token), status, latency and the RPC methods
//! called. Query strings, headers and bodies are never logged.

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use std::time::Instant;

/// Set by the RPC handler on its response: the methods it ran.
#[derive(Clone)]
pub struct RpcMethods(pub String);

pub async fn log_request(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".into());
    let response = next.run(req).await;
    let rpc = response
        .extensions()
        .get::<RpcMethods>()
        .map(|m| m.0.as_str())
        .unwrap_or("");
    let took = started.elapsed();
    lightbox_core::metrics::METRICS.http(&route, response.status().as_u16(), took);
    tracing::info!(
        target: "lightbox::http",
        %method,
        route,
        status = response.status().as_u16(),
        latency_ms = (took.as_secs_f64() * 100_000.0).round() / 100.0,
        rpc,
        "request"
    );
    response
}

//! One log line per request: method, route (the template, never the raw
//! path, which may hold a share token), status, latency and the RPC methods
//! called. Query strings, headers and bodies are never logged.

use axum::extract::{MatchedPath, Request};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::Response;
use lightbox_core::metrics::RouteMetrics;
use std::time::{Duration, Instant};

/// Set by the RPC handler on its response: the methods it ran and how each
/// ended (`ok`, or the error code and reason).
#[derive(Clone)]
pub struct RpcMethods {
    pub names: String,
    pub outcome: String,
}

pub async fn log_request(req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".into());
    let response = next.run(req).await;
    record(&method, &route, &response, started.elapsed());
    response
}

/// The request's log line and its metrics.
pub fn record(method: &Method, route: &str, response: &Response, took: Duration) {
    lightbox_core::metrics::METRICS.http(route, response.status().as_str(), took);
    line(method, route, response, took);
}

/// `record` for a route whose series are resolved (`Metrics::route`).
pub fn record_at(method: &Method, metrics: &RouteMetrics, response: &Response, took: Duration) {
    metrics.http(response.status().as_str(), took);
    line(method, metrics.route(), response, took);
}

fn line(method: &Method, route: &str, response: &Response, took: Duration) {
    let (rpc, outcome) = response
        .extensions()
        .get::<RpcMethods>()
        .map_or(("", ""), |m| (m.names.as_str(), m.outcome.as_str()));
    tracing::info!(
        target: "lightbox::http",
        %method,
        route,
        status = response.status().as_u16(),
        latency_ms = (took.as_secs_f64() * 100_000.0).round() / 100.0,
        rpc,
        outcome = %outcome,
        "request"
    );
}

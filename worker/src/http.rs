//! The worker's own small HTTP surface: the probes, here and on the
//! metrics listener (`metrics_listener.rs`), and `/metrics` there.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use lightbox_core::domain::urls::routes;
use lightbox_core::health::Dependencies;
use lightbox_core::metrics::METRICS;

const TEXT: &str = "text/plain; charset=utf-8";
const EXPOSITION: &str = "text/plain; version=0.0.4; charset=utf-8";

pub fn routes(deps: Dependencies) -> Router {
    Router::new()
        .route(routes::HEALTHZ, get(healthz))
        .route(routes::READYZ, get(readyz))
        .with_state(deps)
}

pub async fn healthz() -> impl IntoResponse {
    (StatusCode::OK, [("content-type", TEXT)], "ok\n")
}

/// 200 when every dependency answers, else 503; the body names each one.
pub async fn readyz(State(deps): State<Dependencies>) -> impl IntoResponse {
    let (ready, body) = deps.report().await;
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, [("content-type", TEXT)], body)
}

pub async fn metrics(State(deps): State<Dependencies>) -> impl IntoResponse {
    deps.sample_gauges().await;
    (
        StatusCode::OK,
        [("content-type", EXPOSITION)],
        METRICS.text(),
    )
}

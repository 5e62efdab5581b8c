//! Probes (on `LIGHTBOX_LISTEN` and `LIGHTBOX_METRICS_LISTEN`, where the
//! chart's probes go) and metrics (on `LIGHTBOX_METRICS_LISTEN`) of
//! lightbox-controller.

use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;
use lightbox_core::db::DynRepo;
use lightbox_core::metrics::METRICS;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const TEXT: &str = "text/plain; charset=utf-8";

#[derive(Clone)]
pub struct Probe {
    pub repo: DynRepo,
    /// Whether this replica holds the lease (a standby is ready too).
    pub leading: Arc<AtomicBool>,
}

pub fn routes(probe: Probe) -> Router {
    Router::new()
        .route(
            "/healthz",
            get(|| async { (StatusCode::OK, [("content-type", TEXT)], "ok\n") }),
        )
        .route("/readyz", get(readyz))
        .with_state(probe)
}

/// `/metrics` alone, for `LIGHTBOX_METRICS_LISTEN`.
pub fn metrics_routes() -> Router {
    Router::new().route(
        "/metrics",
        get(|| async {
            (
                StatusCode::OK,
                [("content-type", "text/plain; version=0.0.4; charset=utf-8")],
                METRICS.text(),
            )
        }),
    )
}

async fn readyz(State(p): State<Probe>) -> impl IntoResponse {
    let db = matches!(
        tokio::time::timeout(Duration::from_secs(2), p.repo.ping()).await,
        Ok(Ok(()))
    );
    let role = if p.leading.load(Ordering::Relaxed) {
        "leader"
    } else {
        "standby"
    };
    let body = format!(
        "database: {}\nrole: {role}\n",
        if db { "ok" } else { "unreachable" }
    );
    let status = if db {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (status, [("content-type", TEXT)], body)
}

//! Liveness and readiness; the same handlers as the worker's. `/metrics`
//! is on its own listener (`lightbox_worker::metrics_listener`), which
//! answers the probes too, out of reach of request traffic.

use crate::state::AppState;
use axum::extract::State;
use axum::response::IntoResponse;

pub use lightbox_worker::http::healthz;

pub async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    lightbox_worker::http::readyz(State(state.dependencies())).await
}

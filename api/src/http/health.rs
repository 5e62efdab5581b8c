//! Liveness, readiness and metrics; the same handlers as the worker's.

use crate::state::AppState;
use axum::extract::State;
use axum::response::IntoResponse;

pub use lightbox_worker::http::healthz;

pub async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    lightbox_worker::http::readyz(State(state.dependencies())).await
}

pub async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    lightbox_worker::http::metrics(State(state.dependencies())).await
}

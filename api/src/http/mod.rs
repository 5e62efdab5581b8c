//! The plain HTTP routes beside JSON-RPC.

pub mod bearer;
pub mod health;
pub mod logging;

use crate::state::AppState;
use axum::routing::get;
use axum::Router;

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
}

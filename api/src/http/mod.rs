//! The plain HTTP routes beside JSON-RPC.

pub mod bearer;
pub mod downloads;
pub mod errors;
pub mod health;
pub mod logging;
pub mod pages;
pub mod renders;
pub mod upload;
pub mod visitors;

use crate::state::AppState;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;

/// Multipart framing and the `meta` part ride on top of the file's bytes.
const UPLOAD_OVERHEAD: u64 = 1 << 20;

pub fn routes(state: &AppState) -> Router<AppState> {
    let upload_limit = (state.config.upload_max_bytes + UPLOAD_OVERHEAD) as usize;
    Router::new()
        .route("/healthz", get(health::healthz))
        .route("/readyz", get(health::readyz))
        .route("/metrics", get(health::metrics))
        .route(
            "/api/v1/images",
            post(upload::upload).layer(DefaultBodyLimit::max(upload_limit)),
        )
        .route("/i/{id}/{file}", get(renders::serve))
        .route("/api/v1/images/{id}/archive", get(downloads::archive))
        .route("/api/v1/images/{id}/download", get(downloads::download))
        .route("/api/v1/albums/{id}/download", get(downloads::album))
        .route("/p/{id}", get(pages::photo))
        .route("/s/{token}", get(visitors::shared))
        .route("/s/{token}/download.zip", get(visitors::shared_zip))
        .route("/a/{alias}", get(visitors::alias))
        .route("/a/{alias}/feed.xml", get(visitors::alias_feed))
        .route("/a/{alias}/download.zip", get(visitors::alias_zip))
        .route("/albums/{id}", get(visitors::album))
        .route("/albums/{id}/feed.xml", get(visitors::album_feed))
        .route("/albums/{id}/download.zip", get(visitors::album_zip))
        .route("/static/lightbox.css", get(visitors::stylesheet))
}

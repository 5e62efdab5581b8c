//! The plain HTTP routes beside JSON-RPC.

pub mod bearer;
pub mod browser;
pub mod downloads;
pub mod errors;
pub mod health;
pub mod pages;
pub mod renders;
pub mod upload;
pub mod visitors;

// The RPC dispatcher names its log line's method from here.

use crate::state::AppState;
use axum::extract::DefaultBodyLimit;
use axum::routing::{get, post};
use axum::Router;
use lightbox_core::domain::urls::routes;

/// Multipart framing and the `meta` part ride on top of the file's bytes.
const UPLOAD_OVERHEAD: u64 = 1 << 20;

pub fn routes(state: &AppState) -> Router<AppState> {
    let upload_limit = (state.config.upload_max_bytes + UPLOAD_OVERHEAD) as usize;
    // What a browser may open: errors answer HTML to it (`browser`), and
    // any other path is the same 404 page.
    let browsable = Router::new()
        .route(routes::RENDER, get(renders::serve))
        .route(routes::IMAGE_ARCHIVE, get(downloads::archive))
        .route(routes::IMAGE_DOWNLOAD, get(downloads::download))
        .route(routes::ALBUM_DOWNLOAD, get(downloads::album))
        .route(routes::PHOTO, get(pages::photo))
        .route(routes::SHARED, get(visitors::album))
        .route(routes::ALIAS, get(visitors::album))
        .route(routes::ALBUM, get(visitors::album))
        .route(routes::ALIAS_FEED, get(visitors::album_feed))
        .route(routes::ALBUM_FEED, get(visitors::album_feed))
        .route(routes::SHARED_ZIP, get(visitors::album_zip))
        .route(routes::ALIAS_ZIP, get(visitors::album_zip))
        .route(routes::ALBUM_ZIP, get(visitors::album_zip))
        .route(routes::SHARED_PHOTO, get(visitors::photo))
        .route(routes::ALIAS_PHOTO, get(visitors::photo))
        .route(routes::ALBUM_PHOTO, get(visitors::photo))
        .route(routes::STYLESHEET, get(visitors::stylesheet))
        .route(routes::FAVICON, get(visitors::favicon))
        .fallback(|| async { errors::HttpError::NotFound })
        .layer(axum::middleware::from_fn(browser::html_errors));
    Router::new()
        .route(routes::HEALTHZ, get(health::healthz))
        .route(routes::READYZ, get(health::readyz))
        .route(
            routes::UPLOAD,
            post(upload::upload).layer(DefaultBodyLimit::max(upload_limit)),
        )
        .merge(browsable)
}

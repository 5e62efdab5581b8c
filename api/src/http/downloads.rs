//! Downloads by signed link: `GET /api/v1/images/{id}/archive?token=…`
//! (a zip of the original and every render). The link names owner and
//! image; both are checked again against the database on every request.

use super::errors::error;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use lightbox_core::{archive, Error};
use serde::Deserialize;
use tokio_stream::wrappers::ReceiverStream;
use uuid::Uuid;

#[derive(Deserialize)]
pub struct TokenQuery {
    token: Option<String>,
}

pub async fn archive(
    State(state): State<AppState>,
    Path(id): Path<String>,
    Query(q): Query<TokenQuery>,
) -> Response {
    let link = q
        .token
        .as_deref()
        .and_then(|t| state.signer.verify_link(t))
        .filter(|l| l.kind == "archive");
    let Some(link) = link else {
        return error(StatusCode::UNAUTHORIZED, &Error::unauthorized());
    };
    let Ok(id) = Uuid::parse_str(&id) else {
        return error(StatusCode::NOT_FOUND, &Error::NotFound);
    };
    if link.image != id {
        return error(StatusCode::UNAUTHORIZED, &Error::unauthorized());
    }
    let entries = match state.images.archive_entries(link.owner, id).await {
        Ok(e) => e,
        Err(e @ Error::DownloadNotReady { .. }) => return error(StatusCode::CONFLICT, &e),
        Err(e) => return super::errors::from_error(e),
    };
    let body = Body::from_stream(ReceiverStream::new(archive::stream(
        state.store.clone(),
        entries,
    )));
    let headers = [
        (header::CONTENT_TYPE, "application/zip".to_owned()),
        (
            header::CONTENT_DISPOSITION,
            format!("attachment; filename=\"image-{id}.zip\""),
        ),
        (header::CACHE_CONTROL, "no-store".to_owned()),
    ];
    (StatusCode::OK, headers, body).into_response()
}

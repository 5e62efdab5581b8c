//! `POST /api/v1/images`: a multipart upload with a `file` part (png, jpg
//! or webp, found from its bytes) and an optional `meta` JSON part.

use super::bearer;
use super::errors::{error, from_error};
use crate::state::AppState;
use axum::extract::multipart::MultipartError;
use axum::extract::{Multipart, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use lightbox_core::auth::Via;
use lightbox_core::images::upload::Rejected;
use lightbox_core::images::Meta;
use lightbox_core::Error;

const META_LIMIT: usize = 64 << 10;

fn invalid(reason: &str) -> Response {
    error(StatusCode::BAD_REQUEST, &Error::invalid("file", reason))
}

fn too_large() -> Response {
    let e = Error::invalid("file", "over the upload maximum");
    error(StatusCode::PAYLOAD_TOO_LARGE, &e)
}

fn broken(e: MultipartError) -> Response {
    if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
        too_large()
    } else {
        error(
            StatusCode::BAD_REQUEST,
            &Error::invalid("body", e.body_text()),
        )
    }
}

fn rejected(r: Rejected) -> Response {
    match r {
        Rejected::Invalid(reason) => invalid(reason),
        Rejected::TooLarge => too_large(),
        Rejected::Failed(e) => from_error(e),
    }
}

/// The `meta` part, checked like RPC params (an object, no NUL anywhere).
fn parse_meta(text: &[u8]) -> Result<Meta, Error> {
    let value = serde_json::from_slice(text).map_err(|e| Error::invalid("meta", e.to_string()))?;
    crate::rpc::params::decode(value).map_err(|e| match e {
        Error::Validation(mut fields) => {
            for f in &mut fields {
                f.field = format!("meta.{}", f.field);
            }
            Error::Validation(fields)
        }
        other => other,
    })
}

pub async fn upload(
    State(state): State<AppState>,
    headers: HeaderMap,
    mut form: Multipart,
) -> Response {
    let caller = match bearer::resolve(&state, &headers).await {
        Ok(Some(c)) => c,
        Ok(None) => return from_error(Error::unauthorized()),
        Err(e) => return from_error(e),
    };
    if matches!(
        caller.via,
        Via::Pat {
            can_write: false,
            ..
        }
    ) {
        return from_error(Error::Forbidden);
    }
    let images = &state.images;
    let (id, mut upload) = match images.start_upload(caller.user_id).await {
        Ok(started) => started,
        Err(e) => return from_error(e),
    };
    let mut meta = Meta::default();
    let mut has_file = false;
    loop {
        let mut field = match form.next_field().await {
            Ok(Some(f)) => f,
            Ok(None) => break,
            Err(e) => return broken(e),
        };
        match field.name() {
            Some("file") if !has_file => {
                has_file = true;
                loop {
                    match field.chunk().await {
                        Ok(Some(chunk)) => {
                            if let Err(r) = upload.push(&chunk).await {
                                return rejected(r);
                            }
                        }
                        Ok(None) => break,
                        Err(e) => return broken(e),
                    }
                }
            }
            Some("meta") => {
                let mut text = Vec::new();
                while let Some(chunk) = match field.chunk().await {
                    Ok(c) => c,
                    Err(e) => return broken(e),
                } {
                    text.extend_from_slice(&chunk);
                    if text.len() > META_LIMIT {
                        return error(
                            StatusCode::BAD_REQUEST,
                            &Error::invalid("meta", "over 64 KiB"),
                        );
                    }
                }
                meta = match parse_meta(&text) {
                    Ok(m) => m,
                    Err(e) => return error(StatusCode::BAD_REQUEST, &e),
                };
                if let Err(e) = meta.validate() {
                    return from_error(e);
                }
            }
            // Other parts are read and ignored, as browsers send extras.
            _ => while let Ok(Some(_)) = field.chunk().await {},
        }
    }
    if !has_file {
        return invalid("the file part is missing");
    }
    let accepted = match upload.finish().await {
        Ok(a) => a,
        Err(r) => return rejected(r),
    };
    match images.ingest(caller.user_id, id, accepted, meta).await {
        Ok(dto) => (StatusCode::CREATED, Json(dto)).into_response(),
        Err(e) => from_error(e),
    }
}

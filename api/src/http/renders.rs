//! `GET /i/{id}/{crop}.{ext}`: produced renders, streamed from the blob
//! store with long-lived caching, ETags and byte ranges. Originals are
//! never reachable here: only rows of the renders table resolve.

use crate::state::AppState;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use lightbox_core::render::spec::Format;
use lightbox_core::serving::SMALL;
use uuid::Uuid;

const CACHE: &str = "public, max-age=31536000, immutable";

fn not_found() -> Response {
    (
        StatusCode::NOT_FOUND,
        [(header::CACHE_CONTROL, "no-store")],
        "not found\n",
    )
        .into_response()
}

/// A `Range` header that no byte of the body satisfies (HTTP 416).
#[derive(Debug, PartialEq, Eq)]
pub struct Unsatisfiable;

/// One `bytes=` range of a `size`-byte body; `Err` when unsatisfiable,
/// `Ok(None)` when absent or not a single range (then the whole body).
pub fn parse_range(
    value: Option<&HeaderValue>,
    size: u64,
) -> Result<Option<(u64, u64)>, Unsatisfiable> {
    let Some(spec) = value
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("bytes="))
    else {
        return Ok(None);
    };
    if spec.contains(',') {
        return Ok(None);
    }
    let (a, b) = spec.trim().split_once('-').ok_or(Unsatisfiable)?;
    let (start, end) = match (a.parse::<u64>().ok(), b.parse::<u64>().ok()) {
        (Some(s), Some(e)) => (s, e.min(size.saturating_sub(1))),
        (Some(s), None) if b.is_empty() => (s, size.saturating_sub(1)),
        (None, Some(n)) if a.is_empty() && n > 0 => {
            (size.saturating_sub(n), size.saturating_sub(1))
        }
        _ => return Err(Unsatisfiable),
    };
    if start > end || start >= size {
        return Err(Unsatisfiable);
    }
    Ok(Some((start, end)))
}

pub async fn serve(
    State(state): State<AppState>,
    Path((id, file)): Path<(String, String)>,
    headers: HeaderMap,
) -> Response {
    let Ok(id) = Uuid::parse_str(&id) else {
        return not_found();
    };
    let Some((code, ext)) = file.rsplit_once('.') else {
        return not_found();
    };
    let Some(format) = Format::from_ext(ext) else {
        return not_found();
    };
    // Only a well-formed crop code reaches the database (PostgreSQL refuses
    // a NUL in text, which would otherwise surface as a 500).
    if !lightbox_core::render::spec::valid_code(code) {
        return not_found();
    }
    let render = match state.served.lookup(id, code).await {
        Ok(Some(r)) => r,
        Ok(None) => return not_found(),
        Err(e) => return super::errors::from_error(e),
    };
    // Render keys end in the extension of the format they were encoded in.
    if !render.blob_key.ends_with(&format!(".{}", format.ext())) {
        return not_found();
    }
    let size = render.size_bytes as u64;
    let etag = format!("\"{code}.v{}.{size}\"", render.version);
    let mut head = vec![
        (header::CONTENT_TYPE, format.mime().to_owned()),
        (header::CACHE_CONTROL, CACHE.to_owned()),
        (header::ETAG, etag.clone()),
        (header::ACCEPT_RANGES, "bytes".to_owned()),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff".to_owned()),
    ];
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v == "*" || v.split(',').any(|t| t.trim() == etag));
    if matches {
        return (StatusCode::NOT_MODIFIED, headers_of(head)).into_response();
    }
    let (status, range) = match parse_range(headers.get(header::RANGE), size) {
        Ok(None) => (StatusCode::OK, None),
        Ok(Some((s, e))) => {
            head.push((header::CONTENT_RANGE, format!("bytes {s}-{e}/{size}")));
            (StatusCode::PARTIAL_CONTENT, Some(s..e + 1))
        }
        Err(Unsatisfiable) => {
            let range = [(header::CONTENT_RANGE, format!("bytes */{size}"))];
            return (
                StatusCode::RANGE_NOT_SATISFIABLE,
                headers_of(range.to_vec()),
            )
                .into_response();
        }
    };
    let length = range.as_ref().map_or(size, |r| r.end - r.start);
    head.push((header::CONTENT_LENGTH, length.to_string()));
    if size <= SMALL {
        return match state.served.small_file(&render.blob_key).await {
            Ok(bytes) if bytes.len() as u64 == size => {
                let body = match range {
                    Some(r) => bytes.slice(r.start as usize..r.end as usize),
                    None => bytes,
                };
                (status, headers_of(head), body).into_response()
            }
            Ok(_) => super::errors::from_error(anyhow::anyhow!("render size changed").into()),
            Err(e) => super::errors::from_error(e),
        };
    }
    match state.store.get_stream(&render.blob_key, range).await {
        Ok(stream) => (status, headers_of(head), Body::from_stream(stream)).into_response(),
        Err(e) => super::errors::from_error(e),
    }
}

fn headers_of(pairs: Vec<(header::HeaderName, String)>) -> HeaderMap {
    pairs
        .into_iter()
        .filter_map(|(k, v)| HeaderValue::from_str(&v).ok().map(|v| (k, v)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::{parse_range, Unsatisfiable};
    use axum::http::HeaderValue;

    fn r(v: &str, size: u64) -> Result<Option<(u64, u64)>, Unsatisfiable> {
        parse_range(Some(&HeaderValue::from_str(v).unwrap()), size)
    }

    #[test]
    fn ranges() {
        assert_eq!(parse_range(None, 10), Ok(None));
        assert_eq!(r("bytes=0-3", 10), Ok(Some((0, 3))));
        assert_eq!(r("bytes=5-", 10), Ok(Some((5, 9))));
        assert_eq!(r("bytes=-4", 10), Ok(Some((6, 9))));
        assert_eq!(r("bytes=2-99", 10), Ok(Some((2, 9))));
        assert_eq!(r("bytes=0-1,4-5", 10), Ok(None));
        assert_eq!(r("bytes=10-", 10), Err(Unsatisfiable));
        assert_eq!(r("bytes=4-2", 10), Err(Unsatisfiable));
        assert_eq!(r("bytes=x-y", 10), Err(Unsatisfiable));
    }
}

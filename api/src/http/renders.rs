//! `GET /i/{id}/{crop}.{ext}`: produced renders, streamed from the blob
//! store with long-lived caching, ETags and byte ranges. Originals are
//! never reachable here: only rows of the renders table resolve.

use super::browser;
use super::errors::{not_found, HttpError};
use crate::server::logging;
use crate::server::sendfile::{FileBody, Pieces};
use crate::server::Shortcut;
use crate::state::AppState;
use axum::body::Body;
use axum::extract::{OriginalUri, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, Method, Request, StatusCode, Version};
use axum::response::{IntoResponse, Response};
use axum::Extension;
use futures::FutureExt;
use hyper::body::Incoming;
use lightbox_core::domain::crop::{valid_code, Format};
use lightbox_core::domain::urls::routes;
use lightbox_core::metrics::{RouteMetrics, METRICS};
use lightbox_core::sharing::view::download_name;
use lightbox_core::store::Reads;
use lightbox_core::stored_renders::SMALL;
use std::panic::AssertUnwindSafe;
use tower_http::catch_panic::{DefaultResponseForPanic, ResponseForPanic};
use uuid::Uuid;

/// For a URL naming the version (`?v=N`) it serves: those bytes never change.
const CACHE: &str = "public, max-age=31536000, immutable";
/// For a URL without `v`: whatever version is current, so briefly.
const CACHE_UNVERSIONED: &str = "public, max-age=60";

/// The `v` a request names: `Ok(None)` without one. `Err` for a query no
/// URL the service writes has (a `v` that is no version number, another
/// parameter than `v` and `dl`, either twice, an empty one): to a cache in
/// front, each would be one more spelling of the same bytes.
fn version_asked(query: Option<&str>) -> Result<Option<i64>, ()> {
    let Some(query) = query else {
        return Ok(None);
    };
    let (mut asked, mut named) = (None, false);
    for pair in query.split('&') {
        if let Some(v) = pair.strip_prefix("v=") {
            // One spelling per version: `01` and `+1` are not `1`.
            if asked.is_some() || !v.bytes().all(|b| b.is_ascii_digit()) || v.starts_with('0') {
                return Err(());
            }
            asked = Some(v.parse::<i64>().map_err(|_| ())?);
        } else if pair.starts_with("dl=") && !named {
            named = true;
        } else {
            return Err(());
        }
    }
    Ok(asked)
}

#[derive(Debug, PartialEq, Eq)]
pub struct Unsatisfiable;

/// One `bytes=` range of a `size`-byte body: `Ok(None)` for the whole
/// body (no range, several, or a malformed one, which RFC 9110 says to
/// ignore), `Err` for a well-formed range that starts past the end.
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
    let Some((a, b)) = spec.trim().split_once('-').filter(|_| !spec.contains(',')) else {
        return Ok(None);
    };
    // Digits past u64 are a position past any end.
    let number = |s: &str| {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
            .then(|| s.parse::<u64>().unwrap_or(u64::MAX))
    };
    let last = size.saturating_sub(1);
    let (start, end) = match (number(a), number(b)) {
        (Some(s), Some(e)) if s <= e => (s, e.min(last)),
        (Some(s), None) if b.is_empty() => (s, last),
        (None, Some(0)) if a.is_empty() => return Err(Unsatisfiable),
        (None, Some(n)) if a.is_empty() => (size.saturating_sub(n), last),
        _ => return Ok(None),
    };
    if start >= size {
        return Err(Unsatisfiable);
    }
    Ok(Some((start, end)))
}

/// Whether a `Range` still applies: without `If-Range`, or when it names
/// the current ETag (a date or another tag means the client's copy is of
/// other bytes, so it gets the whole body).
fn if_range_holds(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get(header::IF_RANGE)
        .is_none_or(|v| v.to_str().is_ok_and(|v| v.trim() == etag))
}

/// `If-None-Match` by the weak comparison RFC 9110 asks for.
fn none_match(headers: &HeaderMap, etag: &str) -> bool {
    headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(',').any(|t| {
                let t = t.trim();
                t == "*" || t.strip_prefix("W/").unwrap_or(t) == etag
            })
        })
}

/// `dl=` (from the visitor pages' Download links): the render as an
/// attachment under that name, made safe again here and given the
/// render's own extension; `None` without it.
fn attachment(query: Option<&str>, id: Uuid, ext: &str) -> Option<String> {
    let asked = form_urlencoded::parse(query.unwrap_or("").as_bytes())
        .find(|(k, _)| k == "dl")
        .map(|(_, v)| v.into_owned())?;
    let stem = asked.strip_suffix(&format!(".{ext}")).unwrap_or(&asked);
    let name = download_name(stem, id, ext);
    let ascii: String = name
        .chars()
        .map(|c| if c.is_ascii() { c } else { '_' })
        .collect();
    let utf8: String = form_urlencoded::byte_serialize(name.as_bytes()).collect();
    Some(format!(
        "attachment; filename=\"{ascii}\"; filename*=UTF-8''{}",
        utf8.replace('+', "%20")
    ))
}

/// Through the router (HTTP/2, HEAD): the path as `direct` takes it, so a
/// percent-encoded spelling (`%6Carge.webp`) names nothing here either.
pub async fn serve(
    State(state): State<AppState>,
    OriginalUri(uri): OriginalUri,
    pieces: Option<Extension<Pieces>>,
    headers: HeaderMap,
) -> Result<Response, HttpError> {
    let Some((id, file)) = plain_path(uri.path()) else {
        return not_found();
    };
    let pieces = pieces.map(|Extension(p)| p);
    answer(&state, id, file, uri.query(), pieces, &headers).await
}

/// The segments of `/i/{id}/{file}` when both are plain (letters, digits,
/// `-`, `_`, `.`): the only spelling of a render's path, so that each
/// render has one URL a cache keeps.
pub fn plain_path(path: &str) -> Option<(&str, &str)> {
    let (id, file) = path.strip_prefix("/i/")?.split_once('/')?;
    let plain = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
    };
    (plain(id) && plain(file)).then_some((id, file))
}

/// The render route as the router would answer it, without the router
/// (`server::Shortcut`): same answer, error page for browsers, panic
/// guard, log line and metrics as through `crate::app`.
#[derive(Clone)]
pub struct Direct {
    state: AppState,
    metrics: RouteMetrics,
}

impl Direct {
    pub fn new(state: AppState) -> Direct {
        let metrics = METRICS.route(routes::RENDER);
        Direct { state, metrics }
    }
}

impl Shortcut for Direct {
    /// A GET on HTTP/1 of a `plain_path`. Over HTTP/2 axum also adds
    /// `content-length: 0` to empty answers and hyper does not, so those
    /// stay with the router.
    fn takes(&self, req: &Request<Incoming>) -> bool {
        req.version() < Version::HTTP_2
            && req.method() == Method::GET
            && plain_path(req.uri().path()).is_some()
    }

    fn answer(
        self,
        parts: Parts,
        pieces: Option<Pieces>,
    ) -> impl std::future::Future<Output = Response> + Send + 'static {
        direct(self, parts, pieces)
    }
}

async fn direct(direct: Direct, parts: Parts, pieces: Option<Pieces>) -> Response {
    let state = direct.state;
    let started = std::time::Instant::now();
    let answered = AssertUnwindSafe(async {
        let response = match plain_path(parts.uri.path()) {
            Some((id, file)) => answer(&state, id, file, parts.uri.query(), pieces, &parts.headers)
                .await
                .into_response(),
            None => HttpError::NotFound.into_response(),
        };
        if browser::asks_for_html(&parts.headers) {
            browser::as_page(response)
        } else {
            response
        }
    });
    // As `crate::app`'s panic guard answers, outside the error page.
    let response = match answered.catch_unwind().await {
        Ok(response) => response,
        Err(panic) => DefaultResponseForPanic::default()
            .response_for_panic(panic)
            .map(Body::new),
    };
    logging::record_at(&parts.method, &direct.metrics, &response, started.elapsed());
    response
}

async fn answer(
    state: &AppState,
    id: &str,
    file: &str,
    query: Option<&str>,
    pieces: Option<Pieces>,
    headers: &HeaderMap,
) -> Result<Response, HttpError> {
    let Ok(asked) = version_asked(query) else {
        return not_found();
    };
    // The spelling the service writes, lower case with hyphens: the
    // others (upper case, braces, `urn:`, no hyphens) name nothing.
    let Some(id) = Uuid::try_parse(id)
        .ok()
        .filter(|u| u.hyphenated().encode_lower(&mut Uuid::encode_buffer()) == id)
    else {
        return not_found();
    };
    let Some((code, ext)) = file.rsplit_once('.') else {
        return not_found();
    };
    let Some(format) = Format::parse(ext) else {
        return not_found();
    };
    // Only a well-formed crop code reaches the database (PostgreSQL refuses
    // a NUL in text, which would otherwise surface as a 500).
    if !valid_code(code) {
        return not_found();
    }
    let Some(render) = state.stored_renders.lookup(id, code, asked).await? else {
        return not_found();
    };
    // Render keys end in the extension of the format they were encoded in.
    let encoded_as = render.blob_key.strip_suffix(format.ext());
    if !encoded_as.is_some_and(|k| k.ends_with('.')) {
        return not_found();
    }
    let size = render.size_bytes;
    let etag = format!("\"{code}.v{}.{size}\"", render.version);
    // Built straight into the map, the constant values without a copy:
    // this runs for every image a page shows.
    let mut head = HeaderMap::with_capacity(8);
    head.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static(format.mime()),
    );
    head.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static(if asked.is_some() {
            CACHE
        } else {
            CACHE_UNVERSIONED
        }),
    );
    head.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    head.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    if let Ok(v) = HeaderValue::from_str(&etag) {
        head.insert(header::ETAG, v);
    }
    if let Some(disposition) = attachment(query, id, format.ext()) {
        if let Ok(v) = HeaderValue::from_str(&disposition) {
            head.insert(header::CONTENT_DISPOSITION, v);
        }
    }
    if none_match(headers, &etag) {
        // The length of the 200 it stands for (RFC 9110, 8.6): otherwise
        // the router's zero would go out over HTTP/2, and a cache could
        // take it for the stored response's length. Over HTTP/1.1 hyper
        // leaves a bodiless 304's length out.
        head.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
        return Ok(respond(StatusCode::NOT_MODIFIED, head, Body::empty()));
    }
    let asked_range = headers
        .get(header::RANGE)
        .filter(|_| if_range_holds(headers, &etag));
    let (status, range) = match parse_range(asked_range, size) {
        Ok(None) => (StatusCode::OK, None),
        Ok(Some((s, e))) => {
            let value = format!("bytes {s}-{e}/{size}");
            if let Ok(v) = HeaderValue::from_str(&value) {
                head.insert(header::CONTENT_RANGE, v);
            }
            (StatusCode::PARTIAL_CONTENT, Some(s..e + 1))
        }
        Err(Unsatisfiable) => {
            let range = [(header::CONTENT_RANGE, format!("bytes */{size}"))];
            return Ok((
                StatusCode::RANGE_NOT_SATISFIABLE,
                headers_of(range.to_vec()),
            )
                .into_response());
        }
    };
    let whole = range.clone().unwrap_or(0..size);
    head.insert(
        header::CONTENT_LENGTH,
        HeaderValue::from(whole.end - whole.start),
    );
    // Every size from the file when the connection can (HTTP/1, local
    // disk): copying a 27 KB render into the socket was a fifth of the
    // process's time under load, more than sendfile's second system call.
    if let Some(pieces) = pieces {
        if let Some(file) = state.store.open_file(&render.blob_key, size).await? {
            let body = Body::new(FileBody::new(pieces, file, whole));
            return Ok(respond(status, head, body));
        }
    }
    if size <= SMALL {
        let bytes = state
            .stored_renders
            .small_file(&render.blob_key, size)
            .await?;
        if bytes.len() as u64 != size {
            return Err(
                lightbox_core::Error::Internal(anyhow::anyhow!("render size changed")).into(),
            );
        }
        let body = bytes.slice(whole.start as usize..whole.end as usize);
        return Ok(respond(status, head, Body::from(body)));
    }
    // Here on the local disk only over HTTP/2 (HTTP/1 took the file above).
    let stream = state
        .store
        .get_stream(&render.blob_key, range, Reads::Paced)
        .await?;
    Ok(respond(status, head, Body::from_stream(stream)))
}

/// The response with exactly `head` as its headers: taken whole, where
/// axum's tuples would merge it into a fresh map header by header.
fn respond(status: StatusCode, head: HeaderMap, body: Body) -> Response {
    let mut response = Response::new(body);
    *response.status_mut() = status;
    *response.headers_mut() = head;
    response
}

fn headers_of(pairs: Vec<(header::HeaderName, String)>) -> HeaderMap {
    pairs
        .into_iter()
        .filter_map(|(k, v)| HeaderValue::from_str(&v).ok().map(|v| (k, v)))
        .collect()
}

#[cfg(test)]
#[path = "renders_tests.rs"]
mod tests;

//! Browsers on the visitor and link routes: an error answers a small HTML
//! page with the same status (and `Retry-After`) when the request asks for
//! HTML, instead of JSON or a bare "not found". API clients, which do not
//! send `Accept: text/html`, keep the JSON error.

use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::middleware::Next;
use axum::response::Response;
use lightbox_core::sharing::html::{render, ErrorPage};

/// What the error page allows: its inline style, nothing else.
const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; \
                   form-action 'none'; frame-ancestors 'none'";

pub async fn html_errors(req: Request, next: Next) -> Response {
    let wants_html = asks_for_html(req.headers());
    let response = next.run(req).await;
    if wants_html {
        as_page(response)
    } else {
        response
    }
}

/// An error response as the HTML error page a browser is shown; any other
/// response as it is.
pub fn as_page(response: Response) -> Response {
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let Ok(page) = render(&ErrorPage::for_status(status.as_u16())) else {
        return response;
    };
    let (mut parts, _) = response.into_parts();
    let h = &mut parts.headers;
    h.remove(header::CONTENT_LENGTH);
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::VARY, HeaderValue::from_static("Accept"));
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    Response::from_parts(parts, Body::from(page))
}

/// A browser's navigation: `text/html` named in `Accept` with a weight
/// above 0 (`*/*` alone, as curl and most clients send, is not a browser).
pub fn asks_for_html(headers: &HeaderMap) -> bool {
    headers
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|t| {
            let mut parts = t.split(';').map(str::trim);
            let html = parts
                .next()
                .is_some_and(|m| m.eq_ignore_ascii_case("text/html"));
            let refused = parts.any(|p| {
                p.split_once('=').is_some_and(|(k, v)| {
                    k.trim().eq_ignore_ascii_case("q") && v.trim().parse::<f32>() == Ok(0.0)
                })
            });
            html && !refused
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_browsers_ask_for_html() {
        let with = |v: &str| {
            let mut h = HeaderMap::new();
            h.insert(header::ACCEPT, HeaderValue::from_str(v).unwrap());
            asks_for_html(&h)
        };
        assert!(with("text/html,application/xhtml+xml,*/*;q=0.8"));
        assert!(with("text/html;q=0.9"));
        assert!(with("TEXT/HTML"));
        assert!(!with("text/html;q=0"));
        assert!(!with("text/html; q=0.0, application/json"));
        assert!(!with("*/*"));
        assert!(!with("application/json"));
        assert!(!asks_for_html(&HeaderMap::new()));
    }
}

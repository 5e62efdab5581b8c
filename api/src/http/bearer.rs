//! The `Authorization: Bearer …` header and the caller's address.

use crate::state::AppState;
use axum::extract::ConnectInfo;
use axum::http::{header, HeaderMap, Request};
use lightbox_core::auth::{self, Caller};
use lightbox_core::{Error, Result};
use std::net::SocketAddr;

/// The token of a `Bearer` header (scheme case-insensitive), if any.
pub fn token(headers: &HeaderMap) -> Option<Result<&str>> {
    let value = headers.get(header::AUTHORIZATION)?;
    let parsed = value
        .to_str()
        .ok()
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, t)| scheme.eq_ignore_ascii_case("bearer") && !t.trim().is_empty())
        .map(|(_, t)| t.trim());
    Some(parsed.ok_or_else(Error::unauthorized))
}

/// `Ok(None)` without a header; 1001 for a header that does not resolve.
pub async fn resolve(state: &AppState, headers: &HeaderMap) -> Result<Option<Caller>> {
    match token(headers) {
        None => Ok(None),
        Some(t) => auth::authenticate(state.repo.as_ref(), &state.signer, t?)
            .await
            .map(Some),
    }
}

/// The peer address as text; the login throttle keys on it.
pub fn client_addr<B>(req: &Request<B>) -> String {
    req.extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|ConnectInfo(addr)| addr.ip().to_string())
        .unwrap_or_else(|| "unknown".into())
}

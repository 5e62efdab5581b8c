//! The `Authorization: Bearer …` header and the caller's address.

use crate::state::AppState;
use axum::extract::ConnectInfo;
use axum::http::{header, HeaderMap, Request};
use lightbox_core::auth::{self, Caller};
use lightbox_core::domain::error::AuthFailure;
use lightbox_core::limits::client::{self, TrustedProxies};
use lightbox_core::{Error, Result};
use std::net::SocketAddr;
use std::sync::Arc;

/// The token of a `Bearer` header (scheme case-insensitive), if any.
pub fn token(headers: &HeaderMap) -> Option<Result<&str>> {
    let value = headers.get(header::AUTHORIZATION)?;
    let parsed = value
        .to_str()
        .ok()
        .and_then(|v| v.split_once(' '))
        .filter(|(scheme, t)| scheme.eq_ignore_ascii_case("bearer") && !t.trim().is_empty())
        .map(|(_, t)| t.trim());
    Some(parsed.ok_or(Error::auth(AuthFailure::Malformed)))
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

/// The client's address as the login limits key it: the peer, or what a
/// trusted proxy says in the one header it writes (the server puts the
/// `TrustedProxies` on each request), an IPv6 address by its /64.
pub fn client_addr<B>(req: &Request<B>) -> String {
    let Some(ConnectInfo(addr)) = req.extensions().get::<ConnectInfo<SocketAddr>>() else {
        return "unknown".into();
    };
    let Some(proxies) = req.extensions().get::<Arc<TrustedProxies>>() else {
        return client::key(addr.ip());
    };
    let values: Vec<&str> = req
        .headers()
        .get_all(proxies.header().name())
        .iter()
        .filter_map(|v| v.to_str().ok())
        .collect();
    client::key(proxies.client(addr.ip(), &values))
}

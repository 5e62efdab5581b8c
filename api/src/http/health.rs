//! Liveness and readiness.

use crate::state::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use std::time::Duration;

const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

pub async fn healthz() -> impl IntoResponse {
    (
        StatusCode::OK,
        [("content-type", "text/plain; charset=utf-8")],
        "ok\n",
    )
}

async fn probe<F>(check: F) -> bool
where
    F: std::future::Future<Output = lightbox_core::Result<()>>,
{
    matches!(tokio::time::timeout(CHECK_TIMEOUT, check).await, Ok(Ok(())))
}

/// 200 when every dependency answers, else 503; the body names each one.
pub async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    let (db, store) = tokio::join!(probe(state.repo.ping()), probe(state.store.check()));
    let word = |ok: bool| if ok { "ok" } else { "unreachable" };
    let body = format!("database: {}\nblob_store: {}\n", word(db), word(store));
    let status = if db && store {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        [("content-type", "text/plain; charset=utf-8")],
        body,
    )
}

//! The second listener: `/metrics` on `LIGHTBOX_METRICS_LISTEN`, apart from
//! the port that takes traffic, so exposing the service (an Ingress with
//! `path: /`) never exposes the metrics. lightbox-api starts it too.

use crate::http::metrics;
use axum::routing::get;
use axum::Router;
use lightbox_core::domain::urls::routes;
use lightbox_core::health::Dependencies;
use std::net::SocketAddr;

/// Binds `listen` and serves `/metrics` there until the process ends;
/// prints `metrics on http://ADDR` (the tests read the port from it).
pub async fn spawn(listen: &str, deps: Dependencies) -> anyhow::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("LIGHTBOX_METRICS_LISTEN {listen}: {e}"))?;
    let addr = listener.local_addr()?;
    let routes = Router::new()
        .route(routes::METRICS, get(metrics))
        .with_state(deps);
    tokio::spawn(async move { axum::serve(listener, routes).await });
    println!("metrics on http://{addr}");
    Ok(addr)
}

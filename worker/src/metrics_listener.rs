//! The second listener, on `LIGHTBOX_METRICS_LISTEN`: `/metrics`, apart
//! from the port that takes traffic, so exposing the service (an Ingress
//! with `path: /`) never exposes the metrics; and the probes (`/healthz`,
//! `/readyz`), which the chart points here: request traffic has every
//! connection slot of the public port to fight over, and a probe that
//! waited behind it would have the pod restarted. lightbox-api starts it too.

use crate::http::{healthz, metrics, readyz};
use axum::routing::get;
use axum::Router;
use lightbox_core::domain::urls::routes;
use lightbox_core::health::Dependencies;
use std::net::SocketAddr;

/// Binds `listen` and serves `/metrics` and the probes there until the
/// process ends; prints `metrics on http://ADDR` (the tests read the port
/// from it).
pub async fn spawn(listen: &str, deps: Dependencies) -> anyhow::Result<SocketAddr> {
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|e| anyhow::anyhow!("LIGHTBOX_METRICS_LISTEN {listen}: {e}"))?;
    let addr = listener.local_addr()?;
    let routes = Router::new()
        .route(routes::METRICS, get(metrics))
        .route(routes::HEALTHZ, get(healthz))
        .route(routes::READYZ, get(readyz))
        .with_state(deps);
    tokio::spawn(async move { axum::serve(listener, routes).await });
    println!("metrics on http://{addr}");
    Ok(addr)
}

//! lightbox-controller: reconciles the CropPreset, AliasLimit and
//! RenderQuota custom resources into Lightbox's database, one leader at a
//! time. The layout follows kube-rs's controller-rs.

pub mod check;
pub mod http;
pub mod leader;
pub mod plan;
pub mod rbac;
pub mod reconcile;
pub mod resources;
pub mod scope;
pub mod uninstall;

use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::{watcher, Controller};
use lightbox_core::config::Config;
use reconcile::{error_policy, Context};
use resources::{AliasLimit, CropPreset, RenderQuota};
use scope::Scope;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The namespace of the lease: `POD_NAMESPACE`, else the service account's.
fn own_namespace() -> String {
    std::env::var("POD_NAMESPACE")
        .ok()
        .or_else(|| {
            std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace").ok()
        })
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "default".into())
}

fn identity() -> String {
    std::env::var("POD_NAME")
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| format!("lightbox-controller-{}", uuid::Uuid::new_v4()))
}

async fn log_outcome<T, E: std::fmt::Display>(r: Result<T, E>) {
    if let Err(e) = r {
        tracing::debug!(error = %e, "reconcile");
    }
}

/// The namespaces to reconcile: `LIGHTBOX_WATCH_NAMESPACES` (comma-separated;
/// unset means every namespace).
pub fn watch_scope() -> Scope {
    Scope::parse(&std::env::var("LIGHTBOX_WATCH_NAMESPACES").unwrap_or_default())
}

/// The Lease this installation elects its leader on.
pub fn lease_name() -> String {
    std::env::var("LIGHTBOX_LEASE_NAME")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| leader::LEASE_NAME.into())
}

/// One Controller per kind and watched namespace; they end on SIGTERM.
pub fn controllers(ctx: Arc<Context>, scope: &Scope) -> BoxFuture<'static, ()> {
    let client = ctx.client.clone();
    let mut all: Vec<BoxFuture<'static, ()>> = Vec::new();
    for api in scope.apis::<CropPreset>(&client) {
        let run = Controller::new(api, watcher::Config::default())
            .shutdown_on_signal()
            .run(reconcile::reconcile_preset, error_policy, ctx.clone());
        all.push(run.for_each(log_outcome).boxed());
    }
    for api in scope.apis::<AliasLimit>(&client) {
        let run = Controller::new(api, watcher::Config::default())
            .shutdown_on_signal()
            .run(reconcile::reconcile_alias_limit, error_policy, ctx.clone());
        all.push(run.for_each(log_outcome).boxed());
    }
    for api in scope.apis::<RenderQuota>(&client) {
        let run = Controller::new(api, watcher::Config::default())
            .shutdown_on_signal()
            .run(reconcile::reconcile_render_quota, error_policy, ctx.clone());
        all.push(run.for_each(log_outcome).boxed());
    }
    futures::future::join_all(all).map(|_| ()).boxed()
}

/// The pre-delete hook: `LIGHTBOX_RELEASE` names the Helm release whose
/// resources go first (see `uninstall`).
pub async fn uninstall() -> anyhow::Result<()> {
    let release = std::env::var("LIGHTBOX_RELEASE")
        .map_err(|_| anyhow::anyhow!("LIGHTBOX_RELEASE is not set"))?;
    let client = kube::Client::try_default().await?;
    uninstall::run(client, &watch_scope(), &release, Duration::from_secs(60)).await
}

/// Serves probes at once, then reconciles while it holds the lease, and
/// hands the lease back when it stops.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let client = kube::Client::try_default().await?;
    let migrations = config.migrations(false);
    let repo = lightbox_core::db::open(config.database_url.expose(), migrations).await?;
    let me = identity();
    let scope = watch_scope();
    let leading = Arc::new(AtomicBool::new(false));
    let probe = http::Probe {
        repo: repo.clone(),
        leading: leading.clone(),
    };
    // The probes on both listeners, as lightbox-api and lightbox-worker.
    let metrics = tokio::net::TcpListener::bind(&config.metrics_listen).await?;
    println!("metrics on http://{}", metrics.local_addr()?);
    let on_metrics = http::metrics_routes().merge(http::routes(probe.clone()));
    tokio::spawn(async move { axum::serve(metrics, on_metrics).await });
    let listener = tokio::net::TcpListener::bind(&config.listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    tokio::spawn(async move { axum::serve(listener, http::routes(probe)).await });

    let lock = leader::LeaseLock::new(client.clone(), &own_namespace(), &lease_name(), &me);
    tokio::select! {
        _ = lock.acquire() => {}
        _ = lightbox_core::runtime::shutdown_signal() => return Ok(()),
    }
    leading.store(true, Ordering::Relaxed);
    tracing::info!(identity = %me, ?scope, "leading: reconciling");
    let reporter = Reporter {
        controller: reconcile::MANAGER.into(),
        instance: Some(me),
    };
    let ctx = Arc::new(Context::new(
        client.clone(),
        repo,
        Recorder::new(client.clone(), reporter),
    ));
    tokio::select! {
        _ = controllers(ctx, &scope) => {
            leading.store(false, Ordering::Relaxed);
            if let Err(e) = lock.release().await {
                tracing::warn!(error = %e, "could not release the lease");
            }
            Ok(())
        }
        _ = lock.keep() => {
            leading.store(false, Ordering::Relaxed);
            anyhow::bail!("lost the lease; stopping so another replica can lead")
        }
    }
}

//! lightbox-controller: reconciles the CropPreset, AliasLimit and
//! RenderQuota custom resources into Lightbox's database, one leader at a
//! time. The layout follows kube-rs's controller-rs.

pub mod http;
pub mod leader;
pub mod plan;
pub mod rbac;
pub mod reconcile;
pub mod resources;

use futures::StreamExt;
use kube::runtime::events::{Recorder, Reporter};
use kube::runtime::{watcher, Controller};
use kube::Api;
use lightbox_core::config::Config;
use reconcile::{error_policy, Context};
use resources::{AliasLimit, CropPreset, RenderQuota};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// Serves probes at once, then reconciles while it holds the lease.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let client = kube::Client::try_default().await?;
    let repo = lightbox_core::db::connect(config.database_url.expose()).await?;
    let me = identity();
    let leading = Arc::new(AtomicBool::new(false));
    let listener = tokio::net::TcpListener::bind(&config.listen).await?;
    println!("listening on http://{}", listener.local_addr()?);
    let probe = http::Probe {
        repo: repo.clone(),
        leading: leading.clone(),
    };
    tokio::spawn(async move { axum::serve(listener, http::routes(probe)).await });

    let lock = leader::LeaseLock::new(client.clone(), &own_namespace(), &me);
    lock.acquire().await;
    leading.store(true, Ordering::Relaxed);
    tracing::info!(identity = %me, "leading: reconciling");
    let reporter = Reporter {
        controller: reconcile::MANAGER.into(),
        instance: Some(me),
    };
    let ctx = Arc::new(Context::new(
        client.clone(),
        repo,
        Recorder::new(client.clone(), reporter),
    ));
    let presets = Controller::new(
        Api::<CropPreset>::all(client.clone()),
        watcher::Config::default(),
    )
    .shutdown_on_signal()
    .run(reconcile::reconcile_preset, error_policy, ctx.clone())
    .for_each(log_outcome);
    let limits = Controller::new(
        Api::<AliasLimit>::all(client.clone()),
        watcher::Config::default(),
    )
    .shutdown_on_signal()
    .run(reconcile::reconcile_alias_limit, error_policy, ctx.clone())
    .for_each(log_outcome);
    let quotas = Controller::new(Api::<RenderQuota>::all(client), watcher::Config::default())
        .shutdown_on_signal()
        .run(reconcile::reconcile_render_quota, error_policy, ctx)
        .for_each(log_outcome);
    tokio::select! {
        _ = async { tokio::join!(presets, limits, quotas) } => Ok(()),
        _ = lock.keep() => {
            leading.store(false, Ordering::Relaxed);
            anyhow::bail!("lost the lease; stopping so another replica can lead")
        }
    }
}

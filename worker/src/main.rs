//! `lightbox-worker`: renders in cluster mode. Takes jobs from NATS
//! JetStream, reads originals from and writes renders to the blob store,
//! records them in the database. Serves `/healthz` and `/readyz` on
//! `LIGHTBOX_LISTEN`, `/metrics` on `LIGHTBOX_METRICS_LISTEN`.

use lightbox_core::config::Config;
use lightbox_core::health::Dependencies;
use lightbox_core::queue::{JobQueue, NatsQueue, NatsSettings};
use lightbox_core::render_job::Renderer;
use lightbox_core::resources::Resources;
use lightbox_core::runtime::{init_logs, shutdown_signal};
use lightbox_core::{db, store::BlobStore};
use std::sync::Arc;

fn main() -> anyhow::Result<()> {
    lightbox_core::runtime::check_cpu().map_err(anyhow::Error::msg)?;
    lightbox_core::limits::heap::keep_freed_pages();
    tokio::runtime::Runtime::new()?.block_on(run())
}

async fn run() -> anyhow::Result<()> {
    lightbox_core::runtime::command_line(clap::Command::new("lightbox-worker").about(
        "Lightbox's render worker, for cluster mode: takes jobs from NATS JetStream \
         (NATS_URL), renders, and records the renders in the database.",
    ));
    let config = Config::from_env()?;
    init_logs(config.log_format);
    let Some(nats) = NatsSettings::from_config(&config) else {
        anyhow::bail!(
            "lightbox-worker runs in cluster mode only: set NATS_URL (embedded lightbox-api renders in-process)"
        );
    };
    let repo = db::open(config.database_url.expose(), config.migrations(false)).await?;
    let store = BlobStore::from_url(&config.storage_url)?;
    let nats = NatsQueue::connect(nats).await?;
    let news = Arc::new(nats.news());
    let queue: Arc<dyn JobQueue> = Arc::new(nats);
    let renderer = Renderer {
        repo: repo.relaxed(),
        store: store.clone(),
        resources: Resources { repo: repo.clone() },
        // A worker serves no renders, so nothing here caches them.
        changes: Default::default(),
        budget: lightbox_core::limits::memory::RenderBudget::new(config.limits.render_memory_mb),
        news,
        cpu_budget: config.limits.render_cpu,
    };
    let deps = Dependencies {
        repo,
        store,
        queue: queue.clone(),
    };
    lightbox_worker::metrics_listener::spawn(&config.metrics_listen, deps.clone()).await?;
    let listener = tokio::net::TcpListener::bind(&config.listen).await?;
    let addr = listener.local_addr()?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(lightbox_core::limits::heap::release_when_idle(
        renderer.budget.clone(),
        stopped.clone(),
    ));
    let mut http_stop = stopped.clone();
    let server = tokio::spawn(async move {
        axum::serve(listener, lightbox_worker::http::routes(deps))
            .with_graceful_shutdown(async move {
                let _ = http_stop.wait_for(|s| *s).await;
            })
            .await
    });
    let workers = tokio::spawn(lightbox_worker::run(
        renderer,
        queue,
        config.worker_concurrency,
        stopped,
    ));
    tracing::info!(%addr, concurrency = config.worker_concurrency, "lightbox-worker ready");
    println!("listening on http://{addr}");
    shutdown_signal().await;
    let _ = stop.send(true);
    let _ = workers.await;
    let _ = server.await;
    Ok(())
}

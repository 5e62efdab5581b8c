//! The Lightbox API server: JSON-RPC 2.0 and the plain HTTP routes. In
//! embedded mode (the default) this one process is the whole service.

pub mod http;
pub mod params;
pub mod rpc;
pub mod server;
pub mod state;

pub use state::AppState;

use axum::Router;
use lightbox_core::accounts;
use lightbox_core::config::Config;
use lightbox_core::limits::heap;
use lightbox_core::runtime::shutdown_signal;
use tower_http::catch_panic::CatchPanicLayer;

/// The whole HTTP surface, for the binary and for tests.
pub fn app(state: AppState) -> Router {
    Router::new()
        .merge(rpc::routes())
        .merge(http::routes(&state))
        .layer(CatchPanicLayer::new())
        .layer(axum::middleware::from_fn(server::logging::log_request))
        .with_state(state)
}

/// Binds, connects the dependencies, and serves until SIGTERM or Ctrl-C.
/// Prints `listening on http://ADDR` on stdout once ready, for scripts.
/// `lightbox-api migrate`: applies this binary's migrations and exits.
/// Safe beside running pods (each migration runs in a transaction, and
/// PostgreSQL's advisory lock keeps two migrators apart).
pub async fn migrate(config: &Config) -> anyhow::Result<()> {
    let url = config.database_url.expose();
    if url.starts_with("sqlite:") {
        lightbox_core::runtime::make_data_private(&config.data_dir)?;
    }
    lightbox_core::db::open(url, lightbox_core::db::Migrations::Run).await?;
    tracing::info!("the database schema is up to date");
    println!("migrated");
    Ok(())
}

pub async fn serve(config: Config) -> anyhow::Result<()> {
    let listener = tokio::net::TcpListener::bind(&config.listen).await?;
    let addr = listener.local_addr()?;
    let base_url = config
        .base_url
        .clone()
        .unwrap_or_else(|| format!("http://{addr}"));
    let state = AppState::build(config, base_url).await?;
    if let Some((email, password)) = &state.config.admin {
        let password = password.expose().to_owned();
        if accounts::bootstrap_admin(state.repo.as_ref(), email, password).await? {
            tracing::info!(email = %email, "created the bootstrap admin account");
        }
    }
    if !state.clustered() {
        // Embedded mode: the TOML file's presets, alias limit and render
        // quota, applied the way lightbox-controller applies resources.
        let resources = state.renderer.resources.clone();
        let dropped = resources.sync_config(&state.config).await?;
        state.images.enqueue_all(&dropped).await?;
    }
    lightbox_worker::metrics_listener::spawn(&state.config.metrics_listen, state.dependencies())
        .await?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    tokio::spawn(heap::release_when_idle(
        state.renderer.budget.clone(),
        stopped.clone(),
    ));
    // Embedded mode renders here; cluster mode leaves it to lightbox-worker.
    let workers = (!state.clustered()).then(|| {
        tokio::spawn(lightbox_worker::run(
            state.renderer.clone(),
            state.queue.clone(),
            state.config.worker_concurrency,
            stopped.clone(),
        ))
    });
    let waiting = state.images.recover().await?;
    // After `recover`, whose requests renew rows the last process had sent:
    // the relay's first pass then sends each of those once, not twice.
    let relay = tokio::spawn(state.relay.clone().run(stopped));
    tracing::info!(%addr, base_url = %state.base_url, waiting,
        cluster = state.clustered(), "lightbox-api ready");
    println!("listening on http://{addr}");
    let limits = state.config.limits.clone();
    let stopping = state.stopping.clone();
    let shutdown = async move {
        shutdown_signal().await;
        stopping.cancel();
    };
    let direct = http::renders::Direct::new(state.clone());
    server::run(
        listener,
        app(state.clone()),
        direct,
        state,
        &limits,
        shutdown,
    )
    .await?;
    // Jobs in progress finish; unsent and unstarted work stays in the
    // outbox (the in-process queue's too, marked sent), and is handed out
    // again at the next start.
    let _ = stop.send(true);
    let _ = relay.await;
    if let Some(workers) = workers {
        let _ = workers.await;
    }
    Ok(())
}

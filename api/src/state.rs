//! What every handler can reach. Built once at start-up; cheap to clone.

use lightbox_core::albums::Albums;
use lightbox_core::auth::jwt::Signer;
use lightbox_core::config::Config;
use lightbox_core::db::{self, DynRepo};
use lightbox_core::health::Dependencies;
use lightbox_core::images::Images;
use lightbox_core::limits::memory::RenderBudget;
use lightbox_core::limits::Guards;
use lightbox_core::queue::news::{LocalNews, News};
use lightbox_core::queue::outbox::Relay;
use lightbox_core::queue::{JobQueue, MemoryQueue, NatsQueue, NatsSettings};
use lightbox_core::render_job::Renderer;
use lightbox_core::resources::Resources;
use lightbox_core::sharing::Sharing;
use lightbox_core::store::BlobStore;
use lightbox_core::stored_renders::{Changes, StoredRenders};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Cloned for every request by axum's `State`: one reference count, not
/// one per service.
#[derive(Clone)]
pub struct AppState(Arc<Services>);

impl std::ops::Deref for AppState {
    type Target = Services;

    fn deref(&self) -> &Services {
        &self.0
    }
}

pub struct Services {
    pub repo: DynRepo,
    pub store: BlobStore,
    pub signer: Arc<Signer>,
    pub config: Arc<Config>,
    /// Public base address, without a trailing slash.
    pub base_url: Arc<str>,
    pub images: Images,
    /// Embedded mode's render jobs (cluster mode: lightbox-worker's).
    pub renderer: Renderer,
    pub albums: Albums,
    pub sharing: Sharing,
    pub queue: Arc<dyn JobQueue>,
    pub relay: Relay,
    pub stored_renders: Arc<StoredRenders>,
    /// Told of every change a served render may depend on.
    pub changes: Changes,
    /// Login, zip and upload budgets (`lightbox_core::limits`).
    pub guards: Arc<Guards>,
    /// Cancelled when shutdown begins: held calls answer at once.
    pub stopping: CancellationToken,
}

impl AppState {
    /// Connects the database (migrating it) and the blob store.
    pub async fn build(config: Config, base_url: String) -> anyhow::Result<AppState> {
        lightbox_core::runtime::make_data_private(&config.data_dir)?;
        let migrations = config.migrations(config.nats_url.is_none());
        let repo = db::open(config.database_url.expose(), migrations).await?;
        let store = BlobStore::from_url(&config.storage_url)?;
        let signer = Signer::from_config(&config)?;
        let (queue, news) = queue(&config, &repo).await?;
        // The relay's writes need not wait for the log: a removal or a mark
        // a power loss undoes only sends that row again.
        let relay = Relay::new(repo.relaxed(), queue.clone());
        let changes = Changes::default();
        let renderer = Renderer {
            repo: repo.relaxed(),
            store: store.clone(),
            resources: Resources { repo: repo.clone() },
            changes: changes.clone(),
            budget: RenderBudget::new(config.limits.render_memory_mb),
            news,
            cpu_budget: config.limits.render_cpu,
        };
        let images = Images {
            repo: repo.clone(),
            store: store.clone(),
            outbox: relay.waker(),
            resources: Resources { repo: repo.clone() },
            changes: changes.clone(),
            news: renderer.news.clone(),
            image_host: config
                .image_host
                .clone()
                .unwrap_or_else(|| base_url.clone())
                .into(),
            upload_max_bytes: config.upload_max_bytes,
            server_publishing: config.server_publishing,
        };
        let signer = Arc::new(signer);
        let sharing = Sharing {
            repo: repo.clone(),
            signer: signer.clone(),
            resources: Resources { repo: repo.clone() },
            server_publishing: config.server_publishing,
            base_url: base_url.clone().into(),
            image_host: images.image_host.clone(),
            alias_checks: Arc::default(),
            placeholders: Arc::default(),
        };
        let albums = Albums {
            repo: repo.clone(),
            images: images.clone(),
        };
        Ok(AppState(Arc::new(Services {
            guards: Arc::new(Guards::new(&config.limits)),
            stopping: CancellationToken::new(),
            stored_renders: Arc::new(StoredRenders::new(
                repo.clone(),
                store.clone(),
                changes.clone(),
            )),
            changes,
            renderer,
            repo,
            store,
            signer,
            config: Arc::new(config),
            base_url: base_url.into(),
            images,
            albums,
            sharing,
            queue,
            relay,
        })))
    }

    /// Cluster mode: the renders are made by `lightbox-worker` processes.
    pub fn clustered(&self) -> bool {
        self.config.nats_url.is_some()
    }

    pub fn dependencies(&self) -> Dependencies {
        Dependencies {
            repo: self.repo.clone(),
            store: self.store.clone(),
            queue: self.queue.clone(),
        }
    }
}

/// NATS JetStream when `NATS_URL` is set, else the in-process queue, which
/// removes a job's outbox row when the job is done. Without waiting for
/// the log: a removal a power loss undoes only runs that job once more.
/// With it, the way news of settled photos travels.
async fn queue(
    config: &Config,
    repo: &DynRepo,
) -> anyhow::Result<(Arc<dyn JobQueue>, Arc<dyn News>)> {
    Ok(match NatsSettings::from_config(config) {
        Some(settings) => {
            let nats = NatsQueue::connect(settings).await?;
            let news = Arc::new(nats.news().listening().await);
            (Arc::new(nats), news)
        }
        None => (
            Arc::new(MemoryQueue::with_outbox(
                repo.relaxed(),
                lightbox_worker::slots(config.worker_concurrency),
            )),
            Arc::new(LocalNews::default()),
        ),
    })
}

//! Readiness: whether each dependency answers. Shared by every binary's
//! `/readyz`, so they report the same names the same way.

use crate::db::DynRepo;
use crate::queue::JobQueue;
use crate::store::BlobStore;
use std::sync::Arc;
use std::time::Duration;

const CHECK_TIMEOUT: Duration = Duration::from_secs(2);

#[derive(Clone)]
pub struct Dependencies {
    pub repo: DynRepo,
    pub store: BlobStore,
    pub queue: Arc<dyn JobQueue>,
}

async fn probe<F>(check: F) -> bool
where
    F: std::future::Future<Output = crate::Result<()>>,
{
    matches!(tokio::time::timeout(CHECK_TIMEOUT, check).await, Ok(Ok(())))
}

impl Dependencies {
    /// Whether all answer, and a body naming each: `database: ok` …
    pub async fn report(&self) -> (bool, String) {
        let (db, store, queue) = tokio::join!(
            probe(self.repo.ping()),
            probe(self.store.check()),
            probe(self.queue.check())
        );
        let word = |ok: bool| if ok { "ok" } else { "unreachable" };
        let body = format!(
            "database: {}\nblob_store: {}\nqueue: {}\n",
            word(db),
            word(store),
            word(queue)
        );
        (db && store && queue, body)
    }

    /// Refreshes the gauges read at scrape time.
    pub async fn sample_gauges(&self) {
        let m = &crate::metrics::METRICS;
        if let Ok(Ok(depth)) = tokio::time::timeout(CHECK_TIMEOUT, self.queue.depth()).await {
            m.queue_depth.set(depth as i64);
        }
        if let Ok(Ok(n)) = tokio::time::timeout(CHECK_TIMEOUT, self.repo.outbox_len()).await {
            m.outbox_pending.set(n);
        }
    }
}

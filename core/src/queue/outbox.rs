//! The relay from the outbox table to the queue. Each API process runs
//! one; with several replicas two may send the same row, which the queue
//! drops by its dedup id (and a render job run twice produces nothing twice).

use super::{JobQueue, RenderJob};
use crate::db::DynRepo;
use crate::Result;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Notify};

const BATCH: i64 = 100;
/// Rows written by another replica, or left by a failed send, are looked
/// for at least this often.
const POLL: Duration = Duration::from_secs(2);
const MAX_BACKOFF: Duration = Duration::from_secs(10);

#[derive(Clone)]
pub struct Relay {
    repo: DynRepo,
    queue: Arc<dyn JobQueue>,
    wake: Arc<Notify>,
}

impl Relay {
    pub fn new(repo: DynRepo, queue: Arc<dyn JobQueue>) -> Relay {
        Relay {
            repo,
            queue,
            wake: Arc::new(Notify::new()),
        }
    }

    /// Call after committing outbox rows, so they go out now, not at the next poll.
    pub fn waker(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    /// Sends until `shutdown` turns true. A queue or database that is down
    /// is retried with a growing pause; nothing is dropped meanwhile.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) {
        let mut backoff = Duration::from_millis(250);
        loop {
            let pause = match self.drain().await {
                Ok(_) => {
                    backoff = Duration::from_millis(250);
                    POLL
                }
                Err(e) => {
                    tracing::warn!(error = %e, retry_in_ms = backoff.as_millis() as u64,
                        "render outbox: could not hand work to the queue");
                    let pause = backoff;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    pause
                }
            };
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = tokio::time::sleep(pause) => {}
                _ = shutdown.wait_for(|stop| *stop) => return,
            }
        }
    }

    /// Sends every waiting row; the number sent.
    pub async fn drain(&self) -> Result<usize> {
        let mut sent = 0;
        loop {
            let rows = self.repo.outbox_batch(BATCH).await?;
            if rows.is_empty() {
                return Ok(sent);
            }
            for row in &rows {
                let job = RenderJob {
                    image_id: row.image_id,
                };
                self.queue.publish(job, &row.ticket).await?;
                self.repo.outbox_remove(row).await?;
                sent += 1;
            }
        }
    }
}

//! The relay from the outbox table to the queue. Each API process runs
//! one; with several replicas two may send the same row, which the queue
//! drops by its dedup id (and a render job run twice produces nothing twice).
//! A row sent to NATS goes at once; one sent to the in-process queue
//! stays, marked sent, until its job is done, and the relay's first pass
//! after a start marks every such row waiting again (the queue that held
//! them died with the last process; in cluster mode there are none, unless
//! an embedded process ran on the database before). Several replicas on one
//! database with in-process queues would then each run what another was
//! running, once: harmless, and cluster mode uses NATS.

use super::{JobQueue, RenderJob};
use crate::db::{DynRepo, OutboxRow};
use crate::{time, Result};
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
        let mut resend = true;
        loop {
            let pause = match self.pass(&mut resend).await {
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

    /// Marks waiting again, once, the rows the last process had sent to
    /// its in-process queue; then sends every waiting row.
    async fn pass(&self, resend: &mut bool) -> Result<usize> {
        if *resend {
            let n = self.repo.outbox_resend().await?;
            if n > 0 {
                tracing::info!(
                    jobs = n,
                    "render outbox: handing out again the work of the last process"
                );
            }
            *resend = false;
        }
        self.drain().await
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
                self.sent(row).await?;
                sent += 1;
            }
        }
    }

    async fn sent(&self, row: &OutboxRow) -> Result<()> {
        if self.queue.removes_done_rows() {
            self.repo.outbox_sent(row, time::now_ms()).await
        } else {
            self.repo.outbox_remove(row).await
        }
    }
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;

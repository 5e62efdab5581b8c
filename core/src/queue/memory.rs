//! The in-process queue of embedded mode. Deliveries that are handed back
//! come round again after their delay, up to `MAX_ATTEMPTS`. What it holds
//! dies with the process, so a job's outbox row is removed only when the
//! job is answered for good (`ack`), and a start sends again what is left.

use super::{Delivery, JobQueue, RenderJob, Settle};
use crate::db::{DynRepo, OutboxRow};
use crate::Result;
use async_trait::async_trait;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, Mutex};

pub const MAX_ATTEMPTS: u32 = 5;

struct Entry {
    job: RenderJob,
    attempt: u32,
    /// The outbox row's ticket (the dedup id it was published under).
    ticket: String,
}

pub struct MemoryQueue {
    tx: mpsc::UnboundedSender<Entry>,
    rx: Mutex<mpsc::UnboundedReceiver<Entry>>,
    /// Published and not yet acknowledged.
    depth: Arc<AtomicI64>,
    /// Where each job's outbox row is removed once the job is done.
    outbox: Option<DynRepo>,
}

impl MemoryQueue {
    /// A queue on its own, that touches no outbox (a relay over it removes
    /// each row once sent).
    pub fn new() -> MemoryQueue {
        let (tx, rx) = mpsc::unbounded_channel();
        MemoryQueue {
            tx,
            rx: Mutex::new(rx),
            depth: Arc::default(),
            outbox: None,
        }
    }

    /// The queue of embedded mode: each job's outbox row in `repo` goes
    /// when the job is acknowledged.
    pub fn with_outbox(repo: DynRepo) -> MemoryQueue {
        MemoryQueue {
            outbox: Some(repo),
            ..MemoryQueue::new()
        }
    }
}

impl Default for MemoryQueue {
    fn default() -> Self {
        Self::new()
    }
}

struct MemorySettle {
    tx: mpsc::UnboundedSender<Entry>,
    depth: Arc<AtomicI64>,
    job: RenderJob,
    attempt: u32,
    ticket: String,
    outbox: Option<DynRepo>,
}

#[async_trait]
impl Settle for MemorySettle {
    /// A row renewed since this job was sent has another ticket and stays.
    async fn ack(&self) -> Result<()> {
        self.depth.fetch_sub(1, Ordering::Relaxed);
        if let Some(repo) = &self.outbox {
            let row = OutboxRow {
                image_id: self.job.image_id,
                ticket: self.ticket.clone(),
            };
            repo.outbox_remove(&row).await?;
        }
        Ok(())
    }

    async fn retry(&self, delay: Duration) -> Result<()> {
        let (tx, job, attempt) = (self.tx.clone(), self.job, self.attempt + 1);
        let ticket = self.ticket.clone();
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            let _ = tx.send(Entry {
                job,
                attempt,
                ticket,
            });
        });
        Ok(())
    }

    async fn in_progress(&self) -> Result<()> {
        Ok(())
    }
}

#[async_trait]
impl JobQueue for MemoryQueue {
    async fn publish(&self, job: RenderJob, dedup_id: &str) -> Result<()> {
        self.depth.fetch_add(1, Ordering::Relaxed);
        let entry = Entry {
            job,
            attempt: 1,
            ticket: dedup_id.to_owned(),
        };
        self.tx
            .send(entry)
            .map_err(|_| anyhow::anyhow!("render queue closed"))?;
        Ok(())
    }

    async fn next(&self) -> Result<Option<Delivery>> {
        let entry = self.rx.lock().await.recv().await;
        Ok(entry.map(|e| Delivery {
            job: e.job,
            attempt: e.attempt,
            max_attempts: MAX_ATTEMPTS,
            settle: Box::new(MemorySettle {
                tx: self.tx.clone(),
                depth: self.depth.clone(),
                job: e.job,
                attempt: e.attempt,
                ticket: e.ticket,
                outbox: self.outbox.clone(),
            }),
        }))
    }

    async fn depth(&self) -> Result<u64> {
        Ok(self.depth.load(Ordering::Relaxed).max(0) as u64)
    }

    async fn check(&self) -> Result<()> {
        Ok(())
    }

    fn progress_interval(&self) -> Duration {
        Duration::from_secs(3600)
    }

    fn removes_done_rows(&self) -> bool {
        self.outbox.is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn jobs_come_out_in_order() {
        let q = MemoryQueue::new();
        let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
        q.publish(RenderJob { image_id: a }, "1").await.unwrap();
        q.publish(RenderJob { image_id: b }, "2").await.unwrap();
        assert_eq!(q.next().await.unwrap().unwrap().job.image_id, a);
        assert_eq!(q.next().await.unwrap().unwrap().job.image_id, b);
        assert_eq!(q.depth().await.unwrap(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_job_handed_back_comes_again_with_the_next_attempt() {
        let q = MemoryQueue::new();
        let id = uuid::Uuid::new_v4();
        q.publish(RenderJob { image_id: id }, "1").await.unwrap();
        let first = q.next().await.unwrap().unwrap();
        assert_eq!((first.attempt, first.is_last()), (1, false));
        first.settle.retry(Duration::from_secs(2)).await.unwrap();
        let second = q.next().await.unwrap().unwrap();
        assert_eq!((second.job.image_id, second.attempt), (id, 2));
        second.settle.ack().await.unwrap();
        assert_eq!(q.depth().await.unwrap(), 0);
    }
}

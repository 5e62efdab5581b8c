//! Render work between the API and the workers. The database is the source
//! of truth: work is first written to the outbox table in the same database
//! as the change that caused it, and the relay (`outbox`) hands it to the
//! queue when the queue can take it. A lost message is therefore found
//! again, and a queue that is down delays renders but loses nothing. The
//! in-process queue dies with its process, so what it was handed stays in
//! the outbox until each job is done.
//!
//! Two queues sit behind `JobQueue`: `MemoryQueue` inside the one embedded
//! process, `NatsQueue` (JetStream) between the API and `lightbox-worker`.
//! Word back that a photo settled travels the same way (`news`).

mod memory;
mod nats;
pub mod news;
pub mod outbox;

use crate::Result;
use async_trait::async_trait;
use futures::stream::BoxStream;
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use uuid::Uuid;

pub use memory::MemoryQueue;
pub use nats::{NatsQueue, NatsSettings};

/// "Bring this image's renders up to date." Idempotent: running it twice
/// produces nothing twice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RenderJob {
    pub image_id: Uuid,
}

/// How a delivery is answered; one implementation per queue.
#[async_trait]
pub trait Settle: Send + Sync {
    async fn ack(&self) -> Result<()>;
    /// Hands the job back, to be delivered again after `delay`.
    async fn retry(&self, delay: Duration) -> Result<()>;
    /// Still working: keeps the job from being handed to someone else.
    async fn in_progress(&self) -> Result<()>;
    /// Hands the job back unfinished at shutdown, to be delivered again
    /// at once. Not a failed attempt, though a queue may count it as one
    /// (NATS counts every delivery).
    async fn hand_back(&self) -> Result<()> {
        self.retry(Duration::ZERO).await
    }
}

/// One delivery of a job; `attempt` counts from 1.
pub struct Delivery {
    pub job: RenderJob,
    pub attempt: u32,
    pub max_attempts: u32,
    pub settle: Box<dyn Settle>,
}

impl Delivery {
    pub fn is_last(&self) -> bool {
        self.attempt >= self.max_attempts
    }
}

#[async_trait]
pub trait JobQueue: Send + Sync {
    /// Publishes a job; `dedup_id` names this request, so the queue can
    /// drop a second publish of it (an outbox row sent twice).
    async fn publish(&self, job: RenderJob, dedup_id: &str) -> Result<()>;
    /// The next delivery, or `None` when none came within the queue's poll
    /// window (ask again).
    async fn next(&self) -> Result<Option<Delivery>>;
    /// Jobs waiting or in progress.
    async fn depth(&self) -> Result<u64>;
    /// Whether the queue can be reached, for readiness.
    async fn check(&self) -> Result<()>;
    /// How often a worker should say `in_progress` during a long job.
    fn progress_interval(&self) -> Duration;
    /// Whether the queue removes each job's outbox row itself, once the job
    /// is done: embedded mode's in-process queue (built `with_outbox`),
    /// whose jobs die with the process, so the relay only marks a row sent
    /// to it. Otherwise the relay removes a row as soon as the queue has it.
    fn removes_done_rows(&self) -> bool;
    /// Jobs the queue gave up on without an answer (every delivery's worker
    /// died), for marking failed. Most queues have none.
    async fn exhausted(&self) -> Result<BoxStream<'static, RenderJob>> {
        Ok(futures::stream::pending().boxed())
    }
}

/// The wait before attempt `next` (2 s, 4 s, 8 s … at most a minute).
pub fn retry_delay(next: u32) -> Duration {
    Duration::from_secs(1u64 << next.clamp(1, 6)).min(Duration::from_secs(60))
}

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
    /// The ticket of the outbox row it was published from (its dedup id),
    /// which the worker removes once the job is answered for good; `None`
    /// for a message that carries none.
    pub ticket: Option<String>,
    pub attempt: u32,
    pub max_attempts: u32,
    pub settle: Box<dyn Settle>,
}

/// What the queue's workers are doing now, for the relay's fair hand-out
/// (`outbox`): workers waiting for a job, jobs being worked on, and jobs
/// handed to the queue that no worker has taken yet.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Slots {
    pub idle: u64,
    pub busy: u64,
    pub queued: u64,
}

impl Slots {
    /// Every worker slot, idle or busy.
    pub fn total(&self) -> u64 {
        self.idle + self.busy
    }

    /// How many more jobs the queue should be handed now: enough for every
    /// slot to have its next job waiting, no more, so the order of the
    /// rest is still the relay's to choose.
    pub fn room(&self) -> u64 {
        self.total().saturating_sub(self.queued)
    }

    /// The most jobs one owner may have handed out at once: every slot
    /// but one, so another owner's first job always finds a slot free.
    pub fn per_owner(&self) -> u64 {
        self.total().saturating_sub(1).max(1)
    }
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
    /// The workers' slots now (`Slots`).
    async fn slots(&self) -> Result<Slots>;
    /// Told when a slot may have come free, so the relay hands out the next
    /// job at once; `None` when the relay must look (`Relay`'s `BUSY_POLL`).
    fn slot_freed(&self) -> Option<std::sync::Arc<tokio::sync::Notify>> {
        None
    }
    /// How often a worker should say `in_progress` during a long job.
    fn progress_interval(&self) -> Duration;
    /// Whether what the queue holds dies with this process (the in-process
    /// queue): a start then hands out again every row the last process had
    /// sent. A queue that outlives the process keeps them.
    fn dies_with_process(&self) -> bool;
    /// Jobs the queue gave up on without an answer (every delivery's worker
    /// died), for marking failed, with their tickets. Most queues have none.
    async fn exhausted(&self) -> Result<BoxStream<'static, (RenderJob, Option<String>)>> {
        Ok(futures::stream::pending().boxed())
    }
}

/// The wait before attempt `next` (2 s, 4 s, 8 s … at most a minute).
pub fn retry_delay(next: u32) -> Duration {
    Duration::from_secs(1u64 << next.clamp(1, 6)).min(Duration::from_secs(60))
}

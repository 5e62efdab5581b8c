//! The in-process queue of embedded mode. Deliveries that are handed back
//! come round again after their delay, up to `MAX_ATTEMPTS`. What it holds
//! dies with the process, so a job's outbox row is removed only when the
//! job is answered for good (`ack`), and a start sends again what is left.
//! Each start of a job is counted in its outbox row too, so a job that
//! takes the process down with it is given up (`exhausted`) after
//! `MAX_ATTEMPTS` starts across processes instead of tried at every start.
//! A job an earlier process died running runs alone (`Turn::Alone`): a
//! crash takes every job in progress with it, and the photos that merely
//! ran beside the culprit must not be counted down with it.
//!
//! It knows how many workers take from it (`slots`), so the relay hands
//! it no more than they can start (`JobQueue::slots`).

use super::{Delivery, JobQueue, RenderJob, Settle, Slots};
use crate::db::{DynRepo, OutboxRow};
use crate::Result;
use async_trait::async_trait;
use futures::stream::BoxStream;
use futures::StreamExt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{
    mpsc, oneshot, Mutex, Notify, OwnedRwLockReadGuard, OwnedRwLockWriteGuard, RwLock,
};

pub const MAX_ATTEMPTS: u32 = 5;

struct Entry {
    job: RenderJob,
    attempt: u32,
    /// The outbox row's ticket (the dedup id it was published under).
    ticket: String,
}

/// Jobs handed to the queue and not yet taken, and jobs taken and not yet
/// answered; `freed` is told whenever a job is answered.
#[derive(Default)]
struct Counts {
    queued: AtomicI64,
    busy: AtomicI64,
    freed: Arc<Notify>,
}

/// A job taken and not yet answered; dropped with its delivery.
struct Busy(Arc<Counts>);

impl Busy {
    fn new(counts: &Arc<Counts>) -> Busy {
        counts.busy.fetch_add(1, Ordering::Relaxed);
        Busy(counts.clone())
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.busy.fetch_sub(1, Ordering::Relaxed);
        self.0.freed.notify_one();
    }
}

pub struct MemoryQueue {
    tx: mpsc::UnboundedSender<Entry>,
    rx: Mutex<mpsc::UnboundedReceiver<Entry>>,
    /// Published and not yet acknowledged.
    depth: Arc<AtomicI64>,
    /// How many workers take jobs from this queue.
    slots: u64,
    counts: Arc<Counts>,
    /// Where each job's starts are counted (embedded mode's outbox).
    outbox: Option<DynRepo>,
    /// Held shared by each job in progress, alone by a suspect one.
    gate: Arc<RwLock<()>>,
    /// Jobs started `MAX_ATTEMPTS` times already, by earlier processes.
    exhausted: (
        mpsc::UnboundedSender<Given>,
        std::sync::Mutex<Option<mpsc::UnboundedReceiver<Given>>>,
    ),
}

/// A job given up, with its ticket.
type Given = (RenderJob, Option<String>);

impl MemoryQueue {
    /// A queue for `slots` workers that counts no starts.
    pub fn new(slots: usize) -> MemoryQueue {
        let (tx, rx) = mpsc::unbounded_channel();
        let (gave_up, given_up) = mpsc::unbounded_channel();
        MemoryQueue {
            tx,
            rx: Mutex::new(rx),
            depth: Arc::default(),
            slots: slots.max(1) as u64,
            counts: Arc::default(),
            outbox: None,
            gate: Arc::default(),
            exhausted: (gave_up, std::sync::Mutex::new(Some(given_up))),
        }
    }

    /// The queue of embedded mode: each job's starts are counted in its
    /// outbox row in `repo`.
    pub fn with_outbox(repo: DynRepo, slots: usize) -> MemoryQueue {
        MemoryQueue {
            outbox: Some(repo),
            ..MemoryQueue::new(slots)
        }
    }

    fn send(&self, entry: Entry) -> Result<()> {
        send(&self.tx, &self.counts, entry).map_err(|_| anyhow::anyhow!("render queue closed"))?;
        Ok(())
    }
}

fn send(
    tx: &mpsc::UnboundedSender<Entry>,
    counts: &Counts,
    entry: Entry,
) -> std::result::Result<(), mpsc::error::SendError<Entry>> {
    counts.queued.fetch_add(1, Ordering::Relaxed);
    tx.send(entry).inspect_err(|_| {
        counts.queued.fetch_sub(1, Ordering::Relaxed);
    })
}

/// How long a suspect job waits for the jobs in progress before it runs
/// beside them after all: a hung job must not stall the queue.
const ALONE_WAIT: Duration = Duration::from_secs(60);

/// How long a suspect job keeps the others waiting: a render takes
/// seconds, so one still running by then is hung, and the queue goes on.
const ALONE_AT_MOST: Duration = Duration::from_secs(600);

/// A job's turn at the gate, held until its delivery is dropped.
enum Turn {
    Shared(#[allow(dead_code)] OwnedRwLockReadGuard<()>),
    /// Dropping it ends the task that holds the gate alone.
    Alone(#[allow(dead_code)] oneshot::Sender<()>),
}

struct MemorySettle {
    tx: mpsc::UnboundedSender<Entry>,
    depth: Arc<AtomicI64>,
    counts: Arc<Counts>,
    job: RenderJob,
    attempt: u32,
    ticket: String,
    outbox: Option<DynRepo>,
    _turn: Turn,
    _busy: Busy,
}

impl MemorySettle {
    fn row(&self) -> OutboxRow {
        OutboxRow {
            image_id: self.job.image_id,
            ticket: self.ticket.clone(),
        }
    }
}

#[async_trait]
impl Settle for MemorySettle {
    /// The outbox row is the worker's to remove (`Delivery::ticket`).
    async fn ack(&self) -> Result<()> {
        self.depth.fetch_sub(1, Ordering::Relaxed);
        Ok(())
    }

    /// Counted as queued while it waits out its delay.
    async fn retry(&self, delay: Duration) -> Result<()> {
        let (tx, counts) = (self.tx.clone(), self.counts.clone());
        let entry = Entry {
            job: self.job,
            attempt: self.attempt + 1,
            ticket: self.ticket.clone(),
        };
        counts.queued.fetch_add(1, Ordering::Relaxed);
        tokio::spawn(async move {
            tokio::time::sleep(delay).await;
            // Still counted as queued: it was while it waited.
            if tx.send(entry).is_err() {
                counts.queued.fetch_sub(1, Ordering::Relaxed);
            }
        });
        Ok(())
    }

    async fn in_progress(&self) -> Result<()> {
        Ok(())
    }

    /// A start cut short by a shutdown is no sign against the job: taken
    /// back, so the next process neither counts it nor runs the job alone.
    async fn hand_back(&self) -> Result<()> {
        if let Some(repo) = &self.outbox {
            let uncounted = repo.outbox_unstarted(&self.row()).await;
            self.retry(Duration::ZERO).await?;
            return uncounted;
        }
        self.retry(Duration::ZERO).await
    }
}

#[async_trait]
impl JobQueue for MemoryQueue {
    async fn publish(&self, job: RenderJob, dedup_id: &str) -> Result<()> {
        self.depth.fetch_add(1, Ordering::Relaxed);
        self.send(Entry {
            job,
            attempt: 1,
            ticket: dedup_id.to_owned(),
        })
    }

    async fn next(&self) -> Result<Option<Delivery>> {
        loop {
            let Some(mut e) = self.rx.lock().await.recv().await else {
                return Ok(None);
            };
            // Busy before no longer queued: the relay never sees it in neither.
            let busy = Busy::new(&self.counts);
            self.counts.queued.fetch_sub(1, Ordering::Relaxed);
            let turn = self.turn(&e).await;
            e.attempt = e.attempt.max(self.count_start(&e).await);
            if e.attempt > MAX_ATTEMPTS {
                drop(turn);
                self.give_up(e).await;
                drop(busy);
                continue;
            }
            return Ok(Some(Delivery {
                job: e.job,
                ticket: Some(e.ticket.clone()),
                attempt: e.attempt,
                max_attempts: MAX_ATTEMPTS,
                settle: Box::new(MemorySettle {
                    tx: self.tx.clone(),
                    depth: self.depth.clone(),
                    counts: self.counts.clone(),
                    job: e.job,
                    attempt: e.attempt,
                    ticket: e.ticket,
                    outbox: self.outbox.clone(),
                    _turn: turn,
                    _busy: busy,
                }),
            }));
        }
    }

    async fn depth(&self) -> Result<u64> {
        Ok(self.depth.load(Ordering::Relaxed).max(0) as u64)
    }

    async fn check(&self) -> Result<()> {
        Ok(())
    }

    async fn slots(&self) -> Result<Slots> {
        let count = |n: &AtomicI64| n.load(Ordering::Relaxed).max(0) as u64;
        let busy = count(&self.counts.busy);
        Ok(Slots {
            idle: self.slots.saturating_sub(busy),
            busy,
            queued: count(&self.counts.queued),
        })
    }

    fn slot_freed(&self) -> Option<Arc<Notify>> {
        Some(self.counts.freed.clone())
    }

    fn progress_interval(&self) -> Duration {
        Duration::from_secs(3600)
    }

    fn dies_with_process(&self) -> bool {
        true
    }

    /// Taken once: the worker that marks them failed.
    async fn exhausted(&self) -> Result<BoxStream<'static, Given>> {
        let taken = self.exhausted.1.lock().ok().and_then(|mut r| r.take());
        Ok(match taken {
            Some(rx) => {
                futures::stream::unfold(
                    rx,
                    |mut rx| async move { rx.recv().await.map(|job| (job, rx)) },
                )
                .boxed()
            }
            None => futures::stream::pending().boxed(),
        })
    }
}

impl MemoryQueue {
    /// Alone for a job started more often than this process has tried it
    /// (an earlier process died while running it), shared otherwise. Taken
    /// before the start is counted, so a job waiting its turn when the
    /// process dies is not counted.
    async fn turn(&self, e: &Entry) -> Turn {
        let starts = match &self.outbox {
            Some(repo) => repo.outbox_starts(&row_of(e)).await.ok().flatten(),
            None => None,
        };
        if starts.is_some_and(|n| n >= e.attempt) {
            let alone = tokio::time::timeout(ALONE_WAIT, self.gate.clone().write_owned()).await;
            match alone {
                Ok(guard) => return Turn::Alone(hold_alone(guard, e.job.image_id)),
                Err(_) => tracing::warn!(image_id = %e.job.image_id,
                    "a job in progress kept a suspect render job waiting; it runs beside it"),
            }
        }
        Turn::Shared(self.gate.clone().read_owned().await)
    }

    /// Counts this start in the job's outbox row: the starts so far in any
    /// process, or 0 with no row (renewed, or no outbox). A database that
    /// cannot count leaves the job to this process's own count.
    async fn count_start(&self, e: &Entry) -> u32 {
        let Some(repo) = &self.outbox else { return 0 };
        match repo.outbox_started(&row_of(e)).await {
            Ok(started) => started.unwrap_or(0),
            Err(err) => {
                tracing::warn!(image_id = %e.job.image_id, error = %err, "cannot count a render job's start");
                0
            }
        }
    }

    /// A job started `MAX_ATTEMPTS` times, the last ones never answered
    /// (each took its process down): its row is removed so no later start
    /// sends it again, then it is handed to `exhausted` to be marked
    /// failed. Cut off between the two, the photo is still `processing`,
    /// so the next start records it afresh: five more starts, not a loop.
    async fn give_up(&self, e: Entry) {
        self.depth.fetch_sub(1, Ordering::Relaxed);
        if let Some(repo) = &self.outbox {
            if let Err(err) = repo.outbox_remove(&row_of(&e)).await {
                tracing::warn!(image_id = %e.job.image_id, error = %err, "cannot remove an exhausted job's row");
            }
        }
        let _ = self.exhausted.0.send((e.job, Some(e.ticket)));
    }
}

/// Holds the gate alone until the turn is dropped, or `ALONE_AT_MOST`.
fn hold_alone(guard: OwnedRwLockWriteGuard<()>, image_id: uuid::Uuid) -> oneshot::Sender<()> {
    let (turn, ended) = oneshot::channel::<()>();
    tokio::spawn(async move {
        if tokio::time::timeout(ALONE_AT_MOST, ended).await.is_err() {
            tracing::warn!(%image_id, "a suspect render job still runs; the others go on beside it");
        }
        drop(guard);
    });
    turn
}

fn row_of(e: &Entry) -> OutboxRow {
    OutboxRow {
        image_id: e.job.image_id,
        ticket: e.ticket.clone(),
    }
}

#[cfg(test)]
#[path = "memory_tests.rs"]
mod tests;

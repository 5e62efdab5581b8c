//! The relay from the outbox table to the queue, and the render scheduler:
//! the outbox holds every photo waiting for its renders, and the relay
//! hands the queue only as many jobs as its workers can start
//! (`JobQueue::slots`), choosing them fairly between owners: the owner
//! with the fewest jobs handed out goes first, oldest request first, and
//! no owner holds more than every slot but one. One owner's backlog thus
//! never delays another owner's first render by more than one job per
//! slot, and usually not at all.
//!
//! A row handed out stays, marked sent, until the worker answers its job
//! for good and removes it (`Delivery::ticket`), so the rows sent are the
//! jobs in flight, counted per owner. The in-process queue dies with its
//! process: the relay's first pass after a start makes every sent row
//! waiting again. A queue that outlives the process (NATS) keeps them; a
//! row still sent while the queue holds nothing at all was lost with its
//! message (a stream purged, say) and waits again under a new ticket.
//!
//! Each API process runs a relay; two may hand out the same row, which the
//! queue drops by its dedup id (and a render job run twice produces
//! nothing twice).

use super::{JobQueue, RenderJob};
use crate::db::{DynRepo, OutboxRow};
use crate::{time, Result};
use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{watch, Notify};
use uuid::Uuid;

/// Rows looked at per pass.
const HEADS: i64 = 1000;
/// Rows written by another replica, or left by a failed send, are looked
/// for at least this often.
const POLL: Duration = Duration::from_secs(2);
/// How often a queue that cannot tell when a slot frees (NATS) is asked
/// while rows wait for one.
pub const BUSY_POLL: Duration = Duration::from_millis(250);
/// A row sent this long ago while the queue holds nothing was lost.
const LOST_AFTER: Duration = Duration::from_secs(120);
/// A row sent this long ago was lost whatever the queue holds: a job runs
/// for at most its CPU budget, and its retries wait at most a minute each.
const LOST_FOR_SURE: Duration = Duration::from_secs(3600);
/// How often a busy queue's rows are swept for those lost for sure.
const SWEEP_EVERY: Duration = Duration::from_secs(300);
const MAX_BACKOFF: Duration = Duration::from_secs(10);

#[derive(Clone)]
pub struct Relay {
    repo: DynRepo,
    queue: Arc<dyn JobQueue>,
    wake: Arc<Notify>,
    last_sweep: Arc<std::sync::Mutex<Option<std::time::Instant>>>,
}

/// What a pass did: rows handed out, and whether rows still wait.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handed {
    pub sent: usize,
    pub waiting: bool,
}

impl Relay {
    pub fn new(repo: DynRepo, queue: Arc<dyn JobQueue>) -> Relay {
        Relay {
            repo,
            queue,
            wake: Arc::new(Notify::new()),
            last_sweep: Arc::default(),
        }
    }

    /// Call after committing outbox rows, so they go out now, not at the next poll.
    pub fn waker(&self) -> Arc<Notify> {
        self.wake.clone()
    }

    /// Hands out work until `shutdown` turns true. A queue or database that
    /// is down is retried with a growing pause; nothing is dropped meanwhile.
    pub async fn run(self, mut shutdown: watch::Receiver<bool>) {
        let mut backoff = Duration::from_millis(250);
        let mut resend = self.queue.dies_with_process();
        let freed = self.queue.slot_freed();
        loop {
            let pause = match self.pass(&mut resend).await {
                Ok(handed) => {
                    backoff = Duration::from_millis(250);
                    if handed.waiting && freed.is_none() {
                        BUSY_POLL
                    } else {
                        POLL
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, retry_in_ms = backoff.as_millis() as u64,
                        "render outbox: could not hand work to the queue");
                    let pause = backoff;
                    backoff = (backoff * 2).min(MAX_BACKOFF);
                    pause
                }
            };
            let slot_freed = async {
                match &freed {
                    Some(freed) => freed.notified().await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                _ = self.wake.notified() => {}
                _ = slot_freed => {}
                _ = tokio::time::sleep(pause) => {}
                _ = shutdown.wait_for(|stop| *stop) => return,
            }
        }
    }

    /// Marks waiting again, once, the rows the last process had sent to
    /// its in-process queue; then hands out what the slots allow.
    async fn pass(&self, resend: &mut bool) -> Result<Handed> {
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
        self.hand_out().await
    }

    /// Hands the queue as many waiting rows as its slots allow, fairly
    /// between owners.
    pub async fn hand_out(&self) -> Result<Handed> {
        let mut slots = self.queue.slots().await?;
        if slots.busy + slots.queued == 0 {
            self.find_lost(LOST_AFTER).await?;
        } else if self.sweep_due() {
            // A queue never idle (one owner's long backlog) still gives
            // back what it lost, later.
            self.find_lost(LOST_FOR_SURE).await?;
        }
        if slots.total() == 0 {
            // No worker is there yet (or they scaled to zero): one job
            // waits in the queue, which is what an autoscaler watches.
            slots.idle = 1;
        }
        if slots.room() == 0 {
            return Ok(Handed {
                sent: 0,
                waiting: true,
            });
        }
        let per_owner = slots.per_owner();
        let heads = self
            .repo
            .outbox_heads(per_owner.min(slots.room()) as i64, per_owner as i64, HEADS)
            .await?;
        if heads.is_empty() {
            return Ok(Handed {
                sent: 0,
                waiting: false,
            });
        }
        let in_flight = self.repo.outbox_in_flight().await?;
        let mut turns = Turns::new(heads, in_flight.into_iter().collect(), per_owner);
        let mut sent = 0;
        for _ in 0..slots.room() {
            let Some(row) = turns.next() else { break };
            self.queue
                .publish(
                    RenderJob {
                        image_id: row.image_id,
                    },
                    &row.ticket,
                )
                .await?;
            self.repo.outbox_sent(&row, time::now_ms()).await?;
            sent += 1;
        }
        Ok(Handed {
            sent,
            waiting: turns.waiting(),
        })
    }

    /// Whether `SWEEP_EVERY` has passed since the last sweep of a busy queue.
    fn sweep_due(&self) -> bool {
        let Ok(mut last) = self.last_sweep.lock() else {
            return false;
        };
        let due = last.is_none_or(|at| at.elapsed() >= SWEEP_EVERY);
        if due {
            *last = Some(std::time::Instant::now());
        }
        due
    }

    async fn find_lost(&self, after: Duration) -> Result<()> {
        let before = time::now_ms() - after.as_millis() as i64;
        let lost = self.repo.outbox_lost(before).await?;
        if lost > 0 {
            tracing::warn!(
                jobs = lost,
                "render outbox: jobs sent to a queue that no longer holds them wait again"
            );
        }
        Ok(())
    }
}

/// The fair order of one pass: each owner's waiting rows, oldest first,
/// and the jobs each has in flight.
struct Turns {
    /// Owners in the order of their oldest waiting row.
    owners: Vec<(Uuid, VecDeque<OutboxRow>)>,
    in_flight: HashMap<Uuid, i64>,
    per_owner: u64,
}

impl Turns {
    fn new(heads: Vec<(OutboxRow, Uuid)>, in_flight: HashMap<Uuid, i64>, per_owner: u64) -> Turns {
        let mut owners: Vec<(Uuid, VecDeque<OutboxRow>)> = Vec::new();
        for (row, owner) in heads {
            match owners.iter_mut().find(|(o, _)| *o == owner) {
                Some((_, rows)) => rows.push_back(row),
                None => owners.push((owner, VecDeque::from([row]))),
            }
        }
        Turns {
            owners,
            in_flight,
            per_owner,
        }
    }

    /// The next row: of the owner with the fewest jobs in flight and room
    /// for one more, the oldest waiting first among equals.
    fn next(&mut self) -> Option<OutboxRow> {
        let in_flight = |o: &Uuid| self.in_flight.get(o).copied().unwrap_or(0).max(0) as u64;
        let (at, _) = self
            .owners
            .iter()
            .enumerate()
            .filter(|(_, (o, rows))| !rows.is_empty() && in_flight(o) < self.per_owner)
            .min_by_key(|(i, (o, _))| (in_flight(o), *i))?;
        let (owner, rows) = &mut self.owners[at];
        *self.in_flight.entry(*owner).or_default() += 1;
        rows.pop_front()
    }

    fn waiting(&self) -> bool {
        self.owners.iter().any(|(_, rows)| !rows.is_empty())
    }
}

/// The slots a queue reports, for tests of the order alone.
#[cfg(test)]
pub(crate) fn turns_for_tests(
    heads: Vec<(OutboxRow, Uuid)>,
    in_flight: HashMap<Uuid, i64>,
    slots: super::Slots,
) -> Vec<OutboxRow> {
    let mut turns = Turns::new(heads, in_flight, slots.per_owner());
    (0..slots.room()).map_while(|_| turns.next()).collect()
}

#[cfg(test)]
#[path = "outbox_tests.rs"]
mod tests;

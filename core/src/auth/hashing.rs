//! The threads Argon2 runs on: a fixed set, one per core, fed by a bounded
//! queue. Bounding concurrent hashes is not enough on its own: each hash
//! takes 19 MiB from the allocator of the thread it runs on, and the heap
//! keeps what renders free for the next render (`limits::heap`: no private
//! maps, pages kept until renders go idle), so hash buffers kept that way
//! piled up: 300 MiB after 48 logins on two threads. On the blocking pool a
//! flood would also spread hashes over dozens of threads and every arena.
//! Here at most one hash per core runs, on the same few threads, and each
//! hash's freed pages go back to the system as soon as it ends.
//!
//! The queue is bounded because a hash waited for is a login delayed: an
//! unbounded one let a flood of wrong passwords keep an admin's login
//! waiting for 25 s after the flood. Past the bound a call is refused at
//! once (4002), and work whose caller has gone (hung up, or past the
//! per-call time cap) is dropped unhashed. Addresses that have signed in
//! to the account before have a lane of their own, taken first, so a flood
//! of strangers cannot fill the way of someone who knows their password.
//! Within a lane accounts take turns and each may have only a few checks
//! queued, so the guesses one account's budgets let through (a sprayed
//! account, a stolen session re-authenticating) neither fill the lane nor
//! go before another account's check.

use crate::limits::login::Admitted;
use crate::metrics::METRICS;
use crate::{Error, Result};
use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex, OnceLock};

/// Queued jobs per hashing thread, per lane: at ~40 ms a hash, a full
/// queue is waited out in about a third of a second.
const QUEUED_PER_THREAD: usize = 8;
/// Queued jobs per account, per lane.
const QUEUED_PER_ACCOUNT: usize = 2;

/// Whose password a hash checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lane {
    /// An address that has signed in to the account before, or an
    /// admin's or a just re-authenticated caller's new password.
    Known,
    /// Anyone else: a first login from an address, a guess.
    Stranger,
}

impl Lane {
    /// The lane of a password check the login limits admitted.
    pub fn of(admitted: Admitted) -> Lane {
        if admitted.known {
            Lane::Known
        } else {
            Lane::Stranger
        }
    }
}

/// Where a hash queues: its lane, and the account (email) it takes turns as.
#[derive(Debug, Clone, Copy)]
pub struct Whose<'a> {
    pub lane: Lane,
    pub account: &'a str,
}

/// A queued hash; `false` when its caller was gone and nothing ran.
type Job = Box<dyn FnOnce() -> bool + Send>;

/// One lane: each account's jobs in order, the accounts taking turns.
#[derive(Default)]
struct Turns {
    order: VecDeque<String>,
    jobs: HashMap<String, VecDeque<Job>>,
    len: usize,
}

impl Turns {
    fn full(&self, bound: usize, account: &str) -> bool {
        self.len >= bound
            || self
                .jobs
                .get(account)
                .is_some_and(|jobs| jobs.len() >= QUEUED_PER_ACCOUNT)
    }

    fn push(&mut self, account: &str, job: Job) {
        let jobs = self.jobs.entry(account.to_owned()).or_default();
        if jobs.is_empty() {
            self.order.push_back(account.to_owned());
        }
        jobs.push_back(job);
        self.len += 1;
    }

    fn pop(&mut self) -> Option<Job> {
        let account = self.order.pop_front()?;
        let jobs = self.jobs.get_mut(&account)?;
        let job = jobs.pop_front()?;
        if jobs.is_empty() {
            self.jobs.remove(&account);
        } else {
            self.order.push_back(account);
        }
        self.len -= 1;
        Some(job)
    }
}

#[derive(Default)]
struct Lanes {
    known: Turns,
    stranger: Turns,
}

impl Lanes {
    fn of(&mut self, lane: Lane) -> &mut Turns {
        match lane {
            Lane::Known => &mut self.known,
            Lane::Stranger => &mut self.stranger,
        }
    }
}

struct Queue {
    lanes: Mutex<Lanes>,
    ready: Condvar,
    bound: usize,
}

fn refused() -> Error {
    METRICS.password_hash("refused");
    Error::RateLimited { retry_after_s: 1 }
}

impl Queue {
    fn next(&self) -> Job {
        let mut lanes = self.lanes.lock().expect("hashing queue");
        loop {
            if let Some(job) = lanes.known.pop().or_else(|| lanes.stranger.pop()) {
                return job;
            }
            lanes = self.ready.wait(lanes).expect("hashing queue");
        }
    }

    fn push(&self, whose: Whose<'_>, job: Job) -> Result<()> {
        let mut lanes = self.lanes.lock().expect("hashing queue");
        let turns = lanes.of(whose.lane);
        if turns.full(self.bound, whose.account) {
            return Err(refused());
        }
        turns.push(whose.account, job);
        self.ready.notify_one();
        Ok(())
    }

    fn has_room(&self, whose: Whose<'_>) -> Result<()> {
        let mut lanes = self.lanes.lock().expect("hashing queue");
        if lanes.of(whose.lane).full(self.bound, whose.account) {
            return Err(refused());
        }
        Ok(())
    }
}

fn queue() -> &'static Queue {
    static QUEUE: OnceLock<&'static Queue> = OnceLock::new();
    QUEUE.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let queue: &'static Queue = Box::leak(Box::new(Queue {
            lanes: Mutex::default(),
            ready: Condvar::new(),
            bound: threads * QUEUED_PER_THREAD,
        }));
        for n in 0..threads {
            std::thread::Builder::new()
                .name(format!("argon2-{n}"))
                .spawn(move || loop {
                    let ran = (queue.next())();
                    METRICS.password_hash(if ran { "done" } else { "abandoned" });
                    if ran {
                        crate::limits::heap::release_freed_pages();
                    }
                })
                .expect("spawn a hashing thread");
        }
        queue
    })
}

/// 4002 at once when the queue of `whose` is full (its lane, or its
/// account's share of it). A password check asks before
/// it spends anything else (its database reads and the throttle's
/// writes), so a flood past the bound costs next to nothing; `run` still
/// holds the bound.
pub fn has_room(whose: Whose<'_>) -> Result<()> {
    queue().has_room(whose)
}

/// Runs `f` on a hashing thread at its turn; 4002 when its queue is full.
pub async fn run<T: Send + 'static>(
    whose: Whose<'_>,
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        if tx.is_closed() {
            return false;
        }
        let _ = tx.send(f());
        true
    });
    queue().push(whose, job)?;
    rx.await
        .map_err(|_| Error::Internal(anyhow::anyhow!("a hashing job panicked")))
}

#[cfg(test)]
mod tests {
    use super::{Job, Turns};
    use std::sync::{Arc, Mutex};

    #[test]
    fn accounts_take_turns_each_in_order() {
        let ran = Arc::new(Mutex::new(Vec::new()));
        let job = |name: &'static str| -> Job {
            let ran = ran.clone();
            Box::new(move || {
                ran.lock().unwrap().push(name);
                true
            })
        };
        let mut turns = Turns::default();
        for name in ["a1", "a2", "a3"] {
            turns.push("a", job(name));
        }
        turns.push("b", job("b1"));
        turns.push("c", job("c1"));
        turns.push("b", job("b2"));
        assert_eq!(turns.len, 6);
        assert!(turns.full(100, "a") && turns.full(100, "b"));
        assert!(!turns.full(100, "c") && !turns.full(100, "d"));
        assert!(turns.full(6, "d"));
        while let Some(job) = turns.pop() {
            job();
        }
        let order = ran.lock().unwrap().clone();
        assert_eq!(order, ["a1", "b1", "c1", "a2", "b2", "a3"]);
        assert_eq!(turns.len, 0);
        assert!(turns.jobs.is_empty() && turns.order.is_empty());
    }
}

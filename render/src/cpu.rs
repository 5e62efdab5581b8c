//! A render job's CPU-time budget (`LIGHTBOX_RENDER_CPU_SECONDS`): the
//! CPU time of the job's own threads (its decode, the cascade's resizes,
//! encodes and look), read from Linux's per-thread counters, and checked
//! between steps: before each resize, and once the encodes are in. A step
//! already running finishes (each is bounded by the canvas caps), so a
//! job over budget stops at its next step and ends `failed` with the
//! reason. Elsewhere than Linux nothing is counted.

use crate::pixels::RenderError;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

/// Linux reports thread CPU time in ticks of 1/100 s (USER_HZ, fixed at
/// 100 on every architecture Lightbox runs on).
const TICK: Duration = Duration::from_millis(10);

/// One job's CPU clock and limit; shared by the job's threads.
pub struct CpuBudget {
    limit: Option<Duration>,
    /// Ticks of the job's threads that have ended.
    ended: AtomicU64,
    /// The job's running threads: their counters and their ticks at entry.
    live: Mutex<Vec<(u64, PathBuf, u64)>>,
    next: AtomicU64,
}

impl CpuBudget {
    pub fn new(limit: Duration) -> CpuBudget {
        CpuBudget {
            limit: Some(limit),
            ..CpuBudget::unlimited()
        }
    }

    /// A clock with no limit (tools, benchmarks).
    pub fn unlimited() -> CpuBudget {
        CpuBudget {
            limit: None,
            ended: AtomicU64::new(0),
            live: Mutex::new(Vec::new()),
            next: AtomicU64::new(0),
        }
    }

    /// Counts the calling thread's CPU time against the job until the
    /// returned guard is dropped (on the same thread).
    pub fn enter(&self) -> Metered<'_> {
        let key = self.next.fetch_add(1, Ordering::Relaxed);
        let counter = this_thread();
        if let Some(path) = &counter {
            let start = ticks(path).unwrap_or(0);
            if let Ok(mut live) = self.live.lock() {
                live.push((key, path.clone(), start));
            }
        }
        Metered { budget: self, key }
    }

    /// CPU time spent so far by the job's threads.
    pub fn spent(&self) -> Duration {
        let mut total = self.ended.load(Ordering::Relaxed);
        if let Ok(live) = self.live.lock() {
            for (_, path, start) in live.iter() {
                total += ticks(path).unwrap_or(*start).saturating_sub(*start);
            }
        }
        TICK * total.min(u32::MAX as u64) as u32
    }

    /// An error once the job has spent more than its limit.
    pub fn check(&self) -> Result<(), RenderError> {
        match self.limit {
            Some(limit) if self.spent() > limit => Err(RenderError::OverCpu(format!(
                "the renders of this photo took more than the {} s of CPU time a render job may use",
                limit.as_secs()
            ))),
            _ => Ok(()),
        }
    }
}

/// A thread counted against a job; its time moves to the job's total when
/// it is dropped.
pub struct Metered<'a> {
    budget: &'a CpuBudget,
    key: u64,
}

impl Drop for Metered<'_> {
    fn drop(&mut self) {
        let Ok(mut live) = self.budget.live.lock() else {
            return;
        };
        if let Some(at) = live.iter().position(|(k, _, _)| *k == self.key) {
            let (_, path, start) = live.swap_remove(at);
            let spent = ticks(&path).unwrap_or(start).saturating_sub(start);
            self.budget.ended.fetch_add(spent, Ordering::Relaxed);
        }
    }
}

/// The calling thread's counter, `/proc/self/task/TID/stat`.
fn this_thread() -> Option<PathBuf> {
    let link = std::fs::read_link("/proc/thread-self").ok()?;
    let tid = link.file_name()?.to_str()?.to_owned();
    Some(PathBuf::from(format!("/proc/self/task/{tid}/stat")))
}

/// User plus system ticks from a thread's stat line: fields 14 and 15,
/// counted after the command name (which may hold spaces) closes.
fn ticks(path: &PathBuf) -> Option<u64> {
    let stat = std::fs::read_to_string(path).ok()?;
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Spins until this thread has used `cpu` of CPU time (not wall time:
    /// other tests share the cores).
    fn spin(cpu: Duration) {
        let counter = this_thread().expect("a thread counter");
        let ticks_of = || ticks(&counter).expect("ticks");
        let until = ticks_of() + (cpu.as_millis() / TICK.as_millis()) as u64;
        let mut x = 0u64;
        while ticks_of() < until {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        }
    }

    #[test]
    fn counts_the_threads_that_entered_and_only_them() {
        if !cfg!(target_os = "linux") {
            return;
        }
        let budget = CpuBudget::new(Duration::from_millis(150));
        std::thread::scope(|s| {
            for _ in 0..2 {
                s.spawn(|| {
                    let _m = budget.enter();
                    spin(Duration::from_millis(120));
                });
            }
            // Not entered: not counted.
            s.spawn(|| spin(Duration::from_millis(200)));
        });
        let spent = budget.spent();
        assert!(
            spent >= Duration::from_millis(240) && spent < Duration::from_millis(400),
            "{spent:?}"
        );
        let err = budget.check().unwrap_err().to_string();
        assert!(err.contains("CPU time"), "{err}");
        assert!(CpuBudget::unlimited().check().is_ok());
    }
}

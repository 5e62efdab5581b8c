//! Connections served on one single-threaded runtime per core, the way
//! nginx runs one worker process per core: a connection's socket, its
//! requests and their handlers stay on one thread. On the shared
//! multi-threaded runtime each readiness event could wake another worker
//! to steal the task, and those wake-ups were the largest cost of serving
//! a small render (`bench/serve.sh`). Background work (renders, the
//! outbox relay, the heap's release) stays on the main runtime; a handler
//! that waits on it is woken across threads as before.

use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};
use tokio::runtime::{Builder, Handle};

/// The serving runtimes, handed connections in turn.
pub struct Cores {
    handles: Vec<Handle>,
    next: AtomicUsize,
}

impl Cores {
    /// One runtime per core the process may use (its cgroup's quota
    /// counts), each on its own thread for the life of the process: what
    /// a connection spawned stays valid until the process ends, as on the
    /// main runtime.
    pub fn start() -> io::Result<Self> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        let handles = (0..cores)
            .map(|i| {
                let runtime = Builder::new_current_thread().enable_all().build()?;
                let handle = runtime.handle().clone();
                std::thread::Builder::new()
                    .name(format!("serve-{i}"))
                    .spawn(move || runtime.block_on(std::future::pending::<()>()))?;
                Ok(handle)
            })
            .collect::<io::Result<_>>()?;
        Ok(Self {
            handles,
            next: AtomicUsize::new(0),
        })
    }

    /// The runtime the next connection goes to.
    pub fn next(&self) -> &Handle {
        let i = self.next.fetch_add(1, Ordering::Relaxed);
        &self.handles[i % self.handles.len()]
    }
}

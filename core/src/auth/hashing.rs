//! The threads Argon2 runs on: a fixed set, one per core, fed by a queue.
//! Bounding concurrent hashes is not enough on its own: each hash takes
//! 19 MiB from the allocator of the thread it runs on, and glibc keeps a
//! freed chunk that large in that thread's arena. On the blocking pool a
//! flood spreads hashes over dozens of threads and so over every arena
//! (16 on two cores), 600 MiB held after 100 logins. Here at most one hash
//! per core runs, on the same few threads, and glibc's mmap threshold is
//! fixed at 4 MiB so a hash's buffer is mapped for it and unmapped after
//! (glibc otherwise raises the threshold past 19 MiB after the first free,
//! and arenas keep the buffers: 325 MiB after 48 logins on two threads).

use crate::{Error, Result};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

fn queue() -> &'static mpsc::Sender<Job> {
    static QUEUE: OnceLock<mpsc::Sender<Job>> = OnceLock::new();
    QUEUE.get_or_init(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only sets an allocator parameter; it is
        // thread-safe in glibc and takes no pointers.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
        }
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        for n in 0..threads {
            let rx = rx.clone();
            std::thread::Builder::new()
                .name(format!("argon2-{n}"))
                .spawn(move || loop {
                    let job = rx.lock().expect("hashing queue").recv();
                    match job {
                        Ok(job) => job(),
                        Err(_) => return,
                    }
                })
                .expect("spawn a hashing thread");
        }
        tx
    })
}

/// Runs `f` on a hashing thread once one is free.
pub async fn run<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = tx.send(f());
    });
    queue()
        .send(job)
        .map_err(|_| Error::Internal(anyhow::anyhow!("hashing threads gone")))?;
    rx.await
        .map_err(|_| Error::Internal(anyhow::anyhow!("a hashing job panicked")))
}

//! The threads Argon2 runs on: a fixed set, one per core, fed by a queue.
//! Bounding concurrent hashes is not enough on its own: each hash takes
//! 19 MiB from the allocator of the thread it runs on, and the heap keeps
//! what renders free for the next render (`limits::heap`: no private maps,
//! pages kept until renders go idle), so hash buffers kept that way piled
//! up: 300 MiB after 48 logins on two threads. On the blocking pool a flood
//! would also spread hashes over dozens of threads and every arena. Here at
//! most one hash per core runs, on the same few threads, and each hash's
//! freed pages go back to the system as soon as it ends.

use crate::{Error, Result};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

fn queue() -> &'static mpsc::Sender<Job> {
    static QUEUE: OnceLock<mpsc::Sender<Job>> = OnceLock::new();
    QUEUE.get_or_init(|| {
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
                        Ok(job) => {
                            job();
                            crate::limits::heap::release_freed_pages();
                        }
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

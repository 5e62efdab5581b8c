//! Render workers: take jobs from the queue and bring each image's renders
//! up to date. Embedded mode runs them inside `lightbox-api`; cluster mode
//! will run them in `lightbox-worker` processes over NATS.

use lightbox_core::queue::JobQueue;
use lightbox_core::renders::Renderer;
use std::sync::Arc;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Runs `concurrency` workers until the queue closes or `shutdown` turns
/// true; a job already started is finished first.
pub async fn run(
    renderer: Renderer,
    queue: Arc<dyn JobQueue>,
    concurrency: usize,
    shutdown: watch::Receiver<bool>,
) {
    let mut workers = JoinSet::new();
    for n in 0..concurrency.max(1) {
        let (renderer, queue, mut shutdown) = (renderer.clone(), queue.clone(), shutdown.clone());
        workers.spawn(async move {
            loop {
                let job = tokio::select! {
                    job = queue.next() => job,
                    _ = shutdown.wait_for(|stop| *stop) => None,
                };
                let Some(job) = job else { break };
                let started = std::time::Instant::now();
                match renderer.process(job.image_id).await {
                    Ok(()) => tracing::info!(worker = n, image_id = %job.image_id,
                        ms = started.elapsed().as_millis() as u64, "renders up to date"),
                    Err(e) => tracing::error!(worker = n, image_id = %job.image_id,
                        error = format!("{e:#}"), "render job failed"),
                }
            }
        });
    }
    while workers.join_next().await.is_some() {}
}

/// One worker per core: rendering is CPU-bound.
pub fn default_concurrency() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

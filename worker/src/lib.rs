//! Render workers: take jobs from the queue and bring each image's renders
//! up to date. Embedded mode runs them inside `lightbox-api` over the
//! in-process queue; cluster mode runs them in `lightbox-worker` processes
//! over NATS JetStream. The loop is the same: it never learns which queue.

pub mod http;
pub mod metrics_listener;

use futures::StreamExt;
use lightbox_core::metrics::METRICS;
use lightbox_core::queue::{retry_delay, Delivery, JobQueue};
use lightbox_core::render_job::Renderer;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// After SIGTERM a job in progress has this long to finish before it is
/// handed back to the queue (Kubernetes waits 30 s before SIGKILL).
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(20);

/// What the owner reads of a photo whose render job failed on every
/// attempt: the causes (storage, database, no thread) are the service's,
/// not the file's, and are in its log.
const GAVE_UP: &str = "the service could not render this photo after several attempts";

/// The same, when every delivery of the job went unanswered.
const LOST: &str = "every attempt to render this photo was lost with its worker";

/// The jobs a process with `concurrency` workers runs at once: one more
/// than its cores, since the relay gives no owner every slot (one is kept
/// for another owner's first job), so one owner's backlog still keeps
/// `concurrency` cores busy. Renders run niced below requests, and the
/// render memory budget bounds them whatever their number.
pub fn slots(concurrency: usize) -> usize {
    concurrency.max(1) + 1
}

/// Runs `slots(concurrency)` workers until `shutdown` turns true. A job
/// already started is finished, or handed back if it outlasts
/// `SHUTDOWN_GRACE`.
pub async fn run(
    renderer: Renderer,
    queue: Arc<dyn JobQueue>,
    concurrency: usize,
    shutdown: watch::Receiver<bool>,
) {
    let mut workers = JoinSet::new();
    workers.spawn(mark_exhausted(
        renderer.clone(),
        queue.clone(),
        shutdown.clone(),
    ));
    for n in 0..slots(concurrency) {
        workers.spawn(work(n, renderer.clone(), queue.clone(), shutdown.clone()));
    }
    while workers.join_next().await.is_some() {}
}

async fn work(
    n: usize,
    renderer: Renderer,
    queue: Arc<dyn JobQueue>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut backoff = Duration::from_millis(250);
    while !*shutdown.borrow() {
        let next = tokio::select! {
            next = queue.next() => next,
            _ = shutdown.wait_for(|stop| *stop) => break,
        };
        match next {
            Ok(Some(delivery)) => {
                backoff = Duration::from_millis(250);
                let interval = queue.progress_interval();
                handle(n, &renderer, delivery, interval, shutdown.clone()).await;
            }
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(worker = n, error = %e, "render queue unavailable");
                tokio::select! {
                    _ = tokio::time::sleep(backoff) => {}
                    _ = shutdown.wait_for(|stop| *stop) => break,
                }
                backoff = (backoff * 2).min(Duration::from_secs(10));
            }
        }
    }
}

/// Runs one delivery and answers it: ack when done, hand back for a later
/// attempt on a passing failure, mark the image failed on the last one.
async fn handle(
    n: usize,
    renderer: &Renderer,
    d: Delivery,
    interval: Duration,
    mut shutdown: watch::Receiver<bool>,
) {
    let image_id = d.job.image_id;
    if d.attempt > 1 {
        METRICS.redeliveries.inc();
    }
    tracing::info!(worker = n, %image_id, attempt = d.attempt, "render job started");
    let started = std::time::Instant::now();
    let outcome = {
        let heartbeat = async {
            loop {
                tokio::time::sleep(interval).await;
                if let Err(e) = d.settle.in_progress().await {
                    tracing::warn!(%image_id, error = %e, "in-progress ack failed");
                }
            }
        };
        let deadline = async {
            let _ = shutdown.wait_for(|stop| *stop).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        };
        tokio::select! {
            result = renderer.process(image_id) => Some(result),
            _ = heartbeat => None,
            _ = deadline => None,
        }
    };
    let ms = started.elapsed().as_millis() as u64;
    let answer = match outcome {
        None => {
            tracing::info!(worker = n, %image_id, "handing the job back at shutdown");
            METRICS.render_job("handed_back");
            d.settle.hand_back().await
        }
        Some(Ok(())) => {
            tracing::info!(worker = n, %image_id, ms, attempt = d.attempt, "renders up to date");
            METRICS.render_job("done");
            answered(renderer, &d).await
        }
        Some(Err(e)) if d.is_last() => {
            tracing::error!(worker = n, %image_id, attempt = d.attempt,
                error = format!("{e:#}"), "render job failed for good");
            METRICS.render_job("failed");
            if let Err(e) = renderer.mark_failed(image_id, GAVE_UP).await {
                tracing::error!(%image_id, error = %e, "could not mark the image failed");
            }
            answered(renderer, &d).await
        }
        Some(Err(e)) => {
            tracing::warn!(worker = n, %image_id, attempt = d.attempt,
                error = format!("{e:#}"), "render job failed; will retry");
            METRICS.render_job("retried");
            d.settle.retry(retry_delay(d.attempt + 1)).await
        }
    };
    if let Err(e) = answer {
        // Unanswered, NATS redelivers it after its ack wait, and the
        // in-process queue's outbox row stays for the next start: no loss.
        tracing::warn!(worker = n, %image_id, error = %e, "could not answer the queue");
    }
}

/// The job is answered for good: its outbox row goes first (the relay
/// counts it in flight until then), then the queue is told. A row renewed
/// since has another ticket and stays, to be handed out again.
async fn answered(renderer: &Renderer, d: &Delivery) -> lightbox_core::Result<()> {
    if let Some(ticket) = &d.ticket {
        if let Err(e) = renderer.finished(d.job.image_id, ticket).await {
            // Acked, the row would stay sent and hold one of its owner's
            // slots; the job comes again (it produces nothing twice).
            tracing::warn!(image_id = %d.job.image_id, error = %e, "could not remove a done job's row; it runs again");
            return d.settle.retry(retry_delay(d.attempt + 1)).await;
        }
    }
    d.settle.ack().await
}

/// Marks failed the images whose every delivery died with its worker.
async fn mark_exhausted(
    renderer: Renderer,
    queue: Arc<dyn JobQueue>,
    mut shutdown: watch::Receiver<bool>,
) {
    let mut jobs = loop {
        match queue.exhausted().await {
            Ok(jobs) => break jobs,
            Err(e) => {
                tracing::warn!(error = %e, "cannot watch for exhausted render jobs yet");
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(5)) => {}
                    _ = shutdown.wait_for(|stop| *stop) => return,
                }
            }
        }
    };
    loop {
        let job = tokio::select! {
            job = jobs.next() => job,
            _ = shutdown.wait_for(|stop| *stop) => return,
        };
        let Some((job, ticket)) = job else { return };
        tracing::error!(image_id = %job.image_id, "every delivery of a render job went unanswered");
        METRICS.render_job("failed");
        if let Err(e) = renderer.mark_failed(job.image_id, LOST).await {
            tracing::error!(image_id = %job.image_id, error = %e, "could not mark the image failed");
        }
        if let Some(ticket) = ticket {
            if let Err(e) = renderer.finished(job.image_id, &ticket).await {
                tracing::warn!(image_id = %job.image_id, error = %e, "could not remove a lost job's row");
            }
        }
    }
}

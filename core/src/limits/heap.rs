//! How renders' memory goes back to the system. A render allocates and
//! frees tens of megabytes per image (the decode, the decoders' planes,
//! the resized frames, libwebp's buffers). By default glibc maps every
//! allocation over its mmap threshold (32 MiB at most) afresh and unmaps
//! it on free, trims its heaps' tops eagerly, and keeps up to eight arenas
//! per core, so each image faulted in and zeroed its whole working set
//! again: 500,000 page faults for the 14 images of `bench/render.sh`, a
//! tenth of the service's CPU. While renders run, the heap now keeps the
//! pages they free; once renders have been idle for a moment, every free
//! page is handed back, so an idle process is as small as before; the same
//! after a burst of requests with no render at all.
//!
//! A general-purpose allocator in glibc's place was measured against this
//! (mimalloc, for Rust's allocations alone and overriding malloc for the
//! codecs too): more render CPU and a higher peak (bench/RESULTS.md).

use super::memory::RenderBudget;
use std::time::Duration;
use tokio::sync::watch;

/// How long no render may have started or run before free pages go back.
pub const IDLE_BEFORE_RELEASE: Duration = Duration::from_secs(2);

/// Free pages a heap keeps on its top while renders run: about one
/// resized frame and one encoder's buffers. More kept no faster renders
/// through `bench/render.sh` and a higher peak.
pub const KEPT_ON_TOP: usize = 64 << 20;

/// Sets the heap up to keep the pages renders free for the next render:
/// one arena per core instead of eight (each arena keeps its own free
/// pages), no private maps, and `KEPT_ON_TOP` kept free on each heap. Call
/// first thing in `main`, before any thread exists: later threads share
/// the arenas made by then.
pub fn keep_freed_pages() {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    crate::sys::tune_heap(cores, KEPT_ON_TOP);
}

/// Hands every whole free page of every arena back to the system.
pub fn release_freed_pages() {
    crate::sys::trim_heap();
}

/// Runs until `shutdown`: every `IDLE_BEFORE_RELEASE` in which no render
/// has been admitted or run, hands the free pages back. Every look, not
/// only after renders or growth: what a burst of requests (downloads,
/// zips, uploads) frees stays resident without changing the process's
/// RSS, and chunks a release left in the bins count as free in the
/// allocator's figures whether resident or not, so neither tells reliably
/// that there is something to hand back; a release with nothing to give
/// back costs a walk of the bins. Any process that serves or renders runs
/// it.
pub async fn release_when_idle(budget: RenderBudget, mut shutdown: watch::Receiver<bool>) {
    let mut seen = budget.admitted();
    loop {
        tokio::select! {
            _ = tokio::time::sleep(IDLE_BEFORE_RELEASE) => {}
            _ = shutdown.wait_for(|stop| *stop) => return,
        }
        let now = budget.admitted();
        if now == seen && budget.idle() {
            let _ = tokio::task::spawn_blocking(release_freed_pages).await;
        }
        seen = now;
    }
}

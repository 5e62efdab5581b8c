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

/// How far the process's anonymous memory may move, since the heap last
/// handed pages back, before it hands them back again.
pub const MOVE_BEFORE_RELEASE: u64 = 16 << 20;

/// Runs until `shutdown`: every `IDLE_BEFORE_RELEASE`, when no render has
/// been admitted or run since the last look, and either renders ran since
/// the last release or the process's anonymous memory has moved by
/// `MOVE_BEFORE_RELEASE` since, hands the free pages back. Moved either
/// way: a burst of requests (downloads, zips, uploads) may be caught by a
/// release while it is still holding its memory; what it frees after
/// that stays resident (up to `KEPT_ON_TOP` of it on the heap's top) with
/// the process smaller than at that release. The allocator's count of
/// free bytes cannot tell: chunks a release left in the bins count as
/// free whether their pages are resident or not. Any process that serves
/// or renders runs it.
pub async fn release_when_idle(budget: RenderBudget, mut shutdown: watch::Receiver<bool>) {
    let mut released_at = budget.admitted();
    let mut seen = released_at;
    let mut rss_after_release = anon_rss().unwrap_or(0);
    loop {
        tokio::select! {
            _ = tokio::time::sleep(IDLE_BEFORE_RELEASE) => {}
            _ = shutdown.wait_for(|stop| *stop) => return,
        }
        let now = budget.admitted();
        let moved = anon_rss().is_some_and(|r| r.abs_diff(rss_after_release) > MOVE_BEFORE_RELEASE);
        if now == seen && budget.idle() && (now != released_at || moved) {
            let _ = tokio::task::spawn_blocking(release_freed_pages).await;
            released_at = now;
            rss_after_release = anon_rss().unwrap_or(0);
        }
        seen = now;
    }
}

/// The process's resident anonymous memory (heap and stacks), from
/// `/proc/self/status`; `None` where there is no such file.
pub fn anon_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("RssAnon:"))?;
    let kib: u64 = line.trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib << 10)
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #[test]
    fn the_process_reads_its_own_anonymous_memory() {
        let before = super::anon_rss().expect("RssAnon in /proc/self/status");
        let block = std::hint::black_box(vec![1u8; 64 << 20]);
        let after = super::anon_rss().expect("RssAnon");
        assert!(after >= before + (48 << 20), "{before} -> {after}");
        drop(block);
    }
}

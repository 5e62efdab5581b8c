//! Renders run below request handling. A render keeps a core busy for
//! up to seconds, with an encode per render on its own thread, so two
//! jobs can hold ten runnable threads; at the same priority an upload, a
//! status poll or a served file waits its turn behind them. Each job runs
//! on a thread of its own, `NICE` levels below the thread that started it,
//! and the threads it starts (decoder, encoders) inherit that. Between
//! renders the priority weighs nothing: a render alone still has every
//! core. Render threads share malloc's arenas with request threads
//! (`limits::heap`), so a request can still wait on an arena lock a
//! preempted render holds: allocations are short, and the measured tail
//! latency fell (`bench/RESULTS.md`).
//!
//! Whatever runs on a render thread must not start a pool that outlives
//! it (tokio's blocking threads, rayon's global pool): that pool would
//! keep the lower priority for other work.

/// Nice levels below the caller: a weight of 110 against 1024 at the
/// same base, so a waking request thread is favoured over renders.
pub const NICE: i32 = 10;

/// Linux's lowest priority.
const LOWEST: i32 = 19;

/// The job's thread could not start, or `work` panicked.
#[derive(Debug, thiserror::Error)]
#[error("render thread: {0}")]
pub struct Stopped(String);

/// Runs `work` on a new thread at the render priority and waits for it
/// without holding a runtime thread.
pub async fn below_requests<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Stopped> {
    let (done, result) = tokio::sync::oneshot::channel();
    std::thread::Builder::new()
        .name("render".into())
        .spawn(move || {
            lower_this_thread();
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work))
                .map_err(|panic| Stopped(format!("panicked: {}", panic_message(&*panic))));
            let _ = done.send(outcome);
        })
        .map_err(|e| Stopped(format!("cannot start: {e}")))?;
    result
        .await
        .map_err(|_| Stopped("ended without a result".into()))?
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> &str {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s
    } else {
        "(no message)"
    }
}

/// The nice a render thread started by a thread at `base` runs at.
pub fn render_nice(base: i32) -> i32 {
    (base + NICE).min(LOWEST)
}

/// Lowers the calling thread by `NICE` (Linux's nice is per thread, and
/// new threads start at their creator's). Lowering needs no privilege; a
/// refusal leaves it as it was.
fn lower_this_thread() {
    crate::sys::set_thread_nice(render_nice(nice_of_this_thread()));
}

/// The calling thread's nice.
fn nice_of_this_thread() -> i32 {
    crate::sys::thread_nice()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn renders_run_lower_and_their_threads_inherit_it() {
        let before = nice_of_this_thread();
        let (own, child) = below_requests(|| {
            let child = std::thread::spawn(nice_of_this_thread).join().unwrap();
            (nice_of_this_thread(), child)
        })
        .await
        .unwrap();
        let want = if cfg!(target_os = "linux") {
            render_nice(before)
        } else {
            before
        };
        assert_eq!((own, child), (want, want));
        assert_eq!(nice_of_this_thread(), before, "the caller keeps its own");
    }

    #[tokio::test]
    async fn a_panic_is_an_error_with_its_message() {
        let stopped = below_requests(|| -> u8 { panic!("boom") }).await;
        assert!(stopped.unwrap_err().to_string().contains("boom"));
    }

    #[test]
    fn the_render_nice_stays_within_linux_range() {
        assert_eq!(render_nice(0), 10);
        assert_eq!(render_nice(15), 19);
        assert_eq!(render_nice(-5), 5);
    }
}

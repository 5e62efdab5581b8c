use super::*;
use async_trait::async_trait;
use object_store::{PutPayload, PutResult, UploadPart};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// An upload whose part number `fail_part` (from 1) fails, or whose
/// completion fails when `fail_part` is past the last part.
#[derive(Debug)]
struct Flaky {
    fail_part: usize,
    sent: usize,
    complete_fails: bool,
    /// Parts never finish (S3 gone quiet).
    stall: bool,
    seen: Arc<Seen>,
}

#[derive(Debug, Default)]
struct Seen {
    parts: AtomicUsize,
    completed: AtomicUsize,
    aborted: AtomicUsize,
}

#[async_trait]
impl MultipartUpload for Flaky {
    fn put_part(&mut self, data: PutPayload) -> UploadPart {
        self.sent += 1;
        let fails = self.sent == self.fail_part;
        let seen = self.seen.clone();
        if self.stall {
            return Box::pin(std::future::pending());
        }
        Box::pin(async move {
            assert!(data.content_length() > 0);
            seen.parts.fetch_add(1, Ordering::SeqCst);
            if fails {
                return Err(object_store::Error::Generic {
                    store: "flaky",
                    source: "part refused".into(),
                });
            }
            Ok(())
        })
    }

    async fn complete(&mut self) -> object_store::Result<PutResult> {
        self.seen.completed.fetch_add(1, Ordering::SeqCst);
        if self.complete_fails {
            return Err(object_store::Error::Generic {
                store: "flaky",
                source: "completion refused".into(),
            });
        }
        Ok(PutResult {
            e_tag: None,
            version: None,
        })
    }

    async fn abort(&mut self) -> object_store::Result<()> {
        self.seen.aborted.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }
}

/// A writer over a `Flaky` upload reporting to `seen`.
fn writer(fail_part: usize, complete_fails: bool, stall: bool, seen: &Arc<Seen>) -> ObjectWriter {
    let upload = Flaky {
        fail_part,
        sent: 0,
        complete_fails,
        stall,
        seen: seen.clone(),
    };
    ObjectWriter::new(Box::new(upload), TaskTracker::new(), None)
}

/// Writes `len` bytes in 64 KiB chunks, as an upload streams them.
async fn write(fail_part: usize, complete_fails: bool, len: usize) -> (Result<()>, Arc<Seen>) {
    let seen = Arc::new(Seen::default());
    let mut w = writer(fail_part, complete_fails, false, &seen);
    let chunk = vec![7u8; 64 * 1024];
    let mut left = len;
    while left > 0 {
        let n = left.min(chunk.len());
        w.write(&chunk[..n]);
        left -= n;
        if let Err(e) = w.wait_for_capacity(4).await {
            w.abort().await;
            return (Err(e), seen);
        }
    }
    (w.finish().await, seen)
}

#[tokio::test]
async fn a_failed_last_part_aborts_the_upload() {
    // 11 MiB: two full parts, then the last (third) one fails in finish.
    let (done, seen) = write(3, false, 11 << 20).await;
    assert!(done.is_err());
    assert_eq!(seen.parts.load(Ordering::SeqCst), 3);
    assert_eq!(seen.completed.load(Ordering::SeqCst), 0);
    assert_eq!(seen.aborted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_refused_completion_aborts_the_upload() {
    let (done, seen) = write(0, true, 6 << 20).await;
    assert!(done.is_err());
    assert_eq!(seen.parts.load(Ordering::SeqCst), 2);
    assert_eq!(seen.aborted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_failed_middle_part_fails_the_write_and_aborts() {
    let (done, seen) = write(1, false, 30 << 20).await;
    assert!(done.is_err());
    assert_eq!(seen.completed.load(Ordering::SeqCst), 0);
    assert_eq!(seen.aborted.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn a_sound_write_sends_whole_parts_and_completes() {
    let (done, seen) = write(0, false, (10 << 20) + 1).await;
    assert!(done.is_ok());
    assert_eq!(seen.parts.load(Ordering::SeqCst), 3);
    assert_eq!(seen.completed.load(Ordering::SeqCst), 1);
    assert_eq!(seen.aborted.load(Ordering::SeqCst), 0);
}

/// Waits, with a deadline, for the abort a drop spawned.
async fn aborted(seen: &Seen) -> usize {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while seen.aborted.load(Ordering::SeqCst) == 0 && std::time::Instant::now() < deadline {
        tokio::task::yield_now().await;
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    seen.aborted.load(Ordering::SeqCst)
}

#[tokio::test]
async fn a_writer_dropped_unfinished_aborts_its_upload() {
    let seen = Arc::new(Seen::default());
    let mut w = writer(0, false, false, &seen);
    w.write(&vec![1u8; 6 << 20]);
    drop(w);
    assert_eq!(aborted(&seen).await, 1);
    assert_eq!(seen.completed.load(Ordering::SeqCst), 0);
}

/// A request cancelled while `finish` waits for its last part (the client
/// gone, or the server's idle watchdog) still aborts the upload.
#[tokio::test]
async fn a_finish_cancelled_midway_aborts_its_upload() {
    let seen = Arc::new(Seen::default());
    let mut w = writer(0, false, true, &seen);
    w.write(&vec![1u8; 6 << 20]);
    let cut = tokio::time::timeout(std::time::Duration::from_millis(50), w.finish()).await;
    assert!(cut.is_err(), "finish should still be waiting");
    assert_eq!(aborted(&seen).await, 1);
    assert_eq!(seen.completed.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn a_finished_writer_aborts_nothing_when_dropped() {
    let (done, seen) = write(0, false, 1 << 20).await;
    assert!(done.is_ok());
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    assert_eq!(seen.aborted.load(Ordering::SeqCst), 0);
}

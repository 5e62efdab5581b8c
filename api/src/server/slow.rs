//! Slow-client defences for `server`: a socket wrapper that notes when a
//! byte last moved, the watchdog that reads it, and a request body with a
//! total deadline and a least pace (a per-chunk timeout would let a client
//! drip one byte every few seconds forever, and the deadline alone would
//! let it do so for the whole deadline).

use super::frames::Progress;
use axum::body::Body;
use futures::StreamExt;
use hyper::body::Incoming;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::Instant;

/// When a byte last moved on a connection, in ms since it opened.
#[derive(Clone)]
pub struct Activity {
    opened: Instant,
    last_ms: Arc<AtomicU64>,
}

impl Activity {
    pub fn new() -> Activity {
        Activity {
            opened: Instant::now(),
            last_ms: Arc::default(),
        }
    }

    pub fn touch(&self) {
        let ms = self.opened.elapsed().as_millis() as u64;
        self.last_ms.store(ms, Ordering::Relaxed);
    }

    /// Resolves once nothing has moved for `idle`.
    pub async fn stalled(&self, idle: Duration) {
        loop {
            let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
            let deadline = self.opened + last + idle;
            if Instant::now() >= deadline {
                return;
            }
            tokio::time::sleep_until(deadline).await;
        }
    }
}

impl Default for Activity {
    fn default() -> Self {
        Self::new()
    }
}

/// A socket whose traffic touches `activity`: every byte on HTTP/1, a
/// request's or a response's on HTTP/2 (`frames::Progress`).
pub struct Watched<T> {
    inner: T,
    activity: Activity,
    progress: Progress,
}

impl<T> Watched<T> {
    pub fn new(inner: T, activity: Activity) -> Watched<T> {
        Watched {
            inner,
            activity,
            progress: Progress::new(),
        }
    }

    fn wrote(&mut self, bufs: &[io::IoSlice<'_>], mut n: usize) {
        if n == 0 {
            return;
        }
        let mut carried = false;
        for buf in bufs {
            let part = &buf[..n.min(buf.len())];
            carried |= self.progress.wrote(part);
            n -= part.len();
            if n == 0 {
                break;
            }
        }
        if carried {
            self.activity.touch();
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Watched<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        let read = &buf.filled()[before..];
        if matches!(polled, Poll::Ready(Ok(()))) && !read.is_empty() && self.progress.read(read) {
            self.activity.touch();
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Watched<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, data);
        if let Poll::Ready(Ok(n)) = polled {
            self.wrote(&[io::IoSlice::new(data)], n);
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(n)) = polled {
            self.wrote(bufs, n);
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// The slowest a request body may come: at least `MIN_BYTES_PER_WINDOW`
/// in each `RATE_WINDOW` spent waiting for it (1 KiB/s). Without it a
/// client dripping a byte at a time holds its connection slot, and an
/// upload's, for the whole body deadline. Only time spent waiting on the
/// client counts, so a handler that stops reading for a while (the blob
/// store pushing back) is not taken for a slow client.
const RATE_WINDOW: Duration = Duration::from_secs(10);
const MIN_BYTES_PER_WINDOW: usize = 10 << 10;

/// Bytes received and time waited in the current window.
#[derive(Default)]
struct Pace {
    waited: Duration,
    bytes: usize,
}

impl Pace {
    /// Waiting time left in the window.
    fn left(&self) -> Duration {
        RATE_WINDOW.saturating_sub(self.waited)
    }

    /// Counts `bytes` that came after `waited`; false when the window is
    /// over and brought too few. A window that brought enough starts the next.
    fn took(&mut self, bytes: usize, waited: Duration) -> bool {
        self.bytes += bytes;
        self.waited += waited;
        if self.waited < RATE_WINDOW {
            return true;
        }
        let enough = self.bytes >= MIN_BYTES_PER_WINDOW;
        *self = Pace::default();
        enough
    }
}

fn timed_out(why: &'static str) -> axum::Error {
    axum::Error::new(io::Error::new(io::ErrorKind::TimedOut, why))
}

/// The request body, failing with a timeout error once `total` has passed
/// since the request arrived, or once it comes slower than `Pace` allows;
/// each piece that comes touches `activity`. Bodiless requests are passed
/// through as is.
pub fn deadline_body(body: Incoming, total: Duration, activity: Activity) -> Body {
    if hyper::body::Body::is_end_stream(&body) {
        return Body::new(body);
    }
    let deadline = Instant::now() + total;
    let stream = Body::new(body).into_data_stream();
    let timed = futures::stream::unfold(
        Some((stream, Pace::default(), activity)),
        move |state| async move {
            let (mut stream, mut pace, activity) = state?;
            loop {
                let began = Instant::now();
                let until = deadline.min(began + pace.left());
                match tokio::time::timeout_at(until, stream.next()).await {
                    Ok(Some(Ok(chunk))) => {
                        activity.touch();
                        if !pace.took(chunk.len(), began.elapsed()) {
                            return Some((Err(timed_out("request body too slow")), None));
                        }
                        return Some((Ok(chunk), Some((stream, pace, activity))));
                    }
                    Ok(Some(Err(e))) => return Some((Err(e), Some((stream, pace, activity)))),
                    Ok(None) => return None,
                    Err(_) if Instant::now() >= deadline => {
                        return Some((Err(timed_out("request body read timeout")), None));
                    }
                    Err(_) => {
                        if !pace.took(0, began.elapsed()) {
                            return Some((Err(timed_out("request body too slow")), None));
                        }
                    }
                }
            }
        },
    );
    Body::from_stream(timed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_with_too_few_bytes_fails_and_one_with_enough_starts_the_next() {
        let second = Duration::from_secs(1);
        let mut pace = Pace::default();
        for _ in 0..9 {
            assert!(pace.took(1, second));
        }
        assert!(!pace.took(1, second), "10 bytes in 10 s");
        let mut pace = Pace::default();
        assert!(pace.took(MIN_BYTES_PER_WINDOW, RATE_WINDOW));
        assert_eq!(pace.left(), RATE_WINDOW, "the next window starts afresh");
        assert!(pace.took(MIN_BYTES_PER_WINDOW / 2, RATE_WINDOW / 2));
        assert_eq!(pace.left(), RATE_WINDOW / 2);
        assert!(!pace.took(MIN_BYTES_PER_WINDOW / 2 - 1, RATE_WINDOW / 2));
    }
}

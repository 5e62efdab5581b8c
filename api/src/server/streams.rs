//! HTTP/2's keep-alive wait. hyper closes an HTTP/1 connection that sends
//! no next request within the header timeout, but keeps an HTTP/2 one
//! open for as long as the client sends anything, PINGs included: a few
//! addresses could hold every connection slot with no request open. Here
//! an HTTP/2 connection whose streams have all been answered is sent a
//! GOAWAY after the same wait (`server::connection`): hyper then closes it
//! once the responses still in its send buffers have gone out.

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use hyper::body::{Frame, SizeHint};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::time::Instant;

/// A connection's open HTTP/2 streams, and since when it has had none.
pub struct Streams {
    opened: Instant,
    open: AtomicUsize,
    none_since_ms: AtomicU64,
    seen: AtomicBool,
}

impl Streams {
    pub fn new() -> Arc<Streams> {
        Arc::new(Streams {
            opened: Instant::now(),
            open: AtomicUsize::new(0),
            none_since_ms: AtomicU64::new(0),
            seen: AtomicBool::new(false),
        })
    }

    /// A stream begins: open until the `Open` is dropped, with the body
    /// it is put in (`Open::until_sent`) or with the request's handler.
    pub fn begin(self: &Arc<Self>) -> Open {
        self.seen.store(true, Ordering::Relaxed);
        self.open.fetch_add(1, Ordering::AcqRel);
        Open(self.clone())
    }

    /// Resolves once an HTTP/2 connection has had no open stream for
    /// `wait`; never on one that has not answered an HTTP/2 request (the
    /// first request's wait is `server::no_request_within`'s).
    pub async fn none_open_for(&self, wait: Duration) {
        loop {
            let now = self.opened.elapsed();
            let next =
                if self.seen.load(Ordering::Relaxed) && self.open.load(Ordering::Acquire) == 0 {
                    let since = Duration::from_millis(self.none_since_ms.load(Ordering::Acquire));
                    if now >= since + wait {
                        return;
                    }
                    since + wait
                } else {
                    now + wait
                };
            tokio::time::sleep_until(self.opened + next).await;
        }
    }
}

/// One open stream; its drop ends it.
pub struct Open(Arc<Streams>);

impl Open {
    /// `response`, its stream open until hyper drops its body (sent to
    /// the end, or the stream reset).
    pub fn until_sent(self, response: Response) -> Response {
        response.map(|body| Body::new(Counted { body, _open: self }))
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        let ms = self.0.opened.elapsed().as_millis() as u64;
        // The time first: a watcher that sees no stream open reads it.
        self.0.none_since_ms.store(ms, Ordering::Release);
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

struct Counted {
    body: Body,
    _open: Open,
}

impl hyper::body::Body for Counted {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::Streams;
    use axum::response::Response;
    use std::time::Duration;

    #[tokio::test(start_paused = true)]
    async fn the_wait_starts_when_the_last_open_stream_ends() {
        let streams = Streams::new();
        let wait = Duration::from_secs(10);
        let quiet = tokio::time::timeout(Duration::from_secs(60), streams.none_open_for(wait));
        assert!(quiet.await.is_err(), "no HTTP/2 request yet: never");
        let a = streams
            .begin()
            .until_sent(Response::new(Default::default()));
        let handling = streams.begin();
        drop(a);
        let early = tokio::time::timeout(Duration::from_secs(30), streams.none_open_for(wait));
        assert!(early.await.is_err(), "one request still being handled");
        drop(handling);
        let began = tokio::time::Instant::now();
        streams.none_open_for(wait).await;
        assert_eq!(began.elapsed(), wait);
    }
}

//! The accept loop, in place of `axum::serve`, which runs hyper without a
//! timer (so no header-read timeout: a client sending half a request head
//! was held for minutes) and without a connection cap.
//!
//! Every connection gets: hyper's header-read timeout (which also bounds
//! the keep-alive wait for the next request; `streams` does the same for
//! HTTP/2), an idle watchdog that closes it when nothing has moved either
//! way for `idle_timeout` (a client that stopped reading a response; on
//! HTTP/2 only requests' and responses' frames count, `frames`), and a
//! total deadline on each request body.
//! At most `max_connections` are open; further clients wait in the kernel's
//! listen backlog and cost this process nothing. One client address may
//! hold `max_connections_per_address` of them, and once only the reserve
//! is free (`connections::reserve_of`) just a couple; past that a
//! connection is closed as soon as it is accepted.
//!
//! Each connection is served on one of the per-core runtimes (`cores`).
//!
//! The rest of the connection machinery lives beside it: `sendfile`
//! (renders from disk to the socket), `slow` and `frames` (the idle
//! watchdog), `streams` (HTTP/2), `drain` and `logging`.

pub mod cores;
pub mod drain;
pub mod frames;
pub mod logging;
pub mod sendfile;
pub mod slow;
pub mod streams;

use crate::state::AppState;
use axum::extract::connect_info::ConnectInfo;
use axum::http::request::Parts;
use axum::http::{Request, Version};
use axum::response::Response;
use axum::Router;
use futures::future::Either;
use futures::FutureExt;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto::Builder;
use hyper_util::service::TowerToHyperService;
use lightbox_core::limits::client::TrustedProxies;
use lightbox_core::limits::connections::{reserve_of, PerAddress};
use lightbox_core::limits::Limits;
use sendfile::Wire;
use slow::{deadline_body, Activity, Watched};
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use streams::Streams;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tower::ServiceExt;

/// Streams one HTTP/2 connection may have open at once.
const H2_STREAMS: u32 = 16;
/// Response bytes buffered per HTTP/2 stream beyond what the socket took.
const H2_SEND_BUFFER: usize = 32 << 10;
/// How long a connection may take to finish once shutdown begins, so that
/// it and the blob store's drain (20 s) end within Kubernetes' default
/// grace of 30 s, whatever the idle timeout.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// Requests answered without the router (the render route, which pages
/// ask for most): the router's matching, middleware boxing and extractors
/// were a third of their user-space time. Given to `run` by the caller, so
/// this connection machinery names no route.
pub trait Shortcut: Clone + Send + Sync + 'static {
    /// Whether `answer` takes `req`. It gets no body and no client address.
    fn takes(&self, req: &Request<Incoming>) -> bool;
    /// The response, with the log line, metrics and panic guard the router
    /// would give it. `pieces` is the connection's sendfile queue (HTTP/1).
    /// By value, so the answer borrows nothing: cloned per request.
    fn answer(
        self,
        parts: Parts,
        pieces: Option<sendfile::Pieces>,
    ) -> impl Future<Output = Response> + Send + 'static;
}

#[derive(Clone)]
struct Timeouts {
    header: Duration,
    idle: Duration,
    body: Duration,
    proxies: Arc<TrustedProxies>,
}

/// Serves `app` until `shutdown` resolves, then lets the open connections
/// finish their requests.
pub async fn run(
    listener: TcpListener,
    app: Router,
    shortcut: impl Shortcut,
    state: AppState,
    limits: &Limits,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let slots = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let per_address = PerAddress::new(
        limits.max_connections_per_address.max(1),
        reserve_of(limits.max_connections.max(1)),
    );
    let timeouts = Timeouts {
        header: limits.header_read_timeout,
        idle: limits.idle_timeout,
        body: limits.body_read_timeout,
        proxies: Arc::new(limits.trusted_proxies.clone()),
    };
    let (stop, connections) = (CancellationToken::new(), TaskTracker::new());
    let cores = cores::Cores::start()?;
    tokio::pin!(shutdown);
    loop {
        let slot = tokio::select! {
            slot = slots.clone().acquire_owned() => slot.expect("never closed"),
            _ = &mut shutdown => break,
        };
        let (tcp, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                Err(e) => {
                    // Out of file descriptors and the like: pause, go on.
                    tracing::warn!(error = %e, "accept failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            _ = &mut shutdown => break,
        };
        // The peer, not a forwarded address: a trusted proxy carries many
        // clients, and a header is not read yet.
        let exempt = timeouts.proxies.trusts(peer.ip());
        let held = if exempt {
            None
        } else {
            per_address.enter(peer.ip(), slots.available_permits())
        };
        if !exempt && held.is_none() {
            lightbox_core::metrics::METRICS.connections_refused.inc();
            tracing::debug!(%peer, "closing a connection past its address's cap");
            continue;
        }
        // The socket leaves this runtime's reactor for the one that serves it.
        let tcp = match tcp.into_std() {
            Ok(tcp) => tcp,
            Err(e) => {
                tracing::debug!(%peer, error = %e, "could not hand a connection over");
                continue;
            }
        };
        let (app, stop, timeouts) = (app.clone(), stop.clone(), timeouts.clone());
        let shortcut = shortcut.clone();
        cores.next().spawn(connections.track_future(async move {
            match TcpStream::from_std(tcp) {
                Ok(tcp) => connection(tcp, peer, (app, shortcut), timeouts, stop).await,
                Err(e) => tracing::debug!(%peer, error = %e, "could not take a connection"),
            }
            drop((slot, held));
        }));
    }
    drop(listener);
    stop.cancel();
    connections.close();
    connections.wait().await;
    // Uploads settling after their clients left, and aborts of abandoned
    // ones, within Kubernetes' default grace of 30 s.
    state.store.drain(Duration::from_secs(20)).await;
    Ok(())
}

async fn connection(
    tcp: TcpStream,
    peer: SocketAddr,
    (app, shortcut): (Router, impl Shortcut),
    t: Timeouts,
    stop: CancellationToken,
) {
    // Without TCP_NODELAY a response written as headers then body waits
    // for the client's delayed ACK: 40 ms per request on keep-alive.
    let _ = tcp.set_nodelay(true);
    let activity = Activity::new();
    let (wire, pieces) = Wire::new(tcp);
    let io = TokioIo::new(Watched::new(wire, activity.clone()));
    let (body_timeout, proxies) = (t.body, t.proxies.clone());
    let begun = Arc::new(AtomicBool::new(false));
    let first = begun.clone();
    let h2 = Streams::new();
    let (streams, moved) = (h2.clone(), activity.clone());
    let service = tower::service_fn(move |req: Request<Incoming>| {
        first.store(true, Ordering::Relaxed);
        // HTTP/2 copies bodies into its own frames: placeholders would
        // reach the client as zeros.
        let pieces = (req.version() < Version::HTTP_2).then(|| pieces.clone());
        if shortcut.takes(&req) {
            // A GET whose body is never read, answered without the
            // client's address: nothing to bound or to put in extensions.
            let (parts, _) = req.into_parts();
            let answer = shortcut.clone().answer(parts, pieces);
            return Either::Left(answer.map(Ok::<_, Infallible>));
        }
        // HTTP/2: the stream counts as open (hyper keeps the connection
        // as long as PINGs come), and the watchdog counts requests that
        // reach the service and the body bytes handed to it, not frames as
        // they come (h2 drops some unanswered: new streams past a GOAWAY,
        // DATA on a closed stream).
        let open = (req.version() >= Version::HTTP_2).then(|| {
            moved.touch();
            streams.begin()
        });
        let mut req = req.map(|body| deadline_body(body, body_timeout, moved.clone()));
        req.extensions_mut().insert(ConnectInfo(peer));
        req.extensions_mut().insert(proxies.clone());
        if let Some(pieces) = pieces {
            req.extensions_mut().insert(pieces);
        }
        let answer = app.clone().oneshot(req);
        Either::Right(answer.map(move |r| match open {
            Some(open) => r.map(|response| open.until_sent(response)),
            None => r,
        }))
    });
    let mut builder = Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(t.header);
    // What one HTTP/2 client that never reads can make this process hold:
    // the defaults (200 streams of 400 KB each) let one connection pin
    // 80 MB of response bytes.
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(H2_STREAMS)
        .max_send_buf_size(H2_SEND_BUFFER);
    let conn = builder.serve_connection(io, TowerToHyperService::new(service));
    tokio::pin!(conn);
    // Set once the connection is asked to end: HTTP/1 after the request
    // under way, HTTP/2 with a GOAWAY, so its client knows which requests
    // were taken, and the responses under way still reach it.
    let (mut ending, mut give_up) = (false, None);
    loop {
        let grace_over =
            tokio::time::sleep_until(give_up.unwrap_or_else(tokio::time::Instant::now));
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    tracing::debug!(%peer, error = %e, "connection ended");
                }
                return;
            }
            _ = stop.cancelled(), if give_up.is_none() => {
                if !ending {
                    conn.as_mut().graceful_shutdown();
                    ending = true;
                }
                give_up = Some(tokio::time::Instant::now() + SHUTDOWN_GRACE);
            }
            _ = grace_over, if give_up.is_some() => {
                tracing::info!(%peer, "closing a connection still open at the end of shutdown's grace");
                return;
            }
            _ = h2.none_open_for(t.header), if !ending => {
                tracing::info!(%peer, "closing an HTTP/2 connection with no open stream");
                conn.as_mut().graceful_shutdown();
                ending = true;
            }
            _ = no_request_within(&begun, t.header) => {
                tracing::info!(%peer, "closing a connection that sent no request");
                return;
            }
            _ = activity.stalled(t.idle) => {
                tracing::info!(%peer, idle_s = t.idle.as_secs(), "closing a stalled connection");
                return;
            }
        }
    }
}

/// Resolves if no request has begun `wait` after the connection opened.
/// hyper's header timer starts with the first byte of a head (and not
/// while HTTP/2's preface arrives), so a silent client would otherwise
/// hold its connection slot until the idle watchdog.
async fn no_request_within(begun: &AtomicBool, wait: Duration) {
    tokio::time::sleep(wait).await;
    if begun.load(Ordering::Relaxed) {
        std::future::pending::<()>().await;
    }
}

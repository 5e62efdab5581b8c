//! Issue 17, item 3: slow and idle clients are cut off within their
//! timeouts, and open connections are capped. Raw sockets, so the test
//! controls every byte the server sees.

use lightbox_e2e::{proc, Server};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn addr(srv: &Server) -> String {
    srv.url.trim_start_matches("http://").to_owned()
}

/// Reads until the server closes the connection; how long that took.
async fn until_closed(mut s: TcpStream, limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    let mut buf = [0u8; 4096];
    loop {
        match tokio::time::timeout(limit.saturating_sub(start.elapsed()), s.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return Some(start.elapsed()),
            Ok(Ok(_)) => {}
            Err(_) => return None,
        }
    }
}

fn timeouts() -> Vec<(&'static str, &'static str)> {
    vec![
        ("LIGHTBOX_HEADER_READ_TIMEOUT_S", "2"),
        ("LIGHTBOX_IDLE_TIMEOUT_S", "30"),
        ("LIGHTBOX_BODY_READ_TIMEOUT_S", "3"),
    ]
}

#[tokio::test]
async fn a_half_sent_request_head_is_dropped_after_the_header_timeout() {
    let srv = Server::start_with(&timeouts());
    let mut s = TcpStream::connect(addr(&srv)).await.unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: ")
        .await
        .unwrap();
    let closed = until_closed(s, Duration::from_secs(10)).await;
    assert!(
        closed.is_some_and(|d| d < Duration::from_secs(5)),
        "{closed:?}"
    );
}

#[tokio::test]
async fn a_connection_that_sends_no_request_is_dropped_after_the_header_timeout() {
    let srv = Server::start_with(&timeouts());
    let silent = TcpStream::connect(addr(&srv)).await.unwrap();
    // Half of HTTP/2's preface: no request head has begun either.
    let mut preface = TcpStream::connect(addr(&srv)).await.unwrap();
    preface.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    for s in [silent, preface] {
        let closed = until_closed(s, Duration::from_secs(10)).await;
        assert!(
            closed.is_some_and(|d| d < Duration::from_secs(5)),
            "{closed:?}"
        );
    }
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed() {
    let srv = Server::start_with(&timeouts());
    let mut s = TcpStream::connect(addr(&srv)).await.unwrap();
    s.write_all(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
        .await
        .unwrap();
    let mut first = [0u8; 12];
    s.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"HTTP/1.1 200");
    let closed = until_closed(s, Duration::from_secs(10)).await;
    assert!(
        closed.is_some_and(|d| d < Duration::from_secs(5)),
        "{closed:?}"
    );
}

/// Sends `head`, then `chunk` every `every` until the server answers or
/// closes, which it must within `limit`; what it answered and when, from
/// the head on.
async fn send_paced(
    srv: &Server,
    head: &str,
    chunk: Vec<u8>,
    every: Duration,
    limit: Duration,
) -> (String, Duration) {
    let s = TcpStream::connect(addr(srv)).await.unwrap();
    let (mut rd, mut wr) = s.into_split();
    wr.write_all(head.as_bytes()).await.unwrap();
    let start = Instant::now();
    let drip = tokio::spawn(async move {
        while wr.write_all(&chunk).await.is_ok() {
            tokio::time::sleep(every).await;
            if start.elapsed() > limit + Duration::from_secs(10) {
                break;
            }
        }
    });
    let mut answer = Vec::new();
    let read = tokio::time::timeout(limit, rd.read_to_end(&mut answer)).await;
    drip.abort();
    assert!(read.is_ok(), "still open after {limit:?}");
    (
        String::from_utf8_lossy(&answer).into_owned(),
        start.elapsed(),
    )
}

const DRIPPED_HEAD: &str = "POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n";

/// One byte every 300 ms (always some progress, never the whole body) of
/// a 100,000-byte RPC body, until the server closes the connection or
/// answers with a client error: how long that took.
async fn drip_a_byte_every_300ms(srv: &Server, limit: Duration) -> Duration {
    let every = Duration::from_millis(300);
    let (text, took) = send_paced(srv, DRIPPED_HEAD, b" ".to_vec(), every, limit).await;
    assert!(text.is_empty() || text.starts_with("HTTP/1.1 4"), "{text}");
    took
}

#[tokio::test]
async fn a_body_dripped_byte_by_byte_is_cut_at_the_body_deadline() {
    let srv = Server::start_with(&timeouts());
    let took = drip_a_byte_every_300ms(&srv, Duration::from_secs(10)).await;
    assert!(took < Duration::from_secs(6), "{took:?}");
}

#[tokio::test]
async fn a_body_dripped_within_the_deadline_is_cut_for_its_pace() {
    // The default 300 s body deadline: a byte every 300 ms is cut once 10 s
    // of waiting have brought under 10 KiB.
    let srv = Server::start_with(&[("LIGHTBOX_IDLE_TIMEOUT_S", "60")]);
    let took = drip_a_byte_every_300ms(&srv, Duration::from_secs(30)).await;
    assert!(
        took > Duration::from_secs(9) && took < Duration::from_secs(16),
        "{took:?}"
    );
}

#[tokio::test]
async fn a_slow_but_steady_body_is_received_whole() {
    // 4 KiB/s for 12 s, past a whole window: above the floor, answered.
    let srv = Server::start_with(&[("LIGHTBOX_IDLE_TIMEOUT_S", "60")]);
    let mut body = br#"{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}"#.to_vec();
    body.resize(48 << 10, b' ');
    let head = format!(
        "POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let s = TcpStream::connect(addr(&srv)).await.unwrap();
    let (mut rd, mut wr) = s.into_split();
    wr.write_all(head.as_bytes()).await.unwrap();
    let start = Instant::now();
    for piece in body.chunks(4 << 10) {
        wr.write_all(piece).await.unwrap();
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(10), rd.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "no answer");
    assert!(
        start.elapsed() > Duration::from_secs(11),
        "{:?}",
        start.elapsed()
    );
    let text = String::from_utf8_lossy(&answer);
    assert!(text.starts_with("HTTP/1.1 200"), "{text}");
    assert!(text.contains("\"openrpc\""), "{text}");
}

#[tokio::test]
async fn open_connections_are_capped_and_normal_requests_still_answer() {
    let srv = Server::start_with(&[
        ("LIGHTBOX_MAX_CONNECTIONS", "16"),
        ("LIGHTBOX_HEADER_READ_TIMEOUT_S", "3"),
    ]);
    let pid = srv.pid();
    let before = proc::sockets(pid);
    let mut held = Vec::new();
    for _ in 0..100 {
        let mut s = TcpStream::connect(addr(&srv)).await.unwrap();
        // Past the cap the server may have closed it already.
        let _ = s.write_all(b"GET /healthz HTTP/1.1\r\n").await;
        held.push(s);
    }
    let open = || proc::sockets(pid).saturating_sub(before);
    // One address gets every slot but the reserve (an eighth: 2 of 16).
    assert!(proc::within(Duration::from_secs(5), || open() >= 14).await);
    // A bounded look for growth past the cap (the listener itself is one).
    let grew = proc::within(Duration::from_secs(1), || open() > 16 + 1).await;
    assert!(!grew, "{} sockets held by 100 slow clients", open());
    // Another address is answered from the reserve at once.
    let mut other = connect_from(&srv, "127.0.0.2").await;
    assert_eq!(health_on(&mut other).await, Some(200));
    // The slow ones time out and make room for their address again.
    let started = Instant::now();
    loop {
        let mut s = connect_from(&srv, "127.0.0.1").await;
        if health_on(&mut s).await == Some(200) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(30),
            "no room came back"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    drop(held);
}

/// A connection from `source` (any loopback address works on Linux).
async fn connect_from(srv: &Server, source: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(addr(srv).parse().unwrap()).await.unwrap()
}

/// `GET /healthz` on `s`, keeping it open: the status line's code.
async fn health_on(s: &mut TcpStream) -> Option<u16> {
    let ask = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
    s.write_all(ask).await.ok()?;
    let mut buf = [0u8; 1024];
    let n = tokio::time::timeout(Duration::from_secs(10), s.read(&mut buf))
        .await
        .ok()?
        .ok()?;
    String::from_utf8_lossy(&buf[..n]).get(9..12)?.parse().ok()
}

/// `n` connections from `source`, each answered once and kept open.
async fn served(srv: &Server, source: &str, n: usize) -> Vec<TcpStream> {
    let mut held = Vec::new();
    for _ in 0..n {
        let mut s = connect_from(srv, source).await;
        assert_eq!(health_on(&mut s).await, Some(200), "from {source}");
        held.push(s);
    }
    held
}

#[tokio::test]
async fn one_address_cannot_hold_every_connection() {
    let srv = Server::start_with(&[
        ("LIGHTBOX_MAX_CONNECTIONS_PER_ADDRESS", "4"),
        ("LIGHTBOX_HEADER_READ_TIMEOUT_S", "60"),
    ]);
    let mut held = served(&srv, "127.0.0.1", 4).await;
    // The fifth from that address is closed before anything is read.
    let extra = connect_from(&srv, "127.0.0.1").await;
    let closed = until_closed(extra, Duration::from_secs(5)).await;
    assert!(closed.is_some(), "a fifth connection stayed open");
    // Another address is served meanwhile, and the held ones still are.
    let mut other = connect_from(&srv, "127.0.0.2").await;
    assert_eq!(health_on(&mut other).await, Some(200));
    assert_eq!(health_on(&mut held[0]).await, Some(200));
    let metrics = srv.metrics().await;
    let refused = metrics
        .lines()
        .find_map(|l| l.strip_prefix("lightbox_connections_refused_total "))
        .and_then(|v| v.trim().parse::<u64>().ok());
    assert!(refused.is_some_and(|n| n >= 1), "{refused:?}");

    // A closed one gives its place back.
    drop(held.pop());
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut s = connect_from(&srv, "127.0.0.1").await;
        if health_on(&mut s).await == Some(200) {
            break;
        }
        assert!(Instant::now() < deadline, "the place never came back");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_trusted_proxy_is_not_capped_by_address() {
    let srv = Server::start_with(&[
        ("LIGHTBOX_MAX_CONNECTIONS_PER_ADDRESS", "2"),
        ("LIGHTBOX_TRUSTED_PROXIES", "127.0.0.1"),
    ]);
    let _held = served(&srv, "127.0.0.1", 6).await;
    // Only the proxy's own address is exempt.
    let _capped = served(&srv, "127.0.0.3", 2).await;
    let mut third = connect_from(&srv, "127.0.0.3").await;
    assert_eq!(health_on(&mut third).await, None);
}

//! HTTP/2 connections are held to what HTTP/1 ones are: PINGs alone do not
//! keep one open past the keep-alive wait (the header timeout), nor one
//! whose response is stuck past the idle timeout; and closing one for the
//! keep-alive wait (a GOAWAY) never cuts a response still on its way. Raw
//! frames, so the test decides every byte the server sees.

use lightbox_e2e::h2::*;
use lightbox_e2e::Server;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A request's head on stream 1 as HPACK literals (no table state
/// needed): `method` is the static table's index byte (0x82 GET, 0x83
/// POST), then `:scheme http` and `:path`.
fn request(method: u8, path: &str, flags: u8) -> Vec<u8> {
    let mut h = vec![method, 0x86, 0x04, path.len() as u8];
    h.extend_from_slice(path.as_bytes());
    if method == 0x83 {
        h.extend_from_slice(&[0x0f, 0x10, 16]);
        h.extend_from_slice(b"application/json");
    }
    frame(HEADERS, flags | END_HEADERS, 1, &h)
}

/// A client connection and what it has seen of stream 1 and the server.
struct Client {
    tcp: TcpStream,
    pending: Vec<u8>,
    body: usize,
    answered: bool,
    goaway: bool,
    closed: bool,
}

impl Client {
    /// Connects with `settings` (SETTINGS payload: id, value pairs).
    async fn open(srv: &Server, settings: &[u8]) -> Client {
        let mut tcp = TcpStream::connect(srv.url.trim_start_matches("http://"))
            .await
            .unwrap();
        tcp.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            .await
            .unwrap();
        tcp.write_all(&frame(SETTINGS, 0, 0, settings))
            .await
            .unwrap();
        Client {
            tcp,
            pending: Vec::new(),
            body: 0,
            answered: false,
            goaway: false,
            closed: false,
        }
    }

    async fn send(&mut self, bytes: &[u8]) {
        if self.tcp.write_all(bytes).await.is_err() {
            self.closed = true;
        }
    }

    /// Reads what comes within `wait`, answering the server's SETTINGS and
    /// PINGs as a client must, and noting stream 1's answer, a GOAWAY and
    /// the end of the connection.
    async fn read_for(&mut self, wait: Duration) {
        let until = tokio::time::Instant::now() + wait;
        let mut buf = [0u8; 16 << 10];
        while !self.closed {
            let read = tokio::time::timeout_at(until, self.tcp.read(&mut buf)).await;
            match read {
                Err(_) => break,
                Ok(Ok(0)) | Ok(Err(_)) => self.closed = true,
                Ok(Ok(n)) => self.pending.extend_from_slice(&buf[..n]),
            }
            while let Some(f) = self.next_frame() {
                self.take(f).await;
            }
        }
    }

    /// The next whole frame: kind, flags, stream, payload.
    fn next_frame(&mut self) -> Option<(u8, u8, u32, Vec<u8>)> {
        let p = &self.pending;
        let len = u32::from_be_bytes([0, *p.first()?, *p.get(1)?, *p.get(2)?]) as usize;
        if p.len() < 9 + len {
            return None;
        }
        let stream = u32::from_be_bytes(p[5..9].try_into().unwrap()) & 0x7fff_ffff;
        let f = (p[3], p[4], stream, p[9..9 + len].to_vec());
        self.pending.drain(..9 + len);
        Some(f)
    }

    async fn take(&mut self, (kind, flags, stream, payload): (u8, u8, u32, Vec<u8>)) {
        match kind {
            SETTINGS if flags & ACK == 0 => self.send(&frame(SETTINGS, ACK, 0, &[])).await,
            PING if flags & ACK == 0 => self.send(&frame(PING, ACK, 0, &payload)).await,
            GOAWAY => self.goaway = true,
            _ => {}
        }
        if stream == 1 && kind == DATA {
            self.body += payload.len();
        }
        if stream == 1 && matches!(kind, DATA | HEADERS) && flags & END_STREAM != 0 {
            self.answered = true;
        }
    }

    async fn until_answered(&mut self, limit: Duration) {
        let deadline = Instant::now() + limit;
        while !self.answered && !self.closed && Instant::now() < deadline {
            self.read_for(Duration::from_millis(100)).await;
        }
    }

    async fn ping(&mut self) {
        self.send(&frame(PING, 0, 0, &[7; 8])).await;
        self.read_for(Duration::from_millis(250)).await;
    }

    /// PINGs every half second until the connection closes or `limit`
    /// passes; how long it stayed open.
    async fn ping_until_closed(&mut self, limit: Duration) -> Duration {
        let from = Instant::now();
        while !self.closed && from.elapsed() < limit {
            self.ping().await;
            self.ping().await;
        }
        from.elapsed()
    }
}

fn timeouts(idle_s: &str) -> [(&'static str, String); 3] {
    [
        ("LIGHTBOX_HEADER_READ_TIMEOUT_S", "2".to_owned()),
        ("LIGHTBOX_IDLE_TIMEOUT_S", idle_s.to_owned()),
        ("LIGHTBOX_BODY_READ_TIMEOUT_S", "30".to_owned()),
    ]
}

fn start(idle_s: &str) -> Server {
    let t = timeouts(idle_s);
    let env: Vec<(&str, &str)> = t.iter().map(|(k, v)| (*k, v.as_str())).collect();
    Server::start_with(&env)
}

#[tokio::test]
async fn pings_do_not_keep_an_http2_connection_without_open_streams() {
    let srv = start("60");
    let mut c = Client::open(&srv, &[]).await;
    c.send(&request(0x83, "/rpc", 0)).await;
    // The body comes over 4 s, twice the keep-alive wait, with PINGs
    // between its pieces: an open request keeps the connection.
    let head = br#"{"jsonrpc":"2.0","id":1,"method":"no.such""#;
    c.send(&frame(DATA, 0, 1, head)).await;
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(4) {
        c.send(&frame(DATA, 0, 1, &[b' '; 64])).await;
        c.ping().await;
        c.ping().await;
    }
    assert!(
        !c.closed && !c.answered,
        "cut or answered before the body ended"
    );
    c.send(&frame(DATA, END_STREAM, 1, b"}")).await;
    c.until_answered(Duration::from_secs(10)).await;
    assert!(c.answered && !c.closed, "the request got no answer");
    // Then no stream is open: PINGs every 0.5 s (the idle watchdog's 60 s
    // would never fire) do not keep the connection past the 2 s wait, and
    // it ends with a GOAWAY.
    let held = c.ping_until_closed(Duration::from_secs(20)).await;
    assert!(c.closed, "still open after {held:?}");
    assert!(c.goaway, "closed without a GOAWAY");
    assert!(
        held >= Duration::from_millis(1500) && held < Duration::from_secs(6),
        "{held:?}"
    );
    let deadline = Instant::now() + Duration::from_secs(5);
    while !srv.logs().contains("no open stream") && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(srv.logs().contains("no open stream"), "{}", srv.logs());
}

/// A client whose streams get a `window`-byte flow-control window
/// (SETTINGS_INITIAL_WINDOW_SIZE), asking for the 2.5 KB stylesheet.
async fn stylesheet_with_window(srv: &Server, window: u32) -> Client {
    let mut settings = vec![0, 4];
    settings.extend_from_slice(&window.to_be_bytes());
    let mut c = Client::open(srv, &settings).await;
    c.send(&request(0x82, "/static/lightbox.css", END_STREAM))
        .await;
    c
}

#[tokio::test]
async fn a_response_still_going_out_when_the_keep_alive_wait_ends_arrives_whole() {
    let srv = start("30");
    // A 1,000-byte window for the stylesheet: hyper has taken the
    // whole body, so the stream counts as answered, but most of it waits
    // in the send buffer while the client holds back for twice the wait.
    let mut c = stylesheet_with_window(&srv, 1000).await;
    let held_back = Instant::now();
    while held_back.elapsed() < Duration::from_secs(4) {
        c.ping().await;
    }
    assert_eq!(c.body, 1000, "the window holds the rest back");
    assert!(!c.closed, "the connection was dropped under its response");
    let more = (1u32 << 20).to_be_bytes();
    c.send(&frame(WINDOW_UPDATE, 0, 1, &more)).await;
    c.until_answered(Duration::from_secs(10)).await;
    assert!(c.answered, "cut after {} bytes", c.body);
    assert!(c.body > 2000, "{}", c.body);
    // The GOAWAY came, and with the response out the connection ends.
    c.read_for(Duration::from_secs(5)).await;
    assert!(c.goaway && c.closed);
}

#[tokio::test]
async fn a_response_stuck_for_want_of_window_is_cut_at_the_idle_timeout() {
    let srv = start("4");
    // A one-byte window: hyper takes the body into its buffer and sends a
    // byte, so the stream counts as answered and the GOAWAY comes.
    let mut c = stylesheet_with_window(&srv, 1).await;
    // PINGs, then, once the keep-alive GOAWAY has come, new streams, which
    // h2 drops unanswered: neither reaches the service, so neither counts.
    let from = Instant::now();
    let mut next_stream = 3u32;
    while !c.closed && from.elapsed() < Duration::from_secs(20) {
        c.ping().await;
        if c.goaway {
            let mut head = request(0x82, "/healthz", END_STREAM);
            head[5..9].copy_from_slice(&next_stream.to_be_bytes());
            c.send(&head).await;
            next_stream += 2;
        }
    }
    let held = from.elapsed();
    assert!(c.closed, "still open after {held:?}");
    assert!(
        c.goaway && next_stream > 3,
        "no stream sent after the GOAWAY"
    );
    assert!(!c.answered && c.body == 1);
    assert!(
        held >= Duration::from_secs(3) && held < Duration::from_secs(9),
        "{held:?}"
    );
}

#[tokio::test]
async fn shutdown_does_not_wait_out_the_idle_timeout_for_a_stuck_response() {
    let mut srv = start("60");
    let mut c = stylesheet_with_window(&srv, 0).await;
    c.read_for(Duration::from_millis(500)).await;
    let began = Instant::now();
    let status = srv.terminate();
    let took = began.elapsed();
    assert!(status.success(), "{status:?}");
    // Ten seconds' grace for connections, not the 60 s idle timeout.
    assert!(took < Duration::from_secs(20), "{took:?}");
}

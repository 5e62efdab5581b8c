//! An HTTP/2 connection kept alive by PINGs alone is closed after the
//! keep-alive wait (the header timeout), as an idle HTTP/1 one is, while
//! one with a request still open is not. Raw frames, so the test decides
//! every byte the server sees.

use lightbox_e2e::Server;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const DATA: u8 = 0;
const HEADERS: u8 = 1;
const SETTINGS: u8 = 4;
const PING: u8 = 6;
const END_STREAM: u8 = 1;
const END_HEADERS: u8 = 4;

fn frame(kind: u8, flags: u8, stream: u32, payload: &[u8]) -> Vec<u8> {
    let len = (payload.len() as u32).to_be_bytes();
    let mut f = vec![len[1], len[2], len[3], kind, flags];
    f.extend_from_slice(&stream.to_be_bytes());
    f.extend_from_slice(payload);
    f
}

/// `POST /rpc` as HPACK literals (no table state needed): `:method POST`,
/// `:scheme http`, `:path /rpc`, `content-type: application/json`.
fn post_rpc_headers() -> Vec<u8> {
    let mut h = vec![0x83, 0x86, 0x04, 4];
    h.extend_from_slice(b"/rpc");
    h.extend_from_slice(&[0x0f, 0x10, 16]);
    h.extend_from_slice(b"application/json");
    frame(HEADERS, END_HEADERS, 1, &h)
}

/// A client connection: the frames it has read, and the stream 1 answer.
struct Client {
    tcp: TcpStream,
    pending: Vec<u8>,
    answered: bool,
    closed: bool,
}

impl Client {
    async fn open(srv: &Server) -> Client {
        let mut tcp = TcpStream::connect(srv.url.trim_start_matches("http://"))
            .await
            .unwrap();
        tcp.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n")
            .await
            .unwrap();
        tcp.write_all(&frame(SETTINGS, 0, 0, &[])).await.unwrap();
        Client {
            tcp,
            pending: Vec::new(),
            answered: false,
            closed: false,
        }
    }

    async fn send(&mut self, bytes: &[u8]) {
        if self.tcp.write_all(bytes).await.is_err() {
            self.closed = true;
        }
    }

    /// Reads what comes within `wait`, acknowledging the server's settings
    /// and noting the end of stream 1's answer or of the connection.
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
            while self.pending.len() >= 9 {
                let len =
                    u32::from_be_bytes([0, self.pending[0], self.pending[1], self.pending[2]]);
                let end = 9 + len as usize;
                if self.pending.len() < end {
                    break;
                }
                let (kind, flags) = (self.pending[3], self.pending[4]);
                let stream = u32::from_be_bytes(self.pending[5..9].try_into().unwrap());
                self.pending.drain(..end);
                if kind == SETTINGS && flags & 1 == 0 {
                    self.send(&frame(SETTINGS, 1, 0, &[])).await;
                }
                if stream == 1 && matches!(kind, DATA | HEADERS) && flags & END_STREAM != 0 {
                    self.answered = true;
                }
            }
        }
    }

    async fn ping(&mut self) {
        self.send(&frame(PING, 0, 0, &[7; 8])).await;
        self.read_for(Duration::from_millis(250)).await;
    }
}

#[tokio::test]
async fn pings_do_not_keep_an_http2_connection_without_open_streams() {
    let srv = Server::start_with(&[
        ("LIGHTBOX_HEADER_READ_TIMEOUT_S", "2"),
        ("LIGHTBOX_IDLE_TIMEOUT_S", "60"),
        ("LIGHTBOX_BODY_READ_TIMEOUT_S", "30"),
    ]);
    let mut c = Client::open(&srv).await;
    c.send(&post_rpc_headers()).await;
    // The body comes over 4 s, twice the keep-alive wait, with PINGs
    // between its pieces: an open request keeps the connection.
    c.send(&frame(
        DATA,
        0,
        1,
        br#"{"jsonrpc":"2.0","id":1,"method":"no.such""#,
    ))
    .await;
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
    let deadline = Instant::now() + Duration::from_secs(10);
    while !c.answered && !c.closed && Instant::now() < deadline {
        c.read_for(Duration::from_millis(100)).await;
    }
    assert!(c.answered && !c.closed, "the request got no answer");
    // Then no stream is open: PINGs every 0.5 s (the idle watchdog's 60 s
    // would never fire) do not keep the connection past the 2 s wait.
    let answered = Instant::now();
    while !c.closed && answered.elapsed() < Duration::from_secs(20) {
        c.ping().await;
        c.ping().await;
    }
    let held = answered.elapsed();
    assert!(c.closed, "still open after {held:?}");
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

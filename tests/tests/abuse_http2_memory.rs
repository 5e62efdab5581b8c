//! Issue 54, item 2: HTTP/2 streams whose client never reads its socket
//! hold a bounded amount of memory. The client grants every window (so
//! hyper asks each stream's body for data at once) and reads nothing;
//! before, each of its 16 streams per connection pinned a 256 KiB file
//! chunk until the idle timeout. Its own binary: 64 connections would
//! disturb the connection counts other abuse tests assert.

use lightbox_e2e::h2::{frame, END_HEADERS, END_STREAM, HEADERS, SETTINGS, WINDOW_UPDATE};
use lightbox_e2e::{proc, Server};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

const CONNECTIONS: usize = 64;
const STREAMS: u32 = 16;

/// `GET path` on `stream` as HPACK literals; the path's length as HPACK's
/// 7-bit-prefixed integer (a download link is longer than 126 bytes).
fn get(stream: u32, path: &str) -> Vec<u8> {
    let mut h = vec![0x82, 0x86, 0x04];
    let mut n = path.len();
    if n < 127 {
        h.push(n as u8);
    } else {
        h.push(127);
        n -= 127;
        while n >= 128 {
            h.push((n % 128) as u8 | 0x80);
            n /= 128;
        }
        h.push(n as u8);
    }
    h.extend_from_slice(path.as_bytes());
    frame(HEADERS, END_STREAM | END_HEADERS, stream, &h)
}

/// A connection that grants 1 GiB of window to every stream and to the
/// connection, asks for `path` on `STREAMS` streams and never reads.
async fn never_reading(srv: &Server, path: &str) -> TcpStream {
    let mut tcp = TcpStream::connect(srv.url.trim_start_matches("http://"))
        .await
        .expect("connect");
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    // SETTINGS_INITIAL_WINDOW_SIZE (4) = 1 GiB.
    out.extend(frame(SETTINGS, 0, 0, &[0, 4, 0x40, 0, 0, 0]));
    out.extend(frame(WINDOW_UPDATE, 0, 0, &(1u32 << 30).to_be_bytes()));
    for i in 0..STREAMS {
        out.extend(get(1 + 2 * i, path));
    }
    tcp.write_all(&out).await.expect("send the requests");
    tcp
}

/// The RSS once it has not grown by more than 2 MiB for `quiet`.
async fn settled_rss(pid: u32, quiet: Duration) -> u64 {
    let start = Instant::now();
    let (mut high, mut since) = (proc::rss_mb(pid), Instant::now());
    while since.elapsed() < quiet && start.elapsed() < Duration::from_secs(60) {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = proc::rss_mb(pid);
        if now > high + 2 {
            (high, since) = (now, Instant::now());
        }
        high = high.max(now);
    }
    high
}

#[tokio::test]
async fn http2_streams_nobody_reads_hold_a_bounded_amount_of_memory() {
    // The streams must still be held when RSS is read.
    let srv = Server::start_with(&[("LIGHTBOX_IDLE_TIMEOUT_S", "120")]);
    let t = srv.admin_token().await;
    srv.big_archive(&t).await;
    let photos = srv.ok(Some(&t), "image.list", json!({})).await;
    let id = photos["items"][0]["id"].clone();
    let link = srv
        .ok(
            Some(&t),
            "image.downloadToken",
            json!({"id": id, "variant": "full"}),
        )
        .await;
    let url = link["url"].as_str().expect("a link");
    let path = &url[url.find("/api/").expect("a download path")..];
    let idle = settled_rss(srv.pid(), Duration::from_secs(4)).await;
    let mut held = Vec::new();
    for _ in 0..CONNECTIONS {
        held.push(never_reading(&srv, path).await);
    }
    let loaded = settled_rss(srv.pid(), Duration::from_secs(4)).await;
    let streams = CONNECTIONS * STREAMS as usize;
    assert!(
        loaded <= idle + 64,
        "{streams} unread HTTP/2 streams took RSS from {idle} to {loaded} MiB"
    );
    // A client that reads still gets its download.
    let (status, body, _) = srv.fetch(path).await;
    assert_eq!(status, 200);
    assert!(body.len() > 16_000_000, "{}", body.len());
    eprintln!("{streams} unread streams: RSS {idle} -> {loaded} MiB");
    drop(held);
}

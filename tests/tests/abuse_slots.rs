//! Issue 54, item 7: a few addresses sending slow bodies cannot take every
//! connection slot. Four addresses at the per-address cap once held all of
//! them (4 x 256 of 1,024), and a fifth client's `/healthz` waited 30 s:
//! the last eighth of the slots is kept for addresses holding few, the
//! probes are answered on the metrics listener too, and a JSON-RPC body
//! must arrive within 30 s however steadily it comes. Raw sockets from
//! distinct loopback addresses, so the server sees four clients.

use lightbox_e2e::{eventually, metric, Server};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn addr(url: &str) -> std::net::SocketAddr {
    url.trim_start_matches("http://").parse().unwrap()
}

/// A connection to `to` from the loopback address `source`.
async fn connect_from(to: &str, source: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(addr(to)).await.unwrap()
}

/// `GET path` on a fresh connection from `source`: the status, or `None`
/// when nothing came back within 5 s.
async fn get_from(to: &str, source: &str, path: &str) -> Option<u16> {
    let mut s = connect_from(to, source).await;
    let ask = format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    s.write_all(ask.as_bytes()).await.ok()?;
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), s.read_to_end(&mut answer)).await;
    read.ok()?.ok()?;
    String::from_utf8_lossy(&answer).get(9..12)?.parse().ok()
}

/// A head announcing a megabyte of JSON, which a slow body never finishes.
const SLOW_HEAD: &str = "POST /rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\
                         Content-Length: 1048576\r\n\r\n";

/// Sends the head on `s` and then 4 KiB a second (four times the least
/// pace) until the server closes the connection or `stop` passes: what
/// the server answered, and whether it closed the connection before then.
async fn slow_body(s: TcpStream, stop: Instant) -> (String, bool) {
    let (mut rd, mut wr) = s.into_split();
    let drip = tokio::spawn(async move {
        let _ = wr.write_all(SLOW_HEAD.as_bytes()).await;
        while Instant::now() < stop && wr.write_all(&[b' '; 4096]).await.is_ok() {
            tokio::time::sleep(Duration::from_secs(1)).await;
        }
        wr
    });
    let mut answer = Vec::new();
    let left = stop.saturating_duration_since(Instant::now());
    let read = tokio::time::timeout(left, rd.read_to_end(&mut answer)).await;
    drip.abort();
    let text = String::from_utf8_lossy(&answer).into_owned();
    (text, read.is_ok())
}

#[tokio::test]
async fn slow_bodies_from_four_addresses_leave_the_probes_answering() {
    // The attack of the issue at a sixteenth of the scale: 4 x 16 of 64.
    let srv = Server::start_with(&[
        ("LIGHTBOX_MAX_CONNECTIONS", "64"),
        ("LIGHTBOX_MAX_CONNECTIONS_PER_ADDRESS", "16"),
        ("LIGHTBOX_IDLE_TIMEOUT_S", "60"),
    ]);
    let probes = srv.metrics_url.clone().expect("a metrics listener");
    let sources = ["127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"];
    // Within the 30 s an RPC body may take, so the checks below run while
    // every slow body is still held.
    let stop = Instant::now() + Duration::from_secs(25);
    // Connected one after another, round robin: the server accepts them
    // in that order, so each address holds 14 when only the reserve is
    // left.
    let mut attack = Vec::new();
    for _ in 0..16 {
        for source in sources {
            let s = connect_from(&srv.url, source).await;
            attack.push(tokio::spawn(slow_body(s, stop)));
        }
    }
    // The reserve's 8 slots are refused to those addresses.
    eventually(
        Duration::from_secs(10),
        "the reserve to refuse the attack",
        || async {
            let refused = metric(&srv.metrics().await, "lightbox_connections_refused_total");
            (refused >= 8.0).then_some(())
        },
    )
    .await;

    // The probes on the metrics listener answer at once.
    for path in ["/healthz", "/readyz"] {
        let started = Instant::now();
        assert_eq!(
            get_from(&probes, "127.0.0.1", path).await,
            Some(200),
            "{path}"
        );
        assert!(started.elapsed() < Duration::from_secs(2), "{path}");
    }
    // A newcomer gets a reserved slot on the public port; the attackers
    // get no more.
    assert_eq!(get_from(&srv.url, "127.0.0.6", "/healthz").await, Some(200));
    assert_eq!(get_from(&srv.url, "127.0.0.2", "/healthz").await, None);
    assert!(
        Instant::now() < stop,
        "the checks ran after the attack ended"
    );

    // The slow bodies the server took were held, not answered, all along.
    let mut held = 0;
    for a in attack {
        let (answer, closed) = a.await.unwrap();
        assert!(answer.is_empty(), "{answer}");
        held += usize::from(!closed);
    }
    assert_eq!(held, 56, "slow bodies held of 64 slots");
}

#[tokio::test]
async fn a_steady_rpc_body_is_cut_after_30_s() {
    // Four times the least pace, so only the body's time limit cuts it;
    // the old limit was the 300 s of an upload.
    let srv = Server::start_with(&[("LIGHTBOX_IDLE_TIMEOUT_S", "60")]);
    let started = Instant::now();
    let stop = started + Duration::from_secs(45);
    let s = connect_from(&srv.url, "127.0.0.1").await;
    let (answer, _) = slow_body(s, stop).await;
    let took = started.elapsed();
    assert!(answer.starts_with("HTTP/1.1 408"), "{took:?}: {answer}");
    assert!(answer.contains("-32600"), "{answer}");
    assert!(
        took > Duration::from_secs(29) && took < Duration::from_secs(35),
        "{took:?}"
    );
}

//! `/i/` sends renders on the local disk with `sendfile` behind placeholder
//! chunks (api/src/server/sendfile.rs). Whatever the order and mix of requests
//! on one connection, the bytes on the wire must be the stored file's.

use lightbox_e2e::{corpus, Server};
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// One parsed response: status, headers (lower-case names) and body.
struct Answer {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        let found = self.headers.iter().find(|(k, _)| k == name);
        found.map(|(_, v)| v.as_str())
    }
}

/// Reads `count` responses off `raw`; `bodiless[i]` for a HEAD or 304.
fn parse(mut raw: &[u8], bodiless: &[bool]) -> Vec<Answer> {
    let mut out = Vec::new();
    for &no_body in bodiless {
        let end = raw
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a complete head");
        let head = std::str::from_utf8(&raw[..end]).expect("an ASCII head");
        let mut lines = head.split("\r\n");
        let status = lines.next().unwrap()[9..12].parse().unwrap();
        let headers: Vec<(String, String)> = lines
            .map(|l| l.split_once(':').expect("a header line"))
            .map(|(k, v)| (k.to_ascii_lowercase(), v.trim().to_owned()))
            .collect();
        raw = &raw[end + 4..];
        let answer = Answer {
            status,
            headers,
            body: Vec::new(),
        };
        let len: usize = match answer.header("content-length") {
            Some(n) if !no_body => n.parse().unwrap(),
            _ => 0,
        };
        out.push(Answer {
            body: raw[..len].to_vec(),
            ..answer
        });
        raw = &raw[len..];
    }
    assert!(raw.is_empty(), "{} bytes after the last answer", raw.len());
    out
}

async fn exchange(srv: &Server, requests: &str, bodiless: &[bool]) -> Vec<Answer> {
    let addr = srv.url.trim_start_matches("http://");
    let mut tcp = TcpStream::connect(addr).await.unwrap();
    tcp.write_all(requests.as_bytes()).await.unwrap();
    let mut raw = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(30), tcp.read_to_end(&mut raw));
    read.await.expect("the answers in time").unwrap();
    parse(&raw, bodiless)
}

/// The file under the blob folder holding exactly `bytes`.
fn stored_file(srv: &Server, bytes: &[u8]) -> Option<PathBuf> {
    srv.blobs()
        .into_iter()
        .find(|p| std::fs::read(p).is_ok_and(|b| b == bytes))
}

fn stored(srv: &Server, bytes: &[u8]) -> bool {
    stored_file(srv, bytes).is_some()
}

/// A corpus JPEG uploaded and rendered: its ImageDTO.
async fn ready_photo(srv: &Server, t: &str, name: &str) -> Value {
    let (_, img) = srv
        .upload(Some(t), corpus(name), name, "image/jpeg", None)
        .await;
    srv.ready(t, &img["id"]).await
}

/// The URL of the render of `crop`.
fn url_of(ready: &Value, crop: &str) -> String {
    let renders = ready["renders"].as_array().unwrap();
    let r = renders.iter().find(|r| r["crop"] == crop).unwrap();
    r["url"].as_str().unwrap().to_owned()
}

/// A render URL's path and query.
fn path(url: &str) -> &str {
    &url[url.find("/i/").unwrap()..]
}

#[tokio::test]
async fn renders_sent_from_files_are_the_stored_bytes_on_a_busy_connection() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let ready = ready_photo(&srv, &t, "sunset_4272x2848.jpg").await;
    let (large, thumb) = (url_of(&ready, "large"), url_of(&ready, "thumb"));
    let (large, thumb) = (path(&large), path(&thumb));

    // Pipelined: a big render (from its file), HEAD (no body at all), a
    // range, a small render (a file of its own) between two file bodies, the
    // big one again, and a last request that closes the connection.
    let get = |p: &str, extra: &str| format!("GET {p} HTTP/1.1\r\nhost: x\r\n{extra}\r\n");
    let head = format!("HEAD {large} HTTP/1.1\r\nhost: x\r\n\r\n");
    let requests = [
        get(large, ""),
        head,
        get(large, "range: bytes=1000-60000\r\n"),
        get(thumb, ""),
        get(large, "range: bytes=-10\r\n"),
        get(large, "connection: close\r\n"),
    ]
    .concat();
    let bodiless = [false, true, false, false, false, false];
    let answers = exchange(&srv, &requests, &bodiless).await;
    let full = &answers[0].body;
    assert_eq!(answers[0].status, 200);
    assert!(full.len() > 64 << 10, "large is {} bytes", full.len());
    assert!(stored(&srv, full), "the large render is not a stored file");
    assert_eq!(answers[1].status, 200);
    assert_eq!(
        answers[1].header("content-length"),
        Some(full.len().to_string().as_str())
    );
    assert_eq!(answers[2].status, 206);
    assert_eq!(answers[2].body, full[1000..=60000]);
    assert_eq!(answers[3].status, 200);
    assert!(stored(&srv, &answers[3].body), "the thumb is not stored");
    assert_eq!(answers[4].status, 206);
    assert_eq!(answers[4].body, full[full.len() - 10..]);
    assert_eq!(answers[5].body, *full);
    assert_eq!(
        answers[5].header("content-type"),
        Some("image/webp"),
        "{:?}",
        answers[5].headers
    );
}

#[tokio::test]
async fn http2_clients_get_the_same_bytes() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let ready = ready_photo(&srv, &t, "kleiber_6028x3391.jpg").await;
    let h2 = reqwest::Client::builder()
        .http2_prior_knowledge()
        .build()
        .unwrap();
    for r in ready["renders"].as_array().unwrap() {
        let url = r["url"].as_str().unwrap();
        let resp = h2.get(url).send().await.unwrap();
        assert_eq!(resp.version(), reqwest::Version::HTTP_2);
        assert_eq!(resp.status().as_u16(), 200);
        let body = resp.bytes().await.unwrap();
        assert!(stored(&srv, &body), "{} over HTTP/2", r["crop"]);
        let (_, h1, _) = srv.fetch(path(url)).await;
        assert_eq!(h1, body, "{} over HTTP/1.1", r["crop"]);
        // A 304 carries no length but the 200's (RFC 9110, 8.6).
        let etag = srv.http().head(url).send().await.unwrap().headers()["etag"].clone();
        for client in [&h2, srv.http()] {
            let resp = client
                .get(url)
                .header("if-none-match", &etag)
                .send()
                .await
                .unwrap();
            assert_eq!(resp.status().as_u16(), 304, "{:?}", resp.version());
            if let Some(len) = resp.headers().get("content-length") {
                assert_eq!(
                    len.to_str().unwrap(),
                    body.len().to_string(),
                    "{:?}",
                    resp.version()
                );
            }
        }
    }
}

async fn large_render(srv: &Server, t: &str) -> (String, String) {
    let ready = ready_photo(srv, t, "sunset_4272x2848.jpg").await;
    let id = ready["id"].as_str().unwrap().to_owned();
    (id, url_of(&ready, "large"))
}

#[tokio::test]
async fn conditional_and_malformed_ranges_follow_rfc_9110() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let (_, url) = large_render(&srv, &t).await;
    let full = srv.http().get(&url).send().await.unwrap();
    let etag = full.headers()["etag"].to_str().unwrap().to_owned();
    let full = full.bytes().await.unwrap();
    let get = |headers: &[(&str, String)]| {
        let mut req = srv.http().get(&url);
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        req.send()
    };
    let range = ("range", "bytes=0-9".to_owned());
    // If-Range naming the current tag: the range; another tag or a date:
    // the whole body, as the client's copy is of other bytes.
    let r = get(&[range.clone(), ("if-range", etag.clone())])
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 206);
    for other in ["\"large.v0.1\"", "Wed, 21 Oct 2015 07:28:00 GMT"] {
        let r = get(&[range.clone(), ("if-range", other.to_owned())])
            .await
            .unwrap();
        assert_eq!(r.status().as_u16(), 200, "{other}");
        assert_eq!(r.bytes().await.unwrap(), full);
    }
    // Weak comparison for If-None-Match.
    let r = get(&[("if-none-match", format!("W/{etag}"))])
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 304);
    // A malformed Range is ignored; a huge end is clamped.
    for bad in ["bytes=abc", "=0-1", "bytes=9-2"] {
        let r = get(&[("range", bad.to_owned())]).await.unwrap();
        assert_eq!(r.status().as_u16(), 200, "{bad}");
        assert_eq!(r.bytes().await.unwrap(), full, "{bad}");
    }
    let r = get(&[("range", "bytes=5-999999999999999999999".to_owned())])
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 206);
    assert_eq!(r.bytes().await.unwrap(), full[5..]);
}

/// Open descriptors of the server's files that were unlinked.
fn deleted_open(srv: &Server) -> usize {
    let fds = std::fs::read_dir(format!("/proc/{}/fd", srv.pid())).unwrap();
    fds.flatten()
        .filter_map(|e| std::fs::read_link(e.path()).ok())
        .filter(|p| p.starts_with(srv.data.0.join("blobs")))
        .filter(|p| p.to_string_lossy().ends_with(" (deleted)"))
        .count()
}

#[tokio::test]
async fn a_deleted_render_holds_no_disk_space_and_a_changed_file_is_refused() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let (id, url) = large_render(&srv, &t).await;
    let (_, other) = large_render(&srv, &t).await;
    for u in [&url, &other] {
        assert_eq!(srv.http().get(u).send().await.unwrap().status(), 200);
    }
    srv.ok(Some(&t), "image.delete", serde_json::json!({ "id": id }))
        .await;
    assert_eq!(srv.http().get(&url).send().await.unwrap().status(), 404);
    lightbox_e2e::eventually(Duration::from_secs(20), "the descriptor closed", || async {
        (deleted_open(&srv) == 0).then_some(())
    })
    .await;

    // A file cut short behind the store's back: refused, never a short body.
    let (_, body, _) = srv.fetch(path(&other)).await;
    let file = stored_file(&srv, &body).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&file)
        .unwrap()
        .set_len(1000)
        .unwrap();
    let r = srv.http().get(&other).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 500);
}

/// Plain `/i/` GETs are answered without the router (`renders::Direct`),
/// HEADs through it: both must give the same answer, and a spelling of the
/// path other than the plain one names nothing on either.
#[tokio::test]
async fn the_direct_render_route_answers_as_the_router_does() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let ready = ready_photo(&srv, &t, "sunset_4272x2848.jpg").await;
    let large = url_of(&ready, "large");
    let plain = path(&large).to_owned();
    // `%6C` is `l`: the router would decode it to the same render.
    let encoded = plain.replacen("/large.", "/%6Carge.", 1);
    let missing = plain.replacen("/large.", "/nothere.", 1);
    let ask = |m: &str, p: &str, extra: &str| format!("{m} {p} HTTP/1.1\r\nhost: x\r\n{extra}\r\n");
    let browser = "accept: text/html,*/*;q=0.8\r\n";
    let first = exchange(&srv, &ask("GET", &plain, "connection: close\r\n"), &[false]).await;
    let etag = first[0].header("etag").unwrap().to_owned();
    // Pairs, direct GET then routed HEAD: whole, 304, 206, 416.
    let asks = [
        String::new(),
        format!("if-none-match: {etag}\r\n"),
        "range: bytes=100-199\r\n".to_owned(),
        "range: bytes=99999999-\r\n".to_owned(),
    ];
    let mut requests: Vec<String> = asks
        .iter()
        .flat_map(|extra| [ask("GET", &plain, extra), ask("HEAD", &plain, extra)])
        .collect();
    requests.push(ask("GET", &encoded, ""));
    requests.push(ask("HEAD", &encoded, ""));
    requests.push(ask("GET", &missing, browser));
    requests.push(ask("GET", &missing.replacen("/i/", "/i/%2F", 1), browser));
    requests.push(ask("GET", &missing, "connection: close\r\n"));
    let mut bodiless = [false; 13];
    for i in [1, 2, 3, 5, 7, 9] {
        bodiless[i] = true;
    }
    let answers = exchange(&srv, &requests.concat(), &bodiless).await;
    let without_date = |a: &Answer| {
        let mut h: Vec<_> = a
            .headers
            .iter()
            .filter(|(k, _)| k != "date")
            .cloned()
            .collect();
        h.sort();
        h
    };
    for (pair, status) in answers[..8].chunks(2).zip([200, 304, 206, 416]) {
        let (direct, routed) = (&pair[0], &pair[1]);
        assert_eq!((direct.status, routed.status), (status, status));
        // hyper leaves the length out of a GET's 304 on HTTP/1, not a HEAD's.
        let (direct, mut routed) = (without_date(direct), without_date(routed));
        if status == 304 {
            routed.retain(|(k, _)| k != "content-length");
        }
        assert_eq!(direct, routed);
    }
    assert!(stored(&srv, &answers[0].body));
    assert_eq!(answers[4].body, answers[0].body[100..200]);
    let answers = &answers[8..];
    for encoded in &answers[..2] {
        assert_eq!(encoded.status, 404);
    }
    for browsed in &answers[2..4] {
        assert_eq!(browsed.status, 404);
        assert_eq!(
            browsed.header("content-type"),
            Some("text/html; charset=utf-8")
        );
    }
    assert_eq!(answers[4].status, 404);
    assert_eq!(
        answers[4].header("content-type"),
        Some("text/plain; charset=utf-8")
    );
    // A log line per request under the route's template, direct or routed.
    let logged = |logs: &str| {
        let lines = logs.lines();
        lines
            .filter(|l| l.contains("route=\"/i/{id}/{file}\""))
            .count()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while logged(&srv.logs()) < 14 && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(logged(&srv.logs()), 14, "{}", srv.logs());
}

//! Issue 53, item 3: what a burst of requests allocates goes back to the
//! system without waiting for a render. Its own binary: 200 concurrent
//! downloads would disturb the thread and connection counts the other
//! abuse tests assert.

use lightbox_e2e::{proc, Server};
use serde_json::json;
use std::time::Duration;

/// The lowest RSS seen over `quiet`, once it has stopped falling: what the
/// process holds idle.
async fn idle_rss(pid: u32, quiet: Duration) -> u64 {
    let mut low = proc::rss_mb(pid);
    let mut since = std::time::Instant::now();
    let start = std::time::Instant::now();
    while since.elapsed() < quiet {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "RSS never settles"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
        let now = proc::rss_mb(pid);
        if now + 2 < low {
            (low, since) = (now, std::time::Instant::now());
        }
        low = low.min(now);
    }
    low
}

#[tokio::test]
async fn memory_a_burst_of_downloads_took_goes_back_without_a_render() {
    let srv = Server::start_with(&[
        ("LIGHTBOX_ZIP_MAX", "200"),
        ("LIGHTBOX_ZIP_MAX_PER_FOLDER", "200"),
    ]);
    let t = srv.admin_token().await;
    let zip = srv.big_archive(&t).await;
    let photos = srv.ok(Some(&t), "image.list", json!({})).await;
    let id = photos["items"][0]["id"].clone();
    let full = srv
        .ok(
            Some(&t),
            "image.downloadToken",
            json!({"id": id, "variant": "full"}),
        )
        .await;
    let full = full["url"].as_str().unwrap().to_owned();
    let idle = idle_rss(srv.pid(), Duration::from_secs(6)).await;
    proc::reset_peak(srv.pid());
    // 200 at once, each read whole: the 16 MB photo, zipped or as it is.
    let fetches = (0..200).map(|i| {
        let path = if i % 2 == 0 { &zip } else { &full };
        let (http, url) = (reqwest::Client::new(), format!("{}{path}", srv.url));
        async move {
            let res = http.get(url).send().await.expect("a response");
            assert_eq!(res.status(), 200);
            res.bytes().await.expect("the zip").len()
        }
    });
    let sizes = futures::future::join_all(fetches).await;
    assert!(sizes.iter().all(|n| *n > 16_000_000), "{sizes:?}");
    let peak = proc::peak_mb(srv.pid());
    let back = std::time::Instant::now();
    let mut seen = Vec::new();
    loop {
        let rss = proc::rss_mb(srv.pid());
        seen.push(rss);
        if rss <= idle + 64 {
            break;
        }
        assert!(
            back.elapsed() < Duration::from_secs(10),
            "RSS not back within 64 MiB of idle {idle} MiB in 10 s (peak {peak} MiB), MiB every 250 ms: {seen:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    eprintln!(
        "idle {idle} MiB, peak {peak} MiB during the burst, back within 64 MiB in {:?}",
        back.elapsed()
    );
}

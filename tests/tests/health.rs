//! Liveness, readiness and request logs.

use lightbox_e2e::{eventually, Server, ADMIN_EMAIL, ADMIN_PASSWORD};
use serde_json::json;
use std::time::Duration;

#[tokio::test]
async fn healthz_and_readyz_follow_the_blob_store() {
    let srv = Server::start();
    let get = |path: &'static str| {
        let url = format!("{}{path}", srv.url);
        let http = srv.http().clone();
        async move {
            let r = http.get(url).send().await.unwrap();
            let ct = r.headers()["content-type"].to_str().unwrap().to_owned();
            (r.status().as_u16(), ct, r.text().await.unwrap())
        }
    };
    let (status, ct, body) = get("/healthz").await;
    assert_eq!((status, body.as_str()), (200, "ok\n"));
    assert!(ct.starts_with("text/plain"));
    assert_eq!(get("/readyz").await.0, 200);

    let blobs = srv.data.0.join("blobs");
    let moved = srv.data.0.join("blobs-away");
    std::fs::rename(&blobs, &moved).unwrap();
    let (status, _, body) = get("/readyz").await;
    assert_eq!(status, 503);
    assert!(
        body.contains("blob_store: unreachable") && body.contains("database: ok"),
        "{body}"
    );
    assert_eq!(
        get("/healthz").await.0,
        200,
        "liveness does not depend on dependencies"
    );

    std::fs::rename(&moved, &blobs).unwrap();
    eventually(Duration::from_secs(5), "readyz to recover", || async {
        (get("/readyz").await.0 == 200).then_some(())
    })
    .await;
}

#[tokio::test]
async fn one_log_line_per_request_and_no_secrets() {
    let srv = Server::start();
    let pair = srv.login(ADMIN_EMAIL, ADMIN_PASSWORD).await;
    let access = pair["access_token"].as_str().unwrap().to_owned();
    let refresh = pair["refresh_token"].as_str().unwrap().to_owned();
    let pat = srv
        .ok(Some(&access), "token.create", json!({"name": "logged?"}))
        .await["token"]
        .as_str()
        .unwrap()
        .to_owned();
    srv.ok(Some(&pat), "account.me", json!({})).await;
    srv.ok(None, "auth.refresh", json!({"refresh_token": refresh}))
        .await;
    srv.fail(
        None,
        "auth.login",
        json!({"email": ADMIN_EMAIL, "password": "a-wrong-secret"}),
    )
    .await;

    // Each request's line is written after its response: wait for all five.
    let logs = eventually(Duration::from_secs(5), "five request lines", || async {
        let l = srv.logs();
        (l.lines().filter(|line| line.contains("rpc=")).count() >= 5).then_some(l)
    })
    .await;
    let lines: Vec<&str> = logs.lines().filter(|l| l.contains("rpc=")).collect();
    assert!(lines.iter().any(|l| l.contains("auth.login")
        && l.contains("status=200")
        && l.contains("latency_ms=")));
    for secret in [ADMIN_PASSWORD, "a-wrong-secret", &access, &refresh, &pat] {
        assert!(!logs.contains(secret), "a secret reached the logs");
    }
}

#[tokio::test]
async fn metrics_count_calls_errors_uploads_and_renders() {
    let srv = Server::start();
    let token = srv.user("metrics@example.com", "metrics-password-1").await;
    srv.photo(&token, 900, 600, "counted").await;
    let code = srv
        .code(
            Some(&token),
            "image.get",
            serde_json::json!({"id": uuid::Uuid::new_v4()}),
        )
        .await;
    assert_eq!(code, 2001);
    // Only on the metrics listener, never on the public port.
    assert_eq!(srv.fetch("/metrics").await.0, 404);
    let page = srv.metrics().await;
    for needle in [
        "lightbox_rpc_requests_total{method=\"image.get\",outcome=\"2001\"} 1",
        "lightbox_errors_total{code=\"2001\"} 1",
        "lightbox_http_requests_total{route=\"/api/v1/images\",status=\"201\"} 1",
        "lightbox_renders_total{format=\"webp\",preset=\"thumb\"} 1",
        "lightbox_render_jobs_total{outcome=\"done\"} 1",
        "lightbox_render_duration_seconds_count{format=\"webp\",preset=\"large\"} 1",
        "lightbox_rpc_duration_seconds_bucket{method=\"auth.login\",le=\"+Inf\"}",
        "lightbox_queue_depth 0",
        "lightbox_outbox_pending 0",
    ] {
        assert!(page.contains(needle), "missing {needle}:\n{page}");
    }
    let uploaded: f64 = page
        .lines()
        .find_map(|l| l.strip_prefix("lightbox_upload_bytes_total "))
        .and_then(|v| v.parse().ok())
        .unwrap();
    assert!(uploaded > 1000.0);
}

//! Cluster mode end to end: lightbox-api and lightbox-worker processes over
//! PostgreSQL, NATS JetStream and an S3-compatible server. Every test name
//! starts with `cluster_`, so scripts/test.sh runs them once, not once per
//! database tier.

use futures::future::join_all;
use lightbox_e2e::cluster::{wait_status, Cluster, Relay, NATS};
use lightbox_e2e::{corpus, eventually, metric, Server, PHOTOS};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::Duration;

fn count(logs: &str, needle: &str) -> usize {
    logs.matches(needle).count()
}

async fn upload_all(api: &Server, token: &str, n: usize) -> Vec<String> {
    let photos: Vec<(Vec<u8>, &str, &str)> = PHOTOS
        .iter()
        .map(|(name, mime)| (corpus(name), *name, *mime))
        .collect();
    let mut ids = Vec::new();
    for batch in (0..n).collect::<Vec<_>>().chunks(4) {
        let uploads = batch.iter().map(|i| {
            let (bytes, name, mime) = &photos[i % photos.len()];
            api.upload(Some(token), bytes.clone(), name, mime, None)
        });
        for (status, img) in join_all(uploads).await {
            assert_eq!(status, 201, "{img}");
            ids.push(img["id"].as_str().unwrap().to_owned());
        }
    }
    ids
}

async fn all_images(api: &Server, token: &str) -> Vec<Value> {
    let page = api
        .ok(Some(token), "image.list", json!({"limit": 200}))
        .await;
    page["items"].as_array().unwrap().clone()
}

/// The blob key each render of a ready image must have, from its URL
/// `/i/{id}/{code}.{ext}?v={n}`.
fn expected_keys(img: &Value) -> Vec<String> {
    let id = img["id"].as_str().unwrap();
    img["renders"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let url = r["url"].as_str().unwrap();
            let file = url.rsplit('/').next().unwrap();
            let (name, version) = file.split_once("?v=").unwrap();
            assert_eq!(
                version, "1",
                "a render was produced at a second version: {url}"
            );
            let (code, ext) = name.split_once('.').unwrap();
            format!("renders/{id}/{code}.v{version}.{ext}")
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cluster_two_workers_and_a_sigkill_produce_every_render_exactly_once() {
    const N: usize = 200;
    let cluster = Cluster::new(
        format!("nats://{NATS}"),
        &[
            ("LIGHTBOX_NATS_ACK_WAIT_S", "3"),
            ("LIGHTBOX_WORKER_CONCURRENCY", "1"),
        ],
    )
    .await;
    let api = cluster.api();
    let mut doomed = cluster.worker();
    let survivor = cluster.worker();
    let token = api.user("many@example.com", "many-password-1").await;

    let ids = upload_all(&api, &token, N).await;
    assert_eq!(ids.len(), N);

    // Kill one worker in the middle of a render: it has started a job it has
    // not finished.
    eventually(
        Duration::from_secs(300),
        "the doomed worker mid-render",
        || async {
            let logs = doomed.logs();
            let (started, done) = (
                count(&logs, "render job started"),
                count(&logs, "renders up to date"),
            );
            (done >= 3 && started > done).then_some(())
        },
    )
    .await;
    doomed.kill();

    let images = eventually(Duration::from_secs(900), "every image ready", || async {
        let images = all_images(&api, &token).await;
        for img in &images {
            assert_ne!(img["status"], "failed", "{img}");
        }
        (images.len() == N && images.iter().all(|i| i["status"] == "ready")).then_some(images)
    })
    .await;

    let expected: BTreeSet<String> = images.iter().flat_map(expected_keys).collect();
    assert_eq!(expected.len(), N * 4, "four preset renders per image");
    let stored = cluster.s3.keys("renders/").await;
    let unique: BTreeSet<String> = stored.iter().cloned().collect();
    assert_eq!(unique.len(), stored.len(), "a key listed twice");
    assert_eq!(
        unique, expected,
        "the store holds exactly the renders, once each"
    );
    assert_eq!(cluster.s3.keys("originals/").await.len(), N);

    // The job the killed worker held came back to the other worker.
    let metrics = survivor.metrics().await;
    assert!(
        metric(&metrics, "lightbox_queue_redeliveries_total") >= 1.0,
        "no redelivery seen:\n{metrics}"
    );
    assert!(metrics.contains("lightbox_renders_total{format=\"webp\",preset=\"thumb\"}"));
    let api_metrics = api.metrics().await;
    assert!(metric(&api_metrics, "lightbox_upload_bytes_total") > 0.0);
    assert!(
        api_metrics.contains("lightbox_rpc_requests_total{method=\"image.list\",outcome=\"ok\"}")
    );
    assert!(api_metrics
        .contains("lightbox_http_requests_total{route=\"/api/v1/images\",status=\"201\"}"));
    assert_eq!(metric(&api_metrics, "lightbox_outbox_pending"), 0.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cluster_uploads_while_nats_is_down_are_rendered_when_it_returns() {
    let relay = Relay::start().await;
    let cluster = Cluster::new(relay.url(), &[("LIGHTBOX_WORKER_CONCURRENCY", "1")]).await;
    let api = cluster.api();
    let worker = cluster.worker();
    let token = api.user("outage@example.com", "outage-password-1").await;
    let ready = format!("{}/readyz", api.url);
    let body = wait_status(&ready, 200, Duration::from_secs(30)).await;
    assert_eq!(body, "database: ok\nblob_store: ok\nqueue: ok\n");
    wait_status(
        &format!("{}/readyz", worker.url),
        200,
        Duration::from_secs(30),
    )
    .await;

    let before = lightbox_e2e::synthetic_jpeg(900, 600, 1);
    let (status, first) = api
        .upload(Some(&token), before, "a.jpg", "image/jpeg", None)
        .await;
    assert_eq!(status, 201, "{first}");
    api.ready(&token, &first["id"]).await;

    relay.down();
    let body = wait_status(&ready, 503, Duration::from_secs(60)).await;
    assert_eq!(body, "database: ok\nblob_store: ok\nqueue: unreachable\n");
    let mut waiting = Vec::new();
    for seed in 2..5u8 {
        let bytes = lightbox_e2e::synthetic_jpeg(800, 600, seed);
        let (status, img) = api
            .upload(Some(&token), bytes, "b.jpg", "image/jpeg", None)
            .await;
        assert_eq!(status, 201, "an upload while NATS is away: {img}");
        assert_eq!(img["status"], "processing");
        waiting.push(img["id"].clone());
    }
    // The work is held in the database, not lost.
    let page = api.metrics().await;
    assert_eq!(metric(&page, "lightbox_outbox_pending"), 3.0, "{page}");
    for id in &waiting {
        let img = api.ok(Some(&token), "image.get", json!({ "id": id })).await;
        assert_eq!(img["status"], "processing");
    }
    // A call that asks to wait hears no news while NATS is away: it is
    // answered at its deadline with what the database holds, not an error.
    let (img, took) = api.get_waiting(&token, &waiting[0], 2).await;
    assert_eq!(img["status"], "processing", "{img}");
    assert!(
        took >= Duration::from_millis(1900),
        "answered early: {took:?}"
    );
    assert!(
        took < Duration::from_secs(10),
        "held past its deadline: {took:?}"
    );
    let deadline = "lightbox_image_waits_total{ended=\"deadline\"}";
    assert_eq!(metric(&api.metrics().await, deadline), 1.0);

    relay.up().await;
    let body = wait_status(&ready, 200, Duration::from_secs(60)).await;
    assert_eq!(body, "database: ok\nblob_store: ok\nqueue: ok\n");
    for id in &waiting {
        api.ready(&token, id).await;
    }
    let page = api.metrics().await;
    assert_eq!(metric(&page, "lightbox_outbox_pending"), 0.0);

    // With NATS back, news reaches waiting calls again: a new photo's call
    // ends when its renders are recorded (a small photo's take well under
    // a second), not at its deadline.
    let bytes = lightbox_e2e::synthetic_jpeg(320, 240, 7);
    let (status, img) = api
        .upload(Some(&token), bytes, "c.jpg", "image/jpeg", None)
        .await;
    assert_eq!(status, 201, "{img}");
    let (img, took) = api.get_waiting(&token, &img["id"], 5).await;
    assert_eq!(img["status"], "ready", "{img} after {took:?}");
    assert_eq!(metric(&api.metrics().await, deadline), 1.0, "{took:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cluster_worker_refuses_to_start_without_nats() {
    let out = std::process::Command::new(lightbox_e2e::bin("lightbox-worker"))
        .env_clear()
        .env("LIGHTBOX_DATA_DIR", std::env::temp_dir())
        .output()
        .expect("run lightbox-worker");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("NATS_URL"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cluster_a_job_failing_on_every_attempt_is_marked_failed_after_the_last() {
    let cluster = Cluster::new(
        format!("nats://{NATS}"),
        &[("LIGHTBOX_NATS_MAX_DELIVER", "2")],
    )
    .await;
    let api = cluster.api();
    // This worker looks for originals under a prefix that holds none, so
    // every attempt fails the way an unreachable store would.
    let worker = cluster.worker_with(&[(
        "LIGHTBOX_STORAGE_URL",
        &format!("s3://{}/elsewhere", lightbox_e2e::cluster::BUCKET),
    )]);
    let token = api.user("doomed@example.com", "doomed-password-1").await;
    let bytes = lightbox_e2e::synthetic_jpeg(640, 480, 9);
    let (status, img) = api
        .upload(Some(&token), bytes, "c.jpg", "image/jpeg", None)
        .await;
    assert_eq!(status, 201, "{img}");
    let failed = eventually(
        Duration::from_secs(60),
        "the image marked failed",
        || async {
            let got = api
                .ok(Some(&token), "image.get", json!({ "id": img["id"] }))
                .await;
            (got["status"] == "failed").then_some(got)
        },
    )
    .await;
    // The owner is told it was the service, not the file.
    assert_eq!(
        failed["failure_reason"], "the service could not render this photo after several attempts",
        "{failed}"
    );
    let logs = worker.logs();
    assert_eq!(count(&logs, "render job failed; will retry"), 1, "{logs}");
    assert_eq!(count(&logs, "render job failed for good"), 1, "{logs}");
    let page = worker.metrics().await;
    assert!(
        page.contains("lightbox_render_jobs_total{outcome=\"failed\"} 1"),
        "{page}"
    );
    assert!(
        page.contains("lightbox_render_jobs_total{outcome=\"retried\"} 1"),
        "{page}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cluster_sigterm_finishes_the_current_job_and_stops() {
    let cluster = Cluster::new(
        format!("nats://{NATS}"),
        &[("LIGHTBOX_WORKER_CONCURRENCY", "1")],
    )
    .await;
    let api = cluster.api();
    let mut worker = cluster.worker();
    let token = api.user("term@example.com", "term-password-1").await;
    let ids = upload_all(&api, &token, 3).await;
    eventually(Duration::from_secs(120), "a job in progress", || async {
        let logs = worker.logs();
        (count(&logs, "render job started") > count(&logs, "renders up to date")).then_some(())
    })
    .await;
    let status = worker.terminate();
    assert!(status.success(), "exit status {status:?}");
    let logs = worker.logs();
    assert_eq!(
        count(&logs, "render job started"),
        count(&logs, "renders up to date") + count(&logs, "handing the job back"),
        "every started job was finished or handed back:\n{logs}"
    );
    // What it did not take is still queued: a new worker renders the rest.
    let _next = cluster.worker();
    for id in &ids {
        api.ready(&token, &json!(id)).await;
    }
}

fn waits(page: &str, ended: &str) -> f64 {
    metric(
        page,
        &format!("lightbox_image_waits_total{{ended=\"{ended}\"}}"),
    )
}

/// `Prefer: wait` across processes: with no worker a call is held to its
/// deadline; an owner holds at most eight at once (the ninth is answered
/// at once); and the worker that renders the photo wakes the held calls
/// through NATS, not their deadlines.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cluster_a_waiting_get_is_held_bounded_and_woken_by_the_worker() {
    let cluster = Cluster::new(format!("nats://{NATS}"), &[]).await;
    let api = cluster.api();
    let token = api.user("patient@example.com", "patient-password-1").await;
    let bytes = lightbox_e2e::synthetic_jpeg(640, 480, 5);
    let (status, img) = api
        .upload(Some(&token), bytes, "w.jpg", "image/jpeg", None)
        .await;
    assert_eq!(status, 201, "{img}");
    let id = img["id"].clone();

    let (got, took) = api.get_waiting(&token, &id, 1).await;
    assert_eq!(got["status"], "processing", "{got}");
    assert!(took >= Duration::from_secs(1), "not held: {took:?}");
    assert_eq!(waits(&api.metrics().await, "deadline"), 1.0);

    // Deleting a photo answers the calls held on it at once: 2001.
    let doomed = processing(&api, &token, 6).await;
    let started = std::time::Instant::now();
    let delete = async {
        held_one(&api).await;
        api.ok(Some(&token), "image.delete", json!({ "id": doomed }))
            .await;
    };
    let (answer, ()) = tokio::join!(held_call(&api, &token, &doomed), delete);
    assert_eq!(answer["error"]["code"], 2001, "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "held to the deadline"
    );

    // Eight held: each asks again at its deadline until the photo is ready.
    let api = std::sync::Arc::new(api);
    let mut held = tokio::task::JoinSet::new();
    for _ in 0..8 {
        let (api, token, id) = (api.clone(), token.clone(), id.clone());
        held.spawn(async move {
            loop {
                let (got, _) = api.get_waiting(&token, &id, 5).await;
                if got["status"] == "ready" {
                    return got;
                }
                assert_eq!(got["status"], "processing", "{got}");
            }
        });
    }
    eventually(Duration::from_secs(30), "eight calls held", || async {
        let page = api.metrics().await;
        (metric(&page, "lightbox_image_waits_held") == 8.0).then_some(())
    })
    .await;
    let (got, took) = api.get_waiting(&token, &id, 5).await;
    assert_eq!(got["status"], "processing", "{got}");
    assert!(
        took < Duration::from_secs(4),
        "the ninth was held: {took:?}"
    );
    assert_eq!(waits(&api.metrics().await, "refused"), 1.0);

    let worker = cluster.worker();
    while let Some(done) = held.join_next().await {
        assert_eq!(done.expect("waiter")["status"], "ready");
    }
    let page = api.metrics().await;
    assert!(
        waits(&page, "settled") >= 1.0,
        "no held call was woken: {page}"
    );
    assert_eq!(metric(&page, "lightbox_image_waits_held"), 0.0);

    // Shutdown answers held calls at once rather than at their deadline.
    drop(worker);
    let late = processing(&api, &token, 7).await;
    let started = std::time::Instant::now();
    let stop = async {
        held_one(&api).await;
        let term = std::process::Command::new("kill")
            .args(["-TERM", &api.pid().to_string()])
            .status()
            .expect("kill");
        assert!(term.success());
    };
    let (answer, ()) = tokio::join!(held_call(&api, &token, &late), stop);
    assert_eq!(answer["result"]["status"], "processing", "{answer}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "held through shutdown"
    );
}

/// A new photo's id; with no worker running it stays `processing`.
async fn processing(api: &Server, token: &str, seed: u8) -> Value {
    let bytes = lightbox_e2e::synthetic_jpeg(320, 240, seed);
    let (status, img) = api
        .upload(Some(token), bytes, "p.jpg", "image/jpeg", None)
        .await;
    assert_eq!(status, 201, "{img}");
    img["id"].clone()
}

/// Resolves once the API holds one call.
async fn held_one(api: &Server) {
    eventually(Duration::from_secs(30), "a call held", || async {
        (metric(&api.metrics().await, "lightbox_image_waits_held") == 1.0).then_some(())
    })
    .await;
}

/// `image.get` with `Prefer: wait=5`: the whole JSON-RPC response.
async fn held_call(api: &Server, token: &str, id: &Value) -> Value {
    api.http()
        .post(format!("{}/rpc", api.url))
        .bearer_auth(token)
        .header("prefer", "wait=5")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "image.get", "params": {"id": id}}))
        .send()
        .await
        .expect("rpc")
        .json()
        .await
        .expect("json")
}

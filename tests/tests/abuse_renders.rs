//! Issue 17, items 5 and 8: render memory has a budget (a job over it
//! fails with a reason the owner sees, and the process never balloons),
//! pad canvases are capped at maxPixels, folder rules are counted, and
//! metrics label user-chosen crops by kind, never by code.

use lightbox_e2e::{eventually, proc, Server};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// A 1x15000 PNG: a few hundred bytes that ask for a huge pad canvas.
fn sliver() -> Vec<u8> {
    let img = image::GrayImage::from_pixel(1, 15000, image::Luma([128]));
    let mut out = Vec::new();
    image::DynamicImage::ImageLuma8(img)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

async fn upload_sliver(srv: &Server, t: &str) -> Value {
    let (status, img) = srv
        .upload(Some(t), sliver(), "s.png", "image/png", None)
        .await;
    assert_eq!(status, 201, "{img}");
    srv.ready(t, &img["id"]).await
}

fn huge_pad(id: &Value) -> Value {
    json!({"id": id, "code": "huge", "width": 15000, "height": 15000, "mode": "pad", "format": "jpg"})
}

/// A 15000x200 PNG of one grey: a few KB of 3 MP, whose pad canvas may
/// reach 16 times that (48 MP; a pad never outgrows the source's long side
/// either way): about 400 MB to render as a JPEG.
fn banner() -> Vec<u8> {
    let img = image::GrayImage::from_pixel(15000, 200, image::Luma([128]));
    let mut out = Vec::new();
    image::DynamicImage::ImageLuma8(img)
        .write_to(&mut std::io::Cursor::new(&mut out), image::ImageFormat::Png)
        .unwrap();
    out
}

#[tokio::test]
async fn a_job_over_the_memory_budget_fails_with_a_reason_and_memory_stays_flat() {
    let srv = Server::start_with(&[("LIGHTBOX_RENDER_MEMORY_MB", "256")]);
    let t = srv.admin_token().await;
    let (status, img) = srv
        .upload(Some(&t), banner(), "b.png", "image/png", None)
        .await;
    assert_eq!(status, 201, "{img}");
    let img = srv.ready(&t, &img["id"]).await;
    let base = proc::reset_peak(srv.pid());
    srv.ok(Some(&t), "image.crop.add", huge_pad(&img["id"]))
        .await;
    let failed = eventually(Duration::from_secs(60), "the job to fail", || async {
        let now = srv
            .ok(Some(&t), "image.get", json!({"id": img["id"]}))
            .await;
        (now["status"] == "failed").then_some(now)
    })
    .await;
    let reason = failed["failure_reason"].as_str().unwrap_or_default();
    assert!(reason.contains("budget"), "{failed}");
    let grew = proc::peak_mb(srv.pid()).saturating_sub(base);
    assert!(grew < 100, "peak RSS grew {grew} MiB");
    let (status, _, _) = srv.fetch("/healthz").await;
    assert_eq!(status, 200);
}

#[tokio::test]
async fn pad_canvases_never_exceed_max_pixels() {
    let dir = lightbox_e2e::TempDir::new();
    let config = dir.0.join("c.toml");
    std::fs::write(&config, "[render_quota]\nmaxPixels = 2000000\n").unwrap();
    let srv = Server::start_with(&[("LIGHTBOX_CONFIG", config.to_str().unwrap())]);
    let t = srv.admin_token().await;
    let img = upload_sliver(&srv, &t).await;
    srv.ok(Some(&t), "image.crop.add", huge_pad(&img["id"]))
        .await;
    let huge = eventually(Duration::from_secs(60), "the pad render", || async {
        let now = srv
            .ok(Some(&t), "image.get", json!({"id": img["id"]}))
            .await;
        assert_ne!(now["status"], "failed", "{now}");
        let renders = now["renders"].as_array().cloned().unwrap_or_default();
        renders
            .into_iter()
            .find(|r| r["crop"] == "huge" && r["pending"] == false)
    })
    .await;
    let pixels = huge["width"].as_u64().unwrap() * huge["height"].as_u64().unwrap();
    assert!(pixels <= 2_000_000, "{huge}");
}

#[tokio::test]
async fn a_folder_holds_at_most_ten_crop_rules() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let albums = srv.ok(Some(&t), "album.list", json!({})).await;
    let album = albums["items"][0]["id"].clone();
    let rule =
        |n: usize| json!({"album_id": album, "code": format!("r{n}"), "width": 64, "height": 64});
    for n in 0..10 {
        srv.ok(Some(&t), "album.crop.set", rule(n)).await;
    }
    let e = srv.fail(Some(&t), "album.crop.set", rule(10)).await;
    assert_eq!(e["code"], 4001, "{e}");
    assert_eq!(e["data"]["limit"], 10, "{e}");
    let detail = e["data"]["detail"].as_str().unwrap_or_default();
    assert!(detail.contains("at most 10 crop rules"), "{e}");
    // Changing an existing rule is still allowed.
    srv.ok(Some(&t), "album.crop.set", rule(3)).await;
}

#[tokio::test]
async fn racing_rules_never_pass_ten() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let albums = srv.ok(Some(&t), "album.list", json!({})).await;
    let album = albums["items"][0]["id"].clone();
    let sets = (0..24).map(|n| {
        let rule = json!({"album_id": album, "code": format!("p{n}"), "width": 64, "height": 64});
        srv.call(Some(&t), "album.crop.set", rule)
    });
    let answers = futures::future::join_all(sets).await;
    let set = answers.iter().filter(|a| a["result"].is_object()).count();
    let refused = answers
        .iter()
        .filter(|a| a["error"]["code"] == 4001)
        .count();
    assert_eq!((set, refused), (10, 14), "{answers:?}");
}

#[tokio::test]
async fn metrics_label_custom_crops_and_folder_rules_by_kind() {
    let metrics_addr = format!("127.0.0.1:{}", proc::free_port());
    let srv = Server::start_with(&[("LIGHTBOX_METRICS_LISTEN", &metrics_addr)]);
    // Metrics live only on their own listener, never on the public port
    // (which the chart's Ingress exposes).
    assert_eq!(srv.fetch("/metrics").await.0, 404);
    let t = srv.admin_token().await;
    let albums = srv.ok(Some(&t), "album.list", json!({})).await;
    let album = albums["items"][0]["id"].clone();
    let rule = json!({"album_id": album, "code": "secretrule", "width": 64, "height": 64});
    srv.ok(Some(&t), "album.crop.set", rule).await;
    let img = srv.photo(&t, 640, 480, "m").await;
    let crop = json!({"id": img["id"], "code": "secretface", "width": 32, "height": 32});
    srv.ok(Some(&t), "image.crop.add", crop).await;
    srv.ready(&t, &img["id"]).await;
    let text = eventually(
        Duration::from_secs(30),
        "custom renders counted",
        || async {
            let r = srv
                .http()
                .get(format!("http://{metrics_addr}/metrics"))
                .send()
                .await;
            let text = r
                .expect("the metrics listener answers")
                .text()
                .await
                .unwrap();
            text.contains("preset=\"custom\"").then_some(text)
        },
    )
    .await;
    assert!(text.contains("preset=\"folder_rule\""), "{text}");
    assert!(text.contains("preset=\"thumb\""), "presets keep their code");
    assert!(!text.contains("secretface") && !text.contains("secretrule"));
}

/// Renders keep the pages they free while more renders run (see
/// `limits::heap`), and hand them back once idle: after a burst of large
/// photos the process returns to about the size it started at.
#[tokio::test]
async fn memory_renders_free_goes_back_once_they_are_idle() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let base = proc::reset_peak(srv.pid());
    let mut ids = Vec::new();
    for name in [
        "elephants_5640x3172_prog.jpg",
        "picosdeeuropa_3264x2448.png",
        "kleiber_6028x3391.jpg",
        "bridge_4352x2448.webp",
    ] {
        let bytes = lightbox_e2e::corpus(name);
        let (status, img) = srv
            .upload(Some(&t), bytes, name, "application/octet-stream", None)
            .await;
        assert_eq!(status, 201, "{img}");
        ids.push(img["id"].clone());
    }
    for id in &ids {
        srv.ready(&t, id).await;
    }
    // The renders did take memory, so the drop below is a real one (JPEGs
    // this size decode at half scale, so they take less than they did).
    let grew = proc::peak_mb(srv.pid()).saturating_sub(base);
    assert!(
        grew > 100,
        "the renders peaked only {grew} MiB above the start"
    );
    let back = proc::within(Duration::from_secs(15), || {
        proc::rss_mb(srv.pid()) < base + 60
    })
    .await;
    let now = proc::rss_mb(srv.pid());
    assert!(
        back,
        "RSS {now} MiB after the renders went idle, {base} MiB before"
    );
}

/// A render job and the threads it starts (decoder, encoders) run 10
/// nice levels below the process, so request handling is favoured on a
/// busy machine; the runtime's request threads keep the process's nice.
#[tokio::test]
async fn renders_run_below_request_handling() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    // The progressive photo keeps the job's thread and its encoders busy
    // longest; libjpeg decodes it on the job's thread. A baseline one is
    // decoded by jpeg-decoder on a thread of its own.
    let names = ["elephants_5640x3172_prog.jpg", "kleiber_6028x3391.jpg"];
    // The last reading of each thread: a render thread is named a moment
    // before it lowers itself.
    let mut last: HashMap<(u32, String), i32> = HashMap::new();
    let mut base = 0;
    let seen_all = |last: &HashMap<(u32, String), i32>| {
        let renders = last.keys().filter(|(_, n)| n == "render").count();
        // The job's thread and at least one encoder, and the decoder.
        renders >= 2 && last.keys().any(|(_, n)| n == "jpeg-decode")
    };
    // Their decodes take a tenth of a second to a second, their encodes
    // about as long again: seen unless the machine is far faster, hence
    // a few photos.
    for name in names.iter().cycle().take(10) {
        let (status, img) = srv
            .upload(
                Some(&t),
                lightbox_e2e::corpus(name),
                name,
                "image/jpeg",
                None,
            )
            .await;
        assert_eq!(status, 201, "{img}");
        let id = img["id"].clone();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            for (tid, n, nice) in proc::thread_nices(srv.pid()) {
                if n == "lightbox-api" {
                    base = nice;
                } else if n == "render" || n == "jpeg-decode" || n.starts_with("tokio-r") {
                    last.insert((tid, n), nice);
                }
            }
            let img = srv.ok(Some(&t), "image.get", json!({ "id": id })).await;
            if img["status"] == "ready" || Instant::now() > deadline {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        srv.ready(&t, &id).await;
        if seen_all(&last) {
            break;
        }
    }
    assert!(seen_all(&last), "render threads not all seen: {last:?}");
    let render_nice = lightbox_core::render_job::priority::render_nice(base);
    let wrong: Vec<_> = last
        .iter()
        .filter(|((_, n), nice)| {
            let want = if n.starts_with("tokio-r") {
                base
            } else {
                render_nice
            };
            **nice != want
        })
        .collect();
    assert!(wrong.is_empty(), "process at nice {base}: {wrong:?}");
}

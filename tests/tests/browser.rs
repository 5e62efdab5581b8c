//! A real headless Chromium (Debian's `chromium`, which `scripts/test.sh`
//! installs) loads a public folder page from the running service: the
//! rendered DOM shows the photos, the browser fetched their renders, the
//! console stayed silent, and a screenshot is kept in
//! `target/artifacts/public-folder.png`.

use lightbox_e2e::Server;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";

/// Runs headless Chromium on `url` with `extra` flags; (stdout, stderr).
fn chromium(profile: &Path, url: &str, extra: &[&str]) -> (String, String) {
    assert!(
        Path::new(CHROMIUM).exists(),
        "{CHROMIUM} is missing: scripts/test.sh installs Debian's chromium package"
    );
    let out = Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--window-size=1280,1000",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(url)
        .output()
        .expect("run chromium");
    assert!(out.status.success(), "chromium failed: {out:?}");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn console_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains(":CONSOLE")).collect()
}

fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/artifacts");
    std::fs::create_dir_all(&dir).expect("artifacts folder");
    dir
}

#[tokio::test]
async fn chromium_renders_a_public_folder_without_console_errors() {
    let profile = std::env::temp_dir().join(format!("lbx-chromium-{}", std::process::id()));
    // The console check can fail: a page that logs is caught.
    let (_, noisy) = chromium(
        &profile.join("probe"),
        "data:text/html,<script>console.error('lbx-probe')</script>",
        &["--dump-dom"],
    );
    assert!(
        console_lines(&noisy)
            .iter()
            .any(|l| l.contains("lbx-probe")),
        "console messages are visible in the log: {noisy}"
    );

    let srv = Server::start();
    let t = srv.admin_token().await;
    let a = srv
        .ok(
            Some(&t),
            "album.create",
            json!({"name": "Browser check", "description": "Three photos"}),
        )
        .await["id"]
        .clone();
    let mut ids = Vec::new();
    for (i, title) in ["Harbour", "Meadow", "Ridge"].iter().enumerate() {
        let p = srv.photo(&t, 900 + 100 * i as u32, 600, title).await;
        srv.ok(
            Some(&t),
            "image.update",
            json!({"id": p["id"], "album_id": a}),
        )
        .await;
        ids.push(p["id"].as_str().unwrap().to_owned());
    }
    srv.ok(
        Some(&t),
        "album.sharing.setMode",
        json!({"album_id": a, "mode": "public", "alias": "browser-check"}),
    )
    .await;
    let url = format!("{}/a/browser-check", srv.url);

    let (dom, stderr) = chromium(&profile.join("dom"), &url, &["--dump-dom"]);
    assert!(dom.contains("<h1>Browser check</h1>"), "{dom}");
    assert_eq!(dom.matches("class=\"lbx-photo\"").count(), 3, "{dom}");
    for (id, title) in ids.iter().zip(["Harbour", "Meadow", "Ridge"]) {
        assert!(dom.contains(&format!("id=\"photo-{id}\"")), "{id}");
        assert!(dom.contains(title), "{title}");
    }
    assert_eq!(
        console_lines(&stderr),
        Vec::<&str>::new(),
        "no console output"
    );
    // The log names routes, not paths: count the renders served.
    let logs = srv.logs();
    let served = logs
        .lines()
        .filter(|l| l.contains("route=\"/i/{id}/{file}\"") && l.contains("status=200"))
        .count();
    assert!(
        served >= ids.len(),
        "the browser fetched the renders: {logs}"
    );
    assert!(
        logs.contains("route=\"/static/lightbox.css\""),
        "and the stylesheet"
    );

    let shot = artifacts().join("public-folder.png");
    let _ = std::fs::remove_file(&shot);
    let (_, stderr) = chromium(
        &profile.join("shot"),
        &url,
        &[&format!("--screenshot={}", shot.display())],
    );
    assert_eq!(console_lines(&stderr), Vec::<&str>::new());
    let png = image::open(&shot).expect("a screenshot");
    assert_eq!((png.width(), png.height()), (1280, 1000));
    let rgb = png.to_rgb8();
    let first = *rgb.get_pixel(0, 0);
    assert!(
        rgb.pixels().any(|p| *p != first),
        "the screenshot shows something"
    );
    let _ = std::fs::remove_dir_all(&profile);
}

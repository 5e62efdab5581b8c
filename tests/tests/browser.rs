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

/// playwright-core, which scripts/test.sh installs from npm.
fn playwright() -> PathBuf {
    let path = std::env::var_os("LIGHTBOX_PLAYWRIGHT")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../target/tools/playwright/node_modules/playwright-core")
        });
    assert!(
        path.exists(),
        "{} is missing: scripts/test.sh installs playwright-core from npm",
        path.display()
    );
    path
}

/// The folder page and a photo view at 1280 and 390 px, driven by
/// tests/browser/viewer.cjs: screenshots kept in target/artifacts/viewer,
/// no horizontal scroll, every image loaded, even rows, previous and next
/// by keyboard and link, the way back, and a silent console.
#[tokio::test]
async fn the_viewer_works_on_desktop_and_phone_widths() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let a = srv
        .ok(Some(&t), "album.create", json!({"name": "Viewer check"}))
        .await["id"]
        .clone();
    for (i, title) in ["Harbour", "Meadow at dawn, looking north", "Ridge"]
        .iter()
        .enumerate()
    {
        let p = srv.photo(&t, 1200 - 300 * i as u32, 800, title).await;
        srv.ok(
            Some(&t),
            "image.update",
            json!({"id": p["id"], "album_id": a}),
        )
        .await;
    }
    srv.ok(
        Some(&t),
        "album.sharing.setPolicy",
        json!({"album_id": a, "allow_download": true}),
    )
    .await;
    srv.ok(
        Some(&t),
        "album.sharing.setMode",
        json!({"album_id": a, "mode": "public", "alias": "viewer-check"}),
    )
    .await;
    let out = artifacts().join("viewer");
    std::fs::create_dir_all(&out).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("browser/viewer.cjs");
    let folder = format!("{}/a/viewer-check", srv.url);
    let run = Command::new("node")
        .arg(&script)
        .arg(&folder)
        .arg(&out)
        .env("LIGHTBOX_PLAYWRIGHT", playwright())
        .output()
        .expect("node");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let report: serde_json::Value = serde_json::from_str(&stdout).expect("a JSON report");
    for width in ["1280", "390"] {
        let r = &report[width];
        for (what, page) in [("folder", &r["folder"]), ("photo", &r["view"])] {
            assert!(
                page["overflow"].as_i64().unwrap() <= 0,
                "{width} px {what}: scrolls sideways: {page}"
            );
            let images = page["images"].as_array().unwrap();
            assert!(!images.is_empty(), "{width} {what}");
            assert!(
                images.iter().all(|i| i["ok"] == true),
                "{width} {what}: {page}"
            );
            let shot = out.join(format!("{what}-{width}.png"));
            let png = image::open(&shot).expect("a screenshot");
            assert_eq!(png.width(), width.parse::<u32>().unwrap(), "{shot:?}");
        }
        // Even rows: frames that share a row share a height.
        let frames = r["folder"]["frames"].as_array().unwrap();
        assert_eq!(frames.len(), 3);
        let mut rows: std::collections::BTreeMap<i64, Vec<i64>> = Default::default();
        for f in frames {
            rows.entry(f[0].as_i64().unwrap())
                .or_default()
                .push(f[1].as_i64().unwrap());
        }
        for heights in rows.values() {
            assert!(
                heights.windows(2).all(|w| w[0] == w[1]),
                "{width}: {frames:?}"
            );
        }
        assert_eq!(r["view"]["position"], "1 / 3", "{width}");
        assert_eq!(
            r["secondView"]["position"], "2 / 3",
            "{width}: keyboard next"
        );
        assert_ne!(r["first"], r["second"]);
        assert_eq!(r["previous"], r["first"], "{width}: previous");
        assert!(
            r["back"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{folder}#photo-")),
            "{width}: back {}",
            r["back"]
        );
        assert_eq!(r["console"], json!([]), "{width}: console");
    }
}

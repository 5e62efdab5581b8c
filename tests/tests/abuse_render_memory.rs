//! Issue 54, item 4: the render memory estimate is an upper bound. A noise
//! PNG (the content that makes encoders hold the most) rendered to an AVIF
//! as large as itself peaks below what `limits::memory::estimate` says,
//! measured from outside as the server's peak RSS (before, the estimate
//! counted 12 bytes per output pixel whatever the encoder, and the AVIF
//! pad of the issue peaked at 826 MB after being admitted at 454 MiB).
//! Its own binary: it reads the process's peak RSS.

use lightbox_core::domain::crop::CropSpec;
use lightbox_core::limits::memory;
use lightbox_e2e::{eventually, proc, Server};
use serde_json::{json, Value};
use std::time::Duration;

const SIDE: u32 = 1600;

fn noise_png(side: u32) -> Vec<u8> {
    let mut x: u32 = 0x2545_f491;
    let img = image::RgbImage::from_fn(side, side, |_, _| {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        image::Rgb([x as u8, (x >> 8) as u8, (x >> 16) as u8])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png)
        .expect("png");
    out.into_inner()
}

fn crop(id: &Value, code: &str, side: u32, mode: &str) -> Value {
    json!({"id": id, "code": code, "width": side, "height": side, "mode": mode, "format": "avif"})
}

/// The photo once its render `code` is done, or once it failed.
async fn settled(srv: &Server, t: &str, id: &Value, code: &str) -> Value {
    eventually(Duration::from_secs(180), "the render job", || async {
        let now = srv.ok(Some(t), "image.get", json!({"id": id})).await;
        let renders = now["renders"].as_array().cloned().unwrap_or_default();
        let done = renders
            .iter()
            .any(|r| r["crop"] == code && r["pending"] == false);
        (done || now["status"] == "failed").then_some(now)
    })
    .await
}

#[tokio::test]
async fn an_avif_render_of_noise_peaks_below_its_estimate() {
    let srv = Server::start_with(&[("LIGHTBOX_RENDER_MEMORY_MB", "512")]);
    let t = srv.admin_token().await;
    let png = noise_png(SIDE);
    let (status, img) = srv
        .upload(Some(&t), png.clone(), "n.png", "image/png", None)
        .await;
    assert_eq!(status, 201, "{img}");
    srv.ready(&t, &img["id"]).await;
    let base = proc::reset_peak(srv.pid());
    let add = crop(&img["id"], "big", SIDE, "fit");
    srv.ok(Some(&t), "image.crop.add", add.clone()).await;
    let now = settled(&srv, &t, &img["id"], "big").await;
    assert_eq!(now["status"], "ready", "{now}");
    let spec: CropSpec = serde_json::from_value(add).expect("a crop spec");
    let estimate_mb = memory::estimate(&png, &[spec]).expect("a PNG header") >> 20;
    let grew = proc::peak_mb(srv.pid()).saturating_sub(base);
    eprintln!("{SIDE}x{SIDE} noise to AVIF: peak grew {grew} MiB, estimate {estimate_mb} MiB");
    assert!(
        grew <= estimate_mb,
        "peak grew {grew} MiB over an estimate of {estimate_mb} MiB"
    );
}

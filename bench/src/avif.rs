//! AVIF beside WebP: each file is decoded and shrunk to 1280 px wide once
//! (the `medium` preset), then encoded as WebP (libwebp, q80) and as AVIF
//! (rav1e through ravif) at each speed in `SPEEDS` (default 4,6,8,10) and
//! each quality in `QUALITIES` (render qualities; default 80). Prints one
//! JSON line per encode: format, speed, quality, milliseconds, bytes.

use lightbox_domain::crop::{CropSpec, Mode};
use lightbox_render::cascade::render_all;
use lightbox_render::encode::avif;
use lightbox_render::pipeline::Decoded;
use std::time::Instant;

fn list(name: &str, default: &str) -> Vec<u8> {
    std::env::var(name)
        .unwrap_or_else(|_| default.into())
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect()
}

fn medium(bytes: &[u8]) -> Decoded {
    let img = image::load_from_memory(bytes).expect("decode");
    let img = img
        .resize(1280, 1280, image::imageops::FilterType::Lanczos3)
        .into_rgb8();
    let (width, height) = img.dimensions();
    Decoded {
        pixels: img.into_raw(),
        width,
        height,
        alpha: false,
        source: (width, height),
    }
}

fn line(file: &str, format: &str, speed: u8, quality: u8, ms: f64, bytes: usize) {
    println!(
        "{{\"file\":\"{file}\",\"format\":\"{format}\",\"speed\":{speed},\"quality\":{quality},\"ms\":{ms:.0},\"bytes\":{bytes}}}"
    );
}

fn main() {
    let (speeds, qualities) = (list("SPEEDS", "4,6,8,10"), list("QUALITIES", "80"));
    for path in std::env::args().skip(1) {
        let name = path.rsplit('/').next().unwrap_or(&path).to_owned();
        let src = medium(&std::fs::read(&path).expect("read input"));
        for &q in &qualities {
            let mut spec = CropSpec::new("medium", src.width, 0, Mode::Fit);
            spec.quality = q;
            let copy = src.clone();
            let started = Instant::now();
            let out = render_all(copy, &[spec]).expect("webp");
            let ms = started.elapsed().as_secs_f64() * 1000.0;
            line(&name, "webp", 0, q, ms, out[0].bytes.len());
            for &speed in &speeds {
                let started = Instant::now();
                let out = avif::encode_at(&src.pixels, src.width, src.height, false, q, speed)
                    .expect("avif");
                let ms = started.elapsed().as_secs_f64() * 1000.0;
                line(&name, "avif", speed, q, ms, out.len());
            }
        }
    }
}

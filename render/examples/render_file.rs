//! Renders the default presets of the files given, printing timings:
//! `cargo run --release -p lightbox-core --example render_file -- FILE...`

use lightbox_domain::crop::default_presets;
use lightbox_render::pipeline;
use std::time::Instant;

fn main() {
    for path in std::env::args().skip(1) {
        let bytes = std::fs::read(&path).expect("read");
        let t0 = Instant::now();
        let exif = lightbox_render::inspect::exif::read_container(&bytes);
        let decoded = pipeline::decode(&bytes, 200_000_000, &default_presets()).expect("decode");
        let (width, height) = (decoded.width, decoded.height);
        let t1 = Instant::now();
        let out =
            lightbox_render::cascade::render_all(decoded, &default_presets()).expect("render");
        let t2 = Instant::now();
        let sizes: Vec<String> = out
            .iter()
            .map(|o| format!("{}={}x{}:{}B", o.code, o.width, o.height, o.bytes.len()))
            .collect();
        println!(
            "{path}: {}x{} decode {:?} render {:?} {:?} exif taken_at={:?} orient={}",
            width,
            height,
            t1 - t0,
            t2 - t1,
            sizes,
            exif.taken_at,
            exif.orientation
        );
    }
}

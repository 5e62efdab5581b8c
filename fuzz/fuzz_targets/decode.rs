//! Probing and decoding through the render pipeline, as the upload and the
//! worker run them, with a small pixel budget and two small presets: any
//! input is an error or renders, never a panic or an over-budget buffer.
#![no_main]

use libfuzzer_sys::fuzz_target;
use lightbox_render::inspect::exif;
use lightbox_render::pipeline;
use lightbox_render::inspect::probe;
use lightbox_domain::crop::{CropSpec, Mode};

const MAX_PIXELS: u64 = 4_000_000;

fuzz_target!(|data: &[u8]| {
    let Some(format) = probe::sniff(data) else {
        return;
    };
    let _ = exif::read_container(data);
    let Some((w, h)) = probe::stored_size(data, format) else {
        return;
    };
    if w as u64 * h as u64 > MAX_PIXELS {
        return;
    }
    let specs = [
        CropSpec::new("thumb", 64, 64, Mode::Fill),
        CropSpec::new("small", 96, 0, Mode::Fit),
    ];
    if let Ok(decoded) = pipeline::decode(data, MAX_PIXELS, &specs) {
        if let Ok(outputs) = lightbox_render::cascade::render_all(decoded, &specs) {
            assert_eq!(outputs.len(), specs.len());
        }
    }
});

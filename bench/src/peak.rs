//! The peak memory of one render, measured: `render-peak FORMAT MODE SIDE`
//! renders a noise source to a SIDE x SIDE box in one encoder (`webp`,
//! `jpg`, `png`, `avif`), in `pad` mode from a 1 x SIDE strip (a canvas
//! far larger than its source, the attack) or in `fit` mode from a
//! SIDE x SIDE source, alpha or not (`ALPHA=1`). Prints one JSON line: the
//! peak RSS over the process's RSS at its start (the source included, as
//! a decode would hold it), in bytes per output pixel. `bench/budget.sh` runs it over the formats and sizes; the render
//! memory estimate (`core/src/limits/memory.rs`) must stay above it.

use lightbox_domain::crop::{CropSpec, Format, Mode};
use lightbox_render::cascade::render_all;
use lightbox_render::pipeline::Decoded;

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn noise(w: u32, h: u32, alpha: bool) -> Decoded {
    let ch = if alpha { 4 } else { 3 };
    let mut x: u32 = 0x9e37_79b9;
    let pixels = (0..w as usize * h as usize * ch)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    Decoded {
        pixels,
        width: w,
        height: h,
        alpha,
        source: (w, h),
    }
}

fn main() {
    let before = status_kib("VmRSS:") << 10;
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [format, mode, side] = args.as_slice() else {
        eprintln!("usage: render-peak webp|jpg|png|avif pad|fit SIDE");
        std::process::exit(2);
    };
    let side: u32 = side.parse().expect("SIDE is a number");
    let alpha = std::env::var("ALPHA").is_ok_and(|v| v == "1");
    let (mode, src) = match mode.as_str() {
        "pad" => (Mode::Pad, noise(1, side, alpha)),
        _ => (Mode::Fit, noise(side, side, alpha)),
    };
    let source_bytes = src.pixels.len() as u64;
    let mut spec = CropSpec::new("peak", side, side, mode);
    spec.format = Format::parse(format).expect("webp, jpg, png or avif");
    let out = render_all(src, &[spec]).expect("render");
    let peak = status_kib("VmHWM:") << 10;
    let pixels = side as u64 * side as u64;
    let over = peak.saturating_sub(before);
    println!(
        "{{\"format\":\"{format}\",\"mode\":\"{}\",\"side\":{side},\"alpha\":{alpha},\"source_bytes\":{source_bytes},\"peak_bytes\":{over},\"bytes_per_pixel\":{:.2},\"out_bytes\":{}}}",
        if mode == Mode::Pad { "pad" } else { "fit" },
        over as f64 / pixels as f64,
        out[0].bytes.len()
    );
}

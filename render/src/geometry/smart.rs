//! A content-aware crop in the manner of libvips's `attention` smartcrop:
//! every pixel of a small copy of the photo gets an interest score from
//! edges (detail), skin tones and saturation; the crop keeps the window of
//! the asked shape whose score is highest.

use crate::geometry::small::thumbnail;
use crate::pixels::Decoded;

/// Side of the analysed copy: enough to find objects, cheap to score.
const ANALYSE: u32 = 128;
/// libvips and smartcrop.js weigh skin far above detail and colour.
const W_EDGE: f32 = 1.0;
const W_SKIN: f32 = 1.8;
const W_SAT: f32 = 0.4;

/// The interest of each pixel of an RGBA image.
pub fn attention(rgba: &[u8], w: usize, h: usize) -> Vec<f32> {
    let lum: Vec<f32> = rgba
        .chunks_exact(4)
        .map(|p| (0.299 * p[0] as f32 + 0.587 * p[1] as f32 + 0.114 * p[2] as f32) / 255.0)
        .collect();
    let at = |x: usize, y: usize| lum[y * w + x];
    let mut out = vec![0.0; w * h];
    for y in 0..h {
        for x in 0..w {
            let c = at(x, y);
            // A 4-neighbour Laplacian: strong on edges and fine detail.
            let near = at(x.saturating_sub(1), y)
                + at((x + 1).min(w - 1), y)
                + at(x, y.saturating_sub(1))
                + at(x, (y + 1).min(h - 1));
            let edge = (4.0 * c - near).abs();
            let p = &rgba[(y * w + x) * 4..][..4];
            let a = p[3] as f32 / 255.0;
            out[y * w + x] = a * (W_EDGE * edge + W_SKIN * skin(p, c) + W_SAT * saturation(p, c));
        }
    }
    out
}

/// Closeness to a skin tone's chromaticity, in moderate light.
fn skin(p: &[u8], lum: f32) -> f32 {
    let (r, g, b) = (p[0] as f32, p[1] as f32, p[2] as f32);
    let mag = (r * r + g * g + b * b).sqrt().max(1.0);
    // smartcrop.js's skin colour, as a unit vector.
    let (sr, sg, sb): (f32, f32, f32) = (0.78, 0.57, 0.44);
    let norm = (sr * sr + sg * sg + sb * sb).sqrt();
    let d = ((r / mag - sr / norm).powi(2)
        + (g / mag - sg / norm).powi(2)
        + (b / mag - sb / norm).powi(2))
    .sqrt();
    let closeness = 1.0 - d;
    if closeness > 0.8 && (0.2..=0.95).contains(&lum) {
        (closeness - 0.8) * 5.0
    } else {
        0.0
    }
}

/// HSL-like saturation, ignoring the near-black and near-white.
fn saturation(p: &[u8], lum: f32) -> f32 {
    let max = p[..3].iter().copied().max().unwrap_or(0) as f32 / 255.0;
    let min = p[..3].iter().copied().min().unwrap_or(0) as f32 / 255.0;
    if max - min < 0.05 || !(0.05..=0.95).contains(&lum) {
        return 0.0;
    }
    let l = (max + min) / 2.0;
    let s = (max - min) / (1.0 - (2.0 * l - 1.0).abs()).max(1e-3);
    (s - 0.4).max(0.0)
}

/// The centre (fractions of width and height) of the window of
/// `fw` x `fh` (fractions of the photo) holding the most interest. Ties go
/// to the window nearest the middle, so a featureless photo stays centred.
pub fn best_centre(src: &Decoded, fw: f64, fh: f64) -> (f64, f64) {
    let (rgba, w, h) = thumbnail(src, ANALYSE);
    let (w, h) = (w as usize, h as usize);
    let score = attention(&rgba, w, h);
    let ww = ((fw * w as f64).round() as usize).clamp(1, w);
    let wh = ((fh * h as f64).round() as usize).clamp(1, h);
    // Summed-area table: every window's total in four lookups.
    let mut sat = vec![0.0f64; (w + 1) * (h + 1)];
    for y in 0..h {
        for x in 0..w {
            sat[(y + 1) * (w + 1) + x + 1] =
                score[y * w + x] as f64 + sat[y * (w + 1) + x + 1] + sat[(y + 1) * (w + 1) + x]
                    - sat[y * (w + 1) + x];
        }
    }
    let sum = |x: usize, y: usize| {
        sat[(y + wh) * (w + 1) + x + ww] - sat[y * (w + 1) + x + ww] - sat[(y + wh) * (w + 1) + x]
            + sat[y * (w + 1) + x]
    };
    let mid = ((w - ww) as f64 / 2.0, (h - wh) as f64 / 2.0);
    let mut best = (f64::MIN, mid.0, mid.1);
    for y in 0..=h - wh {
        for x in 0..=w - ww {
            let off = (x as f64 - mid.0).abs() + (y as f64 - mid.1).abs();
            let s = sum(x, y) - off * 1e-6;
            if s > best.0 {
                best = (s, x as f64, y as f64);
            }
        }
    }
    (
        (best.1 + ww as f64 / 2.0) / w as f64,
        (best.2 + wh as f64 / 2.0) / h as f64,
    )
}

/// Where a cover shown wide (about 2:1, as the visitor page's header is)
/// should sit: the centre of its most interesting band.
pub fn cover_point(src: &Decoded) -> (f64, f64) {
    let (w, h) = (src.source.0 as f64, src.source.1 as f64);
    let band = (w / 2.0 / h).min(1.0);
    let width = (h * 2.0 / w).min(1.0);
    best_centre(src, width, band)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::geometry::focus::aim;
    use crate::geometry::spec::plan;
    use lightbox_domain::crop::{CropSpec, Mode};
    use lightbox_domain::focus::Focus;

    /// A grey, softly graded landscape with one red, textured object near
    /// its right edge: what a centre crop cuts off.
    pub fn off_centre(w: u32, h: u32) -> Decoded {
        let mut pixels = Vec::with_capacity((w * h * 3) as usize);
        for y in 0..h {
            for x in 0..w {
                let inside = x > w * 4 / 5 && x < w * 19 / 20 && y > h / 3 && y < h * 2 / 3;
                let px = if inside {
                    let t = if (x / 4 + y / 4) % 2 == 0 { 40 } else { 0 };
                    [220 - t, 40 + t, 30]
                } else {
                    let g = 110 + (y * 20 / h) as u8;
                    [g, g, g]
                };
                pixels.extend(px);
            }
        }
        Decoded {
            pixels,
            width: w,
            height: h,
            alpha: false,
            source: (w, h),
        }
    }

    #[test]
    fn smart_keeps_the_object_a_centre_crop_cuts() {
        let src = off_centre(900, 300);
        let mut spec = CropSpec::new("s", 300, 300, Mode::Fill);
        let centred = plan(900, 300, &spec).source;
        spec.focus = Some(Focus::Smart);
        let smart = aim(plan(900, 300, &spec), &src, &spec).source;
        let object = (720.0, 855.0);
        assert!(
            centred.0 + centred.2 < object.0,
            "the centre crop misses it"
        );
        assert!(
            smart.0 <= object.0 && smart.0 + smart.2 >= object.1,
            "{smart:?}"
        );
    }

    #[test]
    fn a_featureless_photo_stays_centred() {
        let src = Decoded::flat(400, 200, 90);
        let (x, y) = best_centre(&src, 0.5, 1.0);
        assert!((x - 0.5).abs() < 0.02 && (y - 0.5).abs() < 0.02, "{x} {y}");
    }
}

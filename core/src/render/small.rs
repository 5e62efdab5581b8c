//! A small RGBA copy of decoded pixels, averaged over boxes: what the
//! smart crop scores and the placeholder hashes.

use super::pixels::Decoded;

/// The pixels shrunk to fit `max_side` (never enlarged), as RGBA8.
pub fn thumbnail(src: &Decoded, max_side: u32) -> (Vec<u8>, u32, u32) {
    let ch = if src.alpha { 4 } else { 3 };
    let (w, h) = (src.width.max(1), src.height.max(1));
    let scale = (max_side as f64 / w.max(h) as f64).min(1.0);
    let tw = ((w as f64 * scale).round() as u32).max(1);
    let th = ((h as f64 * scale).round() as u32).max(1);
    let mut out = Vec::with_capacity((tw * th * 4) as usize);
    for ty in 0..th {
        let (y0, y1) = (ty * h / th, ((ty + 1) * h / th).max(ty * h / th + 1));
        for tx in 0..tw {
            let (x0, x1) = (tx * w / tw, ((tx + 1) * w / tw).max(tx * w / tw + 1));
            let mut acc = [0u64; 4];
            for y in y0..y1.min(h) {
                let row = &src.pixels[(y * w) as usize * ch..];
                for x in x0..x1.min(w) {
                    let p = &row[x as usize * ch..][..ch];
                    for (i, v) in p.iter().enumerate() {
                        acc[i] += *v as u64;
                    }
                    if ch == 3 {
                        acc[3] += 255;
                    }
                }
            }
            let n = ((y1.min(h) - y0) * (x1.min(w) - x0)).max(1) as u64;
            out.extend(acc.map(|v| (v / n) as u8));
        }
    }
    (out, tw, th)
}

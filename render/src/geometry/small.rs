//! A small RGBA copy of decoded pixels, averaged over boxes: what the
//! smart crop scores and the placeholder hashes.

use crate::pixels::Decoded;

/// The pixels shrunk to fit `max_side` (never enlarged), as RGBA8: each
/// output pixel the mean of its box of source pixels.
pub fn thumbnail(src: &Decoded, max_side: u32) -> (Vec<u8>, u32, u32) {
    let ch = if src.alpha { 4 } else { 3 };
    let (w, h) = (src.width.max(1), src.height.max(1));
    let scale = (max_side as f64 / w.max(h) as f64).min(1.0);
    let tw = ((w as f64 * scale).round() as u32).clamp(1, w);
    let th = ((h as f64 * scale).round() as u32).clamp(1, h);
    // The boxes split the columns and the rows (tw <= w, th <= h), so one
    // pass in memory order adds each row's stretches to their boxes: the
    // photo is read once, not box by box.
    let (cols, rows) = (spans(w, tw), spans(h, th));
    let mut sums = vec![0u64; (tw * th * 4) as usize];
    let row_len = w as usize * ch;
    for (y, line) in src
        .pixels
        .chunks_exact(row_len)
        .take(h as usize)
        .enumerate()
    {
        let by = rows.partition_point(|&(_, end)| end <= y);
        let row_sums = &mut sums[by * tw as usize * 4..][..tw as usize * 4];
        for (&(a, b), acc) in cols.iter().zip(row_sums.chunks_exact_mut(4)) {
            let add = stretch_sum(&line[a * ch..b * ch], ch);
            for (s, v) in acc.iter_mut().zip(add) {
                *s += v;
            }
        }
    }
    let out = sums
        .chunks_exact(4)
        .enumerate()
        .flat_map(|(i, acc)| {
            let ((x0, x1), (y0, y1)) = (cols[i % tw as usize], rows[i / tw as usize]);
            let n = ((x1 - x0) * (y1 - y0)).max(1) as u64;
            [acc[0], acc[1], acc[2], acc[3]].map(|v| (v / n) as u8)
        })
        .collect();
    (out, tw, th)
}

/// The channel sums (RGBA, opaque when there are 3 channels) of one row's
/// stretch of pixels. u32 sums would need a stretch of 16.8 M pixels to
/// wrap: a stretch is a row over its box count, and no decode allowed by
/// the pixel limit has such rows.
fn stretch_sum(px: &[u8], ch: usize) -> [u64; 4] {
    if ch == 4 {
        sums::<4>(px)
    } else {
        let [r, g, b] = sums::<3>(px);
        [r, g, b, 255 * (px.len() / 3) as u64]
    }
}

/// Per-channel sums of `CH`-channel pixels; the channel count is a
/// constant so the sums stay in registers.
fn sums<const CH: usize>(px: &[u8]) -> [u64; CH] {
    let mut acc = [0u32; CH];
    for p in px.chunks_exact(CH) {
        for c in 0..CH {
            acc[c] = acc[c].wrapping_add(p[c] as u32);
        }
    }
    acc.map(u64::from)
}

/// The `t` boxes over `n` positions: box `i` covers `i * n / t .. (i + 1) * n / t`.
fn spans(n: u32, t: u32) -> Vec<(usize, usize)> {
    let at = |i: u32| (i as u64 * n as u64 / t as u64) as usize;
    (0..t).map(|i| (at(i), at(i + 1))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: each box averaged on its own.
    fn by_boxes(src: &Decoded, tw: u32, th: u32) -> Vec<u8> {
        let ch = if src.alpha { 4 } else { 3 };
        let (w, h) = (src.width, src.height);
        let mut out = Vec::new();
        for ty in 0..th {
            let (y0, y1) = (ty * h / th, (ty + 1) * h / th);
            for tx in 0..tw {
                let (x0, x1) = (tx * w / tw, (tx + 1) * w / tw);
                let mut acc = [0u64; 4];
                for y in y0..y1 {
                    for x in x0..x1 {
                        let p = &src.pixels[((y * w + x) as usize) * ch..][..ch];
                        for (i, v) in p.iter().enumerate() {
                            acc[i] += *v as u64;
                        }
                        if ch == 3 {
                            acc[3] += 255;
                        }
                    }
                }
                let n = ((y1 - y0) * (x1 - x0)) as u64;
                out.extend(acc.map(|v| (v / n) as u8));
            }
        }
        out
    }

    #[test]
    fn each_pixel_is_the_mean_of_its_box() {
        for (w, h, alpha, side) in [
            (1000, 667, false, 128),
            (667, 1000, true, 100),
            (301, 7, false, 128),
            (50, 40, true, 128),
            (1, 1, false, 100),
            (257, 129, false, 100),
        ] {
            let ch = if alpha { 4 } else { 3 };
            let pixels = (0..w * h * ch)
                .map(|i: usize| (i.wrapping_mul(7919).wrapping_add(i / 13) % 256) as u8)
                .collect();
            let src = Decoded {
                pixels,
                width: w as u32,
                height: h as u32,
                alpha,
                source: (w as u32, h as u32),
            };
            let (out, tw, th) = thumbnail(&src, side);
            assert!(tw.max(th) <= side.max(1) && tw <= w as u32 && th <= h as u32);
            assert_eq!(out, by_boxes(&src, tw, th), "{w}x{h} alpha {alpha}");
        }
    }
}

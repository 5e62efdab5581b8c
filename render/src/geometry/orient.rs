//! EXIF orientation applied to a decode. Phones store most portraits
//! rotated, so this runs on whole 12-50 MP frames: it walks the output in
//! square tiles, keeping both the rows it reads and the rows it writes in
//! cache, where a pixel-by-pixel rotation misses on every write.

use image::metadata::Orientation;

/// Tile side in pixels: 64 rows of 64 RGBA pixels on each side stay well
/// inside L1 and L2.
const TILE: usize = 64;

/// `pixels` (`w` x `h`, `channels` bytes a pixel) turned upright.
pub fn orient(
    pixels: Vec<u8>,
    w: u32,
    h: u32,
    channels: usize,
    o: Orientation,
) -> (Vec<u8>, u32, u32) {
    let (wi, hi) = (w as isize, h as isize);
    // Where output pixel (x, y) is read from: base + x * dx + y * dy.
    let (base, dx, dy, swap) = match o {
        Orientation::NoTransforms => return (pixels, w, h),
        Orientation::FlipHorizontal => (wi - 1, -1, wi, false),
        Orientation::Rotate180 => ((hi - 1) * wi + wi - 1, -1, -wi, false),
        Orientation::FlipVertical => ((hi - 1) * wi, 1, -wi, false),
        Orientation::Rotate90 => ((hi - 1) * wi, -wi, 1, true),
        Orientation::Rotate270 => (wi - 1, wi, -1, true),
        Orientation::Rotate90FlipH => (0, wi, 1, true),
        Orientation::Rotate270FlipH => ((hi - 1) * wi + wi - 1, -wi, -1, true),
    };
    let (ow, oh) = if swap { (h, w) } else { (w, h) };
    let map = Map {
        base,
        dx,
        dy,
        width: ow as usize,
        height: oh as usize,
    };
    let out = match channels {
        1 => remap::<1>(&pixels, &map),
        3 => remap::<3>(&pixels, &map),
        _ => remap::<4>(&pixels, &map),
    };
    (out, ow, oh)
}

struct Map {
    base: isize,
    dx: isize,
    dy: isize,
    width: usize,
    height: usize,
}

fn remap<const C: usize>(src: &[u8], m: &Map) -> Vec<u8> {
    let mut out = vec![0u8; m.width * m.height * C];
    for ty in (0..m.height).step_by(TILE) {
        for tx in (0..m.width).step_by(TILE) {
            for y in ty..(ty + TILE).min(m.height) {
                let row = &mut out[y * m.width * C..(y + 1) * m.width * C];
                let start = m.base + y as isize * m.dy;
                for x in tx..(tx + TILE).min(m.width) {
                    // In range by construction: every orientation maps the
                    // output rectangle onto the source one.
                    let at = (start + x as isize * m.dx) as usize * C;
                    row[x * C..x * C + C].copy_from_slice(&src[at..at + C]);
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::{DynamicImage, RgbImage, RgbaImage};

    const ALL: [Orientation; 8] = [
        Orientation::NoTransforms,
        Orientation::Rotate90,
        Orientation::Rotate180,
        Orientation::Rotate270,
        Orientation::FlipHorizontal,
        Orientation::FlipVertical,
        Orientation::Rotate90FlipH,
        Orientation::Rotate270FlipH,
    ];

    #[test]
    fn matches_the_image_crates_orientation_for_every_exif_value() {
        // Sizes not a multiple of the tile, so partial tiles are covered.
        let (w, h) = (131, 70);
        let rgb = RgbImage::from_fn(w, h, |x, y| image::Rgb([x as u8, y as u8, (x * y) as u8]));
        let rgba = RgbaImage::from_fn(w, h, |x, y| {
            image::Rgba([y as u8, x as u8, 7, (x + y) as u8])
        });
        for o in ALL {
            let mut want = DynamicImage::ImageRgb8(rgb.clone());
            want.apply_orientation(o);
            let got = orient(rgb.as_raw().clone(), w, h, 3, o);
            assert_eq!((got.1, got.2), (want.width(), want.height()), "{o:?}");
            assert!(got.0 == want.into_rgb8().into_raw(), "{o:?} rgb");

            let mut want = DynamicImage::ImageRgba8(rgba.clone());
            want.apply_orientation(o);
            let got = orient(rgba.as_raw().clone(), w, h, 4, o);
            assert!(got.0 == want.into_rgba8().into_raw(), "{o:?} rgba");
        }
    }
}

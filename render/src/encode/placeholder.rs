//! The photo's placeholder: a ThumbHash (about 25 bytes) of the decoded
//! pixels the render job already holds, and the tiny image visitor pages
//! paint from it while the photo loads.

use crate::geometry::small::thumbnail;
use crate::pixels::Decoded;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use image::ImageEncoder;
use lightbox_domain::focus::Point;

/// ThumbHash takes at most 100 x 100 pixels.
const HASH_SIDE: u32 = 100;

/// The ThumbHash of the pixels, base64 with the standard alphabet.
pub fn thumbhash(src: &Decoded) -> String {
    let (rgba, w, h) = thumbnail(src, HASH_SIDE);
    STANDARD.encode(thumbhash::rgba_to_thumb_hash(w as usize, h as usize, &rgba))
}

/// What the render job records of the pixels it decoded: the placeholder
/// and the most salient point (for covers with `cover_focus: smart`).
pub fn seen(src: &Decoded) -> (String, Point) {
    let (x, y) = crate::geometry::smart::cover_point(src);
    (thumbhash(src), Point { x, y })
}

/// A ThumbHash is at most about 32 bytes, 44 in base64; the decoder
/// ignores what follows, so a longer string is not one of ours.
const MAX_HASH: usize = 64;

/// The placeholder decoded into a small PNG, as a `data:` URL for an
/// `<img>` (pages run no script, so the browser cannot decode it itself).
/// `None` for anything that is not a ThumbHash. The sharing service keeps
/// what it made (`lightbox_core::sharing::placeholders`).
pub fn data_url(hash: &str) -> Option<String> {
    if hash.len() > MAX_HASH {
        return None;
    }
    let bytes = STANDARD.decode(hash).ok()?;
    let (w, h, rgba) = thumbhash::thumb_hash_to_rgba(&bytes).ok()?;
    let mut png = Vec::new();
    image::codecs::png::PngEncoder::new(&mut png)
        .write_image(&rgba, w as u32, h as u32, image::ExtendedColorType::Rgba8)
        .ok()?;
    Some(format!("data:image/png;base64,{}", STANDARD.encode(png)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_to_the_photos_rough_colours() {
        // Left half red, right half blue.
        let (w, h) = (120u32, 80u32);
        let pixels = (0..w * h)
            .flat_map(|i| {
                if i % w < w / 2 {
                    [200, 30, 30]
                } else {
                    [30, 40, 200]
                }
            })
            .collect();
        let src = Decoded {
            pixels,
            width: w,
            height: h,
            alpha: false,
            source: (w, h),
        };
        let hash = thumbhash(&src);
        let raw = STANDARD.decode(&hash).unwrap();
        assert!(raw.len() < 40, "{} bytes", raw.len());
        let (tw, th, rgba) = thumbhash::thumb_hash_to_rgba(&raw).unwrap();
        let px = |x: usize, y: usize| &rgba[(y * tw + x) * 4..][..3];
        let left = px(tw / 8, th / 2);
        let right = px(tw * 7 / 8, th / 2);
        assert!(left[0] > left[2] + 60, "left is red: {left:?}");
        assert!(right[2] > right[0] + 60, "right is blue: {right:?}");
        assert!(tw > th, "keeps the landscape shape");
        assert!(data_url(&hash)
            .unwrap()
            .starts_with("data:image/png;base64,"));
        assert!(data_url("not a hash").is_none());
    }

    fn tiny_hash() -> String {
        thumbhash(&Decoded::flat(8, 6, 90))
    }

    #[test]
    fn a_string_longer_than_any_thumbhash_is_not_one() {
        let mut raw = STANDARD.decode(tiny_hash()).unwrap();
        raw.extend([0; MAX_HASH]);
        let padded = STANDARD.encode(raw);
        assert!(
            thumbhash::thumb_hash_to_rgba(&STANDARD.decode(&padded).unwrap()).is_ok(),
            "the decoder takes it"
        );
        assert_eq!(data_url(&padded), None);
        // The longest hashes: most coefficients, with and without alpha.
        for alpha in [false, true] {
            let channels = if alpha { 4 } else { 3 };
            let noisy = Decoded {
                pixels: (0..100 * 100 * channels)
                    .map(|i| (i * 7919 % 251) as u8)
                    .collect(),
                width: 100,
                height: 100,
                alpha,
                source: (100, 100),
            };
            assert!(thumbhash(&noisy).len() <= 44, "{}", thumbhash(&noisy));
        }
    }
}

//! Still WebP pixels, decoded by libwebp (already linked for encoding)
//! straight into the buffer the pipeline works on. On the corpus's 10.6 MP
//! lossy photo it takes well under half the time of the pure-Rust decoder
//! the image crate uses, which still reads the metadata and animations.

// libwebp is C: every call crosses the FFI boundary.
#![allow(unsafe_code)]

use libwebp_sys as sys;

/// Pixels as RGB8 (RGBA8 when the file has alpha), with width, height and
/// whether there is alpha. `None` for an animation, a header libwebp cannot
/// read or a file it fails to decode: the image crate's decoder takes it
/// from there and gives the error if there is one. Refuses before
/// allocating when the pixels would take more than `max_bytes`.
pub fn decode(bytes: &[u8], max_bytes: u64) -> Option<(Vec<u8>, u32, u32, bool)> {
    // SAFETY: zeroed is a valid WebPBitstreamFeatures (plain integers);
    // libwebp reads at most `bytes.len()` bytes of `bytes`.
    let features = unsafe {
        let mut f: sys::WebPBitstreamFeatures = std::mem::zeroed();
        let status = sys::WebPGetFeatures(bytes.as_ptr(), bytes.len(), &mut f);
        (status == sys::VP8StatusCode::VP8_STATUS_OK).then_some(f)?
    };
    if features.has_animation != 0 {
        return None;
    }
    let (w, h) = (
        u32::try_from(features.width).ok()?,
        u32::try_from(features.height).ok()?,
    );
    let alpha = features.has_alpha != 0;
    let channels: u64 = if alpha { 4 } else { 3 };
    let size = w as u64 * h as u64 * channels;
    if w == 0 || h == 0 || size > max_bytes {
        return None;
    }
    let (size, stride) = (size as usize, w as usize * channels as usize);
    let mut pixels: Vec<u8> = Vec::with_capacity(size);
    // SAFETY: the buffer has room for `size` bytes, which libwebp is told;
    // it writes every row of `stride` bytes on success, and the length is
    // set only then.
    unsafe {
        let into = if alpha {
            sys::WebPDecodeRGBAInto
        } else {
            sys::WebPDecodeRGBInto
        };
        let out = into(
            bytes.as_ptr(),
            bytes.len(),
            pixels.as_mut_ptr(),
            size,
            stride as i32,
        );
        if out.is_null() {
            return None;
        }
        pixels.set_len(size);
    }
    Some((pixels, w, h, alpha))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lossy(w: u32, h: u32, alpha: bool) -> Vec<u8> {
        let ch = if alpha { 4 } else { 3 };
        let px: Vec<u8> = (0..w * h * ch).map(|i| (i % 200) as u8).collect();
        crate::encode::webp::encode(&px, w, h, alpha, 80).unwrap()
    }

    #[test]
    fn decodes_like_the_image_crate_within_rounding() {
        for alpha in [false, true] {
            let file = lossy(97, 61, alpha);
            let (px, w, h, a) = decode(&file, 1 << 30).expect("decoded");
            assert_eq!((w, h, a), (97, 61, alpha));
            let theirs = image::load_from_memory(&file).unwrap();
            let theirs = if alpha {
                theirs.into_rgba8().into_raw()
            } else {
                theirs.into_rgb8().into_raw()
            };
            assert_eq!(px.len(), theirs.len());
            // Both are VP8 decoders; their YUV->RGB rounding may differ by a step.
            let worst = px.iter().zip(&theirs).map(|(a, b)| a.abs_diff(*b)).max();
            assert!(worst.unwrap_or(0) <= 8, "{worst:?}");
        }
    }

    #[test]
    fn refuses_over_the_limit_and_broken_files() {
        let file = lossy(64, 64, false);
        assert!(decode(&file, 64 * 64 * 3 - 1).is_none());
        assert!(decode(&file[..file.len() / 2], 1 << 30).is_none());
        assert!(decode(b"RIFF\0\0\0\0WEBPVP8 ", 1 << 30).is_none());
    }
}

//! Lossy WebP, encoded by libwebp from a render's RGB or RGBA pixels
//! imported straight into YUV, as libvips's `webpsave` and libwebp's own
//! one-call API import them. Importing into a 4-byte ARGB picture first
//! (what the `webp` crate does) gives the same bytes for about 3 % more
//! encoder CPU and 4 more bytes per pixel while an encode runs.

// libwebp is C: every call crosses the FFI boundary.
#![allow(unsafe_code)]

use libwebp_sys as sys;

/// libwebp's largest side.
const MAX_SIDE: u32 = 16383;

/// A picture libwebp allocates into; freed however the encode ends.
struct Picture(sys::WebPPicture);

impl Drop for Picture {
    fn drop(&mut self) {
        // SAFETY: the picture was initialised; freeing is a no-op when
        // the import allocated nothing, and resets its pointers.
        unsafe { sys::WebPPictureFree(&mut self.0) }
    }
}

/// The encoder's output buffer; freed however the encode ends.
struct Writer(sys::WebPMemoryWriter);

impl Drop for Writer {
    fn drop(&mut self) {
        // SAFETY: the writer owns `mem` (or it is null).
        unsafe { sys::WebPMemoryWriterClear(&mut self.0) }
    }
}

/// WebP at `quality` (0-100) with libwebp's defaults otherwise (method 4,
/// the settings libvips uses), no metadata. `px` holds `w` x `h` pixels of
/// 3 bytes, or 4 with `alpha`.
pub fn encode(px: &[u8], w: u32, h: u32, alpha: bool, quality: u8) -> Result<Vec<u8>, String> {
    if w == 0 || h == 0 || w > MAX_SIDE || h > MAX_SIDE {
        return Err(format!("WebP cannot hold {w}x{h} pixels"));
    }
    // Both sides are at most 16383, so none of this overflows.
    let stride = w as usize * if alpha { 4 } else { 3 };
    if px.len() < stride * h as usize {
        return Err(format!("{} bytes do not hold {w}x{h} pixels", px.len()));
    }
    let mut config =
        sys::WebPConfig::new().map_err(|()| "libwebp could not set up its config".to_string())?;
    config.quality = f32::from(quality.min(100));
    let mut pic = Picture(
        sys::WebPPicture::new().map_err(|()| "libwebp could not set up a picture".to_string())?,
    );
    // Imported as YUV, so WebPEncode does no conversion of its own: were
    // `use_sharp_yuv` or dithering (`preprocessing & 2`) ever wanted, this
    // must be 1, as libwebp applies them only when converting ARGB.
    pic.0.use_argb = 0;
    pic.0.width = w as i32;
    pic.0.height = h as i32;
    let import = if alpha {
        sys::WebPPictureImportRGBA
    } else {
        sys::WebPPictureImportRGB
    };
    // SAFETY: `px` holds `h` rows of `stride` bytes (checked above), which
    // is all libwebp reads.
    if unsafe { import(&mut pic.0, px.as_ptr(), stride as i32) } == 0 {
        return Err(format!("libwebp import: {:?}", pic.0.error_code));
    }
    // What WebPMemoryWriterInit sets: no buffer yet.
    let mut out = Writer(sys::WebPMemoryWriter {
        mem: std::ptr::null_mut(),
        size: 0,
        max_size: 0,
        pad: [0],
    });
    pic.0.writer = Some(sys::WebPMemoryWrite);
    pic.0.custom_ptr = (&mut out.0 as *mut sys::WebPMemoryWriter).cast();
    // SAFETY: the config and picture are initialised (WebPEncode validates
    // the config); `out` stays where it is until the encode returns, so
    // `custom_ptr` is valid throughout.
    if unsafe { sys::WebPEncode(&config, &mut pic.0) } == 0 {
        return Err(format!("libwebp encode: {:?}", pic.0.error_code));
    }
    if out.0.mem.is_null() || out.0.size == 0 {
        return Err("libwebp wrote nothing".into());
    }
    // SAFETY: libwebp wrote `size` bytes at `mem`.
    Ok(unsafe { std::slice::from_raw_parts(out.0.mem, out.0.size) }.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gradient(w: u32, h: u32, ch: u32) -> Vec<u8> {
        (0..w * h * ch).map(|i| (i % 251) as u8).collect()
    }

    /// libwebp's one-call API at quality 80: its default preset, imported
    /// straight into YUV. Equal bytes show the config is libwebp's own.
    fn one_call(px: &[u8], w: u32, h: u32, alpha: bool) -> Vec<u8> {
        let ch = if alpha { 4 } else { 3 };
        let call = if alpha {
            sys::WebPEncodeRGBA
        } else {
            sys::WebPEncodeRGB
        };
        let mut out = std::ptr::null_mut();
        // SAFETY: `px` holds `h` rows of `w * ch` bytes; libwebp allocates
        // `out` (null on failure, checked), freed below.
        unsafe {
            let n = call(
                px.as_ptr(),
                w as i32,
                h as i32,
                (w * ch) as i32,
                80.0,
                &mut out,
            );
            assert!(n > 0 && !out.is_null(), "libwebp's one-call API failed");
            let bytes = std::slice::from_raw_parts(out, n).to_vec();
            sys::WebPFree(out.cast());
            bytes
        }
    }

    #[test]
    fn encodes_as_libwebps_own_defaults_do() {
        for (alpha, ch) in [(false, 3), (true, 4)] {
            let px = gradient(131, 77, ch);
            let ours = encode(&px, 131, 77, alpha, 80).unwrap();
            assert_eq!(ours, one_call(&px, 131, 77, alpha), "alpha {alpha}");
            let back = image::load_from_memory(&ours).unwrap();
            assert_eq!((back.width(), back.height()), (131, 77));
            assert_eq!(back.color().has_alpha(), alpha);
        }
    }

    #[test]
    fn refuses_short_buffers_and_sizes_webp_cannot_hold() {
        assert!(encode(&[0; 10], 4, 4, false, 80).is_err());
        assert!(encode(&[], 0, 4, false, 80).is_err());
        assert!(encode(&[0; 3 * 16384], 16384, 1, false, 80).is_err());
        assert!(encode(&[0; 48], 4, 4, false, 80).is_ok());
        assert!(encode(&[0; 64], 4, 4, true, 80).is_ok());
    }
}

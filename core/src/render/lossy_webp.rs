//! Lossy WebP, encoded by libwebp from a render's RGB or RGBA pixels
//! imported straight into YUV, as libvips's `webpsave` and libwebp's own
//! one-call API import them. The `webp` crate, used before, imports into a
//! 4-byte ARGB copy and converts that to YUV when encoding: the same bytes
//! (checked on the corpus's renders), for about 3 % more encoder CPU and 4
//! more bytes per pixel while an encode runs.

use libwebp_sys as sys;

/// A picture libwebp allocates into; freed however the encode ends.
struct Picture(sys::WebPPicture);

impl Drop for Picture {
    fn drop(&mut self) {
        // SAFETY: the picture was initialised; freeing is a no-op when
        // the import allocated nothing.
        unsafe { sys::WebPPictureFree(&mut self.0) }
    }
}

/// The encoder's output buffer; freed however the encode ends.
struct Writer(sys::WebPMemoryWriter);

impl Drop for Writer {
    fn drop(&mut self) {
        // SAFETY: the writer was initialised; it owns `mem` (or null).
        unsafe { sys::WebPMemoryWriterClear(&mut self.0) }
    }
}

/// WebP at `quality` (0-100) with libwebp's defaults otherwise (method 4,
/// the settings libvips uses), no metadata. `px` holds `w` x `h` pixels of
/// 3 bytes, or 4 with `alpha`.
pub fn encode(px: &[u8], w: u32, h: u32, alpha: bool, quality: u8) -> Result<Vec<u8>, String> {
    let channels = if alpha { 4 } else { 3 };
    let stride = w as usize * channels;
    let (Ok(wi), Ok(hi), Ok(si)) = (i32::try_from(w), i32::try_from(h), i32::try_from(stride))
    else {
        return Err(format!("{w}x{h} is too large for WebP"));
    };
    if w == 0 || h == 0 || px.len() < stride * h as usize {
        return Err(format!("{} bytes do not hold {w}x{h} pixels", px.len()));
    }
    let mut config = sys::WebPConfig::new().map_err(|()| "libwebp's config".to_string())?;
    config.quality = f32::from(quality.min(100));
    let mut pic = Picture(sys::WebPPicture::new().map_err(|()| "libwebp's picture")?);
    pic.0.use_argb = 0;
    pic.0.width = wi;
    pic.0.height = hi;
    let import = if alpha {
        sys::WebPPictureImportRGBA
    } else {
        sys::WebPPictureImportRGB
    };
    // SAFETY: `px` holds `h` rows of `stride` bytes (checked above), which
    // is all libwebp reads.
    if unsafe { import(&mut pic.0, px.as_ptr(), si) } == 0 {
        return Err(format!("libwebp import: {:?}", pic.0.error_code));
    }
    // SAFETY: zeroed is a valid writer (null buffer), initialised next.
    let mut out = Writer(unsafe { std::mem::zeroed() });
    unsafe { sys::WebPMemoryWriterInit(&mut out.0) };
    pic.0.writer = Some(sys::WebPMemoryWrite);
    pic.0.custom_ptr = (&mut out.0 as *mut sys::WebPMemoryWriter).cast();
    // SAFETY: the config and picture are initialised; `out` stays where it
    // is until the encode returns, so `custom_ptr` is valid throughout.
    let ok = unsafe {
        sys::WebPValidateConfig(&config) != 0 && sys::WebPEncode(&config, &mut pic.0) != 0
    };
    if !ok {
        return Err(format!("libwebp encode: {:?}", pic.0.error_code));
    }
    if out.0.mem.is_null() {
        return Ok(Vec::new());
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

    /// libwebp's one-call API: its default preset at `quality`, imported
    /// straight into YUV.
    fn one_call(px: &[u8], w: u32, h: u32, alpha: bool) -> Vec<u8> {
        let ch = if alpha { 4 } else { 3 };
        let call = if alpha {
            sys::WebPEncodeRGBA
        } else {
            sys::WebPEncodeRGB
        };
        let mut out = std::ptr::null_mut();
        // SAFETY: `px` holds `h` rows of `w * ch` bytes; libwebp allocates
        // `out`, freed below.
        unsafe {
            let n = call(
                px.as_ptr(),
                w as i32,
                h as i32,
                (w * ch) as i32,
                80.0,
                &mut out,
            );
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
    fn refuses_short_buffers_and_empty_pictures() {
        assert!(encode(&[0; 10], 4, 4, false, 80).is_err());
        assert!(encode(&[], 0, 4, false, 80).is_err());
        assert!(encode(&[0; 48], 4, 4, false, 80).is_ok());
    }
}

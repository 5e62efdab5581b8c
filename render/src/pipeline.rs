//! Pixels: one decode per image (auto-oriented, converted to sRGB), then
//! every render resized with fast_image_resize's SIMD convolution (from
//! the smallest render big enough: `cascade`) and encoded in parallel. Encoders are given bare pixels, so no metadata can
//! reach an output.

use crate::geometry::spec::plan;
use crate::pixels::to_srgb;
pub use crate::pixels::{Decoded, RenderError};
use fast_image_resize as fr;
use image::{DynamicImage, ImageDecoder, ImageEncoder};
use lightbox_domain::crop::{CropSpec, Format};
use std::io::Cursor;

pub struct Output {
    pub code: String,
    pub format: Format,
    pub width: u32,
    pub height: u32,
    pub bytes: Vec<u8>,
    /// Resize and encode time of this render.
    pub took: std::time::Duration,
}

/// Decodes once for every render in `specs`. A JPEG whose largest render
/// needs far fewer pixels is shrunk in the DCT while decoding (see
/// `shrink`); anything else is decoded whole, with a memory ceiling derived
/// from `max_pixels`, so even a file that lied its way past the header
/// checks cannot allocate without bound.
pub fn decode(bytes: &[u8], max_pixels: u64, specs: &[CropSpec]) -> Result<Decoded, RenderError> {
    if let Some(decoded) = crate::jpeg::shrink::decode_jpeg(bytes, specs)? {
        return Ok(decoded);
    }
    decode_whole(bytes, max_pixels)
}

/// A full decode, never shrunk (the benchmark compares against it).
pub fn decode_whole(bytes: &[u8], max_pixels: u64) -> Result<Decoded, RenderError> {
    let err = |e: image::ImageError| RenderError::Decode(e.to_string());
    let mut reader = image::ImageReader::new(Cursor::new(bytes))
        .with_guessed_format()
        .map_err(|e| RenderError::Decode(e.to_string()))?;
    let max_alloc = max_pixels.saturating_mul(8).max(64 << 20);
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(max_alloc);
    reader.limits(limits);
    let webp = reader.format() == Some(image::ImageFormat::WebP);
    let mut decoder = reader.into_decoder().map_err(err)?;
    let orientation = crate::inspect::exif::orientation_of(&mut decoder);
    let icc = decoder.icc_profile().ok().flatten();
    let still_webp = webp
        .then(|| crate::webp_decode::decode(bytes, max_alloc))
        .flatten();
    let (pixels, w, h, alpha) = match still_webp {
        Some(decoded) => decoded,
        None => pixels_of(decoder)?,
    };
    let channels = if alpha { 4 } else { 3 };
    let (mut pixels, width, height) =
        crate::geometry::orient::orient(pixels, w, h, channels, orientation);
    if let Some(icc) = icc {
        to_srgb(&icc, &mut pixels, alpha);
    }
    Ok(Decoded {
        pixels,
        width,
        height,
        alpha,
        source: (width, height),
    })
}

/// RGB8 or RGBA8 pixels as the image crate decodes them: width, height,
/// and whether there is alpha.
fn pixels_of(decoder: impl ImageDecoder) -> Result<(Vec<u8>, u32, u32, bool), RenderError> {
    let img =
        DynamicImage::from_decoder(decoder).map_err(|e| RenderError::Decode(e.to_string()))?;
    let alpha = img.color().has_alpha();
    let (w, h) = (img.width(), img.height());
    let pixels = if alpha {
        img.into_rgba8().into_raw()
    } else {
        img.into_rgb8().into_raw()
    };
    Ok((pixels, w, h, alpha))
}

/// Resized (and padded) pixels: the buffer, its size, and whether it has
/// an alpha channel.
pub(super) type Resized = (Vec<u8>, u32, u32, bool);

pub(super) fn resize(src: &Decoded, spec: &CropSpec) -> Result<Resized, RenderError> {
    let g = crate::geometry::focus::aim(plan(src.source.0, src.source.1, spec), src, spec);
    let kind = if src.alpha {
        fr::PixelType::U8x4
    } else {
        fr::PixelType::U8x3
    };
    let fail = |e: &dyn std::fmt::Display| RenderError::Produce(e.to_string());
    let view = fr::images::ImageRef::new(src.width, src.height, &src.pixels, kind)
        .map_err(|e| fail(&e))?;
    let mut out = fr::images::Image::new(g.resized.0, g.resized.1, kind);
    // The plan is in the original's pixels; map its crop onto the decoded ones.
    let sx = src.width as f64 / src.source.0.max(1) as f64;
    let sy = src.height as f64 / src.source.1.max(1) as f64;
    let (left, top, w, h) = g.source;
    let (left, top) = (left * sx, top * sy);
    // Scaling can land a whole-frame box a rounding error past the edge
    // (4200 x 1463 / 3000 is 1463.0000000000002 rows).
    let (sw, sh) = (src.width as f64, src.height as f64);
    let (w, h) = ((w * sx).min(sw - left), (h * sy).min(sh - top));
    let options = fr::ResizeOptions::new()
        .resize_alg(fr::ResizeAlg::Convolution(fr::FilterType::Lanczos3))
        .crop(left, top, w, h);
    fr::Resizer::new()
        .resize(&view, &mut out, &options)
        .map_err(|e| fail(&e))?;
    let resized = out.into_vec();
    if g.canvas == g.resized {
        return Ok((resized, g.canvas.0, g.canvas.1, src.alpha));
    }
    let (padded, alpha) = pad(
        &resized,
        g.resized,
        g.canvas,
        g.offset,
        src.alpha,
        spec.format,
    );
    Ok((padded, g.canvas.0, g.canvas.1, alpha))
}

/// Places the resized pixels on a canvas: transparent in every format with
/// alpha (png, webp: an opaque source gains an alpha channel for it), white
/// for jpg. Returns the canvas and whether it has alpha.
fn pad(
    px: &[u8],
    size: (u32, u32),
    canvas: (u32, u32),
    at: (u32, u32),
    alpha: bool,
    format: Format,
) -> (Vec<u8>, bool) {
    let transparent = format != Format::Jpg;
    let (ch_in, ch) = (
        if alpha { 4 } else { 3 },
        if alpha || transparent { 4 } else { 3 },
    );
    let fill: &[u8] = if transparent {
        &[0, 0, 0, 0]
    } else {
        &[255, 255, 255, 255][..ch]
    };
    let mut out: Vec<u8> = fill
        .iter()
        .copied()
        .cycle()
        .take((canvas.0 * canvas.1) as usize * ch)
        .collect();
    let row = size.0 as usize * ch_in;
    for y in 0..size.1 as usize {
        let dst = ((at.1 as usize + y) * canvas.0 as usize + at.0 as usize) * ch;
        let src = &px[y * row..(y + 1) * row];
        if ch == ch_in {
            out[dst..dst + row].copy_from_slice(src);
        } else {
            for (d, s) in out[dst..dst + size.0 as usize * ch]
                .chunks_exact_mut(4)
                .zip(src.chunks_exact(3))
            {
                d[..3].copy_from_slice(s);
                d[3] = 255;
            }
        }
    }
    (out, ch == 4)
}

/// Flattens RGBA onto white, for jpg.
fn flatten(rgba: &[u8]) -> Vec<u8> {
    rgba.chunks_exact(4)
        .flat_map(|p| {
            let a = p[3] as u32;
            [0, 1, 2].map(|i| ((p[i] as u32 * a + 255 * (255 - a) + 127) / 255) as u8)
        })
        .collect()
}

pub(super) fn encode(
    px: &[u8],
    w: u32,
    h: u32,
    alpha: bool,
    spec: &CropSpec,
) -> Result<Vec<u8>, RenderError> {
    let fail = |e: &dyn std::fmt::Display| RenderError::Produce(e.to_string());
    match spec.format {
        Format::Webp => {
            crate::encode::webp::encode(px, w, h, alpha, spec.quality).map_err(|e| fail(&e))
        }
        Format::Jpg => {
            let rgb;
            let px = if alpha {
                rgb = flatten(px);
                &rgb[..]
            } else {
                px
            };
            let mut out = Vec::new();
            image::codecs::jpeg::JpegEncoder::new_with_quality(&mut out, spec.quality)
                .write_image(px, w, h, image::ExtendedColorType::Rgb8)
                .map_err(|e| fail(&e))?;
            Ok(out)
        }
        Format::Png => {
            let mut out = Vec::new();
            let kind = if alpha {
                image::ExtendedColorType::Rgba8
            } else {
                image::ExtendedColorType::Rgb8
            };
            image::codecs::png::PngEncoder::new(&mut out)
                .write_image(px, w, h, kind)
                .map_err(|e| fail(&e))?;
            Ok(out)
        }
        Format::Avif => {
            crate::encode::avif::encode(px, w, h, alpha, spec.quality).map_err(|e| fail(&e))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use lightbox_domain::crop::{default_presets, Mode};

    fn synthetic(w: u32, h: u32, alpha: bool) -> Decoded {
        let ch = if alpha { 4 } else { 3 };
        let pixels = (0..w * h * ch).map(|i| (i % 251) as u8).collect();
        Decoded {
            pixels,
            width: w,
            height: h,
            alpha,
            source: (w, h),
        }
    }

    fn produce(src: &Decoded, spec: &CropSpec) -> Result<Vec<u8>, RenderError> {
        let (px, w, h, alpha) = resize(src, spec)?;
        encode(&px, w, h, alpha, spec)
    }

    #[test]
    fn frames_whose_scale_rounds_past_the_edge_still_render() {
        // `medium` from the 2048 x 1463 `large` of a 4200 x 3000 photo.
        let mut frame = synthetic(2048, 1463, false);
        frame.source = (4200, 3000);
        let medium = &default_presets()[2];
        assert_eq!(medium.code, "medium");
        let (_, w, h, _) = resize(&frame, medium).unwrap();
        assert_eq!((w, h), (1280, 914));
        let out = crate::cascade::render_all(synthetic(4200, 3000, false), &default_presets());
        assert_eq!(out.unwrap().len(), 4);
    }

    #[test]
    fn presets_have_the_planned_sizes_and_formats() {
        let src = synthetic(1200, 800, false);
        let sizes = [(400, 400), (640, 427), (1200, 800), (1200, 800)];
        for (spec, size) in default_presets().iter().zip(sizes) {
            let out = produce(&src, spec).unwrap();
            assert_eq!(&out[..4], b"RIFF", "{}", spec.code);
            let decoded = image::load_from_memory(&out).unwrap();
            assert_eq!((decoded.width(), decoded.height()), size, "{}", spec.code);
        }
    }

    #[test]
    fn pad_of_an_opaque_source_is_transparent_in_png_and_webp() {
        let src = synthetic(200, 100, false);
        for format in [Format::Png, Format::Webp] {
            let mut spec = CropSpec::new("p", 100, 100, Mode::Pad);
            spec.format = format;
            let out = produce(&src, &spec).unwrap();
            let img = image::load_from_memory(&out).unwrap().into_rgba8();
            assert_eq!(img.dimensions(), (100, 100));
            assert_eq!(
                img.get_pixel(0, 0).0[3],
                0,
                "{format:?} padding is transparent"
            );
            assert_eq!(
                img.get_pixel(50, 50).0[3],
                255,
                "{format:?} photo stays opaque"
            );
        }
    }

    #[test]
    fn pad_keeps_alpha_for_png_and_whitens_jpg() {
        let src = synthetic(200, 100, true);
        let mut spec = CropSpec::new("p", 100, 100, Mode::Pad);
        spec.format = Format::Png;
        let out = produce(&src, &spec).unwrap();
        let img = image::load_from_memory(&out).unwrap().into_rgba8();
        assert_eq!(img.dimensions(), (100, 100));
        assert_eq!(img.get_pixel(0, 0).0[3], 0, "padding is transparent");
        spec.format = Format::Jpg;
        let out = produce(&src, &spec).unwrap();
        let img = image::load_from_memory(&out).unwrap().into_rgb8();
        assert!(
            img.get_pixel(0, 0).0.iter().all(|c| *c > 245),
            "padding is white"
        );
    }
}

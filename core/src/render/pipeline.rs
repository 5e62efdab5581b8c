//! Pixels: one decode per image (auto-oriented, converted to sRGB), then
//! every render resized with fast_image_resize's SIMD convolution and
//! encoded in parallel. Encoders are given bare pixels, so no metadata can
//! reach an output.

use super::spec::{plan, CropSpec, Format};
use fast_image_resize as fr;
use image::{DynamicImage, ImageDecoder, ImageEncoder};
use std::io::Cursor;

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("cannot decode the original: {0}")]
    Decode(String),
    #[error("cannot produce a render: {0}")]
    Produce(String),
}

/// Decoded, oriented, sRGB pixels: RGB8, or RGBA8 when the source has alpha.
pub struct Decoded {
    pub pixels: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub alpha: bool,
    /// The original's oriented size. Renders are planned against it, so a
    /// JPEG shrunk on load gives the same geometry as a full decode.
    pub source: (u32, u32),
}

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
    if let Some(decoded) = super::shrink::decode_jpeg(bytes, specs)? {
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
    let mut limits = image::Limits::default();
    limits.max_alloc = Some(max_pixels.saturating_mul(8).max(64 << 20));
    reader.limits(limits);
    let mut decoder = reader.into_decoder().map_err(err)?;
    let orientation = decoder
        .orientation()
        .unwrap_or(image::metadata::Orientation::NoTransforms);
    let icc = decoder.icc_profile().ok().flatten();
    let mut img = DynamicImage::from_decoder(decoder).map_err(err)?;
    img.apply_orientation(orientation);
    let alpha = img.color().has_alpha();
    let (width, height) = (img.width(), img.height());
    let mut pixels = if alpha {
        img.into_rgba8().into_raw()
    } else {
        img.into_rgb8().into_raw()
    };
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

/// Converts pixels tagged with an ICC profile to sRGB; an unreadable profile
/// leaves them as they are (the common case is sRGB already).
pub(super) fn to_srgb(icc: &[u8], pixels: &mut [u8], alpha: bool) {
    let Some(source) = qcms::Profile::new_from_slice(icc, false) else {
        return;
    };
    let mut srgb = qcms::Profile::new_sRGB();
    srgb.precache_output_transform();
    let kind = if alpha {
        qcms::DataType::RGBA8
    } else {
        qcms::DataType::RGB8
    };
    if let Some(t) = qcms::Transform::new(&source, &srgb, kind, qcms::Intent::Perceptual) {
        t.apply(pixels);
    }
}

fn resize(src: &Decoded, spec: &CropSpec) -> Result<(Vec<u8>, u32, u32), RenderError> {
    let g = plan(src.source.0, src.source.1, spec);
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
    let (left, top, w, h) = (left * sx, top * sy, w * sx, h * sy);
    let options = fr::ResizeOptions::new()
        .resize_alg(fr::ResizeAlg::Convolution(fr::FilterType::Lanczos3))
        .crop(left, top, w, h);
    fr::Resizer::new()
        .resize(&view, &mut out, &options)
        .map_err(|e| fail(&e))?;
    let resized = out.into_vec();
    if g.canvas == g.resized {
        return Ok((resized, g.canvas.0, g.canvas.1));
    }
    Ok((
        pad(
            &resized,
            g.resized,
            g.canvas,
            g.offset,
            src.alpha,
            spec.format,
        ),
        g.canvas.0,
        g.canvas.1,
    ))
}

/// Places the resized pixels on a canvas: transparent where the format has
/// alpha, white for jpg.
fn pad(
    px: &[u8],
    size: (u32, u32),
    canvas: (u32, u32),
    at: (u32, u32),
    alpha: bool,
    format: Format,
) -> Vec<u8> {
    let ch = if alpha { 4 } else { 3 };
    let fill: &[u8] = match (alpha, format) {
        (true, Format::Jpg) | (false, _) => &[255, 255, 255, 255][..ch],
        (true, _) => &[0, 0, 0, 0],
    };
    let mut out: Vec<u8> = fill
        .iter()
        .copied()
        .cycle()
        .take((canvas.0 * canvas.1) as usize * ch)
        .collect();
    let row = size.0 as usize * ch;
    for y in 0..size.1 as usize {
        let dst = ((at.1 as usize + y) * canvas.0 as usize + at.0 as usize) * ch;
        out[dst..dst + row].copy_from_slice(&px[y * row..(y + 1) * row]);
    }
    out
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

fn encode(px: &[u8], w: u32, h: u32, alpha: bool, spec: &CropSpec) -> Result<Vec<u8>, RenderError> {
    let fail = |e: &dyn std::fmt::Display| RenderError::Produce(e.to_string());
    match spec.format {
        Format::Webp => {
            let enc = if alpha {
                webp::Encoder::from_rgba(px, w, h)
            } else {
                webp::Encoder::from_rgb(px, w, h)
            };
            let out = enc
                .encode_simple(false, spec.quality as f32)
                .map_err(|e| fail(&format!("{e:?}")))?;
            Ok(out.to_vec())
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
    }
}

fn produce(src: &Decoded, spec: &CropSpec) -> Result<Output, RenderError> {
    let (px, w, h) = resize(src, spec)?;
    let bytes = encode(&px, w, h, src.alpha, spec)?;
    Ok(Output {
        code: spec.code.clone(),
        format: spec.format,
        width: w,
        height: h,
        bytes,
        took: std::time::Duration::ZERO,
    })
}

/// Every render of one decoded image, each on its own thread: encoding
/// dominates and the renders are independent.
pub fn render_all(src: &Decoded, specs: &[CropSpec]) -> Result<Vec<Output>, RenderError> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = specs
            .iter()
            .map(|s| {
                scope.spawn(move || {
                    let started = std::time::Instant::now();
                    produce(src, s).map(|o| Output {
                        took: started.elapsed(),
                        ..o
                    })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(RenderError::Produce("encoder panicked".into())))
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::spec::{default_presets, Mode};

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

    #[test]
    fn presets_have_the_planned_sizes_and_formats() {
        let out = render_all(&synthetic(1200, 800, false), &default_presets()).unwrap();
        let sizes: Vec<_> = out
            .iter()
            .map(|o| (o.code.as_str(), o.width, o.height))
            .collect();
        assert_eq!(
            sizes,
            vec![
                ("thumb", 400, 400),
                ("small", 640, 427),
                ("medium", 1200, 800),
                ("large", 1200, 800)
            ]
        );
        for o in &out {
            assert_eq!(&o.bytes[..4], b"RIFF");
            let decoded = image::load_from_memory(&o.bytes).unwrap();
            assert_eq!((decoded.width(), decoded.height()), (o.width, o.height));
        }
    }

    #[test]
    fn pad_keeps_alpha_for_png_and_whitens_jpg() {
        let src = synthetic(200, 100, true);
        let mut spec = CropSpec::new("p", 100, 100, Mode::Pad);
        spec.format = Format::Png;
        let out = produce(&src, &spec).unwrap();
        let img = image::load_from_memory(&out.bytes).unwrap().into_rgba8();
        assert_eq!(img.dimensions(), (100, 100));
        assert_eq!(img.get_pixel(0, 0).0[3], 0, "padding is transparent");
        spec.format = Format::Jpg;
        let out = produce(&src, &spec).unwrap();
        let img = image::load_from_memory(&out.bytes).unwrap().into_rgb8();
        assert!(
            img.get_pixel(0, 0).0.iter().all(|c| *c > 245),
            "padding is white"
        );
    }
}

//! JPEG shrink-on-load: decoding at 1/2, 1/4 or 1/8 scale in the DCT when
//! the largest render needs fewer pixels than the original has. At 1/2 the
//! IDCT still reconstructs each 8x8 block from its 4x4 lowest frequencies,
//! which is as good a low-pass as Lanczos at that scale: renders from it
//! differ from renders of the full decode by 46-50 dB PSNR on the corpus,
//! far under what webp q80 itself changes. So 1/2 is taken whenever the
//! largest render still gets at least its own size (as imgproxy does).
//! 1/4 and 1/8 keep only 2x2 and 1x1 of the frequencies, so, like
//! libvips's thumbnail, they are taken only while 2x headroom remains for
//! the final Lanczos resize. A file of more scans than its size allows
//! (`markers::limit`) is refused here, before jpeg-decoder walks it,
//! whether it is then shrunk or decoded whole.

use super::markers;
use crate::geometry::spec::plan;
use crate::pixels::{to_srgb, Decoded, RenderError};
use image::metadata::Orientation;
use image::{DynamicImage, GrayImage, RgbImage};
use jpeg_decoder::{Decoder, PixelFormat};
use lightbox_domain::crop::CropSpec;
use std::io::Cursor;

/// Headroom kept between a decode shrunk by 4 or 8 and the largest render.
const HEADROOM: f64 = 2.0;

/// The DCT scale denominator (1, 2, 4 or 8) for an oriented original of
/// `w` x `h` rendered into `specs`.
pub fn denominator(w: u32, h: u32, specs: &[CropSpec]) -> u32 {
    let mut ratio: f64 = 0.0;
    for spec in specs {
        let g = plan(w, h, spec);
        let (_, _, sw, sh) = g.source;
        let rx = g.resized.0 as f64 / sw.max(1.0);
        let ry = g.resized.1 as f64 / sh.max(1.0);
        ratio = ratio.max(rx).max(ry);
    }
    let headroom = |d: u32| if d == 2 { 1.0 } else { HEADROOM };
    [8, 4, 2]
        .into_iter()
        .find(|d| ratio > 0.0 && 1.0 / *d as f64 >= headroom(*d) * ratio)
        .unwrap_or(1)
}

/// A shrunk decode, or `None` when the file is no JPEG, needs every pixel,
/// or has a pixel format this path does not take (CMYK, 16-bit): those go
/// the whole-decode way.
pub fn decode_jpeg(bytes: &[u8], specs: &[CropSpec]) -> Result<Option<Decoded>, RenderError> {
    if !bytes.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Ok(None);
    }
    let Some(markers) = markers::read(bytes) else {
        return Err(RenderError::Decode(
            "a JPEG marker stands where no decoder takes it".into(),
        ));
    };
    let fail = |e: jpeg_decoder::Error| RenderError::Decode(e.to_string());
    let mut d = Decoder::new(Cursor::new(bytes));
    d.read_info().map_err(fail)?;
    let Some(info) = d.info() else {
        return Ok(None);
    };
    let limit = markers::limit(info.width as u64 * info.height as u64);
    if markers.scans > limit {
        return Err(RenderError::Decode(format!(
            "a JPEG of {} scans; at most {limit} are decoded at {}x{}",
            markers.scans, info.width, info.height
        )));
    }
    if !matches!(info.pixel_format, PixelFormat::RGB24 | PixelFormat::L8) {
        return Ok(None);
    }
    let exif = crate::inspect::exif::read_container(bytes);
    let (w, h) = (info.width as u32, info.height as u32);
    let oriented = if exif.swaps_axes() { (h, w) } else { (w, h) };
    let denom = denominator(oriented.0, oriented.1, specs);
    if denom == 1 {
        return Ok(None);
    }
    let want_w = info.width.div_ceil(denom as u16);
    let want_h = info.height.div_ceil(denom as u16);
    let (sw, sh) = d.scale(want_w, want_h).map_err(fail)?;
    let pixels = on_one_thread(|| d.decode())?.map_err(fail)?;
    let (sw, sh) = (sw as u32, sh as u32);
    let grey = info.pixel_format == PixelFormat::L8;
    let bad = || RenderError::Decode("the decoded size does not match".into());
    let rgb = match grey {
        true => DynamicImage::ImageLuma8(GrayImage::from_raw(sw, sh, pixels).ok_or_else(bad)?)
            .into_rgb8()
            .into_raw(),
        false => RgbImage::from_raw(sw, sh, pixels)
            .ok_or_else(bad)?
            .into_raw(),
    };
    let o = Orientation::from_exif(exif.orientation.min(255) as u8)
        .unwrap_or(Orientation::NoTransforms);
    let (mut pixels, width, height) = crate::geometry::orient::orient(rgb, sw, sh, 3, o);
    // The walk assembles the profile by jpeg-decoder's rules.
    if let Some(icc) = markers.icc(bytes) {
        to_srgb(&icc, &mut pixels, false);
    }
    Ok(Some(Decoded {
        pixels,
        width,
        height,
        alpha: false,
        source: oriented,
    }))
}

/// Runs the decode on a rayon pool of one thread. Left to itself,
/// jpeg-decoder hands every row of blocks to a thread per colour component,
/// which on a machine already busy with a render job per core only adds
/// context switches (about 19,000 for the corpus's 21 images, against
/// 1,500 on one thread) and CPU time; inside the pool its rayon tasks run
/// where they are spawned. A photo alone on an idle machine decodes 2-6 %
/// slower this way; with two in flight the corpus takes 1-2 % less CPU.
/// Without a thread there is no decode (outside a pool, jpeg-decoder's
/// rayon worker would start rayon's global pool, which panics when it
/// cannot), so that is `Busy`, and the job is tried again.
fn on_one_thread<T: Send>(decode: impl FnOnce() -> T + Send) -> Result<T, RenderError> {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .thread_name(|_| "jpeg-decode".into())
        .build()
        .map_err(|e| RenderError::Busy(e.to_string()))?;
    Ok(pool.install(decode))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use lightbox_domain::crop::{default_presets, Format, Mode};
    use markers::MAX_SCANS;

    /// One webp spec fitting `width` x `height` (0: any).
    pub(crate) fn only(code: &str, width: u32, height: u32) -> Vec<CropSpec> {
        vec![CropSpec {
            code: code.into(),
            width,
            height,
            mode: Mode::Fit,
            format: Format::Webp,
            quality: 80,
            focus: None,
            at: None,
        }]
    }

    #[test]
    fn halves_whenever_the_largest_render_fits_and_keeps_two_x_headroom_below() {
        // 2048 wide from 6028: 1/2 leaves 3014, enough; 1/4 would not be.
        assert_eq!(denominator(6028, 3391, &default_presets()), 2);
        assert_eq!(denominator(4096, 3000, &default_presets()), 2);
        assert_eq!(denominator(4095, 3000, &default_presets()), 1);
        // 400 wide from 6000: 15x; 1/4 leaves 1500 >= 2 x 400 (1/8 would not).
        assert_eq!(denominator(6000, 4000, &only("s", 400, 0)), 4);
        assert_eq!(denominator(6400, 4000, &only("s", 400, 0)), 8);
        assert_eq!(denominator(800, 600, &only("s", 400, 0)), 2);
        assert_eq!(denominator(799, 600, &only("s", 400, 0)), 1);
        assert_eq!(denominator(6000, 4000, &[]), 1);
    }

    pub(crate) fn jpeg(w: u32, h: u32) -> Vec<u8> {
        let img = RgbImage::from_fn(w, h, |x, y| {
            image::Rgb([(x % 256) as u8, (y % 256) as u8, 90])
        });
        let mut out = Vec::new();
        DynamicImage::ImageRgb8(img)
            .write_to(&mut Cursor::new(&mut out), image::ImageFormat::Jpeg)
            .unwrap();
        out
    }

    /// `jpeg` with its last scan `extra` more times before its EOI.
    fn with_scans(jpeg: &[u8], extra: u32) -> Vec<u8> {
        let eoi = jpeg.len() - 2;
        let sos = jpeg.windows(2).rposition(|m| m == [0xFF, 0xDA]).unwrap();
        let mut out = jpeg[..eoi].to_vec();
        for _ in 0..extra {
            out.extend_from_slice(&jpeg[sos..eoi]);
        }
        out.extend_from_slice(&jpeg[eoi..]);
        out
    }

    #[test]
    fn a_jpeg_of_too_many_scans_is_refused_whatever_its_size() {
        let small = jpeg(64, 48);
        let bytes = with_scans(&small, MAX_SCANS);
        // Shrunk or decoded whole, by either decoder: refused before both.
        for specs in [only("s", 16, 0), only("s", 4000, 0)] {
            let err = decode_jpeg(&bytes, &specs).err();
            assert!(
                matches!(&err, Some(RenderError::Decode(m)) if m.contains("101 scans")),
                "{err:?}"
            );
        }
        let bytes = with_scans(&small, MAX_SCANS - 1);
        assert_eq!(markers::read(&bytes).map(|m| m.scans), Some(MAX_SCANS));
        let at_the_limit = decode_jpeg(&bytes, &only("s", 16, 0)).err();
        assert!(
            !matches!(&at_the_limit, Some(RenderError::Decode(m)) if m.contains("scans")),
            "{at_the_limit:?}"
        );
    }

    #[test]
    fn a_larger_photo_may_have_fewer_scans() {
        // 64x48 pixels declared as 12000x8333 (100 MP, 30 scans at most):
        // refused from the header, before a pixel is decoded.
        let mut small = jpeg(64, 48);
        let sof = small.windows(2).position(|m| m == [0xFF, 0xC0]).unwrap();
        small[sof + 5..sof + 7].copy_from_slice(&8333u16.to_be_bytes());
        small[sof + 7..sof + 9].copy_from_slice(&12000u16.to_be_bytes());
        for (extra, refused) in [(29, false), (30, true)] {
            let bytes = with_scans(&small, extra);
            let err = decode_jpeg(&bytes, &only("s", 16, 0)).err();
            let said = matches!(&err, Some(RenderError::Decode(m))
                if m.contains("31 scans; at most 30 are decoded at 12000x8333"));
            assert_eq!(said, refused, "{extra}: {err:?}");
        }
    }

    #[test]
    fn shrunk_decode_renders_the_same_geometry() {
        let bytes = jpeg(3200, 2000);
        let specs = only("s", 400, 0);
        let d = decode_jpeg(&bytes, &specs).unwrap().expect("shrunk");
        assert_eq!((d.width, d.height, d.source), (800, 500, (3200, 2000)));
        let out = crate::cascade::render_all(d, &specs).unwrap();
        assert_eq!((out[0].width, out[0].height), (400, 250));
        // Nothing to gain: the full decode path.
        assert!(decode_jpeg(&bytes, &only("s", 2000, 0)).unwrap().is_none());
        assert!(decode_jpeg(b"\x89PNG", &specs).unwrap().is_none());
    }

    fn psnr(a: &[u8], b: &[u8]) -> f64 {
        let sum: f64 = a
            .iter()
            .zip(b)
            .map(|(x, y)| (*x as f64 - *y as f64).powi(2))
            .sum();
        10.0 * (255.0f64.powi(2) * a.len() as f64 / sum).log10()
    }

    #[test]
    fn halving_in_the_dct_changes_the_corpus_renders_by_less_than_the_encoder() {
        // The largest render from a half-scale decode against the same
        // render from the full decode, before encoding: webp q80 itself
        // moves these pixels by about 35-42 dB.
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
        let large = default_presets()
            .into_iter()
            .find(|p| p.code == "large")
            .unwrap();
        let mut checked = 0;
        for entry in std::fs::read_dir(corpus).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "jpg") {
                continue;
            }
            let bytes = std::fs::read(&path).unwrap();
            let Some(half) = decode_jpeg(&bytes, std::slice::from_ref(&large)).unwrap() else {
                continue;
            };
            let full = crate::pipeline::decode_whole(&bytes, 200_000_000).unwrap();
            assert_eq!(half.source, full.source);
            assert_eq!(half.width, full.width.div_ceil(2), "{path:?}");
            let (a, ..) = crate::pipeline::resize(&full, &large).unwrap();
            let (b, ..) = crate::pipeline::resize(&half, &large).unwrap();
            let db = psnr(&a, &b);
            assert!(db > 44.0, "{path:?}: {db:.1} dB");
            checked += 1;
        }
        assert!(checked >= 4, "the corpus JPEGs that halve: {checked}");
    }

    fn corpus_jpegs() -> Vec<(std::path::PathBuf, Vec<u8>)> {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
        let mut files: Vec<_> = std::fs::read_dir(corpus)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "jpg"))
            .map(|p| {
                let bytes = std::fs::read(&p).unwrap();
                (p, bytes)
            })
            .collect();
        files.sort();
        files
    }

    #[test]
    fn quarter_and_eighth_decodes_keep_renders_and_fill_crops_in_place() {
        // Each spec alone, so the deeper shrinks are taken: a 640 render and
        // the 400x400 fill crop at 1/2 or 1/4, a 300 render at 1/4 or 1/8.
        // Against the same render from the full decode, before encoding; a
        // crop window off by a few pixels would fall far below.
        let thumb = default_presets()
            .into_iter()
            .find(|p| p.code == "thumb")
            .unwrap();
        let cases = [only("small", 640, 0), vec![thumb], only("tiny", 300, 0)];
        let mut seen = std::collections::BTreeSet::new();
        for (path, bytes) in corpus_jpegs() {
            let full = crate::pipeline::decode_whole(&bytes, 200_000_000).unwrap();
            for specs in &cases {
                let Some(shrunk) = decode_jpeg(&bytes, specs).unwrap() else {
                    continue;
                };
                let denom = full.width.div_ceil(shrunk.width);
                assert_eq!(shrunk.source, full.source);
                assert_eq!(shrunk.width, full.width.div_ceil(denom), "{path:?}");
                let (a, aw, ah, _) = crate::pipeline::resize(&full, &specs[0]).unwrap();
                let (b, bw, bh, _) = crate::pipeline::resize(&shrunk, &specs[0]).unwrap();
                assert_eq!((aw, ah), (bw, bh), "{path:?}");
                let db = psnr(&a, &b);
                // Measured: 47-55 dB down to 1/4, 38.5-44 dB at 1/8 (the
                // DC alone: a box filter), where webp q80 moves pixels by
                // 35-42 dB.
                let floor = if denom == 8 { 36.0 } else { 44.0 };
                assert!(
                    db > floor,
                    "{path:?} 1/{denom} {}: {db:.1} dB",
                    specs[0].code
                );
                seen.insert(denom);
            }
        }
        assert!(
            seen.contains(&4) && seen.contains(&8),
            "shrinks seen: {seen:?}"
        );
    }
}

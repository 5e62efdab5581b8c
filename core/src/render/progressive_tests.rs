use super::super::jpeg_markers;
use super::super::shrink::tests::only;
use super::*;
use jpeg_decoder::Decoder;
use std::io::Cursor;

/// `decode` with the markers the caller reads first.
fn shrunk(bytes: &[u8], denom: u32) -> Option<Shrunk> {
    decode(bytes, denom, &jpeg_markers::read(bytes)?).ok()
}

/// A progressive JPEG of noise (fine detail, where a box IDCT and a
/// low-pass one differ most), made by libjpeg itself; colour with every
/// component at full resolution unless `subsampled`.
pub(crate) fn progressive(width: u32, height: u32, channels: u32, subsampled: bool) -> Vec<u8> {
    let mut seed = 0x2545_f491_u32;
    let pixels: Vec<u8> = (0..width * height * channels)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 17;
            seed ^= seed << 5;
            (seed >> 24) as u8
        })
        .collect();
    encode(&pixels, width, height, channels, subsampled)
}

/// `pixels` as a progressive JPEG, by libjpeg.
pub(crate) fn encode(
    pixels: &[u8],
    width: u32,
    height: u32,
    channels: u32,
    subsampled: bool,
) -> Vec<u8> {
    encode_as(
        pixels,
        (width, height, channels),
        subsampled,
        [1, 2, 3],
        true,
    )
}

/// `encode` with the three components' `ids`, and a JFIF marker or none.
fn encode_as(
    pixels: &[u8],
    (width, height, channels): (u32, u32, u32),
    subsampled: bool,
    ids: [i32; 3],
    jfif: bool,
) -> Vec<u8> {
    // SAFETY: libjpeg's documented compression sequence; the output buffer
    // it mallocs is copied out and freed.
    unsafe {
        let mut err: jpeg_error_mgr = std::mem::zeroed();
        let mut c: jpeg_compress_struct = std::mem::zeroed();
        c.common.err = jpeg_std_error(&mut err);
        jpeg_create_compress(&mut c);
        let (mut buf, mut size) = (std::ptr::null_mut(), 0);
        jpeg_mem_dest(&mut c, &mut buf, &mut size);
        c.image_width = width;
        c.image_height = height;
        c.input_components = channels as i32;
        c.in_color_space = if channels == 1 {
            J_COLOR_SPACE::JCS_GRAYSCALE
        } else {
            J_COLOR_SPACE::JCS_RGB
        };
        jpeg_set_defaults(&mut c);
        jpeg_set_quality(&mut c, 92, 1);
        if channels == 3 && !subsampled {
            let luma = &mut *c.comp_info;
            (luma.h_samp_factor, luma.v_samp_factor) = (1, 1);
        }
        if channels == 3 {
            for (i, id) in ids.into_iter().enumerate() {
                (*c.comp_info.add(i)).component_id = id;
            }
        }
        c.write_JFIF_header = i32::from(jfif);
        jpeg_simple_progression(&mut c);
        jpeg_start_compress(&mut c, 1);
        let stride = (width * channels) as usize;
        while c.next_scanline < height {
            let row = pixels.as_ptr().add(stride * c.next_scanline as usize);
            jpeg_write_scanlines(&mut c, &row, 1);
        }
        jpeg_finish_compress(&mut c);
        let out = std::slice::from_raw_parts(buf, size as usize).to_vec();
        jpeg_destroy_compress(&mut c);
        libc::free(buf.cast());
        out
    }
}

/// jpeg-decoder's decode at 1/`denom`: pixels, width, height.
fn jpeg_decoder(bytes: &[u8], denom: u16) -> (Vec<u8>, u32, u32) {
    let mut d = Decoder::new(Cursor::new(bytes));
    d.read_info().unwrap();
    let info = d.info().unwrap();
    let (w, h) = d
        .scale(info.width.div_ceil(denom), info.height.div_ceil(denom))
        .unwrap();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    (pool.install(|| d.decode()).unwrap(), w as u32, h as u32)
}

/// PSNR in dB and the largest difference of one sample.
fn compare(a: &[u8], b: &[u8]) -> (f64, u8) {
    assert_eq!(a.len(), b.len());
    let (mut sum, mut most) = (0.0, 0u8);
    for (x, y) in a.iter().zip(b) {
        let d = x.abs_diff(*y);
        most = most.max(d);
        sum += (d as f64).powi(2);
    }
    let db = 10.0 * (255.0f64.powi(2) * a.len() as f64 / sum.max(1e-9)).log10();
    (db, most)
}

fn assert_like_jpeg_decoder(bytes: &[u8], what: &str) {
    for denom in [2, 4, 8] {
        let ours = shrunk(bytes, denom).unwrap_or_else(|| panic!("{what} 1/{denom}"));
        let (theirs, w, h) = jpeg_decoder(bytes, denom as u16);
        assert_eq!((ours.width, ours.height), (w, h), "{what} 1/{denom}");
        let (db, most) = compare(&ours.pixels, &theirs);
        // libjpeg's own box IDCT is 10-20 dB further off on noise; only
        // the colour conversion's rounding differs from jpeg-decoder's.
        assert!(
            db > 50.0 && most <= 3,
            "{what} 1/{denom}: {db:.1} dB, {most} at most"
        );
    }
}

#[test]
fn the_idct_in_use_is_ours() {
    // Odd sizes: partial blocks and MCUs at the right and bottom edges.
    assert_like_jpeg_decoder(&progressive(333, 221, 3, false), "colour");
    assert_like_jpeg_decoder(&progressive(190, 97, 1, false), "grey");
    let grey = shrunk(&progressive(190, 97, 1, false), 2).unwrap();
    assert_eq!((grey.channels, grey.width, grey.height), (1, 95, 49));
}

#[test]
fn matches_jpeg_decoder_on_the_corpus_progressive_photo() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/elephants_5640x3172_prog.jpg");
    let bytes = std::fs::read(path).unwrap();
    let (ours, (theirs, ..)) = (shrunk(&bytes, 2).unwrap(), jpeg_decoder(&bytes, 2));
    let (db, most) = compare(&ours.pixels, &theirs);
    assert!(db > 50.0 && most <= 3, "{db:.1} dB, {most} at most");
}

#[test]
fn files_libjpeg_refuses_are_left_to_jpeg_decoder() {
    let whole = progressive(333, 221, 3, true);
    // A frame header that lies about its length: libjpeg refuses it.
    let mut broken = whole.clone();
    let sof = broken
        .windows(2)
        .position(|m| m == [0xFF, 0xC2])
        .expect("a progressive frame");
    broken[sof + 2..sof + 4].copy_from_slice(&3u16.to_be_bytes());
    assert!(shrunk(&broken, 2).is_none());
    let nothing = Some(Declined { spent_scans: 0 });
    assert_eq!(
        decode(b"\xFF\xD8\xFF", 2, &Markers::default()).err(),
        nothing
    );
    assert_eq!(decode(b"", 2, &Markers::default()).err(), nothing);
    // A scale libjpeg's IDCT swap does not cover.
    assert!(shrunk(&whole, 3).is_none());
    // Many refusals in a row leave nothing behind to trip over.
    for _ in 0..200 {
        assert!(shrunk(&broken, 2).is_none());
    }
    assert!(shrunk(&whole, 2).is_some());
}

/// `pixels` (RGB) resized by the render pipeline to `width`.
fn resized(pixels: Vec<u8>, width: u32, height: u32, to: u32) -> Vec<u8> {
    let decoded = super::super::pixels::Decoded {
        pixels,
        width,
        height,
        alpha: false,
        source: (width, height),
    };
    super::super::pipeline::resize(&decoded, &only("t", to, 0)[0])
        .unwrap()
        .0
}

#[test]
fn subsampled_chroma_comes_out_at_least_as_close_as_jpeg_decoder_s() {
    // A photo's corner as a progressive 4:2:0 file. Against its full
    // decode, both halves resized alike, libjpeg's chroma (an 8x8 IDCT at
    // the output's size) with our luma must not lose to jpeg-decoder's.
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/corpus/sunset_4272x2848.jpg");
    let (photo, pw, _) = jpeg_decoder(&std::fs::read(path).unwrap(), 1);
    let (w, h) = (1024, 768);
    let corner: Vec<u8> = (0..h)
        .flat_map(|y| &photo[(y * pw * 3) as usize..][..(w * 3) as usize])
        .copied()
        .collect();
    let bytes = encode(&corner, w, h, 3, true);
    let (full, w, h) = jpeg_decoder(&bytes, 1);
    let reference = resized(full, w, h, 480);
    let ours = shrunk(&bytes, 2).unwrap();
    let (theirs, tw, th) = jpeg_decoder(&bytes, 2);
    let (ours_db, _) = compare(
        &resized(ours.pixels, ours.width, ours.height, 480),
        &reference,
    );
    let (theirs_db, _) = compare(&resized(theirs, tw, th, 480), &reference);
    assert!(
        ours_db >= theirs_db - 0.1,
        "{ours_db:.2} dB against jpeg-decoder's {theirs_db:.2}"
    );
}

#[test]
fn a_component_no_scan_covers_is_left_to_jpeg_decoder() {
    // The review's crash (a null quantization table read by our IDCT):
    // colour files whose scans cover the luma only, found by a helper.
    for bytes in [
        &include_bytes!("testdata/progressive_luma_dc_only.jpg")[..],
        &include_bytes!("testdata/progressive_luma_only.jpg")[..],
    ] {
        assert!(shrunk(bytes, 2).is_none());
        assert!(shrunk(bytes, 8).is_none());
    }
}

/// `bytes` with an Adobe APP14 segment of `transform` after SOI.
fn with_adobe(bytes: &[u8], transform: u8) -> Vec<u8> {
    let mut file = bytes[..2].to_vec();
    file.extend_from_slice(&[0xFF, 0xEE, 0, 14]);
    file.extend_from_slice(b"Adobe");
    file.extend_from_slice(&[0, 100, 0, 0, 0, 0, transform]);
    file.extend_from_slice(&bytes[2..]);
    file
}

#[test]
fn colours_are_read_as_jpeg_decoder_reads_them() {
    // The review's wrong colours: libjpeg lets a JFIF or Adobe marker
    // overrule component ids, jpeg-decoder reads the ids first.
    let noise = progressive(96, 64, 3, false);
    let (pixels, ..) = jpeg_decoder(&noise, 1);
    let file = |ids, jfif| encode_as(&pixels, (96, 64, 3), false, ids, jfif);
    // Read as YCbCr by jpeg-decoder, whatever libjpeg would make of them.
    for (what, bytes) in [
        (
            "ids 1,2,3 and Adobe RGB",
            with_adobe(&file([1, 2, 3], false), 0),
        ),
        (
            "other ids, JFIF and Adobe RGB",
            with_adobe(&file([4, 5, 6], true), 0),
        ),
        (
            "other ids, Adobe YCbCr",
            with_adobe(&file([4, 5, 6], false), 1),
        ),
        ("other ids, no marker", file([4, 5, 6], false)),
    ] {
        assert_like_jpeg_decoder(&bytes, what);
    }
    // Not YCbCr to jpeg-decoder, or refused by it: left to it.
    for (what, bytes) in [
        ("ids R,G,B and JFIF", file([82, 71, 66], true)),
        ("ids r,g,b", file([114, 103, 98], true)),
        ("big-gamut YCC ids", file([1, 34, 35], true)),
        (
            "other ids and Adobe RGB",
            with_adobe(&file([4, 5, 6], false), 0),
        ),
        (
            "an unknown Adobe transform",
            with_adobe(&file([1, 2, 3], true), 7),
        ),
    ] {
        assert!(shrunk(&bytes, 2).is_none(), "{what}");
    }
}

#[test]
fn corrupt_data_is_read_past_once_and_a_doubtful_header_left_to_jpeg_decoder() {
    let whole = progressive(333, 221, 3, true);
    let clean = shrunk(&whole, 2).unwrap();
    // Bytes between the last scan and EOI change no pixel.
    let mut junk = whole[..whole.len() - 2].to_vec();
    junk.extend_from_slice(&[0xFF, 0xFE, 0, 4, b'a', b'b', 0, 0, 0xFF, 0xD9]);
    assert_eq!(shrunk(&junk, 2).unwrap().pixels, clean.pixels);
    // A cut scan: the rest of it is left out, not decoded again.
    let cut = shrunk(&whole[..whole.len() * 2 / 3], 2).unwrap();
    assert_eq!((cut.width, cut.height), (clean.width, clean.height));
    // A JFIF version libjpeg warns about while reading the header.
    let mut odd = whole.clone();
    let app0 = odd
        .windows(7)
        .position(|w| w[..2] == [0xFF, 0xE0] && &w[4..] == b"JFI")
        .expect("a JFIF marker");
    odd[app0 + 9] = 3;
    assert!(shrunk(&odd, 2).is_none());
}

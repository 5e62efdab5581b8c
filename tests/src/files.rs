//! Hand-made image files for the bad-input tests: headers that lie about
//! their size, extra segments and chunks, and broken bodies.

fn crc32(bytes: &[u8]) -> u32 {
    let mut c = 0xFFFF_FFFFu32;
    for b in bytes {
        c ^= *b as u32;
        for _ in 0..8 {
            c = if c & 1 != 0 {
                0xEDB8_8320 ^ (c >> 1)
            } else {
                c >> 1
            };
        }
    }
    !c
}

/// One PNG chunk with its length and CRC.
pub fn png_chunk(kind: &[u8; 4], data: &[u8]) -> Vec<u8> {
    let mut body = kind.to_vec();
    body.extend(data);
    let mut out = (data.len() as u32).to_be_bytes().to_vec();
    out.extend(&body);
    out.extend(crc32(&body).to_be_bytes());
    out
}

/// A PNG whose header declares `w`x`h` pixels, with `idat` as its only data.
pub fn declared_png(w: u32, h: u32, idat: &[u8]) -> Vec<u8> {
    let mut ihdr = w.to_be_bytes().to_vec();
    ihdr.extend(h.to_be_bytes());
    ihdr.extend([8, 6, 0, 0, 0]);
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(png_chunk(b"IHDR", &ihdr));
    if !idat.is_empty() {
        png.extend(png_chunk(b"IDAT", idat));
    }
    png.extend(png_chunk(b"IEND", &[]));
    png
}

/// `png` with `chunk` inserted right after its IHDR.
pub fn png_with_chunk(png: &[u8], chunk: &[u8]) -> Vec<u8> {
    let after_ihdr = 8 + 8 + 13 + 4;
    let mut out = png[..after_ihdr].to_vec();
    out.extend(chunk);
    out.extend(&png[after_ihdr..]);
    out
}

/// `jpeg` with one segment (marker `0xFF marker`) inserted after its SOI.
pub fn jpeg_with_segment(jpeg: &[u8], marker: u8, payload: &[u8]) -> Vec<u8> {
    assert!(
        payload.len() <= 65533,
        "a JPEG segment holds at most 65533 bytes"
    );
    let mut out = jpeg[..2].to_vec();
    out.extend([0xFF, marker]);
    out.extend(((payload.len() + 2) as u16).to_be_bytes());
    out.extend(payload);
    out.extend(&jpeg[2..]);
    out
}

/// `jpeg` with the frame header (SOF0..SOF2) patched to declare `w`x`h`.
pub fn jpeg_declaring(jpeg: &[u8], w: u16, h: u16) -> Vec<u8> {
    let mut out = jpeg.to_vec();
    let sof = out
        .windows(2)
        .position(|m| m[0] == 0xFF && (0xC0..=0xC2).contains(&m[1]))
        .expect("a frame header");
    out[sof + 5..sof + 7].copy_from_slice(&h.to_be_bytes());
    out[sof + 7..sof + 9].copy_from_slice(&w.to_be_bytes());
    out
}

/// A WebP whose extended header declares a `w`x`h` canvas (at most 16384
/// each), around a real 16x16 lossless image.
pub fn webp_declaring(w: u32, h: u32) -> Vec<u8> {
    let mut small = Vec::new();
    image::DynamicImage::new_rgb8(16, 16)
        .write_to(
            &mut std::io::Cursor::new(&mut small),
            image::ImageFormat::WebP,
        )
        .expect("encode webp");
    let mut body = b"WEBPVP8X".to_vec();
    body.extend(10u32.to_le_bytes());
    body.extend([0u8; 4]);
    body.extend(&(w - 1).to_le_bytes()[..3]);
    body.extend(&(h - 1).to_le_bytes()[..3]);
    body.extend(&small[12..]);
    let mut out = b"RIFF".to_vec();
    out.extend((body.len() as u32).to_le_bytes());
    out.extend(body);
    out
}

/// A TIFF-format EXIF payload (`Exif\0\0` + TIFF) whose first IFD claims
/// `entries` entries and points its next IFD back at itself.
pub fn looping_exif(entries: u16, len: usize) -> Vec<u8> {
    let mut tiff = b"II*\0\x08\0\0\0".to_vec();
    tiff.extend(entries.to_le_bytes());
    for i in 0..entries.min(((len.saturating_sub(16)) / 12) as u16) {
        // Tag, type LONG, a vast count, an offset past the end.
        tiff.extend((0x010F + i).to_le_bytes());
        tiff.extend(4u16.to_le_bytes());
        tiff.extend(u32::MAX.to_le_bytes());
        tiff.extend(0xFFFF_FFF0u32.to_le_bytes());
    }
    tiff.extend(8u32.to_le_bytes());
    let mut out = b"Exif\0\0".to_vec();
    out.extend(tiff);
    out.resize(len.max(out.len()), 0xAB);
    out
}

/// `bytes` with `span` bytes in the middle overwritten.
pub fn corrupt_middle(bytes: &[u8], span: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mid = out.len() / 2;
    for (i, b) in out[mid..(mid + span).min(bytes.len())]
        .iter_mut()
        .enumerate()
    {
        *b = (i as u8).wrapping_mul(37) ^ 0x5A;
    }
    out
}

/// `jpeg` with its last scan repeated `extra` more times before its end:
/// each repeat costs a decoder another pass over every block (in a
/// progressive file, a refinement scan as real as the others), a scan bomb.
pub fn jpeg_with_scans(jpeg: &[u8], extra: usize) -> Vec<u8> {
    let last = jpeg
        .windows(2)
        .rposition(|m| m == [0xFF, 0xDA])
        .expect("a scan");
    let end = jpeg.len() - 2;
    let mut out = jpeg[..end].to_vec();
    for _ in 0..extra {
        out.extend_from_slice(&jpeg[last..end]);
    }
    out.extend([0xFF, 0xD9]);
    out
}

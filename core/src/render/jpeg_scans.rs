//! How many scans a JPEG has, from a walk over its markers without
//! decoding it (under 2 ms for the corpus's 16 MB photo). A progressive
//! file's every scan walks every block of its components again, so a file
//! of thousands of tiny scans costs thousands of decodes (libjpeg-turbo's
//! advisory LJT-01-004); such a file is refused before any decoder runs,
//! and so is one whose markers would let a decoder see other scans than
//! the walk counts. `trailers::Framer` walks the same markers at upload,
//! but stops at the first byte it cannot frame; decoders skip such bytes
//! (jpeg-decoder, like libjpeg, passes over garbage between segments) and
//! decode the scans after them, so this count must skip on as they do.

/// Scans a JPEG may have at most. libjpeg's default progressive script
/// has 10, mozjpeg's tuned ones about 20, and libjpeg's jpegtran refuses a
/// script of more than 100.
pub const MAX_SCANS: u32 = 100;

/// Scans times pixels a decode may walk. A scan costs up to about 1.3 ns a
/// pixel (a refinement scan of nothing but end-of-band runs, measured at
/// 100 MP: 100 such scans took 12.7 s), so this is about 4 s of one core.
const MAX_SCAN_PIXELS: u64 = 3_000_000_000;

/// The scans a JPEG of `pixels` may have: `MAX_SCANS` up to 30 MP, then
/// fewer as the photo grows (30 at 100 MP), never under libjpeg's 10.
pub fn limit(pixels: u64) -> u32 {
    (MAX_SCAN_PIXELS / pixels.max(1)).clamp(10, MAX_SCANS as u64) as u32
}

/// The scans of `bytes`, counted until EOI or the end of the bytes; `None`
/// when a marker stands where no decoder takes it (a second SOI, TEM, or a
/// restart or stuffing outside a scan's data), which one decoder refuses
/// and another reads as a segment with a length: the count would then not
/// be the scans that decoder walks. Inside entropy-coded data a 0xFF byte
/// is followed by 0x00 (stuffing), a restart marker or fill bytes before
/// the next marker, so every other marker is found by looking for 0xFF
/// alone; segments with a length are skipped whole, so their payloads (an
/// EXIF thumbnail, an ICC profile) are never mistaken for markers.
pub fn count(bytes: &[u8]) -> Option<u32> {
    let mut scans = 0;
    let mut in_scan = false;
    let mut i = 2;
    while let Some(at) = memchr::memchr(0xFF, bytes.get(i..).unwrap_or_default()) {
        i += at + 1;
        while bytes.get(i) == Some(&0xFF) {
            i += 1;
        }
        let Some(&marker) = bytes.get(i) else {
            break;
        };
        i += 1;
        match marker {
            0x00 | 0xD0..=0xD7 if in_scan => continue,
            0x00 | 0x01 | 0xD0..=0xD8 => return None,
            0xD9 => break,
            0xDA => {
                scans += 1;
                in_scan = true;
            }
            _ => in_scan = false,
        }
        let Some(len) = bytes.get(i..i + 2) else {
            break;
        };
        i += usize::from(u16::from_be_bytes([len[0], len[1]]));
    }
    Some(scans)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(marker: u8, payload: &[u8]) -> Vec<u8> {
        let mut s = vec![0xFF, marker];
        s.extend_from_slice(&(payload.len() as u16 + 2).to_be_bytes());
        s.extend_from_slice(payload);
        s
    }

    /// SOI, an APP1 whose payload looks like markers, a SOF, then `scans`
    /// scans whose entropy data has stuffing, a restart and fill bytes.
    fn file(sof: u8, scans: usize) -> Vec<u8> {
        let mut f = vec![0xFF, 0xD8];
        f.extend(segment(0xE1, &[0xFF, 0xDA, 0xFF, 0xC2, 0xFF, 0xD9]));
        f.extend(segment(sof, &[8, 0, 16, 0, 16, 1, 1, 0x11, 0]));
        for _ in 0..scans {
            f.extend(segment(0xDA, &[1, 1, 0, 0, 63, 0]));
            f.extend([0x12, 0xFF, 0x00, 0x34, 0xFF, 0xD3, 0x56, 0xFF, 0xFF]);
        }
        f.extend([0xFF, 0xD9]);
        f
    }

    #[test]
    fn counts_scans_and_nothing_that_only_looks_like_one() {
        assert_eq!(count(&file(0xC2, 12)), Some(12));
        assert_eq!(count(&file(0xC0, 1)), Some(1));
        assert_eq!(count(&file(0xC2, 500)), Some(500));
    }

    #[test]
    fn a_marker_no_decoder_takes_outside_a_scan_makes_the_count_void() {
        // Right after the frame header, where zune-jpeg would read it as a
        // segment with a length and go on to the scans behind it.
        for stray in [0xD8, 0x01, 0xD0, 0xD7, 0x00] {
            let mut f = file(0xC2, 3);
            let sof = f.windows(2).rposition(|m| m == [0xFF, 0xC2]).unwrap();
            f.splice(sof..sof, [0xFF, stray, 0x00, 0x04, 0xFF, 0xD9]);
            assert_eq!(count(&f), None, "{stray:#x}");
        }
    }

    #[test]
    fn the_limit_falls_with_the_photo_size_down_to_ten() {
        assert_eq!(limit(24_000_000), MAX_SCANS);
        assert_eq!(limit(100_000_000), 30);
        assert_eq!(limit(1_000_000_000), 10);
        assert_eq!(limit(0), MAX_SCANS);
    }

    #[test]
    fn a_cut_or_lying_file_ends_the_walk() {
        let f = file(0xC2, 3);
        for cut in 0..f.len() {
            assert!(count(&f[..cut]).unwrap_or(0) <= 3);
        }
        // A length running past the end.
        assert_eq!(count(&[0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 0, 0]), Some(0));
    }

    #[test]
    fn the_corpus_photos_have_one_scan_or_a_progressive_script() {
        let corpus = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpus");
        let mut seen = 0;
        for entry in std::fs::read_dir(corpus).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_none_or(|e| e != "jpg") {
                continue;
            }
            let n = count(&std::fs::read(&path).unwrap()).unwrap();
            // elephants_..._prog.jpg has libjpeg's default script of 10.
            let want = if path.to_string_lossy().contains("_prog") {
                10
            } else {
                1
            };
            assert_eq!(n, want, "{path:?}");
            seen += 1;
        }
        assert!(seen >= 5);
    }
}

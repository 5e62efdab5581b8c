//! How many scans a JPEG has, from a walk over its markers without
//! decoding it (under 2 ms for the corpus's 16 MB photo). A progressive
//! file's every scan walks every block of its components again, so a file
//! of thousands of tiny scans costs thousands of decodes (libjpeg-turbo's
//! advisory LJT-01-004); such a file is refused before any decoder runs.

/// Scans a JPEG may have. libjpeg's default progressive script has 10,
/// mozjpeg's tuned ones about 20; 100 leaves room for any sane encoder,
/// and the decode of the largest photo allowed stays within seconds.
pub const MAX_SCANS: u32 = 100;

/// The scans of `bytes`, counted until EOI or the end of the bytes. Inside
/// entropy-coded data a 0xFF byte is followed by 0x00 (stuffing), by a
/// restart marker or by fill bytes before the next marker, so every other
/// marker is found by looking for 0xFF alone; segments with a length are
/// skipped whole, so their payloads (an EXIF thumbnail, an ICC profile)
/// are never mistaken for markers.
pub fn scans(bytes: &[u8]) -> u32 {
    let mut scans = 0;
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
            // Stuffing, TEM, restarts and SOI carry no length.
            0x00 | 0x01 | 0xD0..=0xD8 => continue,
            0xD9 => break,
            0xDA => scans += 1,
            _ => {}
        }
        let Some(len) = bytes.get(i..i + 2) else {
            break;
        };
        i += usize::from(u16::from_be_bytes([len[0], len[1]]));
    }
    scans
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
        assert_eq!(scans(&file(0xC2, 12)), 12);
        assert_eq!(scans(&file(0xC0, 1)), 1);
        assert_eq!(scans(&file(0xC2, 500)), 500);
    }

    #[test]
    fn a_cut_or_lying_file_ends_the_walk() {
        let f = file(0xC2, 3);
        for cut in 0..f.len() {
            assert!(scans(&f[..cut]) <= 3);
        }
        // A length running past the end.
        assert_eq!(scans(&[0xFF, 0xD8, 0xFF, 0xE1, 0xFF, 0xFF, 0, 0]), 0);
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
            let n = scans(&std::fs::read(&path).unwrap());
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

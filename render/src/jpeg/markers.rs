//! What a JPEG's markers say, from a walk over them without decoding it
//! (a small fraction of a decode): how many scans it has, its
//! ICC profile, and what jpeg-decoder reads its colour space from.
//!
//! A progressive file's every scan walks every block of its components
//! again, so a file of thousands of tiny scans costs thousands of decodes
//! (libjpeg-turbo's advisory LJT-01-004); such a file is refused before
//! any decoder runs, and so is one whose markers would let a decoder see
//! other scans than the walk counts. `trailers::Framer` walks the same
//! markers at upload, but stops at the first byte it cannot frame;
//! decoders skip such bytes (jpeg-decoder, like libjpeg, passes over
//! garbage between segments) and decode the scans after them, so this
//! walk must skip on as they do.

use std::ops::Range;

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

/// What the markers of one JPEG say.
#[derive(Debug, Default)]
pub struct Markers {
    /// Scans, counted until EOI or the end of the bytes.
    pub scans: u32,
    /// A JFIF APP0 segment was seen.
    jfif: bool,
    /// The colour transform of the last Adobe APP14 segment.
    adobe: Option<u8>,
    /// An Adobe segment of a transform jpeg-decoder refuses was seen.
    bad_adobe: bool,
    /// ICC chunks: sequence number, count, where the data is.
    icc: Vec<(u8, u8, Range<usize>)>,
}

/// How jpeg-decoder reads a file's samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Colour {
    Grey,
    YCbCr,
}

/// The markers of `bytes`; `None` when a marker stands where no decoder
/// takes it (a second SOI, TEM, or a restart or stuffing outside a scan's
/// data), which one decoder refuses and another reads as a segment with a
/// length: the count would then not be the scans that decoder walks.
/// Inside entropy-coded data a 0xFF byte is followed by 0x00 (stuffing), a
/// restart marker or fill bytes before the next marker, so every other
/// marker is found by looking for 0xFF alone; segments with a length are
/// skipped whole, so their payloads (an EXIF thumbnail, an ICC profile)
/// are never mistaken for markers. Linear in the file's size whatever its
/// segments: no list is walked per segment.
pub fn read(bytes: &[u8]) -> Option<Markers> {
    let mut m = Markers::default();
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
                m.scans += 1;
                in_scan = true;
            }
            _ => in_scan = false,
        }
        let Some(len) = bytes.get(i..i + 2) else {
            break;
        };
        let len = usize::from(u16::from_be_bytes([len[0], len[1]]));
        if let Some(payload) = bytes.get(i + 2..i + len) {
            m.segment(marker, payload, i + 2);
        }
        i += len;
    }
    Some(m)
}

impl Markers {
    /// Notes what an APP0, APP2 or APP14 payload at `at` says, by
    /// jpeg-decoder's rules (its `parse_app`): an ICC chunk holds at least
    /// one byte, and the first Adobe transform it does not know ends its
    /// decode.
    fn segment(&mut self, marker: u8, payload: &[u8], at: usize) {
        match marker {
            0xE0 if payload.starts_with(b"JFIF\0") => self.jfif = true,
            0xE2 if payload.len() > 14 => {
                if let Some([seq, count, ..]) = payload.strip_prefix(b"ICC_PROFILE\0") {
                    self.icc.push((*seq, *count, at + 14..at + payload.len()));
                }
            }
            0xEE if payload.len() >= 12 && payload.starts_with(b"Adobe\0") => {
                self.adobe = Some(payload[11]);
                self.bad_adobe |= payload[11] > 2;
            }
            _ => {}
        }
    }

    /// The ICC profile, assembled from `bytes` (the file read) as
    /// jpeg-decoder assembles it: every chunk there once, under 255.
    pub fn icc(&self, bytes: &[u8]) -> Option<Vec<u8>> {
        let count = self.icc.len();
        if count == 0 || count >= 255 {
            return None;
        }
        let mut order: Vec<Option<&Range<usize>>> = vec![None; count + 1];
        for (seq, declared, range) in &self.icc {
            let slot = order.get_mut(usize::from(*seq)).filter(|_| *seq != 0)?;
            if usize::from(*declared) != count || slot.replace(range).is_some() {
                return None;
            }
        }
        let mut profile = Vec::new();
        for range in order.into_iter().skip(1) {
            profile.extend_from_slice(bytes.get(range?.clone())?);
        }
        Some(profile)
    }

    /// How jpeg-decoder would read the samples of a frame of components
    /// `ids` (its `determine_color_transform`): component ids first, then
    /// a JFIF marker, then Adobe's transform; `None` for anything but grey
    /// or YCbCr, and for a transform jpeg-decoder refuses.
    pub fn colour(&self, ids: &[i32]) -> Option<Colour> {
        if self.bad_adobe {
            return None;
        }
        match ids {
            [_] => Some(Colour::Grey),
            [1, 2, 3] => Some(Colour::YCbCr),
            [1, 34, 35] | [82, 71, 66] | [114, 103, 98] => None,
            [_, _, _] if self.jfif || self.adobe.is_none_or(|t| t == 1) => Some(Colour::YCbCr),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(bytes: &[u8]) -> Option<u32> {
        read(bytes).map(|m| m.scans)
    }

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

    /// `file` with ICC chunks (sequence, count, data) put in at `at`.
    fn with_icc(mut f: Vec<u8>, at: usize, chunks: &[(u8, u8, &[u8])]) -> Vec<u8> {
        let mut segments = Vec::new();
        for (seq, count, data) in chunks {
            let mut payload = b"ICC_PROFILE\0".to_vec();
            payload.extend_from_slice(&[*seq, *count]);
            payload.extend_from_slice(data);
            segments.extend(segment(0xE2, &payload));
        }
        f.splice(at..at, segments);
        f
    }

    #[test]
    fn the_icc_profile_comes_back_wherever_its_chunks_stand() {
        let plain = file(0xC2, 3);
        let profile: Vec<u8> = (0..300u32).map(|i| (i * 7) as u8).collect();
        let (one, two) = profile.split_at(120);
        let scans: Vec<usize> = (0..plain.len() - 4)
            .filter(|i| plain[*i..].starts_with(&[0xFF, 0xDA, 0, 8]))
            .collect();
        let eoi = plain.len() - 2;
        for at in [2, scans[0], scans[1], eoi] {
            let f = with_icc(plain.clone(), at, &[(2, 2, two), (1, 2, one)]);
            assert_eq!(read(&f).unwrap().icc(&f), Some(profile.clone()), "{at}");
        }
        // One chunk here, the other after the scans.
        let f = with_icc(plain.clone(), eoi, &[(2, 2, two)]);
        let f = with_icc(f, 2, &[(1, 2, one)]);
        assert_eq!(read(&f).unwrap().icc(&f), Some(profile.clone()));
        // A chunk of no data is no chunk to jpeg-decoder (a review's
        // files, whose colours changed with the decoder).
        let f = with_icc(plain.clone(), 2, &[(1, 1, &profile), (2, 2, b"")]);
        assert_eq!(read(&f).unwrap().icc(&f), Some(profile.clone()));
        let f = with_icc(plain.clone(), 2, &[(1, 2, &profile), (2, 2, b"")]);
        assert_eq!(read(&f).unwrap().icc(&f), None);
        assert_eq!(read(&plain).unwrap().icc(&plain), None);
    }

    #[test]
    fn an_icc_profile_missing_a_chunk_or_holding_one_twice_is_none() {
        let plain = file(0xC2, 1);
        for chunks in [
            &[(1, 2, &b"ab"[..])][..],
            &[(1, 2, b"ab"), (1, 2, b"cd")],
            &[(0, 2, b"ab"), (1, 2, b"cd")],
            &[(1, 2, b"ab"), (2, 3, b"cd")],
            &[(1, 2, b"ab"), (3, 2, b"cd")],
        ] {
            let f = with_icc(plain.clone(), 2, chunks);
            assert_eq!(read(&f).unwrap().icc(&f), None, "{chunks:?}");
        }
    }

    #[test]
    fn a_flood_of_segments_is_walked_once() {
        // The review's 200,000 empty APP2 segments, each of which libjpeg
        // saved by walking the list of those before it.
        let mut f = file(0xC2, 3);
        f.splice(2..2, [0xFF, 0xE2, 0, 2].repeat(200_000));
        let m = read(&f).unwrap();
        assert_eq!((m.scans, m.icc(&f)), (3, None));
    }

    #[test]
    fn colour_follows_jpeg_decoder_ids_first_then_jfif_then_adobe() {
        let m = |jfif, adobe: Option<u8>| Markers {
            jfif,
            adobe,
            bad_adobe: adobe.is_some_and(|t| t > 2),
            ..Markers::default()
        };
        let ycc = Some(Colour::YCbCr);
        assert_eq!(m(false, Some(0)).colour(&[1, 2, 3]), ycc);
        assert_eq!(m(false, None).colour(&[82, 71, 66]), None);
        assert_eq!(m(true, None).colour(&[82, 71, 66]), None);
        assert_eq!(m(true, Some(0)).colour(&[7, 8, 9]), ycc);
        assert_eq!(m(false, Some(0)).colour(&[7, 8, 9]), None);
        assert_eq!(m(false, Some(1)).colour(&[7, 8, 9]), ycc);
        assert_eq!(m(false, None).colour(&[7, 8, 9]), ycc);
        assert_eq!(m(true, Some(9)).colour(&[1, 2, 3]), None);
        assert_eq!(m(false, None).colour(&[1]), Some(Colour::Grey));
        assert_eq!(m(true, None).colour(&[1, 2, 3, 4]), None);
        let f = [b"\xFF\xD8".to_vec(), segment(0xE0, b"JFIF\0\x01\x02")].concat();
        assert!(read(&f).unwrap().jfif);
        let adobe = |t: u8| segment(0xEE, &[&b"Adobe\0\x64\0\0\0\0"[..], &[t]].concat());
        let f = [b"\xFF\xD8".to_vec(), adobe(2)].concat();
        assert_eq!(read(&f).unwrap().adobe, Some(2));
        // An unknown transform ends jpeg-decoder's decode, whatever follows.
        let f = [b"\xFF\xD8".to_vec(), adobe(7), adobe(1)].concat();
        assert_eq!(read(&f).unwrap().colour(&[1, 2, 3]), None);
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

//! The phone layouts of tests/corpus/made (see scripts/make_phone_samples.py)
//! and real multi-picture files, framed in chunks of every awkward size.

use super::*;
use crate::inspect::trailers::Framer;

const HOPPER: &[u8] = include_bytes!("../../../tests/corpus/pillow/hopper.jpg");
const MPO: &[u8] = include_bytes!("../../../tests/corpus/pillow/ignore_frame_size.mpo");
const MOTION: &[u8] = include_bytes!("../../../tests/corpus/made/motion-photo.jpg");
const MICRO: &[u8] = include_bytes!("../../../tests/corpus/made/micro-video.jpg");
const ULTRA_HDR: &[u8] = include_bytes!("../../../tests/corpus/made/ultra-hdr.jpg");
const SAMSUNG: &[u8] = include_bytes!("../../../tests/corpus/made/samsung-sef.jpg");
const UNKNOWN: &[u8] = include_bytes!("../../../tests/corpus/made/unknown-trailer.jpg");
const WRONG_LENGTH: &[u8] = include_bytes!("../../../tests/corpus/made/motion-wrong-length.jpg");
const TRUNCATED: &[u8] = include_bytes!("../../../tests/corpus/made/motion-truncated.jpg");

fn parts(file: &[u8], chunk: usize) -> Option<Vec<Part>> {
    let mut f = Framer::default();
    for c in file.chunks(chunk) {
        f.push(c);
    }
    f.finish()
}

/// The verdict, the same whatever the chunking.
fn judged(file: &[u8]) -> Result<Option<Clip>, &'static str> {
    let ends = Ends {
        head: file,
        tail: file,
        total: file.len() as u64,
    };
    let first = judge(parts(file, file.len()).as_deref(), &ends);
    for chunk in [1, 2, 7, 8, 9, 4096] {
        assert_eq!(
            parts(file, chunk),
            parts(file, file.len()),
            "chunks of {chunk}"
        );
    }
    first
}

#[test]
fn a_plain_jpeg_is_one_part() {
    let n = HOPPER.len() as u64;
    assert_eq!(
        parts(HOPPER, 5),
        Some(vec![Part::Jpeg { start: 0, end: n }])
    );
    assert_eq!(judged(HOPPER), Ok(None));
    let mut padded = HOPPER.to_vec();
    padded.extend([0; 100]);
    assert_eq!(judged(&padded), Ok(None));
}

#[test]
fn motion_photos_carry_their_clip() {
    for file in [MOTION, MICRO] {
        let clip = judged(file).unwrap().expect("a clip");
        assert_eq!(clip.offset + clip.len, file.len() as u64);
        assert_eq!(&file[clip.offset as usize + 4..][..4], b"ftyp");
    }
}

#[test]
fn gain_maps_mpo_and_samsung_trailers_are_photos() {
    assert!(matches!(
        parts(ULTRA_HDR, 3).unwrap()[..],
        [Part::Jpeg { .. }, Part::Jpeg { .. }]
    ));
    assert_eq!(judged(ULTRA_HDR), Ok(None));
    assert_eq!(judged(MPO), Ok(None));
    assert_eq!(judged(SAMSUNG), Ok(None));
    let ends = Ends {
        head: SAMSUNG,
        tail: SAMSUNG,
        total: SAMSUNG.len() as u64,
    };
    assert_eq!(samsung(&ends), Some(HOPPER.len() as u64));
}

#[test]
fn anything_else_after_the_end_is_refused() {
    assert_eq!(judged(UNKNOWN), Err(REFUSED));
    assert_eq!(judged(WRONG_LENGTH), Err(REFUSED));
    assert_eq!(judged(TRUNCATED), Err(REFUSED));
    // A clip nobody announced: the MP4 of a motion photo after a plain JPEG.
    let clip_at = MOTION.len() - judged(MOTION).unwrap().unwrap().len as usize;
    let mut polyglot = HOPPER.to_vec();
    polyglot.extend_from_slice(&MOTION[clip_at..]);
    assert_eq!(judged(&polyglot), Err(REFUSED));
    // A second JPEG that no MPF index or XMP container announces.
    let mut two = HOPPER.to_vec();
    two.extend_from_slice(HOPPER);
    assert_eq!(judged(&two), Err(REFUSED));
    // Cut short: no EOI at all.
    assert_eq!(judged(&HOPPER[..HOPPER.len() / 2]), Err(REFUSED));
}

/// The motion photo with its clip swapped for `clip` of the same length, so
/// the XMP announcement still matches.
fn with_clip(clip: impl FnOnce(usize) -> Vec<u8>) -> Vec<u8> {
    let len = judged(MOTION).unwrap().unwrap().len as usize;
    let mut file = MOTION[..MOTION.len() - len].to_vec();
    let body = clip(len);
    assert_eq!(body.len(), len);
    file.extend(body);
    file
}

fn mp4_box(kind: &[u8; 4], size: usize, fill: u8) -> Vec<u8> {
    let mut b = (size as u32).to_be_bytes().to_vec();
    b.extend_from_slice(kind);
    b.resize(size.max(8), fill);
    b
}

#[test]
fn a_clip_must_frame_itself_as_a_film() {
    assert!(judged(&with_clip(|n| {
        let mut c = mp4_box(b"ftyp", 24, 0);
        c.extend(mp4_box(b"moov", 40, 0));
        c.extend(mp4_box(b"mdat", n - 64, 7));
        c
    }))
    .unwrap()
    .is_some());
    // A box of size 0 ("to the end") would carry any bytes: a ZIP, say.
    let to_end = with_clip(|n| {
        let mut c = 0u32.to_be_bytes().to_vec();
        c.extend_from_slice(b"ftypisom");
        c.resize(n - 4, 0);
        c.extend_from_slice(b"PK\x05\x06");
        c
    });
    assert_eq!(judged(&to_end), Err(REFUSED));
    let sized_then_to_end = with_clip(|n| {
        let mut c = mp4_box(b"ftyp", 24, 0);
        c.extend(mp4_box(b"moov", 40, 0));
        c.extend(0u32.to_be_bytes());
        c.extend_from_slice(b"mdat");
        c.resize(n, 7);
        c
    });
    assert_eq!(judged(&sized_then_to_end), Err(REFUSED));
    // An ftyp that swallows the clip, and a film with no index.
    assert_eq!(judged(&with_clip(|n| mp4_box(b"ftyp", n, 0))), Err(REFUSED));
    let no_moov = with_clip(|n| {
        let mut c = mp4_box(b"ftyp", 24, 0);
        c.extend(mp4_box(b"mdat", n - 24, 7));
        c
    });
    assert_eq!(judged(&no_moov), Err(REFUSED));
}

//! AVIF renders, encoded by rav1e through ravif (pure Rust, the encoder
//! the `image` crate uses).

use image::codecs::avif::AvifEncoder;
use image::{ExtendedColorType, ImageEncoder};

/// rav1e speed 1 (slowest) to 10, chosen by measurement (bench/RESULTS.md,
/// 1280 px renders of two 12-20 MP photos): 9 is the knee, about twice as
/// fast as 8 for 1-2 % more bytes; 10 is another 1.5x faster but 13-16 %
/// bigger; 6 and below cost more time for under 1 % fewer bytes.
pub const SPEED: u8 = 9;

/// The render quality (1-100, as for jpg and webp) on ravif's scale.
/// ravif's scale is calibrated against libjpeg's, but AV1 holds detail
/// better at a given number, so the same number would spend bytes for
/// nothing: AVIF gets 8 points less (80 -> 72), like cavif's own advice.
pub fn quality(q: u8) -> u8 {
    q.saturating_sub(8).clamp(1, 100)
}

pub fn encode(px: &[u8], w: u32, h: u32, alpha: bool, q: u8) -> Result<Vec<u8>, String> {
    encode_at(px, w, h, alpha, q, SPEED)
}

/// At a given speed (the benchmark compares speeds).
pub fn encode_at(
    px: &[u8],
    w: u32,
    h: u32,
    alpha: bool,
    q: u8,
    speed: u8,
) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    let kind = if alpha {
        ExtendedColorType::Rgba8
    } else {
        ExtendedColorType::Rgb8
    };
    AvifEncoder::new_with_speed_quality(&mut out, speed, quality(q))
        .write_image(px, w, h, kind)
        .map_err(|e| e.to_string())?;
    Ok(out)
}

/// The width and height an AVIF file declares (its `ispe` property),
/// found by walking ISO-BMFF boxes: enough for tests and probes that have
/// no AV1 decoder.
pub fn declared_size(file: &[u8]) -> Option<(u32, u32)> {
    let at = memchr::memmem::find(file, b"ispe")?;
    let body = file.get(at + 8..at + 16)?;
    let w = u32::from_be_bytes(body[..4].try_into().ok()?);
    let h = u32::from_be_bytes(body[4..].try_into().ok()?);
    Some((w, h))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encodes_an_avif_of_the_right_size() {
        let (w, h) = (64u32, 40u32);
        let px: Vec<u8> = (0..w * h * 3).map(|i| (i % 251) as u8).collect();
        let out = encode(&px, w, h, false, 80).unwrap();
        assert_eq!(&out[4..12], b"ftypavif");
        assert_eq!(declared_size(&out), Some((w, h)));
        assert_eq!(quality(80), 72);
        assert_eq!(quality(1), 1);
    }
}

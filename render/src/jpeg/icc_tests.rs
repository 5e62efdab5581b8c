//! The ICC profile of a JPEG shrunk on load, applied whatever its coding
//! process (`shrink` takes it from the marker walk for both).

use crate::jpeg::shrink::decode_jpeg;
use crate::jpeg::shrink::tests::only;

/// An ICC v2 matrix/TRC RGB profile whose red and blue primaries are
/// sRGB's blue and red: converted to sRGB, red pixels turn blue.
fn swapped_profile() -> Vec<u8> {
    let fixed = |v: f64| ((v * 65536.0).round() as i32).to_be_bytes();
    let xyz = |x, y, z| [&b"XYZ \0\0\0\0"[..], &fixed(x), &fixed(y), &fixed(z)].concat();
    let tags: [(&[&[u8; 4]], Vec<u8>); 5] = [
        (&[b"wtpt"], xyz(0.9642, 1.0, 0.8249)),
        (&[b"rXYZ"], xyz(0.1431, 0.0606, 0.7141)),
        (&[b"gXYZ"], xyz(0.3851, 0.7169, 0.0971)),
        (&[b"bXYZ"], xyz(0.4361, 0.2225, 0.0139)),
        // Gamma 2.2 (u8.8), one curve for the three channels.
        (
            &[b"rTRC", b"gTRC", b"bTRC"],
            b"curv\0\0\0\0\0\0\0\x01\x02\x33\0\0".to_vec(),
        ),
    ];
    let count: usize = tags.iter().map(|(sigs, _)| sigs.len()).sum();
    let mut table = (count as u32).to_be_bytes().to_vec();
    let mut data = Vec::new();
    let mut at = 128 + 4 + 12 * count;
    for (sigs, body) in &tags {
        for sig in *sigs {
            table.extend_from_slice(*sig);
            table.extend_from_slice(&(at as u32).to_be_bytes());
            table.extend_from_slice(&(body.len() as u32).to_be_bytes());
        }
        data.extend_from_slice(body);
        at += body.len();
    }
    let mut header = vec![0u8; 128];
    header[0..4].copy_from_slice(&(at as u32).to_be_bytes());
    header[8..12].copy_from_slice(&[2, 0x10, 0, 0]);
    header[12..24].copy_from_slice(b"mntrRGB XYZ ");
    header[36..40].copy_from_slice(b"acsp");
    header[68..80].copy_from_slice(&[&fixed(0.9642)[..], &fixed(1.0), &fixed(0.8249)].concat());
    [header, table, data].concat()
}

/// `bytes` with `profile` as one ICC chunk after SOI.
fn with_profile(bytes: &[u8], profile: &[u8]) -> Vec<u8> {
    let mut file = bytes[..2].to_vec();
    file.extend_from_slice(&[0xFF, 0xE2]);
    file.extend_from_slice(&(2 + 14 + profile.len() as u16).to_be_bytes());
    file.extend_from_slice(b"ICC_PROFILE\0\x01\x01");
    file.extend_from_slice(profile);
    file.extend_from_slice(&bytes[2..]);
    file
}

#[test]
fn the_icc_profile_is_applied_to_baseline_and_progressive_files() {
    let red: Vec<u8> = [200u8, 30, 30].repeat(64 * 48);
    let mut baseline = Vec::new();
    image::codecs::jpeg::JpegEncoder::new(&mut baseline)
        .encode(&red, 64, 48, image::ExtendedColorType::Rgb8)
        .unwrap();
    let spec = only("s", 16, 0);
    let profile = swapped_profile();
    for (what, plain) in [
        ("baseline", baseline),
        ("progressive", progressive(&red, 64, 48)),
    ] {
        let mean = |bytes: &[u8]| {
            let d = decode_jpeg(bytes, &spec).unwrap().unwrap();
            assert_eq!((d.width, d.height), (32, 24), "{what}");
            let sum = |c: usize| {
                d.pixels
                    .iter()
                    .skip(c)
                    .step_by(3)
                    .map(|v| *v as u64)
                    .sum::<u64>()
            };
            [sum(0), sum(2)].map(|s| s / (32 * 24))
        };
        let [r, b] = mean(&plain);
        assert!(r > 150 && b < 80, "{what} untagged: {r} {b}");
        let [r, b] = mean(&with_profile(&plain, &profile));
        assert!(b > 150 && r < 80, "{what} tagged: {r} {b}");
    }
}

/// A progressive RGB JPEG (the `image` crate writes baseline only).
fn progressive(rgb: &[u8], width: u16, height: u16) -> Vec<u8> {
    let mut out = Vec::new();
    let mut encoder = jpeg_encoder::Encoder::new(&mut out, 92);
    encoder.set_progressive(true);
    encoder
        .encode(rgb, width, height, jpeg_encoder::ColorType::Rgb)
        .unwrap();
    out
}

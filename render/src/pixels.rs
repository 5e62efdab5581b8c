//! What decoding gives the render steps: oriented sRGB pixels, and the
//! errors of the pixel pipeline.

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("cannot decode the original: {0}")]
    Decode(String),
    #[error("cannot produce a render: {0}")]
    Produce(String),
    /// The machine had no thread for the work just now: not the file's
    /// fault, so the job is retried rather than the photo failed.
    #[error("no thread for the render: {0}")]
    Busy(String),
    /// Past the job's CPU-time budget (`cpu`).
    #[error("{0}")]
    OverCpu(String),
}

/// Decoded, oriented, sRGB pixels: RGB8, or RGBA8 when the source has alpha.
#[derive(Clone)]
pub struct Decoded {
    pub pixels: Vec<u8>,
    pub width: u32,
    pub height: u32,
    pub alpha: bool,
    /// The original's oriented size. Renders are planned against it, so a
    /// JPEG shrunk on load gives the same geometry as a full decode.
    pub source: (u32, u32),
}

impl Decoded {
    /// An RGB image of one grey level, for tests.
    #[cfg(test)]
    pub fn flat(width: u32, height: u32, level: u8) -> Self {
        Decoded {
            pixels: vec![level; (width * height * 3) as usize],
            width,
            height,
            alpha: false,
            source: (width, height),
        }
    }
}

/// Converts pixels tagged with an ICC profile to sRGB; an unreadable profile
/// leaves them as they are (the common case is sRGB already), and so does
/// a profile of another colour space: the decoders hand over CMYK and grey
/// photos already as RGB, and a CMYK profile applied to those turned them
/// dark and blue.
pub(crate) fn to_srgb(icc: &[u8], pixels: &mut [u8], alpha: bool) {
    // The ICC header's data colour space, at bytes 16..20.
    if icc.get(16..20) != Some(b"RGB ".as_slice()) {
        return;
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_rgb_profiles_convert_rgb_pixels() {
        // A header claiming CMYK data: whatever follows, nothing changes.
        let mut icc = vec![0u8; 132];
        icc[16..20].copy_from_slice(b"CMYK");
        let mut px = vec![10, 200, 30, 40, 50, 60];
        to_srgb(&icc, &mut px, false);
        assert_eq!(px, [10, 200, 30, 40, 50, 60]);
        to_srgb(b"", &mut px, false);
        assert_eq!(px, [10, 200, 30, 40, 50, 60]);
    }
}

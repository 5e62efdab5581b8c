//! What decoding gives the render steps: oriented sRGB pixels, and the
//! errors of the pixel pipeline.

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("cannot decode the original: {0}")]
    Decode(String),
    #[error("cannot produce a render: {0}")]
    Produce(String),
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

/// Converts pixels tagged with an ICC profile to sRGB; an unreadable profile
/// leaves them as they are (the common case is sRGB already).
pub(crate) fn to_srgb(icc: &[u8], pixels: &mut [u8], alpha: bool) {
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

//! A render of an image: the spec it should have, at which version, and
//! what has been produced.

use super::crop::CropSpec;
use uuid::Uuid;

/// The bytes produced for one version of a render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Produced {
    pub version: i64,
    pub width: u32,
    pub height: u32,
    pub size_bytes: u64,
    pub blob_key: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Render {
    pub image_id: Uuid,
    pub code: String,
    /// A change of the spec is a new version.
    pub spec: CropSpec,
    pub version: i64,
    /// The last bytes produced, of this version or an older one.
    pub produced: Option<Produced>,
}

impl Render {
    /// A new render, pending at version 1.
    pub fn pending(image_id: Uuid, spec: CropSpec) -> Render {
        Render {
            image_id,
            code: spec.code.clone(),
            spec,
            version: 1,
            produced: None,
        }
    }

    /// The produced bytes of the current version, if any.
    pub fn current(&self) -> Option<&Produced> {
        self.produced.as_ref().filter(|p| p.version == self.version)
    }

    pub fn is_current(&self) -> bool {
        self.current().is_some()
    }

    /// Whether its current bytes show the whole frame of a `w`x`h` source
    /// (not a crop of it).
    pub fn is_whole_frame(&self, w: u32, h: u32) -> bool {
        self.current()
            .is_some_and(|p| shows_whole_frame((w, h), (p.width, p.height)))
    }
}

/// Whether a render of size `render` shows the whole of a `source` frame
/// (same aspect, within rounding), rather than a crop of it.
pub fn shows_whole_frame(source: (u32, u32), render: (u32, u32)) -> bool {
    let aspect = |(w, h): (u32, u32)| w as f64 / h.max(1) as f64;
    (aspect(render) - aspect(source)).abs() < 0.02
}

/// A produced render, as `/i/...` serves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServedRender {
    pub blob_key: String,
    pub version: i64,
    pub size_bytes: u64,
}

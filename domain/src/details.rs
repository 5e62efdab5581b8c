//! What a photo gains after its upload: the owner's focal point, the
//! placeholder and salient point the render job finds, and where a motion
//! photo keeps its clip inside the original.

use super::focus::Point;
use serde::{Deserialize, Serialize};

/// Where a motion photo's clip (an MP4) lies in the original.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Clip {
    pub offset: u64,
    pub len: u64,
}

impl Clip {
    /// The clip's bytes in the original.
    pub fn range(&self) -> std::ops::Range<u64> {
        self.offset..self.offset + self.len
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Details {
    /// The owner's focal point.
    pub focus: Option<Point>,
    /// ThumbHash, base64 (standard alphabet).
    pub placeholder: Option<String>,
    pub motion: Option<Clip>,
    /// The most salient point, found by the render job.
    pub salient: Option<Point>,
}

impl Details {
    /// With `cover_focus: smart`, where a cover is held, in tenths of its
    /// width and height: the owner's focal point, else the salient point.
    pub fn cover_tenths(&self) -> Option<(u8, u8)> {
        let tenth = |v: f64| (v.clamp(0.0, 1.0) * 10.0).round() as u8;
        self.focus
            .or(self.salient)
            .map(|p| (tenth(p.x), tenth(p.y)))
    }
}

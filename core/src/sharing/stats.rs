//! sharingStatsDTO, counted with the same rules the visitor pages apply.

use lightbox_domain::album::Policy;
use lightbox_domain::counts::{count, AlbumCounts};
use lightbox_domain::image::Image;
use serde::Serialize;

#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Breakdown {
    pub processing: i64,
    pub failed: i64,
    pub too_small: i64,
    pub taken_down: i64,
}

/// Of the visible photos that carry a group: how many allow it (`visible`)
/// and how many have it switched off on the photo (`disabled_on_photo`).
#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Group {
    pub visible: i64,
    pub disabled_on_photo: i64,
}

#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct ExifStats {
    pub location: Group,
    pub date: Group,
    pub camera: Group,
}

#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq, schemars::JsonSchema)]
pub struct Stats {
    pub visible: i64,
    pub total: i64,
    pub breakdown: Breakdown,
    pub exif: ExifStats,
    /// Visible photos with a title or a description.
    pub captioned: i64,
    /// Visible photos whose location visitors actually see (photo and
    /// policy both allow it).
    pub exposing_location: i64,
}

/// The stats from the database's counts of the folder (`AlbumViewRepo`),
/// which apply the rules of `domain::counts::count`.
pub fn from_counts(c: &AlbumCounts, policy: &Policy) -> Stats {
    let group = |(visible, disabled_on_photo)| Group {
        visible,
        disabled_on_photo,
    };
    Stats {
        visible: c.visible,
        total: c.total,
        breakdown: Breakdown {
            processing: c.processing,
            failed: c.failed,
            too_small: c.too_small,
            taken_down: c.taken_down,
        },
        exif: ExifStats {
            location: group(c.gps),
            date: group(c.date),
            camera: group(c.camera),
        },
        captioned: c.captioned,
        exposing_location: if policy.show_location { c.gps.0 } else { 0 },
    }
}

/// The stats of a folder's photos, by the domain's rules.
pub fn stats(images: &[Image], policy: &Policy) -> Stats {
    from_counts(&count(images), policy)
}

//! sharingStatsDTO, counted with the same rules the visitor pages apply.

use crate::domain::album::Policy;
use crate::domain::image::{Eligibility, Image};
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

fn count(g: &mut Group, has: bool, allowed: bool) {
    match (has, allowed) {
        (true, true) => g.visible += 1,
        (true, false) => g.disabled_on_photo += 1,
        _ => {}
    }
}

pub fn stats(images: &[Image], policy: &Policy) -> Stats {
    let mut s = Stats {
        total: images.len() as i64,
        ..Default::default()
    };
    for image in images {
        let gone = match image.eligibility() {
            Eligibility::Visible => None,
            Eligibility::Processing => Some(&mut s.breakdown.processing),
            Eligibility::Failed => Some(&mut s.breakdown.failed),
            Eligibility::TooSmall => Some(&mut s.breakdown.too_small),
            Eligibility::TakenDown => Some(&mut s.breakdown.taken_down),
        };
        if let Some(n) = gone {
            *n += 1;
            continue;
        }
        s.visible += 1;
        let (exif, allowed) = (&image.exif, image.exif_visibility);
        let has_camera = exif.has_camera();
        count(&mut s.exif.location, exif.gps.is_some(), allowed.gps);
        count(&mut s.exif.date, exif.taken_at.is_some(), allowed.datetime);
        count(&mut s.exif.camera, has_camera, allowed.camera);
        if exif.gps.is_some() && allowed.gps && policy.show_location {
            s.exposing_location += 1;
        }
        if image.is_captioned() {
            s.captioned += 1;
        }
    }
    s
}

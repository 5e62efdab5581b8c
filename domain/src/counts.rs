//! A folder's photos counted by what its visitors see of them: the
//! figures of sharingStatsDTO before the policy applies
//! (`sharing::stats`). The database keeps the same counts in one
//! aggregate (`db::AlbumViewRepo::album_counts`); `count` is the rule it
//! is held to.

use super::image::{Eligibility, Image};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AlbumCounts {
    pub total: i64,
    pub processing: i64,
    pub failed: i64,
    pub too_small: i64,
    pub taken_down: i64,
    /// Of the visible photos:
    pub visible: i64,
    /// (allowed on the photo, switched off on the photo) of those that
    /// carry a location, a date, a camera.
    pub gps: (i64, i64),
    pub date: (i64, i64),
    pub camera: (i64, i64),
    pub captioned: i64,
}

fn tally(pair: &mut (i64, i64), has: bool, allowed: bool) {
    match (has, allowed) {
        (true, true) => pair.0 += 1,
        (true, false) => pair.1 += 1,
        _ => {}
    }
}

pub fn count(images: &[Image]) -> AlbumCounts {
    let mut c = AlbumCounts {
        total: images.len() as i64,
        ..Default::default()
    };
    for image in images {
        let gone = match image.eligibility() {
            Eligibility::Visible => None,
            Eligibility::Processing => Some(&mut c.processing),
            Eligibility::Failed => Some(&mut c.failed),
            Eligibility::TooSmall => Some(&mut c.too_small),
            Eligibility::TakenDown => Some(&mut c.taken_down),
        };
        if let Some(n) = gone {
            *n += 1;
            continue;
        }
        c.visible += 1;
        let (exif, allowed) = (&image.exif, image.exif_visibility);
        tally(&mut c.gps, exif.gps.is_some(), allowed.gps);
        tally(&mut c.date, exif.taken_at.is_some(), allowed.datetime);
        tally(&mut c.camera, exif.has_camera(), allowed.camera);
        if image.is_captioned() {
            c.captioned += 1;
        }
    }
    c
}

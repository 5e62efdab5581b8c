//! A photo as visitors see it: which renders to show, and the EXIF facts
//! that both the photo and (for folders) the policy allow.

use super::policy::Policy;
use crate::archive::Entry;
use crate::db::{ImageRow, RenderRow};
use crate::images::dto::{render_dto, visible_exif, ExifVisibility, PublicExif, RenderDto};
use crate::render::exif::ExifInfo;
use crate::Result;
use uuid::Uuid;

/// The produced renders that show the whole frame (not crops), smallest
/// first; every produced render when none does.
pub fn whole_frames(width: u32, height: u32, renders: &[RenderDto]) -> Vec<&RenderDto> {
    let aspect = width as f64 / height.max(1) as f64;
    let produced = renders.iter().filter(|r| !r.pending);
    let mut v: Vec<&RenderDto> = produced
        .clone()
        .filter(|r| (r.width as f64 / r.height.max(1) as f64 - aspect).abs() < 0.02)
        .collect();
    if v.is_empty() {
        v = produced.collect();
    }
    v.sort_by_key(|r| r.width);
    v
}

/// Human-readable EXIF lines, in a fixed order.
pub fn facts(e: &PublicExif) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(t) = &e.taken_at {
        out.push(("Taken", t.clone()));
    }
    let camera = [&e.camera_make, &e.camera_model]
        .iter()
        .filter_map(|s| s.as_deref())
        .collect::<Vec<_>>()
        .join(" ");
    if !camera.is_empty() {
        out.push(("Camera", camera));
    }
    if let Some(lens) = &e.lens {
        out.push(("Lens", lens.clone()));
    }
    if let Some(s) = &e.settings {
        let parts = [
            s.f_number.map(|f| format!("f/{f:.1}")),
            s.exposure_time.as_ref().map(|t| format!("{t} s")),
            s.iso.map(|i| format!("ISO {i}")),
            s.focal_length_mm.map(|f| format!("{f:.0} mm")),
        ];
        let text = parts.into_iter().flatten().collect::<Vec<_>>().join(" · ");
        if !text.is_empty() {
            out.push(("Settings", text));
        }
    }
    if let Some(g) = &e.gps {
        out.push(("Location", format!("{:.5}, {:.5}", g.lat, g.lon)));
    }
    out
}

/// What a folder's visitor may see of a photo's EXIF: a group shows only
/// when the photo allows it and the policy does (settings go with camera).
pub fn folder_exif(image: &ImageRow, policy: &Policy) -> PublicExif {
    let exif: ExifInfo = serde_json::from_str(&image.exif).unwrap_or_else(|_| ExifInfo::none());
    let photo: ExifVisibility = serde_json::from_str(&image.exif_visibility).unwrap_or_default();
    let allowed = ExifVisibility {
        gps: photo.gps && policy.show_location,
        camera: photo.camera && policy.show_camera,
        datetime: photo.datetime && policy.show_date,
        settings: photo.settings && policy.show_camera,
    };
    visible_exif(exif, allowed)
}

/// One photo of a folder page.
#[derive(Debug, Clone)]
pub struct PhotoView {
    pub id: Uuid,
    pub title: String,
    pub description: String,
    pub src: String,
    pub srcset: String,
    pub width: u32,
    pub height: u32,
    /// The largest whole-frame render.
    pub full: String,
    pub facts: Vec<(&'static str, String)>,
    pub created_at: i64,
}

/// The grid shows renders at about this width; bigger screens pick from srcset.
const GRID_WIDTH: u32 = 640;

pub fn photo_view(
    image: &ImageRow,
    renders: &[RenderRow],
    policy: &Policy,
    image_host: &str,
) -> Result<Option<PhotoView>> {
    let dtos = renders
        .iter()
        .filter(|r| r.image_id == image.id)
        .map(|r| render_dto(image, r, image_host))
        .collect::<Result<Vec<_>>>()?;
    let frames = whole_frames(image.width as u32, image.height as u32, &dtos);
    let Some(full) = frames.last() else {
        return Ok(None);
    };
    let grid = frames
        .iter()
        .find(|r| r.width >= GRID_WIDTH)
        .unwrap_or(full);
    Ok(Some(PhotoView {
        id: image.id,
        title: image.title.clone(),
        description: image.description.clone(),
        src: grid.url.clone(),
        srcset: frames
            .iter()
            .map(|r| format!("{} {}w", r.url, r.width))
            .collect::<Vec<_>>()
            .join(", "),
        width: grid.width,
        height: grid.height,
        full: full.url.clone(),
        facts: facts(&folder_exif(image, policy)),
        created_at: image.created_at,
    }))
}

/// The blob key and extension of the largest produced whole-frame render
/// (any produced render when none shows the whole frame).
pub fn best_render(image: &ImageRow, renders: &[RenderRow]) -> Option<(String, String)> {
    let aspect = image.width as f64 / image.height.max(1) as f64;
    let produced = renders.iter().filter(|r| {
        r.image_id == image.id && r.produced_version == Some(r.version) && r.blob_key.is_some()
    });
    let whole = |r: &&RenderRow| {
        let (w, h) = (
            r.width.unwrap_or(0) as f64,
            r.height.unwrap_or(1).max(1) as f64,
        );
        (w / h - aspect).abs() < 0.02
    };
    let best = produced
        .clone()
        .filter(whole)
        .max_by_key(|r| r.width)
        .or_else(|| produced.max_by_key(|r| r.width))?;
    let key = best.blob_key.clone()?;
    let ext = key.rsplit('.').next().unwrap_or("bin").to_owned();
    Some((key, ext))
}

/// The entries of a folder zip, in the given order, named
/// `{n}-{photo id}.{ext}`: the originals (`full`) or the best render of
/// each photo that has one.
pub fn zip_entries(photos: &[&ImageRow], renders: &[RenderRow], full: bool) -> Vec<Entry> {
    let mut entries = Vec::with_capacity(photos.len());
    for (n, image) in photos.iter().enumerate() {
        let found = if full {
            Some((image.original_key.clone(), image.format.clone()))
        } else {
            best_render(image, renders)
        };
        if let Some((key, ext)) = found {
            entries.push(Entry {
                name: format!("{:03}-{}.{ext}", n + 1, image.id),
                key,
            });
        }
    }
    entries
}

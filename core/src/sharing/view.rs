//! A photo as visitors see it: which renders to show, and the EXIF facts
//! that both the photo and (for folders) the policy allow.

use crate::archive::Entry;
use crate::images::dto::{render_dto, RenderDto};
use lightbox_domain::album::Policy;
use lightbox_domain::exif::{visible_exif, PublicExif};
use lightbox_domain::image::Image;
use lightbox_domain::render::{shows_whole_frame, Render};
use uuid::Uuid;

/// The produced renders that show the whole frame (not crops), smallest
/// first; every produced render when none does.
pub fn whole_frames(width: u32, height: u32, renders: &[RenderDto]) -> Vec<&RenderDto> {
    let produced = renders.iter().filter(|r| !r.pending);
    let mut v: Vec<&RenderDto> = produced
        .clone()
        .filter(|r| shows_whole_frame((width, height), (r.width, r.height)))
        .collect();
    if v.is_empty() {
        v = produced.collect();
    }
    v.sort_by_key(|r| r.width);
    // A photo smaller than the presets gets several renders of one width;
    // a srcset names each width once.
    v.dedup_by_key(|r| r.width);
    v
}

/// A capture time as people read it, on the photo's own clock (the
/// offset the camera recorded, not the visitor's zone): "3 March 2024,
/// 14:05". Text that is no RFC 3339 time is shown as it is.
pub fn human_date(taken_at: &str) -> String {
    match chrono::DateTime::parse_from_rfc3339(taken_at) {
        Ok(t) => t.format("%-d %B %Y, %H:%M").to_string(),
        Err(_) => taken_at.to_owned(),
    }
}

/// "Canon" + "Canon EOS R7" reads "Canon EOS R7": the make only when the
/// model does not already start with it.
pub fn camera_name(make: Option<&str>, model: Option<&str>) -> Option<String> {
    let (make, model) = (make.map(str::trim), model.map(str::trim));
    match (make, model) {
        (Some(mk), Some(md)) if !mk.is_empty() && !md.is_empty() => {
            let first = mk.split_whitespace().next().unwrap_or(mk).to_lowercase();
            if md.to_lowercase().starts_with(&first) {
                Some(md.to_owned())
            } else {
                Some(format!("{mk} {md}"))
            }
        }
        (Some(one), _) | (_, Some(one)) if !one.is_empty() => Some(one.to_owned()),
        _ => None,
    }
}

/// Human-readable EXIF lines, in a fixed order.
pub fn facts(e: &PublicExif) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    if let Some(t) = &e.taken_at {
        out.push(("Taken", human_date(t)));
    }
    if let Some(camera) = camera_name(e.camera_make.as_deref(), e.camera_model.as_deref()) {
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

/// What a folder's visitor may see of a photo's EXIF.
pub fn album_exif(image: &Image, policy: &Policy) -> PublicExif {
    visible_exif(&image.exif, policy.allowed_exif(image.exif_visibility))
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
    /// The largest whole-frame render, and its size.
    pub full: String,
    pub full_width: u32,
    pub full_height: u32,
    /// The photo's own page in its folder (`{folder}/{id}`), when shown
    /// to a visitor; the owner's preview links the render instead.
    pub page: Option<String>,
    /// What a download of `full` is saved as: the title, made safe.
    pub filename: String,
    /// `full` asking `/i/` to send it as an attachment named `filename`
    /// (the `download` attribute alone is ignored when renders come from
    /// another origin, `LIGHTBOX_IMAGE_HOST`).
    pub download_url: String,
    pub facts: Vec<(&'static str, String)>,
    pub created_at: i64,
    /// The placeholder as a `data:` image, painted under the photo while
    /// it loads (filled in from `db::details`).
    pub placeholder: Option<String>,
}

/// The grid shows renders at about this width; bigger screens pick from srcset.
const GRID_WIDTH: u32 = 640;

pub fn photo_view(
    image: &Image,
    renders: &[Render],
    facts_shown: PublicExif,
    image_host: &str,
) -> Option<PhotoView> {
    let dtos: Vec<RenderDto> = renders
        .iter()
        .filter(|r| r.image_id == image.id)
        .map(|r| render_dto(image, r, image_host))
        .collect();
    let frames = whole_frames(image.width, image.height, &dtos);
    let full = frames.last()?;
    let grid = frames
        .iter()
        .find(|r| r.width >= GRID_WIDTH)
        .unwrap_or(full);
    Some(PhotoView {
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
        full_width: full.width,
        full_height: full.height,
        page: None,
        filename: download_name(&image.title, image.id, full.format),
        download_url: with_download_name(
            &full.url,
            &download_name(&image.title, image.id, full.format),
        ),
        facts: facts(&facts_shown),
        created_at: image.created_at,
        placeholder: None,
    })
}

/// A file name from a title: letters, digits, spaces, `-` and `_` kept
/// (any script), anything else a `-`, at most 80 characters; the id when
/// nothing is left.
pub fn download_name(title: &str, id: Uuid, ext: &str) -> String {
    let cleaned: String = title
        .chars()
        .map(|c| match c {
            c if c.is_alphanumeric() || c == '-' || c == '_' => c,
            ' ' => ' ',
            _ => '-',
        })
        .take(80)
        .collect();
    let cleaned = cleaned.trim_matches(|c: char| c == ' ' || c == '-' || c == '.');
    let stem = if cleaned.is_empty() {
        id.to_string()
    } else {
        cleaned.to_owned()
    };
    format!("{stem}.{ext}")
}

/// A render URL (which always carries `?v=`) asking for an attachment.
pub fn with_download_name(url: &str, filename: &str) -> String {
    let name: String = form_urlencoded::byte_serialize(filename.as_bytes()).collect();
    format!("{url}&dl={name}")
}

/// The blob key and extension of the largest produced whole-frame render
/// (any produced render when none shows the whole frame).
pub fn best_render(image: &Image, renders: &[Render]) -> Option<(String, &'static str)> {
    let produced = renders
        .iter()
        .filter(|r| r.image_id == image.id && r.is_current());
    let width = |r: &&Render| r.current().map_or(0, |p| p.width);
    let best = produced
        .clone()
        .filter(|r| r.is_whole_frame(image.width, image.height))
        .max_by_key(width)
        .or_else(|| produced.max_by_key(width))?;
    let p = best.current()?;
    Some((p.blob_key.clone(), best.spec.format.ext()))
}

/// The entries of a folder zip, in the given order, named
/// `{n}-{photo id}.{ext}`: the originals (`full`) or the best render of
/// each photo that has one.
pub fn zip_entries(photos: &[Image], renders: &[Render], full: bool) -> Vec<Entry> {
    let mut entries = Vec::with_capacity(photos.len());
    for (n, image) in photos.iter().enumerate() {
        let found = if full {
            Some((image.original_key.clone(), image.format.ext()))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_dates_and_cameras_read_as_people_write_them() {
        let id = Uuid::nil();
        assert_eq!(
            download_name("Harbour at dusk", id, "webp"),
            "Harbour at dusk.webp"
        );
        assert_eq!(
            download_name("../../etc/passwd", id, "webp"),
            "etc-passwd.webp"
        );
        assert_eq!(
            download_name("Fête à Zürich", id, "jpg"),
            "Fête à Zürich.jpg"
        );
        assert_eq!(download_name("\"<>", id, "webp"), format!("{id}.webp"));
        assert_eq!(download_name("", id, "webp"), format!("{id}.webp"));
        assert_eq!(download_name(&"x".repeat(500), id, "webp").len(), 85);
        assert_eq!(
            human_date("2024-03-03T14:05:09+01:00"),
            "3 March 2024, 14:05"
        );
        assert_eq!(human_date("yesterday"), "yesterday");
        let cam = |a: Option<&str>, b: Option<&str>| camera_name(a, b);
        assert_eq!(
            cam(Some("Canon"), Some("Canon EOS R7")).as_deref(),
            Some("Canon EOS R7")
        );
        assert_eq!(
            cam(Some("NIKON CORPORATION"), Some("NIKON D850")).as_deref(),
            Some("NIKON D850")
        );
        assert_eq!(
            cam(Some("Google"), Some("Pixel 8")).as_deref(),
            Some("Google Pixel 8")
        );
        assert_eq!(cam(None, Some("X100V")).as_deref(), Some("X100V"));
        assert_eq!(cam(Some(" "), None), None);
    }
}

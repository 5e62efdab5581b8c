//! What clients see of an image (owner view).

use crate::db::{ImageRow, RenderRow};
use crate::render::exif::{ExifInfo, Gps, Settings};
use crate::render::spec::{plan, CropSpec};
use crate::renders::parse_spec;
use crate::time::rfc3339;
use crate::Result;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// Which EXIF groups may be shown to visitors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExifVisibility {
    pub gps: bool,
    pub camera: bool,
    pub datetime: bool,
    pub settings: bool,
}

impl Default for ExifVisibility {
    fn default() -> Self {
        ExifVisibility {
            gps: false,
            camera: true,
            datetime: true,
            settings: true,
        }
    }
}

#[derive(Debug, Serialize)]
pub struct RenderDto {
    pub crop: String,
    pub format: &'static str,
    pub width: u32,
    pub height: u32,
    pub size_bytes: u64,
    pub url: String,
    pub pending: bool,
}

/// sharingModerationDTO: whether an admin has taken a folder or photo down.
#[derive(Debug, Clone, Serialize)]
pub struct Moderation {
    pub state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

impl Moderation {
    pub fn of(taken_down_at: Option<i64>, reason: Option<&str>) -> Moderation {
        match taken_down_at {
            Some(at) => Moderation {
                state: "taken_down",
                reason: reason.map(str::to_owned),
                at: Some(rfc3339(at)),
            },
            None => Moderation {
                state: "none",
                reason: None,
                at: None,
            },
        }
    }
}

#[derive(Debug, Serialize)]
pub struct ImageDto {
    pub id: Uuid,
    pub album_id: Uuid,
    pub title: String,
    pub description: String,
    pub status: String,
    pub width: u32,
    pub height: u32,
    pub size_bytes: u64,
    pub format: String,
    pub exif: ExifInfo,
    pub exif_visibility: ExifVisibility,
    pub renders: Vec<RenderDto>,
    pub custom_crops: Vec<CropSpec>,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visibility: Option<String>,
    pub visitor_eligibility: &'static str,
    pub frozen: bool,
    pub moderation: Moderation,
}

/// Longest side under this many pixels: too small to show visitors.
pub const MIN_VISIBLE_SIDE: i64 = 200;

/// Whether visitors may see the photo, and if not why: the one rule the
/// visitor pages, the preview, the stats and the cover choice all use.
pub fn eligibility(image: &ImageRow) -> &'static str {
    if image.taken_down_at.is_some() {
        return "taken_down";
    }
    match image.status.as_str() {
        "processing" => "processing",
        "failed" => "failed",
        _ if image.width.max(image.height) < MIN_VISIBLE_SIDE => "too_small",
        _ => "visible",
    }
}

pub(crate) fn render_dto(image: &ImageRow, row: &RenderRow, image_host: &str) -> Result<RenderDto> {
    let spec = parse_spec(&row.spec)?;
    let produced = row.produced_version == Some(row.version);
    let planned = plan(image.width as u32, image.height as u32, &spec).canvas;
    let (width, height) = match (produced, row.width, row.height) {
        (true, Some(w), Some(h)) => (w as u32, h as u32),
        _ => planned,
    };
    let ext = spec.format.ext();
    Ok(RenderDto {
        crop: row.code.clone(),
        format: ext,
        width,
        height,
        size_bytes: if produced {
            row.size_bytes.unwrap_or(0) as u64
        } else {
            0
        },
        url: format!(
            "{image_host}/i/{}/{}.{ext}?v={}",
            image.id, row.code, row.version
        ),
        pending: !produced,
    })
}

pub fn image_dto(
    image: &ImageRow,
    renders: &[RenderRow],
    crops: Vec<CropSpec>,
    image_host: &str,
) -> Result<ImageDto> {
    let exif: ExifInfo = serde_json::from_str(&image.exif).unwrap_or_else(|_| ExifInfo::none());
    let exif_visibility = serde_json::from_str(&image.exif_visibility).unwrap_or_default();
    Ok(ImageDto {
        id: image.id,
        album_id: image.album_id,
        title: image.title.clone(),
        description: image.description.clone(),
        status: image.status.clone(),
        width: image.width as u32,
        height: image.height as u32,
        size_bytes: image.size_bytes as u64,
        format: image.format.clone(),
        exif,
        exif_visibility,
        renders: renders
            .iter()
            .map(|r| render_dto(image, r, image_host))
            .collect::<Result<_>>()?,
        custom_crops: crops,
        created_at: rfc3339(image.created_at),
        visibility: image.visibility.clone(),
        visitor_eligibility: eligibility(image),
        // Under a takedown nothing the owner changes reaches visitors
        // until an admin restores the photo.
        frozen: image.taken_down_at.is_some(),
        moderation: Moderation::of(image.taken_down_at, image.takedown_reason.as_deref()),
    })
}

/// What anyone may see of a public photo: no owner, no storage key, and
/// only the EXIF groups its visibility allows.
#[derive(Debug, Serialize)]
pub struct PublicImage {
    pub id: Uuid,
    pub title: String,
    pub description: String,
    pub width: u32,
    pub height: u32,
    pub renders: Vec<RenderDto>,
    pub exif: PublicExif,
}

#[derive(Debug, Default, Serialize)]
pub struct PublicExif {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taken_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub camera_make: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub camera_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lens: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gps: Option<Gps>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
}

/// The EXIF a visitor may see, given what the photo (and, for folders, the
/// policy) allows.
pub fn visible_exif(e: ExifInfo, allowed: ExifVisibility) -> PublicExif {
    PublicExif {
        taken_at: e.taken_at.filter(|_| allowed.datetime),
        camera_make: e.camera_make.filter(|_| allowed.camera),
        camera_model: e.camera_model.filter(|_| allowed.camera),
        lens: e.lens.filter(|_| allowed.camera),
        gps: e.gps.filter(|_| allowed.gps),
        settings: e.settings.filter(|_| allowed.settings),
    }
}

pub fn public_image(
    image: &ImageRow,
    renders: &[RenderRow],
    image_host: &str,
) -> Result<PublicImage> {
    let exif: ExifInfo = serde_json::from_str(&image.exif).unwrap_or_else(|_| ExifInfo::none());
    let allowed: ExifVisibility = serde_json::from_str(&image.exif_visibility).unwrap_or_default();
    let produced = renders
        .iter()
        .filter(|r| r.produced_version == Some(r.version));
    Ok(PublicImage {
        id: image.id,
        title: image.title.clone(),
        description: image.description.clone(),
        width: image.width as u32,
        height: image.height as u32,
        renders: produced
            .map(|r| render_dto(image, r, image_host))
            .collect::<Result<_>>()?,
        exif: visible_exif(exif, allowed),
    })
}

//! What clients see of an image: the owner's view (ImageDTO) and the
//! public view, built from domain types.

use crate::db::ImageView;
use crate::time::rfc3339;
use lightbox_domain::crop::CropSpec;
use lightbox_domain::exif::{visible_exif, ExifInfo, ExifVisibility, PublicExif};
use lightbox_domain::focus::Point;
use lightbox_domain::image::{Eligibility, Image, ImageStatus, Visibility};
use lightbox_domain::moderation::{ModerationState, Takedown};
use lightbox_domain::render::Render;
use lightbox_domain::urls;
use lightbox_render::geometry::spec::plan;
use serde::Serialize;
use uuid::Uuid;

#[derive(Debug, Serialize, schemars::JsonSchema)]
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
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Moderation {
    pub state: ModerationState,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

impl From<&Takedown> for Moderation {
    fn from(t: &Takedown) -> Moderation {
        Moderation {
            state: t.state(),
            reason: t.at.and(t.reason.clone()),
            at: t.at.map(rfc3339),
        }
    }
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ImageDto {
    pub id: Uuid,
    pub album_id: Uuid,
    pub title: String,
    pub description: String,
    pub status: ImageStatus,
    pub width: u32,
    pub height: u32,
    pub size_bytes: u64,
    pub format: &'static str,
    pub exif: ExifInfo,
    pub exif_visibility: ExifVisibility,
    pub renders: Vec<RenderDto>,
    pub custom_crops: Vec<CropSpec>,
    pub created_at: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visibility: Option<Visibility>,
    pub visitor_eligibility: Eligibility,
    pub frozen: bool,
    pub moderation: Moderation,
    /// Why the renders failed, while `status` is `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failure_reason: Option<String>,
    /// ThumbHash (base64), once the render job has produced it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
    /// Whether the original carries a motion clip (download variant `motion`).
    pub motion: bool,
    /// The owner's focal point, when set.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus: Option<Point>,
}

/// The owner's view of an image read with all it shows.
pub fn view_dto(view: ImageView, image_host: &str) -> ImageDto {
    let ImageView {
        image,
        renders,
        custom_crops,
        failure_reason,
        details,
    } = view;
    ImageDto {
        failure_reason,
        placeholder: details.placeholder,
        motion: details.motion.is_some(),
        focus: details.focus,
        ..image_dto(image, &renders, custom_crops, image_host)
    }
}

/// A render as clients see it: its produced size, or the planned one while
/// it is pending.
pub fn render_dto(image: &Image, render: &Render, image_host: &str) -> RenderDto {
    let current = render.current();
    let (width, height) = match current {
        Some(p) => (p.width, p.height),
        None => plan(image.width, image.height, &render.spec).canvas,
    };
    let ext = render.spec.format.ext();
    RenderDto {
        crop: render.code.clone(),
        format: ext,
        width,
        height,
        size_bytes: current.map_or(0, |p| p.size_bytes),
        url: urls::render(image_host, image.id, &render.code, ext, render.version),
        pending: current.is_none(),
    }
}

pub fn image_dto(
    image: Image,
    renders: &[Render],
    crops: Vec<CropSpec>,
    image_host: &str,
) -> ImageDto {
    let renders = renders
        .iter()
        .map(|r| render_dto(&image, r, image_host))
        .collect();
    ImageDto {
        id: image.id,
        album_id: image.album_id,
        status: image.status,
        width: image.width,
        height: image.height,
        size_bytes: image.size_bytes,
        format: image.format.ext(),
        exif_visibility: image.exif_visibility,
        renders,
        custom_crops: crops,
        created_at: rfc3339(image.created_at),
        visibility: image.visibility,
        visitor_eligibility: image.eligibility(),
        // Under a takedown nothing the owner changes reaches visitors
        // until an admin restores the photo.
        frozen: image.takedown.is_active(),
        moderation: Moderation::from(&image.takedown),
        failure_reason: None,
        placeholder: None,
        motion: false,
        focus: None,
        title: image.title,
        description: image.description,
        exif: image.exif,
    }
}

/// What anyone may see of a public photo: no owner, no storage key, and
/// only the EXIF groups its visibility allows.
#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct PublicImage {
    pub id: Uuid,
    pub title: String,
    pub description: String,
    pub width: u32,
    pub height: u32,
    pub renders: Vec<RenderDto>,
    pub exif: PublicExif,
    /// ThumbHash (base64), once produced.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub placeholder: Option<String>,
}

/// The public view, showing the EXIF groups `allowed` lets through.
pub fn public_image(
    image: &Image,
    renders: &[Render],
    allowed: ExifVisibility,
    image_host: &str,
) -> PublicImage {
    PublicImage {
        id: image.id,
        title: image.title.clone(),
        description: image.description.clone(),
        width: image.width,
        height: image.height,
        renders: renders
            .iter()
            .filter(|r| r.is_current())
            .map(|r| render_dto(image, r, image_host))
            .collect(),
        exif: visible_exif(&image.exif, allowed),
        placeholder: None,
    }
}

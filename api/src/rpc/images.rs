//! `image.*`: the owner's photos.

use super::account::Nothing;
use super::ctx::Ctx;
use lightbox_core::auth::links::SignedLink;
use lightbox_core::domain::crop::{CropSpec, Format, Mode, DEFAULT_QUALITY};
use lightbox_core::domain::focus::{check_point, Focus, Point};
use lightbox_core::domain::links::{Link, LinkKind};
use lightbox_core::images::downloads::{self, DownloadChoices};
use lightbox_core::images::dto::{ImageDto, PublicImage};
use lightbox_core::images::manage::{Edit, VisibilityGroups};
use lightbox_core::images::Page;
use lightbox_core::metrics::METRICS;
use lightbox_core::{ids, Result};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Id {
    #[schemars(with = "uuid::Uuid")]
    id: String,
}

/// With `Prefer: wait=N`, a photo still `processing` is answered once it
/// settles or N seconds (at most `ctx::MAX_WAIT`) have passed; past the
/// waits the process holds at once (`limits::MAX_WAITS*`), at once.
pub async fn get(ctx: Ctx, p: Id) -> Result<ImageDto> {
    let id = ids::parse("id", &p.id)?;
    let owner = ctx.caller()?.user_id;
    let images = &ctx.state.images;
    let Some(wait) = ctx.wait else {
        return images.get(owner, id).await;
    };
    match ctx.state.guards.waits.try_start(&owner.to_string()) {
        Ok(_held) => {
            let stop = ctx.state.stopping.cancelled();
            images.get_settled(owner, id, wait, stop).await
        }
        Err(_) => {
            METRICS.image_wait("refused");
            images.get(owner, id).await
        }
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct List {
    /// `next_cursor` of the previous page; absent or empty for the first.
    cursor: Option<String>,
    /// Default 50.
    #[schemars(range(min = 1, max = 200))]
    limit: Option<i64>,
    #[schemars(with = "Option<uuid::Uuid>")]
    album_id: Option<String>,
}

pub async fn list(ctx: Ctx, p: List) -> Result<Page> {
    let album = p
        .album_id
        .as_deref()
        .map(|a| ids::parse("album_id", a))
        .transpose()?;
    let owner = ctx.caller()?.user_id;
    ctx.state
        .images
        .list(owner, album, p.cursor.as_deref(), p.limit)
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Update {
    #[schemars(with = "uuid::Uuid")]
    id: String,
    #[schemars(length(max = 200))]
    title: Option<String>,
    #[schemars(length(max = 5000))]
    description: Option<String>,
    /// Moves the photo to this folder of the caller's.
    #[schemars(with = "Option<uuid::Uuid>")]
    album_id: Option<String>,
    /// Absent: unchanged; null: cleared; `{x, y}`: set.
    #[serde(default, deserialize_with = "crate::params::present")]
    focus: Option<Option<Point>>,
}

pub async fn update(ctx: Ctx, p: Update) -> Result<ImageDto> {
    let id = ids::parse("id", &p.id)?;
    let album_id = p
        .album_id
        .as_deref()
        .map(|a| ids::parse("album_id", a))
        .transpose()?;
    let edit = Edit {
        title: p.title,
        description: p.description,
        album_id,
    };
    let owner = ctx.caller()?.user_id;
    let Some(focus) = p.focus else {
        return ctx.state.images.update(owner, id, edit).await;
    };
    check_point(focus)?;
    ctx.state.images.update(owner, id, edit).await?;
    ctx.state.images.set_focus(owner, id, focus).await
}

pub async fn delete(ctx: Ctx, p: Id) -> Result<Nothing> {
    let id = ids::parse("id", &p.id)?;
    ctx.state.images.delete(ctx.caller()?.user_id, id).await?;
    Ok(Nothing {})
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CropAdd {
    #[schemars(with = "uuid::Uuid")]
    id: String,
    #[schemars(regex(pattern = "^[a-z0-9][a-z0-9-]{0,31}$"))]
    code: String,
    /// 0 (follow the height) to 15000; width or height must be positive.
    #[schemars(range(max = 15000))]
    width: u32,
    #[schemars(range(max = 15000))]
    height: u32,
    #[serde(default)]
    mode: Mode,
    #[serde(default)]
    format: Format,
    /// Default 80.
    #[schemars(range(min = 1, max = 100))]
    quality: Option<u8>,
    focus: Option<Focus>,
}

pub async fn crop_add(ctx: Ctx, p: CropAdd) -> Result<ImageDto> {
    let id = ids::parse("id", &p.id)?;
    let spec = CropSpec {
        code: p.code,
        width: p.width,
        height: p.height,
        mode: p.mode,
        format: p.format,
        quality: p.quality.unwrap_or(DEFAULT_QUALITY),
        focus: p.focus,
        at: None,
    };
    ctx.state
        .images
        .add_crop(ctx.caller()?.user_id, id, spec)
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CropDelete {
    #[schemars(with = "uuid::Uuid")]
    id: String,
    code: String,
}

pub async fn crop_delete(ctx: Ctx, p: CropDelete) -> Result<ImageDto> {
    let id = ids::parse("id", &p.id)?;
    ctx.state
        .images
        .delete_crop(ctx.caller()?.user_id, id, &p.code)
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetVisibility {
    #[schemars(with = "uuid::Uuid")]
    id: String,
    #[schemars(with = "lightbox_core::domain::image::Visibility")]
    visibility: String,
}

pub async fn set_visibility(ctx: Ctx, p: SetVisibility) -> Result<ImageDto> {
    let id = ids::parse("id", &p.id)?;
    ctx.state
        .images
        .set_visibility(ctx.caller()?.user_id, id, &p.visibility)
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExifVisibility {
    #[schemars(with = "uuid::Uuid")]
    id: String,
    groups: VisibilityGroups,
}

pub async fn exif_set_visibility(ctx: Ctx, p: ExifVisibility) -> Result<ImageDto> {
    let id = ids::parse("id", &p.id)?;
    ctx.state
        .images
        .set_exif_visibility(ctx.caller()?.user_id, id, p.groups)
        .await
}

pub async fn get_public(ctx: Ctx, p: Id) -> Result<PublicImage> {
    // Not a UUID cannot be a public photo: same answer as any other miss.
    let id = ids::parse("id", &p.id).map_err(|_| lightbox_core::Error::NotFound)?;
    ctx.state.images.get_public(id).await
}

pub async fn archive_token(ctx: Ctx, p: Id) -> Result<SignedLink> {
    let id = ids::parse("id", &p.id)?;
    let owner = ctx.caller()?.user_id;
    ctx.state.images.get(owner, id).await?;
    ctx.state
        .signer
        .sign_link(&Link::new(LinkKind::Archive, owner, id))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DownloadToken {
    #[schemars(with = "uuid::Uuid")]
    id: String,
    #[schemars(with = "lightbox_core::domain::downloads::Variant")]
    variant: String,
    /// With `variant: screen`: the render's code.
    crop: Option<String>,
    /// With `variant: screen`: the render's version, the `v` of its URL.
    spec: Option<i64>,
}

/// Checks the download is available now and signs a link for exactly it;
/// it never starts work.
pub async fn download_token(ctx: Ctx, p: DownloadToken) -> Result<SignedLink> {
    let id = ids::parse("id", &p.id)?;
    let owner = ctx.caller()?.user_id;
    let variant = match downloads::variant(&p.variant) {
        Ok(v) => v,
        Err(bad) => {
            // Whose image it is is checked before what is asked of it.
            ctx.state.images.get(owner, id).await?;
            return Err(bad);
        }
    };
    let file = ctx
        .state
        .images
        .resolve_download(owner, id, variant, p.crop.as_deref(), p.spec)
        .await?;
    let link = Link {
        variant: Some(variant),
        crop: file.crop,
        spec: file.spec,
        album: Some(file.album_id),
        membership: Some(file.membership),
        ..Link::new(LinkKind::Download, owner, id)
    };
    ctx.state.signer.sign_link(&link)
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DownloadStatus {
    #[schemars(with = "uuid::Uuid")]
    id: String,
    crop: Option<String>,
    spec: Option<i64>,
}

pub async fn download_status(ctx: Ctx, p: DownloadStatus) -> Result<DownloadChoices> {
    let id = ids::parse("id", &p.id)?;
    ctx.state
        .images
        .download_choices(ctx.caller()?.user_id, id, p.crop.as_deref(), p.spec)
        .await
}

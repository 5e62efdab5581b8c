//! `image.*`: the owner's photos.

use super::account::Nothing;
use super::ctx::Ctx;
use crate::params::{flattened, CropParams};
use lightbox_core::auth::links::SignedLink;
use lightbox_core::domain::downloads::Variant;
use lightbox_core::domain::focus::{check_point, Point};
use lightbox_core::domain::id::{AnyId, Id};
use lightbox_core::domain::image::Visibility;
use lightbox_core::domain::links::{Link, LinkKind};
use lightbox_core::images::downloads::DownloadChoices;
use lightbox_core::images::dto::{ImageDto, PublicImage};
use lightbox_core::images::manage::{Edit, VisibilityGroups};
use lightbox_core::images::Page;
use lightbox_core::metrics::METRICS;
use lightbox_core::{Error, Result};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ById {
    id: Id,
}

/// With `Prefer: wait=N`, a photo still `processing` is answered once it
/// settles or N seconds (at most `ctx::MAX_WAIT`) have passed; past the
/// waits the process holds at once (`limits::MAX_WAITS*`), at once.
pub async fn get(ctx: Ctx, p: ById) -> Result<ImageDto> {
    let (owner, id) = (ctx.owner()?, p.id.0);
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
    album_id: Option<Id>,
}

pub async fn list(ctx: Ctx, p: List) -> Result<Page> {
    let album = p.album_id.map(Into::into);
    ctx.state
        .images
        .list(ctx.owner()?, album, p.cursor.as_deref(), p.limit)
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Update {
    id: Id,
    #[schemars(length(max = 200))]
    title: Option<String>,
    #[schemars(length(max = 5000))]
    description: Option<String>,
    /// Moves the photo to this folder of the caller's.
    album_id: Option<Id>,
    /// Absent: unchanged; null: cleared; `{x, y}`: set.
    #[serde(default, deserialize_with = "crate::params::present")]
    focus: Option<Option<Point>>,
}

pub async fn update(ctx: Ctx, p: Update) -> Result<ImageDto> {
    let (owner, id) = (ctx.owner()?, p.id.0);
    let edit = Edit {
        title: p.title,
        description: p.description,
        album_id: p.album_id.map(Into::into),
    };
    let Some(focus) = p.focus else {
        return ctx.state.images.update(owner, id, edit).await;
    };
    check_point(focus)?;
    ctx.state.images.update(owner, id, edit).await?;
    ctx.state.images.set_focus(owner, id, focus).await
}

pub async fn delete(ctx: Ctx, p: ById) -> Result<Nothing> {
    ctx.state.images.delete(ctx.owner()?, p.id.0).await?;
    Ok(Nothing {})
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CropAdd {
    id: Id,
    #[serde(flatten, deserialize_with = "flattened")]
    spec: CropParams,
}

pub async fn crop_add(ctx: Ctx, p: CropAdd) -> Result<ImageDto> {
    let owner = ctx.owner()?;
    ctx.state
        .images
        .add_crop(owner, p.id.0, p.spec.into())
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CropDelete {
    id: Id,
    code: String,
}

pub async fn crop_delete(ctx: Ctx, p: CropDelete) -> Result<ImageDto> {
    let owner = ctx.owner()?;
    ctx.state.images.delete_crop(owner, p.id.0, &p.code).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetVisibility {
    id: Id,
    visibility: Visibility,
}

pub async fn set_visibility(ctx: Ctx, p: SetVisibility) -> Result<ImageDto> {
    let owner = ctx.owner()?;
    ctx.state
        .images
        .set_visibility(owner, p.id.0, p.visibility)
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExifVisibility {
    id: Id,
    groups: VisibilityGroups,
}

pub async fn exif_set_visibility(ctx: Ctx, p: ExifVisibility) -> Result<ImageDto> {
    let owner = ctx.owner()?;
    ctx.state
        .images
        .set_exif_visibility(owner, p.id.0, p.groups)
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PublicId {
    // Text that is no UUID names no photo: 2001, as for any other miss.
    id: AnyId,
}

pub async fn get_public(ctx: Ctx, p: PublicId) -> Result<PublicImage> {
    let id = p.id.0.ok_or(Error::NotFound)?;
    ctx.state.images.get_public(id).await
}

pub async fn archive_token(ctx: Ctx, p: ById) -> Result<SignedLink> {
    let (owner, id) = (ctx.owner()?, p.id.0);
    ctx.state.images.get(owner, id).await?;
    ctx.state
        .signer
        .sign_link(&Link::new(LinkKind::Archive, owner, id))
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DownloadToken {
    id: Id,
    // Read as text: whose image it is is checked before what is asked of it.
    #[schemars(with = "Variant")]
    variant: String,
    /// With `variant: screen`: the render's code.
    crop: Option<String>,
    /// With `variant: screen`: the render's version, the `v` of its URL.
    spec: Option<i64>,
}

/// Checks the download is available now and signs a link for exactly it;
/// it never starts work.
pub async fn download_token(ctx: Ctx, p: DownloadToken) -> Result<SignedLink> {
    let (owner, id) = (ctx.owner()?, p.id.0);
    let variant = match Variant::from_param("variant", &p.variant) {
        Ok(v) => v,
        Err(bad) => {
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
    id: Id,
    crop: Option<String>,
    spec: Option<i64>,
}

pub async fn download_status(ctx: Ctx, p: DownloadStatus) -> Result<DownloadChoices> {
    let owner = ctx.owner()?;
    ctx.state
        .images
        .download_choices(owner, p.id.0, p.crop.as_deref(), p.spec)
        .await
}

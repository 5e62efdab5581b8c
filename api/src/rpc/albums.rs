//! `album.*` (folders): create, read, change, delete, order, crop rules,
//! owner lookups and zip downloads. Publication is in `sharing`.

use super::account::Nothing;
use super::ctx::Ctx;
use lightbox_core::albums::{AlbumDto, Items, JobResult};
use lightbox_core::auth::links::SignedLink;
use lightbox_core::domain::crop::{CropSpec, Format, Mode, DEFAULT_QUALITY};
use lightbox_core::domain::focus::Focus;
use lightbox_core::domain::links::{Link, LinkKind};
use lightbox_core::images::downloads;
use lightbox_core::sharing::aliases::{OwnerLookup, OwnerStatus};
use lightbox_core::{ids, Result};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Create {
    /// The folder's name.
    #[schemars(length(min = 1, max = 200))]
    name: String,
    #[serde(default)]
    #[schemars(length(max = 5000))]
    description: String,
}

pub async fn create(ctx: Ctx, p: Create) -> Result<AlbumDto> {
    let owner = ctx.caller()?.user_id;
    ctx.state
        .albums
        .create(owner, &p.name, &p.description)
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Id {
    #[schemars(with = "uuid::Uuid")]
    id: String,
}

pub async fn get(ctx: Ctx, p: Id) -> Result<AlbumDto> {
    let id = ids::parse("id", &p.id)?;
    ctx.state.albums.get(ctx.caller()?.user_id, id).await
}

pub async fn list(ctx: Ctx, _: Nothing) -> Result<Items<AlbumDto>> {
    ctx.state.albums.list(ctx.caller()?.user_id).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Update {
    #[schemars(with = "uuid::Uuid")]
    id: String,
    /// Omitted: unchanged.
    #[schemars(length(min = 1, max = 200))]
    name: Option<String>,
    /// Omitted: unchanged.
    #[schemars(length(max = 5000))]
    description: Option<String>,
}

pub async fn update(ctx: Ctx, p: Update) -> Result<AlbumDto> {
    let id = ids::parse("id", &p.id)?;
    let owner = ctx.caller()?.user_id;
    ctx.state
        .albums
        .update(owner, id, p.name.as_deref(), p.description.as_deref())
        .await
}

pub async fn delete(ctx: Ctx, p: Id) -> Result<JobResult> {
    let id = ids::parse("id", &p.id)?;
    ctx.state.albums.delete(ctx.caller()?.user_id, id).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reorder {
    #[schemars(with = "uuid::Uuid")]
    album_id: String,
    /// Photos of the folder, in their new order; the rest follow in their old one.
    #[schemars(with = "Vec<uuid::Uuid>")]
    ordered_ids: Vec<String>,
}

pub async fn reorder(ctx: Ctx, p: Reorder) -> Result<Nothing> {
    let album = ids::parse("album_id", &p.album_id)?;
    let ordered = p
        .ordered_ids
        .iter()
        .map(|i| ids::parse("ordered_ids", i))
        .collect::<Result<Vec<_>>>()?;
    let owner = ctx.caller()?.user_id;
    ctx.state.albums.reorder(owner, album, &ordered).await?;
    Ok(Nothing {})
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CropSet {
    #[schemars(with = "uuid::Uuid")]
    album_id: String,
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

pub async fn crop_set(ctx: Ctx, p: CropSet) -> Result<JobResult> {
    let album = ids::parse("album_id", &p.album_id)?;
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
    let owner = ctx.caller()?.user_id;
    ctx.state.albums.set_crop(owner, album, spec).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CropDelete {
    #[schemars(with = "uuid::Uuid")]
    album_id: String,
    code: String,
}

pub async fn crop_delete(ctx: Ctx, p: CropDelete) -> Result<JobResult> {
    let album = ids::parse("album_id", &p.album_id)?;
    let owner = ctx.caller()?.user_id;
    ctx.state.albums.delete_crop(owner, album, &p.code).await
}

pub async fn owner_status(ctx: Ctx, q: OwnerLookup) -> Result<OwnerStatus> {
    ctx.state
        .sharing
        .owner_status(ctx.caller()?.user_id, q)
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DownloadToken {
    #[schemars(with = "uuid::Uuid")]
    album_id: String,
    #[schemars(with = "lightbox_core::domain::downloads::Variant")]
    variant: String,
}

/// Checks there is something to download now and signs a 5-minute link
/// for the folder and variant; every request of it checks again.
pub async fn download_token(ctx: Ctx, p: DownloadToken) -> Result<SignedLink> {
    let album = ids::parse("album_id", &p.album_id)?;
    let owner = ctx.caller()?.user_id;
    let variant = downloads::variant(&p.variant)?;
    ctx.state
        .albums
        .archive_entries(owner, album, variant)
        .await?;
    let link = Link {
        variant: Some(variant),
        ..Link::new(LinkKind::AlbumDownload, owner, album)
    };
    ctx.state.signer.sign_link(&link)
}

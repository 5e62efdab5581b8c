//! `album.*` (folders): create, read, change, delete, order, crop rules,
//! owner lookups and zip downloads. Publication is in `sharing`.

use super::account::Nothing;
use super::ctx::Ctx;
use crate::params::{flattened, CropParams};
use lightbox_core::albums::{AlbumDto, Items, JobResult};
use lightbox_core::auth::links::SignedLink;
use lightbox_core::domain::downloads::Variant;
use lightbox_core::domain::id::Id;
use lightbox_core::domain::links::{Link, LinkKind};
use lightbox_core::sharing::aliases::{OwnerLookup, OwnerStatus};
use lightbox_core::Result;
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
    let owner = ctx.owner()?;
    ctx.state
        .albums
        .create(owner, &p.name, &p.description)
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ById {
    id: Id,
}

pub async fn get(ctx: Ctx, p: ById) -> Result<AlbumDto> {
    ctx.state.albums.get(ctx.owner()?, p.id.0).await
}

pub async fn list(ctx: Ctx, _: Nothing) -> Result<Items<AlbumDto>> {
    ctx.state.albums.list(ctx.owner()?).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Update {
    id: Id,
    /// Omitted: unchanged.
    #[schemars(length(min = 1, max = 200))]
    name: Option<String>,
    /// Omitted: unchanged.
    #[schemars(length(max = 5000))]
    description: Option<String>,
}

pub async fn update(ctx: Ctx, p: Update) -> Result<AlbumDto> {
    let owner = ctx.owner()?;
    ctx.state
        .albums
        .update(owner, p.id.0, p.name.as_deref(), p.description.as_deref())
        .await
}

pub async fn delete(ctx: Ctx, p: ById) -> Result<JobResult> {
    ctx.state.albums.delete(ctx.owner()?, p.id.0).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Reorder {
    album_id: Id,
    /// Photos of the folder, in their new order; the rest follow in their old one.
    ordered_ids: Vec<Id>,
}

pub async fn reorder(ctx: Ctx, p: Reorder) -> Result<Nothing> {
    let ordered: Vec<_> = p.ordered_ids.into_iter().map(Into::into).collect();
    let owner = ctx.owner()?;
    ctx.state
        .albums
        .reorder(owner, p.album_id.0, &ordered)
        .await?;
    Ok(Nothing {})
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CropSet {
    album_id: Id,
    #[serde(flatten, deserialize_with = "flattened")]
    spec: CropParams,
}

pub async fn crop_set(ctx: Ctx, p: CropSet) -> Result<JobResult> {
    let owner = ctx.owner()?;
    ctx.state
        .albums
        .set_crop(owner, p.album_id.0, p.spec.into())
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CropDelete {
    album_id: Id,
    code: String,
}

pub async fn crop_delete(ctx: Ctx, p: CropDelete) -> Result<JobResult> {
    let owner = ctx.owner()?;
    ctx.state
        .albums
        .delete_crop(owner, p.album_id.0, &p.code)
        .await
}

pub async fn owner_status(ctx: Ctx, q: OwnerLookup) -> Result<OwnerStatus> {
    ctx.state.sharing.owner_status(ctx.owner()?, q).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DownloadToken {
    album_id: Id,
    variant: Variant,
}

/// Checks there is something to download now and signs a 5-minute link
/// for the folder and variant; every request of it checks again.
pub async fn download_token(ctx: Ctx, p: DownloadToken) -> Result<SignedLink> {
    let (owner, album) = (ctx.owner()?, p.album_id.0);
    ctx.state
        .albums
        .archive_entries(owner, album, p.variant)
        .await?;
    let link = Link {
        variant: Some(p.variant),
        ..Link::new(LinkKind::AlbumDownload, owner, album)
    };
    ctx.state.signer.sign_link(&link)
}

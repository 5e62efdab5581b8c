//! `album.sharing.*`, `album.alias.*`, `album.cover.set` and
//! `album.preview`: publishing a folder and what its visitors see.

use super::ctx::Ctx;
use lightbox_core::domain::album::PolicyPatch;
use lightbox_core::sharing::aliases::CheckResult;
use lightbox_core::sharing::visitors::Preview;
use lightbox_core::sharing::SharingDto;
use lightbox_core::{ids, Result};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlbumId {
    album_id: String,
}

pub async fn get(ctx: Ctx, p: AlbumId) -> Result<SharingDto> {
    let album = ids::parse("album_id", &p.album_id)?;
    ctx.state.sharing.get(ctx.caller()?.user_id, album).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetPolicy {
    album_id: String,
    show_location: Option<bool>,
    show_date: Option<bool>,
    show_camera: Option<bool>,
    allow_download: Option<bool>,
    feed: Option<bool>,
    order: Option<String>,
    cover_focus: Option<String>,
}

pub async fn set_policy(ctx: Ctx, p: SetPolicy) -> Result<SharingDto> {
    let album = ids::parse("album_id", &p.album_id)?;
    let patch = PolicyPatch {
        show_location: p.show_location,
        show_date: p.show_date,
        show_camera: p.show_camera,
        allow_download: p.allow_download,
        feed: p.feed,
        order: p.order,
        cover_focus: p.cover_focus,
    };
    let owner = ctx.caller()?.user_id;
    ctx.state.sharing.set_policy(owner, album, patch).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SetMode {
    album_id: String,
    mode: String,
    token: Option<String>,
    alias: Option<String>,
}

pub async fn set_mode(ctx: Ctx, p: SetMode) -> Result<SharingDto> {
    let album = ids::parse("album_id", &p.album_id)?;
    let owner = ctx.caller()?.user_id;
    ctx.state
        .sharing
        .set_mode(
            owner,
            album,
            &p.mode,
            p.token.as_deref(),
            p.alias.as_deref(),
        )
        .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Republish {
    album_id: String,
    token: Option<String>,
}

pub async fn republish(ctx: Ctx, p: Republish) -> Result<SharingDto> {
    let album = ids::parse("album_id", &p.album_id)?;
    let owner = ctx.caller()?.user_id;
    ctx.state
        .sharing
        .republish(owner, album, p.token.as_deref())
        .await
}

pub async fn reset_token(ctx: Ctx, p: AlbumId) -> Result<SharingDto> {
    let album = ids::parse("album_id", &p.album_id)?;
    ctx.state
        .sharing
        .reset_token(ctx.caller()?.user_id, album)
        .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Release {
    album_id: String,
    alias: String,
}

pub async fn alias_release(ctx: Ctx, p: Release) -> Result<SharingDto> {
    let album = ids::parse("album_id", &p.album_id)?;
    let owner = ctx.caller()?.user_id;
    ctx.state
        .sharing
        .release_alias(owner, album, &p.alias)
        .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    alias: String,
}

pub async fn alias_check(ctx: Ctx, p: Check) -> Result<CheckResult> {
    let owner = ctx.caller()?.user_id;
    ctx.state.sharing.check_alias(owner, &p.alias).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoverSet {
    album_id: String,
    /// Null (or absent) restores the automatic choice.
    image_id: Option<String>,
}

pub async fn cover_set(ctx: Ctx, p: CoverSet) -> Result<SharingDto> {
    let album = ids::parse("album_id", &p.album_id)?;
    let image = p
        .image_id
        .as_deref()
        .map(|i| ids::parse("image_id", i))
        .transpose()?;
    let owner = ctx.caller()?.user_id;
    ctx.state.sharing.set_cover(owner, album, image).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreviewParams {
    album_id: String,
    after: Option<String>,
}

pub async fn preview(ctx: Ctx, p: PreviewParams) -> Result<Preview> {
    let album = ids::parse("album_id", &p.album_id)?;
    let owner = ctx.caller()?.user_id;
    ctx.state
        .sharing
        .preview(owner, album, p.after.as_deref())
        .await
}

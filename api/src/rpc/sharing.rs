//! `album.sharing.*`, `album.alias.*`, `album.cover.set` and
//! `album.preview`: publishing a folder and what its visitors see.

use super::ctx::Ctx;
use lightbox_core::domain::album::PolicyPatch;
use lightbox_core::sharing::aliases::CheckResult;
use lightbox_core::sharing::visitors::Preview;
use lightbox_core::sharing::SharingDto;
use lightbox_core::{ids, Result};
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AlbumId {
    #[schemars(with = "uuid::Uuid")]
    album_id: String,
}

pub async fn get(ctx: Ctx, p: AlbumId) -> Result<SharingDto> {
    let album = ids::parse("album_id", &p.album_id)?;
    ctx.state.sharing.get(ctx.caller()?.user_id, album).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPolicy {
    #[schemars(with = "uuid::Uuid")]
    album_id: String,
    show_location: Option<bool>,
    show_date: Option<bool>,
    show_camera: Option<bool>,
    allow_download: Option<bool>,
    feed: Option<bool>,
    #[schemars(with = "Option<lightbox_core::domain::album::Order>")]
    order: Option<String>,
    #[schemars(with = "Option<lightbox_core::domain::album::CoverFocus>")]
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

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMode {
    #[schemars(with = "uuid::Uuid")]
    album_id: String,
    #[schemars(with = "lightbox_core::domain::album::PublishMode")]
    mode: String,
    /// For `unlisted`: a `new` link (default) or `keep` the live one.
    #[schemars(with = "Option<lightbox_core::domain::sharing::TokenChoice>")]
    token: Option<String>,
    /// For `public`: the readable address `/a/{alias}`.
    #[schemars(length(min = 3, max = 63))]
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

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Republish {
    #[schemars(with = "uuid::Uuid")]
    album_id: String,
    #[schemars(with = "Option<lightbox_core::domain::sharing::TokenChoice>")]
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

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Release {
    #[schemars(with = "uuid::Uuid")]
    album_id: String,
    #[schemars(length(min = 3, max = 63))]
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

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// Any text: the result says whether it is a valid, free alias.
    alias: String,
}

pub async fn alias_check(ctx: Ctx, p: Check) -> Result<CheckResult> {
    let owner = ctx.caller()?.user_id;
    ctx.state.sharing.check_alias(owner, &p.alias).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoverSet {
    #[schemars(with = "uuid::Uuid")]
    album_id: String,
    /// Null (or absent) restores the automatic choice.
    #[schemars(with = "Option<uuid::Uuid>")]
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

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewParams {
    #[schemars(with = "uuid::Uuid")]
    album_id: String,
    /// `next_after` of the previous fragment.
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

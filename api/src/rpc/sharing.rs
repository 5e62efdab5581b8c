//! `album.sharing.*`, `album.alias.*`, `album.cover.set` and
//! `album.preview`: publishing a folder and what its visitors see.

use super::ctx::Ctx;
use lightbox_core::domain::album::{CoverFocus, Order, PolicyPatch};
use lightbox_core::domain::id::Id;
use lightbox_core::sharing::aliases::CheckResult;
use lightbox_core::sharing::visitors::Preview;
use lightbox_core::sharing::SharingDto;
use lightbox_core::Result;
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AlbumId {
    album_id: Id,
}

pub async fn get(ctx: Ctx, p: AlbumId) -> Result<SharingDto> {
    ctx.state.sharing.get(ctx.owner()?, p.album_id.0).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPolicy {
    album_id: Id,
    show_location: Option<bool>,
    show_date: Option<bool>,
    show_camera: Option<bool>,
    allow_download: Option<bool>,
    feed: Option<bool>,
    // Read as text and checked after ownership: the contract orders
    // setPolicy's errors 2001, 1003, 2002.
    #[schemars(with = "Option<Order>")]
    order: Option<String>,
    #[schemars(with = "Option<CoverFocus>")]
    cover_focus: Option<String>,
}

pub async fn set_policy(ctx: Ctx, p: SetPolicy) -> Result<SharingDto> {
    let owner = ctx.owner()?;
    let album = p.album_id.0;
    let patch = move || {
        Ok(PolicyPatch {
            show_location: p.show_location,
            show_date: p.show_date,
            show_camera: p.show_camera,
            allow_download: p.allow_download,
            feed: p.feed,
            order: p
                .order
                .map(|o| Order::from_param("order", &o))
                .transpose()?,
            cover_focus: p
                .cover_focus
                .map(|c| CoverFocus::from_param("cover_focus", &c))
                .transpose()?,
        })
    };
    ctx.state.sharing.set_policy(owner, album, patch).await
}

// `mode` and `token` are read as text and checked by the service after
// the takedown check: a taken-down folder answers 2004 first.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetMode {
    album_id: Id,
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
    let owner = ctx.owner()?;
    ctx.state
        .sharing
        .set_mode(
            owner,
            p.album_id.0,
            &p.mode,
            p.token.as_deref(),
            p.alias.as_deref(),
        )
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Republish {
    album_id: Id,
    #[schemars(with = "Option<lightbox_core::domain::sharing::TokenChoice>")]
    token: Option<String>,
}

pub async fn republish(ctx: Ctx, p: Republish) -> Result<SharingDto> {
    let owner = ctx.owner()?;
    ctx.state
        .sharing
        .republish(owner, p.album_id.0, p.token.as_deref())
        .await
}

pub async fn reset_token(ctx: Ctx, p: AlbumId) -> Result<SharingDto> {
    let owner = ctx.owner()?;
    ctx.state.sharing.reset_token(owner, p.album_id.0).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Release {
    album_id: Id,
    #[schemars(length(min = 3, max = 63))]
    alias: String,
}

pub async fn alias_release(ctx: Ctx, p: Release) -> Result<SharingDto> {
    let owner = ctx.owner()?;
    ctx.state
        .sharing
        .release_alias(owner, p.album_id.0, &p.alias)
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Check {
    /// Any text: the result says whether it is a valid, free alias.
    alias: String,
}

pub async fn alias_check(ctx: Ctx, p: Check) -> Result<CheckResult> {
    let owner = ctx.owner()?;
    ctx.state.sharing.check_alias(owner, &p.alias).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CoverSet {
    album_id: Id,
    /// Null (or absent) restores the automatic choice.
    image_id: Option<Id>,
}

pub async fn cover_set(ctx: Ctx, p: CoverSet) -> Result<SharingDto> {
    let image = p.image_id.map(Into::into);
    let owner = ctx.owner()?;
    ctx.state
        .sharing
        .set_cover(owner, p.album_id.0, image)
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewParams {
    album_id: Id,
    /// `next_after` of the previous fragment.
    after: Option<String>,
}

pub async fn preview(ctx: Ctx, p: PreviewParams) -> Result<Preview> {
    let owner = ctx.owner()?;
    ctx.state
        .sharing
        .preview(owner, p.album_id.0, p.after.as_deref())
        .await
}

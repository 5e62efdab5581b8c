//! `image.*`: the owner's photos.

use super::dispatch::Ctx;
use lightbox_core::images::dto::ImageDto;
use lightbox_core::images::Page;
use lightbox_core::{ids, Result};
use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Id {
    id: String,
}

pub async fn get(ctx: Ctx, p: Id) -> Result<ImageDto> {
    let id = ids::parse("id", &p.id)?;
    ctx.state.images.get(ctx.caller()?.user_id, id).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct List {
    cursor: Option<String>,
    limit: Option<i64>,
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

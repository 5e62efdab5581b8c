//! `admin.*`: user management and takedowns, for administrators.

use super::account::{Nothing, UserResult};
use super::ctx::Ctx;
use lightbox_core::accounts;
use lightbox_core::domain::accounts::UserDto;
use lightbox_core::domain::id::Id;
use lightbox_core::moderation::{self, ModerationResult};
use lightbox_core::Result;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateUser {
    email: String,
    #[schemars(length(min = 8, max = 256))]
    password: String,
    #[serde(default)]
    is_admin: bool,
}

pub async fn create_user(ctx: Ctx, p: CreateUser) -> Result<UserResult> {
    let user =
        accounts::create_user(ctx.state.repo.as_ref(), &p.email, p.password, p.is_admin).await?;
    Ok(UserResult::new(user))
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct Users {
    items: Vec<UserDto>,
}

pub async fn list_users(ctx: Ctx, _: Nothing) -> Result<Users> {
    Ok(Users {
        items: accounts::list_users(ctx.state.repo.as_ref()).await?,
    })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Takedown {
    album_id: Option<Id>,
    image_id: Option<Id>,
    reason: String,
}

pub async fn takedown(ctx: Ctx, p: Takedown) -> Result<ModerationResult> {
    let target = moderation::target(p.album_id.map(Into::into), p.image_id.map(Into::into))?;
    moderation::set(&ctx.state.repo, target, Some(&p.reason)).await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Restore {
    album_id: Option<Id>,
    image_id: Option<Id>,
    #[serde(default)]
    #[allow(dead_code)]
    reason: Option<String>,
}

pub async fn restore(ctx: Ctx, p: Restore) -> Result<ModerationResult> {
    let target = moderation::target(p.album_id.map(Into::into), p.image_id.map(Into::into))?;
    moderation::set(&ctx.state.repo, target, None).await
}

//! `account.*`: the caller's own profile and credentials.

use super::ctx::Ctx;
use lightbox_core::accounts;
use lightbox_core::auth::sessions::TokenPair;
use lightbox_core::domain::accounts::UserDto;
use lightbox_core::Result;
use serde::{Deserialize, Serialize};

/// No params, or the empty result `{}`.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Nothing {}

#[derive(Serialize, schemars::JsonSchema)]
pub struct UserResult {
    user: UserDto,
}

impl UserResult {
    pub fn new(user: UserDto) -> Self {
        UserResult { user }
    }
}

pub async fn me(ctx: Ctx, _: Nothing) -> Result<UserResult> {
    let user = accounts::me(ctx.state.repo.as_ref(), ctx.caller()?).await?;
    Ok(UserResult { user })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetEmail {
    current_password: String,
    email: String,
}

pub async fn set_email(ctx: Ctx, p: SetEmail) -> Result<UserResult> {
    let repo = ctx.state.repo.as_ref();
    let user = accounts::set_email(repo, ctx.caller()?, p.current_password, &p.email).await?;
    Ok(UserResult { user })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPassword {
    current_password: String,
    #[schemars(length(min = 8, max = 256))]
    new_password: String,
}

pub async fn set_password(ctx: Ctx, p: SetPassword) -> Result<TokenPair> {
    let s = &ctx.state;
    accounts::set_password(
        s.repo.as_ref(),
        &s.signer,
        ctx.caller()?,
        p.current_password,
        p.new_password,
    )
    .await
}

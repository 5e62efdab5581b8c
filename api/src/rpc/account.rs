//! `account.*`: the caller's own profile and credentials.

use super::ctx::Ctx;
use lightbox_core::accounts::{self, Reauth};
use lightbox_core::auth::hashing::Lane;
use lightbox_core::auth::sessions::TokenPair;
use lightbox_core::auth::Caller;
use lightbox_core::domain::accounts::UserDto;
use lightbox_core::limits::login::Admitted;
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

/// `account.setEmail`: the current password is checked inside the login
/// limits, as a login's is.
pub async fn set_email(ctx: Ctx, p: SetEmail) -> Result<UserResult> {
    let (s, caller) = (&ctx.state, ctx.caller()?);
    let user =
        s.guards
            .login
            .check(&caller.email, &ctx.client, |admitted| {
                let who = reauth(&ctx, caller, admitted);
                async move {
                    accounts::set_email(s.repo.as_ref(), &who, p.current_password, &p.email).await
                }
            })
            .await?;
    Ok(UserResult { user })
}

fn reauth<'a>(ctx: &'a Ctx, caller: &'a Caller, admitted: Admitted) -> Reauth<'a> {
    Reauth {
        caller,
        client: &ctx.client,
        lane: Lane::of(admitted),
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SetPassword {
    current_password: String,
    #[schemars(length(min = 8, max = 256))]
    new_password: String,
}

/// `account.setPassword`, limited as `account.setEmail`.
pub async fn set_password(ctx: Ctx, p: SetPassword) -> Result<TokenPair> {
    let (s, caller) = (&ctx.state, ctx.caller()?);
    s.guards
        .login
        .check(&caller.email, &ctx.client, |admitted| {
            let who = reauth(&ctx, caller, admitted);
            let (current, new) = (p.current_password, p.new_password);
            async move { accounts::set_password(s.repo.as_ref(), &s.signer, &who, current, new).await }
        })
        .await
}

//! `auth.*`: login, refresh, logout. Public: the credential is in the params.

use super::account::Nothing;
use super::ctx::Ctx;
use lightbox_core::auth::hashing::Lane;
use lightbox_core::auth::sessions::{self, TokenPair};
use lightbox_core::domain::checks::{char_len_between, Checks};
use lightbox_core::Result;
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Login {
    #[schemars(length(min = 1, max = 254))]
    email: String,
    #[schemars(length(min = 1, max = 256))]
    password: String,
}

/// `auth.login`. A refused attempt is logged with why (and the client's
/// address, never the email), also when it came as a notification, whose
/// request log line has no answer to show.
pub async fn login(ctx: Ctx, p: Login) -> Result<TokenPair> {
    let client = ctx.client.clone();
    let result = attempt(ctx, p).await;
    if let Err(e) = &result {
        let data = e.data();
        let reason = data["reason"].as_str().unwrap_or("");
        tracing::info!(target: "lightbox::auth", %client, code = e.code(), reason, "login refused");
    }
    result
}

async fn attempt(ctx: Ctx, p: Login) -> Result<TokenPair> {
    // No account can have longer values; refusing them here keeps junk out
    // of the throttle table and bounds the hashing work.
    Checks::new()
        .check(
            char_len_between(p.email.trim(), 1, 254),
            "email",
            "must be 1-254 characters",
        )
        .check(
            char_len_between(&p.password, 1, 256),
            "password",
            "must be 1-256 characters",
        )
        .finish()?;
    let s = &ctx.state;
    // In-memory limits first: a flood is refused before any hashing.
    let email = p.email.trim().to_lowercase();
    let repo = s.repo.as_ref();
    s.guards
        .login
        .check(&email, &ctx.client, |admitted| {
            let who = (email.as_str(), ctx.client.as_str());
            sessions::login(repo, &s.signer, who, p.password, Lane::of(admitted))
        })
        .await
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RefreshToken {
    refresh_token: String,
}

pub async fn refresh(ctx: Ctx, p: RefreshToken) -> Result<TokenPair> {
    sessions::refresh(ctx.state.repo.as_ref(), &ctx.state.signer, &p.refresh_token).await
}

pub async fn logout(ctx: Ctx, p: RefreshToken) -> Result<Nothing> {
    sessions::logout(ctx.state.repo.as_ref(), &p.refresh_token).await?;
    Ok(Nothing {})
}

//! `token.*`: personal access tokens of the calling user.

use super::account::Nothing;
use super::ctx::Ctx;
use lightbox_core::auth::pats::{self, CreatedPat, PatDto};
use lightbox_core::domain::id::Id;
use lightbox_core::Result;
use serde::{Deserialize, Serialize};

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Create {
    #[schemars(length(min = 1, max = 100))]
    name: String,
    /// Default: both.
    #[schemars(with = "Option<Vec<lightbox_core::domain::accounts::Scope>>")]
    scopes: Option<Vec<String>>,
    /// Absent: never expires.
    #[schemars(range(min = 1, max = 3650))]
    expires_in_days: Option<i64>,
}

pub async fn create(ctx: Ctx, p: Create) -> Result<CreatedPat> {
    let user = ctx.owner()?;
    pats::create(
        ctx.state.repo.as_ref(),
        user,
        p.name,
        p.scopes,
        p.expires_in_days,
    )
    .await
}

#[derive(Serialize, schemars::JsonSchema)]
#[schemars(rename = "PatList")]
pub struct Items {
    items: Vec<PatDto>,
}

pub async fn list(ctx: Ctx, _: Nothing) -> Result<Items> {
    let items = pats::list(ctx.state.repo.as_ref(), ctx.owner()?).await?;
    Ok(Items { items })
}

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Revoke {
    id: Id,
}

pub async fn revoke(ctx: Ctx, p: Revoke) -> Result<Nothing> {
    pats::revoke(ctx.state.repo.as_ref(), ctx.owner()?, p.id.0).await?;
    Ok(Nothing {})
}

//! `token.*`: personal access tokens of the calling user.

use super::account::Nothing;
use super::ctx::Ctx;
use lightbox_core::auth::pats::{self, CreatedPat, PatDto};
use lightbox_core::{ids, Result};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Create {
    name: String,
    scopes: Option<Vec<String>>,
    expires_in_days: Option<i64>,
}

pub async fn create(ctx: Ctx, p: Create) -> Result<CreatedPat> {
    let user = ctx.caller()?.user_id;
    pats::create(
        ctx.state.repo.as_ref(),
        user,
        p.name,
        p.scopes,
        p.expires_in_days,
    )
    .await
}

#[derive(Serialize)]
pub struct Items {
    items: Vec<PatDto>,
}

pub async fn list(ctx: Ctx, _: Nothing) -> Result<Items> {
    let items = pats::list(ctx.state.repo.as_ref(), ctx.caller()?.user_id).await?;
    Ok(Items { items })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Revoke {
    id: String,
}

pub async fn revoke(ctx: Ctx, p: Revoke) -> Result<Value> {
    let id = ids::parse("id", &p.id)?;
    pats::revoke(ctx.state.repo.as_ref(), ctx.caller()?.user_id, id).await?;
    Ok(json!({}))
}

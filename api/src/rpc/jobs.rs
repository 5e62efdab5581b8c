//! `job.*`: the re-render jobs that `album.delete`, `album.crop.set` and
//! `album.crop.delete` start.

use super::ctx::Ctx;
use lightbox_core::domain::jobs::Job;
use lightbox_core::Result;
use serde::Deserialize;

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Get {
    job_id: i64,
}

pub async fn get(ctx: Ctx, p: Get) -> Result<Job> {
    let owner = ctx.owner()?;
    ctx.state.albums.job(owner, p.job_id).await
}

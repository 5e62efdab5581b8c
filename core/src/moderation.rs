//! Takedowns by administrators (`admin.takedown` / `admin.restore`). A
//! taken-down folder vanishes for visitors and cannot be republished; a
//! taken-down photo vanishes everywhere visitors look, `/i/...` included.

use crate::db::{DynRepo, Moderated};
use crate::images::dto::Moderation;
use crate::{time, Error, Result};
use lightbox_domain::checks::char_len_between;
use lightbox_domain::moderation::Takedown;
use serde::Serialize;
use uuid::Uuid;

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct ModerationResult {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub album_id: Option<uuid::Uuid>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image_id: Option<uuid::Uuid>,
    pub moderation: Moderation,
}

/// Exactly one of the two ids.
pub fn target(album_id: Option<Uuid>, image_id: Option<Uuid>) -> Result<Moderated> {
    match (album_id, image_id) {
        (Some(a), None) => Ok(Moderated::Album(a)),
        (None, Some(i)) => Ok(Moderated::Image(i)),
        _ => Err(Error::invalid(
            "album_id",
            "give exactly one of album_id and image_id",
        )),
    }
}

/// Starts a takedown (`Some(reason)`) or ends one (`None`).
pub async fn set(
    repo: &DynRepo,
    target: Moderated,
    reason: Option<&str>,
) -> Result<ModerationResult> {
    if let Some(r) = reason {
        if !char_len_between(r.trim(), 1, 500) {
            return Err(Error::invalid("reason", "must be 1-500 characters"));
        }
    }
    let now = time::now_ms();
    if !repo.set_takedown(target, reason, now).await? {
        return Err(Error::NotFound);
    }
    let (album_id, image_id) = match target {
        Moderated::Album(a) => (Some(a), None),
        Moderated::Image(i) => (None, Some(i)),
    };
    Ok(ModerationResult {
        album_id,
        image_id,
        moderation: Moderation::from(&Takedown {
            at: reason.map(|_| now),
            reason: reason.map(str::to_owned),
        }),
    })
}

//! Takedowns and restores (`SharingRepo::set_takedown`): a photo's row, or
//! a folder's row and the covers its photos carry.

use super::{lock_photos_first, Engine};
use crate::error::OrInternal;
use crate::Result;
use sqlx::{Any, Transaction};
use uuid::Uuid;

/// A photo's own takedown; restoring it lifts what it carried from
/// folders too.
pub(super) async fn photo_takedown(
    tx: &mut Transaction<'static, Any>,
    id: Uuid,
    at: Option<i64>,
    reason: Option<&str>,
) -> Result<bool> {
    let done =
        sqlx::query("UPDATE images SET taken_down_at = $2, takedown_reason = $3 WHERE id = $1")
            .bind(id.to_string())
            .bind(at)
            .bind(reason)
            .execute(&mut **tx)
            .await
            .or_internal()?;
    if reason.is_none() {
        sqlx::query("DELETE FROM takedown_covers WHERE image_id = $1")
            .bind(id.to_string())
            .execute(&mut **tx)
            .await
            .or_internal()?;
    }
    Ok(done.rows_affected() > 0)
}

/// A folder's takedown is carried onto the photos it holds now, so moving
/// them out or deleting the folder does not lift it; restoring lifts both
/// (a deleted folder can still be restored, for the photos it covered).
pub(super) async fn album_takedown(
    tx: &mut Transaction<'static, Any>,
    engine: Engine,
    id: Uuid,
    at: Option<i64>,
    reason: Option<&str>,
) -> Result<bool> {
    // Its covers change `carried` on the photos in it and on those that
    // carry its takedown elsewhere.
    let touched =
        "album_id = $1 OR id IN (SELECT image_id FROM takedown_covers WHERE album_id = $1)";
    lock_photos_first(tx, engine, touched, id).await?;
    let live = if reason.is_some() {
        " AND deleted_at IS NULL"
    } else {
        ""
    };
    let done = sqlx::query(&format!(
        "UPDATE albums SET taken_down_at = $2, takedown_reason = $3 WHERE id = $1{live}"
    ))
    .bind(id.to_string())
    .bind(at)
    .bind(reason)
    .execute(&mut **tx)
    .await
    .or_internal()?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    match at {
        Some(at) => {
            sqlx::query(
                "INSERT INTO takedown_covers (image_id, album_id, at, reason) \
                 SELECT id, $1, $2, $3 FROM images WHERE album_id = $1 \
                 ON CONFLICT (image_id, album_id) DO UPDATE SET at = excluded.at, reason = excluded.reason",
            )
            .bind(id.to_string())
            .bind(at)
            .bind(reason)
            .execute(&mut **tx)
            .await.or_internal()?;
        }
        None => {
            sqlx::query("DELETE FROM takedown_covers WHERE album_id = $1")
                .bind(id.to_string())
                .execute(&mut **tx)
                .await
                .or_internal()?;
        }
    }
    Ok(true)
}

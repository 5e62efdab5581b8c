//! `AlbumRepo` for `SqlRepo`.

use super::image_rows::{image_row, IMAGE_COLS};
use super::images::cover_in_taken_down_album;
use super::{
    flag, json, lock_parent, lock_photos_first, map_rows, opt_state, opt_uuid, retry_deadlocks,
    state, uuid, SqlRepo,
};
use crate::db::albums::*;
use crate::error::OrInternal;
use crate::Result;
use async_trait::async_trait;
use lightbox_domain::album::Album;
use lightbox_domain::album::{Policy, PublishMode};
use lightbox_domain::crop::CropSpec;
use lightbox_domain::image::Image;
use lightbox_domain::moderation::Takedown;
use sqlx::any::AnyRow;
use sqlx::Row;
use uuid::Uuid;

pub(super) const ALBUM_COLS: &str =
    "a.id, a.owner_id, a.name, a.description, a.is_default, a.created_at, a.mode, \
     a.last_published_mode, a.published_at, a.policy, a.cover_image_id, a.taken_down_at, \
     a.takedown_reason, a.image_count";

pub(super) fn album_row(r: &AnyRow) -> Result<Album> {
    Ok(Album {
        id: uuid(r, "id")?,
        owner_id: uuid(r, "owner_id")?,
        name: r.try_get("name").or_internal()?,
        description: r.try_get("description").or_internal()?,
        is_default: flag(r, "is_default")?,
        created_at: r.try_get("created_at").or_internal()?,
        mode: state(r, "mode", PublishMode::parse)?,
        last_published_mode: opt_state(r, "last_published_mode", PublishMode::parse)?,
        published_at: r.try_get("published_at").or_internal()?,
        policy: Policy::parse(&r.try_get::<String, _>("policy").or_internal()?),
        cover_image_id: opt_uuid(r, "cover_image_id")?,
        takedown: Takedown {
            at: r.try_get("taken_down_at").or_internal()?,
            reason: r.try_get("takedown_reason").or_internal()?,
        },
        image_count: r.try_get("image_count").or_internal()?,
    })
}

/// A default policy is stored as `{}`, like the migration's default, so
/// that a later change of a default reaches folders that never chose.
fn stored_policy(p: &Policy) -> String {
    if *p == Policy::default() {
        "{}".into()
    } else {
        p.to_json()
    }
}

#[async_trait]
impl AlbumRepo for SqlRepo {
    async fn insert_album(&self, a: &Album) -> Result<()> {
        sqlx::query(
            "INSERT INTO albums (id, owner_id, name, description, is_default, created_at, mode, policy) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(a.id.to_string())
        .bind(a.owner_id.to_string())
        .bind(&a.name)
        .bind(&a.description)
        .bind(a.is_default as i64)
        .bind(a.created_at)
        .bind(a.mode.as_str())
        .bind(stored_policy(&a.policy))
        .execute(&self.pool)
        .await.or_internal()?;
        Ok(())
    }

    async fn album(&self, owner: Option<Uuid>, id: Uuid) -> Result<Option<Album>> {
        let q = format!(
            "SELECT {ALBUM_COLS} FROM albums a WHERE a.id = $1 AND a.deleted_at IS NULL \
             AND ($2 = '' OR a.owner_id = $2)"
        );
        let row = sqlx::query(&q)
            .bind(id.to_string())
            .bind(owner.map(|o| o.to_string()).unwrap_or_default())
            .fetch_optional(&self.pool)
            .await
            .or_internal()?;
        row.as_ref().map(album_row).transpose()
    }

    async fn albums_of(&self, owner: Uuid) -> Result<Vec<Album>> {
        let q = format!(
            "SELECT {ALBUM_COLS} FROM albums a WHERE a.owner_id = $1 AND a.deleted_at IS NULL \
             ORDER BY a.is_default DESC, a.created_at, a.id"
        );
        let rows = sqlx::query(&q)
            .bind(owner.to_string())
            .fetch_all(&self.pool)
            .await
            .or_internal()?;
        map_rows(&rows, album_row)
    }

    async fn update_album(
        &self,
        owner: Uuid,
        id: Uuid,
        name: Option<&str>,
        description: Option<&str>,
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE albums SET name = COALESCE($3, name), description = COALESCE($4, description) \
             WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL AND is_default = 0",
        )
        .bind(id.to_string())
        .bind(owner.to_string())
        .bind(name)
        .bind(description)
        .execute(&self.pool)
        .await
        .or_internal()?;
        Ok(done.rows_affected() > 0)
    }

    async fn delete_album(
        &self,
        owner: Uuid,
        id: Uuid,
        to: Uuid,
        now: i64,
        hold_until: i64,
    ) -> Result<Option<Vec<Uuid>>> {
        retry_deadlocks(move || async move {
            let mut tx = self.pool.begin().await.or_internal()?;
            lock_photos_first(&mut tx, self.engine, "album_id = $1", id).await?;
            let gone = sqlx::query(
                "UPDATE albums SET deleted_at = $3, cover_image_id = NULL \
                 WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL AND is_default = 0",
            )
            .bind(id.to_string())
            .bind(owner.to_string())
            .bind(now)
            .execute(&mut *tx)
            .await.or_internal()?;
            if gone.rows_affected() == 0 {
                return Ok(None);
            }
            let moved = sqlx::query("SELECT id FROM images WHERE album_id = $1")
                .bind(id.to_string())
                .fetch_all(&mut *tx)
                .await.or_internal()?;
            let moved = moved
                .iter()
                .map(|r| uuid(r, "id"))
                .collect::<Result<Vec<_>>>()?;
            sqlx::query(
                "UPDATE images SET album_id = $2, position = NULL, membership = membership + 1 \
                 WHERE album_id = $1",
            )
            .bind(id.to_string())
            .bind(to.to_string())
            .execute(&mut *tx)
            .await.or_internal()?;
            cover_in_taken_down_album(&mut *tx, "i.album_id", to).await?;
            // A taken-down folder's aliases stay as they are (and count against
            // the quota) until it is restored: moderation is not undone by
            // deleting.
            sqlx::query(
                "UPDATE aliases SET state = 'released', expires_at = $2 \
                 WHERE album_id = $1 AND state <> 'released' \
                 AND NOT EXISTS (SELECT 1 FROM albums d WHERE d.id = $1 AND d.taken_down_at IS NOT NULL)",
            )
            .bind(id.to_string())
            .bind(hold_until)
            .execute(&mut *tx)
            .await.or_internal()?;
            sqlx::query(
                "UPDATE share_links SET retired_at = $2 WHERE album_id = $1 AND retired_at IS NULL",
            )
            .bind(id.to_string())
            .bind(now)
            .execute(&mut *tx)
            .await.or_internal()?;
            sqlx::query("DELETE FROM album_crops WHERE album_id = $1")
                .bind(id.to_string())
                .execute(&mut *tx)
                .await.or_internal()?;
            tx.commit().await.or_internal()?;
            Ok(Some(moved))
        })
        .await
    }

    async fn album_images(&self, album: Uuid) -> Result<Vec<Image>> {
        let q = format!(
            "SELECT {IMAGE_COLS} FROM images WHERE album_id = $1 ORDER BY sort_at DESC, id DESC"
        );
        let rows = sqlx::query(&q)
            .bind(album.to_string())
            .fetch_all(&self.pool)
            .await
            .or_internal()?;
        map_rows(&rows, image_row)
    }

    async fn set_positions(&self, album: Uuid, ids: &[Uuid]) -> Result<()> {
        // The photos are locked in id order first, as a folder takedown
        // locks them: in the order the owner sent, two reorders (or a
        // reorder and a takedown) locked them in opposite orders.
        retry_deadlocks(move || async move {
            let mut tx = self.pool.begin().await.or_internal()?;
            lock_photos_first(&mut tx, self.engine, "album_id = $1", album).await?;
            for (i, id) in ids.iter().enumerate() {
                sqlx::query("UPDATE images SET position = $3 WHERE id = $1 AND album_id = $2")
                    .bind(id.to_string())
                    .bind(album.to_string())
                    .bind(i as i64)
                    .execute(&mut *tx)
                    .await
                    .or_internal()?;
            }
            tx.commit().await.or_internal()?;
            Ok(())
        })
        .await
    }

    async fn album_crops(&self, album: Uuid) -> Result<Vec<CropSpec>> {
        let rows = sqlx::query(
            "SELECT code, spec FROM album_crops WHERE album_id = $1 ORDER BY created_at, code",
        )
        .bind(album.to_string())
        .fetch_all(&self.pool)
        .await
        .or_internal()?;
        rows.iter().map(|r| json(r, "spec")).collect()
    }

    async fn set_album_crop(&self, album: Uuid, spec: &CropSpec, now: i64) -> Result<bool> {
        let limit = crate::limits::MAX_ALBUM_RULES as i64;
        let mut tx = self.pool.begin().await.or_internal()?;
        // Rule changes of one folder queue on its row, so each counts the
        // others' rules.
        lock_parent(&mut tx, self.engine, "albums", album).await?;
        let written = sqlx::query(
            "INSERT INTO album_crops (album_id, code, spec, created_at) \
             SELECT $1, $2, $3, $4 \
             WHERE (SELECT COUNT(*) FROM album_crops WHERE album_id = $1 AND code <> $2) < $5 \
             ON CONFLICT (album_id, code) DO UPDATE SET spec = excluded.spec",
        )
        .bind(album.to_string())
        .bind(&spec.code)
        .bind(spec.to_json())
        .bind(now)
        .bind(limit)
        .execute(&mut *tx)
        .await
        .or_internal()?;
        tx.commit().await.or_internal()?;
        Ok(written.rows_affected() > 0)
    }

    async fn delete_album_crop(&self, album: Uuid, code: &str) -> Result<bool> {
        let done = sqlx::query("DELETE FROM album_crops WHERE album_id = $1 AND code = $2")
            .bind(album.to_string())
            .bind(code)
            .execute(&self.pool)
            .await
            .or_internal()?;
        Ok(done.rows_affected() > 0)
    }

    async fn set_policy(&self, album: Uuid, policy: &Policy) -> Result<()> {
        sqlx::query("UPDATE albums SET policy = $2 WHERE id = $1")
            .bind(album.to_string())
            .bind(stored_policy(policy))
            .execute(&self.pool)
            .await
            .or_internal()?;
        Ok(())
    }

    async fn set_cover(&self, album: Uuid, image: Option<Uuid>) -> Result<()> {
        sqlx::query("UPDATE albums SET cover_image_id = $2 WHERE id = $1")
            .bind(album.to_string())
            .bind(image.map(|i| i.to_string()))
            .execute(&self.pool)
            .await
            .or_internal()?;
        Ok(())
    }
}

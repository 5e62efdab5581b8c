//! `ImageRepo` for `SqlRepo`.

use super::image_rows::{image_row, IMAGE_COLS};
use super::image_views;
use super::renders::insert_render;
use super::{holding, retry_deadlocks, uuid, Engine, SqlRepo, Val};
use crate::db::images::*;
use crate::error::OrInternal;
use crate::Result;
use async_trait::async_trait;
use lightbox_domain::image::{captioned, Image, ImageStatus};
use lightbox_domain::render::Render;
use sqlx::Row;
use uuid::Uuid;

const IMAGE_INSERT_COLS: &str =
    "id, owner_id, album_id, title, description, status, format, width, height, \
     size_bytes, original_key, exif, exif_visibility, visibility, taken_at, sort_at, created_at, \
     has_gps, has_date, has_camera, show_gps, show_date, show_camera, captioned";

#[async_trait]
impl ImageRepo for SqlRepo {
    async fn default_album(&self, owner: Uuid, now: i64) -> Result<Uuid> {
        let find = "SELECT id FROM albums WHERE owner_id = $1 AND is_default = 1";
        // Read first: only an owner's first call writes.
        let found = sqlx::query(find)
            .bind(owner.to_string())
            .fetch_optional(&self.pool)
            .await
            .or_internal()?;
        if let Some(row) = found {
            return uuid(&row, "id");
        }
        // The partial unique index decides between racing first uploads.
        sqlx::query(
            "INSERT INTO albums (id, owner_id, name, is_default, created_at) VALUES ($1, $2, 'Default', 1, $3) \
             ON CONFLICT (owner_id) WHERE is_default = 1 DO NOTHING",
        )
        .bind(crate::ids::new_id().to_string())
        .bind(owner.to_string())
        .bind(now)
        .execute(&self.pool)
        .await.or_internal()?;
        let row = sqlx::query(find)
            .bind(owner.to_string())
            .fetch_one(&self.pool)
            .await
            .or_internal()?;
        uuid(&row, "id")
    }

    async fn insert_image(&self, i: &Image, renders: &[Render]) -> Result<()> {
        retry_deadlocks(move || async move {
            let mut tx = self.pool.begin().await.or_internal()?;
            if !hold_live_album(&mut tx, self.engine, i.owner_id, i.album_id).await? {
                return Err(crate::Error::NotFound);
            }
            sqlx::query(&format!(
                "INSERT INTO images ({IMAGE_INSERT_COLS}) VALUES \
                 ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, \
                 $18, $19, $20, $21, $22, $23, $24)"
            ))
            .bind(i.id.to_string())
            .bind(i.owner_id.to_string())
            .bind(i.album_id.to_string())
            .bind(&i.title)
            .bind(&i.description)
            .bind(i.status.as_str())
            .bind(i.format.as_str())
            .bind(i64::from(i.width))
            .bind(i64::from(i.height))
            .bind(i.size_bytes as i64)
            .bind(&i.original_key)
            .bind(to_json(&i.exif))
            .bind(to_json(&i.exif_visibility))
            .bind(i.visibility.map(|v| v.as_str()))
            .bind(i.taken_at)
            .bind(i.sort_at)
            .bind(i.created_at)
            .bind(i64::from(i.exif.gps.is_some()))
            .bind(i64::from(i.exif.taken_at.is_some()))
            .bind(i64::from(i.exif.has_camera()))
            .bind(i64::from(i.exif_visibility.gps))
            .bind(i64::from(i.exif_visibility.datetime))
            .bind(i64::from(i.exif_visibility.camera))
            .bind(i64::from(i.is_captioned()))
            .execute(&mut *tx)
            .await
            .or_internal()?;
            for r in renders {
                insert_render(&mut *tx, r).await?;
            }
            cover_in_taken_down_album(&mut *tx, "i.id", i.id).await?;
            super::outbox::add(&mut tx, self.engine, i.id, i.created_at).await?;
            tx.commit().await.or_internal()?;
            Ok(())
        })
        .await
    }

    async fn image(&self, owner: Option<Uuid>, id: Uuid) -> Result<Option<Image>> {
        let q =
            format!("SELECT {IMAGE_COLS} FROM images WHERE id = $1 AND ($2 = '' OR owner_id = $2)");
        let row = sqlx::query(&q)
            .bind(id.to_string())
            .bind(owner.map(|o| o.to_string()).unwrap_or_default())
            .fetch_optional(&self.pool)
            .await
            .or_internal()?;
        row.as_ref().map(image_row).transpose()
    }

    async fn image_view(&self, owner: Uuid, id: Uuid) -> Result<Option<ImageView>> {
        let filter = "WHERE images.id = $1 AND owner_id = $2";
        let vals = vec![Val::Text(id.to_string()), Val::Text(owner.to_string())];
        Ok(image_views::read(self, filter, vals).await?.pop())
    }

    async fn list_images(
        &self,
        owner: Uuid,
        album: Option<Uuid>,
        after: Option<(i64, Uuid)>,
        limit: i64,
    ) -> Result<Vec<ImageView>> {
        let (sort_at, id) = after
            .map(|(s, i)| (s, i.to_string()))
            .unwrap_or((i64::MAX, "~".to_owned()));
        // One query per shape, each a keyset walk of an index in its order
        // (owner or folder, then sort_at, id): a row comparison, which
        // PostgreSQL turns into an index bound rather than a filter.
        let (scope, key) = match album {
            Some(a) => ("album_id = $1", a.to_string()),
            None => ("owner_id = $1", owner.to_string()),
        };
        let filter = format!(
            "WHERE {scope} AND owner_id = $2 \
             AND (sort_at, id) < ($3, $4) ORDER BY sort_at DESC, id DESC LIMIT $5"
        );
        let vals = vec![
            Val::Text(key),
            Val::Text(owner.to_string()),
            Val::Int(sort_at),
            Val::Text(id),
            Val::Int(limit),
        ];
        image_views::read(self, &filter, vals).await
    }

    async fn set_status(&self, image_id: Uuid, status: ImageStatus) -> Result<()> {
        sqlx::query("UPDATE images SET status = $2 WHERE id = $1")
            .bind(image_id.to_string())
            .bind(status.as_str())
            .execute(&self.pool)
            .await
            .or_internal()?;
        Ok(())
    }

    async fn images_with_status(&self, status: ImageStatus) -> Result<Vec<Uuid>> {
        let rows = sqlx::query("SELECT id FROM images WHERE status = $1 ORDER BY created_at")
            .bind(status.as_str())
            .fetch_all(&self.pool)
            .await
            .or_internal()?;
        rows.iter().map(|r| uuid(r, "id")).collect()
    }

    async fn images_owed_work(&self) -> Result<Vec<Uuid>> {
        // `renders_owed`'s expression, word for word, as a range (every id
        // is past ''), and `render_job_items_queued`'s condition, so both
        // engines walk those indexes alone. The photo's status as a
        // subquery per owed row: PostgreSQL joined every ready photo else.
        let rows = sqlx::query(
            "SELECT r.image_id AS id FROM renders r \
             WHERE (CASE WHEN r.produced_version IS NULL OR r.produced_version <> r.version \
               THEN r.image_id END) > '' \
             AND (SELECT i.status FROM images i WHERE i.id = r.image_id) = $1 \
             UNION ALL SELECT image_id AS id FROM render_job_items WHERE state = 'queued'",
        )
        .bind(ImageStatus::Ready.as_str())
        .fetch_all(&self.pool)
        .await
        .or_internal()?;
        rows.iter().map(|r| uuid(r, "id")).collect()
    }

    async fn album_owned(&self, owner: Uuid, album: Uuid) -> Result<bool> {
        let row = sqlx::query(
            "SELECT id FROM albums WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL",
        )
        .bind(album.to_string())
        .bind(owner.to_string())
        .fetch_optional(&self.pool)
        .await
        .or_internal()?;
        Ok(row.is_some())
    }

    async fn update_image(&self, owner: Uuid, id: Uuid, c: &ImageChange) -> Result<bool> {
        retry_deadlocks(move || async move {
            let mut tx = self.pool.begin().await.or_internal()?;
            if let Some(to) = c.album_id {
                if !hold_live_album(&mut tx, self.engine, owner, to).await? {
                    return Ok(false);
                }
            }
            let done = sqlx::query(
                "UPDATE images SET title = COALESCE($3, title), description = COALESCE($4, description), \
                 membership = membership + CASE WHEN $5 IS NULL OR $5 = album_id THEN 0 ELSE 1 END, \
                 position = CASE WHEN $5 IS NULL OR $5 = album_id THEN position ELSE NULL END, \
                 album_id = COALESCE($5, album_id), visibility = COALESCE($6, visibility), \
                 exif_visibility = COALESCE($7, exif_visibility), show_gps = COALESCE($8, show_gps), \
                 show_date = COALESCE($9, show_date), show_camera = COALESCE($10, show_camera) \
                 WHERE id = $1 AND owner_id = $2",
            )
            .bind(id.to_string())
            .bind(owner.to_string())
            .bind(c.title.clone())
            .bind(c.description.clone())
            .bind(c.album_id.map(|a| a.to_string()))
            .bind(c.visibility.map(|v| v.as_str()))
            .bind(c.exif_visibility.as_ref().map(to_json))
            .bind(c.exif_visibility.map(|v| i64::from(v.gps)))
            .bind(c.exif_visibility.map(|v| i64::from(v.datetime)))
            .bind(c.exif_visibility.map(|v| i64::from(v.camera)))
            .execute(&mut *tx)
            .await.or_internal()?;
            if c.title.is_some() || c.description.is_some() {
                set_captioned(&mut tx, id).await?;
            }
            if c.album_id.is_some() {
                cover_in_taken_down_album(&mut *tx, "i.id", id).await?;
            }
            tx.commit().await.or_internal()?;
            Ok(done.rows_affected() > 0)
        })
        .await
    }

    async fn delete_image(&self, owner: Uuid, id: Uuid) -> Result<Option<Vec<String>>> {
        // The files to remove are read as their rows go, in the same
        // transaction: keys read before it missed a render produced in
        // between, whose file then stayed with no row. The photo's row is
        // held first, so of two deletions one finds it gone.
        let held = holding(
            self.engine,
            "UPDATE",
            "images",
            "original_key",
            "id = $1 AND owner_id = $2",
        );
        let held = held.as_str();
        retry_deadlocks(move || async move {
            let mut tx = self.pool.begin().await.or_internal()?;
            let photo = sqlx::query(held)
                .bind(id.to_string())
                .bind(owner.to_string())
                .fetch_optional(&mut *tx)
                .await
                .or_internal()?;
            let Some(photo) = photo else {
                return Ok(None);
            };
            sqlx::query("DELETE FROM custom_crops WHERE image_id = $1")
                .bind(id.to_string())
                .execute(&mut *tx)
                .await
                .or_internal()?;
            let renders = sqlx::query("DELETE FROM renders WHERE image_id = $1 RETURNING blob_key")
                .bind(id.to_string())
                .fetch_all(&mut *tx)
                .await
                .or_internal()?;
            let mut keys = Vec::with_capacity(renders.len() + 1);
            for r in &renders {
                keys.extend(r.try_get::<Option<String>, _>("blob_key").or_internal()?);
            }
            keys.push(photo.try_get("original_key").or_internal()?);
            sqlx::query("DELETE FROM images WHERE id = $1")
                .bind(id.to_string())
                .execute(&mut *tx)
                .await
                .or_internal()?;
            tx.commit().await.or_internal()?;
            Ok(Some(keys))
        })
        .await
    }
}

/// Holds the owner's folder `id` for the rest of the transaction if it is
/// still there, as the folder's own deletion takes it: a photo moved or
/// uploaded into a folder deleted since the caller checked it would
/// otherwise land in the deleted folder (its deletion had already moved
/// the folder's photos out). Waits for a deletion in progress, then sees
/// it. `false` when the folder is gone or not the owner's.
async fn hold_live_album(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    engine: Engine,
    owner: Uuid,
    id: Uuid,
) -> Result<bool> {
    let live = "id = $1 AND owner_id = $2 AND deleted_at IS NULL";
    let held = sqlx::query(&holding(engine, "NO KEY UPDATE", "albums", "id", live))
        .bind(id.to_string())
        .bind(owner.to_string())
        .fetch_optional(&mut **tx)
        .await
        .or_internal()?;
    Ok(held.is_some())
}

/// A photo that enters a taken-down folder (uploaded or moved there) is
/// one of that folder's photos: it carries the takedown from then on,
/// wherever it goes next. `scope` names the photos (`i.id` for one photo,
/// `i.album_id` for a folder's).
pub(super) async fn cover_in_taken_down_album<'e>(
    db: impl sqlx::Executor<'e, Database = sqlx::Any>,
    scope: &str,
    id: Uuid,
) -> Result<()> {
    sqlx::query(&format!(
        "INSERT INTO takedown_covers (image_id, album_id, at, reason) \
         SELECT i.id, a.id, a.taken_down_at, a.takedown_reason FROM images i \
         JOIN albums a ON a.id = i.album_id AND a.taken_down_at IS NOT NULL \
         WHERE {scope} = $1 ON CONFLICT (image_id, album_id) DO NOTHING"
    ))
    .bind(id.to_string())
    .execute(db)
    .await
    .or_internal()?;
    Ok(())
}

/// `captioned` from the stored title and description, by the domain's rule.
async fn set_captioned(tx: &mut sqlx::Transaction<'_, sqlx::Any>, id: Uuid) -> Result<()> {
    let row = sqlx::query("SELECT title, description FROM images WHERE id = $1")
        .bind(id.to_string())
        .fetch_optional(&mut **tx)
        .await
        .or_internal()?;
    let Some(row) = row else { return Ok(()) };
    let (title, description): (String, String) = (
        row.try_get("title").or_internal()?,
        row.try_get("description").or_internal()?,
    );
    sqlx::query("UPDATE images SET captioned = $2 WHERE id = $1")
        .bind(id.to_string())
        .bind(i64::from(captioned(&title, &description)))
        .execute(&mut **tx)
        .await
        .or_internal()?;
    Ok(())
}

fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

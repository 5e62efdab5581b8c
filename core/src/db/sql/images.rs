//! `ImageRepo` for `SqlRepo`.

use super::{uuid, Engine, SqlRepo};
use crate::db::images::*;
use crate::Result;
use async_trait::async_trait;
use sqlx::any::AnyRow;
use sqlx::{Executor, Row};
use uuid::Uuid;

const IMAGE_INSERT_COLS: &str =
    "id, owner_id, album_id, title, description, status, format, width, height, \
     size_bytes, original_key, exif, exif_visibility, visibility, taken_at, sort_at, created_at";

pub(super) const IMAGE_COLS: &str =
    "id, owner_id, album_id, title, description, status, format, width, height, \
     size_bytes, original_key, exif, exif_visibility, visibility, taken_at, sort_at, created_at, \
     position, taken_down_at, takedown_reason";

pub(super) fn image_row(r: &AnyRow) -> Result<ImageRow> {
    Ok(ImageRow {
        id: uuid(r, "id")?,
        owner_id: uuid(r, "owner_id")?,
        album_id: uuid(r, "album_id")?,
        title: r.try_get("title")?,
        description: r.try_get("description")?,
        status: r.try_get("status")?,
        format: r.try_get("format")?,
        width: r.try_get("width")?,
        height: r.try_get("height")?,
        size_bytes: r.try_get("size_bytes")?,
        original_key: r.try_get("original_key")?,
        exif: r.try_get("exif")?,
        exif_visibility: r.try_get("exif_visibility")?,
        visibility: r.try_get("visibility")?,
        taken_at: r.try_get("taken_at")?,
        sort_at: r.try_get("sort_at")?,
        created_at: r.try_get("created_at")?,
        position: r.try_get("position")?,
        taken_down_at: r.try_get("taken_down_at")?,
        takedown_reason: r.try_get("takedown_reason")?,
    })
}

const RENDER_COLS: &str =
    "image_id, code, spec, version, produced_version, width, height, size_bytes, blob_key";

pub(super) fn render_row(r: &AnyRow) -> Result<RenderRow> {
    Ok(RenderRow {
        image_id: uuid(r, "image_id")?,
        code: r.try_get("code")?,
        spec: r.try_get("spec")?,
        version: r.try_get("version")?,
        produced_version: r.try_get("produced_version")?,
        width: r.try_get("width")?,
        height: r.try_get("height")?,
        size_bytes: r.try_get("size_bytes")?,
        blob_key: r.try_get("blob_key")?,
    })
}

/// `$1, $2, …, $n`.
pub(super) fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

async fn insert_render<'e>(
    db: impl Executor<'e, Database = sqlx::Any>,
    r: &RenderRow,
) -> Result<()> {
    sqlx::query("INSERT INTO renders (image_id, code, spec, version) VALUES ($1, $2, $3, $4)")
        .bind(r.image_id.to_string())
        .bind(&r.code)
        .bind(&r.spec)
        .bind(r.version)
        .execute(db)
        .await?;
    Ok(())
}

#[async_trait]
impl ImageRepo for SqlRepo {
    async fn default_album(&self, owner: Uuid, now: i64) -> Result<Uuid> {
        // The partial unique index decides between racing first uploads.
        sqlx::query(
            "INSERT INTO albums (id, owner_id, name, is_default, created_at) VALUES ($1, $2, 'Default', 1, $3) \
             ON CONFLICT (owner_id) WHERE is_default = 1 DO NOTHING",
        )
        .bind(crate::ids::new_id().to_string())
        .bind(owner.to_string())
        .bind(now)
        .execute(&self.pool)
        .await?;
        let row = sqlx::query("SELECT id FROM albums WHERE owner_id = $1 AND is_default = 1")
            .bind(owner.to_string())
            .fetch_one(&self.pool)
            .await?;
        uuid(&row, "id")
    }

    async fn insert_image(&self, i: &ImageRow, renders: &[RenderRow]) -> Result<()> {
        let mut tx = self.pool.begin().await?;
        sqlx::query(&format!(
            "INSERT INTO images ({IMAGE_INSERT_COLS}) VALUES \
             ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)"
        ))
        .bind(i.id.to_string())
        .bind(i.owner_id.to_string())
        .bind(i.album_id.to_string())
        .bind(&i.title)
        .bind(&i.description)
        .bind(&i.status)
        .bind(&i.format)
        .bind(i.width)
        .bind(i.height)
        .bind(i.size_bytes)
        .bind(&i.original_key)
        .bind(&i.exif)
        .bind(&i.exif_visibility)
        .bind(i.visibility.clone())
        .bind(i.taken_at)
        .bind(i.sort_at)
        .bind(i.created_at)
        .execute(&mut *tx)
        .await?;
        for r in renders {
            insert_render(&mut *tx, r).await?;
        }
        super::outbox::add(&mut tx, i.id, i.created_at).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn image(&self, owner: Option<Uuid>, id: Uuid) -> Result<Option<ImageRow>> {
        let q =
            format!("SELECT {IMAGE_COLS} FROM images WHERE id = $1 AND ($2 = '' OR owner_id = $2)");
        let row = sqlx::query(&q)
            .bind(id.to_string())
            .bind(owner.map(|o| o.to_string()).unwrap_or_default())
            .fetch_optional(&self.pool)
            .await?;
        row.as_ref().map(image_row).transpose()
    }

    async fn list_images(
        &self,
        owner: Uuid,
        album: Option<Uuid>,
        after: Option<(i64, Uuid)>,
        limit: i64,
    ) -> Result<Vec<ImageRow>> {
        let (sort_at, id) = after
            .map(|(s, i)| (s, i.to_string()))
            .unwrap_or((i64::MAX, String::new()));
        let q = format!(
            "SELECT {IMAGE_COLS} FROM images WHERE owner_id = $1 AND ($2 = '' OR album_id = $2) \
             AND (sort_at < $3 OR (sort_at = $3 AND ($4 = '' OR id < $4))) \
             ORDER BY sort_at DESC, id DESC LIMIT $5"
        );
        let rows = sqlx::query(&q)
            .bind(owner.to_string())
            .bind(album.map(|a| a.to_string()).unwrap_or_default())
            .bind(sort_at)
            .bind(id)
            .bind(limit)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(image_row).collect()
    }

    async fn renders(&self, image_id: Uuid) -> Result<Vec<RenderRow>> {
        let q = format!("SELECT {RENDER_COLS} FROM renders WHERE image_id = $1 ORDER BY code");
        let rows = sqlx::query(&q)
            .bind(image_id.to_string())
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(render_row).collect()
    }

    async fn renders_of(&self, image_ids: &[Uuid]) -> Result<Vec<RenderRow>> {
        if image_ids.is_empty() {
            return Ok(Vec::new());
        }
        let q = format!(
            "SELECT {RENDER_COLS} FROM renders WHERE image_id IN ({}) ORDER BY image_id, code",
            placeholders(image_ids.len())
        );
        let mut query = sqlx::query(&q);
        for id in image_ids {
            query = query.bind(id.to_string());
        }
        let rows = query.fetch_all(&self.pool).await?;
        rows.iter().map(render_row).collect()
    }

    async fn custom_crops_of(&self, image_ids: &[Uuid]) -> Result<Vec<(Uuid, String)>> {
        if image_ids.is_empty() {
            return Ok(Vec::new());
        }
        let q = format!(
            "SELECT image_id, spec FROM custom_crops WHERE image_id IN ({}) \
             ORDER BY created_at, code",
            placeholders(image_ids.len())
        );
        let mut query = sqlx::query(&q);
        for id in image_ids {
            query = query.bind(id.to_string());
        }
        let rows = query.fetch_all(&self.pool).await?;
        rows.iter()
            .map(|r| Ok((uuid(r, "image_id")?, r.try_get("spec")?)))
            .collect()
    }

    async fn set_render_spec(
        &self,
        image_id: Uuid,
        code: &str,
        spec: &str,
        source: SpecSource,
    ) -> Result<()> {
        // On PostgreSQL the share lock makes a concurrent delete of the crop
        // either wait for this insert or be seen by it; SQLite runs one
        // writing statement at a time.
        let lock = match self.engine {
            Engine::Postgres => " FOR KEY SHARE",
            Engine::Sqlite => "",
        };
        let guard = match source {
            SpecSource::Preset => "TRUE".to_owned(),
            SpecSource::FolderRule => format!(
                "EXISTS (SELECT 1 FROM album_crops c JOIN images i ON i.album_id = c.album_id \
                 WHERE i.id = $1 AND c.code = $2{lock})"
            ),
            SpecSource::Custom => format!(
                "EXISTS (SELECT 1 FROM custom_crops WHERE image_id = $1 AND code = $2{lock})"
            ),
        };
        let sql = format!(
            "INSERT INTO renders (image_id, code, spec, version) SELECT $1, $2, $3, 1 WHERE {guard} \
             ON CONFLICT (image_id, code) DO UPDATE \
             SET spec = excluded.spec, version = renders.version + 1 WHERE renders.spec <> excluded.spec"
        );
        sqlx::query(&sql)
            .bind(image_id.to_string())
            .bind(code)
            .bind(spec)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn remove_renders_except(&self, image_id: Uuid, keep: &[String]) -> Result<Vec<String>> {
        let gone: Vec<RenderRow> = self
            .renders(image_id)
            .await?
            .into_iter()
            .filter(|r| !keep.contains(&r.code))
            .collect();
        for r in &gone {
            sqlx::query("DELETE FROM renders WHERE image_id = $1 AND code = $2")
                .bind(image_id.to_string())
                .bind(&r.code)
                .execute(&self.pool)
                .await?;
        }
        Ok(gone.into_iter().filter_map(|r| r.blob_key).collect())
    }

    async fn render_produced(&self, r: &RenderRow) -> Result<(bool, Option<String>)> {
        let before = sqlx::query("SELECT blob_key FROM renders WHERE image_id = $1 AND code = $2")
            .bind(r.image_id.to_string())
            .bind(&r.code)
            .fetch_optional(&self.pool)
            .await?;
        let old: Option<String> = match before {
            Some(row) => row.try_get("blob_key")?,
            None => return Ok((false, None)),
        };
        let done = sqlx::query(
            "UPDATE renders SET produced_version = $3, width = $4, height = $5, size_bytes = $6, blob_key = $7 \
             WHERE image_id = $1 AND code = $2 AND version = $3",
        )
        .bind(r.image_id.to_string())
        .bind(&r.code)
        .bind(r.version)
        .bind(r.width)
        .bind(r.height)
        .bind(r.size_bytes)
        .bind(r.blob_key.clone())
        .execute(&self.pool)
        .await?;
        Ok((
            done.rows_affected() > 0,
            old.filter(|o| Some(o) != r.blob_key.as_ref()),
        ))
    }

    async fn set_status(&self, image_id: Uuid, status: &str) -> Result<()> {
        sqlx::query("UPDATE images SET status = $2 WHERE id = $1")
            .bind(image_id.to_string())
            .bind(status)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn images_with_status(&self, status: &str) -> Result<Vec<Uuid>> {
        let rows = sqlx::query("SELECT id FROM images WHERE status = $1 ORDER BY created_at")
            .bind(status)
            .fetch_all(&self.pool)
            .await?;
        rows.iter().map(|r| uuid(r, "id")).collect()
    }

    async fn album_owned(&self, owner: Uuid, album: Uuid) -> Result<bool> {
        let row = sqlx::query(
            "SELECT id FROM albums WHERE id = $1 AND owner_id = $2 AND deleted_at IS NULL",
        )
        .bind(album.to_string())
        .bind(owner.to_string())
        .fetch_optional(&self.pool)
        .await?;
        Ok(row.is_some())
    }

    async fn update_image(&self, owner: Uuid, id: Uuid, c: &ImageChange) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE images SET title = COALESCE($3, title), description = COALESCE($4, description), \
             album_id = COALESCE($5, album_id), visibility = COALESCE($6, visibility), \
             exif_visibility = COALESCE($7, exif_visibility) WHERE id = $1 AND owner_id = $2",
        )
        .bind(id.to_string())
        .bind(owner.to_string())
        .bind(c.title.clone())
        .bind(c.description.clone())
        .bind(c.album_id.map(|a| a.to_string()))
        .bind(c.visibility.clone())
        .bind(c.exif_visibility.clone())
        .execute(&self.pool)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    async fn delete_image(&self, owner: Uuid, id: Uuid) -> Result<Option<Vec<String>>> {
        let Some(image) = self.image(Some(owner), id).await? else {
            return Ok(None);
        };
        let mut keys: Vec<String> = self
            .renders(id)
            .await?
            .into_iter()
            .filter_map(|r| r.blob_key)
            .collect();
        keys.push(image.original_key);
        let mut tx = self.pool.begin().await?;
        for table in ["custom_crops", "renders"] {
            sqlx::query(&format!("DELETE FROM {table} WHERE image_id = $1"))
                .bind(id.to_string())
                .execute(&mut *tx)
                .await?;
        }
        sqlx::query("DELETE FROM images WHERE id = $1")
            .bind(id.to_string())
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(Some(keys))
    }

    async fn custom_crops(&self, image_id: Uuid) -> Result<Vec<String>> {
        let rows = sqlx::query(
            "SELECT spec FROM custom_crops WHERE image_id = $1 ORDER BY created_at, code",
        )
        .bind(image_id.to_string())
        .fetch_all(&self.pool)
        .await?;
        rows.iter().map(|r| Ok(r.try_get("spec")?)).collect()
    }

    async fn add_custom_crop(
        &self,
        image_id: Uuid,
        code: &str,
        spec: &str,
        limit: i64,
        now: i64,
    ) -> Result<CropAdd> {
        let mut tx = self.pool.begin().await?;
        // Counting and inserting in one statement keeps racing adds from
        // passing the limit together.
        let added = sqlx::query(
            "INSERT INTO custom_crops (image_id, code, spec, created_at) \
             SELECT $1, $2, $3, $4 WHERE (SELECT COUNT(*) FROM custom_crops WHERE image_id = $1) < $5 \
             ON CONFLICT (image_id, code) DO NOTHING",
        )
        .bind(image_id.to_string())
        .bind(code)
        .bind(spec)
        .bind(now)
        .bind(limit)
        .execute(&mut *tx)
        .await?;
        if added.rows_affected() == 0 {
            let exists =
                sqlx::query("SELECT code FROM custom_crops WHERE image_id = $1 AND code = $2")
                    .bind(image_id.to_string())
                    .bind(code)
                    .fetch_optional(&mut *tx)
                    .await?;
            return Ok(if exists.is_some() {
                CropAdd::Exists
            } else {
                CropAdd::LimitReached
            });
        }
        sqlx::query("INSERT INTO renders (image_id, code, spec, version) VALUES ($1, $2, $3, 1)")
            .bind(image_id.to_string())
            .bind(code)
            .bind(spec)
            .execute(&mut *tx)
            .await?;
        tx.commit().await?;
        Ok(CropAdd::Added)
    }

    async fn delete_custom_crop(
        &self,
        image_id: Uuid,
        code: &str,
    ) -> Result<Option<Option<String>>> {
        let mut tx = self.pool.begin().await?;
        let gone = sqlx::query("DELETE FROM custom_crops WHERE image_id = $1 AND code = $2")
            .bind(image_id.to_string())
            .bind(code)
            .execute(&mut *tx)
            .await?;
        if gone.rows_affected() == 0 {
            return Ok(None);
        }
        let key =
            sqlx::query("DELETE FROM renders WHERE image_id = $1 AND code = $2 RETURNING blob_key")
                .bind(image_id.to_string())
                .bind(code)
                .fetch_optional(&mut *tx)
                .await?;
        tx.commit().await?;
        Ok(Some(match key {
            Some(row) => row.try_get("blob_key")?,
            None => None,
        }))
    }

    async fn served_render(&self, image_id: Uuid, code: &str) -> Result<Option<ServedRender>> {
        let row = sqlx::query(
            "SELECT r.blob_key, r.produced_version, r.size_bytes FROM renders r \
             JOIN images i ON i.id = r.image_id \
             JOIN albums a ON a.id = i.album_id AND a.taken_down_at IS NULL \
             WHERE r.image_id = $1 AND r.code = $2 AND r.produced_version IS NOT NULL \
               AND r.blob_key IS NOT NULL AND i.taken_down_at IS NULL",
        )
        .bind(image_id.to_string())
        .bind(code)
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            Ok(ServedRender {
                blob_key: r.try_get("blob_key")?,
                version: r.try_get("produced_version")?,
                size_bytes: r.try_get("size_bytes")?,
            })
        })
        .transpose()
    }
}

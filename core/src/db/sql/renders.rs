//! `RenderRepo` for `SqlRepo`.

use super::render_rows::{in_code_order, renders_parsing_once, RENDER_COLS};
use super::{json, lock_parent, unsigned, uuid, Engine, SqlRepo};
use crate::db::renders::*;
use crate::error::OrInternal;
use crate::{Error, Result};
use async_trait::async_trait;
use lightbox_domain::crop::{CropSpec, SpecSource};
use lightbox_domain::render::{Produced, Render, ServedRender};
use sqlx::{Executor, Row};
use uuid::Uuid;

pub(super) async fn insert_render<'e>(
    db: impl Executor<'e, Database = sqlx::Any>,
    r: &Render,
) -> Result<()> {
    sqlx::query("INSERT INTO renders (image_id, code, spec, version) VALUES ($1, $2, $3, $4)")
        .bind(r.image_id.to_string())
        .bind(&r.code)
        .bind(r.spec.to_json())
        .bind(r.version)
        .execute(db)
        .await
        .or_internal()?;
    Ok(())
}

/// The version a new render row of `($1, $2)` starts at: past any version
/// a deleted render of that code had, so versions (and with them storage
/// keys and URLs) never repeat.
const NEXT_VERSION: &str = "1 + COALESCE((SELECT v.version FROM render_versions_retired v \
     WHERE v.image_id = $1 AND v.code = $2), 0)";

/// Remembers the version of a render row about to be deleted.
async fn retire_version<'e>(
    db: impl Executor<'e, Database = sqlx::Any>,
    image_id: Uuid,
    code: &str,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO render_versions_retired (image_id, code, version) \
         SELECT image_id, code, version FROM renders WHERE image_id = $1 AND code = $2 \
         ON CONFLICT (image_id, code) DO UPDATE SET version = excluded.version",
    )
    .bind(image_id.to_string())
    .bind(code)
    .execute(db)
    .await
    .or_internal()?;
    Ok(())
}

#[async_trait]
impl RenderRepo for SqlRepo {
    async fn renders(&self, image_id: Uuid) -> Result<Vec<Render>> {
        let q = format!("SELECT {RENDER_COLS} FROM renders WHERE image_id = $1 ORDER BY code");
        let rows = sqlx::query(&q)
            .bind(image_id.to_string())
            .fetch_all(&self.pool)
            .await
            .or_internal()?;
        Ok(in_code_order(renders_parsing_once(&rows)?))
    }

    async fn renders_of(&self, image_ids: &[Uuid]) -> Result<Vec<Render>> {
        // `in_code_order` sorts them: no ORDER BY here.
        let rows = self
            .fetch_among("image_id", image_ids, |among| {
                format!("SELECT {RENDER_COLS} FROM renders WHERE {among}")
            })
            .await?;
        Ok(in_code_order(renders_parsing_once(&rows)?))
    }

    async fn custom_crops_of(&self, image_ids: &[Uuid]) -> Result<Vec<(Uuid, CropSpec)>> {
        if image_ids.is_empty() {
            return Ok(Vec::new());
        }
        // Each photo's crops are in one statement, in their order.
        let rows = self
            .fetch_among("image_id", image_ids, |among| {
                format!("SELECT image_id, spec FROM custom_crops WHERE {among} ORDER BY created_at, code")
            })
            .await?;
        rows.iter()
            .map(|r| Ok((uuid(r, "image_id")?, json(r, "spec")?)))
            .collect()
    }

    async fn set_render_spec(
        &self,
        image_id: Uuid,
        spec: &CropSpec,
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
            SpecSource::AlbumRule => format!(
                "EXISTS (SELECT 1 FROM album_crops c JOIN images i ON i.album_id = c.album_id \
                 WHERE i.id = $1 AND c.code = $2{lock})"
            ),
            SpecSource::Custom => format!(
                "EXISTS (SELECT 1 FROM custom_crops WHERE image_id = $1 AND code = $2{lock})"
            ),
        };
        let sql = format!(
            "INSERT INTO renders (image_id, code, spec, version) SELECT $1, $2, $3, {NEXT_VERSION} WHERE {guard} \
             ON CONFLICT (image_id, code) DO UPDATE \
             SET spec = excluded.spec, version = renders.version + 1 WHERE renders.spec <> excluded.spec"
        );
        let moved = sqlx::query(&sql)
            .bind(image_id.to_string())
            .bind(&spec.code)
            .bind(spec.to_json())
            .execute(&self.pool)
            .await
            .or_internal()?;
        if moved.rows_affected() > 0 {
            // A version, once rendered and served for a year as immutable,
            // must never come back for another spec after a power loss.
            self.durable_now().await?;
        }
        Ok(())
    }

    async fn remove_renders_except(&self, image_id: Uuid, keep: &[String]) -> Result<Vec<String>> {
        let gone: Vec<Render> = self
            .renders(image_id)
            .await?
            .into_iter()
            .filter(|r| !keep.contains(&r.code))
            .collect();
        let mut removed = Vec::new();
        for r in gone {
            let mut tx = self.pool.begin().await.or_internal()?;
            retire_version(&mut *tx, image_id, &r.code).await?;
            // `keep` was read when the job began: a folder rule or custom
            // crop added since (whose own job may already have rendered it)
            // is still wanted, so the rows decide, not the job's old list.
            let deleted = sqlx::query(
                "DELETE FROM renders WHERE image_id = $1 AND code = $2 \
                 AND NOT EXISTS (SELECT 1 FROM custom_crops c \
                   WHERE c.image_id = $1 AND c.code = $2) \
                 AND NOT EXISTS (SELECT 1 FROM album_crops a JOIN images i \
                   ON a.album_id = i.album_id WHERE i.id = $1 AND a.code = $2)",
            )
            .bind(image_id.to_string())
            .bind(&r.code)
            .execute(&mut *tx)
            .await
            .or_internal()?
            .rows_affected();
            if deleted == 0 {
                tx.rollback().await.or_internal()?;
                continue;
            }
            tx.commit().await.or_internal()?;
            removed.extend(r.produced.map(|p| p.blob_key));
        }
        if !removed.is_empty() {
            // The caller deletes these blobs: no row may name them after a
            // power loss.
            self.durable_now().await?;
        }
        Ok(removed)
    }

    async fn render_produced(
        &self,
        image_id: Uuid,
        code: &str,
        p: &Produced,
    ) -> Result<(bool, Option<String>)> {
        let Some(before) = self.named_blob(image_id, code).await? else {
            return Ok((false, self.unnamed(Some(p.blob_key.clone())).await?));
        };
        let done = sqlx::query(
            "UPDATE renders SET produced_version = $3, width = $4, height = $5, size_bytes = $6, blob_key = $7 \
             WHERE image_id = $1 AND code = $2 AND version = $3",
        )
        .bind(image_id.to_string())
        .bind(code)
        .bind(p.version)
        .bind(i64::from(p.width))
        .bind(i64::from(p.height))
        .bind(p.size_bytes as i64)
        .bind(&p.blob_key)
        .execute(&self.pool)
        .await.or_internal()?;
        let current = done.rows_affected() > 0;
        let unnamed = if current {
            before.filter(|old| *old != p.blob_key)
        } else {
            // Another run of this version may have recorded these very
            // bytes' key. None can from now on: the version has moved on.
            let now = self.named_blob(image_id, code).await?.flatten();
            (now.as_ref() != Some(&p.blob_key)).then(|| p.blob_key.clone())
        };
        Ok((current, self.unnamed(unnamed).await?))
    }

    async fn custom_crops(&self, image_id: Uuid) -> Result<Vec<CropSpec>> {
        let rows = sqlx::query(
            "SELECT spec FROM custom_crops WHERE image_id = $1 ORDER BY created_at, code",
        )
        .bind(image_id.to_string())
        .fetch_all(&self.pool)
        .await
        .or_internal()?;
        rows.iter().map(|r| json(r, "spec")).collect()
    }

    async fn add_custom_crop(
        &self,
        image_id: Uuid,
        spec: &CropSpec,
        limit: i64,
        now: i64,
    ) -> Result<CropAdd> {
        let (code, spec) = (&spec.code, spec.to_json());
        let mut tx = self.pool.begin().await.or_internal()?;
        // Racing adds for one photo queue on its row, so each counts the
        // others' crops (PostgreSQL's snapshots alone let them all pass).
        if !lock_parent(&mut tx, self.engine, "images", image_id).await? {
            return Err(Error::NotFound);
        }
        let added = sqlx::query(
            "INSERT INTO custom_crops (image_id, code, spec, created_at) \
             SELECT $1, $2, $3, $4 WHERE (SELECT COUNT(*) FROM custom_crops WHERE image_id = $1) < $5 \
             ON CONFLICT (image_id, code) DO NOTHING",
        )
        .bind(image_id.to_string())
        .bind(code)
        .bind(&spec)
        .bind(now)
        .bind(limit)
        .execute(&mut *tx)
        .await.or_internal()?;
        if added.rows_affected() == 0 {
            let exists =
                sqlx::query("SELECT code FROM custom_crops WHERE image_id = $1 AND code = $2")
                    .bind(image_id.to_string())
                    .bind(code)
                    .fetch_optional(&mut *tx)
                    .await
                    .or_internal()?;
            return Ok(if exists.is_some() {
                CropAdd::Exists
            } else {
                CropAdd::LimitReached
            });
        }
        sqlx::query(&format!(
            "INSERT INTO renders (image_id, code, spec, version) SELECT $1, $2, $3, {NEXT_VERSION}"
        ))
        .bind(image_id.to_string())
        .bind(code)
        .bind(&spec)
        .execute(&mut *tx)
        .await
        .or_internal()?;
        tx.commit().await.or_internal()?;
        Ok(CropAdd::Added)
    }

    async fn delete_custom_crop(
        &self,
        image_id: Uuid,
        code: &str,
    ) -> Result<Option<Option<String>>> {
        let mut tx = self.pool.begin().await.or_internal()?;
        let gone = sqlx::query("DELETE FROM custom_crops WHERE image_id = $1 AND code = $2")
            .bind(image_id.to_string())
            .bind(code)
            .execute(&mut *tx)
            .await
            .or_internal()?;
        if gone.rows_affected() == 0 {
            return Ok(None);
        }
        retire_version(&mut *tx, image_id, code).await?;
        let key =
            sqlx::query("DELETE FROM renders WHERE image_id = $1 AND code = $2 RETURNING blob_key")
                .bind(image_id.to_string())
                .bind(code)
                .fetch_optional(&mut *tx)
                .await
                .or_internal()?;
        tx.commit().await.or_internal()?;
        Ok(Some(match key {
            Some(row) => row.try_get("blob_key").or_internal()?,
            None => None,
        }))
    }

    async fn served_render(&self, image_id: Uuid, code: &str) -> Result<Option<ServedRender>> {
        let row = sqlx::query(
            "SELECT r.blob_key, r.produced_version, r.size_bytes FROM renders r \
             JOIN images i ON i.id = r.image_id \
             JOIN albums a ON a.id = i.album_id AND a.taken_down_at IS NULL \
             WHERE r.image_id = $1 AND r.code = $2 AND r.produced_version IS NOT NULL \
               AND r.blob_key IS NOT NULL AND i.taken_down_at IS NULL \
               AND NOT EXISTS (SELECT 1 FROM takedown_covers c WHERE c.image_id = i.id)",
        )
        .bind(image_id.to_string())
        .bind(code)
        .fetch_optional(&self.pool)
        .await
        .or_internal()?;
        row.map(|r| {
            Ok(ServedRender {
                blob_key: r.try_get("blob_key").or_internal()?,
                version: r.try_get("produced_version").or_internal()?,
                size_bytes: unsigned(&r, "size_bytes")?,
            })
        })
        .transpose()
    }
}

impl SqlRepo {
    /// The blob a render's row names; None when there is no row.
    async fn named_blob(&self, image_id: Uuid, code: &str) -> Result<Option<Option<String>>> {
        let row = sqlx::query("SELECT blob_key FROM renders WHERE image_id = $1 AND code = $2")
            .bind(image_id.to_string())
            .bind(code)
            .fetch_optional(&self.pool)
            .await
            .or_internal()?;
        row.map(|r| r.try_get("blob_key")).transpose().or_internal()
    }

    /// A key no row names any more, handed to the caller to delete: first
    /// every commit so far is made durable, so that no row can name it
    /// again after a power loss.
    async fn unnamed(&self, key: Option<String>) -> Result<Option<String>> {
        if key.is_some() {
            self.durable_now().await?;
        }
        Ok(key)
    }
}

#[cfg(test)]
#[path = "renders_tests.rs"]
mod tests;

use super::*;
use crate::db::resources::ResourceRepo;
use crate::error::OrInternal;

#[async_trait]
impl ResourceRepo for SqlRepo {
    async fn put_resource(&self, kind: &str, name: &str, spec: &str, now: i64) -> Result<bool> {
        let changed = sqlx::query(
            "INSERT INTO op_resources (kind, name, spec, updated_at) VALUES ($1, $2, $3, $4) \
             ON CONFLICT (kind, name) DO UPDATE SET spec = excluded.spec, updated_at = excluded.updated_at \
             WHERE op_resources.spec <> excluded.spec",
        )
        .bind(kind)
        .bind(name)
        .bind(spec)
        .bind(now)
        .execute(&self.pool)
        .await.or_internal()?
        .rows_affected();
        Ok(changed > 0)
    }

    async fn delete_resource(&self, kind: &str, name: &str) -> Result<bool> {
        let n = sqlx::query("DELETE FROM op_resources WHERE kind = $1 AND name = $2")
            .bind(kind)
            .bind(name)
            .execute(&self.pool)
            .await
            .or_internal()?
            .rows_affected();
        Ok(n > 0)
    }

    async fn resources(&self, kind: &str) -> Result<Vec<(String, String)>> {
        let rows = sqlx::query("SELECT name, spec FROM op_resources WHERE kind = $1 ORDER BY name")
            .bind(kind)
            .fetch_all(&self.pool)
            .await
            .or_internal()?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.try_get("name").or_internal()?,
                    r.try_get("spec").or_internal()?,
                ))
            })
            .collect()
    }

    async fn off_spec_with_owner(&self, code: &str, spec: &str) -> Result<Vec<(Uuid, Uuid)>> {
        let rows = sqlx::query(
            "SELECT i.id, i.owner_id FROM images i \
             LEFT JOIN renders r ON r.image_id = i.id AND r.code = $1 \
             WHERE (r.image_id IS NULL OR r.spec <> $2) AND NOT EXISTS \
             (SELECT 1 FROM album_crops c WHERE c.album_id = i.album_id AND c.code = $1) \
             ORDER BY i.id",
        )
        .bind(code)
        .bind(spec)
        .fetch_all(&self.pool)
        .await
        .or_internal()?;
        rows.iter()
            .map(|r| Ok((uuid(r, "id")?, uuid(r, "owner_id")?)))
            .collect()
    }

    async fn images_with_render(&self, code: &str) -> Result<Vec<Uuid>> {
        let rows = sqlx::query("SELECT image_id FROM renders WHERE code = $1 ORDER BY image_id")
            .bind(code)
            .fetch_all(&self.pool)
            .await
            .or_internal()?;
        rows.iter().map(|r| uuid(r, "image_id")).collect()
    }

    async fn pending_by_owner(&self) -> Result<Vec<(Uuid, i64)>> {
        let rows = sqlx::query(
            "SELECT i.owner_id, COUNT(*) AS n FROM images i \
             WHERE i.status = 'processing' \
             OR EXISTS (SELECT 1 FROM render_outbox o WHERE o.image_id = i.id) \
             GROUP BY i.owner_id",
        )
        .fetch_all(&self.pool)
        .await
        .or_internal()?;
        rows.iter()
            .map(|r| Ok((uuid(r, "owner_id")?, r.try_get("n").or_internal()?)))
            .collect()
    }

    async fn backlog_queued(&self, code: &str) -> Result<Option<String>> {
        let row = sqlx::query("SELECT spec FROM preset_backlogs WHERE code = $1")
            .bind(code)
            .fetch_optional(&self.pool)
            .await
            .or_internal()?;
        Ok(row.map(|r| r.try_get("spec")).transpose().or_internal()?)
    }

    async fn set_backlog_queued(&self, code: &str, spec: Option<&str>) -> Result<()> {
        let q = match spec {
            Some(spec) => sqlx::query(
                "INSERT INTO preset_backlogs (code, spec) VALUES ($1, $2) \
                 ON CONFLICT (code) DO UPDATE SET spec = excluded.spec",
            )
            .bind(code)
            .bind(spec),
            None => sqlx::query("DELETE FROM preset_backlogs WHERE code = $1").bind(code),
        };
        q.execute(&self.pool).await.or_internal()?;
        Ok(())
    }
}

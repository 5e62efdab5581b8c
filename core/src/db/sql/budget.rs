//! `BudgetRepo` over SQL.

use super::SqlRepo;
use crate::db::budget::BudgetRepo;
use crate::error::OrInternal;
use crate::Result;
use async_trait::async_trait;
use sqlx::Row;
use uuid::Uuid;

#[async_trait]
impl BudgetRepo for SqlRepo {
    async fn set_failure_reason(&self, image_id: Uuid, reason: &str, now: i64) -> Result<()> {
        sqlx::query(
            "INSERT INTO image_failures (image_id, reason, failed_at) \
             SELECT id, $2, $3 FROM images WHERE id = $1 \
             ON CONFLICT (image_id) DO UPDATE \
             SET reason = excluded.reason, failed_at = excluded.failed_at",
        )
        .bind(image_id.to_string())
        .bind(reason)
        .bind(now)
        .execute(&self.pool)
        .await
        .or_internal()?;
        Ok(())
    }

    async fn stored_bytes(&self, owner: Uuid) -> Result<i64> {
        let row = sqlx::query(
            "SELECT CAST(COALESCE(SUM(size_bytes), 0) AS BIGINT) AS n FROM images WHERE owner_id = $1",
        )
        .bind(owner.to_string())
        .fetch_one(&self.pool)
        .await.or_internal()?;
        Ok(row.try_get("n").or_internal()?)
    }

    async fn pending_of(&self, owner: Uuid) -> Result<i64> {
        let row = sqlx::query(
            "SELECT COUNT(*) AS n FROM images WHERE owner_id = $1 AND status = 'processing'",
        )
        .bind(owner.to_string())
        .fetch_one(&self.pool)
        .await
        .or_internal()?;
        Ok(row.try_get("n").or_internal()?)
    }
}

//! `JobRepo` over SQL.

use super::{bind_ids, placeholders, SqlRepo};
use crate::db::jobs::{JobRepo, NewJob};
use crate::domain::jobs::{ItemState, JobCounts};
use crate::Result;
use async_trait::async_trait;
use sqlx::Row;
use uuid::Uuid;

#[async_trait]
impl JobRepo for SqlRepo {
    async fn insert_job(&self, job: &NewJob<'_>) -> Result<i64> {
        let mut tx = self.pool.begin().await?;
        let row = sqlx::query(
            "INSERT INTO render_jobs (owner_id, album_id, reason, image_count, created_at) \
             VALUES ($1, $2, $3, $4, $5) RETURNING id",
        )
        .bind(job.owner.to_string())
        .bind(job.album.to_string())
        .bind(job.kind)
        .bind(job.images.len() as i64)
        .bind(job.now)
        .fetch_one(&mut *tx)
        .await?;
        let id: i64 = row.try_get("id")?;
        // A folder's photos in a few statements, not one per photo. The job
        // id is a number the database just gave, so it goes in as text.
        for chunk in job.images.chunks(1000) {
            let q = format!(
                "INSERT INTO render_job_items (job_id, image_id, state) \
                 SELECT {id}, id, 'queued' FROM images WHERE id IN ({})",
                placeholders(chunk.len())
            );
            bind_ids(sqlx::query(&q), chunk).execute(&mut *tx).await?;
        }
        tx.commit().await?;
        Ok(id)
    }

    async fn job_counts(&self, owner: Uuid, id: i64) -> Result<Option<JobCounts>> {
        let row = sqlx::query(
            "SELECT j.id, j.reason, j.image_count, \
               (SELECT COUNT(*) FROM render_job_items i \
                 WHERE i.job_id = j.id AND i.state = 'queued') AS queued, \
               (SELECT COUNT(*) FROM render_job_items i \
                 WHERE i.job_id = j.id AND i.state = 'failed') AS failed \
             FROM render_jobs j WHERE j.id = $1 AND j.owner_id = $2",
        )
        .bind(id)
        .bind(owner.to_string())
        .fetch_optional(&self.pool)
        .await?;
        row.map(|r| {
            Ok(JobCounts {
                id: r.try_get("id")?,
                kind: r.try_get("reason")?,
                total: r.try_get("image_count")?,
                queued: r.try_get("queued")?,
                failed: r.try_get("failed")?,
            })
        })
        .transpose()
    }

    async fn settle_job_items(&self, image: Uuid, since: i64, state: ItemState) -> Result<()> {
        sqlx::query(
            "UPDATE render_job_items SET state = $3 \
             WHERE image_id = $1 AND state = 'queued' AND job_id IN \
               (SELECT id FROM render_jobs WHERE created_at < $2)",
        )
        .bind(image.to_string())
        .bind(since)
        .bind(state.as_str())
        .execute(&self.pool)
        .await?;
        Ok(())
    }
}

//! `JobRepo` over SQL.

use super::{bind_ids, key_share, placeholders, retry_deadlocks, SqlRepo};
use crate::db::jobs::{JobRepo, NewJob};
use crate::error::OrInternal;
use crate::Result;
use async_trait::async_trait;
use lightbox_domain::jobs::{ItemState, JobCounts};
use sqlx::Row;
use uuid::Uuid;

#[async_trait]
impl JobRepo for SqlRepo {
    /// The job's photos are those still there: each is held (`FOR KEY
    /// SHARE` on PostgreSQL) as it is read, so a deletion under way is
    /// waited for and its photo left out, where the foreign key's check
    /// failed the whole folder-wide change. The job counts what it holds.
    async fn insert_job(&self, job: &NewJob<'_>) -> Result<i64> {
        let hold = key_share(self.engine);
        retry_deadlocks(move || async move {
            let mut tx = self.pool.begin().await.or_internal()?;
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
            .await
            .or_internal()?;
            let id: i64 = row.try_get("id").or_internal()?;
            // A folder's photos in a few statements, not one per photo. The
            // job id is a number the database just gave, so it goes in as
            // text.
            let mut held = 0;
            for chunk in job.images.chunks(1000) {
                let q = format!(
                    "INSERT INTO render_job_items (job_id, image_id, state) \
                     SELECT {id}, id, 'queued' FROM images WHERE id IN ({}){hold}",
                    placeholders(chunk.len())
                );
                held += bind_ids(sqlx::query(&q), chunk)
                    .execute(&mut *tx)
                    .await
                    .or_internal()?
                    .rows_affected();
            }
            if held != job.images.len() as u64 {
                sqlx::query("UPDATE render_jobs SET image_count = $1 WHERE id = $2")
                    .bind(held as i64)
                    .bind(id)
                    .execute(&mut *tx)
                    .await
                    .or_internal()?;
            }
            tx.commit().await.or_internal()?;
            Ok(id)
        })
        .await
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
        .await
        .or_internal()?;
        row.map(|r| {
            Ok(JobCounts {
                id: r.try_get("id").or_internal()?,
                kind: r.try_get("reason").or_internal()?,
                total: r.try_get("image_count").or_internal()?,
                queued: r.try_get("queued").or_internal()?,
                failed: r.try_get("failed").or_internal()?,
            })
        })
        .transpose()
    }

    async fn queued_jobs(&self, image: Uuid) -> Result<Vec<i64>> {
        let rows = sqlx::query(
            "SELECT job_id FROM render_job_items WHERE image_id = $1 AND state = 'queued'",
        )
        .bind(image.to_string())
        .fetch_all(&self.pool)
        .await
        .or_internal()?;
        rows.iter()
            .map(|r| r.try_get("job_id").or_internal())
            .collect()
    }

    async fn settle_job_items(&self, image: Uuid, jobs: &[i64], state: ItemState) -> Result<()> {
        // A photo is in few jobs at once: one statement each.
        for job in jobs {
            sqlx::query(
                "UPDATE render_job_items SET state = $3 \
                 WHERE image_id = $1 AND job_id = $2 AND state = 'queued'",
            )
            .bind(image.to_string())
            .bind(job)
            .bind(state.as_str())
            .execute(&self.pool)
            .await
            .or_internal()?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::album_views::tests::{drop_database, owner_with_album, photo, repo};
    use crate::db::{ImageRepo, JobRepo, NewJob};
    use lightbox_domain::jobs::ItemState;

    #[tokio::test]
    async fn a_run_settles_the_jobs_it_read_and_no_later_one() {
        let repo = repo().await;
        let (owner, album) = owner_with_album(&repo).await;
        let img = photo(2, owner, album.id);
        repo.insert_image(&img, &[]).await.unwrap();
        // Both jobs carry the same time: only what the run read counts.
        let job = |kind| NewJob {
            owner,
            album: album.id,
            kind,
            images: std::slice::from_ref(&img.id),
            now: 1_000,
        };
        let first = repo.insert_job(&job("album.crop.set")).await.unwrap();
        let serving = repo.queued_jobs(img.id).await.unwrap();
        assert_eq!(serving, [first]);
        let second = repo.insert_job(&job("album.crop.delete")).await.unwrap();
        repo.settle_job_items(img.id, &serving, ItemState::Done)
            .await
            .unwrap();
        let counts = |id| repo.job_counts(owner, id);
        assert_eq!(counts(first).await.unwrap().unwrap().queued, 0);
        assert_eq!(counts(second).await.unwrap().unwrap().queued, 1);
        // The second job's own run settles it.
        let serving = repo.queued_jobs(img.id).await.unwrap();
        assert_eq!(serving, [second]);
        repo.settle_job_items(img.id, &serving, ItemState::Failed)
            .await
            .unwrap();
        let second = counts(second).await.unwrap().unwrap();
        assert_eq!((second.queued, second.failed), (0, 1));
        drop_database(repo).await;
    }
}

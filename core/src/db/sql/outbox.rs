use super::*;
use crate::db::outbox::{OutboxRepo, OutboxRow};
use sqlx::AnyConnection;

/// Adds or renews an image's outbox row; shared with `insert_image`, which
/// writes it in the image's own transaction.
pub(super) async fn add(conn: &mut AnyConnection, image_id: Uuid, now: i64) -> Result<()> {
    sqlx::query(
        "INSERT INTO render_outbox (image_id, ticket, queued_at) VALUES ($1, $2, $3) \
         ON CONFLICT (image_id) DO UPDATE SET ticket = excluded.ticket, queued_at = excluded.queued_at",
    )
    .bind(image_id.to_string())
    .bind(Uuid::new_v4().simple().to_string())
    .bind(now)
    .execute(conn)
    .await?;
    Ok(())
}

#[async_trait]
impl OutboxRepo for SqlRepo {
    async fn outbox_add(&self, image_ids: &[Uuid], now: i64) -> Result<()> {
        let mut tx = self.pool.begin().await?;
        for id in image_ids {
            add(&mut tx, *id, now).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    async fn outbox_batch(&self, limit: i64) -> Result<Vec<OutboxRow>> {
        let rows = sqlx::query(
            "SELECT image_id, ticket FROM render_outbox ORDER BY queued_at, image_id LIMIT $1",
        )
        .bind(limit)
        .fetch_all(&self.pool)
        .await?;
        rows.iter()
            .map(|r| {
                Ok(OutboxRow {
                    image_id: uuid(r, "image_id")?,
                    ticket: r.try_get("ticket")?,
                })
            })
            .collect()
    }

    async fn outbox_remove(&self, row: &OutboxRow) -> Result<()> {
        sqlx::query("DELETE FROM render_outbox WHERE image_id = $1 AND ticket = $2")
            .bind(row.image_id.to_string())
            .bind(&row.ticket)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn outbox_len(&self) -> Result<i64> {
        Ok(sqlx::query("SELECT COUNT(*) AS n FROM render_outbox")
            .fetch_one(&self.pool)
            .await?
            .try_get("n")?)
    }
}

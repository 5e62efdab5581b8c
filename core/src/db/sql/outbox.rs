use super::*;
use crate::db::outbox::{OutboxRepo, OutboxRow};
use crate::error::OrInternal;
use sqlx::AnyConnection;

/// Adds or renews an image's outbox row, unless the image is gone; shared
/// with `insert_image`, which writes it in the image's own transaction.
/// On PostgreSQL the image's row is held (`FOR KEY SHARE`) as the
/// existence is checked: a deletion under way is waited for, and then the
/// image is skipped, where the foreign key's own check would have failed
/// the whole transaction, and a folder-wide change with it.
pub(super) async fn add(
    conn: &mut AnyConnection,
    engine: Engine,
    image_id: Uuid,
    now: i64,
) -> Result<()> {
    put(conn, engine, image_id, now, RENEW).await
}

/// A row that is there already is renewed: a waiting one gets the new
/// ticket, its starts counted afresh; a sent one keeps its ticket (its job
/// runs on) and holds the new one for when that job is answered
/// (`outbox_remove`).
const RENEW: &str = "DO UPDATE SET \
     next_ticket = CASE WHEN render_outbox.sent_at IS NULL THEN NULL ELSE excluded.ticket END, \
     ticket = CASE WHEN render_outbox.sent_at IS NULL THEN excluded.ticket ELSE render_outbox.ticket END, \
     started = CASE WHEN render_outbox.sent_at IS NULL THEN 0 ELSE render_outbox.started END, \
     queued_at = excluded.queued_at";

async fn put(
    conn: &mut AnyConnection,
    engine: Engine,
    image_id: Uuid,
    now: i64,
    on_conflict: &str,
) -> Result<()> {
    let hold = key_share(engine);
    sqlx::query(&format!(
        "INSERT INTO render_outbox (image_id, ticket, queued_at) SELECT $1, $2, $3 \
         WHERE EXISTS (SELECT 1 FROM images WHERE id = $1{hold}) \
         ON CONFLICT (image_id) {on_conflict}"
    ))
    .bind(image_id.to_string())
    .bind(Uuid::new_v4().simple().to_string())
    .bind(now)
    .execute(conn)
    .await
    .or_internal()?;
    Ok(())
}

async fn put_all(repo: &SqlRepo, image_ids: &[Uuid], now: i64, on_conflict: &str) -> Result<()> {
    let mut ids = image_ids.to_vec();
    ids.sort_unstable();
    let ids = &ids;
    retry_deadlocks(move || async move {
        let mut tx = repo.pool.begin().await.or_internal()?;
        for id in ids {
            put(&mut tx, repo.engine, *id, now, on_conflict).await?;
        }
        tx.commit().await.or_internal()?;
        Ok(())
    })
    .await
}

#[async_trait]
impl OutboxRepo for SqlRepo {
    /// In id order, so that two calls over the same photos take their rows
    /// in one order; run again if PostgreSQL still picks it as a deadlock's
    /// victim (against a writer that holds the photos in another order).
    async fn outbox_add(&self, image_ids: &[Uuid], now: i64) -> Result<()> {
        put_all(self, image_ids, now, RENEW).await
    }

    async fn outbox_recorded_again(&self, image_ids: &[Uuid], now: i64) -> Result<()> {
        let keep_count = "DO UPDATE SET \
             next_ticket = CASE WHEN render_outbox.sent_at IS NULL THEN NULL ELSE excluded.ticket END, \
             ticket = CASE WHEN render_outbox.sent_at IS NULL THEN excluded.ticket ELSE render_outbox.ticket END, \
             queued_at = excluded.queued_at";
        put_all(self, image_ids, now, keep_count).await
    }

    async fn outbox_heads(
        &self,
        per_owner: i64,
        cap: i64,
        limit: i64,
    ) -> Result<Vec<(OutboxRow, Uuid)>> {
        let rows = sqlx::query(
            "SELECT image_id, ticket, owner_id FROM ( \
               SELECT o.image_id, o.ticket, o.queued_at, i.owner_id, ROW_NUMBER() OVER \
                 (PARTITION BY i.owner_id ORDER BY o.queued_at, o.image_id) AS n \
               FROM render_outbox o JOIN images i ON i.id = o.image_id \
               WHERE o.sent_at IS NULL AND i.owner_id NOT IN ( \
                 SELECT f.owner_id FROM render_outbox s JOIN images f ON f.id = s.image_id \
                 WHERE s.sent_at IS NOT NULL GROUP BY f.owner_id HAVING COUNT(*) >= $2)) w \
             WHERE n <= $1 ORDER BY queued_at, image_id LIMIT $3",
        )
        .bind(per_owner)
        .bind(cap)
        .bind(limit)
        .fetch_all(&self.pool)
        .await
        .or_internal()?;
        rows.iter()
            .map(|r| {
                let row = OutboxRow {
                    image_id: uuid(r, "image_id")?,
                    ticket: r.try_get("ticket").or_internal()?,
                };
                Ok((row, uuid(r, "owner_id")?))
            })
            .collect()
    }

    async fn outbox_in_flight(&self) -> Result<Vec<(Uuid, i64)>> {
        let rows = sqlx::query(
            "SELECT i.owner_id, COUNT(*) AS n FROM render_outbox o \
             JOIN images i ON i.id = o.image_id WHERE o.sent_at IS NOT NULL \
             GROUP BY i.owner_id",
        )
        .fetch_all(&self.pool)
        .await
        .or_internal()?;
        rows.iter()
            .map(|r| Ok((uuid(r, "owner_id")?, r.try_get("n").or_internal()?)))
            .collect()
    }

    async fn outbox_lost(&self, sent_before: i64) -> Result<u64> {
        let rows = sqlx::query(
            "SELECT image_id, ticket FROM render_outbox \
             WHERE sent_at IS NOT NULL AND sent_at < $1",
        )
        .bind(sent_before)
        .fetch_all(&self.pool)
        .await
        .or_internal()?;
        let mut lost = 0;
        for r in &rows {
            let image_id: String = r.try_get("image_id").or_internal()?;
            let ticket: String = r.try_get("ticket").or_internal()?;
            let done = sqlx::query(
                "UPDATE render_outbox SET sent_at = NULL, ticket = $3, next_ticket = NULL, \
                 started = 0 WHERE image_id = $1 AND ticket = $2 AND sent_at IS NOT NULL",
            )
            .bind(image_id)
            .bind(ticket)
            .bind(Uuid::new_v4().simple().to_string())
            .execute(&self.pool)
            .await
            .or_internal()?;
            lost += done.rows_affected();
        }
        Ok(lost)
    }

    /// A row renewed while its job ran waits again under its next ticket.
    async fn outbox_remove(&self, row: &OutboxRow) -> Result<()> {
        for sql in [
            "DELETE FROM render_outbox WHERE image_id = $1 AND ticket = $2 \
             AND next_ticket IS NULL",
            "UPDATE render_outbox SET ticket = next_ticket, next_ticket = NULL, sent_at = NULL, \
             started = 0 WHERE image_id = $1 AND ticket = $2 AND next_ticket IS NOT NULL",
        ] {
            sqlx::query(sql)
                .bind(row.image_id.to_string())
                .bind(&row.ticket)
                .execute(&self.pool)
                .await
                .or_internal()?;
        }
        Ok(())
    }

    async fn outbox_sent(&self, row: &OutboxRow, now: i64) -> Result<()> {
        sqlx::query("UPDATE render_outbox SET sent_at = $3 WHERE image_id = $1 AND ticket = $2")
            .bind(row.image_id.to_string())
            .bind(&row.ticket)
            .bind(now)
            .execute(&self.pool)
            .await
            .or_internal()?;
        Ok(())
    }

    async fn outbox_resend(&self) -> Result<u64> {
        let done = sqlx::query(
            "UPDATE render_outbox SET sent_at = NULL, ticket = COALESCE(next_ticket, ticket), \
             started = CASE WHEN next_ticket IS NULL THEN started ELSE 0 END, next_ticket = NULL \
             WHERE sent_at IS NOT NULL",
        )
        .execute(&self.pool)
        .await
        .or_internal()?;
        Ok(done.rows_affected())
    }

    async fn outbox_starts(&self, row: &OutboxRow) -> Result<Option<u32>> {
        let sql = "SELECT CAST(started AS BIGINT) AS started FROM render_outbox \
             WHERE image_id = $1 AND ticket = $2";
        starts(self, sql, row).await
    }

    async fn outbox_started(&self, row: &OutboxRow) -> Result<Option<u32>> {
        let sql = "UPDATE render_outbox SET started = started + 1 \
             WHERE image_id = $1 AND ticket = $2 RETURNING CAST(started AS BIGINT) AS started";
        starts(self, sql, row).await
    }

    async fn outbox_unstarted(&self, row: &OutboxRow) -> Result<()> {
        sqlx::query(
            "UPDATE render_outbox SET started = started - 1 \
             WHERE image_id = $1 AND ticket = $2 AND started > 0",
        )
        .bind(row.image_id.to_string())
        .bind(&row.ticket)
        .execute(&self.pool)
        .await
        .or_internal()?;
        Ok(())
    }

    async fn outbox_len(&self) -> Result<i64> {
        Ok(
            sqlx::query("SELECT COUNT(*) AS n FROM render_outbox WHERE sent_at IS NULL")
                .fetch_one(&self.pool)
                .await
                .or_internal()?
                .try_get("n")
                .or_internal()?,
        )
    }
}

/// The `started` count `sql` returns for `row`, if the row is there.
async fn starts(repo: &SqlRepo, sql: &str, row: &OutboxRow) -> Result<Option<u32>> {
    let found = sqlx::query(sql)
        .bind(row.image_id.to_string())
        .bind(&row.ticket)
        .fetch_optional(&repo.pool)
        .await
        .or_internal()?;
    match found {
        Some(r) => Ok(Some(
            u32::try_from(r.try_get::<i64, _>("started").or_internal()?).unwrap_or(u32::MAX),
        )),
        None => Ok(None),
    }
}

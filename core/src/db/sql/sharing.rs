//! `SharingRepo` for `SqlRepo`: each publication change is one transaction,
//! and the aliases table's primary key decides every race for a name.

use super::moderation::{album_takedown, photo_takedown};
use super::{lock_parent, retry_deadlocks, state, uuid, SqlRepo};
use crate::db::albums::*;
use crate::error::OrInternal;
use crate::Result;
use async_trait::async_trait;
use lightbox_domain::alias::{reservation_cap, Alias, AliasState};
use lightbox_domain::sharing::ShareLink;
use sqlx::any::AnyRow;
use sqlx::{Any, Executor, Row, Transaction};
use uuid::Uuid;

const LINK_COLS: &str = "token_hash, album_id, nonce, created_at, retired_at";
const ALIAS_COLS: &str = "alias, owner_id, album_id, state, created_at, expires_at";

fn link_row(r: &AnyRow) -> Result<ShareLink> {
    Ok(ShareLink {
        token_hash: r.try_get("token_hash").or_internal()?,
        album_id: uuid(r, "album_id")?,
        nonce: r.try_get("nonce").or_internal()?,
        created_at: r.try_get("created_at").or_internal()?,
        retired_at: r.try_get("retired_at").or_internal()?,
    })
}

fn alias_row(r: &AnyRow) -> Result<Alias> {
    Ok(Alias {
        alias: r.try_get("alias").or_internal()?,
        owner_id: uuid(r, "owner_id")?,
        album_id: uuid(r, "album_id")?,
        state: state(r, "state", AliasState::parse)?,
        created_at: r.try_get("created_at").or_internal()?,
        expires_at: r.try_get("expires_at").or_internal()?,
    })
}

async fn retire_links(tx: &mut Transaction<'_, Any>, album: Uuid, now: i64) -> Result<()> {
    sqlx::query(
        "UPDATE share_links SET retired_at = $2 WHERE album_id = $1 AND retired_at IS NULL",
    )
    .bind(album.to_string())
    .bind(now)
    .execute(&mut **tx)
    .await
    .or_internal()?;
    Ok(())
}

async fn change_link(tx: &mut Transaction<'_, Any>, p: &Publication) -> Result<()> {
    match &p.link {
        LinkChange::Keep => {}
        LinkChange::Retire => retire_links(tx, p.album_id, p.now).await?,
        LinkChange::Replace(l) => {
            retire_links(tx, p.album_id, p.now).await?;
            sqlx::query(&format!(
                "INSERT INTO share_links ({LINK_COLS}) VALUES ($1, $2, $3, $4, NULL)"
            ))
            .bind(&l.token_hash)
            .bind(l.album_id.to_string())
            .bind(&l.nonce)
            .bind(l.created_at)
            .execute(&mut **tx)
            .await
            .or_internal()?;
        }
    }
    Ok(())
}

/// Takes the alias for the folder unless another owner holds it. An own
/// alias that is not another folder's `current`, or a released one whose
/// hold has ended, can be taken; the conflict clause decides atomically.
async fn claim(tx: &mut Transaction<'_, Any>, p: &Publication, alias: &str) -> Result<bool> {
    let won = sqlx::query(
        "INSERT INTO aliases (alias, owner_id, album_id, state, created_at, expires_at) \
         VALUES ($1, $2, $3, 'current', $4, NULL) \
         ON CONFLICT (alias) DO UPDATE SET owner_id = excluded.owner_id, \
           album_id = excluded.album_id, state = 'current', \
           created_at = excluded.created_at, expires_at = NULL \
         WHERE (aliases.owner_id = excluded.owner_id \
                AND (aliases.state <> 'current' OR aliases.album_id = excluded.album_id) \
                AND NOT EXISTS (SELECT 1 FROM albums d WHERE d.id = aliases.album_id \
                                AND d.id <> excluded.album_id AND d.taken_down_at IS NOT NULL)) \
            OR (aliases.state = 'released' AND aliases.expires_at <= excluded.created_at) \
         RETURNING alias",
    )
    .bind(alias)
    .bind(p.owner_id.to_string())
    .bind(p.album_id.to_string())
    .bind(p.now)
    .fetch_optional(&mut **tx)
    .await
    .or_internal()?;
    if won.is_none() {
        return Ok(false);
    }
    sqlx::query(
        "UPDATE aliases SET state = 'previous' \
         WHERE album_id = $1 AND state = 'current' AND alias <> $2",
    )
    .bind(p.album_id.to_string())
    .bind(alias)
    .execute(&mut **tx)
    .await
    .or_internal()?;
    Ok(true)
}

async fn reactivate(tx: &mut Transaction<'_, Any>, album: Uuid) -> Result<()> {
    let rows = sqlx::query(
        "SELECT alias FROM aliases WHERE album_id = $1 AND state = 'expired' \
         ORDER BY created_at DESC, alias",
    )
    .bind(album.to_string())
    .fetch_all(&mut **tx)
    .await
    .or_internal()?;
    for (i, r) in rows.iter().enumerate() {
        let alias: String = r.try_get("alias").or_internal()?;
        let state = if i == 0 {
            AliasState::Current
        } else {
            AliasState::Previous
        };
        sqlx::query("UPDATE aliases SET state = $2 WHERE alias = $1")
            .bind(alias)
            .bind(state.as_str())
            .execute(&mut **tx)
            .await
            .or_internal()?;
    }
    Ok(())
}

async fn used<'e>(db: impl Executor<'e, Database = Any>, owner: Uuid) -> Result<i64> {
    let row = sqlx::query(
        "SELECT COUNT(*) AS n FROM aliases WHERE owner_id = $1 AND state IN ('current', 'previous')",
    )
    .bind(owner.to_string())
    .fetch_one(db)
    .await.or_internal()?;
    row.try_get("n").or_internal()
}

/// Every name an owner keeps from others: current, previous, expired and
/// released ones still on hold. A new claim beyond `reservation_cap` first
/// gives up the owner's oldest expired aliases (they become free to all at
/// once); if released holds alone fill the cap, the claim is refused.
async fn within_reservations(tx: &mut Transaction<'_, Any>, p: &Publication) -> Result<bool> {
    let cap = reservation_cap(p.alias_limit);
    let over = reserved(tx, p).await? - cap;
    if over <= 0 {
        return Ok(true);
    }
    sqlx::query(
        "DELETE FROM aliases WHERE alias IN (SELECT alias FROM aliases \
         WHERE owner_id = $1 AND state = 'expired' ORDER BY created_at, alias LIMIT $2)",
    )
    .bind(p.owner_id.to_string())
    .bind(over)
    .execute(&mut **tx)
    .await
    .or_internal()?;
    Ok(reserved(tx, p).await? <= cap)
}

async fn reserved(tx: &mut Transaction<'_, Any>, p: &Publication) -> Result<i64> {
    let row = sqlx::query(
        "SELECT COUNT(*) AS n FROM aliases WHERE owner_id = $1 \
         AND (state <> 'released' OR expires_at > $2)",
    )
    .bind(p.owner_id.to_string())
    .bind(p.now)
    .fetch_one(&mut **tx)
    .await
    .or_internal()?;
    row.try_get("n").or_internal()
}

async fn record(tx: &mut Transaction<'_, Any>, p: &Publication) -> Result<()> {
    sqlx::query(
        "UPDATE albums SET mode = $2, last_published_mode = $3, published_at = $4 WHERE id = $1",
    )
    .bind(p.album_id.to_string())
    .bind(p.mode.as_str())
    .bind(p.last_published_mode.map(|m| m.as_str()))
    .bind(p.published_at)
    .execute(&mut **tx)
    .await
    .or_internal()?;
    sqlx::query(
        "INSERT INTO publication_history (album_id, mode, image_count, at) \
         VALUES ($1, $2, (SELECT COUNT(*) FROM images WHERE album_id = $1), $3)",
    )
    .bind(p.album_id.to_string())
    .bind(p.mode.as_str())
    .bind(p.now)
    .execute(&mut **tx)
    .await
    .or_internal()?;
    Ok(())
}

#[async_trait]
impl SharingRepo for SqlRepo {
    async fn publish(&self, p: &Publication) -> Result<Published> {
        let mut tx = self.pool.begin().await.or_internal()?;
        let adds = matches!(p.aliases, AliasChange::Claim(_) | AliasChange::Reactivate);
        if adds {
            // One owner's alias changes queue on the owner's row, so the
            // counts below are exact under concurrency on both engines.
            lock_parent(&mut tx, self.engine, "users", p.owner_id).await?;
        }
        match &p.aliases {
            AliasChange::Keep => {}
            AliasChange::Expire => {
                sqlx::query(
                    "UPDATE aliases SET state = 'expired' \
                     WHERE album_id = $1 AND state IN ('current', 'previous')",
                )
                .bind(p.album_id.to_string())
                .execute(&mut *tx)
                .await
                .or_internal()?;
            }
            AliasChange::Reactivate => reactivate(&mut tx, p.album_id).await?,
            AliasChange::Claim(alias) => {
                if !claim(&mut tx, p, alias).await? {
                    return Ok(Published::AliasTaken);
                }
                if !within_reservations(&mut tx, p).await? {
                    return Ok(Published::OverReservations);
                }
            }
        }
        if adds && used(&mut *tx, p.owner_id).await? > p.alias_limit {
            return Ok(Published::OverQuota);
        }
        change_link(&mut tx, p).await?;
        if p.record_history {
            record(&mut tx, p).await?;
        }
        tx.commit().await.or_internal()?;
        Ok(Published::Done)
    }

    async fn link_of(&self, album: Uuid) -> Result<Option<ShareLink>> {
        let q = format!(
            "SELECT {LINK_COLS} FROM share_links WHERE album_id = $1 AND retired_at IS NULL"
        );
        let row = sqlx::query(&q)
            .bind(album.to_string())
            .fetch_optional(&self.pool)
            .await
            .or_internal()?;
        row.as_ref().map(link_row).transpose()
    }

    async fn link_by_hash(&self, token_hash: &str) -> Result<Option<ShareLink>> {
        let q = format!("SELECT {LINK_COLS} FROM share_links WHERE token_hash = $1");
        let row = sqlx::query(&q)
            .bind(token_hash)
            .fetch_optional(&self.pool)
            .await
            .or_internal()?;
        row.as_ref().map(link_row).transpose()
    }

    async fn aliases_of(&self, album: Uuid) -> Result<Vec<Alias>> {
        let q = format!(
            "SELECT {ALIAS_COLS} FROM aliases WHERE album_id = $1 ORDER BY created_at DESC, alias"
        );
        let rows = sqlx::query(&q)
            .bind(album.to_string())
            .fetch_all(&self.pool)
            .await
            .or_internal()?;
        rows.iter().map(alias_row).collect()
    }

    async fn alias(&self, alias: &str) -> Result<Option<Alias>> {
        let q = format!("SELECT {ALIAS_COLS} FROM aliases WHERE alias = $1");
        let row = sqlx::query(&q)
            .bind(alias)
            .fetch_optional(&self.pool)
            .await
            .or_internal()?;
        row.as_ref().map(alias_row).transpose()
    }

    async fn aliases_used(&self, owner: Uuid) -> Result<i64> {
        used(&self.pool, owner).await
    }

    async fn release_alias(&self, album: Uuid, alias: &str, hold_until: i64) -> Result<bool> {
        let mut tx = self.pool.begin().await.or_internal()?;
        let row = sqlx::query(
            "UPDATE aliases SET state = 'released', expires_at = $3 \
             WHERE alias = $1 AND album_id = $2 AND state <> 'released' RETURNING alias",
        )
        .bind(alias)
        .bind(album.to_string())
        .bind(hold_until)
        .fetch_optional(&mut *tx)
        .await
        .or_internal()?;
        if row.is_none() {
            return Ok(false);
        }
        // Whatever was released, the newest remaining alias leads when no
        // `current` is left.
        sqlx::query(
            "UPDATE aliases SET state = 'current' WHERE alias = ( \
               SELECT alias FROM aliases WHERE album_id = $1 AND state = 'previous' \
               ORDER BY created_at DESC, alias LIMIT 1) \
             AND NOT EXISTS (SELECT 1 FROM aliases WHERE album_id = $1 AND state = 'current')",
        )
        .bind(album.to_string())
        .execute(&mut *tx)
        .await
        .or_internal()?;
        tx.commit().await.or_internal()?;
        Ok(true)
    }

    async fn set_takedown(
        &self,
        target: Moderated,
        reason: Option<&str>,
        now: i64,
    ) -> Result<bool> {
        retry_deadlocks(move || async move {
            let at = reason.map(|_| now);
            let mut tx = self.pool.begin().await.or_internal()?;
            let found = match target {
                Moderated::Image(id) => photo_takedown(&mut tx, id, at, reason).await?,
                Moderated::Album(id) => {
                    album_takedown(&mut tx, self.engine, id, at, reason).await?
                }
            };
            tx.commit().await.or_internal()?;
            Ok(found)
        })
        .await
    }
}

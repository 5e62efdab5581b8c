//! The account roles (users, sessions, tokens, the login throttle) for `SqlRepo`.

use super::{flag, on_unique, uuid, SqlRepo};
use crate::db::*;
use crate::error::OrInternal;
use crate::Result;
use async_trait::async_trait;
use lightbox_domain::accounts::{Pat, RefreshToken, Scope, User};
use sqlx::any::AnyRow;
use sqlx::{Executor, Row};
use uuid::Uuid;

const USER_COLS: &str = "id, email, password_hash, is_admin, created_at";

fn user_row(row: &AnyRow) -> Result<User> {
    Ok(User {
        id: uuid(row, "id")?,
        email: row.try_get("email").or_internal()?,
        password_hash: row.try_get("password_hash").or_internal()?,
        is_admin: flag(row, "is_admin")?,
        created_at: row.try_get("created_at").or_internal()?,
    })
}

const PAT_COLS: &str = "id, user_id, name, scopes, token_hash, prefix, created_at, \
                        last_used_at, expires_at, revoked_at";

/// Comma-separated names; an unknown one is dropped (it grants nothing).
fn scopes(stored: &str) -> Vec<Scope> {
    stored.split(',').filter_map(Scope::parse).collect()
}

fn pat_row(row: &AnyRow) -> Result<Pat> {
    Ok(Pat {
        id: uuid(row, "id")?,
        user_id: uuid(row, "user_id")?,
        name: row.try_get("name").or_internal()?,
        scopes: scopes(&row.try_get::<String, _>("scopes").or_internal()?),
        token_hash: row.try_get("token_hash").or_internal()?,
        prefix: row.try_get("prefix").or_internal()?,
        created_at: row.try_get("created_at").or_internal()?,
        last_used_at: row.try_get("last_used_at").or_internal()?,
        expires_at: row.try_get("expires_at").or_internal()?,
        revoked_at: row.try_get("revoked_at").or_internal()?,
    })
}

#[async_trait]
impl UserRepo for SqlRepo {
    async fn insert_user(&self, u: &User) -> Result<Write> {
        on_unique(
            sqlx::query(
                "INSERT INTO users (id, email, password_hash, is_admin, created_at) \
                 VALUES ($1, $2, $3, $4, $5)",
            )
            .bind(u.id.to_string())
            .bind(&u.email)
            .bind(&u.password_hash)
            .bind(u.is_admin as i64)
            .bind(u.created_at)
            .execute(&self.pool)
            .await,
        )
    }

    async fn user_by_id(&self, id: Uuid) -> Result<Option<User>> {
        let q = format!("SELECT {USER_COLS} FROM users WHERE id = $1");
        let row = sqlx::query(&q)
            .bind(id.to_string())
            .fetch_optional(&self.pool)
            .await
            .or_internal()?;
        row.as_ref().map(user_row).transpose()
    }

    async fn user_by_email(&self, email: &str) -> Result<Option<User>> {
        let q = format!("SELECT {USER_COLS} FROM users WHERE email = $1");
        let row = sqlx::query(&q)
            .bind(email)
            .fetch_optional(&self.pool)
            .await
            .or_internal()?;
        row.as_ref().map(user_row).transpose()
    }

    async fn list_users(&self) -> Result<Vec<User>> {
        let q = format!("SELECT {USER_COLS} FROM users ORDER BY created_at, id");
        let rows = sqlx::query(&q).fetch_all(&self.pool).await.or_internal()?;
        rows.iter().map(user_row).collect()
    }

    async fn set_email(&self, id: Uuid, email: &str) -> Result<Write> {
        on_unique(
            sqlx::query("UPDATE users SET email = $2 WHERE id = $1")
                .bind(id.to_string())
                .bind(email)
                .execute(&self.pool)
                .await,
        )
    }

    async fn set_password_hash(&self, id: Uuid, hash: &str) -> Result<()> {
        sqlx::query("UPDATE users SET password_hash = $2 WHERE id = $1")
            .bind(id.to_string())
            .bind(hash)
            .execute(&self.pool)
            .await
            .or_internal()?;
        Ok(())
    }
}

#[async_trait]
impl SessionRepo for SqlRepo {
    async fn create_session(&self, user_id: Uuid, first: &RefreshToken) -> Result<()> {
        let mut tx = self.pool.begin().await.or_internal()?;
        sqlx::query("INSERT INTO sessions (id, user_id, created_at) VALUES ($1, $2, $3)")
            .bind(first.session_id.to_string())
            .bind(user_id.to_string())
            .bind(first.created_at)
            .execute(&mut *tx)
            .await
            .or_internal()?;
        insert_refresh(&mut *tx, first).await?;
        tx.commit().await.or_internal()?;
        Ok(())
    }

    async fn session_user(&self, session_id: Uuid) -> Result<Option<User>> {
        let row = sqlx::query(
            "SELECT u.id, u.email, u.password_hash, u.is_admin, u.created_at \
             FROM sessions s JOIN users u ON u.id = s.user_id \
             WHERE s.id = $1 AND s.revoked_at IS NULL",
        )
        .bind(session_id.to_string())
        .fetch_optional(&self.pool)
        .await
        .or_internal()?;
        row.as_ref().map(user_row).transpose()
    }

    async fn spend_refresh(&self, token_hash: &str, now: i64) -> Result<RefreshUse> {
        // One statement decides: of two racing refreshes, exactly one spends it.
        let spent = sqlx::query(
            "UPDATE refresh_tokens SET used_at = $2 \
             WHERE token_hash = $1 AND used_at IS NULL AND expires_at > $2 \
               AND session_id IN (SELECT id FROM sessions WHERE revoked_at IS NULL) \
             RETURNING session_id",
        )
        .bind(token_hash)
        .bind(now)
        .fetch_optional(&self.pool)
        .await
        .or_internal()?;
        if let Some(row) = spent {
            let session_id = uuid(&row, "session_id")?;
            let user = sqlx::query("SELECT user_id FROM sessions WHERE id = $1")
                .bind(session_id.to_string())
                .fetch_one(&self.pool)
                .await
                .or_internal()?;
            return Ok(RefreshUse::Spent {
                session_id,
                user_id: uuid(&user, "user_id")?,
            });
        }
        let known =
            sqlx::query("SELECT session_id, used_at FROM refresh_tokens WHERE token_hash = $1")
                .bind(token_hash)
                .fetch_optional(&self.pool)
                .await
                .or_internal()?;
        Ok(match known {
            Some(row)
                if row
                    .try_get::<Option<i64>, _>("used_at")
                    .or_internal()?
                    .is_some() =>
            {
                RefreshUse::Replayed {
                    session_id: uuid(&row, "session_id")?,
                }
            }
            _ => RefreshUse::Invalid,
        })
    }

    async fn add_refresh(&self, row: &RefreshToken) -> Result<()> {
        insert_refresh(&self.pool, row).await
    }

    async fn revoke_session_of(&self, token_hash: &str, now: i64) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE sessions SET revoked_at = COALESCE(revoked_at, $2) WHERE id = \
             (SELECT session_id FROM refresh_tokens WHERE token_hash = $1)",
        )
        .bind(token_hash)
        .bind(now)
        .execute(&self.pool)
        .await
        .or_internal()?;
        Ok(done.rows_affected() > 0)
    }

    async fn revoke_session(&self, session_id: Uuid, now: i64) -> Result<()> {
        sqlx::query("UPDATE sessions SET revoked_at = $2 WHERE id = $1 AND revoked_at IS NULL")
            .bind(session_id.to_string())
            .bind(now)
            .execute(&self.pool)
            .await
            .or_internal()?;
        Ok(())
    }

    async fn revoke_sessions_except(&self, user_id: Uuid, keep: Uuid, now: i64) -> Result<()> {
        let mut tx = self.pool.begin().await.or_internal()?;
        sqlx::query(
            "UPDATE sessions SET revoked_at = $3 \
             WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL",
        )
        .bind(user_id.to_string())
        .bind(keep.to_string())
        .bind(now)
        .execute(&mut *tx)
        .await
        .or_internal()?;
        sqlx::query(
            "UPDATE refresh_tokens SET used_at = $2 WHERE session_id = $1 AND used_at IS NULL",
        )
        .bind(keep.to_string())
        .bind(now)
        .execute(&mut *tx)
        .await
        .or_internal()?;
        tx.commit().await.or_internal()?;
        Ok(())
    }
}

async fn insert_refresh<'e>(
    db: impl Executor<'e, Database = sqlx::Any>,
    r: &RefreshToken,
) -> Result<()> {
    sqlx::query(
        "INSERT INTO refresh_tokens (token_hash, session_id, created_at, expires_at) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(&r.token_hash)
    .bind(r.session_id.to_string())
    .bind(r.created_at)
    .bind(r.expires_at)
    .execute(db)
    .await
    .or_internal()?;
    Ok(())
}

#[async_trait]
impl PatRepo for SqlRepo {
    async fn insert_pat(&self, p: &Pat) -> Result<()> {
        sqlx::query(
            "INSERT INTO personal_access_tokens \
             (id, user_id, name, scopes, token_hash, prefix, created_at, expires_at) \
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
        )
        .bind(p.id.to_string())
        .bind(p.user_id.to_string())
        .bind(&p.name)
        .bind(
            p.scopes
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join(","),
        )
        .bind(&p.token_hash)
        .bind(&p.prefix)
        .bind(p.created_at)
        .bind(p.expires_at)
        .execute(&self.pool)
        .await
        .or_internal()?;
        Ok(())
    }

    async fn pats_of(&self, user_id: Uuid) -> Result<Vec<Pat>> {
        let q = format!(
            "SELECT {PAT_COLS} FROM personal_access_tokens \
             WHERE user_id = $1 AND revoked_at IS NULL ORDER BY created_at DESC, id"
        );
        let rows = sqlx::query(&q)
            .bind(user_id.to_string())
            .fetch_all(&self.pool)
            .await
            .or_internal()?;
        rows.iter().map(pat_row).collect()
    }

    async fn pat_by_hash(&self, token_hash: &str) -> Result<Option<Pat>> {
        let q = format!("SELECT {PAT_COLS} FROM personal_access_tokens WHERE token_hash = $1");
        let row = sqlx::query(&q)
            .bind(token_hash)
            .fetch_optional(&self.pool)
            .await
            .or_internal()?;
        row.as_ref().map(pat_row).transpose()
    }

    async fn revoke_pat(&self, user_id: Uuid, id: Uuid, now: i64) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE personal_access_tokens SET revoked_at = $3 \
             WHERE id = $1 AND user_id = $2 AND revoked_at IS NULL",
        )
        .bind(id.to_string())
        .bind(user_id.to_string())
        .bind(now)
        .execute(&self.pool)
        .await
        .or_internal()?;
        Ok(done.rows_affected() > 0)
    }

    async fn touch_pat(&self, id: Uuid, now: i64) -> Result<()> {
        sqlx::query(
            "UPDATE personal_access_tokens SET last_used_at = $2 \
             WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < $3)",
        )
        .bind(id.to_string())
        .bind(now)
        .bind(now - crate::time::MINUTE_MS)
        .execute(&self.pool)
        .await
        .or_internal()?;
        Ok(())
    }
}

#[async_trait]
impl ThrottleRepo for SqlRepo {
    async fn login_failures(&self, email: &str, client: &str) -> Result<Option<(i64, i64)>> {
        let row = sqlx::query(
            "SELECT failures, last_failure_at FROM login_failures WHERE email = $1 AND client = $2",
        )
        .bind(email)
        .bind(client)
        .fetch_optional(&self.pool)
        .await
        .or_internal()?;
        row.map(|r| {
            Ok((
                r.try_get("failures").or_internal()?,
                r.try_get("last_failure_at").or_internal()?,
            ))
        })
        .transpose()
    }

    async fn record_login_failure(&self, email: &str, client: &str, now: i64) -> Result<i64> {
        let row = sqlx::query(
            "INSERT INTO login_failures (email, client, failures, last_failure_at) \
             VALUES ($1, $2, 1, $3) \
             ON CONFLICT (email, client) DO UPDATE \
             SET failures = CASE WHEN login_failures.last_failure_at < $4 THEN 1 \
                                 ELSE login_failures.failures + 1 END, \
                 last_failure_at = excluded.last_failure_at \
             RETURNING failures",
        )
        .bind(email)
        .bind(client)
        .bind(now)
        .bind(now - crate::time::DAY_MS)
        .fetch_one(&self.pool)
        .await
        .or_internal()?;
        Ok(row.try_get("failures").or_internal()?)
    }

    async fn clear_login_failures(&self, email: &str, client: &str) -> Result<()> {
        sqlx::query("DELETE FROM login_failures WHERE email = $1 AND client = $2")
            .bind(email)
            .bind(client)
            .execute(&self.pool)
            .await
            .or_internal()?;
        Ok(())
    }
}

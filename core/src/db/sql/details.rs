//! `DetailsRepo` for `SqlRepo`: one row per image, JSON text columns.

use super::{lock_parent, uuid, SqlRepo};
use crate::db::details::DetailsRepo;
use crate::error::OrInternal;
use crate::{Error, Result};
use async_trait::async_trait;
use lightbox_domain::details::{Clip, Details};
use lightbox_domain::focus::Point;
use sqlx::any::AnyRow;
use sqlx::Row;
use uuid::Uuid;

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    Ok(serde_json::to_string(v).map_err(anyhow::Error::from)?)
}

/// A JSON column that may be empty; unreadable text reads as absent.
fn opt_json<T: serde::de::DeserializeOwned>(row: &AnyRow, col: &str) -> Result<Option<T>> {
    Ok(parsed(row.try_get(col).or_internal()?))
}

pub(super) fn parsed<T: serde::de::DeserializeOwned>(text: Option<String>) -> Option<T> {
    text.and_then(|s| serde_json::from_str(&s).ok())
}

const DETAIL_COLS: &str = "image_id, focus, placeholder, motion, salient";

fn details_row(row: &AnyRow) -> Result<(Uuid, Details)> {
    let details = Details {
        focus: opt_json(row, "focus")?,
        placeholder: row.try_get("placeholder").or_internal()?,
        motion: opt_json(row, "motion")?,
        salient: opt_json(row, "salient")?,
    };
    Ok((uuid(row, "image_id")?, details))
}

#[async_trait]
impl DetailsRepo for SqlRepo {
    async fn details_of(&self, image_ids: &[Uuid]) -> Result<Vec<(Uuid, Details)>> {
        if image_ids.is_empty() {
            return Ok(Vec::new());
        }
        let rows = self
            .fetch_among("image_id", image_ids, |among| {
                format!("SELECT {DETAIL_COLS} FROM image_details WHERE {among}")
            })
            .await?;
        rows.iter().map(details_row).collect()
    }

    async fn set_motion(&self, image_id: Uuid, clip: Clip) -> Result<()> {
        sqlx::query(
            "INSERT INTO image_details (image_id, motion) VALUES ($1, $2) \
             ON CONFLICT (image_id) DO UPDATE SET motion = excluded.motion",
        )
        .bind(image_id.to_string())
        .bind(to_json(&clip)?)
        .execute(&self.pool)
        .await
        .or_internal()?;
        Ok(())
    }

    async fn set_placeholder(&self, image_id: Uuid, hash: &str, salient: Point) -> Result<()> {
        sqlx::query(
            "INSERT INTO image_details (image_id, placeholder, salient) VALUES ($1, $2, $3) \
             ON CONFLICT (image_id) DO UPDATE SET placeholder = excluded.placeholder, \
             salient = excluded.salient",
        )
        .bind(image_id.to_string())
        .bind(hash.to_owned())
        .bind(to_json(&salient)?)
        .execute(&self.pool)
        .await
        .or_internal()?;
        Ok(())
    }

    async fn set_focus(&self, image_id: Uuid, focus: Option<Point>, bump: &[String]) -> Result<()> {
        let mut tx = self.pool.begin().await.or_internal()?;
        // The photo first, as a deletion takes it: one deleted meanwhile is
        // not found, not a foreign key's failure.
        if !lock_parent(&mut tx, self.engine, "images", image_id).await? {
            return Err(Error::NotFound);
        }
        sqlx::query(
            "INSERT INTO image_details (image_id, focus) VALUES ($1, $2) \
             ON CONFLICT (image_id) DO UPDATE SET focus = excluded.focus",
        )
        .bind(image_id.to_string())
        .bind(focus.map(|f| to_json(&f)).transpose()?)
        .execute(&mut *tx)
        .await
        .or_internal()?;
        if !bump.is_empty() {
            let q = format!(
                "UPDATE renders SET version = version + 1 WHERE image_id = $1 AND code IN ({})",
                (2..2 + bump.len())
                    .map(|i| format!("${i}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            let mut query = sqlx::query(&q).bind(image_id.to_string());
            for code in bump {
                query = query.bind(code.clone());
            }
            query.execute(&mut *tx).await.or_internal()?;
        }
        tx.commit().await.or_internal()?;
        Ok(())
    }
}

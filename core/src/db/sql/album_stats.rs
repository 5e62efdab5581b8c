//! A folder's stats (`AlbumViewRepo::album_counts`) from the counts the
//! database keeps per folder and class (`album_stats`, migration 0014,
//! written by triggers on `images`): a handful of rows whatever the
//! folder's size. Grouping the folder's photos on each call sorted all of
//! them.
//!
//! The kept class is the photo's own, a takedown carried from another
//! folder included (`images.carried`, kept from `takedown_covers`); the
//! folder's own takedown applies here.

use super::SqlRepo;
use crate::db::album_views::AlbumCounts;
use crate::error::OrInternal;
use crate::Result;
use sqlx::any::AnyRow;
use sqlx::Row;
use std::collections::HashMap;

/// The kept rows, and one more if the folder itself is taken down.
const QUERY: &str = "SELECT 'kept' AS part, class, n, gps_on, gps_off, date_on, date_off, \
       camera_on, camera_off, captioned FROM folder_stats WHERE album_id = $1 \
     UNION ALL \
     SELECT 'down', 'taken_down', 0, 0, 0, 0, 0, 0, 0, 0 FROM albums \
       WHERE id = $1 AND taken_down_at IS NOT NULL";

/// One class's figures: its photos and, of them, the tallies the stats
/// show for visible photos.
#[derive(Default, Clone, Copy)]
struct Tally([i64; 8]);

impl Tally {
    fn read(row: &AnyRow) -> Result<Tally> {
        let mut t = [0; 8];
        for (i, col) in t.iter_mut().enumerate() {
            *col = row.try_get::<i64, _>(i + 2).or_internal()?;
        }
        Ok(Tally(t))
    }
}

pub(super) async fn album_counts(repo: &SqlRepo, album: uuid::Uuid) -> Result<AlbumCounts> {
    let rows = sqlx::query(QUERY)
        .bind(album.to_string())
        .fetch_all(&repo.pool)
        .await
        .or_internal()?;
    let mut classes: HashMap<String, Tally> = HashMap::new();
    let mut down = false;
    for row in &rows {
        let part: String = row.try_get("part").or_internal()?;
        if part == "down" {
            down = true;
        } else {
            classes.insert(row.try_get("class").or_internal()?, Tally::read(row)?);
        }
    }
    Ok(counts(&classes, down))
}

fn counts(classes: &HashMap<String, Tally>, album_down: bool) -> AlbumCounts {
    let n = |class: &str| classes.get(class).map_or(0, |t| t.0[0]);
    let total = classes.values().map(|t| t.0[0]).sum();
    if album_down {
        return AlbumCounts {
            total,
            taken_down: total,
            ..AlbumCounts::default()
        };
    }
    let v = classes.get("visible").copied().unwrap_or_default().0;
    AlbumCounts {
        total,
        processing: n("processing"),
        failed: n("failed"),
        too_small: n("too_small"),
        taken_down: n("taken_down"),
        visible: v[0],
        gps: (v[1], v[2]),
        date: (v[3], v[4]),
        camera: (v[5], v[6]),
        captioned: v[7],
    }
}

#[cfg(test)]
#[path = "album_stats_tests.rs"]
mod tests;

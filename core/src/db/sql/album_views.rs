//! `AlbumViewRepo` for `SqlRepo`: keyset walks of a folder's visible photos.
//!
//! Each order is one or two segments, each walked over the index that
//! matches its filter and order (`images_album_shown_{taken,uploaded,
//! manual}`), from the anchor photo's own sort keys: a page costs its own
//! rows whatever the folder's size.

use super::image_rows::{image_row, IMAGE_COLS};
use super::{bind_all, map_rows, SqlRepo, Val};
use crate::db::album_views::{AlbumCounts, AlbumViewRepo, Walk};
use crate::error::OrInternal;
use crate::Result;
use async_trait::async_trait;
use lightbox_domain::album::Order;
use lightbox_domain::image::Image;
use sqlx::Row;
use std::sync::LazyLock;
use uuid::Uuid;

/// What a photo needs of its own row to be visible
/// (`domain::image::Image::eligibility`): the condition of the partial
/// indexes the walks use (migration 0013), word for word.
pub(super) const SHOWN: &str =
    "status = 'ready' AND taken_down_at IS NULL AND (width >= 200 OR height >= 200)";

/// Taken down by a folder: one the photo was in (a carried takedown), a
/// probe of the covers' key per photo walked (`id IN (SELECT image_id
/// FROM takedown_covers)` hashed every cover of every folder on each
/// statement, so one big folder taken down slowed every walk), or its own
/// (`$1`, which runs once).
const CARRIED: &str = "EXISTS (SELECT 1 FROM takedown_covers c WHERE c.image_id = images.id)";
const ALBUM_DOWN: &str =
    "EXISTS (SELECT 1 FROM albums a WHERE a.id = $1 AND a.taken_down_at IS NOT NULL)";

static VISIBLE: LazyLock<String> =
    LazyLock::new(|| format!("album_id = $1 AND {SHOWN} AND NOT {CARRIED} AND NOT {ALBUM_DOWN}"));

#[derive(Clone, Copy)]
struct Key {
    col: &'static str,
    desc: bool,
}

const fn key(col: &'static str, desc: bool) -> Key {
    Key { col, desc }
}

struct Segment {
    filter: &'static str,
    keys: &'static [Key],
}

const TAKEN_DESC: &[Key] = &[key("sort_at", true), key("id", true)];
const TAKEN_ASC: &[Key] = &[key("sort_at", false), key("id", false)];
const UPLOADED_DESC: &[Key] = &[key("created_at", true), key("id", true)];
const UPLOADED_ASC: &[Key] = &[key("created_at", false), key("id", false)];
const PLACED: &[Key] = &[
    key("position", false),
    key("sort_at", true),
    key("id", true),
];

/// `domain::album::Policy::sort` as segments walked one after the other:
/// manual is the placed photos by position, then the others newest taken
/// first.
fn segments(order: Order) -> Vec<Segment> {
    let all = |keys| vec![Segment { filter: "", keys }];
    match order {
        Order::TakenDesc => all(TAKEN_DESC),
        Order::TakenAsc => all(TAKEN_ASC),
        Order::UploadedDesc => all(UPLOADED_DESC),
        Order::UploadedAsc => all(UPLOADED_ASC),
        Order::Manual => vec![
            Segment {
                filter: "AND position IS NOT NULL",
                keys: PLACED,
            },
            Segment {
                filter: "AND position IS NULL",
                keys: TAKEN_DESC,
            },
        ],
    }
}

/// A walk starts from a visible photo's own sort keys.
fn key_value(from: &Image, col: &str) -> Val {
    match col {
        "id" => Val::Text(from.id.to_string()),
        "sort_at" => Val::Int(from.sort_at),
        "created_at" => Val::Int(from.created_at),
        _ => Val::Int(from.position.unwrap_or_default()),
    }
}

/// Which segment of the order holds the photo.
fn segment_of(from: &Image, order: Order) -> usize {
    usize::from(order == Order::Manual && from.position.is_none())
}

/// `AND` the rows strictly past the anchor in the walk's direction, with
/// its values bound from `$2`. One direction is a row comparison (an index
/// bound on both engines); mixed directions spell the comparison out
/// behind a bound on the first key.
fn past(keys: &[Key], backward: bool, at: &Image, vals: &mut Vec<Val>) -> String {
    let op = |k: &Key| if k.desc != backward { "<" } else { ">" };
    let mut slot = |k: &Key| {
        vals.push(key_value(at, k.col));
        format!("${}", vals.len() + 1)
    };
    if keys.iter().all(|k| k.desc == keys[0].desc) {
        let cols: Vec<&str> = keys.iter().map(|k| k.col).collect();
        let slots: Vec<String> = keys.iter().map(&mut slot).collect();
        return format!(
            "AND ({}) {} ({})",
            cols.join(", "),
            op(&keys[0]),
            slots.join(", ")
        );
    }
    let slots: Vec<String> = keys.iter().map(&mut slot).collect();
    let mut cond = format!(
        "{} {} {}",
        keys[keys.len() - 1].col,
        op(&keys[keys.len() - 1]),
        slots[keys.len() - 1]
    );
    for (k, s) in keys.iter().zip(&slots).rev().skip(1) {
        cond = format!(
            "({c} {o} {s} OR ({c} = {s} AND {cond}))",
            c = k.col,
            o = op(k)
        );
    }
    format!(
        "AND {c} {o}= {s} AND {cond}",
        c = keys[0].col,
        o = op(&keys[0]),
        s = slots[0]
    )
}

fn order_by(keys: &[Key], backward: bool) -> String {
    let dir = |k: &Key| if k.desc != backward { "DESC" } else { "ASC" };
    let parts: Vec<String> = keys
        .iter()
        .map(|k| format!("{} {}", k.col, dir(k)))
        .collect();
    parts.join(", ")
}

impl SqlRepo {
    /// The segments a walk goes through, the first from the anchor on.
    async fn stretch(
        &self,
        album: Uuid,
        order: Order,
        from: Option<Uuid>,
        backward: bool,
    ) -> Result<Option<Vec<(Segment, Option<Image>)>>> {
        let anchor = match from {
            None => None,
            Some(id) => match self.album_photo(album, id).await? {
                None => return Ok(None),
                Some(a) => Some(a),
            },
        };
        let segs = segments(order);
        let last = segs.len() - 1;
        let start = anchor
            .as_ref()
            .map_or(if backward { last } else { 0 }, |a| segment_of(a, order));
        // Backward goes through the anchor's segment and those before it,
        // last first.
        let picked: Vec<Segment> = if backward {
            segs.into_iter().take(start + 1).rev().collect()
        } else {
            segs.into_iter().skip(start).collect()
        };
        let mut anchor = anchor;
        let out = picked.into_iter().map(|s| (s, anchor.take())).collect();
        Ok(Some(out))
    }
}

#[async_trait]
impl AlbumViewRepo for SqlRepo {
    async fn album_walk(&self, album: Uuid, walk: Walk) -> Result<Option<Vec<Image>>> {
        let Some(stretch) = self
            .stretch(album, walk.order, walk.from, walk.backward)
            .await?
        else {
            return Ok(None);
        };
        let want = u64::from(walk.skip) + u64::from(walk.limit);
        let mut out: Vec<Image> = Vec::new();
        for (seg, anchor) in stretch {
            let left = want.saturating_sub(out.len() as u64);
            if left == 0 {
                break;
            }
            let mut vals = Vec::new();
            let cond = anchor
                .as_ref()
                .map(|a| past(seg.keys, walk.backward, a, &mut vals))
                .unwrap_or_default();
            let q = format!(
                "SELECT {IMAGE_COLS} FROM images WHERE {} {} {cond} ORDER BY {} LIMIT {left}",
                *VISIBLE,
                seg.filter,
                order_by(seg.keys, walk.backward)
            );
            let rows = bind_all(sqlx::query(&q).bind(album.to_string()), vals)
                .fetch_all(&self.pool)
                .await
                .or_internal()?;
            out.extend(map_rows(&rows, image_row)?);
        }
        let skip = out.len().min(walk.skip as usize);
        out.drain(..skip);
        Ok(Some(out))
    }

    async fn album_rank(
        &self,
        album: Uuid,
        order: Order,
        photo: Option<Uuid>,
    ) -> Result<Option<i64>> {
        let Some(stretch) = self.stretch(album, order, photo, true).await? else {
            return Ok(None);
        };
        let mut n = 0;
        for (seg, anchor) in stretch {
            let mut vals = Vec::new();
            let cond = anchor
                .as_ref()
                .map(|a| past(seg.keys, true, a, &mut vals))
                .unwrap_or_default();
            let q = format!(
                "SELECT COUNT(*) AS n FROM images WHERE {} {} {cond}",
                *VISIBLE, seg.filter
            );
            let row = bind_all(sqlx::query(&q).bind(album.to_string()), vals)
                .fetch_one(&self.pool)
                .await
                .or_internal()?;
            n += row.try_get::<i64, _>("n").or_internal()?;
        }
        Ok(Some(n))
    }

    async fn album_photo(&self, album: Uuid, photo: Uuid) -> Result<Option<Image>> {
        let q = format!(
            "SELECT {IMAGE_COLS} FROM images WHERE {} AND id = $2",
            *VISIBLE
        );
        let row = sqlx::query(&q)
            .bind(album.to_string())
            .bind(photo.to_string())
            .fetch_optional(&self.pool)
            .await
            .or_internal()?;
        row.as_ref().map(image_row).transpose()
    }

    async fn album_counts(&self, album: Uuid) -> Result<AlbumCounts> {
        super::album_stats::album_counts(self, album).await
    }
}

#[cfg(test)]
mod shown {
    use super::SHOWN;
    use lightbox_domain::image::MIN_VISIBLE_SIDE;

    #[test]
    fn the_partial_indexes_say_what_the_walks_ask() {
        assert!(SHOWN.contains(&format!("width >= {MIN_VISIBLE_SIDE}")));
        for engine in ["sqlite", "postgres"] {
            let path = format!(
                "{}/migrations/{engine}/0013_folder_pages.sql",
                env!("CARGO_MANIFEST_DIR")
            );
            let sql = std::fs::read_to_string(path).unwrap();
            assert_eq!(
                sql.matches(&format!("WHERE {SHOWN};")).count(),
                3,
                "{engine}"
            );
        }
    }
}

#[cfg(test)]
#[path = "album_views_tests.rs"]
pub(crate) mod tests;

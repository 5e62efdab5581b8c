//! The owner's view of images (`ImageView`).
//!
//! On SQLite, one statement and one row: the database builds the whole page
//! as a JSON array, each photo with its renders, custom crops, details and
//! failure reason. Five statements and 300-odd rows a page spent most of
//! their time handing rows from SQLite's thread to the handler one at a
//! time and copying their values, not in SQL (p50 of a 50-photo page at
//! 100,000 photos: 5.4 -> 2.7 ms on a 2-core VM).
//!
//! On PostgreSQL the same statement was slower than five: the server takes
//! a few microseconds for each value it puts into JSON, all on one backend,
//! where four of the five run side by side. There the photos are read
//! first and the rest beside each other (`assembled`).

use super::details::parsed;
use super::image_rows::{image_row, ImageCols, IMAGE_COLS, IMAGE_FIELDS};
use super::renders::{in_code_order, RenderCols, Specs};
use super::{bind_all, unreadable, Engine, SqlRepo, Val};
use crate::db::{BudgetRepo, DetailsRepo, ImageView, RenderRepo};
use crate::domain::crop::CropSpec;
use crate::domain::details::Details;
use crate::domain::image::{Image, ImageStatus};
use crate::Result;
use serde::Deserialize;
use sqlx::Row;
use std::collections::HashMap;
use uuid::Uuid;

/// The views of the images `filter` (`WHERE ... ORDER BY ... LIMIT ...`
/// over `images`, with `vals` bound) picks, in its order.
pub(super) async fn read(repo: &SqlRepo, filter: &str, vals: Vec<Val>) -> Result<Vec<ImageView>> {
    match repo.engine {
        Engine::Sqlite => {
            let q = page_query(filter);
            let row = bind_all(sqlx::query(&q), vals)
                .fetch_one(&repo.pool)
                .await?;
            views(&row.try_get::<String, _>("page")?)
        }
        Engine::Postgres => assembled(repo, filter, vals).await,
    }
}

/// The views of the images `filter` picks (PostgreSQL): the photos, then
/// their renders, custom crops, failure reasons and details from four reads
/// side by side, each on its own connection. (Picking the photos again in
/// each of the four, to start all five at once, took no less time and more
/// of the server's CPU.)
async fn assembled(repo: &SqlRepo, filter: &str, vals: Vec<Val>) -> Result<Vec<ImageView>> {
    let q = format!("SELECT {IMAGE_COLS} FROM images {filter}");
    let rows = bind_all(sqlx::query(&q), vals)
        .fetch_all(&repo.pool)
        .await?;
    let images = rows.iter().map(image_row).collect::<Result<Vec<Image>>>()?;
    let ids: Vec<Uuid> = images.iter().map(|i| i.id).collect();
    let failed: Vec<Uuid> = images
        .iter()
        .filter(|i| i.status == ImageStatus::Failed)
        .map(|i| i.id)
        .collect();
    let (renders, crops, reasons, details) = tokio::try_join!(
        repo.renders_of(&ids),
        repo.custom_crops_of(&ids),
        repo.failure_reasons(&failed),
        repo.details_of(&ids),
    )?;
    let mut renders = grouped(renders.into_iter().map(|r| (r.image_id, r)));
    let mut crops = grouped(crops);
    let mut reasons: HashMap<Uuid, String> = reasons.into_iter().collect();
    let mut details: HashMap<Uuid, Details> = details.into_iter().collect();
    Ok(images
        .into_iter()
        .map(|image| {
            let id = image.id;
            ImageView {
                renders: renders.remove(&id).unwrap_or_default(),
                custom_crops: crops.remove(&id).unwrap_or_default(),
                failure_reason: reasons.remove(&id),
                details: details.remove(&id).unwrap_or_default(),
                image,
            }
        })
        .collect())
}

/// Each image's items, in the order they came.
fn grouped<T>(items: impl IntoIterator<Item = (Uuid, T)>) -> HashMap<Uuid, Vec<T>> {
    let mut by_image: HashMap<Uuid, Vec<T>> = HashMap::new();
    for (id, item) in items {
        by_image.entry(id).or_default().push(item);
    }
    by_image
}

/// The page query (SQLite): `filter` is the `WHERE ... ORDER BY ... LIMIT
/// ...` over `images` that picks the photos. Its one row's `page` is read
/// by `views`.
/// The page's and the renders' aggregates are not ordered (an ordered one
/// copies every photo's JSON into a sorter): `views` puts them in order.
/// The custom crops' is (few rows; `ORDER BY` in an aggregate needs SQLite
/// 3.44, and the bundled one is 3.46).
fn page_query(filter: &str) -> String {
    // A subquery's value loses SQLite's JSON subtype: `json()` gives it back.
    let photos = format!(
        "SELECT {IMAGE_COLS}, \
         (SELECT json_group_array(json_array({RENDER_FIELDS})) FROM renders r \
           WHERE r.image_id = images.id) AS renders_json, \
         (SELECT json_group_array(c.spec ORDER BY c.created_at, c.code) FROM custom_crops c \
           WHERE c.image_id = images.id) AS crops_json, \
         CASE WHEN status = 'failed' THEN \
           (SELECT f.reason FROM image_failures f WHERE f.image_id = images.id) END AS failure_reason, \
         d.focus, d.placeholder, d.motion, d.salient \
         FROM images LEFT JOIN image_details d ON d.image_id = images.id {filter}"
    );
    format!(
        "SELECT json_group_array(json_array(json_array({IMAGE_FIELDS}), json(renders_json), \
         json(crops_json), failure_reason, focus, placeholder, motion, salient)) AS page \
         FROM ({photos}) AS v"
    )
}

/// One render's columns, in the order of `renders::RenderCols`.
const RENDER_FIELDS: &str =
    "r.code, r.spec, r.version, r.produced_version, r.width, r.height, r.size_bytes, r.blob_key";

/// One photo of the page, in the order `page_query` builds it.
#[derive(Deserialize)]
struct ViewCols {
    image: ImageCols,
    renders: Vec<RenderCols>,
    crops: Vec<String>,
    failure_reason: Option<String>,
    focus: Option<String>,
    placeholder: Option<String>,
    motion: Option<String>,
    salient: Option<String>,
}

/// The photos of `page_query`'s `page`, newest first by (sort_at, id) as
/// the list walks them, parsing each distinct render spec once.
fn views(page: &str) -> Result<Vec<ImageView>> {
    let cols: Vec<ViewCols> = serde_json::from_str(page).map_err(|e| unreadable("page", e))?;
    let mut specs = Specs::default();
    let mut views = cols
        .into_iter()
        .map(|c| view(c, &mut specs))
        .collect::<Result<Vec<_>>>()?;
    // Ids are canonical UUID text, whose order is that of the bytes.
    views.sort_unstable_by_key(|v| std::cmp::Reverse((v.image.sort_at, v.image.id)));
    Ok(views)
}

fn view(c: ViewCols, specs: &mut Specs) -> Result<ImageView> {
    let image = c.image.into_image()?;
    let renders = c
        .renders
        .into_iter()
        .map(|cols| cols.into_render(image.id, specs))
        .collect::<Result<Vec<_>>>()?;
    let custom_crops = c
        .crops
        .iter()
        .map(|text| serde_json::from_str::<CropSpec>(text).map_err(|e| unreadable("spec", e)))
        .collect::<Result<_>>()?;
    Ok(ImageView {
        image,
        renders: in_code_order(renders),
        custom_crops,
        failure_reason: c.failure_reason,
        details: Details {
            focus: parsed(c.focus),
            placeholder: c.placeholder,
            motion: parsed(c.motion),
            salient: parsed(c.salient),
        },
    })
}

#[cfg(test)]
#[path = "image_views_tests.rs"]
mod tests;

//! The owner's view of images (`ImageView`).
//!
//! On SQLite, one statement and one row: the database builds the whole page
//! as a JSON array, each photo with its renders, custom crops, details and
//! failure reason. Five statements and 300-odd rows a page spent most of
//! their time handing rows from SQLite's thread to the handler one at a
//! time and copying their values, not in SQL (bench/listing.sh).
//!
//! On PostgreSQL the same statement was slower: the server takes a few
//! microseconds for each value it puts into JSON. There one statement reads
//! the photos with their renders as arrays (`assembled`), through the typed
//! pool (`SqlRepo::typed`).

use super::details::parsed;
use super::image_rows::{ImageCols, IMAGE_COLS, IMAGE_FIELDS};
use super::render_rows::{in_code_order, RenderCols, Specs};
use super::{bind_all, unreadable, SqlRepo, Val};
use crate::db::ImageView;
use crate::error::OrInternal;
use crate::Result;
use lightbox_domain::crop::CropSpec;
use lightbox_domain::details::Details;
use lightbox_domain::render::Render;
use serde::Deserialize;
use sqlx::postgres::PgRow;
use sqlx::{FromRow, PgPool, Row};
use uuid::Uuid;

/// The views of the images `filter` (`WHERE ... ORDER BY ... LIMIT ...`
/// over `images`, with `vals` bound) picks, in its order.
pub(super) async fn read(repo: &SqlRepo, filter: &str, vals: Vec<Val>) -> Result<Vec<ImageView>> {
    match &repo.typed {
        Some(pg) => assembled(pg, filter, vals).await,
        None => {
            let q = page_query(filter);
            let row = bind_all(sqlx::query(&q), vals)
                .fetch_one(&repo.pool)
                .await
                .or_internal()?;
            views(&row.try_get::<String, _>("page").or_internal()?)
        }
    }
}

/// The views of the images `filter` picks (PostgreSQL, typed rows), in one
/// statement: the photos with their details, custom crops and failure
/// reasons, each with its renders as one array a column (`RenderArrays`).
/// PostgreSQL sends arrays in binary; folding four renders a photo into
/// JSON cost it microseconds a value. The join is lateral and under the
/// filter's `LIMIT`, so renders are read for the page's photos only (a
/// subquery for the photos was worse: its generic plan, guessing at the
/// limit, sorted the whole library).
async fn assembled(pg: &PgPool, filter: &str, vals: Vec<Val>) -> Result<Vec<ImageView>> {
    let q = format!(
        "SELECT {IMAGE_COLS}, d.focus, d.placeholder, d.motion, d.salient, \
         (SELECT '[' || string_agg(c.spec, ',' ORDER BY c.created_at, c.code) || ']' \
           FROM custom_crops c WHERE c.image_id = images.id) AS crops_json, \
         CASE WHEN status = 'failed' THEN \
           (SELECT f.reason FROM image_failures f WHERE f.image_id = images.id) END AS failure_reason, \
         r.* FROM images LEFT JOIN image_details d ON d.image_id = images.id \
         LEFT JOIN LATERAL ({RENDER_ARRAYS} WHERE image_id = images.id) AS r ON true {filter}"
    );
    let rows = bind_all(sqlx::query(&q), vals)
        .fetch_all(pg)
        .await
        .or_internal()?;
    let mut specs = Specs::default();
    rows.iter().map(|row| photo_view(row, &mut specs)).collect()
}

/// A photo's renders, one array a column. Aggregates over one scan see its
/// rows in one order, so the arrays line up; with no renders each is NULL.
const RENDER_ARRAYS: &str = "SELECT array_agg(code) AS r_code, array_agg(spec) AS r_spec, \
     array_agg(version) AS r_version, array_agg(produced_version) AS r_produced_version, \
     array_agg(width) AS r_width, array_agg(height) AS r_height, \
     array_agg(size_bytes) AS r_size_bytes, array_agg(blob_key) AS r_blob_key FROM renders";

/// The columns of `RENDER_ARRAYS`.
#[derive(FromRow)]
struct RenderArrays {
    r_code: Option<Vec<String>>,
    r_spec: Option<Vec<String>>,
    r_version: Option<Vec<i64>>,
    r_produced_version: Option<Vec<Option<i64>>>,
    r_width: Option<Vec<Option<i64>>>,
    r_height: Option<Vec<Option<i64>>>,
    r_size_bytes: Option<Vec<Option<i64>>>,
    r_blob_key: Option<Vec<Option<String>>>,
}

impl RenderArrays {
    fn into_renders(self, image_id: Uuid, specs: &mut Specs) -> Result<Vec<Render>> {
        let code = self.r_code.unwrap_or_default();
        let n = code.len();
        let spec = same_length(self.r_spec, n)?;
        let version = same_length(self.r_version, n)?;
        let produced = same_length(self.r_produced_version, n)?;
        let width = same_length(self.r_width, n)?;
        let height = same_length(self.r_height, n)?;
        let size_bytes = same_length(self.r_size_bytes, n)?;
        let blob_key = same_length(self.r_blob_key, n)?;
        let mut columns = (
            spec.into_iter(),
            version.into_iter(),
            produced.into_iter(),
            width.into_iter(),
            height.into_iter(),
            size_bytes.into_iter(),
            blob_key.into_iter(),
        );
        let renders = code
            .into_iter()
            .filter_map(|code| {
                Some(RenderCols {
                    code,
                    spec: columns.0.next()?,
                    version: columns.1.next()?,
                    produced_version: columns.2.next()?,
                    width: columns.3.next()?,
                    height: columns.4.next()?,
                    size_bytes: columns.5.next()?,
                    blob_key: columns.6.next()?,
                })
            })
            .map(|cols| cols.into_render(image_id, specs))
            .collect::<Result<Vec<_>>>()?;
        Ok(in_code_order(renders))
    }
}

/// An aggregate's array, checked to have one value for each render.
fn same_length<T>(array: Option<Vec<T>>, n: usize) -> Result<Vec<T>> {
    let array = array.unwrap_or_default();
    if array.len() != n {
        return Err(unreadable("renders", "render arrays of different lengths"));
    }
    Ok(array)
}

/// A photo of `assembled`'s statement.
fn photo_view(row: &PgRow, specs: &mut Specs) -> Result<ImageView> {
    let p = PhotoRow::from_row(row).or_internal()?;
    let image = p.image.into_image()?;
    let renders = RenderArrays::from_row(row)
        .or_internal()?
        .into_renders(image.id, specs)?;
    let custom_crops = match p.crops_json {
        Some(text) => serde_json::from_str(&text).map_err(|e| unreadable("spec", e))?,
        None => Vec::new(),
    };
    Ok(ImageView {
        image,
        renders,
        custom_crops,
        failure_reason: p.failure_reason,
        details: details(p.focus, p.placeholder, p.motion, p.salient),
    })
}

/// One photo of `assembled`'s statement.
#[derive(FromRow)]
struct PhotoRow {
    #[sqlx(flatten)]
    image: ImageCols,
    focus: Option<String>,
    placeholder: Option<String>,
    motion: Option<String>,
    salient: Option<String>,
    crops_json: Option<String>,
    failure_reason: Option<String>,
}

/// A photo's details from their stored columns.
fn details(
    focus: Option<String>,
    placeholder: Option<String>,
    motion: Option<String>,
    salient: Option<String>,
) -> Details {
    Details {
        focus: parsed(focus),
        placeholder,
        motion: parsed(motion),
        salient: parsed(salient),
    }
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

/// One render's columns, in the order of `render_rows::RenderCols`.
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
        details: details(c.focus, c.placeholder, c.motion, c.salient),
    })
}

#[cfg(test)]
#[path = "image_views_tests.rs"]
mod tests;

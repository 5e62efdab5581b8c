//! A render's row as the SQL code reads it: its columns, and the parsing
//! of the spec each carries (once per distinct text).

use super::{unreadable, unsigned_of, uuid};
use crate::error::OrInternal;
use crate::Result;
use lightbox_domain::crop::CropSpec;
use lightbox_domain::render::{Produced, Render};
use sqlx::any::AnyRow;
use sqlx::FromRow;
use uuid::Uuid;

pub(super) const RENDER_COLS: &str =
    "image_id, code, spec, version, produced_version, width, height, size_bytes, blob_key";

/// A render's columns but its image's id, read from a row by name or, in
/// this order, from a JSON array (`image_views`).
#[derive(sqlx::FromRow, serde::Deserialize)]
pub(super) struct RenderCols {
    pub(super) code: String,
    pub(super) spec: String,
    pub(super) version: i64,
    pub(super) produced_version: Option<i64>,
    pub(super) width: Option<i64>,
    pub(super) height: Option<i64>,
    pub(super) size_bytes: Option<i64>,
    pub(super) blob_key: Option<String>,
}

impl RenderCols {
    pub(super) fn into_render(self, image_id: Uuid, specs: &mut Specs) -> Result<Render> {
        let produced = match (self.produced_version, self.blob_key) {
            (Some(version), Some(blob_key)) => Some(Produced {
                version,
                width: size(self.width, "width")?,
                height: size(self.height, "height")?,
                size_bytes: size(self.size_bytes, "size_bytes")?,
                blob_key,
            }),
            _ => None,
        };
        Ok(Render {
            image_id,
            code: self.code,
            spec: specs.parse(self.spec)?,
            version: self.version,
            produced,
        })
    }
}

/// A size of a produced render: present and never negative.
fn size<T: TryFrom<i64>>(n: Option<i64>, col: &str) -> Result<T> {
    unsigned_of(col, n.ok_or_else(|| unreadable(col, "NULL"))?)
}

/// Many renders share a few specs (the presets): each distinct spec text
/// is parsed once.
#[derive(Default)]
pub(super) struct Specs(std::collections::HashMap<String, CropSpec>);

impl Specs {
    pub(super) fn parse(&mut self, text: String) -> Result<CropSpec> {
        if let Some(spec) = self.0.get(&text) {
            return Ok(spec.clone());
        }
        let spec: CropSpec = serde_json::from_str(&text).map_err(|e| unreadable("spec", e))?;
        self.0.insert(text, spec.clone());
        Ok(spec)
    }
}

pub(super) fn renders_parsing_once(rows: &[AnyRow]) -> Result<Vec<Render>> {
    let mut specs = Specs::default();
    rows.iter()
        .map(|r| {
            RenderCols::from_row(r)
                .or_internal()?
                .into_render(uuid(r, "image_id")?, &mut specs)
        })
        .collect()
}

/// By image, then bytewise by code, on both engines alike (PostgreSQL's
/// `ORDER BY` follows the database's collation, which may put `a-z`
/// after `ab`): every view of a photo lists its renders in one order.
pub(super) fn in_code_order(mut renders: Vec<Render>) -> Vec<Render> {
    renders.sort_unstable_by(|a, b| (a.image_id, &a.code).cmp(&(b.image_id, &b.code)));
    renders
}

//! A photo's row: the columns every read of `images` selects, and the
//! domain `Image` they make.

use super::{lenient_of, opt_state_of, state_of, unsigned_of, uuid_of};
use crate::error::OrInternal;
use crate::Result;
use lightbox_domain::crop::Format;
use lightbox_domain::image::{Image, ImageStatus, Visibility};
use lightbox_domain::moderation::Takedown;
use sqlx::any::AnyRow;
use sqlx::FromRow;

/// `taken_down_at`/`takedown_reason` are the photo's effective takedown:
/// its own, else one carried from a folder it was in when that folder was
/// taken down, else its current folder's. Used as `... FROM images`.
///
/// The covers are read only for a photo whose `carried` (its count of
/// covers, kept by migration 0014's triggers) is above zero; the others,
/// nearly all, probe only their folder: a page's cost grows with the
/// lookups a photo makes (bench/listing.sh). Owners, downloads
/// and visitors' eligibility now rest on `carried` (0014's comment that
/// only the stats read it is older, and applied migrations stay as they
/// are), so the kept counts test holds it to the covers after every kind
/// of write.
pub(super) const IMAGE_COLS: &str =
    "id, owner_id, album_id, title, description, status, format, width, height, \
     size_bytes, original_key, exif, exif_visibility, visibility, taken_at, sort_at, created_at, \
     position, membership, \
     COALESCE(taken_down_at, CASE WHEN carried > 0 \
       THEN (SELECT MIN(c.at) FROM takedown_covers c WHERE c.image_id = images.id) \
       ELSE (SELECT a.taken_down_at FROM albums a WHERE a.id = images.album_id) END) AS taken_down_at, \
     CASE WHEN taken_down_at IS NOT NULL THEN takedown_reason \
       WHEN carried > 0 THEN COALESCE( \
         (SELECT c.reason FROM takedown_covers c WHERE c.image_id = images.id \
          ORDER BY c.at LIMIT 1), \
         (SELECT a.takedown_reason FROM albums a WHERE a.id = images.album_id)) \
       ELSE (SELECT a.takedown_reason FROM albums a WHERE a.id = images.album_id) \
     END AS takedown_reason";

/// The columns of `IMAGE_COLS`, read from a row or, in that order, from a
/// JSON array (`image_views`).
#[derive(sqlx::FromRow, serde::Deserialize)]
pub(super) struct ImageCols {
    id: String,
    owner_id: String,
    album_id: String,
    title: String,
    description: String,
    status: String,
    format: String,
    width: i64,
    height: i64,
    size_bytes: i64,
    original_key: String,
    exif: String,
    exif_visibility: String,
    visibility: Option<String>,
    taken_at: Option<i64>,
    sort_at: i64,
    created_at: i64,
    position: Option<i64>,
    membership: i64,
    taken_down_at: Option<i64>,
    takedown_reason: Option<String>,
}

/// `ImageCols`' names, for building the JSON array.
pub(super) const IMAGE_FIELDS: &str =
    "id, owner_id, album_id, title, description, status, format, width, height, size_bytes, \
     original_key, exif, exif_visibility, visibility, taken_at, sort_at, created_at, position, \
     membership, taken_down_at, takedown_reason";

impl ImageCols {
    pub(super) fn into_image(self) -> Result<Image> {
        Ok(Image {
            id: uuid_of("id", &self.id)?,
            owner_id: uuid_of("owner_id", &self.owner_id)?,
            album_id: uuid_of("album_id", &self.album_id)?,
            title: self.title,
            description: self.description,
            status: state_of("status", &self.status, ImageStatus::parse)?,
            format: state_of("format", &self.format, Format::parse)?,
            width: unsigned_of("width", self.width)?,
            height: unsigned_of("height", self.height)?,
            size_bytes: unsigned_of("size_bytes", self.size_bytes)?,
            original_key: self.original_key,
            exif: lenient_of(&self.exif),
            exif_visibility: lenient_of(&self.exif_visibility),
            visibility: opt_state_of("visibility", self.visibility, Visibility::parse)?,
            taken_at: self.taken_at,
            sort_at: self.sort_at,
            created_at: self.created_at,
            position: self.position,
            membership: self.membership,
            takedown: Takedown {
                at: self.taken_down_at,
                reason: self.takedown_reason,
            },
        })
    }
}

pub(super) fn image_row(r: &AnyRow) -> Result<Image> {
    ImageCols::from_row(r).or_internal()?.into_image()
}

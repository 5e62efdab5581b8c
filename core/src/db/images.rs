//! Rows and the repository role for folders' images and their renders.

use crate::Result;
use async_trait::async_trait;
use uuid::Uuid;

/// Where an image's wanted render comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecSource {
    Preset,
    /// A crop rule of the image's folder.
    FolderRule,
    /// One of the image's own custom crops.
    Custom,
}

#[derive(Debug, Clone)]
pub struct ImageRow {
    pub id: Uuid,
    pub owner_id: Uuid,
    pub album_id: Uuid,
    pub title: String,
    pub description: String,
    pub status: String,
    pub format: String,
    pub width: i64,
    pub height: i64,
    pub size_bytes: i64,
    pub original_key: String,
    /// JSON of `render::exif::ExifInfo`.
    pub exif: String,
    /// JSON of `images::ExifVisibility`.
    pub exif_visibility: String,
    pub visibility: Option<String>,
    pub taken_at: Option<i64>,
    /// `taken_at`, else `created_at`: the list order.
    pub sort_at: i64,
    pub created_at: i64,
    /// Place in its folder's manual order (`album.reorder`).
    pub position: Option<i64>,
    pub taken_down_at: Option<i64>,
    pub takedown_reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderRow {
    pub image_id: Uuid,
    pub code: String,
    /// JSON of the `CropSpec`; a change of it is a new version.
    pub spec: String,
    pub version: i64,
    pub produced_version: Option<i64>,
    pub width: Option<i64>,
    pub height: Option<i64>,
    pub size_bytes: Option<i64>,
    pub blob_key: Option<String>,
}

/// A produced render, as `/i/...` serves it.
#[derive(Debug, Clone)]
pub struct ServedRender {
    pub blob_key: String,
    pub version: i64,
    pub size_bytes: i64,
}

#[async_trait]
pub trait ImageRepo {
    /// The owner's default folder, created on first use.
    async fn default_album(&self, owner: Uuid, now: i64) -> Result<Uuid>;
    /// Inserts the image, its render rows and its outbox row, in one
    /// transaction: a committed upload always has its render work recorded.
    async fn insert_image(&self, image: &ImageRow, renders: &[RenderRow]) -> Result<()>;
    /// Scoped to `owner` when given.
    async fn image(&self, owner: Option<Uuid>, id: Uuid) -> Result<Option<ImageRow>>;
    /// Newest first by (sort_at, id), strictly after `after` when given.
    async fn list_images(
        &self,
        owner: Uuid,
        album: Option<Uuid>,
        after: Option<(i64, Uuid)>,
        limit: i64,
    ) -> Result<Vec<ImageRow>>;
    async fn renders(&self, image_id: Uuid) -> Result<Vec<RenderRow>>;
    /// The renders of many images in one query.
    async fn renders_of(&self, image_ids: &[Uuid]) -> Result<Vec<RenderRow>>;
    /// The custom crops (image id, spec JSON) of many images in one query.
    async fn custom_crops_of(&self, image_ids: &[Uuid]) -> Result<Vec<(Uuid, String)>>;
    /// Inserts the render, or moves it to a new version if its spec changed,
    /// as long as what asked for it (`source`) still exists: a crop deleted
    /// while a job ran must not get its render back.
    async fn set_render_spec(
        &self,
        image_id: Uuid,
        code: &str,
        spec: &str,
        source: SpecSource,
    ) -> Result<()>;
    /// Deletes renders whose code is not in `keep`; returns their blob keys.
    async fn remove_renders_except(&self, image_id: Uuid, keep: &[String]) -> Result<Vec<String>>;
    /// Records produced bytes if `version` is still current; returns whether
    /// it was, and the blob key it replaced.
    async fn render_produced(&self, r: &RenderRow) -> Result<(bool, Option<String>)>;
    async fn set_status(&self, image_id: Uuid, status: &str) -> Result<()>;
    async fn images_with_status(&self, status: &str) -> Result<Vec<Uuid>>;
    async fn served_render(&self, image_id: Uuid, code: &str) -> Result<Option<ServedRender>>;
    /// Whether `album` is a live folder of `owner`.
    async fn album_owned(&self, owner: Uuid, album: Uuid) -> Result<bool>;
    /// Changes what is given; false when the owner has no such image.
    async fn update_image(&self, owner: Uuid, id: Uuid, change: &ImageChange) -> Result<bool>;
    /// Deletes the image and its rows; returns every blob key it had.
    async fn delete_image(&self, owner: Uuid, id: Uuid) -> Result<Option<Vec<String>>>;
    async fn custom_crops(&self, image_id: Uuid) -> Result<Vec<String>>;
    /// Adds a crop (and its pending render) unless the image has `limit`
    /// already; `Write::Conflict` when the code exists.
    async fn add_custom_crop(
        &self,
        image_id: Uuid,
        code: &str,
        spec: &str,
        limit: i64,
        now: i64,
    ) -> Result<CropAdd>;
    /// Removes the crop and its render; the render's blob key if it had one.
    async fn delete_custom_crop(
        &self,
        image_id: Uuid,
        code: &str,
    ) -> Result<Option<Option<String>>>;
}

#[derive(Debug, Clone, Default)]
pub struct ImageChange {
    pub title: Option<String>,
    pub description: Option<String>,
    pub album_id: Option<Uuid>,
    pub visibility: Option<String>,
    pub exif_visibility: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CropAdd {
    Added,
    Exists,
    LimitReached,
}

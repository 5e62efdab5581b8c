//! The repository role for images.

use crate::Result;
use async_trait::async_trait;
use lightbox_domain::crop::CropSpec;
use lightbox_domain::details::Details;
use lightbox_domain::exif::ExifVisibility;
use lightbox_domain::image::{Image, ImageStatus, Visibility};
use lightbox_domain::render::Render;
use uuid::Uuid;

#[async_trait]
pub trait ImageRepo {
    /// The owner's default folder, created on first use.
    async fn default_album(&self, owner: Uuid, now: i64) -> Result<Uuid>;
    /// Inserts the image, its render rows and its outbox row, in one
    /// transaction: a committed upload always has its render work recorded.
    /// `NotFound` when its folder is not a live folder of its owner.
    async fn insert_image(&self, image: &Image, renders: &[Render]) -> Result<()>;
    /// Scoped to `owner` when given.
    async fn image(&self, owner: Option<Uuid>, id: Uuid) -> Result<Option<Image>>;
    /// The owner's view of one of their images.
    async fn image_view(&self, owner: Uuid, id: Uuid) -> Result<Option<ImageView>>;
    /// Newest first by (sort_at, id), strictly after `after` when given.
    async fn list_images(
        &self,
        owner: Uuid,
        album: Option<Uuid>,
        after: Option<(i64, Uuid)>,
        limit: i64,
    ) -> Result<Vec<ImageView>>;
    async fn set_status(&self, image_id: Uuid, status: ImageStatus) -> Result<()>;
    async fn images_with_status(&self, status: ImageStatus) -> Result<Vec<Uuid>>;
    /// Photos a job still owes work, beyond those `processing`: `ready`
    /// ones with a render whose spec moved on since its bytes were made,
    /// and any with a folder job's item still queued. Work lost with the
    /// in-process queue, or whose commits a power loss undid. Unordered,
    /// and a photo may come more than once.
    async fn images_owed_work(&self) -> Result<Vec<Uuid>>;
    /// Whether `album` is a live folder of `owner`.
    async fn album_owned(&self, owner: Uuid, album: Uuid) -> Result<bool>;
    /// Changes what is given; false when the owner has no such image, or
    /// the change moves it to a folder that is not a live one of theirs.
    async fn update_image(&self, owner: Uuid, id: Uuid, change: &ImageChange) -> Result<bool>;
    /// Deletes the image and its rows; returns every blob key it had.
    async fn delete_image(&self, owner: Uuid, id: Uuid) -> Result<Option<Vec<String>>>;
}

/// An image with everything its owner's view shows, read together for a
/// whole page (`db::sql::image_views`: one statement on SQLite).
#[derive(Debug, PartialEq)]
pub struct ImageView {
    pub image: Image,
    /// In code order (bytewise, on both engines).
    pub renders: Vec<Render>,
    /// In the order they were added.
    pub custom_crops: Vec<CropSpec>,
    /// Why the renders failed, while the image is `failed`.
    pub failure_reason: Option<String>,
    pub details: Details,
}

#[derive(Debug, Clone, Default)]
pub struct ImageChange {
    pub title: Option<String>,
    pub description: Option<String>,
    pub album_id: Option<Uuid>,
    pub visibility: Option<Visibility>,
    pub exif_visibility: Option<ExifVisibility>,
}

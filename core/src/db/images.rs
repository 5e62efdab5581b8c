//! The repository role for images.

use crate::domain::exif::ExifVisibility;
use crate::domain::image::{Image, ImageStatus, Visibility};
use crate::domain::render::Render;
use crate::Result;
use async_trait::async_trait;
use uuid::Uuid;

#[async_trait]
pub trait ImageRepo {
    /// The owner's default folder, created on first use.
    async fn default_album(&self, owner: Uuid, now: i64) -> Result<Uuid>;
    /// Inserts the image, its render rows and its outbox row, in one
    /// transaction: a committed upload always has its render work recorded.
    async fn insert_image(&self, image: &Image, renders: &[Render]) -> Result<()>;
    /// Scoped to `owner` when given.
    async fn image(&self, owner: Option<Uuid>, id: Uuid) -> Result<Option<Image>>;
    /// Newest first by (sort_at, id), strictly after `after` when given.
    async fn list_images(
        &self,
        owner: Uuid,
        album: Option<Uuid>,
        after: Option<(i64, Uuid)>,
        limit: i64,
    ) -> Result<Vec<Image>>;
    async fn set_status(&self, image_id: Uuid, status: ImageStatus) -> Result<()>;
    async fn images_with_status(&self, status: ImageStatus) -> Result<Vec<Uuid>>;
    /// Whether `album` is a live folder of `owner`.
    async fn album_owned(&self, owner: Uuid, album: Uuid) -> Result<bool>;
    /// Changes what is given; false when the owner has no such image.
    async fn update_image(&self, owner: Uuid, id: Uuid, change: &ImageChange) -> Result<bool>;
    /// Deletes the image and its rows; returns every blob key it had.
    async fn delete_image(&self, owner: Uuid, id: Uuid) -> Result<Option<Vec<String>>>;
}

#[derive(Debug, Clone, Default)]
pub struct ImageChange {
    pub title: Option<String>,
    pub description: Option<String>,
    pub album_id: Option<Uuid>,
    pub visibility: Option<Visibility>,
    pub exif_visibility: Option<ExifVisibility>,
}

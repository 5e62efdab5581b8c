//! The repository role for renders: what each image should have (its
//! render rows and custom crops), what was produced, and what `/i/` serves.

use crate::Result;
use async_trait::async_trait;
use lightbox_domain::crop::{CropSpec, SpecSource};
use lightbox_domain::render::{Produced, Render, ServedRender};
use uuid::Uuid;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CropAdd {
    Added,
    Exists,
    LimitReached,
}

#[async_trait]
pub trait RenderRepo {
    async fn renders(&self, image_id: Uuid) -> Result<Vec<Render>>;
    /// The renders of many images in one query.
    async fn renders_of(&self, image_ids: &[Uuid]) -> Result<Vec<Render>>;
    /// The custom crops (image id, spec JSON) of many images in one query.
    async fn custom_crops_of(&self, image_ids: &[Uuid]) -> Result<Vec<(Uuid, CropSpec)>>;
    /// Inserts the render, or moves it to a new version if its spec changed,
    /// as long as what asked for it (`source`) still exists: a crop deleted
    /// while a job ran must not get its render back.
    async fn set_render_spec(
        &self,
        image_id: Uuid,
        spec: &CropSpec,
        source: SpecSource,
    ) -> Result<()>;
    /// Deletes renders whose code is not in `keep`; returns their blob keys.
    async fn remove_renders_except(&self, image_id: Uuid, keep: &[String]) -> Result<Vec<String>>;
    /// Records produced bytes if `version` is still current; returns whether
    /// it was, and a blob key no row names any more, durably, for the caller
    /// to delete: the one replaced, or the bytes' own when not recorded
    /// (unless another run of the version recorded the same key).
    async fn render_produced(
        &self,
        image_id: Uuid,
        code: &str,
        produced: &Produced,
    ) -> Result<(bool, Option<String>)>;
    async fn served_render(&self, image_id: Uuid, code: &str) -> Result<Option<ServedRender>>;
    async fn custom_crops(&self, image_id: Uuid) -> Result<Vec<CropSpec>>;
    /// Adds a crop (and its pending render) unless the image has `limit`
    /// already; `Write::Conflict` when the code exists.
    async fn add_custom_crop(
        &self,
        image_id: Uuid,
        spec: &CropSpec,
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

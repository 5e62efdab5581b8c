//! The repository role for what a photo gains after its upload
//! (`domain::details`): the owner's focal point, the placeholder and
//! salient point the render job finds, and where a motion photo keeps its
//! clip.

use crate::Result;
use async_trait::async_trait;
use lightbox_domain::details::{Clip, Details};
use lightbox_domain::focus::Point;
use uuid::Uuid;

#[async_trait]
pub trait DetailsRepo {
    /// The details of many images in one query (images without any are absent).
    async fn details_of(&self, image_ids: &[Uuid]) -> Result<Vec<(Uuid, Details)>>;
    async fn set_motion(&self, image_id: Uuid, clip: Clip) -> Result<()>;
    async fn set_placeholder(&self, image_id: Uuid, hash: &str, salient: Point) -> Result<()>;
    /// Sets or clears the focal point and moves the renders in `bump` to a
    /// new version, in one transaction: a render job that reads the new
    /// versions also reads the new point.
    async fn set_focus(&self, image_id: Uuid, focus: Option<Point>, bump: &[String]) -> Result<()>;

    /// One image's details (empty when it has none).
    async fn details(&self, image_id: Uuid) -> Result<Details> {
        let mut all = self.details_of(&[image_id]).await?;
        Ok(all.pop().map(|(_, d)| d).unwrap_or_default())
    }
}

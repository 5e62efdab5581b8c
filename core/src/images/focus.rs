//! The owner's focal point: every `fill` render of the photo that crops
//! something keeps it in frame (unless a custom crop names its own focus;
//! the rule is `domain::crop::takes_point`). Changing it re-renders
//! exactly those renders, at a new version.

use super::dto::ImageDto;
use super::Images;
use crate::{Error, Result};
use lightbox_domain::crop::takes_point;
use lightbox_domain::focus::{check_point, Point};
use lightbox_render::geometry::focus::cuts;
use uuid::Uuid;

impl Images {
    /// Sets (`Some`) or clears (`None`) the focal point.
    pub async fn set_focus(&self, owner: Uuid, id: Uuid, focus: Option<Point>) -> Result<ImageDto> {
        check_point(focus)?;
        let image = self
            .repo
            .image(Some(owner), id)
            .await?
            .ok_or(Error::NotFound)?;
        let before = self.repo.details(id).await?.focus;
        if before == focus {
            return self.get(owner, id).await;
        }
        let affected: Vec<String> = self
            .resources
            .desired(&image)
            .await?
            .into_iter()
            .filter(|(spec, source)| {
                takes_point(spec, *source) && cuts(image.width, image.height, spec)
            })
            .map(|(spec, _)| spec.code)
            .collect();
        self.repo.set_focus(id, focus, &affected).await?;
        if !affected.is_empty() {
            self.enqueue(id).await?;
        }
        self.get(owner, id).await
    }
}

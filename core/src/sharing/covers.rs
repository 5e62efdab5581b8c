//! The folder's visitor policy and its cover. Both are allowed in any
//! state (private, taken down, publishing disabled) and re-render nothing.

use super::{Sharing, SharingDto};
use crate::{Error, Result};
use lightbox_domain::album::PolicyPatch;
use uuid::Uuid;

impl Sharing {
    /// The patch is made after ownership is checked: its values' errors
    /// (2002) answer after the album's (2001), as the contract orders them.
    pub async fn set_policy(
        &self,
        owner: Uuid,
        album: Uuid,
        patch: impl FnOnce() -> Result<PolicyPatch>,
    ) -> Result<SharingDto> {
        let mut row = self.owned(owner, album).await?;
        row.policy = patch()?.apply(row.policy);
        self.repo.set_policy(row.id, &row.policy).await?;
        self.dto(row).await
    }

    /// `None` restores the automatic choice; a photo must be one of the
    /// folder's and visible to visitors.
    pub async fn set_cover(
        &self,
        owner: Uuid,
        album: Uuid,
        image: Option<Uuid>,
    ) -> Result<SharingDto> {
        let mut row = self.owned(owner, album).await?;
        if let Some(id) = image {
            let photo = self.repo.image(Some(owner), id).await?;
            let photo = photo
                .filter(|p| p.album_id == row.id)
                .ok_or(Error::NotFound)?;
            if !photo.is_visible() {
                return Err(Error::invalid(
                    "image_id",
                    "only a photo visitors can see may be the cover",
                ));
            }
        }
        self.repo.set_cover(row.id, image).await?;
        row.cover_image_id = image;
        self.dto(row).await
    }
}

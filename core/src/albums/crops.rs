//! Album crop rules: a render every photo of the folder gets. A rule may
//! reuse a preset's code, replacing that preset for the folder's photos;
//! it may not reuse a code one of the photos has as a custom crop.

use super::{Albums, JobResult};
use crate::{time, Error, Result};
use lightbox_domain::crop::CropSpec;
use uuid::Uuid;

impl Albums {
    /// Upserts the rule and re-renders every photo of the folder.
    pub async fn set_crop(&self, owner: Uuid, album: Uuid, spec: CropSpec) -> Result<JobResult> {
        spec.validate()?;
        self.owned(owner, album).await?;
        let images = self.repo.album_images(album).await?;
        let ids: Vec<Uuid> = images.iter().map(|i| i.id).collect();
        for (_, crop) in self.repo.custom_crops_of(&ids).await? {
            if crop.code == spec.code {
                return Err(Error::invalid(
                    "code",
                    "a photo of the folder has a custom crop with this code",
                ));
            }
        }
        // Every rule is one more render of every photo: bounded (4001),
        // counted and written atomically by the repository.
        let written = self
            .repo
            .set_album_crop(album, &spec, time::now_ms())
            .await?;
        if !written {
            return Err(Error::AlbumRuleLimit {
                limit: crate::limits::MAX_ALBUM_RULES,
            });
        }
        self.start_job(owner, album, "album.crop.set", &ids).await
    }

    /// Removes the rule (2001 when there is none) and re-renders the folder.
    pub async fn delete_crop(&self, owner: Uuid, album: Uuid, code: &str) -> Result<JobResult> {
        self.owned(owner, album).await?;
        if !self.repo.delete_album_crop(album, code).await? {
            return Err(Error::NotFound);
        }
        let images = self.repo.album_images(album).await?;
        let ids: Vec<Uuid> = images.iter().map(|i| i.id).collect();
        self.start_job(owner, album, "album.crop.delete", &ids)
            .await
    }

    /// The folder's rules, for the owner's view.
    pub async fn crops(&self, album: Uuid) -> Result<Vec<CropSpec>> {
        self.repo.album_crops(album).await
    }
}

//! Changing, cropping, sharing and deleting an owner's image.

use super::dto::{public_image, ImageDto, PublicImage};
use super::Images;
use crate::archive::Entry;
use crate::db::{CropAdd, ImageChange};
use crate::{time, Error, Result};
use lightbox_domain::availability::archive_state;
use lightbox_domain::checks::{char_len_between, Checks};
use lightbox_domain::crop::{custom_code_clash, CropSpec, MAX_CUSTOM_CROPS};
use lightbox_domain::downloads::DownloadState;
use lightbox_domain::image::Visibility;
use lightbox_domain::sharing::reach_by_id;
use serde::Deserialize;
use uuid::Uuid;

/// `image.exif.setVisibility` groups: an omitted group stays as it is.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VisibilityGroups {
    pub gps: Option<bool>,
    pub camera: Option<bool>,
    pub datetime: Option<bool>,
    pub settings: Option<bool>,
}

#[derive(Debug, Default)]
pub struct Edit {
    pub title: Option<String>,
    pub description: Option<String>,
    pub album_id: Option<Uuid>,
}

impl Images {
    async fn change(&self, owner: Uuid, id: Uuid, change: ImageChange) -> Result<ImageDto> {
        if !self.repo.update_image(owner, id, &change).await? {
            return Err(Error::NotFound);
        }
        self.get(owner, id).await
    }

    /// Title, description, or a move to another of the owner's folders
    /// (which brings the image's renders in line with that folder).
    pub async fn update(&self, owner: Uuid, id: Uuid, edit: Edit) -> Result<ImageDto> {
        Checks::new()
            .check(
                edit.title
                    .as_deref()
                    .is_none_or(|t| char_len_between(t, 0, 200)),
                "title",
                "must be at most 200 characters",
            )
            .check(
                edit.description
                    .as_deref()
                    .is_none_or(|d| char_len_between(d, 0, 5000)),
                "description",
                "must be at most 5000 characters",
            )
            .finish()?;
        // A folder that is not the owner's, or is gone, is refused inside
        // the update's transaction (`NotFound`), where a deletion racing
        // the move is seen too.
        let moved = edit.album_id.is_some();
        let change = ImageChange {
            title: edit.title,
            description: edit.description,
            album_id: edit.album_id,
            ..Default::default()
        };
        let dto = self.change(owner, id, change).await?;
        if moved {
            self.enqueue(id).await?;
        }
        Ok(dto)
    }

    /// Removes the image, its original and every render.
    pub async fn delete(&self, owner: Uuid, id: Uuid) -> Result<()> {
        let keys = self
            .repo
            .delete_image(owner, id)
            .await?
            .ok_or(Error::NotFound)?;
        self.changes.changed();
        // Calls held on the photo answer 2001 now, not at their deadline.
        self.news.settled(id).await;
        for key in keys {
            if let Err(e) = self.store.delete(&key).await {
                tracing::warn!(%id, key, error = %e, "blob of a deleted image left behind");
            }
        }
        // Also a render an unfinished job stored and never recorded.
        if let Err(e) = self
            .store
            .delete_under(&crate::render_job::renders_prefix(id))
            .await
        {
            tracing::warn!(%id, error = %e, "renders of a deleted image left behind");
        }
        Ok(())
    }

    pub async fn add_crop(&self, owner: Uuid, id: Uuid, spec: CropSpec) -> Result<ImageDto> {
        spec.validate()?;
        let presets = self.resources.presets().await?;
        if let Some(clash) = custom_code_clash(&spec.code, &presets, &[]) {
            return Err(Error::invalid("code", clash));
        }
        let image = self
            .repo
            .image(Some(owner), id)
            .await?
            .ok_or(Error::NotFound)?;
        let rules = self.repo.album_crops(image.album_id).await?;
        if let Some(clash) = custom_code_clash(&spec.code, &[], &rules) {
            return Err(Error::invalid("code", clash));
        }
        match self
            .repo
            .add_custom_crop(id, &spec, MAX_CUSTOM_CROPS, time::now_ms())
            .await?
        {
            CropAdd::Added => {}
            CropAdd::Exists => {
                return Err(Error::invalid(
                    "code",
                    "the image already has a crop with this code",
                ))
            }
            CropAdd::LimitReached => return Err(Error::CustomCropLimit),
        }
        self.enqueue(id).await?;
        self.get(owner, id).await
    }

    pub async fn delete_crop(&self, owner: Uuid, id: Uuid, code: &str) -> Result<ImageDto> {
        self.repo
            .image(Some(owner), id)
            .await?
            .ok_or(Error::NotFound)?;
        let key = self
            .repo
            .delete_custom_crop(id, code)
            .await?
            .ok_or(Error::NotFound)?;
        if let Some(key) = key {
            self.changes.changed();
            self.store.delete(&key).await?;
        }
        self.get(owner, id).await
    }

    pub async fn set_visibility(
        &self,
        owner: Uuid,
        id: Uuid,
        visibility: Visibility,
    ) -> Result<ImageDto> {
        self.change(
            owner,
            id,
            ImageChange {
                visibility: Some(visibility),
                ..Default::default()
            },
        )
        .await
    }

    pub async fn set_exif_visibility(
        &self,
        owner: Uuid,
        id: Uuid,
        g: VisibilityGroups,
    ) -> Result<ImageDto> {
        let image = self
            .repo
            .image(Some(owner), id)
            .await?
            .ok_or(Error::NotFound)?;
        let mut v = image.exif_visibility;
        v.gps = g.gps.unwrap_or(v.gps);
        v.camera = g.camera.unwrap_or(v.camera);
        v.datetime = g.datetime.unwrap_or(v.datetime);
        v.settings = g.settings.unwrap_or(v.settings);
        self.change(
            owner,
            id,
            ImageChange {
                exif_visibility: Some(v),
                ..Default::default()
            },
        )
        .await
    }

    /// A photo its owner made public, or one visitors see in a published
    /// folder (its EXIF then also filtered by the folder's policy);
    /// anything else is 2001, revealing nothing about whether it exists.
    pub async fn get_public(&self, id: Uuid) -> Result<PublicImage> {
        let image = self.repo.image(None, id).await?.ok_or(Error::NotFound)?;
        let album = self.repo.album(None, image.album_id).await?;
        let allowed = reach_by_id(&image, album.as_ref(), self.server_publishing);
        let allowed = allowed.ok_or(Error::NotFound)?;
        let renders = self.repo.renders(id).await?;
        let mut public = public_image(&image, &renders, allowed, &self.image_host);
        public.placeholder = self.repo.details(id).await?.placeholder;
        Ok(public)
    }
}

impl Images {
    /// The entries of an image's archive: the original and every produced
    /// render. Names say what each file is, never the uploaded file name.
    pub async fn archive_entries(&self, owner: Uuid, id: Uuid) -> Result<Vec<Entry>> {
        let image = self
            .repo
            .image(Some(owner), id)
            .await?
            .ok_or(Error::NotFound)?;
        let state = archive_state(&image);
        if state != DownloadState::Ready {
            return Err(Error::DownloadNotReady { state });
        }
        let mut entries = vec![Entry {
            name: format!("original.{}", image.format.ext()),
            key: image.original_key.clone(),
        }];
        for r in self.repo.renders(id).await? {
            if let Some(p) = r.current() {
                entries.push(Entry {
                    name: format!("{}.{}", r.code, r.spec.format.ext()),
                    key: p.blob_key.clone(),
                });
            }
        }
        Ok(entries)
    }
}

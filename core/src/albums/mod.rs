//! Folders: every owner's default folder and the ones they make, their
//! manual order, crop rules (`crops`) and zip downloads (`downloads`).
//! Publication lives in `crate::sharing`.

pub mod crops;
pub mod downloads;

use crate::db::DynRepo;
use crate::images::Images;
use crate::{ids, time, Error, Result};
use lightbox_domain::album::Album;
use lightbox_domain::album::PublishMode;
use lightbox_domain::alias::HOLD_MS;
use lightbox_domain::checks::{char_len_between, Checks};
use serde::Serialize;
use uuid::Uuid;

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct AlbumDto {
    pub id: Uuid,
    pub name: String,
    pub description: String,
    pub is_default: bool,
    /// The publication mode.
    pub visibility: PublishMode,
    pub image_count: i64,
    pub created_at: String,
}

impl From<&Album> for AlbumDto {
    fn from(a: &Album) -> Self {
        AlbumDto {
            id: a.id,
            name: a.name.clone(),
            description: a.description.clone(),
            is_default: a.is_default,
            visibility: a.mode,
            image_count: a.image_count,
            created_at: time::rfc3339(a.created_at),
        }
    }
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct JobResult {
    /// 0 when there was nothing to re-render.
    pub job_id: i64,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
#[schemars(rename = "ListOf{T}")]
pub struct Items<T> {
    pub items: Vec<T>,
}

#[derive(Clone)]
pub struct Albums {
    pub repo: DynRepo,
    pub images: Images,
}

fn check_text(name: Option<&str>, description: Option<&str>) -> Result<()> {
    Checks::new()
        .check(
            name.is_none_or(|n| char_len_between(n, 1, 200) && !n.trim().is_empty()),
            "name",
            "must be 1-200 characters",
        )
        .check(
            description.is_none_or(|d| char_len_between(d, 0, 5000)),
            "description",
            "must be at most 5000 characters",
        )
        .finish()
}

impl Albums {
    /// A live folder of the owner, or 2001.
    pub async fn owned(&self, owner: Uuid, id: Uuid) -> Result<Album> {
        self.repo
            .album(Some(owner), id)
            .await?
            .ok_or(Error::NotFound)
    }

    pub async fn create(&self, owner: Uuid, name: &str, description: &str) -> Result<AlbumDto> {
        check_text(Some(name), Some(description))?;
        let row = Album::new(ids::new_id(), owner, name, description, time::now_ms());
        self.repo.insert_album(&row).await?;
        Ok(AlbumDto::from(&row))
    }

    pub async fn get(&self, owner: Uuid, id: Uuid) -> Result<AlbumDto> {
        Ok(AlbumDto::from(&self.owned(owner, id).await?))
    }

    /// Accounts made before folders existed get their default folder here.
    pub async fn list(&self, owner: Uuid) -> Result<Items<AlbumDto>> {
        self.repo.default_album(owner, time::now_ms()).await?;
        let rows = self.repo.albums_of(owner).await?;
        Ok(Items {
            items: rows.iter().map(AlbumDto::from).collect(),
        })
    }

    /// The default folder cannot be renamed: 1003.
    pub async fn update(
        &self,
        owner: Uuid,
        id: Uuid,
        name: Option<&str>,
        description: Option<&str>,
    ) -> Result<AlbumDto> {
        check_text(name, description)?;
        if self.owned(owner, id).await?.is_default {
            return Err(Error::Forbidden);
        }
        self.repo.update_album(owner, id, name, description).await?;
        self.get(owner, id).await
    }

    /// Moves the photos to the default folder, re-renders exactly those,
    /// and soft-deletes the folder (its aliases released, its links retired).
    pub async fn delete(&self, owner: Uuid, id: Uuid) -> Result<JobResult> {
        if self.owned(owner, id).await?.is_default {
            return Err(Error::Forbidden);
        }
        let now = time::now_ms();
        let default = self.repo.default_album(owner, now).await?;
        let moved = self
            .repo
            .delete_album(owner, id, default, now, now + HOLD_MS)
            .await?
            .ok_or(Error::NotFound)?;
        self.start_job(owner, id, "album.delete", &moved).await
    }

    /// The manual order (`order: manual`). Listed photos come first, in
    /// the given order; the others keep theirs after them. Metadata only.
    pub async fn reorder(&self, owner: Uuid, id: Uuid, ordered: &[Uuid]) -> Result<()> {
        self.owned(owner, id).await?;
        let mut images = self.repo.album_images(id).await?;
        let mut seen = std::collections::HashSet::new();
        for img in ordered {
            if !seen.insert(*img) || !images.iter().any(|i| i.id == *img) {
                return Err(Error::invalid(
                    "ordered_ids",
                    "must be distinct photos of the folder",
                ));
            }
        }
        images.sort_by_key(|i| (i.position.is_none(), i.position));
        let rest = images.iter().map(|i| i.id).filter(|i| !seen.contains(i));
        let order: Vec<Uuid> = ordered.iter().copied().chain(rest).collect();
        self.repo.set_positions(id, &order).await
    }

    /// `job.get`: the owner's job and its progress; 2001 otherwise.
    pub async fn job(&self, owner: Uuid, id: i64) -> Result<lightbox_domain::jobs::Job> {
        match self.repo.job_counts(owner, id).await? {
            Some(counts) => Ok(counts.into()),
            None => Err(Error::NotFound),
        }
    }

    /// Records a re-render job and enqueues its photos; 0 for none.
    pub(crate) async fn start_job(
        &self,
        owner: Uuid,
        album: Uuid,
        reason: &str,
        images: &[Uuid],
    ) -> Result<JobResult> {
        if images.is_empty() {
            return Ok(JobResult { job_id: 0 });
        }
        let job = crate::db::NewJob {
            owner,
            album,
            kind: reason,
            images,
            now: time::now_ms(),
        };
        let job_id = self.repo.insert_job(&job).await?;
        self.images.enqueue_all(images).await?;
        Ok(JobResult { job_id })
    }
}

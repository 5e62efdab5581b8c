//! Images: upload ingestion, the owner's view, listing. Renders are made by
//! the workers (`crate::render_job`); this module only records and enqueues.

pub mod cursor;
pub mod downloads;
pub mod dto;
pub mod focus;
pub mod manage;
pub mod quota;
pub mod upload;
mod waiting;

use crate::db::DynRepo;
use crate::queue::news::News;
use crate::resources::Resources;
use crate::store::BlobStore;
use crate::stored_renders::Changes;
use crate::{ids, time, Error, Result};
use dto::{image_dto, view_dto, ImageDto};
use lightbox_domain::checks::{char_len_between, Checks};
use lightbox_domain::exif::ExifVisibility;
use lightbox_domain::image::{Image, ImageStatus};
use lightbox_domain::moderation::Takedown;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tokio::sync::Notify;
use upload::{Accepted, Upload};
use uuid::Uuid;

pub const DEFAULT_PAGE: i64 = 50;
pub const MAX_PAGE: i64 = 200;

/// The optional `meta` part of an upload.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Meta {
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub description: String,
}

impl Meta {
    pub fn validate(&self) -> Result<()> {
        Checks::new()
            .check(
                char_len_between(&self.title, 0, 200),
                "title",
                "must be at most 200 characters",
            )
            .check(
                char_len_between(&self.description, 0, 5000),
                "description",
                "must be at most 5000 characters",
            )
            .finish()
    }
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Page {
    pub items: Vec<ImageDto>,
    pub next_cursor: String,
}

#[derive(Clone)]
pub struct Images {
    pub repo: DynRepo,
    pub store: BlobStore,
    /// Wakes the outbox relay (`queue::outbox`) after render work is recorded.
    pub outbox: Arc<Notify>,
    /// The presets and limits, read afresh for every call.
    pub resources: Resources,
    /// Told whenever a render's bytes or a photo's visibility change.
    pub changes: Changes,
    /// Tells waiting clients when a photo's renders settle.
    pub news: Arc<dyn News>,
    /// Base of `renders[].url`.
    pub image_host: Arc<str>,
    pub upload_max_bytes: u64,
    /// `LIGHTBOX_SERVER_PUBLISHING`: false hides every folder from visitors.
    pub server_publishing: bool,
}

impl Images {
    /// A new image id and the upload that streams its original. The key
    /// names only the owner and the id, never the client's file name.
    pub async fn start_upload(&self, owner: Uuid) -> Result<(Uuid, Upload)> {
        let id = ids::new_id();
        let key = format!("originals/{owner}/{id}");
        let max_pixels = self.resources.max_pixels().await?;
        Ok((
            id,
            Upload::new(self.store.clone(), key, self.upload_max_bytes, max_pixels),
        ))
    }

    /// Records a stored original and enqueues its renders. If recording
    /// fails the original is removed, unless its row could not be undone:
    /// no orphan blob, and never a row without its original.
    /// Records an accepted upload in `album` (the owner's default folder
    /// when `None`; 2001 for a folder that is not theirs).
    pub async fn ingest(
        &self,
        owner: Uuid,
        id: Uuid,
        a: Accepted,
        meta: Meta,
        album: Option<Uuid>,
    ) -> Result<ImageDto> {
        let mut row_in = false;
        match self.record(owner, id, &a, meta, album, &mut row_in).await {
            Ok(dto) => Ok(dto),
            // A row that could not be undone keeps its original.
            Err(e) if row_in => Err(e),
            Err(e) => {
                self.store.delete(&a.key).await?;
                Err(e)
            }
        }
    }

    /// `row_in` says whether the image's row is in the database, for the
    /// caller to keep or remove the original on failure.
    async fn record(
        &self,
        owner: Uuid,
        id: Uuid,
        a: &Accepted,
        meta: Meta,
        album: Option<Uuid>,
        row_in: &mut bool,
    ) -> Result<ImageDto> {
        let now = time::now_ms();
        let album_id = match album {
            Some(a) if self.repo.album_owned(owner, a).await? => a,
            Some(_) => return Err(Error::NotFound),
            None => self.repo.default_album(owner, now).await?,
        };
        let taken_at = a
            .exif
            .taken_at
            .as_deref()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok());
        let taken_at = taken_at.map(|t| t.timestamp_millis());
        let image = Image {
            id,
            owner_id: owner,
            album_id,
            title: meta.title,
            description: meta.description,
            status: ImageStatus::Processing,
            format: a.format,
            width: a.width,
            height: a.height,
            size_bytes: a.size,
            original_key: a.key.clone(),
            exif: a.exif.clone(),
            exif_visibility: ExifVisibility::default(),
            visibility: None,
            taken_at,
            sort_at: taken_at.unwrap_or(now),
            created_at: now,
            position: None,
            membership: 0,
            takedown: Takedown::default(),
        };
        let renders = self.resources.initial_renders(image.id).await?;
        self.repo.insert_image(&image, &renders).await?;
        *row_in = true;
        if let Some(clip) = a.motion {
            // Not in the insert's transaction (kept apart from `images`):
            // undone by hand, so a failed upload leaves no row.
            if let Err(e) = self.repo.set_motion(id, clip).await {
                self.repo.delete_image(owner, id).await?;
                *row_in = false;
                return Err(e);
            }
        }
        self.outbox.notify_one();
        crate::metrics::METRICS.upload_bytes.inc_by(a.size);
        // Read back: the folder's moderation (a photo uploaded into a
        // taken-down folder is covered at once) is the database's to say.
        // The row is in, so a failed read must not undo the upload.
        if let Ok(dto) = self.get(owner, id).await {
            return Ok(dto);
        }
        let mut dto = image_dto(image, &renders, Vec::new(), &self.image_host);
        dto.motion = a.motion.is_some();
        Ok(dto)
    }

    /// Records render work in the outbox and wakes the relay, which hands
    /// it to the queue whenever the queue can take it.
    pub async fn enqueue(&self, image_id: Uuid) -> Result<()> {
        self.enqueue_all(&[image_id]).await
    }

    pub async fn enqueue_all(&self, image_ids: &[Uuid]) -> Result<()> {
        if image_ids.is_empty() {
            return Ok(());
        }
        self.repo.outbox_add(image_ids, time::now_ms()).await?;
        self.outbox.notify_one();
        Ok(())
    }

    /// At start: enqueues every image still waiting for renders (also a
    /// `ready` one whose re-render or folder job was lost with the
    /// in-process queue or undone by a power loss), and every image whose
    /// preset renders differ from the configured presets (a preset added
    /// or changed in the configuration re-renders what it affects, at a
    /// new version).
    pub async fn recover(&self) -> Result<usize> {
        let mut waiting = self
            .repo
            .images_with_status(ImageStatus::Processing)
            .await?;
        waiting.extend(self.repo.images_owed_work().await?);
        let resources = &self.resources;
        let mut scanned = Vec::new();
        for preset in resources.presets().await? {
            if resources.backlog_queued(&preset).await? {
                continue;
            }
            let backlog = resources.preset_backlog(&preset).await?;
            waiting.extend(backlog.into_iter().map(|(image, _)| image));
            scanned.push(preset);
        }
        waiting.sort();
        waiting.dedup();
        for chunk in waiting.chunks(500) {
            self.repo
                .outbox_recorded_again(chunk, time::now_ms())
                .await?;
        }
        self.outbox.notify_one();
        // Only once the outbox holds the backlog: a start cut short before
        // this scans again.
        for preset in &scanned {
            resources.mark_backlog_queued(preset).await?;
        }
        Ok(waiting.len())
    }

    pub async fn get(&self, owner: Uuid, id: Uuid) -> Result<ImageDto> {
        let view = self
            .repo
            .image_view(owner, id)
            .await?
            .ok_or(Error::NotFound)?;
        Ok(view_dto(view, &self.image_host))
    }

    pub async fn list(
        &self,
        owner: Uuid,
        album: Option<Uuid>,
        cursor: Option<&str>,
        limit: Option<i64>,
    ) -> Result<Page> {
        let limit = limit.unwrap_or(DEFAULT_PAGE);
        if !(1..=MAX_PAGE).contains(&limit) {
            return Err(Error::invalid("limit", "must be 1-200"));
        }
        let after = cursor
            .filter(|c| !c.is_empty())
            .map(cursor::decode)
            .transpose()?;
        // One extra row tells whether another page exists.
        let mut rows = self
            .repo
            .list_images(owner, album, after, limit + 1)
            .await?;
        // Another's folder gives an empty page (every read is the owner's):
        // only then is it asked whether the folder is the caller's (2001).
        if let (true, Some(folder)) = (rows.is_empty(), album) {
            if !self.repo.album_owned(owner, folder).await? {
                return Err(Error::NotFound);
            }
        }
        let more = rows.len() as i64 > limit;
        rows.truncate(limit as usize);
        let next_cursor = match rows.last() {
            Some(last) if more => cursor::encode(last.image.sort_at, last.image.id),
            _ => String::new(),
        };
        let items = rows
            .into_iter()
            .map(|view| view_dto(view, &self.image_host))
            .collect();
        Ok(Page { items, next_cursor })
    }
}

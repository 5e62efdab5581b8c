//! Bringing an image's renders up to date: the job a render worker runs.
//! Idempotent and safe to run twice at once: bytes go to keys named by
//! version, and a version is recorded only while it is still current.

use crate::db::{DynRepo, ImageRow, RenderRow, SpecSource};
use crate::render::pipeline::{self, Output};
use crate::render::spec::CropSpec;
use crate::resources::Resources;
use crate::store::BlobStore;
use crate::{Error, Result};
use uuid::Uuid;

pub const PROCESSING: &str = "processing";
pub const READY: &str = "ready";
pub const FAILED: &str = "failed";

#[derive(Clone)]
pub struct Renderer {
    pub repo: DynRepo,
    pub store: BlobStore,
    /// The presets and the pixel limit, read afresh for every job.
    pub resources: Resources,
}

pub fn render_key(image_id: Uuid, code: &str, version: i64, ext: &str) -> String {
    format!("renders/{image_id}/{code}.v{version}.{ext}")
}

pub fn spec_json(spec: &CropSpec) -> String {
    serde_json::to_string(spec).unwrap_or_default()
}

pub fn parse_spec(json: &str) -> Result<CropSpec> {
    serde_json::from_str(json)
        .map_err(|e| Error::Internal(anyhow::anyhow!("stored render spec: {e}")))
}

impl Renderer {
    /// Every render an image should have, with where it comes from: the
    /// presets, its folder's crop rules (a rule with a preset's code
    /// replaces that preset), then its own custom crops.
    pub async fn desired(&self, image: &ImageRow) -> Result<Vec<(CropSpec, SpecSource)>> {
        let mut specs: Vec<_> = self
            .resources
            .presets()
            .await?
            .into_iter()
            .map(|s| (s, SpecSource::Preset))
            .collect();
        let rules = self.repo.album_crops(image.album_id).await?;
        let crops = self.repo.custom_crops(image.id).await?;
        let rules = rules.iter().map(|(_, json)| (json, SpecSource::FolderRule));
        let extra = rules.chain(crops.iter().map(|json| (json, SpecSource::Custom)));
        for (json, source) in extra {
            let spec = parse_spec(json)?;
            match specs.iter_mut().find(|(s, _)| s.code == spec.code) {
                Some(slot) => *slot = (spec, source),
                None => specs.push((spec, source)),
            }
        }
        Ok(specs)
    }

    /// The first render rows of a new image (the presets), pending at version 1.
    pub async fn initial_rows(&self, image: &ImageRow) -> Result<Vec<RenderRow>> {
        Ok(self
            .resources
            .presets()
            .await?
            .iter()
            .map(|s| RenderRow {
                image_id: image.id,
                code: s.code.clone(),
                spec: spec_json(s),
                version: 1,
                produced_version: None,
                width: None,
                height: None,
                size_bytes: None,
                blob_key: None,
            })
            .collect())
    }

    /// Runs the job for one image. A deleted image is nothing to do; an
    /// original that cannot be decoded marks the image `failed`.
    pub async fn process(&self, image_id: Uuid) -> Result<()> {
        let Some(image) = self.repo.image(None, image_id).await? else {
            return Ok(());
        };
        let desired = self.desired(&image).await?;
        for (spec, source) in &desired {
            self.repo
                .set_render_spec(image_id, &spec.code, &spec_json(spec), *source)
                .await?;
        }
        let codes: Vec<String> = desired.iter().map(|(s, _)| s.code.clone()).collect();
        for key in self.repo.remove_renders_except(image_id, &codes).await? {
            self.store.delete(&key).await?;
        }
        let pending: Vec<RenderRow> = self
            .repo
            .renders(image_id)
            .await?
            .into_iter()
            .filter(|r| r.produced_version != Some(r.version))
            .collect();
        if !pending.is_empty() {
            let specs = pending
                .iter()
                .map(|r| parse_spec(&r.spec))
                .collect::<Result<Vec<_>>>()?;
            let original = self.store.get_bytes(&image.original_key).await?;
            let max_pixels = self.resources.max_pixels().await?;
            let rendered = tokio::task::spawn_blocking(move || {
                let decoded = pipeline::decode(&original, max_pixels, &specs)?;
                pipeline::render_all(&decoded, &specs)
            })
            .await
            .map_err(|e| Error::Internal(e.into()))?;
            let outputs = match rendered {
                Ok(outputs) => outputs,
                Err(e) => {
                    tracing::warn!(%image_id, error = %e, "render failed");
                    return self.repo.set_status(image_id, FAILED).await;
                }
            };
            for (row, out) in pending.into_iter().zip(outputs) {
                self.store_output(row, out).await?;
            }
        }
        self.settle(image_id, &image.status).await
    }

    /// The job's last attempt failed: the image will not get its renders.
    pub async fn mark_failed(&self, image_id: Uuid) -> Result<()> {
        self.repo.set_status(image_id, FAILED).await
    }

    async fn store_output(&self, row: RenderRow, out: Output) -> Result<()> {
        let key = render_key(row.image_id, &row.code, row.version, out.format.ext());
        let done = RenderRow {
            width: Some(out.width as i64),
            height: Some(out.height as i64),
            size_bytes: Some(out.bytes.len() as i64),
            blob_key: Some(key.clone()),
            ..row
        };
        crate::metrics::METRICS.render(&done.code, out.format.ext(), out.took);
        self.store.put(&key, out.bytes).await?;
        let (current, replaced) = self.repo.render_produced(&done).await?;
        crate::serving::renders_changed();
        if !current {
            // The spec moved on while this ran; a newer job renders it.
            self.store.delete(&key).await?;
        }
        if let Some(old) = replaced {
            self.store.delete(&old).await?;
        }
        Ok(())
    }

    /// `ready` once every render exists.
    async fn settle(&self, image_id: Uuid, status: &str) -> Result<()> {
        let all_done = self
            .repo
            .renders(image_id)
            .await?
            .iter()
            .all(|r| r.produced_version == Some(r.version));
        if all_done && status != READY {
            self.repo.set_status(image_id, READY).await?;
        }
        Ok(())
    }
}

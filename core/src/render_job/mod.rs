//! Bringing an image's renders up to date: the job a render worker runs.
//! Idempotent and safe to run twice at once: bytes go to keys named by
//! version, and a version is recorded only while it is still current.

use crate::db::DynRepo;
use crate::limits::memory;
use crate::queue::news::News;
use lightbox_domain::crop::{self, CropSpec, SpecSource};
use lightbox_domain::image::ImageStatus;
use lightbox_domain::jobs::ItemState;
use lightbox_domain::render::{Produced, Render};
use lightbox_render::cpu::CpuBudget;
use lightbox_render::pipeline::{self, Output, RenderError};

use crate::resources::Resources;
use crate::store::BlobStore;
use crate::stored_renders::Changes;
use crate::{Error, Result};
use std::sync::Arc;
use uuid::Uuid;

pub mod priority;

#[derive(Clone)]
pub struct Renderer {
    /// `Repo::relaxed`: what a job records, a restart redoes.
    pub repo: DynRepo,
    pub store: BlobStore,
    /// The presets and the pixel limit, read afresh for every job.
    pub resources: Resources,
    /// Told whenever a render's bytes change, so `/i/` lookups are dropped.
    pub changes: Changes,
    /// Render memory admitted at once in this process.
    pub budget: memory::RenderBudget,
    /// Told when a photo settles, for `image.get` calls waiting on it.
    pub news: Arc<dyn News>,
    /// CPU time one job may use (`LIGHTBOX_RENDER_CPU_SECONDS`).
    pub cpu_budget: std::time::Duration,
}

/// The metrics label of a render: a preset's code (the operator's fixed
/// set), else its kind, never a user-chosen code (unbounded series, and a
/// leak of names).
fn metric_label<'a>(desired: &'a [(CropSpec, SpecSource)], code: &str) -> &'a str {
    match desired.iter().find(|(s, _)| s.code == code) {
        Some((s, SpecSource::Preset)) => &s.code,
        Some((_, SpecSource::AlbumRule)) => "folder_rule",
        _ => "custom",
    }
}

pub fn render_key(image_id: Uuid, code: &str, version: i64, ext: &str) -> String {
    format!("{}/{code}.v{version}.{ext}", renders_prefix(image_id))
}

/// Where every render of an image is kept, and nothing else.
pub fn renders_prefix(image_id: Uuid) -> String {
    format!("renders/{image_id}")
}

impl Renderer {
    /// Runs the job for one image. A deleted image is nothing to do, also
    /// when it goes while the job runs (its rows refuse the job's writes
    /// then: retrying would only find it gone); an original that cannot be
    /// decoded marks the image `failed`.
    pub async fn process(&self, image_id: Uuid) -> Result<()> {
        let result = self.run(image_id).await;
        if let Err(e) = &result {
            if matches!(self.repo.image(None, image_id).await, Ok(None)) {
                tracing::info!(%image_id, error = %e, "the photo was deleted while it rendered");
                return self.sweep(image_id).await;
            }
        }
        result
    }

    /// What a job of a deleted photo can have left: a render stored by an
    /// attempt that failed before recording it (ids are never reused, so
    /// nothing else can be under its folder).
    async fn sweep(&self, image_id: Uuid) -> Result<()> {
        self.store.delete_under(&renders_prefix(image_id)).await
    }

    async fn run(&self, image_id: Uuid) -> Result<()> {
        let Some(image) = self.repo.image(None, image_id).await? else {
            return self.sweep(image_id).await;
        };
        // The jobs queued now are served by this run: it reads the specs
        // they changed after this point.
        let serving = self.repo.queued_jobs(image_id).await?;
        let desired = self.resources.desired(&image).await?;
        for (spec, source) in &desired {
            self.repo.set_render_spec(image_id, spec, *source).await?;
        }
        let codes: Vec<String> = desired.iter().map(|(s, _)| s.code.clone()).collect();
        let removed = self.repo.remove_renders_except(image_id, &codes).await?;
        if !removed.is_empty() {
            self.changes.changed();
        }
        for key in removed {
            self.store.delete(&key).await?;
        }
        let pending: Vec<Render> = self
            .repo
            .renders(image_id)
            .await?
            .into_iter()
            .filter(|r| !r.is_current())
            .collect();
        if !pending.is_empty() {
            // Read after the rows: a focus change bumps them with it.
            let point = self.repo.details(image_id).await?.focus;
            let source = |code: &str| {
                desired
                    .iter()
                    .find(|(s, _)| s.code == code)
                    .map_or(SpecSource::Preset, |(_, source)| *source)
            };
            let specs: Vec<CropSpec> = pending
                .iter()
                .map(|r| crop::aimed(r.spec.clone(), source(&r.code), point))
                .collect();
            let original = self.store.get_bytes(&image.original_key).await?;
            let max_pixels = self.resources.max_pixels().await?;
            let canvas = memory::canvas_limit(max_pixels, memory::source_pixels(&original));
            let specs: Vec<CropSpec> = specs
                .into_iter()
                .map(|s| memory::cap_canvas(s, canvas))
                .collect();
            // Admitted against the memory budget before a pixel is decoded.
            let needed = memory::estimate(&original, &specs).unwrap_or(0);
            let permit = match self.budget.admit(needed).await {
                Ok(permit) => permit,
                Err(over) => return self.fail(image_id, &serving, &over.to_string()).await,
            };
            let cpu = CpuBudget::new(self.cpu_budget);
            let rendered = priority::below_requests(move || {
                // Held by the thread: a job abandoned at shutdown still
                // counts until its pixels are freed.
                let _permit = permit;
                let metered = cpu.enter();
                let decoded = pipeline::decode(&original, max_pixels, &specs)?;
                // The file's bytes are not needed past the decode.
                drop(original);
                let rendered = lightbox_render::cascade::render_and_look_within(
                    decoded,
                    &specs,
                    lightbox_render::encode::placeholder::seen,
                    &cpu,
                );
                drop(metered);
                rendered
            })
            .await
            .map_err(|e| Error::Internal(e.into()))?;
            let (outputs, (hash, salient)) = match rendered {
                Ok(outputs) => outputs,
                // Not the photo's fault: the job is retried, and only its
                // last attempt marks the photo failed (`mark_failed`).
                Err(e @ RenderError::Busy(_)) => return Err(Error::Internal(e.into())),
                Err(e) => return self.fail(image_id, &serving, &e.to_string()).await,
            };
            let puts = pending.into_iter().zip(outputs).map(|(row, out)| {
                let label = metric_label(&desired, &row.code);
                self.put_output(row, out, label)
            });
            // Side by side: each local write waits for its own sync. What
            // was written is recorded even when another write failed.
            let mut failed = None;
            for put in futures::future::join_all(puts).await {
                let recorded = match put {
                    Ok((row, produced)) => self.record_output(row, produced).await,
                    Err(e) => Err(e),
                };
                if let Err(e) = recorded {
                    failed = failed.or(Some(e));
                }
            }
            if let Some(e) = failed {
                return Err(e);
            }
            self.repo.set_placeholder(image_id, &hash, salient).await?;
        }
        self.settle(image_id, image.status).await?;
        self.repo
            .settle_job_items(image_id, &serving, ItemState::Done)
            .await
    }

    /// The job named by `ticket` is answered for good: its outbox row goes,
    /// unless a newer request renewed it.
    pub async fn finished(&self, image_id: Uuid, ticket: &str) -> Result<()> {
        let row = crate::db::OutboxRow {
            image_id,
            ticket: ticket.to_owned(),
        };
        self.repo.outbox_remove(&row).await
    }

    /// The job's last attempt failed: the image will not get its renders,
    /// and its owner reads `reason`.
    pub async fn mark_failed(&self, image_id: Uuid, reason: &str) -> Result<()> {
        let queued = self.repo.queued_jobs(image_id).await?;
        self.fail(image_id, &queued, reason).await
    }

    /// The image will not get its renders; the owner sees why.
    async fn fail(&self, image_id: Uuid, serving: &[i64], reason: &str) -> Result<()> {
        tracing::warn!(%image_id, reason, "render failed");
        self.repo
            .set_failure_reason(image_id, reason, crate::time::now_ms())
            .await?;
        self.repo.set_status(image_id, ImageStatus::Failed).await?;
        self.news.settled(image_id).await;
        self.repo
            .settle_job_items(image_id, serving, ItemState::Failed)
            .await
    }

    /// Writes a render's bytes under its version's key.
    async fn put_output(
        &self,
        render: Render,
        out: Output,
        label: &str,
    ) -> Result<(Render, Produced)> {
        let key = render_key(
            render.image_id,
            &render.code,
            render.version,
            out.format.ext(),
        );
        let produced = Produced {
            version: render.version,
            width: out.width,
            height: out.height,
            size_bytes: out.bytes.len() as u64,
            blob_key: key.clone(),
        };
        crate::metrics::METRICS.render(label, out.format.ext(), out.took);
        self.store.put(&key, out.bytes).await?;
        Ok((render, produced))
    }

    /// Records written bytes as the render, unless its spec moved on.
    async fn record_output(&self, render: Render, produced: Produced) -> Result<()> {
        let (_, unnamed) = self
            .repo
            .render_produced(render.image_id, &render.code, &produced)
            .await?;
        self.changes.changed();
        // The render these bytes replaced, or the bytes themselves when the
        // spec moved on while this ran (a newer job renders it).
        if let Some(key) = unnamed {
            self.store.delete(&key).await?;
        }
        Ok(())
    }

    /// `ready` once every render exists.
    async fn settle(&self, image_id: Uuid, status: ImageStatus) -> Result<()> {
        let all_done = self
            .repo
            .renders(image_id)
            .await?
            .iter()
            .all(Render::is_current);
        if all_done && status != ImageStatus::Ready {
            self.repo.set_status(image_id, ImageStatus::Ready).await?;
            self.news.settled(image_id).await;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;

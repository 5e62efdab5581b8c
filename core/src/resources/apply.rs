//! Applying and removing the operator's resources: the one path for both
//! lightbox-controller (Kubernetes) and the TOML configuration (embedded).

use super::{parse, Resources, ALIAS_LIMIT, CROP_PRESET, RENDER_QUOTA};
use crate::config::{AliasLimit, Config, RenderQuota};
use crate::{time, Error, Result};
use lightbox_domain::crop::CropSpec;
use uuid::Uuid;

/// Names of resources that come from the TOML file.
pub const CONFIG_PREFIX: &str = "config/";

fn to_json<T: serde::Serialize>(v: &T) -> Result<String> {
    Ok(serde_json::to_string(v).map_err(anyhow::Error::from)?)
}

impl Resources {
    /// Declares a preset; true when its stored spec changed. A code belongs
    /// to one preset: a second resource claiming it is refused.
    pub async fn apply_preset(&self, name: &str, spec: &CropSpec) -> Result<bool> {
        spec.validate()?;
        for (other, json) in self.repo.resources(CROP_PRESET).await? {
            let theirs: CropSpec = parse(CROP_PRESET, &json)?;
            if other != name && theirs.code == spec.code {
                return Err(Error::invalid(
                    "code",
                    format!("code {} is already the preset {other}", spec.code),
                ));
            }
        }
        self.repo
            .put_resource(CROP_PRESET, name, &to_json(spec)?, time::now_ms())
            .await
    }

    /// (image, owner) of every image whose render of this preset is missing
    /// or made to another spec: the re-render backlog.
    pub async fn preset_backlog(&self, spec: &CropSpec) -> Result<Vec<(Uuid, Uuid)>> {
        self.repo
            .off_spec_with_owner(&spec.code, &spec.to_json())
            .await
    }

    /// Whether the backlog of this spec was queued already: a start whose
    /// presets did not change scans no image.
    pub async fn backlog_queued(&self, spec: &CropSpec) -> Result<bool> {
        let queued = self.repo.backlog_queued(&spec.code).await?;
        Ok(queued.as_deref() == Some(spec.to_json().as_str()))
    }

    /// Records that the backlog of this spec is in the outbox.
    pub async fn mark_backlog_queued(&self, spec: &CropSpec) -> Result<()> {
        self.repo
            .set_backlog_queued(&spec.code, Some(&spec.to_json()))
            .await
    }

    /// Removes a preset; the images that held its render, whose render jobs
    /// then delete it (unless a folder rule keeps that code).
    pub async fn delete_preset(&self, name: &str) -> Result<Vec<Uuid>> {
        let rows = self.repo.resources(CROP_PRESET).await?;
        let Some((_, json)) = rows.iter().find(|(n, _)| n == name) else {
            return Ok(Vec::new());
        };
        let spec: CropSpec = parse(CROP_PRESET, json)?;
        self.repo.delete_resource(CROP_PRESET, name).await?;
        self.repo.set_backlog_queued(&spec.code, None).await?;
        self.repo.images_with_render(&spec.code).await
    }

    pub async fn apply_alias_limit(&self, name: &str, spec: &AliasLimit) -> Result<bool> {
        self.repo
            .put_resource(ALIAS_LIMIT, name, &to_json(spec)?, time::now_ms())
            .await
    }

    pub async fn apply_render_quota(&self, name: &str, spec: &RenderQuota) -> Result<bool> {
        if spec.max_pixels == 0 {
            return Err(Error::invalid("maxPixels", "must be positive"));
        }
        self.repo
            .put_resource(RENDER_QUOTA, name, &to_json(spec)?, time::now_ms())
            .await
    }

    /// Removes an alias limit or a render quota (`kind` is `ALIAS_LIMIT` or `RENDER_QUOTA`).
    pub async fn delete(&self, kind: &str, name: &str) -> Result<bool> {
        self.repo.delete_resource(kind, name).await
    }

    /// Embedded mode: makes the `config/…` resources exactly what the TOML
    /// file declares (its presets, or ../shared/spec/decisions.md's four; its alias limit;
    /// its render quota), through the same calls the controller makes.
    /// Returns the images that held renders of presets no longer declared.
    pub async fn sync_config(&self, config: &Config) -> Result<Vec<Uuid>> {
        let mut keep = Vec::new();
        let mut dropped = Vec::new();
        for preset in &config.presets {
            let name = format!("{CONFIG_PREFIX}{}", preset.code);
            self.apply_preset(&name, preset).await?;
            keep.push(name);
        }
        for (name, _) in self.repo.resources(CROP_PRESET).await? {
            if name.starts_with(CONFIG_PREFIX) && !keep.contains(&name) {
                dropped.extend(self.delete_preset(&name).await?);
            }
        }
        let name = format!("{CONFIG_PREFIX}alias_limit");
        self.apply_alias_limit(&name, &config.alias_limit).await?;
        let name = format!("{CONFIG_PREFIX}render_quota");
        match &config.render_quota {
            Some(q) => self.apply_render_quota(&name, q).await.map(drop)?,
            None => self.delete(RENDER_QUOTA, &name).await.map(drop)?,
        }
        Ok(dropped)
    }
}

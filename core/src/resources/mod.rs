//! The operator's resources: crop presets, alias limits and render quotas
//! (../shared/spec/decisions.md's CropPreset, AliasLimit and RenderQuota). They come from
//! Kubernetes custom resources through lightbox-controller, or from the TOML
//! configuration in embedded mode, and both go through `apply` into the
//! database, which every process reads: an API replica or a worker sees a
//! change at its next job or request, without a restart.

pub mod apply;
pub mod pacing;

use crate::config::{AliasLimit, RenderQuota, DEFAULT_MAX_PIXELS};
use crate::db::DynRepo;
use crate::{Error, Result};
use lightbox_domain::crop::{self, default_presets, CropSpec, SpecSource};
use lightbox_domain::image::Image;
use lightbox_domain::render::Render;
use serde::de::DeserializeOwned;
use uuid::Uuid;

pub const CROP_PRESET: &str = "crop_preset";
pub const ALIAS_LIMIT: &str = "alias_limit";
pub const RENDER_QUOTA: &str = "render_quota";

#[derive(Clone)]
pub struct Resources {
    pub repo: DynRepo,
}

fn parse<T: DeserializeOwned>(kind: &str, json: &str) -> Result<T> {
    serde_json::from_str(json)
        .map_err(|e| Error::Internal(anyhow::anyhow!("stored {kind} spec: {e}")))
}

impl Resources {
    /// Every preset render, by code; ../shared/spec/decisions.md's four while none is declared.
    pub async fn presets(&self) -> Result<Vec<CropSpec>> {
        let rows = self.repo.resources(CROP_PRESET).await?;
        if rows.is_empty() {
            return Ok(default_presets());
        }
        let mut specs = rows
            .iter()
            .map(|(_, json)| parse::<CropSpec>(CROP_PRESET, json))
            .collect::<Result<Vec<_>>>()?;
        specs.sort_by(|a, b| a.code.cmp(&b.code));
        Ok(specs)
    }

    /// Every render an image should have, with where it comes from: the
    /// presets, its folder's rules and its own crops.
    pub async fn desired(&self, image: &Image) -> Result<Vec<(CropSpec, SpecSource)>> {
        let presets = self.presets().await?;
        let rules = self.repo.album_crops(image.album_id).await?;
        let custom = self.repo.custom_crops(image.id).await?;
        Ok(crop::desired(presets, rules, custom))
    }

    /// The first renders of a new image (the presets), pending at version 1.
    pub async fn initial_renders(&self, image: Uuid) -> Result<Vec<Render>> {
        let presets = self.presets().await?;
        Ok(presets
            .into_iter()
            .map(|s| Render::pending(image, s))
            .collect())
    }

    /// The first alias limit by name; 20 for everyone while none exists.
    pub async fn alias_limit(&self) -> Result<AliasLimit> {
        let rows = self.repo.resources(ALIAS_LIMIT).await?;
        match rows.first() {
            Some((_, json)) => parse(ALIAS_LIMIT, json),
            None => Ok(AliasLimit::default()),
        }
    }

    /// The first render quota by name, if any.
    pub async fn render_quota(&self) -> Result<Option<RenderQuota>> {
        let rows = self.repo.resources(RENDER_QUOTA).await?;
        rows.first()
            .map(|(_, json)| parse(RENDER_QUOTA, json))
            .transpose()
    }

    /// Uploads and decodes over this many pixels are refused.
    pub async fn max_pixels(&self) -> Result<u64> {
        Ok(self
            .render_quota()
            .await?
            .map_or(DEFAULT_MAX_PIXELS, |q| q.max_pixels))
    }
}

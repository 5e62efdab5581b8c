//! Owner downloads of one photo: the `full` original or an exact `screen`
//! render (`crop` + `spec`, the render's version). One resolver decides for
//! the status method, the token method and every request of the link; the
//! rules themselves are `domain::downloads`.

use super::Images;
use crate::{Error, Result};
use lightbox_domain::availability::{full_state, motion_state, screen_state};
use lightbox_domain::details::Clip;
use lightbox_domain::downloads::{DownloadState, Variant, DEFAULT_SCREEN_CROP};
use lightbox_domain::image::Image;
use lightbox_domain::render::Render;
use serde::Serialize;
use uuid::Uuid;

/// A file ready to send.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct Resolved {
    #[serde(skip)]
    pub key: String,
    /// The folder the photo is in now and the generation of that
    /// membership; a link is scoped to both.
    #[serde(skip)]
    pub album_id: Uuid,
    #[serde(skip)]
    pub membership: i64,
    #[serde(skip)]
    pub mime: &'static str,
    pub filename: String,
    pub format: &'static str,
    pub width: u32,
    pub height: u32,
    pub size_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crop: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<i64>,
    /// The bytes of `key` to send, when not all of them.
    #[serde(skip)]
    pub range: Option<std::ops::Range<u64>>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct Choice {
    pub variant: Variant,
    pub state: DownloadState,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub file: Option<Resolved>,
}

#[derive(Debug, Serialize, schemars::JsonSchema)]
pub struct DownloadChoices {
    pub enabled: bool,
    pub variants: Vec<Choice>,
}

fn not_ready(state: DownloadState) -> Error {
    Error::DownloadNotReady { state }
}

fn full(image: &Image) -> Result<Resolved> {
    match full_state(image) {
        DownloadState::Ready => {}
        state => return Err(not_ready(state)),
    }
    Ok(Resolved {
        key: image.original_key.clone(),
        album_id: image.album_id,
        membership: image.membership,
        mime: image.format.mime(),
        filename: format!("image-{}.{}", image.id, image.format.ext()),
        format: image.format.ext(),
        width: image.width,
        height: image.height,
        size_bytes: image.size_bytes,
        crop: None,
        spec: None,
        range: None,
    })
}

/// The clip of a motion photo, cut from the original; `unavailable` for
/// any other photo.
fn motion(image: &Image, clip: Option<Clip>) -> Result<Resolved> {
    let clip = match (motion_state(image, clip.as_ref()), clip) {
        (DownloadState::Ready, Some(clip)) => clip,
        (state, _) => return Err(not_ready(state)),
    };
    Ok(Resolved {
        key: image.original_key.clone(),
        album_id: image.album_id,
        membership: image.membership,
        mime: "video/mp4",
        filename: format!("image-{}-motion.mp4", image.id),
        format: "mp4",
        width: image.width,
        height: image.height,
        size_bytes: clip.len,
        crop: None,
        spec: None,
        range: Some(clip.range()),
    })
}

fn screen(image: &Image, renders: &[Render], crop: &str, spec: Option<i64>) -> Result<Resolved> {
    let render = renders
        .iter()
        .find(|r| r.code == crop)
        .ok_or_else(|| Error::invalid("crop", "no such render"))?;
    let produced = match (screen_state(image, render, spec), render.current()) {
        (DownloadState::Ready, Some(p)) => p,
        (DownloadState::Ready, None) => return Err(not_ready(DownloadState::Preparing)),
        (state, _) => return Err(not_ready(state)),
    };
    let format = render.spec.format;
    Ok(Resolved {
        key: produced.blob_key.clone(),
        album_id: image.album_id,
        membership: image.membership,
        mime: format.mime(),
        filename: format!("image-{}-{crop}.{}", image.id, format.ext()),
        format: format.ext(),
        width: produced.width,
        height: produced.height,
        size_bytes: produced.size_bytes,
        crop: Some(crop.to_owned()),
        spec: Some(render.version),
        range: None,
    })
}

fn choice(variant: Variant, r: Result<Resolved>) -> Result<Choice> {
    match r {
        Ok(file) => Ok(Choice {
            variant,
            state: DownloadState::Ready,
            file: Some(file),
        }),
        Err(Error::DownloadNotReady { state }) => Ok(Choice {
            variant,
            state,
            file: None,
        }),
        Err(e) => Err(e),
    }
}

impl Images {
    async fn owned(&self, owner: Uuid, id: Uuid) -> Result<Image> {
        self.repo
            .image(Some(owner), id)
            .await?
            .ok_or(Error::NotFound)
    }

    /// The file a download of `variant` means right now, or why there is none.
    pub async fn resolve_download(
        &self,
        owner: Uuid,
        id: Uuid,
        variant: Variant,
        crop: Option<&str>,
        spec: Option<i64>,
    ) -> Result<Resolved> {
        let image = self.owned(owner, id).await?;
        if image.takedown.is_active() {
            return Err(not_ready(DownloadState::Unavailable));
        }
        match variant {
            Variant::Full => full(&image),
            Variant::Screen => screen(
                &image,
                &self.repo.renders(id).await?,
                crop.unwrap_or(DEFAULT_SCREEN_CROP),
                spec,
            ),
            Variant::Motion => motion(&image, self.clip(id).await?),
        }
    }

    /// Read-only: what each variant would give now.
    pub async fn download_choices(
        &self,
        owner: Uuid,
        id: Uuid,
        crop: Option<&str>,
        spec: Option<i64>,
    ) -> Result<DownloadChoices> {
        let image = self.owned(owner, id).await?;
        let renders = self.repo.renders(id).await?;
        let screen = screen(&image, &renders, crop.unwrap_or(DEFAULT_SCREEN_CROP), spec);
        if let Err(
            e @ Error::DownloadNotReady {
                state: DownloadState::Stale,
            },
        ) = screen
        {
            return Err(e);
        }
        let mut variants = vec![
            choice(Variant::Screen, screen)?,
            choice(Variant::Full, full(&image))?,
        ];
        if let Some(clip) = self.clip(id).await? {
            variants.push(choice(Variant::Motion, motion(&image, Some(clip)))?);
        }
        Ok(DownloadChoices {
            enabled: true,
            variants,
        })
    }

    async fn clip(&self, id: Uuid) -> Result<Option<Clip>> {
        Ok(self.repo.details(id).await?.motion)
    }
}

//! Owner downloads of one photo: the `full` original or an exact `screen`
//! render (`crop` + `spec`, the render's version). One resolver decides for
//! the status method, the token method and every request of the link.

use super::Images;
use crate::db::{ImageRow, RenderRow};
use crate::render::spec::Format;
use crate::renders::{parse_spec, FAILED, READY};
use crate::{Error, Result};
use serde::Serialize;
use uuid::Uuid;

pub const SCREEN: &str = "screen";
pub const FULL: &str = "full";
/// The screen render chosen when no `crop` is given.
pub const DEFAULT_SCREEN_CROP: &str = "large";

/// A file ready to send.
#[derive(Debug, Clone, Serialize)]
pub struct Resolved {
    #[serde(skip)]
    pub key: String,
    #[serde(skip)]
    pub mime: &'static str,
    pub filename: String,
    pub format: String,
    pub width: u32,
    pub height: u32,
    pub size_bytes: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub crop: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec: Option<i64>,
}

#[derive(Debug, Serialize)]
pub struct Choice {
    pub variant: &'static str,
    pub state: &'static str,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    pub file: Option<Resolved>,
}

#[derive(Debug, Serialize)]
pub struct DownloadChoices {
    pub enabled: bool,
    pub variants: Vec<Choice>,
}

fn full(image: &ImageRow) -> Result<Resolved> {
    if image.status == FAILED {
        return Err(Error::DownloadNotReady {
            state: "unavailable",
        });
    }
    let format = Format::from_ext(&image.format).unwrap_or_default();
    Ok(Resolved {
        key: image.original_key.clone(),
        mime: format.mime(),
        filename: format!("image-{}.{}", image.id, image.format),
        format: image.format.clone(),
        width: image.width as u32,
        height: image.height as u32,
        size_bytes: image.size_bytes as u64,
        crop: None,
        spec: None,
    })
}

fn screen(
    image: &ImageRow,
    renders: &[RenderRow],
    crop: &str,
    spec: Option<i64>,
) -> Result<Resolved> {
    let row = renders
        .iter()
        .find(|r| r.code == crop)
        .ok_or_else(|| Error::invalid("crop", "no such render"))?;
    if spec.is_some_and(|s| s != row.version) {
        return Err(Error::DownloadNotReady { state: "stale" });
    }
    let (Some(key), true) = (&row.blob_key, row.produced_version == Some(row.version)) else {
        let state = if image.status == FAILED {
            "unavailable"
        } else {
            "preparing"
        };
        return Err(Error::DownloadNotReady { state });
    };
    let format = parse_spec(&row.spec)?.format;
    Ok(Resolved {
        key: key.clone(),
        mime: format.mime(),
        filename: format!("image-{}-{crop}.{}", image.id, format.ext()),
        format: format.ext().into(),
        width: row.width.unwrap_or(0) as u32,
        height: row.height.unwrap_or(0) as u32,
        size_bytes: row.size_bytes.unwrap_or(0) as u64,
        crop: Some(crop.to_owned()),
        spec: Some(row.version),
    })
}

fn choice(variant: &'static str, r: Result<Resolved>) -> Result<Choice> {
    match r {
        Ok(file) => Ok(Choice {
            variant,
            state: READY,
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
    /// The file a download of `variant` means right now, or why there is none.
    pub async fn resolve_download(
        &self,
        owner: Uuid,
        id: Uuid,
        variant: &str,
        crop: Option<&str>,
        spec: Option<i64>,
    ) -> Result<Resolved> {
        let image = self
            .repo
            .image(Some(owner), id)
            .await?
            .ok_or(Error::NotFound)?;
        if image.taken_down_at.is_some() {
            return Err(Error::DownloadNotReady {
                state: "unavailable",
            });
        }
        match variant {
            FULL => full(&image),
            SCREEN => screen(
                &image,
                &self.repo.renders(id).await?,
                crop.unwrap_or(DEFAULT_SCREEN_CROP),
                spec,
            ),
            _ => Err(Error::invalid("variant", "must be screen or full")),
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
        let image = self
            .repo
            .image(Some(owner), id)
            .await?
            .ok_or(Error::NotFound)?;
        let renders = self.repo.renders(id).await?;
        let screen = screen(&image, &renders, crop.unwrap_or(DEFAULT_SCREEN_CROP), spec);
        if let Err(e @ Error::DownloadNotReady { state: "stale" }) = screen {
            return Err(e);
        }
        Ok(DownloadChoices {
            enabled: true,
            variants: vec![choice(SCREEN, screen)?, choice(FULL, full(&image))?],
        })
    }
}

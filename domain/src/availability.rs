//! Whether a download can be had now: the original, a screen render at the
//! version a link was minted for, or an image's whole archive.

use super::details::Clip;
use super::downloads::DownloadState;
use super::image::{Image, ImageStatus};
use super::render::Render;

/// Whether the original can be downloaded.
pub fn full_state(image: &Image) -> DownloadState {
    if image.takedown.is_active() || image.status == ImageStatus::Failed {
        DownloadState::Unavailable
    } else {
        DownloadState::Ready
    }
}

/// Whether a motion photo's clip can be downloaded: as the original, when
/// the photo has one.
pub fn motion_state(image: &Image, clip: Option<&Clip>) -> DownloadState {
    match clip {
        Some(_) => full_state(image),
        None => DownloadState::Unavailable,
    }
}

/// Whether a screen render can be downloaded, given the version a link
/// was minted for (`spec`).
pub fn screen_state(image: &Image, render: &Render, spec: Option<i64>) -> DownloadState {
    if image.takedown.is_active() {
        DownloadState::Unavailable
    } else if spec.is_some_and(|s| s != render.version) {
        DownloadState::Stale
    } else if render.is_current() {
        DownloadState::Ready
    } else if image.status == ImageStatus::Failed {
        DownloadState::Unavailable
    } else {
        DownloadState::Preparing
    }
}

/// An image's archive (original and renders) is ready once every render
/// is; never while the photo is taken down (its own or a folder's).
pub fn archive_state(image: &Image) -> DownloadState {
    if image.takedown.is_active() {
        return DownloadState::Unavailable;
    }
    match image.status {
        ImageStatus::Ready => DownloadState::Ready,
        _ => DownloadState::Preparing,
    }
}

//! Publication of folders: the sharing and visitor states derived from a
//! folder's mode, takedown and the server's switch, and what each allows.

use super::album::{Album, PublishMode};
use super::error::{Error, Result};
use super::exif::ExifVisibility;
use super::image::Image;

wire_enum! {
    /// sharingDTO `state`; visitors reach a folder only while it is `live`.
    pub enum SharingState {
        Private = "private",
        Live = "live",
        TakenDown = "taken_down",
        PublishingDisabled = "publishing_disabled",
    }
}

wire_enum! {
    /// `album.preview` `visitor_state`.
    pub enum VisitorState {
        Visible = "visible",
        Empty = "empty",
        Private = "private",
        TakenDown = "taken_down",
    }
}

wire_enum! {
    /// `token` of setMode and republish.
    pub enum TokenChoice {
        /// A fresh bearer link.
        New = "new",
        /// The folder's link, when it has one.
        Keep = "keep",
    }
}

/// The sharing state: publishing off wins, then a takedown, then the mode.
pub fn sharing_state(album: &Album, server_publishing: bool) -> SharingState {
    if !server_publishing {
        SharingState::PublishingDisabled
    } else if album.takedown.is_active() {
        SharingState::TakenDown
    } else if album.mode == PublishMode::Private {
        SharingState::Private
    } else {
        SharingState::Live
    }
}

/// What a visitor of the folder would find.
pub fn visitor_state(album: &Album, server_publishing: bool, any_visible: bool) -> VisitorState {
    if album.takedown.is_active() {
        VisitorState::TakenDown
    } else if album.mode == PublishMode::Private || !server_publishing {
        VisitorState::Private
    } else if !any_visible {
        VisitorState::Empty
    } else {
        VisitorState::Visible
    }
}

/// 2004 for a taken-down folder: the first check of every operation a
/// takedown blocks (setMode, republish, alias release).
pub fn not_taken_down(album: &Album) -> Result<()> {
    if album.takedown.is_active() {
        return Err(Error::TakenDown);
    }
    Ok(())
}

/// The publication change a takedown or the server's switch forbids: under
/// a takedown nothing (2004, before any other check); with publishing off,
/// any published mode (1003).
pub fn may_publish(album: &Album, mode: PublishMode, server_publishing: bool) -> Result<()> {
    if album.takedown.is_active() {
        return Err(Error::TakenDown);
    }
    if mode.is_published() && !server_publishing {
        return Err(Error::Forbidden);
    }
    Ok(())
}

/// `republish` of sharingDTO: the remembered mode and, for unlisted, the
/// token choices (keep only while the folder still has a link).
pub fn republish_choices(album: &Album, has_link: bool) -> Option<(PublishMode, Vec<TokenChoice>)> {
    match (album.mode, album.last_published_mode) {
        (PublishMode::Private, Some(m)) => Some((
            m,
            match (m, has_link) {
                (PublishMode::Unlisted, true) => vec![TokenChoice::New, TokenChoice::Keep],
                (PublishMode::Unlisted, false) => vec![TokenChoice::New],
                _ => vec![],
            },
        )),
        _ => None,
    }
}

/// An unlisted folder's bearer link. Only the token's hash is stored; the
/// token is derived from the nonce with the server's key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShareLink {
    pub token_hash: String,
    pub album_id: uuid::Uuid,
    pub nonce: String,
    pub created_at: i64,
    pub retired_at: Option<i64>,
}

impl ShareLink {
    pub fn is_live(&self) -> bool {
        self.retired_at.is_none()
    }
}

/// Whether `image.getPublic` and `/p/{id}` show a photo, and with which
/// EXIF groups: a photo public itself shows what it allows; a visible photo
/// of a live **public** folder shows what it and the folder's policy allow.
/// A photo of an unlisted folder is reached only through the folder's
/// share link, so resetting the link revokes it. `image.takedown` is the
/// photo's effective takedown (its own, or one carried from a folder).
pub fn reach_by_id(
    image: &Image,
    album: Option<&Album>,
    server_publishing: bool,
) -> Option<ExifVisibility> {
    // With publishing off nothing is served to visitors, a photo made
    // public by itself included; its visibility is kept for later.
    if image.takedown.is_active() || !server_publishing {
        return None;
    }
    if image.is_public() {
        return Some(image.exif_visibility);
    }
    let album = album.filter(|a| {
        a.mode == PublishMode::Public && sharing_state(a, server_publishing) == SharingState::Live
    })?;
    image
        .is_visible()
        .then(|| album.policy.allowed_exif(image.exif_visibility))
}

//! Signed, short-lived download links: what a link names. (Signing and
//! checking them: `auth::links`.)

use super::downloads::Variant;
use serde::{Deserialize, Serialize};
use uuid::Uuid;

wire_enum! {
    /// What a signed link opens.
    pub enum LinkKind {
        /// `image.archiveToken`: a zip of one image's original and renders.
        Archive = "archive",
        /// `image.downloadToken`: one file of one image.
        Download = "download",
        /// `album.downloadToken`: a zip of a folder.
        AlbumDownload = "album_download",
    }
}

/// The claims of a link: who may open what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Link {
    pub kind: LinkKind,
    pub owner: Uuid,
    /// The image, or the folder of an `album_download` link.
    pub subject: Uuid,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<Variant>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub crop: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec: Option<i64>,
    /// For `download`: the folder the photo was in when the link was made.
    /// The link is scoped to that membership: once the photo moves, the
    /// link is stale.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub album: Option<Uuid>,
    /// With `album`: the generation of that membership (moving away and
    /// back is a new one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub membership: Option<i64>,
}

impl Link {
    pub fn new(kind: LinkKind, owner: Uuid, subject: Uuid) -> Link {
        Link {
            kind,
            owner,
            subject,
            variant: None,
            crop: None,
            spec: None,
            album: None,
            membership: None,
        }
    }

    /// Whether a photo now in `album` (at `membership`) is still in the
    /// folder, and the same stay in it, that the link was made for.
    pub fn in_scope(&self, album: Uuid, membership: i64) -> bool {
        self.album.is_none_or(|a| a == album) && self.membership.is_none_or(|m| m == membership)
    }

    /// Whether it opens `kind` for `subject`.
    pub fn opens(&self, kind: LinkKind, subject: Uuid) -> bool {
        self.kind == kind && self.subject == subject
    }
}

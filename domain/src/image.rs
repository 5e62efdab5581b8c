//! A photo: its processing status, its own visibility, and whether
//! visitors may see it (the one eligibility rule every visitor route, the
//! preview, the stats and the cover choice use).

use super::crop::Format;
use super::exif::{ExifInfo, ExifVisibility};
use super::moderation::Takedown;
use uuid::Uuid;

/// Longest side under this many pixels: too small to show visitors.
pub const MIN_VISIBLE_SIDE: u32 = 200;

wire_enum! {
    /// ImageDTO `status`.
    pub enum ImageStatus {
        /// Renders pending.
        Processing = "processing",
        /// Every render produced.
        Ready = "ready",
        /// The original could not be decoded or rendered.
        Failed = "failed",
    }
}

wire_enum! {
    /// A photo's own visibility (`image.setVisibility`).
    pub enum Visibility {
        Public = "public",
        Private = "private",
    }
}

wire_enum! {
    /// ImageDTO `visitor_eligibility`.
    pub enum Eligibility {
        Visible = "visible",
        Processing = "processing",
        Failed = "failed",
        TooSmall = "too_small",
        TakenDown = "taken_down",
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Image {
    pub id: Uuid,
    pub owner_id: Uuid,
    pub album_id: Uuid,
    pub title: String,
    pub description: String,
    pub status: ImageStatus,
    /// The original's format.
    pub format: Format,
    pub width: u32,
    pub height: u32,
    pub size_bytes: u64,
    pub original_key: String,
    pub exif: ExifInfo,
    pub exif_visibility: ExifVisibility,
    pub visibility: Option<Visibility>,
    pub taken_at: Option<i64>,
    /// `taken_at`, else `created_at`: the list order.
    pub sort_at: i64,
    pub created_at: i64,
    /// Place in its folder's manual order (`album.reorder`).
    pub position: Option<i64>,
    /// Grows each time the photo changes folder: the generation of its
    /// membership, which a download link is scoped to.
    pub membership: i64,
    pub takedown: Takedown,
}

impl Image {
    /// Whether visitors may see the photo, and if not why.
    pub fn eligibility(&self) -> Eligibility {
        if self.takedown.is_active() {
            return Eligibility::TakenDown;
        }
        match self.status {
            ImageStatus::Processing => Eligibility::Processing,
            ImageStatus::Failed => Eligibility::Failed,
            ImageStatus::Ready if self.width.max(self.height) < MIN_VISIBLE_SIDE => {
                Eligibility::TooSmall
            }
            ImageStatus::Ready => Eligibility::Visible,
        }
    }

    pub fn is_visible(&self) -> bool {
        self.eligibility() == Eligibility::Visible
    }

    /// Made public by its owner (not through a folder).
    pub fn is_public(&self) -> bool {
        self.visibility == Some(Visibility::Public)
    }

    pub fn is_captioned(&self) -> bool {
        captioned(&self.title, &self.description)
    }
}

/// A title or a description that says something.
pub fn captioned(title: &str, description: &str) -> bool {
    !title.trim().is_empty() || !description.trim().is_empty()
}

//! A folder: its owner, its publication mode, and the visitor policy with
//! the photo order it names.

use super::error::Result;
use super::exif::ExifVisibility;
use super::image::Image;
use super::moderation::Takedown;
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;
use uuid::Uuid;

#[derive(Debug, Clone, PartialEq)]
pub struct Album {
    pub id: Uuid,
    pub owner_id: Uuid,
    pub name: String,
    pub description: String,
    pub is_default: bool,
    pub created_at: i64,
    pub mode: PublishMode,
    pub last_published_mode: Option<PublishMode>,
    pub published_at: Option<i64>,
    pub policy: Policy,
    pub cover_image_id: Option<Uuid>,
    pub takedown: Takedown,
    /// Filled by reads; ignored on insert.
    pub image_count: i64,
}

impl Album {
    /// A new, private, empty folder.
    pub fn new(id: Uuid, owner_id: Uuid, name: &str, description: &str, now: i64) -> Album {
        Album {
            id,
            owner_id,
            name: name.to_owned(),
            description: description.to_owned(),
            is_default: false,
            created_at: now,
            mode: PublishMode::Private,
            last_published_mode: None,
            published_at: None,
            policy: Policy::default(),
            cover_image_id: None,
            takedown: Takedown::default(),
            image_count: 0,
        }
    }
}

wire_enum! {
    /// A folder's publication mode (albumDTO `visibility`, sharingDTO `mode`).
    pub enum PublishMode {
        Private = "private",
        Unlisted = "unlisted",
        Public = "public",
    }
}

impl PublishMode {
    pub fn is_published(self) -> bool {
        self != PublishMode::Private
    }
}

wire_enum! {
    /// Policy `order`.
    pub enum Order {
        Manual = "manual",
        TakenDesc = "taken_desc",
        TakenAsc = "taken_asc",
        UploadedDesc = "uploaded_desc",
        UploadedAsc = "uploaded_asc",
    }
}

wire_enum! {
    /// Policy `cover_focus`: where a cover is cut.
    pub enum CoverFocus {
        Center = "center",
        Top = "top",
        Bottom = "bottom",
        Left = "left",
        Right = "right",
        Smart = "smart",
    }
}

/// The visitor policy of a folder (sharingPolicyDTO). Changing it never
/// re-renders anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(default)]
pub struct Policy {
    pub show_location: bool,
    pub show_date: bool,
    pub show_camera: bool,
    pub allow_download: bool,
    pub feed: bool,
    pub order: Order,
    pub cover_focus: CoverFocus,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            show_location: false,
            show_date: true,
            show_camera: true,
            allow_download: false,
            feed: false,
            order: Order::TakenDesc,
            cover_focus: CoverFocus::Center,
        }
    }
}

impl Policy {
    /// What a folder's visitor may see of a photo's EXIF: a group shows
    /// only when the photo allows it and the policy does (settings go with
    /// the camera).
    pub fn allowed_exif(&self, photo: ExifVisibility) -> ExifVisibility {
        ExifVisibility {
            gps: photo.gps && self.show_location,
            camera: photo.camera && self.show_camera,
            datetime: photo.datetime && self.show_date,
            settings: photo.settings && self.show_camera,
        }
    }

    /// The stored JSON; anything unreadable falls back to the defaults.
    pub fn parse(json: &str) -> Policy {
        serde_json::from_str(json).unwrap_or_default()
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Puts photos in the policy's order. `manual` follows `album.reorder`,
    /// photos never placed coming after, newest taken first.
    pub fn sort(&self, images: &mut [Image]) {
        match self.order {
            Order::TakenAsc => images.sort_by_key(|i| (i.sort_at, i.id)),
            Order::UploadedDesc => images.sort_by_key(|i| Reverse((i.created_at, i.id))),
            Order::UploadedAsc => images.sort_by_key(|i| (i.created_at, i.id)),
            Order::Manual => images.sort_by_key(|i| {
                (
                    i.position.is_none(),
                    i.position,
                    Reverse(i.sort_at),
                    Reverse(i.id),
                )
            }),
            Order::TakenDesc => images.sort_by_key(|i| Reverse((i.sort_at, i.id))),
        }
    }
}

/// `album.sharing.setPolicy`: only what is sent changes.
#[derive(Debug, Default, Deserialize)]
pub struct PolicyPatch {
    pub show_location: Option<bool>,
    pub show_date: Option<bool>,
    pub show_camera: Option<bool>,
    pub allow_download: Option<bool>,
    pub feed: Option<bool>,
    pub order: Option<Order>,
    pub cover_focus: Option<CoverFocus>,
}

impl PolicyPatch {
    pub fn apply(self, mut p: Policy) -> Policy {
        p.order = self.order.unwrap_or(p.order);
        p.cover_focus = self.cover_focus.unwrap_or(p.cover_focus);
        p.show_location = self.show_location.unwrap_or(p.show_location);
        p.show_date = self.show_date.unwrap_or(p.show_date);
        p.show_camera = self.show_camera.unwrap_or(p.show_camera);
        p.allow_download = self.allow_download.unwrap_or(p.allow_download);
        p.feed = self.feed.unwrap_or(p.feed);
        p
    }
}

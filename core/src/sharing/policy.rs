//! The visitor policy of a folder (sharingPolicyDTO) and the photo order it
//! names. Changing it never re-renders anything.

use crate::db::ImageRow;
use crate::{Error, Result};
use serde::{Deserialize, Serialize};
use std::cmp::Reverse;

pub const ORDERS: &[&str] = &[
    "manual",
    "taken_desc",
    "taken_asc",
    "uploaded_desc",
    "uploaded_asc",
];
pub const COVER_FOCUSES: &[&str] = &["center", "top", "bottom", "left", "right", "smart"];

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Policy {
    pub show_location: bool,
    pub show_date: bool,
    pub show_camera: bool,
    pub allow_download: bool,
    pub feed: bool,
    pub order: String,
    pub cover_focus: String,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            show_location: false,
            show_date: true,
            show_camera: true,
            allow_download: false,
            feed: false,
            order: "taken_desc".into(),
            cover_focus: "center".into(),
        }
    }
}

impl Policy {
    /// The stored JSON; anything unreadable falls back to the defaults.
    pub fn parse(json: &str) -> Policy {
        serde_json::from_str(json).unwrap_or_default()
    }

    pub fn to_json(&self) -> Result<String> {
        Ok(serde_json::to_string(self).map_err(anyhow::Error::from)?)
    }

    /// Puts photos in the policy's order. `manual` follows `album.reorder`,
    /// photos never placed coming after, newest taken first.
    pub fn sort(&self, images: &mut [ImageRow]) {
        match self.order.as_str() {
            "taken_asc" => images.sort_by_key(|i| (i.sort_at, i.id)),
            "uploaded_desc" => images.sort_by_key(|i| Reverse((i.created_at, i.id))),
            "uploaded_asc" => images.sort_by_key(|i| (i.created_at, i.id)),
            "manual" => images.sort_by_key(|i| {
                (
                    i.position.is_none(),
                    i.position,
                    Reverse(i.sort_at),
                    Reverse(i.id),
                )
            }),
            _ => images.sort_by_key(|i| Reverse((i.sort_at, i.id))),
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
    pub order: Option<String>,
    pub cover_focus: Option<String>,
}

impl PolicyPatch {
    pub fn apply(self, mut p: Policy) -> Result<Policy> {
        if let Some(order) = self.order {
            if !ORDERS.contains(&order.as_str()) {
                return Err(Error::invalid(
                    "order",
                    format!("must be one of {ORDERS:?}"),
                ));
            }
            p.order = order;
        }
        if let Some(focus) = self.cover_focus {
            if !COVER_FOCUSES.contains(&focus.as_str()) {
                return Err(Error::invalid(
                    "cover_focus",
                    format!("must be one of {COVER_FOCUSES:?}"),
                ));
            }
            p.cover_focus = focus;
        }
        p.show_location = self.show_location.unwrap_or(p.show_location);
        p.show_date = self.show_date.unwrap_or(p.show_date);
        p.show_camera = self.show_camera.unwrap_or(p.show_camera);
        p.allow_download = self.allow_download.unwrap_or(p.allow_download);
        p.feed = self.feed.unwrap_or(p.feed);
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patch_changes_only_what_is_sent_and_checks_enums() {
        let p = PolicyPatch {
            feed: Some(true),
            order: Some("taken_asc".into()),
            ..Default::default()
        }
        .apply(Policy::default())
        .unwrap();
        assert!(p.feed && p.show_date && !p.show_location);
        assert_eq!(p.order, "taken_asc");
        let bad = PolicyPatch {
            cover_focus: Some("middle".into()),
            ..Default::default()
        }
        .apply(Policy::default());
        assert!(matches!(bad, Err(Error::Validation(_))));
        assert_eq!(Policy::parse("{}"), Policy::default());
    }
}

//! The EXIF facts Lightbox keeps of a photo, and which groups a viewer may
//! see (the photo's own visibility; for a folder's visitors, also the
//! folder's policy: `album::Policy::allowed_exif`). Reading them from a
//! file: `render::exif`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Gps {
    pub lat: f64,
    pub lon: f64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Settings {
    pub exposure_time: Option<String>,
    pub f_number: Option<f64>,
    pub iso: Option<u32>,
    pub focal_length_mm: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExifInfo {
    /// RFC 3339; a time without an offset in the file is taken as UTC.
    pub taken_at: Option<String>,
    pub camera_make: Option<String>,
    pub camera_model: Option<String>,
    pub lens: Option<String>,
    pub gps: Option<Gps>,
    pub settings: Option<Settings>,
    /// EXIF orientation 1-8 (1 when absent).
    #[serde(skip)]
    pub orientation: u16,
}

impl ExifInfo {
    pub fn none() -> ExifInfo {
        ExifInfo {
            orientation: 1,
            ..Default::default()
        }
    }

    /// Whether width and height swap when displayed (orientations 5-8).
    pub fn swaps_axes(&self) -> bool {
        (5..=8).contains(&self.orientation)
    }

    pub fn has_camera(&self) -> bool {
        self.camera_make.is_some() || self.camera_model.is_some()
    }
}

/// Which EXIF groups may be shown to visitors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ExifVisibility {
    pub gps: bool,
    pub camera: bool,
    pub datetime: bool,
    pub settings: bool,
}

impl Default for ExifVisibility {
    fn default() -> Self {
        ExifVisibility {
            gps: false,
            camera: true,
            datetime: true,
            settings: true,
        }
    }
}

/// The EXIF a visitor may see.
#[derive(Debug, Default, Clone, Serialize, PartialEq, schemars::JsonSchema)]
pub struct PublicExif {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub taken_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub camera_make: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub camera_model: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lens: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gps: Option<Gps>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
}

/// The groups of `e` that `allowed` lets through.
pub fn visible_exif(e: &ExifInfo, allowed: ExifVisibility) -> PublicExif {
    PublicExif {
        taken_at: e.taken_at.clone().filter(|_| allowed.datetime),
        camera_make: e.camera_make.clone().filter(|_| allowed.camera),
        camera_model: e.camera_model.clone().filter(|_| allowed.camera),
        lens: e.lens.clone().filter(|_| allowed.camera),
        gps: e.gps.filter(|_| allowed.gps),
        settings: e.settings.clone().filter(|_| allowed.settings),
    }
}

//! Crop specs: what a render is (code, box, mode, format, quality). One
//! type for presets (configuration and the CropPreset resource), folder
//! crop rules and an image's custom crops.

use super::checks::Checks;
use super::error::Result;
use super::focus::{At, Focus, Point};
use serde::{Deserialize, Serialize};

/// The largest box side a spec may ask for.
pub const MAX_SIDE: u32 = 15_000;
/// Custom crops one image may have.
pub const MAX_CUSTOM_CROPS: i64 = 5;
pub const DEFAULT_QUALITY: u8 = 80;

wire_enum! {
    /// How the source fills the box.
    #[derive(Default)]
    pub enum Mode {
        /// Exactly the box, centre-cropped.
        #[default]
        Fill = "fill",
        /// Inside the box, aspect kept.
        Fit = "fit",
        /// Fit, then padded to the exact box.
        Pad = "pad",
    }
}

wire_enum! {
    /// A render's (and an original's) file format, named by its extension.
    #[derive(Default)]
    pub enum Format {
        #[default]
        Webp = "webp",
        Jpg = "jpg",
        Png = "png",
        Avif = "avif",
    }
}

impl Format {
    pub fn ext(self) -> &'static str {
        self.as_str()
    }

    pub fn mime(self) -> &'static str {
        match self {
            Format::Webp => "image/webp",
            Format::Jpg => "image/jpeg",
            Format::Png => "image/png",
            Format::Avif => "image/avif",
        }
    }
}

/// Where an image's wanted render comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecSource {
    Preset,
    /// A crop rule of the image's folder.
    AlbumRule,
    /// One of the image's own custom crops.
    Custom,
}

/// One render: a preset, a folder rule or an image's custom crop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CropSpec {
    pub code: String,
    pub width: u32,
    pub height: u32,
    #[serde(default)]
    pub mode: Mode,
    #[serde(default)]
    pub format: Format,
    #[serde(default = "default_quality")]
    pub quality: u8,
    /// Where a `fill` cuts; absent means centre. Never serialised when
    /// absent, so specs stored before it existed keep their version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub focus: Option<Focus>,
    /// The photo's focal point, set by the render job for one render
    /// (`aimed`); it wins over `focus`. Never stored or accepted.
    #[serde(skip)]
    pub at: Option<At>,
}

fn default_quality() -> u8 {
    DEFAULT_QUALITY
}

impl CropSpec {
    pub fn new(code: &str, width: u32, height: u32, mode: Mode) -> CropSpec {
        CropSpec {
            code: code.into(),
            width,
            height,
            mode,
            format: Format::Webp,
            quality: DEFAULT_QUALITY,
            focus: None,
            at: None,
        }
    }

    /// Everything that changes the output; a different key means a new version.
    pub fn key(&self) -> String {
        let focus = self.focus.map(|f| format!("/{f:?}")).unwrap_or_default();
        format!(
            "{}x{}/{:?}/{}/q{}{focus}",
            self.width,
            self.height,
            self.mode,
            self.format.ext(),
            self.quality
        )
    }

    /// The stored form; the database compares it to decide on a new version.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }

    pub fn validate(&self) -> Result<()> {
        Checks::new()
            .check(
                valid_code(&self.code),
                "code",
                "must match ^[a-z0-9][a-z0-9-]{0,31}$",
            )
            .check(self.width <= MAX_SIDE, "width", "must be 0-15000")
            .check(self.height <= MAX_SIDE, "height", "must be 0-15000")
            .check(
                self.width > 0 || self.height > 0,
                "width",
                "width or height must be positive",
            )
            .check(
                (1..=100).contains(&self.quality),
                "quality",
                "must be 1-100",
            )
            .finish()
    }
}

/// `^[a-z0-9][a-z0-9-]{0,31}$`
pub fn valid_code(code: &str) -> bool {
    let b = code.as_bytes();
    let lower_digit = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
    (1..=32).contains(&b.len())
        && lower_digit(&b[0])
        && b[1..].iter().all(|c| lower_digit(c) || *c == b'-')
}

/// ../shared/spec/decisions.md's default preset set.
pub fn default_presets() -> Vec<CropSpec> {
    vec![
        CropSpec::new("thumb", 400, 400, Mode::Fill),
        CropSpec::new("small", 640, 0, Mode::Fit),
        CropSpec::new("medium", 1280, 0, Mode::Fit),
        CropSpec::new("large", 2048, 0, Mode::Fit),
    ]
}

/// Every render an image should have: the presets, then its folder's crop
/// rules (a rule with a preset's code replaces that preset), then its own
/// custom crops.
pub fn desired(
    presets: Vec<CropSpec>,
    rules: Vec<CropSpec>,
    custom: Vec<CropSpec>,
) -> Vec<(CropSpec, SpecSource)> {
    let mut specs: Vec<_> = presets
        .into_iter()
        .map(|s| (s, SpecSource::Preset))
        .collect();
    let rules = rules.into_iter().map(|s| (s, SpecSource::AlbumRule));
    for (spec, source) in rules.chain(custom.into_iter().map(|s| (s, SpecSource::Custom))) {
        match specs.iter_mut().find(|(s, _)| s.code == spec.code) {
            Some(slot) => *slot = (spec, source),
            None => specs.push((spec, source)),
        }
    }
    specs
}

/// Whether the photo's focal point decides this render: every `fill`,
/// except a custom crop that names its own focus.
pub fn takes_point(spec: &CropSpec, source: SpecSource) -> bool {
    spec.mode == Mode::Fill && !(source == SpecSource::Custom && spec.focus.is_some())
}

/// The spec as one photo renders it: where the focal point applies
/// (`takes_point`), it becomes the spec's `at`.
pub fn aimed(mut spec: CropSpec, source: SpecSource, point: Option<Point>) -> CropSpec {
    if let Some(p) = point.filter(|_| takes_point(&spec, source)) {
        spec.at = Some(p.at());
    }
    spec
}

/// Where a new custom crop's code may not go: a preset's or a folder rule's.
pub fn custom_code_clash(
    code: &str,
    presets: &[CropSpec],
    rules: &[CropSpec],
) -> Option<&'static str> {
    if presets.iter().any(|p| p.code == code) {
        Some("is the code of a preset")
    } else if rules.iter().any(|r| r.code == code) {
        Some("is the code of a folder crop rule")
    } else {
        None
    }
}

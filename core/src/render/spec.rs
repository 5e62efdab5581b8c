//! What a render is (crop code, box, mode, format, quality) and where its
//! pixels come from (the geometry plan). Pure: no I/O, no pixels.

use crate::validate::Checks;
use crate::Result;
use serde::{Deserialize, Serialize};

pub const MAX_SIDE: u32 = 15_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Exactly the box, centre-cropped.
    #[default]
    Fill,
    /// Inside the box, aspect kept.
    Fit,
    /// Fit, then padded to the exact box.
    Pad,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    #[default]
    Webp,
    Jpg,
    Png,
}

impl Format {
    pub fn ext(self) -> &'static str {
        match self {
            Format::Webp => "webp",
            Format::Jpg => "jpg",
            Format::Png => "png",
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            Format::Webp => "image/webp",
            Format::Jpg => "image/jpeg",
            Format::Png => "image/png",
        }
    }

    pub fn from_ext(ext: &str) -> Option<Format> {
        match ext {
            "webp" => Some(Format::Webp),
            "jpg" => Some(Format::Jpg),
            "png" => Some(Format::Png),
            _ => None,
        }
    }
}

/// One render: a preset, a folder rule or an image's custom crop.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
}

fn default_quality() -> u8 {
    80
}

impl CropSpec {
    pub fn new(code: &str, width: u32, height: u32, mode: Mode) -> CropSpec {
        CropSpec {
            code: code.into(),
            width,
            height,
            mode,
            format: Format::Webp,
            quality: 80,
        }
    }

    /// Everything that changes the output; a different key means a new version.
    pub fn key(&self) -> String {
        format!(
            "{}x{}/{:?}/{}/q{}",
            self.width,
            self.height,
            self.mode,
            self.format.ext(),
            self.quality
        )
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

/// decisions.md's default preset set.
pub fn default_presets() -> Vec<CropSpec> {
    vec![
        CropSpec::new("thumb", 400, 400, Mode::Fill),
        CropSpec::new("small", 640, 0, Mode::Fit),
        CropSpec::new("medium", 1280, 0, Mode::Fit),
        CropSpec::new("large", 2048, 0, Mode::Fit),
    ]
}

/// Where a render's pixels come from and where they go.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Geometry {
    /// The source region, in source pixels: (left, top, width, height).
    pub source: (f64, f64, f64, f64),
    /// The size the region is resized to.
    pub resized: (u32, u32),
    /// The output size (bigger than `resized` only when padding).
    pub canvas: (u32, u32),
    /// Where the resized region sits on the canvas.
    pub offset: (u32, u32),
}

fn px(v: f64) -> u32 {
    (v.round() as u32).max(1)
}

/// Plans a render of a `w`x`h` (already oriented) source. Nothing is ever
/// upscaled: a box larger than the source shrinks to what the source holds.
pub fn plan(w: u32, h: u32, spec: &CropSpec) -> Geometry {
    let (sw, sh) = (w as f64, h as f64);
    let whole = (0.0, 0.0, sw, sh);
    let (bw, bh) = (spec.width as f64, spec.height as f64);
    let fitted = |s: f64| {
        let s = s.min(1.0);
        let size = (px(sw * s), px(sh * s));
        Geometry {
            source: whole,
            resized: size,
            canvas: size,
            offset: (0, 0),
        }
    };
    if spec.height == 0 {
        return fitted(bw / sw);
    }
    if spec.width == 0 {
        return fitted(bh / sh);
    }
    match spec.mode {
        Mode::Fit => fitted((bw / sw).min(bh / sh)),
        Mode::Fill => {
            let s = (bw / sw).max(bh / sh);
            // A box too big for the source shrinks, keeping its shape.
            let (bw, bh) = if s > 1.0 { (bw / s, bh / s) } else { (bw, bh) };
            let s = s.min(1.0);
            let (cw, ch) = ((bw / s).min(sw), (bh / s).min(sh));
            let size = (px(bw), px(bh));
            Geometry {
                source: ((sw - cw) / 2.0, (sh - ch) / 2.0, cw, ch),
                resized: size,
                canvas: size,
                offset: (0, 0),
            }
        }
        Mode::Pad => {
            let s = (bw / sw).min(bh / sh);
            let (bw, bh) = if s > 1.0 { (bw / s, bh / s) } else { (bw, bh) };
            let s = s.min(1.0);
            let resized = (px(sw * s), px(sh * s));
            let canvas = (px(bw).max(resized.0), px(bh).max(resized.1));
            Geometry {
                source: whole,
                resized,
                canvas,
                offset: ((canvas.0 - resized.0) / 2, (canvas.1 - resized.1) / 2),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(w: u32, h: u32, mode: Mode) -> CropSpec {
        CropSpec::new("x", w, h, mode)
    }

    #[test]
    fn width_only_keeps_aspect_and_never_upscales() {
        let g = plan(6028, 3391, &spec(2048, 0, Mode::Fit));
        assert_eq!(g.canvas, (2048, 1152));
        assert_eq!(
            plan(1000, 500, &spec(2048, 0, Mode::Fill)).canvas,
            (1000, 500)
        );
        assert_eq!(
            plan(1000, 500, &spec(0, 100, Mode::Fill)).canvas,
            (200, 100)
        );
    }

    #[test]
    fn fill_is_the_exact_box_centre_cropped() {
        let g = plan(6000, 3000, &spec(400, 400, Mode::Fill));
        assert_eq!(g.canvas, (400, 400));
        assert_eq!(g.source, (1500.0, 0.0, 3000.0, 3000.0));
        // Box larger than the source: shrinks to what it holds, same shape.
        let g = plan(300, 200, &spec(400, 400, Mode::Fill));
        assert_eq!(g.canvas, (200, 200));
        assert_eq!(g.source, (50.0, 0.0, 200.0, 200.0));
    }

    #[test]
    fn fit_and_pad() {
        assert_eq!(
            plan(6000, 3000, &spec(400, 400, Mode::Fit)).canvas,
            (400, 200)
        );
        let g = plan(6000, 3000, &spec(400, 400, Mode::Pad));
        assert_eq!(
            (g.resized, g.canvas, g.offset),
            ((400, 200), (400, 400), (0, 100))
        );
        let g = plan(100, 50, &spec(400, 400, Mode::Pad));
        assert_eq!(
            (g.resized, g.canvas, g.offset),
            ((100, 50), (100, 100), (0, 25))
        );
    }

    #[test]
    fn validation() {
        assert!(spec(400, 0, Mode::Fill).validate().is_ok());
        assert!(spec(0, 0, Mode::Fill).validate().is_err());
        assert!(spec(15001, 1, Mode::Fill).validate().is_err());
        let mut s = spec(1, 1, Mode::Fill);
        s.quality = 0;
        assert!(s.validate().is_err());
        for ok in ["a", "a-b", "0", &"a".repeat(32)] {
            assert!(valid_code(ok), "{ok}");
        }
        for bad in ["", "-a", "A", "a_b", "a.b", &"a".repeat(33)] {
            assert!(!valid_code(bad), "{bad}");
        }
    }
}

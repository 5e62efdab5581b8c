//! Where a `fill` crop cuts: a spec's `focus` (an edge, the centre, or the
//! most salient part) and the owner's focal point of a photo. Which
//! renders the focal point decides is `crop::takes_point`.

use super::error::{Error, Result};
use serde::{Deserialize, Serialize};

wire_enum! {
    /// A crop spec's `focus`: where a `fill` keeps the picture.
    #[derive(Default)]
    pub enum Focus {
        #[default]
        Center = "center",
        Top = "top",
        Bottom = "bottom",
        Left = "left",
        Right = "right",
        /// The most salient window (`render::smart`).
        Smart = "smart",
    }
}

/// A point on the photo, as fractions of its width and height: the
/// owner's focal point (`image.update` `focus`), or the most salient point
/// the render job found.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, schemars::JsonSchema)]
pub struct Point {
    pub x: f64,
    pub y: f64,
}

/// Only the object form `{x, y}`: serde's derive would also take `[x, y]`,
/// which the contract does not name.
impl<'de> Deserialize<'de> for Point {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Xy {
            x: f64,
            y: f64,
        }
        struct Object;
        impl<'de> serde::de::Visitor<'de> for Object {
            type Value = Point;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object {x, y}")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                m: A,
            ) -> std::result::Result<Point, A::Error> {
                let xy = Xy::deserialize(serde::de::value::MapAccessDeserializer::new(m))?;
                Ok(Point { x: xy.x, y: xy.y })
            }
        }
        d.deserialize_map(Object)
    }
}

impl Point {
    pub fn valid(&self) -> bool {
        (0.0..=1.0).contains(&self.x) && (0.0..=1.0).contains(&self.y)
    }

    /// The point as one render carries it (`CropSpec::at`), in 1/10000ths
    /// of the width and height, clamped to the photo.
    pub fn at(self) -> At {
        let q = |v: f64| (v.clamp(0.0, 1.0) * 10_000.0).round() as u16;
        At {
            x: q(self.x),
            y: q(self.y),
        }
    }
}

/// A focal point given to one render by the render job, in 1/10000ths of
/// the photo's width and height; never stored or accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    pub x: u16,
    pub y: u16,
}

impl At {
    /// The point as fractions of the width and height.
    pub fn fractions(self) -> (f64, f64) {
        (self.x as f64 / 10_000.0, self.y as f64 / 10_000.0)
    }
}

/// `image.update` `focus`: `{x, y}` with both in 0..1, or null.
pub fn check_point(focus: Option<Point>) -> Result<()> {
    match focus {
        Some(p) if !p.valid() => Err(Error::invalid("focus", "x and y must be 0-1")),
        _ => Ok(()),
    }
}

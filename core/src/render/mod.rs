//! The render pipeline: the geometry of a crop spec (`spec`), reading
//! uploads without decoding them (`probe`, `exif`), and the pixels
//! (`pixels`, `pipeline`, with JPEG shrink-on-load in `shrink`, once
//! `jpeg_markers` has read a JPEG's markers).

pub mod avif;
pub mod cascade;
pub mod exif;
pub mod focus;
pub mod jpeg_markers;
pub mod layouts;
pub mod lossy_webp;
pub mod orient;
pub mod pipeline;
pub mod pixels;
pub mod placeholder;
pub mod priority;
pub mod probe;
pub mod progressive;
mod reduced_idct;
pub mod shrink;
pub mod small;
pub mod smart;
pub mod spec;
pub mod still_webp;
pub mod trailers;

#[cfg(test)]
mod icc_tests;

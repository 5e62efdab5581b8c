//! The render pipeline: the geometry of a crop spec (`spec`), reading
//! uploads without decoding them (`probe`, `exif`), and the pixels
//! (`pixels`, `pipeline`, with JPEG shrink-on-load in `shrink`).

pub mod exif;
pub mod pipeline;
pub mod pixels;
pub mod probe;
pub mod shrink;
pub mod spec;

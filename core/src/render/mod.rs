//! The render pipeline: specs and geometry (`spec`), reading uploads without
//! decoding them (`probe`, `exif`), and the pixels (`pipeline`, with JPEG
//! shrink-on-load in `shrink`).

pub mod exif;
pub mod pipeline;
pub mod probe;
pub mod shrink;
pub mod spec;

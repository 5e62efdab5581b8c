//! The render pipeline: specs and geometry (`spec`), reading uploads without
//! decoding them (`probe`, `exif`), and the pixels (`pipeline`).

pub mod exif;
pub mod pipeline;
pub mod probe;
pub mod spec;

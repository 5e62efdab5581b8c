//! What an upload is, from its bytes alone: its format and size (`probe`),
//! the EXIF fields kept (`exif`), and the parts phones append after a JPEG
//! (`trailers`, `layouts`). No pixel is decoded here.

pub mod exif;
pub mod layouts;
pub mod probe;
pub mod trailers;

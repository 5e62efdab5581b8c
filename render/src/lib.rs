//! Lightbox's pixels, grouped by stage: reading an upload without decoding
//! it (`inspect`), JPEG shrink-on-load with its scan limit (`jpeg`), where
//! each render's pixels come from (`geometry`), and the encoders
//! (`encode`). `pipeline` decodes once per image and resizes and encodes a
//! render; `cascade` makes every render of an image, each from the
//! smallest render already made that is big enough. Depends on `lightbox-domain` alone; the only crate
//! of the workspace that links codecs.

pub mod cascade;
pub mod cpu;
pub mod encode;
pub mod geometry;
pub mod inspect;
pub mod jpeg;
pub mod pipeline;
pub mod pixels;
pub mod webp_decode;

//! The encoders: WebP by libwebp (`webp`), AVIF by rav1e (`avif`), and the
//! ThumbHash placeholder (`placeholder`).

pub mod avif;
pub mod placeholder;
pub mod webp;

//! JPEGs: a walk over the markers (`markers`: scans, ICC profile, colour
//! space) and shrink-on-load in the DCT (`shrink`), both before any pixel.

pub mod markers;
pub mod shrink;

#[cfg(test)]
mod icc_tests;

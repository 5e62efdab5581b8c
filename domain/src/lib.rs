//! Lightbox's types and rules, pure: no database, no HTTP, no storage, no
//! clock. Every state is an enum whose serde name is its wire string, and
//! every rule that decides what an owner or a visitor may do or see is a
//! function here, over these types, tested without a server.
//!
//! The database maps its rows to these types at its boundary (`crate::db`);
//! the services (`images`, `albums`, `sharing`, `accounts`, ...) take and
//! return them.

#[macro_use]
mod wire;

pub mod accounts;
pub mod album;
pub mod alias;
pub mod availability;
pub mod checks;
pub mod counts;
pub mod crop;
pub mod details;
pub mod downloads;
pub mod error;
pub mod exif;
pub mod focus;
pub mod id;
pub mod image;
pub mod jobs;
pub mod links;
pub mod moderation;
pub mod render;
pub mod sharing;
pub mod urls;

#[cfg(test)]
mod tests;

//! Lightbox's shared library. The binaries (`lightbox-api`,
//! `lightbox-worker`, `lightbox-controller`) are thin shells around it.
//!
//! - `domain`: the types and rules, pure (no I/O).
//! - Services over them, one per feature: `accounts` and `auth`, `images`
//!   (uploads, the owner's view, downloads), `albums` (folders, crop rules,
//!   folder zips), `sharing` (publication, aliases, visitor pages),
//!   `moderation`, `renders` (the render job) and `resources` (the
//!   operator's presets and quotas).
//! - Infrastructure behind small traits: `db` (SQLite and PostgreSQL),
//!   `store` (blobs), `queue` (in-process or NATS JetStream), `render` (the
//!   pixel pipeline), `stored_renders` (what `/i/` serves, cached), `archive`
//!   (streamed zips), `config`, `metrics`, `health`.

pub mod accounts;
pub mod albums;
pub mod archive;
pub mod auth;
pub mod config;
pub mod db;
pub mod error;
pub mod health;
pub mod ids;
pub mod images;
pub mod limits;
pub mod metrics;
pub mod moderation;
pub mod queue;
pub mod render_job;
pub mod resources;
pub mod runtime;
pub mod sharing;
pub mod store;
pub mod stored_renders;
pub mod sys;
pub mod time;

pub use error::{Error, Result};
// The pure layers, crates of their own so Cargo keeps them pure; named here
// too for the binaries.
pub use lightbox_domain as domain;
pub use lightbox_render as render;

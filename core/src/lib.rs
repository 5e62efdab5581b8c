//! Lightbox's shared library: configuration, the domain rules, the database,
//! the blob store and (later) the queue and the render pipeline. The API, the
//! worker and the controller binaries are thin shells around it.

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
pub mod metrics;
pub mod moderation;
pub mod queue;
pub mod render;
pub mod renders;
pub mod resources;
pub mod runtime;
pub mod serving;
pub mod sharing;
pub mod store;
pub mod time;
pub mod validate;

pub use error::{Error, Result};

//! The database behind small role traits. The business logic holds an
//! `Arc<dyn Repo>` and never learns which engine it got.
//!
//! One implementation (`sql.rs`) serves SQLite and PostgreSQL: every
//! statement is written in the dialect both speak (`$n` placeholders, TEXT
//! ids, BIGINT times, `ON CONFLICT`, `RETURNING`), and each engine keeps its
//! own migrations folder for the places where the schemas may differ.

pub mod album_views;
pub mod albums;
pub mod budget;
pub mod details;
pub mod images;
pub mod jobs;
pub mod outbox;
pub mod renders;
pub mod resources;
mod sql;

/// A fresh database and its first rows, for tests beyond the SQL module.
#[cfg(test)]
pub(crate) use sql::testing;

use crate::Result;
use async_trait::async_trait;
use lightbox_domain::accounts::{Pat, RefreshToken, User};
use std::sync::Arc;
use uuid::Uuid;

pub use album_views::{AlbumCounts, AlbumViewRepo, Walk};
pub use albums::{
    AlbumRepo, AliasChange, LinkChange, Moderated, Publication, Published, SharingRepo,
};
pub use budget::BudgetRepo;
pub use details::DetailsRepo;
pub use images::{ImageChange, ImageRepo, ImageView};
pub use jobs::{JobRepo, NewJob};
pub use outbox::{OutboxRepo, OutboxRow};
pub use renders::{CropAdd, RenderRepo};
pub use resources::ResourceRepo;
pub use sql::schema::{self, Migrations};
pub use sql::SqlRepo;

/// Whether an insert or update hit a unique constraint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    Done,
    Conflict,
}

/// What presenting a refresh token did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefreshUse {
    /// It was live and is now spent; the session goes on.
    Spent { session_id: Uuid, user_id: Uuid },
    /// It had been spent before: the caller is replaying it.
    Replayed { session_id: Uuid },
    /// Unknown, expired, or its session has ended.
    Invalid,
}

#[async_trait]
pub trait UserRepo {
    async fn insert_user(&self, user: &User) -> Result<Write>;
    async fn user_by_id(&self, id: Uuid) -> Result<Option<User>>;
    async fn user_by_email(&self, email: &str) -> Result<Option<User>>;
    async fn list_users(&self) -> Result<Vec<User>>;
    async fn set_email(&self, id: Uuid, email: &str) -> Result<Write>;
    async fn set_password_hash(&self, id: Uuid, hash: &str) -> Result<()>;
}

#[async_trait]
pub trait SessionRepo {
    /// Starts a session with its first refresh token.
    async fn create_session(&self, user_id: Uuid, first: &RefreshToken) -> Result<()>;
    /// The user of a session that has not been revoked.
    async fn session_user(&self, session_id: Uuid) -> Result<Option<User>>;
    /// Spends a refresh token exactly once, even under concurrent calls.
    async fn spend_refresh(&self, token_hash: &str, now: i64) -> Result<RefreshUse>;
    async fn add_refresh(&self, row: &RefreshToken) -> Result<()>;
    /// Ends the session the token belongs to; false when the token is unknown.
    async fn revoke_session_of(&self, token_hash: &str, now: i64) -> Result<bool>;
    async fn revoke_session(&self, session_id: Uuid, now: i64) -> Result<()>;
    /// Ends every session of the user but `keep`, and spends `keep`'s refresh tokens.
    async fn revoke_sessions_except(&self, user_id: Uuid, keep: Uuid, now: i64) -> Result<()>;
}

#[async_trait]
pub trait PatRepo {
    async fn insert_pat(&self, pat: &Pat) -> Result<()>;
    async fn pats_of(&self, user_id: Uuid) -> Result<Vec<Pat>>;
    async fn pat_by_hash(&self, token_hash: &str) -> Result<Option<Pat>>;
    /// False when the user has no such live token.
    async fn revoke_pat(&self, user_id: Uuid, id: Uuid, now: i64) -> Result<bool>;
    /// Records use, at most once a minute per token.
    async fn touch_pat(&self, id: Uuid, now: i64) -> Result<()>;
}

#[async_trait]
pub trait ThrottleRepo {
    /// (consecutive failures, time of the last one).
    async fn login_failures(&self, email: &str, client: &str) -> Result<Option<(i64, i64)>>;
    /// Counts a failure; one more than a day after the last starts again at 1.
    async fn record_login_failure(&self, email: &str, client: &str, now: i64) -> Result<i64>;
    async fn clear_login_failures(&self, email: &str, client: &str) -> Result<()>;
}

#[async_trait]
pub trait Repo:
    UserRepo
    + SessionRepo
    + PatRepo
    + ThrottleRepo
    + ImageRepo
    + RenderRepo
    + AlbumRepo
    + SharingRepo
    + OutboxRepo
    + ResourceRepo
    + BudgetRepo
    + DetailsRepo
    + AlbumViewRepo
    + JobRepo
    + Send
    + Sync
{
    /// A round trip to the database, for readiness.
    async fn ping(&self) -> Result<()>;

    /// The same database for a render job's bookkeeping: on SQLite its
    /// commits do not wait for the log to reach the disk, so a power loss
    /// can undo its last ones (only ever with every commit after them: the
    /// state a kill at that instant would have left, whose owed work
    /// `Images::recover` enqueues). A bumped render version, and every
    /// commit before a blob key is handed back for deletion, are synced
    /// even so. PostgreSQL: the same handle.
    fn relaxed(&self) -> DynRepo;
}

pub type DynRepo = Arc<dyn Repo>;

/// Connects by URL (`sqlite://…` or `postgres://…`) and migrates.
pub async fn connect(url: &str) -> anyhow::Result<DynRepo> {
    open(url, Migrations::Run).await
}

/// Connects, migrating first or only checking that this binary can run
/// against the schema (`sql::schema`).
pub async fn open(url: &str, migrations: Migrations) -> anyhow::Result<DynRepo> {
    Ok(Arc::new(SqlRepo::open(url, migrations).await?))
}

//! `Repo` over sqlx's `Any` driver, for SQLite and PostgreSQL alike.

mod accounts;
mod album_stats;
mod album_views;
mod albums;
mod budget;
mod details;
#[cfg(test)]
pub(crate) use album_views::tests as testing;
mod image_rows;
mod image_views;
mod images;
mod jobs;
mod moderation;
mod outbox;
mod pools;
mod render_rows;
mod renders;
mod resources;
pub mod schema;
mod sharing;

use super::*;
use crate::error::OrInternal;
use crate::Error;
use sqlx::any::AnyRow;
use sqlx::migrate::Migrator;
use sqlx::{AnyPool, PgPool, Row};

static SQLITE: Migrator = sqlx::migrate!("./migrations/sqlite");
static POSTGRES: Migrator = sqlx::migrate!("./migrations/postgres");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Engine {
    Sqlite,
    Postgres,
}

#[derive(Clone)]
pub struct SqlRepo {
    pub(super) pool: AnyPool,
    engine: Engine,
    /// PostgreSQL only: the same database through sqlx's typed driver, for
    /// the reads behind every page of photos (`image_views`). `Any` copies
    /// each value of each row into its own representation before the code
    /// reads it (about 14 % of the service's CPU for an owner's page), and
    /// it cannot bind an array.
    typed: Option<PgPool>,
    /// SQLite only: the pool `relaxed()` hands out (`pools::Lax`).
    lax: Option<pools::Lax>,
    /// Set on a handle from `relaxed()`: the log its commits may have left
    /// unsynced (`durable_now`).
    unsynced_log: Option<std::sync::Arc<std::path::PathBuf>>,
}

impl SqlRepo {
    pub fn engine(&self) -> Engine {
        self.engine
    }
}

/// A stored value the code cannot read: the database holds something no
/// version of Lightbox wrote.
fn unreadable(col: &str, what: impl std::fmt::Display) -> Error {
    Error::Internal(anyhow::anyhow!("unreadable {col} in the database: {what}"))
}

/// A stored state, through its wire name (`domain`'s `wire_enum!`).
fn state<T>(row: &AnyRow, col: &str, parse: fn(&str) -> Option<T>) -> Result<T> {
    state_of(col, &row.try_get::<String, _>(col).or_internal()?, parse)
}

fn state_of<T>(col: &str, text: &str, parse: fn(&str) -> Option<T>) -> Result<T> {
    parse(text).ok_or_else(|| unreadable(col, format!("{text:?}")))
}

fn opt_state<T>(row: &AnyRow, col: &str, parse: fn(&str) -> Option<T>) -> Result<Option<T>> {
    opt_state_of(col, row.try_get(col).or_internal()?, parse)
}

fn opt_state_of<T>(
    col: &str,
    text: Option<String>,
    parse: fn(&str) -> Option<T>,
) -> Result<Option<T>> {
    text.map(|t| state_of(col, &t, parse)).transpose()
}

/// A JSON column (EXIF, policies, crop specs).
fn json<T: serde::de::DeserializeOwned>(row: &AnyRow, col: &str) -> Result<T> {
    let text: String = row.try_get(col).or_internal()?;
    serde_json::from_str(&text).map_err(|e| unreadable(col, e))
}

/// A count or size, never negative in the database.
fn unsigned<T: TryFrom<i64>>(row: &AnyRow, col: &str) -> Result<T> {
    unsigned_of(col, row.try_get(col).or_internal()?)
}

fn unsigned_of<T: TryFrom<i64>>(col: &str, n: i64) -> Result<T> {
    T::try_from(n).map_err(|_| unreadable(col, n))
}

/// A JSON column written by an older version may lack what this one
/// expects: it reads as the default rather than failing the request.
fn lenient_of<T: serde::de::DeserializeOwned + Default>(text: &str) -> T {
    serde_json::from_str(text).unwrap_or_default()
}

fn opt_uuid(row: &AnyRow, col: &str) -> Result<Option<Uuid>> {
    let text: Option<String> = row.try_get(col).or_internal()?;
    text.map(|t| Uuid::parse_str(&t).map_err(|e| unreadable(col, e)))
        .transpose()
}

fn uuid(row: &AnyRow, col: &str) -> Result<Uuid> {
    uuid_of(col, &row.try_get::<String, _>(col).or_internal()?)
}

fn uuid_of(col: &str, text: &str) -> Result<Uuid> {
    Uuid::parse_str(text).map_err(|e| Error::Internal(anyhow::anyhow!("bad uuid in {col}: {e}")))
}

/// Maps every row with `f`.
fn map_rows<T>(rows: &[AnyRow], f: fn(&AnyRow) -> Result<T>) -> Result<Vec<T>> {
    rows.iter().map(f).collect()
}

fn flag(row: &AnyRow, col: &str) -> Result<bool> {
    Ok(row.try_get::<i64, _>(col).or_internal()? != 0)
}

/// Maps a unique-constraint violation to `Write::Conflict`.
fn on_unique<T>(r: std::result::Result<T, sqlx::Error>) -> Result<Write> {
    match r {
        Ok(_) => Ok(Write::Done),
        Err(sqlx::Error::Database(e)) if e.is_unique_violation() => Ok(Write::Conflict),
        Err(e) => Err(e).or_internal(),
    }
}

/// A value to bind, for statements whose parameters are worked out at run
/// time.
enum Val {
    Int(i64),
    Text(String),
}

/// Binds `vals` in order, through either driver (`Any`, or the typed pool's
/// `Postgres`).
fn bind_all<'q, DB: sqlx::Database>(
    mut q: sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>,
    vals: Vec<Val>,
) -> sqlx::query::Query<'q, DB, <DB as sqlx::Database>::Arguments<'q>>
where
    i64: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
    String: sqlx::Encode<'q, DB> + sqlx::Type<DB>,
{
    for v in vals {
        q = match v {
            Val::Int(n) => q.bind(n),
            Val::Text(s) => q.bind(s),
        };
    }
    q
}

/// A row lock for a subquery that checks a row is there: `FOR KEY SHARE`
/// on PostgreSQL, so a deletion under way is waited for and the row then
/// found gone; nothing on SQLite, whose writing statement already holds the
/// database's write lock when it reads.
fn key_share(engine: Engine) -> &'static str {
    match engine {
        Engine::Postgres => " FOR KEY SHARE",
        Engine::Sqlite => "",
    }
}

impl SqlRepo {
    /// `col` among `ids`, with its binds from `$1`. On PostgreSQL one array
    /// bind (`col = ANY(...)`): every number of ids shares one prepared
    /// statement, and plans faster than `IN ($1, ..., $51)`. On SQLite, one
    /// bind per id.
    fn among(&self, col: &str, ids: &[Uuid]) -> (String, Vec<Val>) {
        match self.engine {
            Engine::Postgres => {
                let list: Vec<String> = ids.iter().map(Uuid::to_string).collect();
                let array = format!("{{{}}}", list.join(","));
                (
                    format!("{col} = ANY(CAST($1 AS TEXT[]))"),
                    vec![Val::Text(array)],
                )
            }
            Engine::Sqlite => (
                format!("{col} IN ({})", placeholders(ids.len())),
                ids.iter().map(|id| Val::Text(id.to_string())).collect(),
            ),
        }
    }

    /// The rows of `sql(condition)` for `ids`, a thousand ids a statement:
    /// a statement holds at most 32,766 binds on SQLite, and a whole
    /// folder's photos (a zip, a folder's crop rule) can be more.
    async fn fetch_among(
        &self,
        col: &str,
        ids: &[Uuid],
        sql: impl Fn(&str) -> String,
    ) -> Result<Vec<AnyRow>> {
        let mut rows = Vec::new();
        for chunk in ids.chunks(1000) {
            let (among, vals) = self.among(col, chunk);
            let q = sql(&among);
            rows.extend(
                bind_all(sqlx::query(&q), vals)
                    .fetch_all(&self.pool)
                    .await
                    .or_internal()?,
            );
        }
        Ok(rows)
    }
}

/// Binds every id of an `IN (...)` list made by `placeholders`.
fn bind_ids<'q>(
    mut query: sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>>,
    ids: &[Uuid],
) -> sqlx::query::Query<'q, sqlx::Any, sqlx::any::AnyArguments<'q>> {
    for id in ids {
        query = query.bind(id.to_string());
    }
    query
}

/// `$1, $2, …, $n`.
pub(super) fn placeholders(n: usize) -> String {
    (1..=n)
        .map(|i| format!("${i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[async_trait]
impl Repo for SqlRepo {
    async fn ping(&self) -> Result<()> {
        sqlx::query("SELECT 1")
            .execute(&self.pool)
            .await
            .or_internal()?;
        Ok(())
    }

    fn relaxed(&self) -> DynRepo {
        let mut repo = self.clone();
        if let Some(lax) = repo.lax.take() {
            repo.pool = lax.pool;
            repo.unsynced_log = Some(lax.log);
        }
        std::sync::Arc::new(repo)
    }
}

/// Serialises every writer of one parent row (`table`.`id`) for the rest of
/// the transaction, so that a count read after it sees every committed
/// competitor and no competitor can insert between that count and this
/// transaction's own insert. PostgreSQL takes the row lock; SQLite takes
/// its database write lock with a no-op update. Limits that count children
/// (crops per photo, aliases per owner, rules per folder) start with this.
/// False when the row is gone (after waiting for its deletion, if one was
/// under way), so the caller can answer not found instead of failing on a
/// foreign key.
pub(super) async fn lock_parent(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    engine: Engine,
    table: &str,
    id: uuid::Uuid,
) -> crate::Result<bool> {
    let held = sqlx::query(&holding(engine, "UPDATE", table, "id", "id = $1"))
        .bind(id.to_string())
        .fetch_optional(&mut **tx)
        .await
        .or_internal()?;
    Ok(held.is_some())
}

/// A statement reading `cols` of the `table` rows `filter` picks and
/// holding them for the rest of the transaction: `FOR {lock}` on
/// PostgreSQL; on SQLite, which has no row locks, a no-op update that takes
/// the database's write lock at once (a read would have to upgrade to it
/// later, and could then fail busy).
pub(super) fn holding(engine: Engine, lock: &str, table: &str, cols: &str, filter: &str) -> String {
    match engine {
        Engine::Postgres => format!("SELECT {cols} FROM {table} WHERE {filter} FOR {lock}"),
        Engine::Sqlite => format!("UPDATE {table} SET id = id WHERE {filter} RETURNING {cols}"),
    }
}

/// Locks, in id order, the photos a folder-wide change is about to write
/// (`filter` over `images`, `$1` the folder), before it touches the
/// folder's row (PostgreSQL; SQLite runs one writer at a time). A photo's
/// writers lock its row and then, through album_stats' trigger
/// (migration 0014), its folder's: a change that held the folder while
/// waiting for one of its photos deadlocked with them.
pub(super) async fn lock_photos_first(
    tx: &mut sqlx::Transaction<'_, sqlx::Any>,
    engine: Engine,
    filter: &str,
    album: uuid::Uuid,
) -> crate::Result<()> {
    if engine == Engine::Postgres {
        let q = format!("SELECT id FROM images WHERE {filter} ORDER BY id FOR NO KEY UPDATE");
        sqlx::query(&q)
            .bind(album.to_string())
            .execute(&mut **tx)
            .await
            .or_internal()?;
    }
    Ok(())
}

/// How many times a transaction PostgreSQL aborted as a deadlock's victim
/// is run again before its error stands.
const DEADLOCK_RETRIES: u32 = 3;

/// Runs `attempt` (one whole transaction) again when PostgreSQL aborted it
/// to break a deadlock (`40P01`), as its manual advises. Lock order cannot
/// cover every case here: a folder's takedown locks the photos in it, but
/// a photo moved in after that read is written too (its cover changes
/// `carried`), so a takedown racing moves could still deadlock with them
/// (a review helper saw 10 of about 1,000 calls fail so). The aborted
/// transaction wrote nothing, so running it again is safe.
pub(super) async fn retry_deadlocks<T, F, Fut>(mut attempt: F) -> crate::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = crate::Result<T>>,
{
    let mut left = DEADLOCK_RETRIES;
    loop {
        match attempt().await {
            Err(e) if left > 0 && is_deadlock(&e) => {
                left -= 1;
                let again = DEADLOCK_RETRIES - left;
                crate::metrics::METRICS.deadlock_retries.inc();
                tracing::info!(again, "deadlock victim, running the transaction again");
            }
            done => return done,
        }
    }
}

fn is_deadlock(e: &Error) -> bool {
    let Error::Internal(e) = e else { return false };
    e.downcast_ref::<sqlx::Error>()
        .and_then(|e| e.as_database_error())
        .and_then(|d| d.code())
        .is_some_and(|code| code == "40P01")
}

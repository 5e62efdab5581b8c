//! Opening the database: the `Any` pool every statement may use, the
//! migrations, and on PostgreSQL the typed pool for an owner's pages.

use super::schema::{self, Migrations};
use super::{Engine, SqlRepo};
use anyhow::Context;
use sqlx::any::AnyPoolOptions;
use sqlx::pool::PoolOptions;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::sqlite::SqliteConnectOptions;
use sqlx::{Connection, Database, Executor};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

/// The typed pool's connections, beside the `Any` pool's 16 (PostgreSQL).
pub(super) const TYPED_CONNECTIONS: u32 = 8;

/// Set on each of the typed pool's connections: its statements (an owner's
/// page of photos, a photo, their renders) keep one plan each. With the
/// page size and the cursor as parameters PostgreSQL judged a custom plan
/// cheaper for a one-owner library and planned each call afresh, which
/// cost as much as the query itself. Each shape has
/// an index that holds all its conditions and its order (`images_pkey`;
/// `images_owner_order`; `images_album_owner_order`, migration 0016), so
/// the generic plan walks it whatever the values. A statement, not a
/// startup option, so a connection pooler that refuses unknown startup
/// parameters still lets the pool connect.
const KEEP_PLANS: &str = "SET plan_cache_mode = force_generic_plan";

/// Set on every PostgreSQL connection. A generic plan guesses at a `LIMIT`
/// parameter (a tenth of the rows), which can put a page's cost over
/// `jit_above_cost`: PostgreSQL then compiled the statement on each call,
/// taking many times longer than the page. No statement here gains from
/// compiling; every one is a bounded page or a keyed row.
const NO_JIT: &str = "SET jit = off";

/// A pooled connection idle for longer than this is pinged before it is
/// handed out; one used more recently is not. sqlx pings every connection
/// as it goes back to the pool, so a recent one was just shown to work,
/// and a second ping on the way out cost a round trip to PostgreSQL (or a
/// hop to SQLite's thread) before every statement. The price: a connection
/// cut within this second of its last use (a failover, a killed backend)
/// fails the one request that gets it, as it would have mid-statement.
const PROVEN_FOR: Duration = Duration::from_secs(1);

/// `options` that ping only connections idle past `PROVEN_FOR`, so those
/// cut while the pool sat quiet (a database restart, a dropped network)
/// are still replaced before a request sees them.
fn pinged_when_idle<DB: Database>(options: PoolOptions<DB>) -> PoolOptions<DB> {
    options
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for > PROVEN_FOR {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
}

impl SqlRepo {
    /// Opens and migrates (tools and tests; the binaries say which).
    pub async fn connect(url: &str) -> anyhow::Result<SqlRepo> {
        SqlRepo::open(url, Migrations::Run).await
    }

    /// Opens, migrating or only checking the schema (`schema`).
    pub async fn open(url: &str, migrations: Migrations) -> anyhow::Result<SqlRepo> {
        sqlx::any::install_default_drivers();
        let engine = if url.starts_with("sqlite:") {
            Engine::Sqlite
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            Engine::Postgres
        } else {
            anyhow::bail!("DATABASE_URL must start with sqlite:// or postgres://");
        };
        let options = pinged_when_idle(AnyPoolOptions::new())
            .max_connections(if engine == Engine::Sqlite { 8 } else { 16 })
            .acquire_timeout(Duration::from_secs(5));
        let pool = match engine {
            // WAL lets readers run beside the one writer; the busy timeout
            // makes writers queue instead of failing at once. FULL syncs the
            // log at each commit, so what a 201 or any change an owner made
            // reported survives a power loss (NORMAL could roll the last
            // commits back), as it does on PostgreSQL. Only a render job's
            // bookkeeping, which a restart redoes, goes through `Lax`.
            Engine::Sqlite => sqlite_settings(options, "FULL"),
            Engine::Postgres => options.after_connect(|conn, _| {
                Box::pin(async move {
                    conn.execute(NO_JIT).await?;
                    Ok(())
                })
            }),
        }
        .connect(url)
        .await
        .context("connecting to the database")?;
        schema::prepare(&pool, engine, migrations).await?;
        let typed = match engine {
            Engine::Postgres => Some(
                pinged_when_idle(PgPoolOptions::new())
                    .max_connections(TYPED_CONNECTIONS)
                    .acquire_timeout(Duration::from_secs(5))
                    .after_connect(|conn, _| {
                        Box::pin(async move {
                            conn.execute(KEEP_PLANS).await?;
                            conn.execute(NO_JIT).await?;
                            Ok(())
                        })
                    })
                    .connect_lazy_with(
                        PgConnectOptions::from_str(url).context("reading DATABASE_URL")?,
                    ),
            ),
            Engine::Sqlite => None,
        };
        let lax = match engine {
            Engine::Sqlite => Lax::open(url)?,
            Engine::Postgres => None,
        };
        Ok(SqlRepo {
            pool,
            engine,
            typed,
            lax,
            unsynced_log: None,
        })
    }

    /// Makes every commit of this handle durable, where `relaxed()` let
    /// them skip the sync: the log file is synced whole (a commit already
    /// moved into the database file by a checkpoint was synced there). The
    /// log exists while any connection is open, as this handle's is.
    pub(super) async fn durable_now(&self) -> crate::Result<()> {
        let Some(log) = self.unsynced_log.clone() else {
            return Ok(());
        };
        let synced = tokio::task::spawn_blocking(move || std::fs::File::open(&*log)?.sync_data());
        synced
            .await
            .map_err(|e| crate::Error::Internal(e.into()))?
            .map_err(|e| {
                crate::Error::Internal(anyhow::Error::new(e).context("syncing the database log"))
            })
    }
}

/// Set on each new SQLite connection, with its `synchronous` level.
fn sqlite_settings(options: AnyPoolOptions, synchronous: &'static str) -> AnyPoolOptions {
    options.after_connect(move |conn, _| {
        Box::pin(async move {
            let sql = format!(
                "PRAGMA journal_mode = WAL; PRAGMA busy_timeout = 10000; \
                 PRAGMA foreign_keys = ON; PRAGMA synchronous = {synchronous};"
            );
            conn.execute(sql.as_str()).await?;
            Ok(())
        })
    })
}

/// SQLite's second pool, for `Repo::relaxed`: `synchronous = NORMAL`, so a
/// commit returns once its pages are in the log, not on the disk. Each
/// frame of the log carries a checksum chained from the one before, and
/// recovery keeps frames up to the first break, so a power loss drops
/// only a suffix of the commits; a later synced commit (any of the main
/// pool's) makes every earlier one durable with it.
#[derive(Clone)]
pub(super) struct Lax {
    pub(super) pool: sqlx::AnyPool,
    pub(super) log: Arc<PathBuf>,
}

impl Lax {
    /// None for a database in memory, which has no log to relax. Opened
    /// after the migrations, so the database file exists: its real path
    /// (SQLite keeps the log beside a symlink's target) names the log.
    fn open(url: &str) -> anyhow::Result<Option<Lax>> {
        if url.contains(":memory:") || url.contains("mode=memory") {
            return Ok(None);
        }
        let options = SqliteConnectOptions::from_str(url).context("reading DATABASE_URL")?;
        let file =
            std::fs::canonicalize(options.get_filename()).context("finding the database file")?;
        let mut log = file.into_os_string();
        log.push("-wal");
        let pool = sqlite_settings(pinged_when_idle(AnyPoolOptions::new()), "NORMAL")
            .max_connections(4)
            .acquire_timeout(Duration::from_secs(5))
            .connect_lazy(url)
            .context("opening the database")?;
        Ok(Some(Lax {
            pool,
            log: Arc::new(PathBuf::from(log)),
        }))
    }
}

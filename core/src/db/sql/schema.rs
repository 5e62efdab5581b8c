//! The schema a binary runs against. Migrations are a step of their own
//! (`lightbox-api migrate`, the chart's pre-upgrade Job); a start only
//! checks, unless told to migrate (`LIGHTBOX_MIGRATE_ON_START`, on by
//! default for the embedded server). The check refuses a database that
//! lacks a migration this binary needs, and one that has migrations this
//! binary does not know unless each is marked as one older binaries run
//! against (`schema_versions`, migration 0020): after a rollback the older
//! release keeps serving on the newer, expand-only schema.

use super::{Engine, POSTGRES, SQLITE};
use anyhow::{bail, Context};
use sqlx::migrate::Migrator;
use sqlx::{AnyPool, Row};
use std::collections::{BTreeMap, BTreeSet};

/// What a start does with the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Migrations {
    /// Applies this binary's missing migrations, then checks.
    Run,
    /// Checks only.
    Check,
}

fn migrator(engine: Engine) -> &'static Migrator {
    match engine {
        Engine::Sqlite => &SQLITE,
        Engine::Postgres => &POSTGRES,
    }
}

pub(super) async fn prepare(pool: &AnyPool, engine: Engine, how: Migrations) -> anyhow::Result<()> {
    if how == Migrations::Run {
        let known = known(engine);
        let applied = applied(pool).await?;
        // Migrations are applied in order, so a database with one this
        // binary does not know has every one it does: nothing to run, and
        // whether it may serve is the check's to judge.
        if applied.keys().all(|v| known.contains(v)) {
            if let Err(e) = migrator(engine).run(pool).await {
                // A newer release's migrator may have applied one of its
                // own since `applied` was read: then the check judges.
                if check(pool, engine).await.is_err() {
                    return Err(e).context("running database migrations");
                }
            }
        }
    }
    check(pool, engine).await
}

fn known(engine: Engine) -> BTreeSet<i64> {
    migrator(engine).iter().map(|m| m.version).collect()
}

/// Refuses a schema this binary cannot run against, saying why.
pub(super) async fn check(pool: &AnyPool, engine: Engine) -> anyhow::Result<()> {
    let applied = applied(pool).await?;
    let known = known(engine);
    if let Some((v, (desc, _))) = applied.iter().find(|(_, (_, ok))| !ok) {
        bail!("database migration {v} ({desc}) failed part-way; fix the database, then run `lightbox-api migrate`");
    }
    let missing: Vec<i64> = known
        .iter()
        .filter(|v| !applied.contains_key(v))
        .copied()
        .collect();
    if let Some(first) = missing.first() {
        bail!(
            "the database lacks {} migration(s) this binary needs, from {first}: run `lightbox-api migrate` \
             (the chart's migration Job does), or set LIGHTBOX_MIGRATE_ON_START=true",
            missing.len()
        );
    }
    let newer: Vec<i64> = applied
        .keys()
        .filter(|v| !known.contains(v))
        .copied()
        .collect();
    if newer.is_empty() {
        return Ok(());
    }
    let compatible = compatible(pool).await?;
    let mine = known.last().copied().unwrap_or(0);
    for v in newer {
        if compatible.get(&v) != Some(&true) {
            let desc = &applied[&v].0;
            bail!(
                "the database schema has migration {v} ({desc}), which this binary (migrations up to {mine}) \
                 cannot run against: it is not marked compatible with older binaries. Roll forward to \
                 a release that knows it, or restore the database from before it"
            );
        }
    }
    tracing::info!(
        known = mine,
        "the database schema is newer than this binary; its newer migrations are marked compatible"
    );
    Ok(())
}

/// Applied migrations: version -> (description, whether it finished).
async fn applied(pool: &AnyPool) -> anyhow::Result<BTreeMap<i64, (String, bool)>> {
    // As integers: the `Any` driver reads no SQLite booleans.
    let rows = sqlx::query(
        "SELECT version, description, CASE WHEN success THEN 1 ELSE 0 END AS success FROM _sqlx_migrations",
    )
    .fetch_all(pool)
    .await;
    let rows = match rows {
        Ok(rows) => rows,
        // No table: a new database, with nothing applied.
        Err(e) if missing_table(&e) => Vec::new(),
        Err(e) => return Err(e).context("reading the applied migrations"),
    };
    rows.iter()
        .map(|r| {
            let version: i64 = r.try_get("version")?;
            let description: String = r.try_get("description")?;
            let success = r.try_get::<i64, _>("success")? != 0;
            Ok((version, (description, success)))
        })
        .collect::<Result<_, sqlx::Error>>()
        .context("reading the applied migrations")
}

/// SQLite's "no such table", PostgreSQL's undefined_table (42P01).
fn missing_table(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Database(db) => {
            db.code().as_deref() == Some("42P01") || db.message().contains("no such table")
        }
        _ => false,
    }
}

/// Migrations marked in `schema_versions`: version -> older binaries run.
async fn compatible(pool: &AnyPool) -> anyhow::Result<BTreeMap<i64, bool>> {
    let rows = sqlx::query(
        "SELECT version, CAST(older_binaries_run AS BIGINT) AS ok FROM schema_versions",
    )
    .fetch_all(pool)
    .await
    .context("reading schema_versions")?;
    rows.iter()
        .map(|r| {
            Ok((
                r.try_get::<i64, _>("version")?,
                r.try_get::<i64, _>("ok")? == 1,
            ))
        })
        .collect::<Result<_, sqlx::Error>>()
        .context("reading schema_versions")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every migration from 0020 on records itself in `schema_versions`,
    /// so a rollback can tell whether it may run.
    #[test]
    fn every_migration_says_whether_older_binaries_run_against_it() {
        for engine in [Engine::Sqlite, Engine::Postgres] {
            for m in migrator(engine).iter().filter(|m| m.version >= 20) {
                let sql = m.sql.to_lowercase();
                let records = sql.contains("insert into schema_versions")
                    && sql.contains(&format!("({}, ", m.version));
                assert!(
                    records,
                    "migration {} ({}) does not record itself in schema_versions",
                    m.version, m.description
                );
            }
        }
    }
}

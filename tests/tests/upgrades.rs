//! Issue 56, item 1: upgrades that can be rolled back. Migrations are a
//! step of their own (`lightbox-api migrate`); a start without it only
//! checks the schema. A binary started on a schema newer than it knows
//! serves when the newer migrations are marked compatible with older
//! binaries, and exits naming the migration when one is not: the state a
//! `helm rollback` across an upgrade leaves. This binary stands in for the
//! older release, a migration it does not know for the newer one.

use lightbox_e2e::{bin, PgDatabase, Server, TempDir};
use sqlx::Connection;
use std::process::Command;
use std::time::Duration;

/// The cluster's PostgreSQL server, as the other cluster-tier tests use it.
fn postgres() -> PgDatabase {
    let base = std::env::var("LIGHTBOX_TEST_POSTGRES_CLUSTER")
        .or_else(|_| std::env::var("LIGHTBOX_TEST_POSTGRES"))
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432".into());
    PgDatabase::create_on(&base)
}

/// Runs `lightbox-api` with `args` to its end (a start that refuses
/// exits at once): whether it succeeded, and what it logged.
fn run(db: &PgDatabase, args: &[&str], migrate_on_start: &str) -> (bool, String) {
    let data = TempDir::new();
    let mut cmd = Command::new(bin("lightbox-api"));
    cmd.args(args)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("DATABASE_URL", db.url())
        .env("LIGHTBOX_DATA_DIR", &data.0)
        .env("LIGHTBOX_LISTEN", "127.0.0.1:0")
        .env("LIGHTBOX_METRICS_LISTEN", "127.0.0.1:0")
        .env("LIGHTBOX_MIGRATE_ON_START", migrate_on_start);
    let mut child = cmd
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run lightbox-api");
    // A start that should refuse but serves would never end: killed after
    // its deadline, it counts as a start that did not refuse.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while child.try_wait().expect("wait").is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            let said = String::from_utf8_lossy(&out.stderr);
            return (true, format!("still running after 30 s: {said}"));
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("output");
    let text =
        String::from_utf8_lossy(&out.stdout).to_string() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// The server, started on `db` without migrating, answering `/healthz`.
async fn serves(db: &PgDatabase, migrate_on_start: &str) {
    let url = db.url();
    let srv = Server::start_with(&[
        ("DATABASE_URL", url.as_str()),
        ("LIGHTBOX_MIGRATE_ON_START", migrate_on_start),
    ]);
    let (status, _, _) = srv.fetch("/healthz").await;
    assert_eq!(status, 200);
    let t = srv.admin_token().await;
    srv.photo(&t, 64, 48, "after").await;
}

/// Records a migration this binary does not know, as a newer release's
/// migrator would, marked (or not) as one older binaries run against.
async fn newer_migration(db: &PgDatabase, version: i64, compatible: bool) {
    let mut c = sqlx::PgConnection::connect(&db.url())
        .await
        .expect("connect");
    sqlx::query(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES ($1, 'a newer release', TRUE, '\\x00', 0)",
    )
    .bind(version)
    .execute(&mut c)
    .await
    .expect("record the migration");
    sqlx::query("INSERT INTO schema_versions (version, older_binaries_run) VALUES ($1, $2)")
        .bind(version)
        .bind(i32::from(compatible))
        .execute(&mut c)
        .await
        .expect("mark it");
}

#[tokio::test]
async fn cluster_a_rollback_runs_on_a_compatible_schema_and_refuses_another() {
    let db = postgres();
    // A start that may not migrate refuses an unmigrated database, saying
    // what to run.
    let (ok, said) = run(&db, &["serve"], "false");
    assert!(!ok, "started on an empty schema: {said}");
    assert!(said.contains("lightbox-api migrate"), "{said}");
    let (ok, said) = run(&db, &["migrate"], "false");
    assert!(ok, "migrate failed: {said}");
    let (ok, said) = run(&db, &["migrate"], "false");
    assert!(ok, "a second migrate is a no-op: {said}");
    serves(&db, "false").await;

    // The newer release added a column: the older binary runs on.
    newer_migration(&db, 90_001, true).await;
    serves(&db, "false").await;
    // Also when told to migrate at start (the embedded default).
    serves(&db, "true").await;
    let (ok, said) = run(&db, &["migrate"], "false");
    assert!(ok, "migrate on a newer compatible schema: {said}");

    // The next one dropped something: the older binary refuses, naming it.
    newer_migration(&db, 90_002, false).await;
    for (args, migrate) in [
        (&["serve"][..], "false"),
        (&["serve"][..], "true"),
        (&["migrate"][..], "false"),
    ] {
        let (ok, said) = run(&db, args, migrate);
        assert!(!ok, "{args:?} ran on an incompatible schema: {said}");
        assert!(said.contains("90002"), "{said}");
    }
}

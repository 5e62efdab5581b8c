//! Faults while requests flow: the database going away and coming back, a
//! full disk, an object store refusing writes. Errors are the documented
//! ones (-32603 or 5001 on RPC, a 5xx with a JSON-RPC error body on upload,
//! 503 on /readyz), nothing is half-stored, and service resumes by itself.
//!
//! The `cluster_` tests use PostgreSQL and the S3 test server through a TCP
//! relay that is cut and restored; they run once, not once per tier.

use lightbox_e2e::cluster::{wait_status, Relay, S3Server, BUCKET};
use lightbox_e2e::{corpus, synthetic_jpeg, PgDatabase, Server, TempDir};
use serde_json::{json, Value};
use std::process::Command;
use std::time::Duration;

const JPEG: &str = "image/jpeg";
const DEADLINE: Duration = Duration::from_secs(60);

fn pg_base() -> String {
    std::env::var("LIGHTBOX_TEST_POSTGRES_CLUSTER")
        .or_else(|_| std::env::var("LIGHTBOX_TEST_POSTGRES"))
        .ok()
        .filter(|v| !v.is_empty())
        .unwrap_or_else(|| "postgres://postgres@127.0.0.1:5432".into())
}

fn host_port(url: &str) -> String {
    let u = reqwest::Url::parse(url).expect("a database URL");
    format!(
        "{}:{}",
        u.host_str().unwrap_or("127.0.0.1"),
        u.port().unwrap_or(5432)
    )
}

fn rpc_failure_is_documented(r: &Value, what: &str) {
    let code = r["error"]["code"].as_i64();
    assert!(matches!(code, Some(-32603 | 5001)), "{what}: {r}");
    let text = r.to_string();
    for leak in ["sqlx", "postgres", "5432", "connection", "pool"] {
        assert!(
            !text.to_lowercase().contains(leak),
            "{what} leaks `{leak}`: {r}"
        );
    }
}

async fn count(srv: &Server, t: &str) -> usize {
    let list = srv.ok(Some(t), "image.list", json!({"limit": 200})).await;
    list["items"].as_array().unwrap().len()
}

// The relay runs on this runtime while the test blocks on a spawn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_database_outage_gives_documented_errors_and_recovers() {
    let db = PgDatabase::create_on(&pg_base());
    let relay = Relay::to(&host_port(&db.url())).await;
    let url = relay.redirect(&db.url());
    let srv = Server::spawn(
        "lightbox-api",
        TempDir::new(),
        &[("DATABASE_URL", &url)],
        None,
    );
    let t = srv.admin_token().await;
    srv.photo(&t, 640, 480, "before").await;
    // One photo still rendering when the database goes.
    let (status, pending) = srv
        .upload(
            Some(&t),
            corpus("kleiber_6028x3391.jpg"),
            "k.jpg",
            JPEG,
            None,
        )
        .await;
    assert_eq!(status, 201, "{pending}");

    relay.down();
    let ready = format!("{}/readyz", srv.url);
    let body = wait_status(&ready, 503, DEADLINE).await;
    assert!(body.contains("database"), "{body}");
    for method in ["image.list", "album.list", "account.me"] {
        let r = srv.call(Some(&t), method, json!({})).await;
        rpc_failure_is_documented(&r, method);
    }
    let r = srv
        .call(
            None,
            "auth.login",
            json!({"email": "a@b.c", "password": "whatever-it-is"}),
        )
        .await;
    rpc_failure_is_documented(&r, "auth.login");
    let (status, body) = srv
        .upload(Some(&t), synthetic_jpeg(300, 200, 1), "x.jpg", JPEG, None)
        .await;
    assert!(
        (500..600).contains(&status),
        "upload while the database is away: {status} {body}"
    );
    rpc_failure_is_documented(&body, "upload");
    assert_eq!(srv.fetch("/healthz").await.0, 200, "alive, if not ready");

    relay.up().await;
    wait_status(&ready, 200, DEADLINE).await;
    assert_eq!(count(&srv, &t).await, 2, "the refused upload left a row");
    srv.ready(&t, &pending["id"]).await;
    srv.photo(&t, 320, 240, "after").await;
    let originals = srv
        .blobs()
        .iter()
        .filter(|p| p.to_string_lossy().contains("originals"))
        .count();
    assert_eq!(originals, 3, "an orphan blob: {:?}", srv.blobs());
}

/// A tmpfs mounted at a path for one test, unmounted when dropped.
struct Mount(std::path::PathBuf);

impl Mount {
    fn tmpfs(at: std::path::PathBuf, size: &str) -> Mount {
        std::fs::create_dir_all(&at).unwrap();
        let opts = format!("size={size}");
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &opts, "tmpfs"])
            .arg(&at)
            .status()
            .is_ok_and(|s| s.success());
        assert!(
            ok,
            "mounting a small tmpfs needs root (the test machines run as root)"
        );
        Mount(at)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

#[tokio::test]
async fn a_full_disk_refuses_the_upload_cleanly_and_keeps_what_was_stored() {
    let data = TempDir::new();
    let _disk = Mount::tmpfs(data.0.join("blobs"), "3m");
    let srv = Server::start_in(data, &[]);
    let t = srv.admin_token().await;
    let kept = srv.photo(&t, 800, 600, "kept").await;
    let render = kept["renders"][0]["url"].as_str().unwrap().to_owned();
    let before = srv
        .http()
        .get(&render)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();

    // 4.4 MB, with 3 MB of room: does not fit.
    let (status, body) = srv
        .upload(
            Some(&t),
            corpus("kleiber_6028x3391.jpg"),
            "s.jpg",
            JPEG,
            None,
        )
        .await;
    assert!((500..600).contains(&status), "{status} {body}");
    rpc_failure_is_documented(&body, "upload onto a full disk");
    assert_eq!(
        count(&srv, &t).await,
        1,
        "a row for a file that was not stored"
    );
    // The write that failed leaves its staging file to object_store, which
    // removes it from a task spawned as the write is dropped: it can
    // outlive the answer by a moment, never for good.
    let what = "the partial file to go: one original and five files in all";
    lightbox_e2e::eventually(Duration::from_secs(10), what, || async {
        let names: Vec<_> = srv
            .blobs()
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let originals = names.iter().filter(|p| p.contains("originals")).count();
        (originals == 1 && names.len() == 5).then_some(())
    })
    .await;
    let after = srv
        .http()
        .get(&render)
        .send()
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(before, after, "a stored render changed");

    // Room again: uploads work.
    srv.ok(Some(&t), "image.delete", json!({"id": kept["id"]}))
        .await;
    lightbox_e2e::eventually(DEADLINE, "the space to be freed", || async {
        srv.blobs().is_empty().then_some(())
    })
    .await;
    srv.photo(&t, 800, 600, "again").await;
}

// The relay runs on this runtime while the test blocks on a spawn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_an_object_store_refusing_writes_leaves_no_orphan() {
    let s3 = S3Server::start().await;
    let relay = Relay::to(&host_port(&s3.endpoint)).await;
    let srv = Server::start_with(&[
        ("LIGHTBOX_STORAGE_URL", &format!("s3://{BUCKET}/refusing")),
        ("AWS_ENDPOINT_URL", &relay.redirect(&s3.endpoint)),
        ("AWS_ACCESS_KEY_ID", "e2e"),
        ("AWS_SECRET_ACCESS_KEY", "e2e-secret"),
        ("AWS_REGION", "us-east-1"),
    ]);
    let t = srv.admin_token().await;
    srv.photo(&t, 640, 480, "kept").await;

    relay.down();
    let (status, body) = srv
        .upload(
            Some(&t),
            corpus("seeding_5312x2988.jpg"),
            "s.jpg",
            JPEG,
            None,
        )
        .await;
    assert!((500..600).contains(&status), "{status} {body}");
    rpc_failure_is_documented(&body, "upload while the object store refuses");
    wait_status(&format!("{}/readyz", srv.url), 503, DEADLINE).await;
    assert_eq!(
        count(&srv, &t).await,
        1,
        "a row for a file that was not stored"
    );

    relay.up().await;
    wait_status(&format!("{}/readyz", srv.url), 200, DEADLINE).await;
    srv.photo(&t, 320, 240, "after").await;
    let originals = s3.keys("refusing/originals/").await;
    assert_eq!(originals.len(), 2, "{originals:?}");
}

/// An upload whose client left once its body was in, still waiting for its
/// row when the API gets SIGTERM (a rolling deploy): shutdown waits for it,
/// so the photo is recorded and its original is named by its row. Before,
/// the process exited at once and left an original no row names.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cluster_an_upload_settling_at_shutdown_is_recorded() {
    use sqlx::Connection;
    use tokio::io::AsyncWriteExt;
    let db = PgDatabase::create_on(&pg_base());
    let mut srv = Server::spawn(
        "lightbox-api",
        TempDir::new(),
        &[("DATABASE_URL", &db.url())],
        None,
    );
    let t = srv.admin_token().await;
    srv.photo(&t, 640, 480, "before").await;
    // The folders held, so the next upload's row waits.
    let mut holder = sqlx::PgConnection::connect(&db.url()).await.unwrap();
    sqlx::query("BEGIN").execute(&mut holder).await.unwrap();
    let hold = sqlx::query("SELECT id FROM albums FOR UPDATE");
    hold.execute(&mut holder).await.unwrap();
    let file = synthetic_jpeg(800, 600, 7);
    let b = "lightboxboundary";
    let mut body = format!(
        "--{b}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.jpg\"\r\n\
         Content-Type: image/jpeg\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(&file);
    body.extend_from_slice(format!("\r\n--{b}--\r\n").as_bytes());
    let head = format!(
        "POST /api/v1/images HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {t}\r\n\
         Content-Type: multipart/form-data; boundary={b}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    let addr = srv.url.trim_start_matches("http://").to_owned();
    let mut client = tokio::net::TcpStream::connect(&addr).await.unwrap();
    client.write_all(head.as_bytes()).await.unwrap();
    client.write_all(&body).await.unwrap();
    let watcher = sqlx::PgPool::connect(&db.url()).await.unwrap();
    lightbox_e2e::eventually(DEADLINE, "the upload waiting for its row", || {
        let watcher = watcher.clone();
        async move {
            let waiting: i64 = sqlx::query_scalar(
                "SELECT COUNT(*) FROM pg_stat_activity \
                 WHERE datname = current_database() AND wait_event_type = 'Lock'",
            )
            .fetch_one(&watcher)
            .await
            .unwrap();
            (waiting > 0).then_some(())
        }
    })
    .await;
    // The client leaves, and the API is told to stop.
    drop(client);
    let url = srv.url.clone();
    let terminating = std::thread::spawn(move || {
        let status = srv.terminate();
        (srv, status)
    });
    // Listening stops at once; the process then drains.
    lightbox_e2e::eventually(DEADLINE, "the listener closed", || {
        let probe = reqwest::get(format!("{url}/healthz"));
        async move { probe.await.is_err().then_some(()) }
    })
    .await;
    sqlx::query("COMMIT").execute(&mut holder).await.unwrap();
    let (srv, status) = terminating.join().unwrap();
    assert!(status.success(), "{status:?}\n{}", srv.logs());
    let rows: i64 = sqlx::query_scalar("SELECT COUNT(*) FROM images")
        .fetch_one(&watcher)
        .await
        .unwrap();
    let originals = srv
        .blobs()
        .iter()
        .filter(|p| p.to_string_lossy().contains("originals"))
        .count();
    assert_eq!((rows, originals), (2, 2), "{}", srv.logs());
}

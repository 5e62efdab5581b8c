//! What the service reports stored is on disk first. Watched from outside
//! with strace attached to a running server with local blobs: an
//! original's bytes and its folders are synced before the database write
//! that names it, a render's before the write that records it, and on
//! SQLite the log is synced before the 201 and before a replaced render's
//! file goes. A power loss can cost neither a row its blob nor a client an
//! upload it was told was kept.

use lightbox_e2e::{corpus, eventually, metric, Server, PHOTOS};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

const DEADLINE: Duration = Duration::from_secs(60);

/// strace attached to every thread of a process, writing to a file.
struct Trace {
    child: Child,
    log: PathBuf,
}

impl Trace {
    async fn attach(pid: u32, log: PathBuf) -> Trace {
        let mut child = Command::new("strace")
            .args(["-f", "-qq", "-yy", "-s", "65536", "-o"])
            .arg(&log)
            .args([
                "-e",
                "trace=fsync,fdatasync,write,pwrite64,writev,sendto,sendmsg,unlink,unlinkat",
            ])
            .args(["-p", &pid.to_string()])
            .stdin(Stdio::null())
            .spawn()
            .expect("strace (scripts/test.sh installs it)");
        let start = std::time::Instant::now();
        while !all_traced(pid) {
            if let Ok(Some(exit)) = child.try_wait() {
                panic!("strace could not attach ({exit}): is ptrace allowed here?");
            }
            assert!(start.elapsed() < DEADLINE, "strace did not attach");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Trace { child, log }
    }

    /// Detaches (strace leaves the process running) and returns the calls.
    fn finish(mut self) -> Vec<String> {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        let _ = self.child.wait();
        calls(&std::fs::read_to_string(&self.log).expect("the strace log"))
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn all_traced(pid: u32) -> bool {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).expect("the server's threads");
    tasks.flatten().all(|task| {
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        status
            .lines()
            .any(|l| l.starts_with("TracerPid:") && l.split_whitespace().nth(1) != Some("0"))
    })
}

/// One entry per finished call, in the order they finished: a call that
/// strace split (`<unfinished ...>`, then `<... resumed>` on the same
/// thread) is joined at its end.
fn calls(log: &str) -> Vec<String> {
    let mut open: std::collections::HashMap<&str, String> = Default::default();
    let mut done = Vec::new();
    for line in log.lines() {
        // strace pads thread ids to five columns.
        let (pid, rest) = line.split_once(' ').unwrap_or(("", line));
        let rest = rest.trim_start();
        if let Some(head) = rest.strip_suffix(" <unfinished ...>") {
            open.insert(pid, head.to_owned());
        } else if let Some(tail) = rest.strip_prefix("<... ") {
            let head = open.remove(pid).unwrap_or_default();
            let tail = tail.split_once(" resumed>").map_or(tail, |(_, t)| t);
            done.push(format!("{head}{tail}"));
        } else {
            done.push(rest.to_owned());
        }
    }
    done
}

/// The first finished call that satisfies `is`, failing with the log.
fn position(calls: &[String], what: &str, is: impl Fn(&str) -> bool) -> usize {
    calls
        .iter()
        .position(|c| is(c))
        .unwrap_or_else(|| panic!("no {what} in the trace:\n{}", calls.join("\n")))
}

fn is_sync(call: &str) -> bool {
    (call.starts_with("fsync(") || call.starts_with("fdatasync(")) && call.ends_with("= 0")
}

fn synced(call: &str, path: &Path) -> bool {
    is_sync(call) && call.contains(&format!("<{}>)", path.display()))
}

/// The suffix strace gives a socket to PostgreSQL (`-yy`).
fn postgres_socket() -> String {
    let url = std::env::var("LIGHTBOX_TEST_POSTGRES").unwrap_or_default();
    let port = reqwest::Url::parse(&url).ok().and_then(|u| u.port());
    format!(":{}]>", port.unwrap_or(5432))
}

/// A write that hands `text` to the database: SQLite's log, or a socket to
/// PostgreSQL.
fn database_write(call: &str, text: &str) -> bool {
    let to_database = call.contains("-wal>") || call.contains(&postgres_socket());
    let writes = ["write(", "pwrite64(", "writev(", "sendto(", "sendmsg("];
    to_database && writes.iter().any(|w| call.starts_with(w)) && call.contains(text)
}

fn on_postgres() -> bool {
    std::env::var("LIGHTBOX_TEST_POSTGRES").is_ok_and(|v| !v.is_empty())
}

#[tokio::test]
async fn stored_blobs_reach_the_disk_before_the_rows_that_name_them() {
    let s = Server::start();
    let token = s.admin_token().await;
    let blobs = std::fs::canonicalize(s.data.0.join("blobs")).expect("the blob folder");
    let trace = Trace::attach(s.pid(), s.data.0.join("strace.log")).await;

    let (status, img) = s
        .upload(
            Some(&token),
            corpus("sunset_4272x2848.jpg"),
            "sunset.jpg",
            "image/jpeg",
            None,
        )
        .await;
    assert_eq!(status, 201, "{img}");
    let id = img["id"].as_str().expect("an id").to_owned();
    s.ready(&token, &Value::String(id.clone())).await;
    let calls = trace.finish();

    let original = s
        .blobs()
        .into_iter()
        .find(|p| p.ends_with(&id) && p.to_string_lossy().contains("/originals/"))
        .expect("the original's file");
    let original = std::fs::canonicalize(original).expect("the original");
    let folder = original.parent().expect("its folder");
    let answered = position(&calls, "201 to the client", |c| {
        c.contains("HTTP/1.1 201") && !c.contains(&postgres_socket())
    });
    let file_synced = position(&calls, "sync of the original", |c| synced(c, &original));
    let folder_synced = position(&calls, "sync of its folder", |c| synced(c, folder));
    let root_synced = position(&calls, "sync of the blob root", |c| synced(c, &blobs));
    assert!(file_synced < answered && folder_synced < answered && root_synced < answered);
    let key = original
        .strip_prefix(&blobs)
        .expect("under the blob folder");
    let key = key.display().to_string();
    let recorded = position(&calls, "the row's write", |c| database_write(c, &key));
    assert!(
        file_synced < recorded && folder_synced < recorded && root_synced < recorded,
        "{key} recorded before synced"
    );
    if !on_postgres() {
        // PostgreSQL makes its own commits durable; SQLite's log must be
        // synced before the 201.
        let committed = (recorded..calls.len())
            .find(|&i| is_sync(&calls[i]) && calls[i].contains("-wal>"))
            .expect("a sync of the log after the row");
        assert!(committed < answered, "the log was synced after the 201");
    }

    let got = s.ok(Some(&token), "image.get", json!({ "id": id })).await;
    let renders = got["renders"].as_array().expect("renders");
    assert!(!renders.is_empty(), "{got}");
    let mut seen = 0;
    for file in s.blobs() {
        let file = std::fs::canonicalize(file).expect("a render");
        let key = file.strip_prefix(&blobs).expect("under the blob folder");
        if !key.starts_with("renders") {
            continue;
        }
        let key = key.display().to_string();
        let file_synced = position(&calls, "sync of a render", |c| synced(c, &file));
        let recorded = position(&calls, "the render's row", |c| database_write(c, &key));
        assert!(
            file_synced < recorded,
            "{key} recorded before it was synced"
        );
        seen += 1;
    }
    assert_eq!(seen, renders.len(), "a file per render");
}

/// Every render file under the blob folder.
fn render_files(s: &Server) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = s
        .blobs()
        .into_iter()
        .filter(|p| p.to_string_lossy().contains("/renders/"))
        // A file the job renames or deletes meanwhile is left out.
        .filter_map(|p| std::fs::canonicalize(p).ok())
        .collect();
    files.sort();
    files
}

/// A render job records on SQLite without waiting for the log (a restart
/// redoes it), but the file of a render it replaced goes only after the
/// row naming the successor is synced: a power loss cannot leave the row
/// naming a deleted file.
#[tokio::test]
async fn a_replaced_render_goes_only_after_its_successor_is_durable() {
    let s = Server::start();
    let token = s.admin_token().await;
    let id = s.photo(&token, 1200, 800, "replaced").await["id"].clone();
    let before = render_files(&s);
    let blobs = std::fs::canonicalize(s.data.0.join("blobs")).expect("the blob folder");
    let trace = Trace::attach(s.pid(), s.data.0.join("strace.log")).await;

    // A focal point re-renders the crop (`thumb`) at a new version.
    let focus = json!({ "id": id, "focus": { "x": 0.1, "y": 0.1 } });
    s.ok(Some(&token), "image.update", focus).await;
    let (gone, added) = eventually(DEADLINE, "the old thumb replaced", || async {
        let now = render_files(&s);
        let gone: Vec<_> = before
            .iter()
            .filter(|f| !now.contains(f))
            .cloned()
            .collect();
        let added: Vec<_> = now
            .iter()
            .filter(|f| !before.contains(f))
            .cloned()
            .collect();
        (!gone.is_empty() && gone.len() == added.len()).then_some((gone, added))
    })
    .await;
    let calls = trace.finish();
    assert_eq!(gone.len(), 1, "only the crop moves: {gone:?}");
    let new_key = added[0]
        .strip_prefix(&blobs)
        .expect("under the blob folder");
    let new_key = new_key.display().to_string();
    let recorded = position(&calls, "the successor's row", |c| {
        database_write(c, &new_key)
    });
    let old = gone[0].display().to_string();
    let unlinked = position(&calls, "the old file's unlink", |c| {
        c.starts_with("unlink") && c.contains(&old) && c.ends_with("= 0")
    });
    assert!(
        recorded < unlinked,
        "{old} deleted before its successor was recorded"
    );
    if !on_postgres() {
        let synced = (recorded..unlinked).any(|i| is_sync(&calls[i]) && calls[i].contains("-wal>"));
        assert!(
            synced,
            "{old} deleted before the log holding its successor was synced"
        );
    }
}

/// A re-render the process died owing (its job was in the in-process
/// queue, or a power loss undid what it recorded) is made at the next
/// start, also for a photo that stays `ready` meanwhile.
#[tokio::test]
async fn a_re_render_owed_at_a_kill_is_made_at_the_next_start() {
    if on_postgres() {
        return; // a restart on the same database is exercised on SQLite
    }
    let s = Server::start();
    let token = s.admin_token().await;
    let img = s.photo(&token, 1200, 800, "owed").await;
    let id = img["id"].as_str().expect("an id").to_owned();
    let data = s.stop();

    // What a focal point's change commits before its job runs.
    let url = format!("sqlite://{}", data.0.join("lightbox.db").display());
    let db = sqlx::SqlitePool::connect(&url).await.expect("the database");
    let bumped = sqlx::query(
        "UPDATE renders SET version = version + 1 WHERE image_id = $1 AND code = 'thumb'",
    )
    .bind(&id)
    .execute(&db)
    .await
    .expect("the bump");
    assert_eq!(bumped.rows_affected(), 1);
    db.close().await;

    let s = Server::start_in(data, &[]);
    let token = s.admin_token().await;
    let thumb = eventually(DEADLINE, "the owed thumb", || async {
        let got = s.ok(Some(&token), "image.get", json!({ "id": id })).await;
        assert_eq!(got["status"], "ready", "{got}");
        let renders = got["renders"].as_array().expect("renders").clone();
        let thumb = renders.into_iter().find(|r| r["crop"] == "thumb")?;
        let made = thumb["pending"] == false && thumb["url"].as_str()?.ends_with("?v=2");
        made.then_some(thumb)
    })
    .await;
    let url = thumb["url"].as_str().expect("a url");
    let served = s.http().get(url).send().await.expect("the thumb");
    assert_eq!(served.status(), 200);
}

fn presets(large: u32) -> String {
    format!(
        "[[presets]]\ncode = \"thumb\"\nwidth = 100\nheight = 100\n\n\
         [[presets]]\ncode = \"large\"\nwidth = {large}\nheight = 0\nmode = \"fit\"\n"
    )
}

/// Waits until the in-process queue holds at least `n` jobs not yet done.
async fn queued(s: &Server, n: usize) {
    let start = std::time::Instant::now();
    while metric(&s.metrics().await, "lightbox_queue_depth") < n as f64 {
        assert!(start.elapsed() < DEADLINE, "{n} jobs never queued at once");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// `large` renders in the stopped server's database not yet made at `width`.
async fn large_owed(data: &lightbox_e2e::TempDir, width: u32) -> i64 {
    let url = format!("sqlite://{}", data.0.join("lightbox.db").display());
    let db = sqlx::SqlitePool::connect(&url).await.expect("the database");
    let n: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM renders WHERE code = 'large' \
         AND (spec NOT LIKE $1 OR produced_version IS NULL OR produced_version <> version)",
    )
    .bind(format!("%\"width\":{width},%"))
    .fetch_one(&db)
    .await
    .expect("the count");
    db.close().await;
    n
}

/// A preset change's re-renders, queued by the start that saw the change,
/// are all made even when that process is killed, or stopped, before it
/// gets through them: each job's outbox row stays until the job is done,
/// and the next start hands out again what the in-process queue held.
#[tokio::test]
async fn a_preset_backlog_cut_short_is_finished_at_the_next_start() {
    if on_postgres() {
        return; // a restart on the same database is exercised on SQLite
    }
    let config = lightbox_e2e::TempDir::new();
    let path = config.0.join("lightbox.toml");
    let cfg = path.to_str().expect("a path").to_owned();
    std::fs::write(&path, presets(2048)).expect("the configuration");
    let s = Server::start_with(&[("LIGHTBOX_CONFIG", &cfg)]);
    let token = s.admin_token().await;
    let mut ids = Vec::new();
    for (name, mime) in PHOTOS {
        let (status, img) = s.upload(Some(&token), corpus(name), name, mime, None).await;
        assert_eq!(status, 201, "{img}");
        ids.push(img["id"].clone());
    }
    for id in &ids {
        s.ready(&token, id).await;
    }
    let mut data = s.stop();

    // One job at a time, so that a stop finishing the jobs in hand leaves
    // most of the backlog in the queue on any machine.
    let one_worker = [
        ("LIGHTBOX_CONFIG", cfg.as_str()),
        ("LIGHTBOX_WORKER_CONCURRENCY", "1"),
    ];
    for (large, kill) in [(1900, true), (1800, false)] {
        std::fs::write(&path, presets(large)).expect("the configuration");
        let mut s = Server::start_in(data, &one_worker);
        // The re-render has begun; the relay hands the queue only what its
        // worker slots can start, and the rest waits in the outbox.
        queued(&s, 1).await;
        if kill {
            s.kill();
        } else {
            assert!(s.terminate().success(), "a clean stop");
        }
        data = s.stop();
        let owed = large_owed(&data, large).await;
        assert!(owed > 0, "stopped too late to leave work owed");

        let s = Server::start_in(data, &[("LIGHTBOX_CONFIG", &cfg)]);
        let token = s.admin_token().await;
        for id in &ids {
            eventually(DEADLINE, "the owed large render", || async {
                let img = s.ok(Some(&token), "image.get", json!({ "id": id })).await;
                let renders = img["renders"].as_array()?.clone();
                let made = renders.into_iter().find(|r| r["crop"] == "large")?;
                (made["pending"] == false && made["width"] == large).then_some(())
            })
            .await;
        }
        data = s.stop();
        assert_eq!(large_owed(&data, large).await, 0, "every large render made");
    }
}

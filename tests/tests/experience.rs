//! What a newcomer meets: errors that say why (1001 and 1003 reasons, JSON
//! from the upload route, HTML for browsers, failed logins logged as such),
//! uploads straight into a folder, re-render jobs that can be followed, and
//! binaries that answer `--help` and `--version`.

use lightbox_e2e::{bin, eventually, synthetic_jpeg, Server, TempDir, ADMIN_EMAIL};
use serde_json::{json, Value};
use std::time::Duration;

const BROWSER: &str = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

async fn get_as(srv: &Server, path: &str, accept: &str) -> (u16, String, String) {
    let r = srv
        .http()
        .get(format!("{}{path}", srv.url))
        .header("accept", accept)
        .send()
        .await
        .expect("get");
    let status = r.status().as_u16();
    let kind = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    (status, kind, r.text().await.unwrap_or_default())
}

#[tokio::test]
async fn failed_logins_say_why_and_are_logged_as_failures() {
    let srv = Server::start();
    for (email, password) in [
        (ADMIN_EMAIL, "wrong-password"),
        ("nobody@example.com", "whatever-1"),
    ] {
        let e = srv
            .fail(
                None,
                "auth.login",
                json!({"email": email, "password": password}),
            )
            .await;
        assert_eq!(
            (e["code"].as_i64(), e["data"]["reason"].as_str()),
            (Some(1001), Some("wrong_credentials")),
            "{e}"
        );
    }
    let why = |token: String| {
        let srv = &srv;
        async move {
            let e = srv
                .fail(None, "auth.refresh", json!({"refresh_token": token}))
                .await;
            assert_eq!(e["code"], 1001, "{e}");
            e["data"]["reason"].as_str().unwrap().to_owned()
        }
    };
    assert_eq!(why("garbage".into()).await, "malformed");
    assert_eq!(why(format!("lbx_rt_{}", "A".repeat(43))).await, "expired");
    // A notification gets no answer, but its refusal is still logged.
    let (status, _) = srv
        .post_raw(
            "/rpc",
            "application/json",
            r#"{"jsonrpc":"2.0","method":"auth.login","params":{"email":"x@example.com","password":"nope-nope"}}"#,
        )
        .await;
    assert_eq!(status, 204);
    srv.admin_token().await;
    let logs = eventually(Duration::from_secs(10), "the request log", || async {
        let logs = srv.logs();
        let ok = logs
            .lines()
            .any(|l| l.contains("auth.login") && l.contains("outcome=ok"));
        ok.then_some(logs)
    })
    .await;
    let failed = logs
        .lines()
        .filter(|l| l.contains("auth.login") && l.contains("1001:wrong_credentials"))
        .count();
    assert_eq!(
        failed, 2,
        "each failed login logged with its outcome:\n{logs}"
    );
    let refused = logs
        .lines()
        .filter(|l| l.contains("login refused") && l.contains("wrong_credentials"))
        .count();
    assert_eq!(
        refused, 3,
        "the notification's refusal is logged too:\n{logs}"
    );
}

#[tokio::test]
async fn browsers_get_an_html_page_and_api_clients_json() {
    let srv = Server::start();
    let t = srv.user("viewer@example.com", "viewer-password-1").await;
    let img = srv.photo(&t, 320, 240, "linked").await;
    let link = srv
        .ok(
            Some(&t),
            "image.downloadToken",
            json!({"id": img["id"], "variant": "screen", "crop": "thumb", "spec": 1}),
        )
        .await;
    let url = link["url"].as_str().unwrap();
    let (base, _) = url.split_once("token=").unwrap();
    let tampered = format!("{base}token=not-a-link");
    let (status, kind, body) = get_as(&srv, &tampered, "*/*").await;
    assert_eq!((status, kind.as_str()), (401, "application/json"), "{body}");
    let e: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(e["error"]["data"]["reason"], "malformed", "{e}");
    let twice = format!("{url}&token=again");
    let (status, kind, body) = get_as(&srv, &twice, "*/*").await;
    assert_eq!((status, kind.as_str()), (401, "application/json"), "{body}");
    let (_, kind, _) = get_as(&srv, &tampered, "text/html;q=0, application/json").await;
    assert_eq!(kind, "application/json", "HTML refused by q=0");
    let (status, kind, body) = get_as(&srv, &tampered, BROWSER).await;
    assert_eq!(status, 401);
    assert!(kind.starts_with("text/html"), "{kind}");
    assert!(
        body.contains("<h1>") && !body.contains("\"error\""),
        "{body}"
    );

    for path in ["/a/no-such-alias", "/s/no-such-token", "/nothing/here"] {
        let (status, kind, body) = get_as(&srv, path, BROWSER).await;
        assert_eq!(status, 404, "{path}");
        assert!(kind.starts_with("text/html"), "{path}: {kind}");
        assert!(body.contains("Nothing here"), "{path}: {body}");
        let (status, kind, _) = get_as(&srv, path, "*/*").await;
        assert_eq!(status, 404, "{path}");
        assert!(!kind.starts_with("text/html"), "{path}: {kind}");
    }
    // The RPC and upload routes stay JSON whatever the client accepts.
    let (status, kind, _) = get_as(&srv, "/rpc", BROWSER).await;
    assert!(
        status >= 400 && !kind.starts_with("text/html"),
        "{status} {kind}"
    );
}

#[tokio::test]
async fn uploads_go_into_the_named_folder_and_refuse_unknown_fields() {
    let srv = Server::start();
    let t = srv.user("folders@example.com", "folders-password-1").await;
    let other = srv.user("other@example.com", "other-password-1").await;
    let album = srv
        .ok(Some(&t), "album.create", json!({"name": "Trip"}))
        .await;
    let theirs = srv
        .ok(Some(&other), "album.create", json!({"name": "Theirs"}))
        .await;
    let send = |fields: Vec<(&'static str, String)>, token: String| {
        let srv = &srv;
        async move {
            let part = reqwest::multipart::Part::bytes(synthetic_jpeg(200, 100, 3))
                .file_name("a.jpg")
                .mime_str("image/jpeg")
                .unwrap();
            let mut form = reqwest::multipart::Form::new();
            for (name, value) in fields {
                form = form.text(name, value);
            }
            let r = srv
                .http()
                .post(format!("{}/api/v1/images", srv.url))
                .bearer_auth(token)
                .multipart(form.part("file", part))
                .send()
                .await
                .unwrap();
            let status = r.status().as_u16();
            (status, r.json::<Value>().await.expect("a JSON body"))
        }
    };
    let id = album["id"].as_str().unwrap().to_owned();
    let (status, img) = send(vec![("album_id", id.clone())], t.clone()).await;
    assert_eq!(status, 201, "{img}");
    assert_eq!(img["album_id"], album["id"], "{img}");
    let listed = srv
        .ok(Some(&t), "image.list", json!({"album_id": id}))
        .await;
    assert_eq!(listed["items"].as_array().unwrap().len(), 1, "{listed}");
    // A folder's list: empty for the owner's empty folder, 2001 for another
    // user's folder or none at all (interface: "not the caller's yields 2001").
    let empty = srv
        .ok(Some(&t), "album.create", json!({"name": "Empty"}))
        .await;
    let page = srv
        .ok(Some(&t), "image.list", json!({"album_id": empty["id"]}))
        .await;
    assert_eq!(page, json!({"items": [], "next_cursor": ""}));
    for folder in [theirs["id"].clone(), json!(uuid::Uuid::new_v4())] {
        let r = srv
            .call(Some(&t), "image.list", json!({"album_id": folder}))
            .await;
        assert_eq!(r["error"]["code"], 2001, "{r}");
    }

    let (status, e) = send(
        vec![("album_id", theirs["id"].as_str().unwrap().into())],
        t.clone(),
    )
    .await;
    assert_eq!(
        (status, e["error"]["code"].as_i64()),
        (404, Some(2001)),
        "{e}"
    );
    let (status, e) = send(vec![("album_id", "not-a-uuid".into())], t.clone()).await;
    assert_eq!(
        (status, e["error"]["code"].as_i64()),
        (400, Some(2002)),
        "{e}"
    );
    let (status, e) = send(vec![("folder", id.clone())], t.clone()).await;
    assert_eq!(
        (status, e["error"]["code"].as_i64()),
        (400, Some(2002)),
        "{e}"
    );
    assert_eq!(e["error"]["data"]["errors"][0]["field"], "folder", "{e}");
    let two_metas = vec![("meta", "{}".to_owned()), ("meta", "{}".to_owned())];
    let (status, e) = send(two_metas, t.clone()).await;
    assert_eq!(
        (status, e["error"]["code"].as_i64()),
        (400, Some(2002)),
        "{e}"
    );

    // Not multipart at all: still JSON, after the credentials.
    let (status, body) = srv.post_raw("/api/v1/images", "text/plain", "hello").await;
    assert_eq!(status, 401, "{body}");
    let r = srv
        .http()
        .post(format!("{}/api/v1/images", srv.url))
        .bearer_auth(&t)
        .header("content-type", "multipart/form-data")
        .body("no boundary")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let e: Value = r.json().await.expect("a JSON error");
    assert_eq!(e["error"]["code"], 2002, "{e}");
    let all = srv.ok(Some(&t), "image.list", json!({})).await;
    assert_eq!(
        all["items"].as_array().unwrap().len(),
        1,
        "refusals stored nothing"
    );
}

#[tokio::test]
async fn re_render_jobs_can_be_followed_by_their_owner_only() {
    let srv = Server::start();
    let t = srv.user("jobs@example.com", "jobs-password-1").await;
    let other = srv.user("nosy@example.com", "nosy-password-1").await;
    let album = srv
        .ok(Some(&t), "album.create", json!({"name": "Jobs"}))
        .await;
    for i in 0..3 {
        let img = srv.photo(&t, 300, 200, &format!("p{i}")).await;
        srv.ok(
            Some(&t),
            "image.update",
            json!({"id": img["id"], "album_id": album["id"]}),
        )
        .await;
    }
    let job = srv
        .ok(
            Some(&t),
            "album.crop.set",
            json!({"album_id": album["id"], "code": "square", "width": 64, "height": 64}),
        )
        .await;
    let job_id = job["job_id"].as_i64().unwrap();
    assert!(job_id > 0, "{job}");
    let done = eventually(Duration::from_secs(60), "the job", || async {
        let j = srv.ok(Some(&t), "job.get", json!({"job_id": job_id})).await;
        assert!(
            ["queued", "running", "done"].contains(&j["state"].as_str().unwrap()),
            "{j}"
        );
        (j["state"] == "done").then_some(j)
    })
    .await;
    assert_eq!(
        done,
        json!({"job_id": job_id, "kind": "album.crop.set", "state": "done",
               "total": 3, "done": 3, "failed": 0})
    );
    // Every photo has the rule's render once the job says done.
    let listed = srv
        .ok(Some(&t), "image.list", json!({"album_id": album["id"]}))
        .await;
    for img in listed["items"].as_array().unwrap() {
        let renders = img["renders"].as_array().unwrap();
        let square = renders.iter().find(|r| r["crop"] == "square");
        assert!(square.is_some_and(|r| r["pending"] == false), "{img}");
    }
    assert_eq!(
        srv.code(Some(&other), "job.get", json!({"job_id": job_id}))
            .await,
        2001
    );
    for bad in [json!({"job_id": 0}), json!({"job_id": job_id + 1000})] {
        assert_eq!(srv.code(Some(&t), "job.get", bad).await, 2001);
    }
    assert_eq!(
        srv.code(Some(&t), "job.get", json!({"job_id": "x"})).await,
        2002
    );

    let deleted = srv
        .ok(Some(&t), "album.delete", json!({"id": album["id"]}))
        .await;
    let job_id = deleted["job_id"].as_i64().unwrap();
    let j = eventually(Duration::from_secs(60), "the delete job", || async {
        let j = srv.ok(Some(&t), "job.get", json!({"job_id": job_id})).await;
        (j["state"] == "done").then_some(j)
    })
    .await;
    assert_eq!(
        (j["kind"].as_str(), j["total"].as_i64()),
        (Some("album.delete"), Some(3))
    );
}

#[test]
fn every_binary_answers_help_and_version_without_starting() {
    let dir = TempDir::new();
    for name in ["lightbox-api", "lightbox-worker", "lightbox-controller"] {
        for (flag, wants) in [
            ("--help", "Usage:"),
            ("--version", env!("CARGO_PKG_VERSION")),
        ] {
            let out = std::process::Command::new(bin(name))
                .arg(flag)
                .current_dir(&dir.0)
                .env_clear()
                .output()
                .expect("run");
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{name} {flag}: {out:?}");
            assert!(text.contains(wants), "{name} {flag}: {text}");
        }
        let out = std::process::Command::new(bin(name))
            .arg("--no-such-flag")
            .current_dir(&dir.0)
            .env_clear()
            .output()
            .expect("run");
        assert_eq!(out.status.code(), Some(2), "{name}: {out:?}");
    }
    let left: Vec<_> = std::fs::read_dir(&dir.0).unwrap().collect();
    assert!(left.is_empty(), "a binary created files: {left:?}");
}

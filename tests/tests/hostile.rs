//! Hostile addresses and parameters: path tricks on every route that takes
//! an id, a file or a token, non-UUID ids, and enormous strings. Each gets
//! a documented refusal (never a 200 with someone's bytes, never a 5xx),
//! the process stays up, and what is stored does not change.

use lightbox_e2e::Server;
use serde_json::{json, Value};

#[tokio::test]
async fn path_tricks_and_bad_ids_on_http_routes_are_refused() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let img = srv.photo(&t, 640, 480, "target").await;
    let id = img["id"].as_str().unwrap();
    let before = srv.blobs();
    let tricks = [
        format!("/i/{id}/..%2F..%2Foriginals"),
        format!("/i/{id}/%2e%2e%2foriginal.jpg"),
        format!("/i/{id}/thumb.webp%00.jpg"),
        format!("/i/{id}/original"),
        format!("/i/{id}/thumb.exe"),
        format!("/i/{id}/thumb"),
        format!("/i/{id}/{}.webp", "a".repeat(5000)),
        "/i/not-a-uuid/thumb.webp".into(),
        "/i/..%2F..%2Fetc/passwd".into(),
        format!("/i/{}/thumb.webp", uuid::Uuid::new_v4()),
        "/p/not-a-uuid".into(),
        format!("/p/{id}%2F..%2F"),
        "/albums/not-a-uuid".into(),
        "/albums/..%2F..%2F/download.zip".into(),
        format!("/s/{}", "x".repeat(10_000)),
        "/s/..%2F..%2Fadmin".into(),
        "/a/%00".into(),
        format!("/a/{}", "a".repeat(5000)),
        "/api/v1/images/not-a-uuid/download".into(),
        format!("/api/v1/images/{id}/download?token=..%2F..%2F"),
        "/api/v1/albums/not-a-uuid/download".into(),
        format!("/api/v1/images/{id}/archive?token={}", "A".repeat(4000)),
    ];
    for path in &tricks {
        let (status, body, _) = srv.fetch(path).await;
        assert!(
            (400..500).contains(&status),
            "{path}: answered {status}, {} bytes",
            body.len()
        );
    }
    let (status, _, _) = srv.fetch("/healthz").await;
    assert_eq!(status, 200, "the process is still up");
    assert_eq!(srv.blobs(), before, "nothing stored changed");
}

#[tokio::test]
async fn bad_ids_and_enormous_strings_in_rpc_params_get_2002_and_change_nothing() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let img = srv.photo(&t, 640, 480, "target").await;
    let id = img["id"].clone();
    let huge = "é".repeat(300_000); // 600 kB of UTF-8: under the body cap, over every field's
    let calls: Vec<(&str, Value)> = vec![
        ("image.get", json!({"id": "not-a-uuid"})),
        ("image.get", json!({"id": "../../etc/passwd"})),
        ("image.get", json!({"id": 42})),
        ("image.update", json!({"id": id, "title": huge})),
        ("image.update", json!({"id": id, "description": huge})),
        ("album.create", json!({"name": huge})),
        ("album.get", json!({"id": "'; DROP TABLE albums; --"})),
        ("album.alias.check", json!({"alias": huge})),
        ("token.create", json!({"name": huge})),
        ("auth.login", json!({"email": huge, "password": "x"})),
        ("image.list", json!({"cursor": huge})),
        ("image.list", json!({"cursor": "not-a-cursor"})),
        ("image.update", json!({"id": id, "title": "nul\u{0}inside"})),
        ("album.create", json!({"name": "a\u{0}b"})),
    ];
    for (method, params) in calls {
        let err = srv.fail(Some(&t), method, params).await;
        let code = err["code"].as_i64().unwrap();
        assert!(
            code == 2002 || (method == "auth.login" && code == 1001),
            "{method}: {err}"
        );
        assert!(
            err.to_string().len() < 10_000,
            "{method}: the error echoes the input"
        );
    }
    let after = srv.ok(Some(&t), "image.get", json!({"id": id})).await;
    assert_eq!(after["title"], "target");
    assert_eq!(after["renders"], img["renders"]);
}

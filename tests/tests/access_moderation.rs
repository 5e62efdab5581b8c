//! Issue 16, tried from outside: a takedown sticks whatever the owner does
//! next, it answers before every other check, an unlisted folder's photos
//! are reached only through its link, and a download link is scoped to the
//! photo's folder. Each ran against the previous code and failed there.

use lightbox_e2e::Server;
use serde_json::{json, Value};

async fn folder(srv: &Server, t: &str, name: &str) -> Value {
    srv.ok(Some(t), "album.create", json!({ "name": name }))
        .await["id"]
        .clone()
}

async fn set_mode(srv: &Server, t: &str, album: &Value, mode: &str, alias: Option<&str>) -> Value {
    let mut p = json!({"album_id": album, "mode": mode});
    if let Some(a) = alias {
        p["alias"] = json!(a);
    }
    srv.ok(Some(t), "album.sharing.setMode", p).await
}

async fn move_to(srv: &Server, t: &str, photo: &Value, album: &Value) {
    srv.ok(
        Some(t),
        "image.update",
        json!({"id": photo["id"], "album_id": album}),
    )
    .await;
}

/// The path of a photo's `large` render URL (as the owner sees it).
fn render_path(srv: &Server, photo: &Value, code: &str) -> String {
    let r = photo["renders"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["crop"] == code)
        .unwrap_or_else(|| panic!("no {code} render in {photo}"));
    r["url"].as_str().unwrap().replace(&srv.url, "")
}

async fn status(srv: &Server, path: &str) -> u16 {
    srv.fetch_once(path).await.0
}

/// Every way a visitor could reach `photo` by its id: `/i/`, `/p/`, getPublic.
async fn reachable_by_id(srv: &Server, photo: &Value, large: &str) -> [bool; 3] {
    let id = photo["id"].as_str().unwrap();
    [
        status(srv, large).await == 200,
        status(srv, &format!("/p/{id}")).await == 200,
        srv.call(None, "image.getPublic", json!({"id": id}))
            .await
            .get("result")
            .is_some(),
    ]
}

#[tokio::test]
async fn a_takedown_follows_the_photos_wherever_the_owner_moves_them() {
    let srv = Server::start();
    let admin = srv.admin_token().await;
    let t = srv.user("owner@example.com", "owner-password-1").await;
    let a = folder(&srv, &t, "Reported").await;
    let moved = srv.photo(&t, 600, 400, "moved").await;
    let stays = srv.photo(&t, 600, 400, "stays").await;
    let public = srv.photo(&t, 600, 400, "public itself").await;
    for p in [&moved, &stays, &public] {
        move_to(&srv, &t, p, &a).await;
    }
    srv.ok(
        Some(&t),
        "image.setVisibility",
        json!({"id": public["id"], "visibility": "public"}),
    )
    .await;
    set_mode(&srv, &t, &a, "public", Some("reported-folder")).await;
    let large = |p: &Value| render_path(&srv, p, "large");
    assert_eq!(
        reachable_by_id(&srv, &public, &large(&public)).await,
        [true; 3]
    );

    srv.ok(
        Some(&admin),
        "admin.takedown",
        json!({"album_id": a, "reason": "reported"}),
    )
    .await;
    for p in [&moved, &stays, &public] {
        assert_eq!(
            reachable_by_id(&srv, p, &large(p)).await,
            [false; 3],
            "{} under the folder's takedown",
            p["title"]
        );
    }

    // The owner moves a photo into a new public folder: it stays down,
    // and the new folder's page, feed and zip do not show it.
    let b = folder(&srv, &t, "Elsewhere").await;
    move_to(&srv, &t, &moved, &b).await;
    srv.ok(
        Some(&t),
        "album.sharing.setPolicy",
        json!({"album_id": b, "feed": true, "allow_download": true}),
    )
    .await;
    set_mode(&srv, &t, &b, "public", Some("elsewhere")).await;
    let id = moved["id"].as_str().unwrap();
    assert_eq!(
        reachable_by_id(&srv, &moved, &large(&moved)).await,
        [false; 3]
    );
    let (_, page, _) = srv.fetch_once("/a/elsewhere").await;
    assert!(!page.contains(id), "the new folder's page shows it");
    let (_, feed, _) = srv.fetch_once("/a/elsewhere/feed.xml").await;
    assert!(!feed.contains(id), "the new folder's feed shows it");
    let (zip_status, zip, _) = srv.fetch("/a/elsewhere/download.zip").await;
    if zip_status == 200 {
        let z = zip::ZipArchive::new(std::io::Cursor::new(zip)).unwrap();
        assert_eq!(z.len(), 0, "the new folder's zip holds it");
    }
    let owner_view = srv.ok(Some(&t), "image.get", json!({"id": id})).await;
    assert_eq!(owner_view["moderation"]["state"], "taken_down");

    // Deleting the taken-down folder moves its photos to the default
    // folder; they stay down there too.
    srv.ok(Some(&t), "album.delete", json!({"id": a})).await;
    for p in [&stays, &public] {
        assert_eq!(reachable_by_id(&srv, p, &large(p)).await, [false; 3]);
    }

    // Until an administrator restores the folder (deleted or not).
    srv.ok(Some(&admin), "admin.restore", json!({"album_id": a}))
        .await;
    assert!(reachable_by_id(&srv, &moved, &large(&moved)).await[0]);
    assert_eq!(
        reachable_by_id(&srv, &public, &large(&public)).await,
        [true; 3]
    );
    let (_, page, _) = srv.fetch_once("/a/elsewhere").await;
    assert!(page.contains(id), "restored, it shows in its new folder");
}

#[tokio::test]
async fn a_takedown_answers_before_every_other_check() {
    let srv = Server::start();
    let admin = srv.admin_token().await;
    let t = srv.user("owner@example.com", "owner-password-1").await;
    let a = folder(&srv, &t, "Public and down").await;
    set_mode(&srv, &t, &a, "public", Some("public-and-down")).await;
    srv.ok(
        Some(&admin),
        "admin.takedown",
        json!({"album_id": a, "reason": "x"}),
    )
    .await;
    for (method, params) in [
        // Not private: 2002 once, now 2004 first.
        ("album.sharing.republish", json!({"album_id": a})),
        (
            "album.sharing.republish",
            json!({"album_id": a, "token": "bad"}),
        ),
        (
            "album.sharing.setMode",
            json!({"album_id": a, "mode": "bogus"}),
        ),
        (
            "album.sharing.setMode",
            json!({"album_id": a, "mode": "unlisted", "alias": "x-y"}),
        ),
        (
            "album.alias.release",
            json!({"album_id": a, "alias": "NOT AN ALIAS"}),
        ),
    ] {
        assert_eq!(
            srv.code(Some(&t), method, params.clone()).await,
            2004,
            "{method} {params}"
        );
    }
}

#[tokio::test]
async fn an_unlisted_folders_photos_open_only_through_its_link() {
    let srv = Server::start();
    let t = srv.user("owner@example.com", "owner-password-1").await;
    let a = folder(&srv, &t, "Family").await;
    let photo = srv.photo(&t, 600, 400, "family").await;
    move_to(&srv, &t, &photo, &a).await;
    let s = set_mode(&srv, &t, &a, "unlisted", None).await;
    let link = s["links"]["share_url"].as_str().unwrap().to_owned();
    let link = link.replace(&srv.url, "");
    let id = photo["id"].as_str().unwrap();

    let (code, page, headers) = srv.fetch_once(&link).await;
    assert_eq!(code, 200);
    assert!(page.contains(id), "the link shows the photo");
    assert_eq!(headers["x-robots-tag"], "noindex");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert_eq!(status(&srv, &format!("/p/{id}")).await, 404, "/p/ by id");
    assert_eq!(
        srv.code(None, "image.getPublic", json!({"id": id})).await,
        2001,
        "getPublic by id"
    );

    // resetToken revokes it everywhere.
    srv.ok(Some(&t), "album.sharing.resetToken", json!({"album_id": a}))
        .await;
    assert_eq!(status(&srv, &link).await, 404, "the old link");
    assert_eq!(status(&srv, &format!("/p/{id}")).await, 404);
    assert_eq!(
        srv.code(None, "image.getPublic", json!({"id": id})).await,
        2001
    );

    // A public folder's photos are reachable by id.
    set_mode(&srv, &t, &a, "public", None).await;
    assert_eq!(status(&srv, &format!("/p/{id}")).await, 200);
}

#[tokio::test]
async fn a_download_link_is_scoped_to_the_photos_folder() {
    let srv = Server::start();
    let t = srv.user("owner@example.com", "owner-password-1").await;
    let photo = srv.photo(&t, 600, 400, "moving").await;
    let link = srv
        .ok(
            Some(&t),
            "image.downloadToken",
            json!({"id": photo["id"], "variant": "full"}),
        )
        .await;
    let url = link["url"].as_str().unwrap().to_owned();
    assert_eq!(srv.fetch(&url).await.0, 200);

    let b = folder(&srv, &t, "Other").await;
    move_to(&srv, &t, &photo, &b).await;
    let (code, body, _) = srv.fetch(&url).await;
    let body: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(code, 409, "{body}");
    assert_eq!(body["error"]["code"], 2006, "{body}");
    assert_eq!(body["error"]["data"]["state"], "stale", "{body}");

    // Moving back is a new stay: the old link stays stale.
    let a = photo["album_id"].clone();
    move_to(&srv, &t, &photo, &a).await;
    let (code, _, _) = srv.fetch(&url).await;
    assert_eq!(code, 409, "a link of an earlier stay in the folder");

    // A new link for where it is now works.
    let link = srv
        .ok(
            Some(&t),
            "image.downloadToken",
            json!({"id": photo["id"], "variant": "full"}),
        )
        .await;
    assert_eq!(srv.fetch(link["url"].as_str().unwrap()).await.0, 200);
}

#[tokio::test]
async fn nothing_the_owner_does_later_escapes_a_folder_takedown() {
    let srv = Server::start();
    let admin = srv.admin_token().await;
    let t = srv.user("owner@example.com", "owner-password-1").await;
    let a = folder(&srv, &t, "Down").await;
    set_mode(&srv, &t, &a, "public", Some("down-first")).await;
    set_mode(&srv, &t, &a, "public", Some("down-second")).await;
    srv.ok(
        Some(&admin),
        "admin.takedown",
        json!({"album_id": a, "reason": "reported"}),
    )
    .await;

    // A photo moved into the folder after the takedown is its photo too.
    let late = srv.photo(&t, 600, 400, "late").await;
    let large = render_path(&srv, &late, "large");
    assert_eq!(status(&srv, &large).await, 200);
    move_to(&srv, &t, &late, &a).await;
    let b = folder(&srv, &t, "Out").await;
    move_to(&srv, &t, &late, &b).await;
    set_mode(&srv, &t, &b, "public", None).await;
    assert_eq!(reachable_by_id(&srv, &late, &large).await, [false; 3]);

    // The owner's archive link of a taken-down photo sends nothing.
    let link = srv
        .ok(Some(&t), "image.archiveToken", json!({"id": late["id"]}))
        .await;
    let (code, _, _) = srv.fetch(link["url"].as_str().unwrap()).await;
    assert_eq!(code, 409, "an archive of a taken-down photo");

    // Its aliases cannot be moved to another folder, nor freed by deleting it.
    let quota = |s: &Value| s["alias_quota"]["used"].clone();
    let before = srv
        .ok(Some(&t), "album.sharing.get", json!({"album_id": b}))
        .await;
    let moved = json!({"album_id": b, "mode": "public", "alias": "down-first"});
    assert_eq!(
        srv.code(Some(&t), "album.sharing.setMode", moved).await,
        2002
    );
    srv.ok(Some(&t), "album.delete", json!({"id": a})).await;
    let after = srv
        .ok(Some(&t), "album.sharing.get", json!({"album_id": b}))
        .await;
    assert_eq!(quota(&after), quota(&before), "the aliases stay held");
    assert_eq!(status(&srv, "/a/down-second").await, 404);
}

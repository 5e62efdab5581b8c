//! The publication table of ../shared/spec/interface.md 3, row by row, over HTTP: modes,
//! links, republish memory, resetToken, policy, takedowns and the server
//! switch.

use lightbox_e2e::Server;
use serde_json::{json, Value};

async fn folder(srv: &Server, t: &str, name: &str) -> Value {
    srv.ok(Some(t), "album.create", json!({ "name": name }))
        .await["id"]
        .clone()
}

async fn set_mode(srv: &Server, t: &str, album: &Value, extra: Value) -> Value {
    let mut params = json!({ "album_id": album });
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    srv.ok(Some(t), "album.sharing.setMode", params).await
}

async fn status(srv: &Server, path: &str) -> u16 {
    srv.fetch_once(path).await.0
}

fn share_url(s: &Value) -> String {
    s["links"]["share_url"]
        .as_str()
        .expect("share_url")
        .to_owned()
}

#[tokio::test]
async fn modes_links_and_republish_memory() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let a = folder(&srv, &t, "Holiday").await;

    let s = srv
        .ok(Some(&t), "album.sharing.get", json!({"album_id": a}))
        .await;
    assert_eq!(
        (s["mode"].clone(), s["state"].clone()),
        (json!("private"), json!("private"))
    );
    assert_eq!(s["links"], json!({}), "no links while private");
    assert_eq!(s["server_publishing"], true);
    assert_eq!(s["alias_quota"], json!({"used": 0, "limit": 20}));
    assert!(s.get("republish").is_none());
    assert_eq!(s["policy"]["order"], "taken_desc");

    // private -> unlisted: a bearer link that serves the page.
    let s = set_mode(&srv, &t, &a, json!({"mode": "unlisted"})).await;
    assert_eq!(
        (s["mode"].clone(), s["state"].clone()),
        (json!("unlisted"), json!("live"))
    );
    let link1 = share_url(&s);
    let (code, _, headers) = srv.fetch_once(&link1).await;
    assert_eq!(code, 200);
    assert_eq!(headers["x-robots-tag"], "noindex");
    assert_eq!(headers["referrer-policy"], "no-referrer");
    assert!(headers["content-security-policy"]
        .to_str()
        .unwrap()
        .contains("default-src 'none'"));
    assert_eq!(
        status(&srv, &format!("/albums/{}", a.as_str().unwrap())).await,
        404,
        "unlisted is not public"
    );
    // Setting unlisted again keeps the link unless asked for a new one.
    assert_eq!(
        share_url(&set_mode(&srv, &t, &a, json!({"mode": "unlisted"})).await),
        link1
    );

    // resetToken: replaced atomically, mode unchanged.
    let s = srv
        .ok(Some(&t), "album.sharing.resetToken", json!({"album_id": a}))
        .await;
    let link2 = share_url(&s);
    assert_ne!(link1, link2);
    assert_eq!(s["mode"], "unlisted");
    assert_eq!(status(&srv, &link1).await, 404, "the retired link is dead");
    assert_eq!(status(&srv, &link2).await, 200);

    // unlisted -> private -> republish keep: the same link comes back.
    let s = set_mode(&srv, &t, &a, json!({"mode": "private"})).await;
    assert_eq!(s["links"], json!({}));
    assert_eq!(s["last_published_mode"], "unlisted");
    assert_eq!(
        s["republish"],
        json!({"mode": "unlisted", "token_choices": ["new", "keep"]})
    );
    assert_eq!(status(&srv, &link2).await, 404, "private hides the page");
    let s = srv
        .ok(
            Some(&t),
            "album.sharing.republish",
            json!({"album_id": a, "token": "keep"}),
        )
        .await;
    assert_eq!(
        (s["mode"].clone(), share_url(&s)),
        (json!("unlisted"), link2.clone())
    );
    assert_eq!(status(&srv, &link2).await, 200);
    // ... and with the default `new`, a fresh one.
    set_mode(&srv, &t, &a, json!({"mode": "private"})).await;
    let s = srv
        .ok(Some(&t), "album.sharing.republish", json!({"album_id": a}))
        .await;
    let link3 = share_url(&s);
    assert_ne!(link3, link2);
    assert_eq!(status(&srv, &link2).await, 404);
    assert_eq!(
        srv.code(Some(&t), "album.sharing.republish", json!({"album_id": a}))
            .await,
        2002,
        "only a private folder with a memory can be republished"
    );

    // unlisted -> public: the link retires; public without alias is /albums/{id}.
    let s = set_mode(&srv, &t, &a, json!({"mode": "public"})).await;
    let public = format!("/albums/{}", a.as_str().unwrap());
    assert_eq!(s["links"], json!({"public_url": public}));
    assert_eq!(status(&srv, &link3).await, 404);
    let (code, _, headers) = srv.fetch_once(&public).await;
    assert_eq!(code, 200);
    assert!(headers.get("x-robots-tag").is_none());

    // public -> unlisted always rotates the link, even with keep.
    let s = set_mode(&srv, &t, &a, json!({"mode": "unlisted", "token": "keep"})).await;
    let link4 = share_url(&s);
    assert!(![&link1, &link2, &link3].contains(&&link4));
    assert_eq!(status(&srv, &public).await, 404);

    // Bad params.
    for bad in [
        json!({"album_id": a, "mode": "secret"}),
        json!({"album_id": a, "mode": "unlisted", "token": "old"}),
        json!({"album_id": a, "mode": "unlisted", "alias": "my-alias"}),
        json!({"album_id": a, "mode": "public", "alias": "x"}),
        json!({"album_id": a, "mode": "public", "alias": "admin"}),
        json!({"album_id": "nope", "mode": "public"}),
    ] {
        assert_eq!(srv.code(Some(&t), "album.sharing.setMode", bad).await, 2002);
    }
    let s = srv
        .ok(Some(&t), "album.sharing.get", json!({"album_id": a}))
        .await;
    assert_eq!(share_url(&s), link4, "failed calls changed nothing");
    let other = srv.user("other@example.com", "other-password-1").await;
    assert_eq!(
        srv.code(
            Some(&other),
            "album.sharing.setMode",
            json!({"album_id": a, "mode": "public"})
        )
        .await,
        2001
    );
    assert_eq!(
        srv.code(Some(&other), "album.sharing.get", json!({"album_id": a}))
            .await,
        2001
    );
    let ro = srv
        .ok(
            Some(&t),
            "token.create",
            json!({"name": "ro", "scopes": ["read"]}),
        )
        .await;
    let ro = ro["token"].as_str().unwrap();
    assert_eq!(
        srv.code(
            Some(ro),
            "album.sharing.setMode",
            json!({"album_id": a, "mode": "private"})
        )
        .await,
        1003
    );
    srv.ok(Some(ro), "album.sharing.get", json!({"album_id": a}))
        .await;
    let private = folder(&srv, &t, "Never shared").await;
    assert_eq!(
        srv.code(
            Some(&t),
            "album.sharing.resetToken",
            json!({"album_id": private})
        )
        .await,
        2002,
        "resetToken needs a link"
    );
}

#[tokio::test]
async fn policy_is_partial_and_takedowns_block_publication() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let a = folder(&srv, &t, "Moderated").await;
    let s = srv
        .ok(
            Some(&t),
            "album.sharing.setPolicy",
            json!({"album_id": a, "feed": true, "order": "uploaded_asc"}),
        )
        .await;
    assert_eq!(
        s["policy"],
        json!({"show_location": false, "show_date": true, "show_camera": true,
               "allow_download": false, "feed": true, "order": "uploaded_asc", "cover_focus": "center"})
    );
    assert_eq!(s["mode"], "private", "allowed while private");
    for bad in [
        json!({"album_id": a, "order": "random"}),
        json!({"album_id": a, "cover_focus": "middle"}),
        json!({"album_id": a, "feed": "yes"}),
    ] {
        assert_eq!(
            srv.code(Some(&t), "album.sharing.setPolicy", bad).await,
            2002
        );
    }

    set_mode(
        &srv,
        &t,
        &a,
        json!({"mode": "public", "alias": "moderated-one"}),
    )
    .await;
    assert_eq!(status(&srv, "/a/moderated-one").await, 200);
    let taken = srv
        .ok(
            Some(&t),
            "admin.takedown",
            json!({"album_id": a, "reason": "complaint"}),
        )
        .await;
    assert_eq!(taken["moderation"]["state"], "taken_down");
    let s = srv
        .ok(Some(&t), "album.sharing.get", json!({"album_id": a}))
        .await;
    assert_eq!(s["state"], "taken_down");
    assert_eq!(s["moderation"]["reason"], "complaint");
    assert_eq!(status(&srv, "/a/moderated-one").await, 404);
    assert_eq!(
        status(&srv, &format!("/albums/{}", a.as_str().unwrap())).await,
        404
    );
    for (method, params) in [
        (
            "album.sharing.setMode",
            json!({"album_id": a, "mode": "private"}),
        ),
        (
            "album.sharing.setMode",
            json!({"album_id": a, "mode": "unlisted"}),
        ),
        (
            "album.alias.release",
            json!({"album_id": a, "alias": "moderated-one"}),
        ),
    ] {
        assert_eq!(srv.code(Some(&t), method, params).await, 2004, "{method}");
    }
    // Policy changes stay allowed under a takedown.
    srv.ok(
        Some(&t),
        "album.sharing.setPolicy",
        json!({"album_id": a, "feed": false}),
    )
    .await;
    let user = srv.user("user@example.com", "user-password-1").await;
    assert_eq!(
        srv.code(
            Some(&user),
            "admin.takedown",
            json!({"album_id": a, "reason": "x"})
        )
        .await,
        1003
    );
    srv.ok(Some(&t), "admin.restore", json!({"album_id": a}))
        .await;
    assert_eq!(status(&srv, "/a/moderated-one").await, 200);

    // A takedown also blocks republish.
    set_mode(&srv, &t, &a, json!({"mode": "private"})).await;
    srv.ok(
        Some(&t),
        "admin.takedown",
        json!({"album_id": a, "reason": "again"}),
    )
    .await;
    assert_eq!(
        srv.code(Some(&t), "album.sharing.republish", json!({"album_id": a}))
            .await,
        2004
    );
}

#[tokio::test]
async fn publishing_disabled_by_the_server() {
    let srv = Server::start_with(&[("LIGHTBOX_SERVER_PUBLISHING", "false")]);
    let t = srv.admin_token().await;
    let a = folder(&srv, &t, "Off").await;
    let s = srv
        .ok(Some(&t), "album.sharing.get", json!({"album_id": a}))
        .await;
    assert_eq!(
        (s["state"].clone(), s["server_publishing"].clone()),
        (json!("publishing_disabled"), json!(false))
    );
    assert_eq!(
        srv.code(
            Some(&t),
            "album.sharing.setMode",
            json!({"album_id": a, "mode": "public"})
        )
        .await,
        1003
    );
    srv.ok(
        Some(&t),
        "album.sharing.setPolicy",
        json!({"album_id": a, "allow_download": true}),
    )
    .await;
    set_mode(&srv, &t, &a, json!({"mode": "private"})).await;
}

/// Every sharing method: 2001 for another owner's folder, 2002 for a
/// malformed id, 1003 for a read-only token on the ones that change things.
#[tokio::test]
async fn error_codes_of_every_sharing_method() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let other = srv.user("other@example.com", "other-password-1").await;
    let a = folder(&srv, &t, "Mine").await;
    let ro = srv
        .ok(
            Some(&t),
            "token.create",
            json!({"name": "ro", "scopes": ["read"]}),
        )
        .await;
    let ro = ro["token"].as_str().unwrap().to_owned();
    let calls: [(&str, Value, bool); 9] = [
        ("album.sharing.get", json!({}), false),
        ("album.sharing.setPolicy", json!({"feed": true}), true),
        ("album.sharing.setMode", json!({"mode": "unlisted"}), true),
        ("album.sharing.republish", json!({}), true),
        ("album.sharing.resetToken", json!({}), true),
        ("album.alias.release", json!({"alias": "some-alias"}), true),
        ("album.cover.set", json!({"image_id": null}), true),
        ("album.preview", json!({}), false),
        (
            "album.crop.set",
            json!({"code": "sq", "width": 10, "height": 10}),
            true,
        ),
    ];
    for (method, extra, writes) in calls {
        let with = |album: Value| {
            let mut p = extra.clone();
            p["album_id"] = album;
            p
        };
        assert_eq!(
            srv.code(Some(&other), method, with(a.clone())).await,
            2001,
            "{method}"
        );
        assert_eq!(
            srv.code(Some(&t), method, with(json!("not-a-uuid"))).await,
            2002,
            "{method}"
        );
        if writes {
            assert_eq!(
                srv.code(Some(&ro), method, with(a.clone())).await,
                1003,
                "{method}"
            );
        }
        assert_eq!(
            srv.code(None, method, with(a.clone())).await,
            1001,
            "{method}"
        );
    }
    assert_eq!(
        srv.code(
            Some(&t),
            "album.preview",
            json!({"album_id": a, "after": "%%%"})
        )
        .await,
        2002
    );
    assert_eq!(
        srv.code(
            Some(&t),
            "album.alias.check",
            json!({"alias": "x".repeat(300)})
        )
        .await,
        2002
    );
    assert_eq!(
        srv.code(Some(&t), "album.alias.check", json!({})).await,
        2002
    );
}

//! Aliases over HTTP: checks, previous aliases and their redirects,
//! release and the 90-day hold, expiry and reactivation, the quota from
//! configuration, and two owners racing for one name.

use lightbox_e2e::Server;
use serde_json::{json, Value};

async fn public_album(srv: &Server, t: &str, name: &str, alias: &str) -> Value {
    let a = srv
        .ok(Some(t), "album.create", json!({ "name": name }))
        .await["id"]
        .clone();
    srv.ok(
        Some(t),
        "album.sharing.setMode",
        json!({"album_id": a, "mode": "public", "alias": alias}),
    )
    .await;
    a
}

async fn check(srv: &Server, t: &str, alias: &str) -> Value {
    srv.ok(Some(t), "album.alias.check", json!({ "alias": alias }))
        .await
}

fn states(s: &Value) -> Vec<(String, String)> {
    s["aliases"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["alias"].as_str().unwrap().to_owned(),
                a["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[tokio::test]
async fn checks_redirects_release_and_hold() {
    let srv = Server::start();
    let t = srv.admin_token().await;
    let other = srv.user("other@example.com", "other-password-1").await;

    let c = check(&srv, &t, "My-Trip").await;
    assert_eq!(
        c,
        json!({"normalized": "my-trip", "status": "available", "preview_url": "/a/my-trip"})
    );
    assert_eq!(check(&srv, &t, "no").await["status"], "invalid");
    assert_eq!(check(&srv, &t, "-dash").await["status"], "invalid");
    assert_eq!(check(&srv, &t, "bad_char").await["status"], "invalid");
    assert_eq!(check(&srv, &t, "Admin").await["status"], "reserved");

    let a = public_album(&srv, &t, "Trip", "My-Trip").await;
    assert_eq!(
        check(&srv, &t, "my-trip").await["status"],
        "taken",
        "own current alias"
    );
    let theirs = check(&srv, &other, "MY-TRIP").await;
    assert_eq!(theirs["status"], "taken");
    assert!(
        !theirs.to_string().contains("Trip\""),
        "reveals nothing: {theirs}"
    );
    let (code, body, _) = srv.fetch_once("/a/MY-TRIP").await;
    assert_eq!(code, 200, "aliases are case-insensitive");
    assert!(body.contains("<h1>Trip</h1>"));

    // A new alias becomes primary; the old one redirects to it.
    let s = srv
        .ok(
            Some(&t),
            "album.sharing.setMode",
            json!({"album_id": a, "mode": "public", "alias": "trip-2026"}),
        )
        .await;
    assert_eq!(s["links"]["public_url"], "/a/trip-2026");
    assert_eq!(
        states(&s),
        vec![
            ("trip-2026".into(), "current".into()),
            ("my-trip".into(), "previous".into())
        ]
    );
    assert_eq!(s["alias_quota"]["used"], 2);
    let (code, _, headers) = srv.fetch_once("/a/my-trip").await;
    assert_eq!(
        (code, headers["location"].to_str().unwrap()),
        (301, "/a/trip-2026")
    );
    // An old link to a later grid page keeps its place.
    let (code, _, headers) = srv.fetch_once("/a/my-trip?after=AbC-_d").await;
    assert_eq!(
        (code, headers["location"].to_str().unwrap()),
        (301, "/a/trip-2026?after=AbC-_d")
    );
    assert_eq!(
        check(&srv, &t, "my-trip").await["status"],
        "available",
        "own previous alias"
    );

    // Release: the redirect stops, the quota frees, the name is held
    // against everyone else.
    let s = srv
        .ok(
            Some(&t),
            "album.alias.release",
            json!({"album_id": a, "alias": "my-trip"}),
        )
        .await;
    assert_eq!(s["alias_quota"]["used"], 1);
    let released = s["aliases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["alias"] == "my-trip")
        .unwrap()
        .clone();
    assert_eq!(released["state"], "released");
    assert!(released["expires_at"].is_string());
    assert_eq!(srv.fetch_once("/a/my-trip").await.0, 404);
    assert_eq!(check(&srv, &other, "my-trip").await["status"], "taken");
    assert_eq!(check(&srv, &t, "my-trip").await["status"], "available");
    let b = srv
        .ok(Some(&other), "album.create", json!({"name": "Mine"}))
        .await["id"]
        .clone();
    assert_eq!(
        srv.code(
            Some(&other),
            "album.sharing.setMode",
            json!({"album_id": b, "mode": "public", "alias": "my-trip"})
        )
        .await,
        2002
    );
    assert_eq!(
        srv.code(
            Some(&t),
            "album.alias.release",
            json!({"album_id": a, "alias": "never-had"})
        )
        .await,
        2001
    );
    assert_eq!(
        srv.code(
            Some(&other),
            "album.alias.release",
            json!({"album_id": a, "alias": "trip-2026"})
        )
        .await,
        2001
    );

    // Leaving public expires the aliases; republish brings them back.
    let s = srv
        .ok(
            Some(&t),
            "album.sharing.setMode",
            json!({"album_id": a, "mode": "private"}),
        )
        .await;
    assert_eq!(states(&s)[0], ("trip-2026".into(), "expired".into()));
    assert_eq!(s["alias_quota"]["used"], 0);
    assert_eq!(srv.fetch_once("/a/trip-2026").await.0, 404);
    assert_eq!(
        check(&srv, &other, "trip-2026").await["status"],
        "taken",
        "kept for its owner"
    );
    let s = srv
        .ok(Some(&t), "album.sharing.republish", json!({"album_id": a}))
        .await;
    assert_eq!(s["mode"], "public");
    assert_eq!(states(&s)[0], ("trip-2026".into(), "current".into()));
    assert_eq!(srv.fetch_once("/a/trip-2026").await.0, 200);

    // Rate limit: 30 checks a minute per user.
    let fresh = srv.user("checker@example.com", "checker-password").await;
    for _ in 0..30 {
        check(&srv, &fresh, "some-name").await;
    }
    let limited = srv
        .fail(
            Some(&fresh),
            "album.alias.check",
            json!({"alias": "some-name"}),
        )
        .await;
    assert_eq!(limited["code"], 4002);
    assert_eq!(
        check(&srv, &other, "some-name").await["status"],
        "available",
        "per user"
    );
}

#[tokio::test]
async fn quota_comes_from_configuration() {
    let dir = std::env::temp_dir().join(format!("lbx-alias-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("lightbox.toml");
    std::fs::write(
        &path,
        "[alias_limit]\ndefault = 2\noverrides = [{ email = \"big@example.com\", limit = 5 }]\n",
    )
    .unwrap();
    let srv = Server::start_with(&[("LIGHTBOX_CONFIG", path.to_str().unwrap())]);
    let t = srv.admin_token().await;
    let a = public_album(&srv, &t, "One", "first-alias").await;
    let s = srv
        .ok(
            Some(&t),
            "album.sharing.setMode",
            json!({"album_id": a, "mode": "public", "alias": "second-alias"}),
        )
        .await;
    assert_eq!(s["alias_quota"], json!({"used": 2, "limit": 2}));
    let err = srv
        .fail(
            Some(&t),
            "album.sharing.setMode",
            json!({"album_id": a, "mode": "public", "alias": "third-alias"}),
        )
        .await;
    assert_eq!(err["code"], 2002);
    assert_eq!(err["data"]["errors"][0]["field"], "alias");
    assert_eq!(
        check(&srv, &t, "third-alias").await["status"],
        "available",
        "nothing was kept"
    );

    // Over the limit, republish cannot reactivate: 2002, nothing changes.
    srv.ok(
        Some(&t),
        "album.sharing.setMode",
        json!({"album_id": a, "mode": "private"}),
    )
    .await;
    let b = public_album(&srv, &t, "Two", "other-one").await;
    srv.ok(
        Some(&t),
        "album.sharing.setMode",
        json!({"album_id": b, "mode": "public", "alias": "other-two"}),
    )
    .await;
    assert_eq!(
        srv.code(Some(&t), "album.sharing.republish", json!({"album_id": a}))
            .await,
        2002
    );
    let s = srv
        .ok(Some(&t), "album.sharing.get", json!({"album_id": a}))
        .await;
    assert_eq!(s["mode"], "private");
    let big = srv.user("BIG@example.com", "big-password-1").await;
    let s = srv.ok(Some(&big), "album.list", json!({})).await;
    let id = s["items"][0]["id"].clone();
    let s = srv
        .ok(Some(&big), "album.sharing.get", json!({"album_id": id}))
        .await;
    assert_eq!(s["alias_quota"]["limit"], 5, "override by email");
}

#[tokio::test]
async fn two_owners_racing_for_one_alias_exactly_one_wins() {
    let srv = Server::start();
    let t1 = srv.admin_token().await;
    let t2 = srv.user("rival@example.com", "rival-password-1").await;
    for round in 0..15 {
        let alias = format!("contested-{round}");
        let a1 = srv
            .ok(Some(&t1), "album.create", json!({"name": "a"}))
            .await["id"]
            .clone();
        let a2 = srv
            .ok(Some(&t2), "album.create", json!({"name": "b"}))
            .await["id"]
            .clone();
        let p1 = json!({"album_id": a1, "mode": "public", "alias": alias});
        let p2 = json!({"album_id": a2, "mode": "public", "alias": alias});
        let (r1, r2) = tokio::join!(
            srv.call(Some(&t1), "album.sharing.setMode", p1),
            srv.call(Some(&t2), "album.sharing.setMode", p2)
        );
        let wins = [&r1, &r2]
            .iter()
            .filter(|r| r.get("result").is_some())
            .count();
        assert_eq!(wins, 1, "round {round}: {r1} / {r2}");
        let loser = if r1.get("result").is_some() { &r2 } else { &r1 };
        assert_eq!(loser["error"]["code"], 2002);
        let (winner_album, winner_token) = if r1.get("result").is_some() {
            (&a1, &t1)
        } else {
            (&a2, &t2)
        };
        let s = srv
            .ok(
                Some(winner_token),
                "album.sharing.get",
                json!({"album_id": winner_album}),
            )
            .await;
        assert_eq!(s["links"]["public_url"], format!("/a/{alias}"));
    }
}
